/* version.c: rg_version, rg_build_real and the build guard symbol (version.h). */
#include "../version.h"

#ifdef RG_DOUBLE
const int rg_build_float64 = 1;
#else
const int rg_build_float32 = 1;
#endif

const char *rg_version(void) { return RG_VERSION; }

const char *rg_build_real(void)
{
#ifdef RG_DOUBLE
    return "float64";
#else
    return "float32";
#endif
}
