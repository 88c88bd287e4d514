/* run_curves.c: extrapolation over training (--extrap-every): the fixed subsample of every test length a
 * run measures while it trains, and one measurement as rows of runs/<run>/extrap.csv. */
#include "engine/run/run_curves.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "engine/run/evaluate.h"
#include "engine/settings/protocol.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void eng_curveset_free(eng_curveset *c)
{
    for (int i = 0; i < c->n_lens; i++) { rg_evalset_free(&c->sets[i]); free(c->pos[i]); }
    memset(c, 0, sizeof *c);
}

rg_status eng_curveset_init(eng_curveset *c, const eng_options *o, rg_task task, bool random, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < o->n_test_lens; i++) {
        bool generated;
        rg_status st = eng_evalset_get(o, task, o->test_lens[i], &c->sets[i], &generated);
        if (st) { eng_curveset_free(c); return st; }
        c->n_lens = i + 1;
        int count = c->sets[i].count < ENG_CURVE_COUNT ? c->sets[i].count : ENG_CURVE_COUNT;
        st = eng_eval_positions(random, seed, EVALPOS_TEST, task, o->test_lens[i], count, o->max_position, &c->pos[i]);
        if (st == RG_ERR_ARG) c->na[i] = true;
        else if (st) { eng_curveset_free(c); return st; }
    }
    return RG_OK;
}

/* One measurement: a row of extrap.csv per test length (step,n,exact_match,token_acc; empty values where the
 * length cannot be evaluated: past the learned table or --max-position). 0, or -1 with a message. */
int eng_curveset_measure(const eng_curveset *c, rg_model *m, int64_t step, FILE *csv, const char *tag)
{
    for (int i = 0; i < c->n_lens; i++) {
        const rg_evalset *es = &c->sets[i];
        int count = es->count < ENG_CURVE_COUNT ? es->count : ENG_CURVE_COUNT;
        double em = NAN, acc = NAN;
        rg_status st = c->na[i] ? RG_ERR_ARG : eng_evaluate_set(m, es, count, c->pos[i], &em, &acc, NULL, 0);
        if (st && !(st == RG_ERR_ARG && (c->na[i] || eng_pos_bounded(m->cfg.pos)))) {
            fprintf(stderr, "%s: measurement at n=%d, step %lld: %s\n", tag, es->n, (long long)step, rg_last_error());
            return -1;
        }
        if (st) fprintf(csv, "%lld,%d,,\n", (long long)step, es->n);
        else fprintf(csv, "%lld,%d,%.6g,%.6g\n", (long long)step, es->n, em, acc);
    }
    fflush(csv);
    return 0;
}

