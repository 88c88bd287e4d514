/* test_bench_targets.c: bench/targets.c's verdicts on the benchmark's per-step targets (bench/README.md) from hand-made 1-thread rows: a bound met
 * exactly, missed by a little, bf16 rows against PyTorch's faster step (fp32 or autocast), rows or PyTorch times
 * missing (never "met"; a row that did not run has zeros, as bench.c passes it), and the elementwise floor taken as
 * the worse of fp32 and bf16. A table of cases, one loop; then the printed table. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../bench/bench.h"

const bench_pos POS[N_POS] = {{"rope", RG_POS_ROPE}, {"t5", RG_POS_T5}};

enum { EXP_FP32, EXP_BF16, REF_FP32, REF_BF16, LARGE_FP32, LARGE_BF16, REF_FLOOR, LARGE_FLOOR, EXP_FLOOR };

typedef struct {
    const char *name;
    int target;
    bench_cell rope[N_PREC], t5[N_PREC]; /* the target's model's cells; every other cell absent */
    int model;
    bench_verdict want;
    double want_rope, want_t5; /* the values (NAN: not measured) */
} target_case;

#define CELL(ms, elem, floor, torch) {true, ms, elem, floor, torch}
#define NONE {false, 0, 0, 0, NAN} /* as bench.c passes a row that did not run: its zeroed results */

static const target_case CASES[] = {
    {"exp fp32 at the bound", EXP_FP32, {CELL(9.0, 3, 2, NAN), NONE}, {CELL(8.5, 3, 2, NAN), NONE}, 2, BENCH_MET, 9.0,
     8.5},
    {"exp bf16 just over", EXP_BF16, {NONE, CELL(6.01, 3, 2, NAN)}, {NONE, CELL(5.5, 3, 2, NAN)}, 2, BENCH_NOT_MET,
     6.01, 5.5},
    {"ref fp32 ratio", REF_FP32, {CELL(10, 5, 3, 25), NONE}, {CELL(10, 5, 3, 24.9), NONE}, 0, BENCH_NOT_MET, 2.5,
     2.49},
    /* PyTorch's fp32 step (30 ms) faster than its autocast one (40 ms): the bf16 ratio is against 30 */
    {"ref bf16 against the faster", REF_BF16, {CELL(12, 5, 3, 30), CELL(8, 5, 3, 40)},
     {CELL(12, 5, 3, 42), CELL(12.5, 5, 3, 42)}, 0, BENCH_NOT_MET, 3.75, 3.36},
    {"large bf16 autocast faster", LARGE_BF16, {CELL(300, 60, 30, 500), CELL(100, 60, 30, 260)},
     {CELL(300, 60, 30, 500), CELL(100, 60, 30, 250)}, 1, BENCH_MET, 2.6, 2.5},
    {"large fp32 without PyTorch", LARGE_FP32, {CELL(300, 60, 30, NAN), NONE}, {CELL(300, 60, 30, NAN), NONE}, 1,
     BENCH_NOT_MEASURED, NAN, NAN},
    {"large fp32 only rope measured, at the bound", LARGE_FP32, {CELL(300, 60, 30, 450), NONE}, {NONE, NONE}, 1,
     BENCH_PARTLY_MEASURED, 1.5, NAN},
    {"large fp32 just under", LARGE_FP32, {CELL(300, 60, 30, 447), NONE}, {CELL(300, 60, 30, 480), NONE}, 1,
     BENCH_NOT_MET, 1.49, 1.6},
    {"exp bf16 row failed", EXP_BF16, {CELL(8, 3, 2, NAN), NONE}, {CELL(8, 3, 2, NAN), NONE}, 2, BENCH_NOT_MEASURED,
     NAN, NAN},
    /* without PyTorch's fp32 time the faster step is unknown: not measured, though autocast alone gives 4x */
    {"ref bf16 without PyTorch fp32", REF_BF16, {CELL(12, 5, 3, NAN), CELL(10, 5, 3, 40)},
     {CELL(12, 5, 3, NAN), CELL(10, 5, 3, 40)}, 0, BENCH_NOT_MEASURED, NAN, NAN},
    {"ref bf16 without autocast", REF_BF16, {CELL(12, 5, 3, 40), CELL(10, 5, 3, NAN)},
     {CELL(12, 5, 3, 40), CELL(10, 5, 3, NAN)}, 0, BENCH_NOT_MEASURED, NAN, NAN},
    {"large bf16 row failed", LARGE_BF16, {CELL(300, 60, 30, 500), NONE}, {NONE, NONE}, 1, BENCH_NOT_MEASURED, NAN,
     NAN},
    /* the C row failed while PyTorch's ran: its zero ms must not read as an infinite speedup */
    {"large bf16 C row failed, PyTorch ran", LARGE_BF16, {CELL(300, 60, 30, 500), {false, 0, 0, 0, 260}},
     {CELL(300, 60, 30, 500), {false, 0, 0, 0, 250}}, 1, BENCH_NOT_MEASURED, NAN, NAN},
    /* the worse precision decides: bf16's 2.5x in rope, fp32's 2.2x in t5 */
    {"large floor, worse of two", LARGE_FLOOR, {CELL(300, 50, 25, NAN), CELL(180, 75, 30, NAN)},
     {CELL(300, 44, 20, NAN), CELL(180, 40, 20, NAN)}, 1, BENCH_NOT_MET, 2.5, 2.2},
    {"ref floor met", REF_FLOOR, {CELL(15, 5, 3, NAN), CELL(11, 6, 3.5, NAN)},
     {CELL(15, 5, 3, NAN), CELL(11, 4, 3, NAN)}, 0, BENCH_MET, 6 / 3.5, 5.0 / 3},
    /* the worse of two is unknown with one: t5's bf16 row failed */
    {"ref floor, one precision missing", REF_FLOOR, {CELL(15, 5, 3, NAN), CELL(11, 6, 3.5, NAN)},
     {CELL(15, 5, 3, NAN), NONE}, 0, BENCH_PARTLY_MEASURED, 6 / 3.5, NAN},
    {"exp floor not measured", EXP_FLOOR, {CELL(8, NAN, NAN, NAN), NONE}, {NONE, NONE}, 2, BENCH_NOT_MEASURED, NAN,
     NAN},
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
        bench_verdict got = bench_target_verdict(c->target, cells, v);
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
    cells[2][0][0] = (bench_cell)CELL(8.5, 3, 2, NAN); /* exp fp32: rope 8.5 ms met, */
    cells[2][1][0] = (bench_cell)CELL(9.5, 3, 2, NAN); /* t5 9.5 ms: not met */
    cells[2][0][1] = (bench_cell)CELL(5.5, 3, 2, NAN);
    cells[2][1][1] = (bench_cell)CELL(5.9, 3, 2, NAN); /* exp bf16: met */
    FILE *f = tmpfile();
    assert_non_null(f);
    bench_print_targets(f, cells);
    char text[8192] = {0};
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(n > 0);
    assert_non_null(strstr(text, "| target | rope | t5 | verdict |\n|---|---:|---:|---|\n"));
    assert_non_null(strstr(text, "| `exp` step fp32 <= 9 ms | 8.50 ms | 9.50 ms | not met |\n"));
    assert_non_null(strstr(text, "| `exp` step bf16 <= 6 ms | 5.50 ms | 5.90 ms | met |\n"));
    assert_non_null(strstr(text, "| large step fp32 >= 1.5x PyTorch fp32 | - | - | not measured |\n"));
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
