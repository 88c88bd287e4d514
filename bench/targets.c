/* bench/targets.c: issue 22's speed targets checked against one benchmark run's 1-thread rows, printed below the
 * table (bench/README.md, "What is measured"), so that a run on the machine the targets are defined on (the AMX
 * Xeon) states them without a table written by hand. The targets (issue 22, "Targets"):
 *   exp step fp32 median <= 9 ms, bf16 median <= 6 ms
 *   ref step fp32 >= 2.5x PyTorch fp32; bf16 >= 3.5x PyTorch's faster of fp32 and autocast bf16
 *   large step fp32 >= 1.5x PyTorch fp32; bf16 >= 2.5x PyTorch's faster of fp32 and autocast bf16
 *   every 1-thread row's elementwise time within 2x of its memory floor
 * A ratio is PyTorch ms / C ms, both medians of the same thread count and OpenBLAS environment. A target whose
 * rows did not run (or have no PyTorch time) is "not measured", never met; an elementwise target needs both
 * precisions' rows, a bf16 speedup both of PyTorch's times. */
#include <math.h>
#include <stdio.h>

#include "bench.h"

typedef enum { BY_MS, BY_SPEEDUP, BY_FLOOR } target_kind;

typedef struct {
    const char *what;   /* the target as the issue states it */
    int model;          /* index into MODELS: 0 ref, 1 large, 2 exp */
    int prec;           /* index into PRECS: 0 fp32, 1 bf16 */
    target_kind kind;
    double bound;       /* BY_MS: at most this many ms; BY_SPEEDUP: at least this ratio; BY_FLOOR: at most x */
} target;

static const target TARGETS[] = {
    {"`exp` step fp32 <= 9 ms", 2, 0, BY_MS, 9.0},
    {"`exp` step bf16 <= 6 ms", 2, 1, BY_MS, 6.0},
    {"reference step fp32 >= 2.5x PyTorch fp32", 0, 0, BY_SPEEDUP, 2.5},
    {"reference step bf16 >= 3.5x PyTorch's faster of fp32 and bf16", 0, 1, BY_SPEEDUP, 3.5},
    {"large step fp32 >= 1.5x PyTorch fp32", 1, 0, BY_SPEEDUP, 1.5},
    {"large step bf16 >= 2.5x PyTorch's faster of fp32 and bf16", 1, 1, BY_SPEEDUP, 2.5},
    {"ref elementwise within 2x of its memory floor", 0, -1, BY_FLOOR, 2.0},
    {"large elementwise within 2x of its memory floor", 1, -1, BY_FLOOR, 2.0},
    {"`exp` elementwise within 2x of its memory floor", 2, -1, BY_FLOOR, 2.0},
};
#define N_TARGETS (int)(sizeof TARGETS / sizeof *TARGETS)

/* The PyTorch time a C row is compared with: the same precision for fp32, the faster of both for bf16 (NAN when
 * either is missing: the faster is then unknown, and the one present could only make the ratio too high). */
static double torch_ms(const bench_cell *fp32, const bench_cell *cell, int prec)
{
    if (prec == 0) return cell->torch_ms > 0 ? cell->torch_ms : NAN;
    double a = fp32->torch_ms, b = cell->torch_ms;
    if (!(a > 0) || !(b > 0)) return NAN;
    return a < b ? a : b;
}

/* The value of target t for encoding p, NAN when not measured. BY_FLOOR: the worse of the fp32 and bf16 rows' ratios,
 * NAN unless both rows ran with an elementwise time (the worse is unknown with one). */
static double target_value(const target *t, const bench_cell cells[N_MODELS][N_POS][N_PREC], int p)
{
    const bench_cell *c = &cells[t->model][p][t->prec < 0 ? 0 : t->prec];
    switch (t->kind) {
    case BY_MS:
        return c->ok ? c->ms_med : NAN;
    case BY_SPEEDUP: {
        double tm = torch_ms(&cells[t->model][p][0], c, t->prec);
        return c->ok && tm > 0 ? tm / c->ms_med : NAN;
    }
    case BY_FLOOR: {
        double worst = -INFINITY;
        for (int r = 0; r < N_PREC; r++) {
            const bench_cell *x = &cells[t->model][p][r];
            double v = x->ok && x->floor_ms > 0 ? x->elem_ms / x->floor_ms : NAN;
            if (v != v) return NAN;
            if (v > worst) worst = v;
        }
        return worst;
    }
    }
    return NAN;
}

bench_verdict bench_target_verdict(int i, const bench_cell cells[N_MODELS][N_POS][N_PREC], double value[N_POS])
{
    const target *t = &TARGETS[i];
    bool all = true, any = false;
    for (int p = 0; p < N_POS; p++) {
        value[p] = target_value(t, cells, p);
        if (value[p] != value[p]) continue;
        any = true;
        if (t->kind == BY_SPEEDUP ? !(value[p] >= t->bound) : !(value[p] <= t->bound)) all = false;
    }
    if (!any) return BENCH_NOT_MEASURED;
    for (int p = 0; p < N_POS; p++)
        if (value[p] != value[p]) return all ? BENCH_PARTLY_MEASURED : BENCH_NOT_MET;
    return all ? BENCH_MET : BENCH_NOT_MET;
}

int bench_n_targets(void) { return N_TARGETS; }

void bench_print_targets(FILE *f, const bench_cell cells[N_MODELS][N_POS][N_PREC])
{
    static const char *VERDICT[] = {"met", "not met", "not measured", "met where measured"};
    fprintf(f, "\nIssue 22's targets at 1 thread (speedup = PyTorch ms / C ms, medians; bf16 rows against PyTorch's "
               "faster of its fp32 and autocast bf16 steps; elem/floor the worse of fp32 and bf16):\n\n");
    fprintf(f, "| target |");
    for (int p = 0; p < N_POS; p++) fprintf(f, " %s |", POS[p].name);
    fprintf(f, " verdict |\n|---|");
    for (int p = 0; p < N_POS; p++) fprintf(f, "---:|");
    fprintf(f, "---|\n");
    for (int i = 0; i < N_TARGETS; i++) {
        double v[N_POS];
        bench_verdict verdict = bench_target_verdict(i, cells, v);
        fprintf(f, "| %s |", TARGETS[i].what);
        for (int p = 0; p < N_POS; p++) {
            if (v[p] != v[p]) fprintf(f, " - |");
            else if (TARGETS[i].kind == BY_MS) fprintf(f, " %.2f ms |", v[p]);
            else fprintf(f, " %.2fx |", v[p]);
        }
        fprintf(f, " %s |\n", VERDICT[verdict]);
    }
}
