/* blas.c: OpenBLAS kernel selection (see blas.h). */
#include "blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *rg_blas_core(void) { return openblas_get_corename(); }

void rg_blas_prefer_fast_kernels(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE") || getenv("RG_KEEP_BLAS_CORE")) return;
    static const char *const generic[] = {"prescott", "core2", "nehalem", "atom", "katmai", "unknown"};
    const char *core = openblas_get_corename();
    int slow = 0;
    for (size_t i = 0; core && i < sizeof generic / sizeof *generic; i++)
        if (strcasecmp(core, generic[i]) == 0) slow = 1;
    if (!slow) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const char *pick = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        pick = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        pick = "Haswell";
    if (!pick || setenv("OPENBLAS_CORETYPE", pick, 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: carry on as we were */
#else
    (void)argv;
#endif
}

/* OpenBLAS (pthreads build) stops its worker threads; its next threaded call starts them again from the calling
 * thread, and a new thread inherits its creator's MXCSR, so the workers then run with FTZ and DAZ too. Weak: absent
 * from other BLAS builds (then the workers keep their own setting). */
extern void blas_thread_shutdown_(void) __attribute__((weak));

void rg_blas_restart_workers(void)
{
    if (blas_thread_shutdown_) blas_thread_shutdown_();
}
