/* gen_data: writes the canonical evaluation sets of the ordering tasks (data/eval_sets.h5 by default).
 *
 * Usage: gen_data [PATH]        (`make data` runs it from the repository root)
 *
 * The work is rg_evalset_generate (src/task/task.c), the same function tests/task/test_task.c calls to check that the
 * committed file equals a fresh generation. Deterministic: fixed seed RG_EVAL_SEED (20261130), one PCG32 stream per
 * (task, length) = 1000 * task_index + n, no timestamps in the file; written atomically (temp file + rename).
 * docs/data.md describes the algorithm and the layout. */
#include <stdio.h>
#include <string.h>

#include "task/task.h"

#define RG_EVAL_PATH "data/eval_sets.h5" /* default output, relative to the repository root */

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
        fprintf(argc > 2 ? stderr : stdout,
                "usage: %s [PATH]\nwrites the canonical evaluation sets (default %s); see docs/data.md\n", argv[0],
                RG_EVAL_PATH);
        return argc > 2 ? 2 : 0;
    }
    const char *path = argc == 2 ? argv[1] : RG_EVAL_PATH;
    if (rg_evalset_generate(path) != RG_OK) {
        fprintf(stderr, "gen_data: %s\n", rg_last_error());
        return 1;
    }
    printf("gen_data: wrote %s (seed %llu, %d tasks x %d lengths x %d samples)\n", path,
           (unsigned long long)RG_EVAL_SEED, RG_TASK_BUILTIN, RG_EVAL_NLENS, RG_EVAL_COUNT);
    return 0;
}
