/* test_bench_targets.c: bench/targets.c's verdicts on the benchmark's per-step targets (bench/README.md) from hand-made
 * 1-thread rows: a bound met exactly, missed by a little, the exp step's bound with and without AMX, bf16 rows
 * against PyTorch's faster step (fp32 or autocast), product shares against their precision's ceiling, rows or
 * PyTorch times missing (never "met"; a row that did not run has zeros, as bench.c passes it), and the shares and
 * elementwise floors taken as the worse of fp32 and bf16. A table of cases, one loop; then the printed table. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../bench/bench.h"

const bench_pos POS[N_POS] = {{"rope", RG_POS_ROPE}, {"t5", RG_POS_T5}};

enum { LARGE_BF16, REF_BF16, EXP_BF16, REF_SHARE, LARGE_SHARE, EXP_SHARE, REF_FLOOR, LARGE_FLOOR, EXP_FLOOR };

typedef struct {
    const char *name;
    int target;
    bool amx;
    bench_cell rope[N_PREC], t5[N_PREC]; /* the target's model's cells; every other cell absent */
    int model;
    bench_verdict want;
    double want_rope, want_t5; /* the values (NAN: not measured) */
} target_case;

/* a row that ran: median ms, elementwise ms, its floor ms, PyTorch's ms, its products' % of their ceiling */
#define CELL(ms, elem, floor, torch, pct) {true, ms, elem, floor, torch, pct}
#define NONE {false, 0, 0, 0, NAN, NAN} /* as bench.c passes a row that did not run: its zeroed results */

static const target_case CASES[] = {
    {"exp bf16 at the bound, no AMX", EXP_BF16, false, {NONE, CELL(5.5, 3, 2, NAN, 50)},
     {NONE, CELL(5.0, 3, 2, NAN, 50)}, 2, BENCH_MET, 5.5, 5.0},
    {"exp bf16 just over, no AMX", EXP_BF16, false, {NONE, CELL(5.51, 3, 2, NAN, 50)},
     {NONE, CELL(5.0, 3, 2, NAN, 50)}, 2, BENCH_NOT_MET, 5.51, 5.0},
    /* the same times where AMX is: the bound is 4.5 ms */
    {"exp bf16 with AMX", EXP_BF16, true, {NONE, CELL(5.5, 3, 2, NAN, 50)}, {NONE, CELL(4.5, 3, 2, NAN, 50)}, 2,
     BENCH_NOT_MET, 5.5, 4.5},
    {"exp bf16 with AMX, met", EXP_BF16, true, {NONE, CELL(4.4, 3, 2, NAN, 50)}, {NONE, CELL(4.5, 3, 2, NAN, 50)}, 2,
     BENCH_MET, 4.4, 4.5},
    {"exp bf16 row failed", EXP_BF16, false, {CELL(8, 3, 2, NAN, 50), NONE}, {CELL(8, 3, 2, NAN, 50), NONE}, 2,
     BENCH_NOT_MEASURED, NAN, NAN},
    /* PyTorch's fp32 step (30 ms) faster than its autocast one (40 ms): the bf16 ratio is against 30 */
    {"ref bf16 against the faster", REF_BF16, false, {CELL(12, 5, 3, 30, 50), CELL(8, 5, 3, 40, 50)},
     {CELL(12, 5, 3, 42, 50), CELL(12.5, 5, 3, 42, 50)}, 0, BENCH_NOT_MET, 3.75, 3.36},
    {"ref bf16 at the bound", REF_BF16, false, {CELL(12, 5, 3, 35, 50), CELL(10, 5, 3, 36, 50)},
     {CELL(12, 5, 3, 70, 50), CELL(10, 5, 3, 35, 50)}, 0, BENCH_MET, 3.5, 3.5},
    {"large bf16 autocast faster", LARGE_BF16, false, {CELL(300, 60, 30, 500, 50), CELL(100, 60, 30, 260, 50)},
     {CELL(300, 60, 30, 500, 50), CELL(100, 60, 30, 250, 50)}, 1, BENCH_MET, 2.6, 2.5},
    {"large bf16 just under", LARGE_BF16, false, {CELL(300, 60, 30, 500, 50), CELL(100, 60, 30, 249, 50)},
     {CELL(300, 60, 30, 500, 50), CELL(100, 60, 30, 260, 50)}, 1, BENCH_NOT_MET, 2.49, 2.6},
    /* without PyTorch's fp32 time the faster step is unknown: not measured, though autocast alone gives 4x */
    {"ref bf16 without PyTorch fp32", REF_BF16, false, {CELL(12, 5, 3, NAN, 50), CELL(10, 5, 3, 40, 50)},
     {CELL(12, 5, 3, NAN, 50), CELL(10, 5, 3, 40, 50)}, 0, BENCH_NOT_MEASURED, NAN, NAN},
    {"ref bf16 without autocast", REF_BF16, false, {CELL(12, 5, 3, 40, 50), CELL(10, 5, 3, NAN, 50)},
     {CELL(12, 5, 3, 40, 50), CELL(10, 5, 3, NAN, 50)}, 0, BENCH_NOT_MEASURED, NAN, NAN},
    {"large bf16 only rope measured, met", LARGE_BF16, false, {CELL(300, 60, 30, 500, 50), CELL(100, 60, 30, 260, 50)},
     {NONE, NONE}, 1, BENCH_PARTLY_MEASURED, 2.6, NAN},
    {"large bf16 row failed", LARGE_BF16, false, {CELL(300, 60, 30, 500, 50), NONE}, {NONE, NONE}, 1,
     BENCH_NOT_MEASURED, NAN, NAN},
    /* the C row failed while PyTorch's ran: its zero ms must not read as an infinite speedup */
    {"large bf16 C row failed, PyTorch ran", LARGE_BF16, false,
     {CELL(300, 60, 30, 500, 50), {false, 0, 0, 0, 260, NAN}}, {CELL(300, 60, 30, 500, 50), {false, 0, 0, 0, 250, NAN}},
     1, BENCH_NOT_MEASURED, NAN, NAN},
    /* shares: the worse precision decides (bf16's 70% in rope, fp32's 79.9% in t5) */
    {"large shares, worse of two", LARGE_SHARE, false, {CELL(300, 60, 30, NAN, 85), CELL(100, 60, 30, NAN, 70)},
     {CELL(300, 60, 30, NAN, 79.9), CELL(100, 60, 30, NAN, 90)}, 1, BENCH_NOT_MET, 70, 79.9},
    {"ref shares at the bound", REF_SHARE, false, {CELL(12, 5, 3, NAN, 80), CELL(10, 5, 3, NAN, 95)},
     {CELL(12, 5, 3, NAN, 81), CELL(10, 5, 3, NAN, 80)}, 0, BENCH_MET, 80, 80},
    /* no ceiling of a precision (or no profile) gives no share: the worse of two is then unknown */
    {"exp shares, bf16 ceiling missing", EXP_SHARE, false, {CELL(8, 3, 2, NAN, 90), CELL(5, 3, 2, NAN, NAN)},
     {CELL(8, 3, 2, NAN, 90), CELL(5, 3, 2, NAN, NAN)}, 2, BENCH_NOT_MEASURED, NAN, NAN},
    {"exp shares, t5 rows failed", EXP_SHARE, false, {CELL(8, 3, 2, NAN, 90), CELL(5, 3, 2, NAN, 85)}, {NONE, NONE},
     2, BENCH_PARTLY_MEASURED, 85, NAN},
    /* floors: the worse precision decides (bf16's 2.5x in rope, fp32's 3.1x in t5) */
    {"large floor, worse of two", LARGE_FLOOR, false, {CELL(300, 50, 25, NAN, 50), CELL(180, 75, 30, NAN, 50)},
     {CELL(300, 62, 20, NAN, 50), CELL(180, 40, 20, NAN, 50)}, 1, BENCH_NOT_MET, 2.5, 3.1},
    {"ref floor met at the bound", REF_FLOOR, false, {CELL(15, 9, 3, NAN, 50), CELL(11, 6, 3.5, NAN, 50)},
     {CELL(15, 5, 3, NAN, 50), CELL(11, 4, 3, NAN, 50)}, 0, BENCH_MET, 3.0, 5.0 / 3},
    /* the worse of two is unknown with one: t5's bf16 row failed */
    {"ref floor, one precision missing", REF_FLOOR, false, {CELL(15, 5, 3, NAN, 50), CELL(11, 6, 3.5, NAN, 50)},
     {CELL(15, 5, 3, NAN, 50), NONE}, 0, BENCH_PARTLY_MEASURED, 6 / 3.5, NAN},
    {"exp floor not measured", EXP_FLOOR, false, {CELL(8, NAN, NAN, NAN, 50), NONE}, {NONE, NONE}, 2,
     BENCH_NOT_MEASURED, NAN, NAN},
};

static bool close_or_both_nan(double a, double b) { return (a != a && b != b) || fabs(a - b) < 1e-12; }

static void test_verdicts(void **state)
{
    (void)state;
    assert_int_equal(bench_n_targets(), EXP_FLOOR + 1);
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        const target_case *c = &CASES[i];
        static bench_cell cells[N_MODELS][N_POS][N_PREC];
        for (int m = 0; m < N_MODELS; m++)
            for (int p = 0; p < N_POS; p++)
                for (int r = 0; r < N_PREC; r++) cells[m][p][r] = (bench_cell)NONE;
        memcpy(cells[c->model][0], c->rope, sizeof c->rope);
        memcpy(cells[c->model][1], c->t5, sizeof c->t5);
        double v[N_POS];
        bench_verdict got = bench_target_verdict(c->target, cells, c->amx, v);
        if (got != c->want) fail_msg("%s: verdict %d, want %d", c->name, (int)got, (int)c->want);
        if (!close_or_both_nan(v[0], c->want_rope) || !close_or_both_nan(v[1], c->want_t5))
            fail_msg("%s: values %g %g, want %g %g", c->name, v[0], v[1], c->want_rope, c->want_t5);
    }
}

/* The printed table: a header, a separator and one row per target, each with its values and verdict. */
static void test_printed_table(void **state)
{
    (void)state;
    static bench_cell cells[N_MODELS][N_POS][N_PREC];
    for (int m = 0; m < N_MODELS; m++)
        for (int p = 0; p < N_POS; p++)
            for (int r = 0; r < N_PREC; r++) cells[m][p][r] = (bench_cell)NONE;
    cells[2][0][0] = (bench_cell)CELL(8.5, 3, 2, NAN, 85); /* exp fp32: 85% of the fp32 ceiling */
    cells[2][1][0] = (bench_cell)CELL(9.5, 3, 2, NAN, 75); /* t5: 75% */
    cells[2][0][1] = (bench_cell)CELL(5.4, 3, 2, NAN, 90);
    cells[2][1][1] = (bench_cell)CELL(5.6, 7, 2, NAN, 90); /* exp bf16: t5 over 5.5 ms, 3.5x its floor */
    FILE *f = tmpfile();
    assert_non_null(f);
    bench_print_targets(f, cells, false);
    char text[8192] = {0};
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0);
    assert_non_null(strstr(text, "| target | rope | t5 | verdict |\n|---|---:|---:|---|\n"));
    assert_non_null(
        strstr(text, "| `exp` step bf16 <= 5.5 ms (no AMX here; 4.5 ms where AMX is) | 5.40 ms | 5.60 ms | not met |\n"));
    assert_non_null(strstr(text, "| `exp` products >= 80% of their precision's ceiling | 85% | 75% | not met |\n"));
    assert_non_null(strstr(text, "| `exp` elementwise within 3x of its memory floor | 1.50x | 3.50x | not met |\n"));
    assert_non_null(
        strstr(text, "| large step bf16 >= 2.5x PyTorch's faster of fp32 and bf16 | - | - | not measured |\n"));
    assert_non_null(strstr(text, "| ref products >= 80% of their precision's ceiling | - | - | not measured |\n"));
    int rows = 0;
    for (const char *p = strstr(text, "|---|"); p && (p = strchr(p + 1, '\n')) && p[1] == '|';) rows++;
    assert_int_equal(rows, bench_n_targets());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_printed_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
