/* run_curves.h: extrapolation over training (run_curves.c). */
#ifndef ENG_RUN_RUN_CURVES_H
#define ENG_RUN_RUN_CURVES_H

#include "engine/base/types.h"

/* The fixed subsample of every test length measured over training (--extrap-every): the first ENG_CURVE_COUNT
 * samples of its evaluation set (the first rows of a generated set do not depend on its count), with, for a +rand
 * run, positions drawn as for the test sets, once; a length whose positions cannot be drawn is n/a. */
typedef struct {
    int n_lens;
    rg_evalset sets[ENG_MAX_LENS];
    int32_t *pos[ENG_MAX_LENS];
    bool na[ENG_MAX_LENS];
} eng_curveset;
/* For o's test lengths of task; random: a +rand run (seed draws its positions). RG_OK or the error. */
rg_status eng_curveset_init(eng_curveset *c, const eng_options *o, rg_task task, bool random, uint64_t seed);
void eng_curveset_free(eng_curveset *c);
/* One measurement at `step`: a row step,n,exact_match,token_acc per test length into csv (empty values for n/a).
 * 0, or -1 with a message on stderr naming tag. */
int eng_curveset_measure(const eng_curveset *c, rg_model *m, int64_t step, FILE *csv, const char *tag);

#endif
