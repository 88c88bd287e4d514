/* test_report_combine.c: train_order --combine's library half (combine.c, eng_combine_load): the report fixture
 * written as two blocks of seeds reads back as the whole (every cell's mean, interval, k/N, max and median equal to
 * the one-invocation report's), from report.json and from report.csv + report.md as results/ commits them; the wall
 * times summed; a PARTIAL block named; blocks of encodings (the union's settings, a row short of seeds named); refusals (a differing setting named with both values, a run in two blocks, a
 * report without settings) as a table run by one loop; a block's per-position counts and logs carried along, hostile
 * positions files refused. */
#include "report_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Per-position counts for every result of res[0..n) (a pattern of its seed, length slot and position that a mixed-up
 * copy would not reproduce), when fill_counts is set: the blocks of test_blocks_carry_positions_and_logs. */
static bool fill_counts;

static void add_counts(eng_result *res, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < res[i].n_lens; j++) {
            eng_result *x = &res[i];
            if (isnan(x->exact[j])) continue; /* not evaluated there: no counts */
            int G = rg_task_target_len(x->task, x->lens[j]), c = 20 + x->seed + j, by = 0;
            x->pos_count[j] = c;
            for (int p = 0; p < G; p++) { /* consistent: right[p] between c - (wrong by p) and c - (first wrong at p) */
                x->first_wrong[j][p] = (uint16_t)(p < 3 ? (x->seed + p + j) % 4 : 0);
                by += x->first_wrong[j][p];
                x->pos_right[j][p] = (uint16_t)(c - by + (x->seed + p + (int)x->ext) % (by - x->first_wrong[j][p] + 1));
            }
            x->first_wrong[j][G] = (uint16_t)(c - by);
            x->exact[j] = (double)(c - by) / c; /* the report's exact match: the all-right fraction */
        }
}

/* Writes the fixture's runs whose seed is in [lo, hi] and whose encoding is in `pos` (a comma list of names as
 * --pos takes them; NULL: every encoding) as one
 * report into rf_tmpdir/name, with lr, partial and the encoding setting `pos_config` (NAME=VALUE or NULL). */
static void write_block_of(const char *name, int lo, int hi, const char *pos, const char *pos_config, double lr,
                           bool partial, double wall)
{
    char out[512];
    rf_make_dir(out, sizeof out, name);
    eng_options o = rf_options(out);
    if (pos) {
        char list[128];
        snprintf(list, sizeof list, "%s", pos);
        assert_int_equal(eng_parse_pos(&o, list), 0);
        o.tasks[RG_TASK_COPY] = o.tasks[RG_TASK_REVERSE] = true;
    }
    if (pos_config) assert_int_equal(rg_pos_config_set_text(&o.model, pos_config), 0);
    eng_result all[16], res[16];
    int n_all = rf_fixture(all), n = 0;
    for (int i = 0; i < n_all; i++)
        if (all[i].seed >= lo && all[i].seed <= hi && (!pos || o.pos[all[i].pos])) res[n++] = all[i];
    for (int i = 0; i < n; i++) /* the settings list what the block holds (eng_combine_load checks it) */
        o.tasks[res[i].task] = o.pos[res[i].pos] = true;
    if (fill_counts) add_counts(res, n);
    o.lr = lr;
    for (int s = lo; s <= hi; s++) o.seed_list[o.n_seeds++] = s;
    eng_report_meta meta = {wall, "train_order --seeds block", partial, partial ? 3 : 0, partial ? 5 : 0, NULL};
    assert_int_equal(eng_report(&o, res, n, &meta), 0);
}

static void write_block(const char *name, int lo, int hi, double lr, bool partial, double wall)
{
    write_block_of(name, lo, hi, NULL, NULL, lr, partial, wall);
}

/* Copies the block written in `from` as results/ keeps a block of a combined report: report.csv and report.md (no
 * report.json, no runs/) in results/exp/blocks/<as>/. */
static void as_results_block(const char *from, const char *as)
{
    char dir[512], a[700], b[700];
    rf_make_dir(dir, sizeof dir, "results");
    rf_make_dir(dir, sizeof dir, "results/exp");
    rf_make_dir(dir, sizeof dir, "results/exp/blocks");
    snprintf(b, sizeof b, "results/exp/blocks/%s", as);
    rf_make_dir(dir, sizeof dir, b);
    const char *ext[2] = {"csv", "md"};
    for (int k = 0; k < 2; k++) {
        snprintf(a, sizeof a, "%s/%s/report.%s", rf_tmpdir, from, ext[k]);
        snprintf(b, sizeof b, "%s/report.%s", dir, ext[k]);
        FILE *f = fopen(a, "rb"), *g = fopen(b, "wb");
        assert_non_null(f);
        assert_non_null(g);
        char buf[4096];
        size_t m;
        while ((m = fread(buf, 1, sizeof buf, f)) > 0) assert_int_equal(fwrite(buf, 1, m, g), m);
        fclose(f);
        assert_int_equal(fclose(g), 0);
    }
}

static bool same(double x, double y) { return (isnan(x) && isnan(y)) || x == y; }

/* Every cell of the fixture's one-invocation report (seeds 1..6, written and read back from its `file`, so through
 * the same rounding of the written values) equals the combined table's. */
static void check_equal_to_whole(const eng_combined *c, const char *file)
{
    write_block("whole", 1, 6, 1e-3, false, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/whole/%s", rf_tmpdir, file);
    eng_result *whole;
    int n, tl;
    assert_int_equal(eng_report_load(path, &whole, &n, &tl), 0);
    assert_int_equal(c->n_res, n);
    eng_table a, b;
    assert_int_equal(eng_table_build(&a, whole, n, 16), 0);
    assert_int_equal(eng_table_build(&b, c->res, c->n_res, 16), 0);
    assert_int_equal(a.n_rows, b.n_rows);
    for (int r = 0; r < a.n_rows; r++)
        for (int j = 0; j < 4; j++)
            for (int ex = 0; ex < 2; ex++) {
                eng_stat x, y;
                eng_table_cell(&a, &a.rows[r], RF_LENS[j], ex, &x, NULL);
                eng_table_cell(&b, &b.rows[r], RF_LENS[j], ex, &y, NULL);
                assert_int_equal(x.n, y.n);
                assert_int_equal(x.k, y.k);
                assert_true(same(x.mean, y.mean) && same(x.lo, y.lo) && same(x.hi, y.hi) && same(x.max, y.max) &&
                            same(x.median, y.median));
            }
    eng_table_free(&a);
    eng_table_free(&b);
    free(whole);
}

static void test_blocks_combine_to_the_whole(void **state)
{
    write_block("s12", 1, 2, 1e-3, false, 100);
    write_block("s3to6", 3, 6, 1e-3, false, 250.5);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/s12/report.json", rf_tmpdir);
    snprintf(b, sizeof b, "%s/s3to6/report.csv", rf_tmpdir); /* its settings from the report.json beside it */
    const char *in[2] = {a, b};
    eng_combined c;
    assert_int_equal(eng_combine_load(in, 2, &c), 0);
    check_equal_to_whole(&c, "report.json");
    assert_int_equal(c.n_seeds, 6);
    for (int s = 0; s < 6; s++) assert_int_equal(c.seeds[s], s + 1);
    assert_int_equal(c.runs, 11); /* 6 alibi, 3 rope, 2 none; rope+pi is a scaling of a run, not a run */
    assert_true(fabs(c.wall_seconds - 350.5) < 1e-9);
    assert_false(c.partial);
    assert_non_null(strstr(c.sources, "**11 training runs** (seeds 1,2,3,4,5,6) from 2 reports"));
    assert_non_null(strstr(c.sources, "s3to6/report.csv`: 5 training runs, seeds 3,4,5,6"));
    assert_non_null(strstr(c.settings, "\"lr\":0.001"));
    eng_combined_free(&c);
}

/* The blocks as results/ keeps them: blocks/<name>/report.csv with its report.md beside it (Settings block,
 * provenance, wall time, PARTIAL title) and no report.json. */
static void test_results_layout_and_partial(void **state)
{
    write_block("p12", 1, 2, 1e-3, false, 40);
    write_block("p3to6", 3, 6, 1e-3, true, 60);
    as_results_block("p12", "s12");
    as_results_block("p3to6", "s3to6-partial");
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/results/exp/blocks/s12/report.csv", rf_tmpdir);
    snprintf(b, sizeof b, "%s/results/exp/blocks/s3to6-partial/report.csv", rf_tmpdir);
    const char *in[2] = {a, b};
    eng_combined c;
    assert_int_equal(eng_combine_load(in, 2, &c), 0);
    check_equal_to_whole(&c, "report.csv");
    assert_true(fabs(c.wall_seconds - 100) < 1e-6);
    assert_true(c.partial);
    assert_non_null(strstr(c.sources, "s3to6-partial/report.csv`: 5 training runs, seeds 3,4,5,6, tasks copy"));
    assert_non_null(strstr(c.sources, "**PARTIAL**"));
    eng_combined_free(&c);
}

/* make experiment-small's encodings, then the others at the same seeds (the grid split by encodings): the union
 * reads back as the whole, its settings list every encoding; a row with fewer seeds than the union is named. */
static void test_blocks_of_encodings(void **state)
{
    write_block_of("e_alibi", 1, 6, "alibi", "t5_max_distance=33", 1e-3, false, 10);
    write_block_of("e_rest", 1, 6, "none,rope,t5", "t5_max_distance=33", 1e-3, false, 20);
    write_block_of("e_rope12", 1, 2, "rope", NULL, 1e-3, false, 5);
    char a[600], b[600], r[600];
    snprintf(a, sizeof a, "%s/e_alibi/report.json", rf_tmpdir);
    snprintf(b, sizeof b, "%s/e_rest/report.csv", rf_tmpdir);
    snprintf(r, sizeof r, "%s/e_rope12/report.json", rf_tmpdir);
    const char *in[2] = {a, b};
    eng_combined c;
    assert_int_equal(eng_combine_load(in, 2, &c), 0);
    check_equal_to_whole(&c, "report.json");
    assert_int_equal(c.runs, 11);
    assert_non_null(strstr(c.settings, "\"pos\":\"alibi,none,t5,rope\""));
    assert_non_null(strstr(c.settings, "t5_max_distance=33"));
    assert_non_null(strstr(c.sources, "e_rest/report.csv`: 5 training runs, seeds 1,2,3, tasks copy,reverse, "
                                      "encodings none,t5,rope, commit "));
    /* the fixture's own rows are short: rope has seeds 1..3, none two seeds */
    assert_non_null(strstr(c.sources, "- the row copy rope holds 3 of the 6 seeds"));
    assert_non_null(strstr(c.sources, "- the row reverse none holds 2 of the 6 seeds"));
    assert_null(strstr(c.sources, "the row copy alibi"));
    eng_combined_free(&c);
    const char *in2[2] = {a, r}; /* alibi at six seeds, rope at two */
    assert_int_equal(eng_combine_load(in2, 2, &c), 0);
    assert_non_null(strstr(c.sources, "- the row copy rope holds 2 of the 6 seeds"));
    assert_null(strstr(c.sources, "the row copy alibi"));
    eng_combined_free(&c);
    /* alibi ran copy only and none reverse only: the union names two rows no block ran */
    write_block_of("e_none", 1, 6, "none", NULL, 1e-3, false, 5);
    snprintf(b, sizeof b, "%s/e_none/report.json", rf_tmpdir);
    const char *in3[2] = {a, b};
    assert_int_equal(eng_combine_load(in3, 2, &c), 0);
    assert_non_null(strstr(c.sources, "- no block ran copy none"));
    assert_non_null(strstr(c.sources, "- no block ran reverse alibi"));
    eng_combined_free(&c);
}

/* Rewrites every `from` in rf_tmpdir/name/report.json to `to` (a crafted block). */
static void craft(const char *name, const char *from, const char *to)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s/report.json", rf_tmpdir, name);
    char *t = malloc(1 << 22), *u = malloc(1 << 22);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(t, 1, (1 << 22) - 1, f), k = 0;
    fclose(f);
    t[n] = 0;
    for (const char *p = t; *p;)
        if (strncmp(p, from, strlen(from)) == 0) { memcpy(u + k, to, strlen(to)); k += strlen(to); p += strlen(from); }
        else u[k++] = *p++;
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(u, 1, k, f), k);
    assert_int_equal(fclose(f), 0);
    free(t);
    free(u);
}

static void test_refusals(void **state)
{
    write_block("r12", 1, 2, 1e-3, false, 1);
    write_block("r12lr", 1, 2, 3e-3, false, 1);
    write_block("r3lr", 3, 3, 3e-3, false, 1);
    write_block_of("t5md33", 1, 2, "alibi,t5", "t5_max_distance=33", 1e-3, false, 1);
    write_block_of("t5md128", 3, 4, "rope,t5", "t5_max_distance=128", 1e-3, false, 1);
    write_block_of("alibi56", 5, 6, "alibi", NULL, 1e-3, false, 1);
    write_block_of("noeq", 5, 6, "alibi,t5", "t5_max_distance=128", 1e-3, false, 1);
    craft("noeq", "t5_max_distance=128", "t5_max_distance"); /* an item without '=' (read past its end once) */
    write_block_of("liar", 5, 6, "alibi", NULL, 1e-3, false, 1);
    craft("liar", "\"pos\":\t\"alibi\"", "\"pos\":\t\"rope\""); /* settings that do not list its runs */
    char bare[512], p[10][600];
    rf_make_dir(bare, sizeof bare, "bare"); /* a report.csv alone: no json, settings.json or md */
    snprintf(p[0], sizeof p[0], "%s/r12/report.json", rf_tmpdir);
    snprintf(p[1], sizeof p[1], "%s/r3lr/report.json", rf_tmpdir);
    snprintf(p[2], sizeof p[2], "%s/r12lr/report.csv", rf_tmpdir);
    snprintf(p[3], sizeof p[3], "%s/report.csv", bare);
    snprintf(p[4], sizeof p[4], "%s/t5md33/report.json", rf_tmpdir);
    snprintf(p[5], sizeof p[5], "%s/t5md128/report.json", rf_tmpdir);
    snprintf(p[6], sizeof p[6], "%s/alibi56/report.json", rf_tmpdir);
    snprintf(p[7], sizeof p[7], "%s/noeq/report.json", rf_tmpdir);
    snprintf(p[8], sizeof p[8], "%s/liar/report.json", rf_tmpdir);
    snprintf(p[9], sizeof p[9], "%s/r3lr", rf_tmpdir); /* an output folder, not its report */
    char from[600];
    snprintf(from, sizeof from, "%s/r12/report.csv", rf_tmpdir);
    FILE *f = fopen(from, "rb"), *g = fopen(p[3], "wb");
    assert_non_null(f);
    assert_non_null(g);
    int ch;
    while ((ch = fgetc(f)) != EOF) fputc(ch, g);
    fclose(f);
    assert_int_equal(fclose(g), 0);
    const struct { int a, b, c; const char *want[3]; } cases[] = {
        {0, 1, -1, {"differ in the setting 'lr' (0.001 against 0.003)", "r12/report.json", "r3lr/report.json"}},
        {0, 0, -1, {"the run copy alibi seed 1 is in", "a seed may be in one block only", "r12/report.json"}},
        {0, 2, -1, {"differ in the setting 'lr'", "r12lr/report.csv", "only the seeds"}},
        {0, 3, -1, {"bare/report.csv: no settings found", "read nowhere", "Settings block of its report.md"}},
        {4, 5, -1, {"differ in the encoding setting t5_max_distance (33 against 128)", "t5md33/report.json",
                    "t5md128/report.json"}},
        /* the conflict is between the second and third blocks: the first (no t5) is not named */
        {6, 5, 4, {"t5md128/report.json and ", "t5md33/report.json differ in the encoding setting t5_max_distance",
                   "(128 against 33)"}},
        {5, 7, -1, {"noeq/report.json: the setting 'pos_config' holds the item 't5_max_distance'", "not NAME=VALUE",
                    "noeq"}},
        {6, 8, -1, {"liar/report.json holds a run of copy alibi", "its settings list the encodings rope", "liar"}},
        {0, 9, -1, {"r3lr is a folder", "give its report.csv or report.json", "--combine"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *in[3] = {p[cases[k].a], p[cases[k].b], cases[k].c >= 0 ? p[cases[k].c] : NULL};
        eng_combined c;
        char *msg = NULL;
        int rc = RF_CAPTURE(&msg, eng_combine_load(in, cases[k].c >= 0 ? 3 : 2, &c));
        assert_int_equal(rc, -1);
        assert_null(c.res);
        for (int w = 0; w < 3; w++)
            if (!strstr(msg, cases[k].want[w])) fail_msg("case %zu: no '%s' in:\n%s", k, cases[k].want[w], msg);
        free(msg);
    }
}

/* A block's report_positions.csv and runs/ come along: every result's counts read back as written (the combined
 * report_positions.csv as the blocks' put together), the logs of the block that has a runs/ folder drawn over
 * training, and both named in the sources; then hostile positions files, each refused naming the file and line. */
static void test_blocks_carry_positions_and_logs(void **state)
{
    fill_counts = true;
    write_block("c12", 1, 2, 1e-3, false, 1);
    write_block("c3to6", 3, 6, 1e-3, false, 1);
    fill_counts = false;
    eng_result want[16];
    int n_want = rf_fixture(want);
    add_counts(want, n_want);
    char runs[600], run[128], log[900], a[600], b[600];
    snprintf(runs, sizeof runs, "%s/c3to6/runs", rf_tmpdir); /* one run's over-training log in the second block */
    assert_int_equal(mkdir(runs, 0755), 0);
    snprintf(log, sizeof log, "%s/%s", runs, eng_run_name(RG_TASK_COPY, RG_POS_ALIBI, ENG_VAR_BASE, NULL, 3, run, sizeof run));
    assert_int_equal(mkdir(log, 0755), 0);
    strcat(log, "/extrap.csv");
    FILE *f = fopen(log, "w");
    assert_non_null(f);
    fputs("step,n,exact_match,token_acc\n100,8,0.5,0.7\n100,24,0.1,0.3\n200,8,1,1\n200,24,0.2,0.4\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(a, sizeof a, "%s/c12/report.csv", rf_tmpdir);
    snprintf(b, sizeof b, "%s/c3to6/report.json", rf_tmpdir);
    const char *in[2] = {a, b};
    eng_combined c;
    assert_int_equal(eng_combine_load(in, 2, &c), 0);
    assert_int_equal(c.n_res, n_want);
    for (int i = 0; i < c.n_res; i++) {
        const eng_result *x = &c.res[i], *w = NULL;
        for (int k = 0; k < n_want && !w; k++)
            if (want[k].task == x->task && want[k].pos == x->pos && want[k].ext == x->ext && want[k].seed == x->seed)
                w = &want[k];
        assert_non_null(w);
        assert_memory_equal(x->pos_count, w->pos_count, sizeof w->pos_count);
        assert_memory_equal(x->pos_right, w->pos_right, sizeof w->pos_right);
        assert_memory_equal(x->first_wrong, w->first_wrong, sizeof w->first_wrong);
        assert_true(x->seed >= 3 ? x->runs_dir && strcmp(x->runs_dir, runs) == 0 : x->runs_dir && !x->runs_dir[0]);
    }
    assert_non_null(strstr(c.sources, "c12/report_positions.csv`"));
    assert_non_null(strstr(c.sources, "c3to6/report_positions.csv`"));
    assert_non_null(strstr(c.sources, "its runs' logs (training loss, extrapolation over training) from `"));
    char out[512];
    rf_make_dir(out, sizeof out, "c_all");
    eng_options o = rf_options(out);
    o.tasks[RG_TASK_COPY] = o.tasks[RG_TASK_REVERSE] = true;
    o.pos[RG_POS_ALIBI] = o.pos[RG_POS_ROPE] = o.pos[RG_POS_NONE] = true;
    eng_report_meta meta = {1, "train_order --combine", false, 0, 0, c.sources};
    assert_int_equal(eng_report(&o, c.res, c.n_res, &meta), 0);
    eng_combined_free(&c);
    char c12[600];
    snprintf(c12, sizeof c12, "%s/c12", rf_tmpdir);
    char *all = rf_slurp(out, "report_positions.csv"), *p12 = rf_slurp(c12, "report_positions.csv");
    assert_non_null(all);
    assert_non_null(p12);
    int lines = 0;
    for (char *line = p12, *end; (end = strchr(line, '\n')); line = end + 1, lines++) { /* each of the block's lines */
        *end = 0;
        if (!strstr(all, line)) fail_msg("the combined report_positions.csv lacks '%s'", line);
    }
    assert_true(lines > 100);
    if (rf_have_gnuplot()) {
        assert_true(rf_complete_svg(out, "positions_copy.svg"));
        char *dat = rf_slurp(out, "over_training_copy.dat");
        assert_non_null(dat);
        assert_non_null(strstr(dat, "alibi"));
        free(dat);
    }
    free(all);
    free(p12);

    /* hostile positions files beside the first block, each a header and lines naming its runs */
    const char *H = "task,encoding,variant,rope_ext,seed,n,position,samples,right,first_wrong\n";
    const struct { const char *text, *want; } cases[] = {
        {"task,encoding\n", "line 1: not the header"},
        {"%scopy,alibi,base,none,1,8,1,10,11,0\n", "line 2: the counts do not fit"},
        {"%scopy,alibi,base,none,99,8,1,10,5,0\n", "line 2: no run copy alibi base none seed 99"},
        {"%scopy,alibi,base,none,1,8,10,10,5,0\n", "line 2: n = 8, position 10: not a test length"},
        {"%scopy,alibi,base,none,1,9,1,10,5,0\n", "line 2: n = 9, position 1: not a test length"},
        {"%scopy,alibi,base,none,1,8,1,10,5,0\ncopy,alibi,base,none,1,8,1,10,5,0\n", "line 3: a second line"},
        {"%scopy,alibi,base,none,1,8,1,10,5,0\ncopy,alibi,base,none,1,8,2,11,5,0\n", "line 3: the counts do not fit"},
        {"%scopy,alibi,base,none,1,8,1,10,5,0\n", "copy alibi seed 1, n = 8: no line for position 2"},
        {"%scopy,alibi,base,none,1,8,1,10,5\n", "line 2: not 10 comma-separated fields"},
        {"%scopy,alibi,base,none,1,8,1,10,5,0,0\n", "line 2: not 10 comma-separated fields"},
        {"%scopy,alibi,base,none,1,8,1,10,-5,0\n", "line 2: a field is not a whole number"},
        {"%scopy,alibi,base,none,1,8,1,1e1,5,0\n", "line 2: a field is not a whole number"},
        {"", "empty (no header)"},
        {"%scopy,alibi,base,none,1,8,1,10,5,0\x1b[2J\n", "line 2: a control character"},
    };
    char pos_file[700], keep[720];
    snprintf(pos_file, sizeof pos_file, "%s/c12/report_positions.csv", rf_tmpdir);
    snprintf(keep, sizeof keep, "%s.good", pos_file);
    assert_int_equal(rename(pos_file, keep), 0); /* kept for the edits below */
    assert_int_equal(mkfifo(pos_file, 0600), 0); /* a FIFO without a writer: read as empty, never waited on */
    char *fifo_msg = NULL;
    assert_int_equal(RF_CAPTURE(&fifo_msg, eng_combine_load(in, 2, &c)), -1);
    assert_non_null(strstr(fifo_msg, "c12/report_positions.csv: empty (no header)"));
    free(fifo_msg);
    assert_int_equal(unlink(pos_file), 0);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        f = fopen(pos_file, "w");
        assert_non_null(f);
        fprintf(f, cases[k].text, H);
        assert_int_equal(fclose(f), 0);
        char *msg = NULL;
        int rc = RF_CAPTURE(&msg, eng_combine_load(in, 2, &c));
        assert_int_equal(rc, -1);
        assert_null(c.res);
        if (!strstr(msg, cases[k].want) || !strstr(msg, "c12/report_positions.csv"))
            fail_msg("case %zu: no '%s' (and the file) in:\n%s", k, cases[k].want, msg);
        free(msg);
    }
    /* the valid file with one count changed: contradicts the others or the report's exact match */
    char *good = rf_slurp(c12, "report_positions.csv.good");
    assert_non_null(good);
    const char *at = strstr(good, "\ncopy,alibi,base,none,1,8,1,");
    assert_non_null(at);
    const char *eol = strchr(at + 1, '\n');
    int c0, r0, f0;
    assert_int_equal(sscanf(at + 28, "%d,%d,%d", &c0, &r0, &f0), 3); /* after "\ncopy,alibi,base,none,1,8,1," */
    assert_true(f0 > 0 && r0 < c0);
    const struct { int right, first; const char *want; } edits[] = {
        {c0, f0, "copy alibi seed 1, n = 8: a position's right count contradicts"}, /* f0 > 0 of them wrong there */
        {r0, f0 - 1, "copy alibi seed 1, n = 8: the samples with no wrong token do not give the report's exact"},
    };
    for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
        f = fopen(pos_file, "w");
        assert_non_null(f);
        fprintf(f, "%.*s\ncopy,alibi,base,none,1,8,1,%d,%d,%d%s", (int)(at - good), good, c0, edits[k].right,
                edits[k].first, eol);
        assert_int_equal(fclose(f), 0);
        char *msg = NULL;
        int rc = RF_CAPTURE(&msg, eng_combine_load(in, 2, &c));
        assert_int_equal(rc, -1);
        if (!strstr(msg, edits[k].want)) fail_msg("edit %zu: no '%s' in:\n%s", k, edits[k].want, msg);
        free(msg);
    }
    free(good);
    assert_int_equal(unlink(pos_file), 0); /* no positions file: the block simply has no counts */
    assert_int_equal(eng_combine_load(in, 2, &c), 0);
    for (int i = 0; i < c.n_res; i++) assert_int_equal(c.res[i].pos_count[0] > 0, c.res[i].seed >= 3);
    eng_combined_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_combine_to_the_whole),
        cmocka_unit_test(test_results_layout_and_partial),
        cmocka_unit_test(test_blocks_of_encodings),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_blocks_carry_positions_and_logs),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
