/* test_model_sizes.c: the model-size axis of the report (--sizes; docs/experiment.md, "A model-size axis"), without
 * training: the size item's syntax (a table of good and bad items), the --sizes list's refusals, a report of two
 * sizes written and read back (a row per size with its label, the size columns of report.csv and the fields of
 * report.json), and report.csv files whose size columns are incomplete or contradict themselves refused. The
 * end-to-end grid (runs, checkpoints, --eval, --combine, --compare): tests/e2e/test_train_order_sizes.c. */
#include "report_fixture.h"
#include "engine/base/sizes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Items of --sizes: text, whether it parses, then the numbers and canonical text it gives. */
static const struct {
    const char *text;
    bool ok;
    int d_model, n_layers, n_heads, d_ff;
    const char *canonical;
} ITEMS[] = {
    {"64x2", true, 64, 2, 0, 0, "64x2"},
    {"128x4h8", true, 128, 4, 8, 0, "128x4h8"},
    {"128x4f256", true, 128, 4, 0, 256, "128x4f256"},
    {"128x4h8f256", true, 128, 4, 8, 256, "128x4h8f256"},
    {"064x02", true, 64, 2, 0, 0, "64x2"},         /* leading zeros: the same size, named without them */
    {"4096x64h256f65536", true, 4096, 64, 256, 65536, "4096x64h256f65536"}, /* every limit at its top */
    {"0x2", false, 0, 0, 0, 0, NULL},              /* d_model 0 */
    {"64x", false, 0, 0, 0, 0, NULL},              /* no n_layers */
    {"64x2x", false, 0, 0, 0, 0, NULL},            /* a third x */
    {"x2", false, 0, 0, 0, 0, NULL},
    {"", false, 0, 0, 0, 0, NULL},
    {"64", false, 0, 0, 0, 0, NULL},
    {"64x0", false, 0, 0, 0, 0, NULL},
    {"64x65", false, 0, 0, 0, 0, NULL},            /* n_layers past --n-layers' 64 */
    {"4097x2", false, 0, 0, 0, 0, NULL},           /* d_model past --d-model's 4096 */
    {"99999999999999999999x2", false, 0, 0, 0, 0, NULL}, /* overflow */
    {"64x99999999999", false, 0, 0, 0, 0, NULL},
    {"64x2h", false, 0, 0, 0, 0, NULL},
    {"64x2h0", false, 0, 0, 0, 0, NULL},
    {"64x2h257", false, 0, 0, 0, 0, NULL},
    {"64x2f", false, 0, 0, 0, 0, NULL},
    {"64x2f65537", false, 0, 0, 0, 0, NULL},
    {"64x2f256h4", false, 0, 0, 0, 0, NULL},       /* heads before d_ff */
    {"64x2h4h4", false, 0, 0, 0, 0, NULL},
    {"64X2", false, 0, 0, 0, 0, NULL},
    {"-64x2", false, 0, 0, 0, 0, NULL},
    {"+64x2", false, 0, 0, 0, 0, NULL},
    {" 64x2", false, 0, 0, 0, 0, NULL},
    {"64x2 ", false, 0, 0, 0, 0, NULL},
};

static void test_size_items(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ITEMS / sizeof *ITEMS; i++) {
        eng_size s;
        int rc = eng_size_parse(ITEMS[i].text, &s);
        if ((rc == 0) != ITEMS[i].ok) fail_msg("'%s': parsed %s, expected %s", ITEMS[i].text, rc ? "no" : "yes",
                                               ITEMS[i].ok ? "yes" : "no");
        if (!ITEMS[i].ok) continue;
        if (s.d_model != ITEMS[i].d_model || s.n_layers != ITEMS[i].n_layers || s.n_heads != ITEMS[i].n_heads ||
            s.d_ff != ITEMS[i].d_ff || strcmp(s.text, ITEMS[i].canonical) != 0)
            fail_msg("'%s': %d x %d h%d f%d '%s'", ITEMS[i].text, s.d_model, s.n_layers, s.n_heads, s.d_ff, s.text);
        eng_size_resolve(&s, 4); /* an item's defaults: --n-heads, 4 d_model */
        assert_int_equal(s.n_heads, ITEMS[i].n_heads ? ITEMS[i].n_heads : 4);
        assert_int_equal(s.d_ff, ITEMS[i].d_ff ? ITEMS[i].d_ff : 4 * ITEMS[i].d_model);
    }
}

/* Lists of --sizes: text and the number of sizes (-1: refused). */
static void test_size_lists(void **state)
{
    (void)state;
    static const struct { const char *list; int n; } LISTS[] = {
        {"8x1,16x2", 2}, {"16x2", 1}, {"8x1,,16x2", -1}, {",8x1", -1}, {"8x1,", -1}, {"8x1,8x1", -1},
        {"8x1,08x1", -1}, /* the same size named twice */
        {"8x1,8x2,8x3,8x4,8x5,8x6,8x7,8x8,8x9,8x10,8x11,8x12,8x13,8x14,8x15,8x16", 16},
        {"8x1,8x2,8x3,8x4,8x5,8x6,8x7,8x8,8x9,8x10,8x11,8x12,8x13,8x14,8x15,8x16,8x17", -1}, /* past ENG_MAX_SIZES */
        {"8x1,0x2", -1},
    };
    for (size_t i = 0; i < sizeof LISTS / sizeof *LISTS; i++) {
        eng_options o = rf_options("unused");
        char buf[256], back[256];
        snprintf(buf, sizeof buf, "%s", LISTS[i].list);
        int rc = eng_parse_sizes(&o, buf);
        if ((rc == 0 ? o.n_sizes : -1) != LISTS[i].n) fail_msg("'%s': %d sizes, expected %d", LISTS[i].list,
                                                              rc == 0 ? o.n_sizes : -1, LISTS[i].n);
        if (rc) continue;
        eng_print_sizes(&o, back, sizeof back); /* --print-config's text reads back as the same list */
        assert_string_equal(back, LISTS[i].list);
    }
}

/* The fixture's copy/alibi and copy/rope runs at two sizes (size 0: 8x1, 1: 16x2). */
static int sized_results(eng_result *res)
{
    eng_result base[16];
    int nb = rf_fixture(base), n = 0;
    static const struct { const char *text; int d, l, params; } SIZES[] = {{"8x1", 8, 1, 1368}, {"16x2", 16, 2, 7552}};
    for (int z = 0; z < 2; z++)
        for (int i = 0; i < nb; i++) {
            if (base[i].task != RG_TASK_COPY) continue;
            eng_result r = base[i];
            snprintf(r.size, sizeof r.size, "%s", SIZES[z].text);
            r.d_model = SIZES[z].d;
            r.n_layers = SIZES[z].l;
            r.n_heads = 4;
            r.d_ff = 4 * SIZES[z].d;
            r.params = SIZES[z].params;
            if (z == 1) r.exact[0] = 0.5; /* the sizes' cells differ */
            res[n++] = r;
        }
    return n;
}

static void test_report_rows_per_size(void **state)
{
    (void)state;
    char out[512];
    rf_make_dir(out, sizeof out, "sized");
    eng_result res[64];
    int n = sized_results(res);
    eng_options o = rf_options(out);
    char list[] = "8x1,16x2";
    assert_int_equal(eng_parse_sizes(&o, list), 0);
    assert_int_equal(eng_report(&o, res, n, &(eng_report_meta){1.0, "test", false, 0, 0, NULL}), 0);
    /* each file: a text it holds, and how many times at least */
    static const struct { const char *file, *text; int times; } HOLDS[] = {
        {"report.md", "| alibi 8x1", 3},   /* exact match, max / median, token accuracy */
        {"report.md", "| alibi 16x2", 3},
        {"report.md", "| rope+pi 16x2", 3},
        {"report.md", "- model: sizes 8x1, 16x2 (d_model x n_layers", 1},
        {"report.md", "## Model sizes", 1},
        {"report.md", "| 8x1 | 8 | 1 | 4 | 32 | 1368 (alibi, rope) |", 1},
        {"report.md", "| 16x2 | 16 | 2 | 4 | 64 | 7552 (alibi, rope) |", 1},
        {"report.md", "\"sizes\":\t\"8x1,16x2\"", 1},
        {"report.csv", "train_len,generated,steps_to_learn" ENG_CSV_SIZE_COLUMNS "\n", 1},
        {"report.csv", ",8x1,8,1,4,32,1368\n", 4 * 10},
        {"report.csv", ",16x2,16,2,4,64,7552\n", 4 * 10},
        {"report_cells.csv", ",max,median" ENG_CSV_SIZE_COLUMNS "\n", 1},
        {"report_cells.csv", ",16x2,16,2,4,64,7552\n", 3 * 4 * 2},
        {"report.json", "\"size\":\t\"16x2\"", 10 + 3 + 3 * 4},  /* runs, rows, cells */
        {"report.json", "\"label\":\t\"rope+pi 8x1\"", 1 + 4},   /* its row and cells */
    };
    for (size_t i = 0; i < sizeof HOLDS / sizeof *HOLDS; i++) {
        char *text = rf_slurp(out, HOLDS[i].file);
        assert_non_null(text);
        int times = 0;
        for (const char *p = text; (p = strstr(p, HOLDS[i].text)); p++) times++;
        if (times < HOLDS[i].times) fail_msg("%s holds '%s' %d times, expected %d", HOLDS[i].file, HOLDS[i].text,
                                             times, HOLDS[i].times);
        free(text);
    }
    /* read back, from either file: the same runs with their sizes */
    const char *files[] = {"report.csv", "report.json"};
    for (int f = 0; f < 2; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", out, files[f]);
        eng_result *back;
        int nb, tl;
        assert_int_equal(eng_report_load(path, &back, &nb, &tl), 0);
        assert_int_equal(nb, n);
        int sized16 = 0;
        for (int i = 0; i < nb; i++) {
            sized16 += strcmp(back[i].size, "16x2") == 0 && back[i].d_model == 16 && back[i].n_layers == 2 &&
                       back[i].n_heads == 4 && back[i].d_ff == 64 && back[i].params == 7552;
        }
        assert_int_equal(sized16, n / 2);
        eng_table t;
        assert_int_equal(eng_table_build(&t, back, nb, tl), 0);
        assert_int_equal(t.n_rows, 2 * 3); /* alibi, rope, rope+pi at each size */
        free(back);
        eng_table_free(&t);
    }
}

/* report.csv files whose size columns cannot be one size: refused (exit of the loader -1, a message). */
static void test_bad_size_columns(void **state)
{
    (void)state;
    static const char *const HEAD = "task,encoding,variant,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,"
                                    "token_acc,train_len,generated,steps_to_learn";
    static const char *const LINE = "copy,alibi,base,none,1,300,0.05,1.0,8,1,1,8,0,0";
    static const struct { const char *columns, *fields; } BAD[] = {
        {",size", ",8x1"},                                      /* the numbers missing */
        {",d_model,n_layers", ",8,1"},                          /* the size missing */
        {ENG_CSV_SIZE_COLUMNS, ",8x1,16,1,4,32,0"},             /* the text against d_model */
        {ENG_CSV_SIZE_COLUMNS, ",8x1h2,8,1,4,32,0"},            /* the text's heads against n_heads */
        {ENG_CSV_SIZE_COLUMNS, ",0x1,0,1,4,32,0"},
        {ENG_CSV_SIZE_COLUMNS, ",8x1,8,1,0,32,0"},              /* no heads */
        {ENG_CSV_SIZE_COLUMNS, ",8x1,8,1,4,32,-5"},             /* a negative parameter count */
        {ENG_CSV_SIZE_COLUMNS, ",08x1,8,1,4,32,0"},             /* not the canonical text */
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/bad_size_%zu.csv", rf_tmpdir, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%s%s\n%s%s\n", HEAD, BAD[i].columns, LINE, BAD[i].fields);
        fclose(f);
        eng_result *res = NULL;
        int n, tl;
        char *msg = NULL;
        int rc = RF_CAPTURE(&msg, eng_report_load(path, &res, &n, &tl));
        if (rc != -1) fail_msg("case %zu (%s / %s) loaded", i, BAD[i].columns, BAD[i].fields);
        assert_non_null(strstr(msg, path));
        free(msg);
        free(res);
    }
    /* without the columns: a run of no named size (the report's single size) */
    char path[600];
    snprintf(path, sizeof path, "%s/old.csv", rf_tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n%s\n", HEAD, LINE);
    fclose(f);
    eng_result *res = NULL;
    int n, tl;
    assert_int_equal(eng_report_load(path, &res, &n, &tl), 0);
    assert_int_equal(n, 1);
    assert_string_equal(res[0].size, "");
    free(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_items),
        cmocka_unit_test(test_size_lists),
        cmocka_unit_test(test_report_rows_per_size),
        cmocka_unit_test(test_bad_size_columns),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
