/* check_pos.c: rg_check_pos, the conformance check of a position encoding in float64 (the strict one; train_order
 * --check-pos runs it in float32): `rg_check_pos [--plugin X.so ...] NAME`, NAME a built-in encoding or one that a
 * plugin built for float64 registers (cc -shared -fPIC $(pkg-config --cflags ropegrad-f64) x.c -o x.so). The
 * plugins are loaded and checked exactly as train_order loads them (src/engine/settings/plugin_load.c, compiled here in
 * float64). Exit status: 0 every check passes, 1 one fails, 2 a bad command line, an unknown encoding or a refused
 * plugin. */
#include "engine/settings/plugin_load.h"
#include "engine/base/messages.h"
#include "nn/pos_conformance.h"

#include <stdio.h>
#include <string.h>

static int usage(const char *why)
{
    fprintf(stderr, "%s: %s\nusage: %s [--plugin PLUGIN.so ...] ENCODING\n  (the float64 conformance check, "
            "docs/extending.md; a plugin must be built with -DRG_DOUBLE)\n", eng_prog(), why, eng_prog());
    return 2;
}

int main(int argc, char **argv)
{
    eng_set_prog(argv[0]);
    if (argc < 2 || argv[argc - 1][0] == '-') return usage("name one encoding, last");
    for (int i = 1; i < argc - 1; i++) /* only --plugin PATH / --plugin=PATH before the name */
        if (!strncmp(argv[i], "--plugin=", 9)) continue;
        else if (!strcmp(argv[i], "--plugin") && i + 1 < argc - 1) i++;
        else return usage("only --plugin PATH may come before the encoding's name");
    eng_plugins_load(argc - 1, argv); /* exits 2 (or 1) on a plugin it refuses, naming it */
    int failed = 0;
    rg_status st = rg_pos_conformance(argv[argc - 1], &(rg_pos_report){stdout, NULL, NULL}, &failed);
    if (st) {
        fprintf(stderr, "%s: %s\n", eng_prog(), rg_last_error());
        return st == RG_ERR_ARG ? 2 : 1;
    }
    printf("%s: %s: %s (%s checks)\n", eng_prog(), argv[argc - 1], failed ? "FAILED" : "conforms", rg_build_real());
    return failed ? 1 : fflush(stdout) == 0 ? 0 : 1;
}
