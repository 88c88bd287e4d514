/* bench/targets.c: the speed targets checked against one benchmark run's 1-thread rows, printed below the table
 * (bench/README.md, "The targets"), so that every run states its own verdicts on the CPU it ran on. The targets:
 *   large step bf16 >= 2.5x PyTorch's faster of fp32 and autocast bf16
 *   reference step bf16 >= 3.5x PyTorch's faster of fp32 and autocast bf16
 *   exp step bf16 median <= 5.5 ms (the Zen 4 EPYC's bound), <= 4.5 ms where the CPU has AMX
 *   every row's product share >= 80% of the ceiling of its precision (bench/ceiling.c)
 *   every row's elementwise time within 3x of its memory floor
 * A ratio is PyTorch ms / C ms, both medians at 1 thread in the same pass, PyTorch at its best (its OpenBLAS with
 * the CPU's own kernel set; bench/report.c passes no PyTorch time otherwise). A target whose rows did not run (or
 * have no PyTorch time) is "not measured", never met; a share or a floor needs both precisions' rows, a bf16
 * speedup both of PyTorch's times. */
#include <math.h>
#include <stdio.h>

#include "bench.h"

typedef enum { BY_MS, BY_SPEEDUP, BY_SHARE, BY_FLOOR } target_kind;

typedef struct {
    const char *what;   /* the target as stated (BY_MS: its bound follows, for this CPU) */
    int model;          /* index into MODELS: 0 ref, 1 large, 2 exp */
    int prec;           /* index into PRECS: 0 fp32, 1 bf16; -1 both (the worse decides) */
    target_kind kind;
    double bound;       /* BY_MS: at most this many ms; BY_SPEEDUP: at least this ratio; BY_SHARE: at least this
                         * percentage; BY_FLOOR: at most this ratio */
    double bound_amx;   /* BY_MS: the bound where the CPU has AMX */
} target;

static const target TARGETS[] = {
    {"large step bf16 >= 2.5x PyTorch's faster of fp32 and bf16", 1, 1, BY_SPEEDUP, 2.5, 0},
    {"reference step bf16 >= 3.5x PyTorch's faster of fp32 and bf16", 0, 1, BY_SPEEDUP, 3.5, 0},
    {"`exp` step bf16 <=", 2, 1, BY_MS, 5.5, 4.5},
    {"ref products >= 80% of their precision's ceiling", 0, -1, BY_SHARE, 80, 0},
    {"large products >= 80% of their precision's ceiling", 1, -1, BY_SHARE, 80, 0},
    {"`exp` products >= 80% of their precision's ceiling", 2, -1, BY_SHARE, 80, 0},
    {"ref elementwise within 3x of its memory floor", 0, -1, BY_FLOOR, 3.0, 0},
    {"large elementwise within 3x of its memory floor", 1, -1, BY_FLOOR, 3.0, 0},
    {"`exp` elementwise within 3x of its memory floor", 2, -1, BY_FLOOR, 3.0, 0},
};
#define N_TARGETS (int)(sizeof TARGETS / sizeof *TARGETS)

static double bound_of(const target *t, bool amx) { return amx && t->bound_amx > 0 ? t->bound_amx : t->bound; }

/* The PyTorch time a C row is compared with: the same precision for fp32, the faster of both for bf16 (NAN when
 * either is missing: the faster is then unknown, and the one present could only make the ratio too high). */
static double torch_ms(const bench_cell *fp32, const bench_cell *cell, int prec)
{
    if (prec == 0) return cell->torch_ms > 0 ? cell->torch_ms : NAN;
    double a = fp32->torch_ms, b = cell->torch_ms;
    if (!(a > 0) || !(b > 0)) return NAN;
    return a < b ? a : b;
}

/* One row's share (BY_SHARE: its products' percentage of the ceiling) or floor ratio (BY_FLOOR), NAN if not measured. */
static double row_value(const bench_cell *x, target_kind kind)
{
    if (!x->ok) return NAN;
    if (kind == BY_SHARE) return x->prod_pct > 0 ? x->prod_pct : NAN;
    return x->floor_ms > 0 ? x->elem_ms / x->floor_ms : NAN;
}

/* The value of target t for encoding p, NAN when not measured. BY_SHARE and BY_FLOOR: the worse of the fp32 and bf16
 * rows' values, NAN unless both rows measured theirs (the worse is unknown with one). */
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
    case BY_SHARE:
    case BY_FLOOR: {
        double worst = t->kind == BY_SHARE ? INFINITY : -INFINITY;
        for (int r = 0; r < N_PREC; r++) {
            double v = row_value(&cells[t->model][p][r], t->kind);
            if (v != v) return NAN;
            worst = t->kind == BY_SHARE ? fmin(worst, v) : fmax(worst, v);
        }
        return worst;
    }
    }
    return NAN;
}

bench_verdict bench_target_verdict(int i, const bench_cell cells[N_MODELS][N_POS][N_PREC], bool amx,
                                   double value[N_POS])
{
    const target *t = &TARGETS[i];
    double bound = bound_of(t, amx);
    bool all = true, any = false;
    for (int p = 0; p < N_POS; p++) {
        value[p] = target_value(t, cells, p);
        if (value[p] != value[p]) continue;
        any = true;
        bool at_least = t->kind == BY_SPEEDUP || t->kind == BY_SHARE;
        if (at_least ? !(value[p] >= bound) : !(value[p] <= bound)) all = false;
    }
    if (!any) return BENCH_NOT_MEASURED;
    for (int p = 0; p < N_POS; p++)
        if (value[p] != value[p]) return all ? BENCH_PARTLY_MEASURED : BENCH_NOT_MET;
    return all ? BENCH_MET : BENCH_NOT_MET;
}

int bench_n_targets(void) { return N_TARGETS; }

void bench_print_targets(FILE *f, const bench_cell cells[N_MODELS][N_POS][N_PREC], bool amx)
{
    static const char *VERDICT[] = {"met", "not met", "not measured", "met where measured"};
    fprintf(f, "\nThe targets at 1 thread (speedup = PyTorch ms / C ms, medians, against PyTorch's faster of its fp32 "
               "and autocast bf16 steps; products: the worse of fp32's and bf16's share of their own ceiling; "
               "elem/floor the worse of fp32 and bf16):\n\n");
    fprintf(f, "| target |");
    for (int p = 0; p < N_POS; p++) fprintf(f, " %s |", POS[p].name);
    fprintf(f, " verdict |\n|---|");
    for (int p = 0; p < N_POS; p++) fprintf(f, "---:|");
    fprintf(f, "---|\n");
    for (int i = 0; i < N_TARGETS; i++) {
        double v[N_POS];
        bench_verdict verdict = bench_target_verdict(i, cells, amx, v);
        fprintf(f, "| %s", TARGETS[i].what);
        if (TARGETS[i].kind == BY_MS && amx) fprintf(f, " %g ms (AMX here)", bound_of(&TARGETS[i], amx));
        else if (TARGETS[i].kind == BY_MS) fprintf(f, " %g ms (no AMX here; %g ms where AMX is)", TARGETS[i].bound,
                                                   TARGETS[i].bound_amx);
        fprintf(f, " |");
        for (int p = 0; p < N_POS; p++) {
            if (v[p] != v[p]) fprintf(f, " - |");
            else if (TARGETS[i].kind == BY_MS) fprintf(f, " %.2f ms |", v[p]);
            else if (TARGETS[i].kind == BY_SHARE) fprintf(f, " %.0f%% |", v[p]);
            else fprintf(f, " %.2fx |", v[p]);
        }
        fprintf(f, " %s |\n", VERDICT[verdict]);
    }
}
