/* test_capabilities.c: the engine asks encodings and tasks through their descriptors' capabilities, never by id.
 * - No file of src/engine names a built-in encoding's or task's id (the rg_pos_kind and ordering-task enumerators),
 *   a built-in descriptor, or a registered name or setting as a string literal (the scanner is checked on a planted
 *   line first, so that the test can fail).
 * - An encoding registered here, declared rotary (RG_POS_ROTARY) and reusing RoPE's op, gets the theta500k and
 *   bf16angles variants, the --rope-scaling rows, and a colour and marker of its own that no built-in has; an
 *   encoding with a max_distance_setting gets the task's fair distance and the t5max128 variant.
 * - A task registered here with another geometry (the answer x x EOS: 2n+1 tokens after a prompt of n+2) gets its
 *   own longest training distance (3n+1), T5's max_distance from it, and the per-position view of its 2n+1 answer
 *   positions; a run of both through rg_engine_main (in a forked child) shows them in the report's files. */
#include "report_fixture.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine/engine.h"
#include "nn/nn.h"
#include "task/grid.h"
#include "task/lm.h"
#include "task/tricks.h"

/* ------------------------------------------------------------------ a rotary encoding and a task of the test's own */

/* xrope: RoPE's interleaved op under another name, declared rotary, without a style of its own. */
static const rg_pos_encoding xrope = {.name = "xrope", .doc = "RoPE's rotation, registered by the test",
                                      .rope_layout = "interleaved", .flags = RG_POS_ROTARY};
/* xbias: a bias-free encoding with a distance cap of its own (as T5's), the test's style. */
static const rg_pos_setting XB_SETTINGS[] = {
    {"xbias_max_distance", RG_POS_SETTING_INT, 64, 2, 100000, "the test's distance cap"}};
static const rg_pos_encoding xbias = {.name = "xbias", .doc = "no bias; a distance cap", .settings = XB_SETTINGS,
                                      .n_settings = 1, .max_distance_setting = "xbias_max_distance",
                                      .plot_colour = "#123456", .plot_marker = 3};

/* copy2: prompt BOS x SEP (n + 2 tokens), answer x x EOS (2n + 1 tokens). */
static int copy2_prompt_len(int n) { return n + 2; }
static int copy2_target_len(int n) { return 2 * n + 1; }
static rg_status copy2_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    prompt[0] = RG_TOK_BOS;
    for (int j = 0; j < n; j++) prompt[1 + j] = target[j] = target[n + j] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, 4);
    prompt[n + 1] = RG_TOK_SEP;
    target[2 * n] = RG_TOK_EOS;
    return RG_OK;
}
static const rg_task_desc copy2 = {.name = "copy2", .summary = "y = x x", .vocab_size = RG_TASK_VOCAB,
                                   .prompt_len = copy2_prompt_len, .target_len = copy2_target_len,
                                   .sample = copy2_sample};

/* badtok: copy2 whose sample hook writes a token past its vocabulary (a task's bug). */
static rg_status badtok_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    copy2_sample(t, rng, n, prompt, target);
    target[0] = RG_TASK_VOCAB;
    return RG_OK;
}
static const rg_task_desc badtok = {.name = "badtok", .summary = "a bug", .vocab_size = RG_TASK_VOCAB,
                                    .prompt_len = copy2_prompt_len, .target_len = copy2_target_len,
                                    .sample = badtok_sample};

static rg_pos_kind xrope_id, xbias_id;
static rg_task copy2_id;

static int setup(void **state)
{
    (void)rg_pos_enc_rope; /* the op xrope borrows */
    static rg_pos_encoding x;
    x = xrope;
    x.prepare = rg_pos_enc_rope.prepare;
    x.rotate_qk = rg_pos_enc_rope.rotate_qk;
    if (rg_task_register_tricks() || rg_lm_register() || rg_task_register_grids()) return -1;
    if (rg_pos_register(&x, &xrope_id) || rg_pos_register(&xbias, &xbias_id)) return -1;
    if (rg_task_register(&copy2, &copy2_id) || rg_task_register(&badtok, NULL)) return -1;
    return rf_setup(state);
}

/* ------------------------------------------------------------------ no built-in id or name in the engine */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 18];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

/* Blanks out the comments of C text in place (string literals kept; a comment only names things, the engine's
 * questions are in its code). */
static void strip_comments(char *s)
{
    for (char *p = s; *p; p++) {
        if (*p == '"') { /* a literal: to its closing quote */
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) return;
        } else if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            char *stop = e ? e + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n') *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++) *p = ' ';
            if (!*p) return;
        } else if (*p == '\'' && p[1]) { /* a character constant: '"' is no literal */
            p += p[1] == '\\' ? 3 : 2;
        }
    }
}

static bool word_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

/* Whether text holds word as a whole identifier (prefix: as an identifier's start). */
static bool has_word(const char *text, const char *word, bool prefix)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        if ((p == text || !word_char(p[-1])) && (prefix || !word_char(p[n]))) return true;
    return false;
}

/* The enumerators of the enum of header `path` that holds `first` (one per line, up to its closing brace). */
static int enumerators(const char *path, const char *first, char names[][48], int cap)
{
    char *h = slurp(path);
    assert_non_null(h);
    char *p = strstr(h, first), *end = p ? strstr(p, "\n}") : NULL; /* (comments may hold braces) */
    assert_non_null(end);
    int n = 0;
    while (p && p < end && n < cap) {
        size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (len > 0 && len < 48) { memcpy(names[n], p, len); names[n++][len] = 0; }
        p = strchr(p, '\n');
        if (p) p += strspn(p, " \n");
    }
    free(h);
    return n;
}

/* The forbidden words: built-in ids, built-in descriptors, and every registered name and setting as a literal. */
typedef struct { char word[72]; bool prefix; } forbidden;
static int forbidden_words(forbidden *f, int cap)
{
    char ids[64][48];
    int n = 0, k = enumerators("src/nn/pos.h", "RG_POS_NONE", ids, 64);
    assert_true(k >= 19);
    for (int i = 0; i < k && n < cap; i++) snprintf(f[n++].word, sizeof f->word, "%.47s", ids[i]);
    k = enumerators("src/task/task.h", "RG_TASK_COPY", ids, 64);
    assert_int_equal(k, 4);
    for (int i = 0; i < k && n < cap; i++) snprintf(f[n++].word, sizeof f->word, "%.47s", ids[i]);
    f[n++] = (forbidden){"rg_pos_enc_", true};
    f[n++] = (forbidden){"rg_task_desc_", true};
    for (int p = 0; p < rg_pos_count() && n + RG_POS_SETTINGS_MAX < cap; p++) {
        const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)p);
        /* "none" is also --rope-scaling's word for no scaling, which the engine parses */
        if (strcmp(e->name, "none")) snprintf(f[n++].word, sizeof f->word, "\"%.60s\"", e->name);
        for (int s = 0; s < e->n_settings; s++) snprintf(f[n++].word, sizeof f->word, "\"%.60s\"", e->settings[s].name);
    }
    for (int t = 0; t < rg_task_count() && n < cap; t++) snprintf(f[n++].word, sizeof f->word, "\"%.60s\"", rg_task_name(t));
    return n;
}

/* The first forbidden word text holds from f[*from] on (*from then past it), or NULL. */
static const char *next_forbidden(const char *text, const forbidden *f, int n, int *from)
{
    for (int i = *from; i < n; i++)
        if (f[i].word[0] == '"' ? strstr(text, f[i].word) != NULL : has_word(text, f[i].word, f[i].prefix)) {
            *from = i + 1;
            return f[i].word;
        }
    *from = n;
    return NULL;
}

static const char *first_forbidden(const char *text, const forbidden *f, int n)
{
    int from = 0;
    return next_forbidden(text, f, n, &from);
}

/* Every .c and .h file under dir (its subfolders too: the engine's layers): counts the files and the names of
 * built-ins in their code. */
static void scan_engine_folder(const char *dir, const forbidden *f, int n, int *files, int *bad)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (e->d_name[0] != '.' && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            scan_engine_folder(path, f, n, files, bad);
            continue;
        }
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h"))) continue;
        char *text = slurp(path);
        assert_non_null(text);
        strip_comments(text);
        int from = 0;
        for (const char *hit; (hit = next_forbidden(text, f, n, &from)); (*bad)++)
            print_error("%s names the built-in %s: ask the descriptor's capability instead\n", path, hit);
        free(text);
        (*files)++;
    }
    closedir(d);
}

static void test_engine_asks_no_builtin(void **state)
{
    static forbidden f[512];
    int n = forbidden_words(f, 512);
    /* the scanner finds what it must (so this test can fail), and not a longer name */
    assert_non_null(first_forbidden("if (pos == RG_POS_ROPE) x();", f, n));
    assert_non_null(first_forbidden("d == &rg_task_desc_lm", f, n));
    assert_non_null(first_forbidden("rg_pos_config_get(c, \"t5_max_distance\")", f, n));
    assert_non_null(first_forbidden("task < RG_TASK_BUILTIN", f, n));
    assert_null(first_forbidden("RG_POS_ROTARY RG_POS_MAX RG_TASK_MAX rg_task_descx \"rope_scaling\"", f, n));
    char code[] = "/* \"rope\" RG_POS_T5 */ x = '\"'; s = \"/* RG_POS_T5 */\"; // RG_POS_XL\ny = RG_POS_NONE;";
    strip_comments(code);
    assert_null(strstr(code, "\"rope\""));
    assert_null(strstr(code, "RG_POS_XL"));
    assert_non_null(strstr(code, "\"/* RG_POS_T5 */\"")); /* a literal is code */
    assert_non_null(first_forbidden(code, f, n));
    int files = 0, bad = 0;
    scan_engine_folder("src/engine", f, n, &files, &bad);
    assert_true(files >= 20);
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------------ capabilities of registered encodings */

static void test_registered_rotary_encoding(void **state)
{
    assert_true(eng_pos_rotary(xrope_id));
    assert_true(eng_variant_applies(ENG_VAR_THETA500K, xrope_id));
    assert_true(eng_variant_applies(ENG_VAR_BF16ANGLES, xrope_id));
    assert_true(eng_variant_applies(ENG_VAR_RAND, xrope_id));
    assert_false(eng_variant_applies(ENG_VAR_T5MAX128, xrope_id));
    assert_false(eng_pos_rotary(xbias_id));
    assert_true(eng_variant_applies(ENG_VAR_T5MAX128, xbias_id));
    /* the built-ins answer the same way through their descriptors */
    static const struct { rg_pos_kind pos; bool rotary, rand, capped; } B[] = {
        {RG_POS_ROPE, true, true, false},  {RG_POS_ROPE_HALF, true, true, false}, {RG_POS_MROPE, true, true, false},
        {RG_POS_T5, false, true, true},    {RG_POS_NONE, false, false, false},    {RG_POS_ROPE_2D, false, true, false},
        {RG_POS_ALIBI, false, true, false}};
    for (size_t i = 0; i < sizeof B / sizeof *B; i++) {
        assert_int_equal(eng_pos_rotary(B[i].pos), B[i].rotary);
        assert_int_equal(eng_variant_applies(ENG_VAR_THETA500K, B[i].pos), B[i].rotary);
        assert_int_equal(eng_variant_applies(ENG_VAR_RAND, B[i].pos), B[i].rand);
        assert_int_equal(eng_variant_applies(ENG_VAR_T5MAX128, B[i].pos), B[i].capped);
    }
    assert_true(eng_pos_bounded(RG_POS_LEARNED));
    assert_false(eng_pos_bounded(xrope_id));
}

static void test_registered_styles(void **state)
{
    assert_string_equal(eng_plot_colour(xbias_id), "#123456");
    assert_int_equal(eng_plot_marker(xbias_id), 3);
    const char *mine = eng_plot_colour(xrope_id);
    for (int p = 0; p < rg_pos_count(); p++) {
        if (p == (int)xrope_id) continue;
        if (!strcmp(eng_plot_colour((rg_pos_kind)p), mine))
            fail_msg("xrope is drawn in %s's colour %s", rg_pos_name((rg_pos_kind)p), mine);
    }
    assert_true(eng_plot_marker(xrope_id) >= 1 && eng_plot_marker(xrope_id) <= 15);
    /* a style that is not "#RRGGBB" with a marker 1..15 is refused at registration */
    static const rg_pos_encoding bad = {.name = "badstyle", .plot_colour = "red", .plot_marker = 3};
    assert_int_equal(rg_pos_register(&bad, NULL), RG_ERR_ARG);
    static const rg_pos_encoding bad_cap = {.name = "badcap", .max_distance_setting = "no_such_setting"};
    assert_int_equal(rg_pos_register(&bad_cap, NULL), RG_ERR_ARG);
}

/* ------------------------------------------------------------------ a task's geometry */

static void test_task_geometry(void **state)
{
    static const struct { const char *task; int n, distance; unsigned views; } G[] = {
        {"copy", 16, 33, RG_TASK_VIEW_EXACT | RG_TASK_VIEW_POSITIONS},
        {"sort", 4, 9, RG_TASK_VIEW_EXACT | RG_TASK_VIEW_POSITIONS},
        {"copy2", 16, 49, RG_TASK_VIEW_EXACT | RG_TASK_VIEW_POSITIONS},
        {"copy2", 5, 16, RG_TASK_VIEW_EXACT | RG_TASK_VIEW_POSITIONS},
        {"lm", 32, 31, RG_TASK_VIEW_PERPLEXITY},
        {"grid_copy", 144, -2, RG_TASK_VIEW_EXACT | RG_TASK_VIEW_GRID}, /* -2: total_len - 2 */
    };
    for (size_t i = 0; i < sizeof G / sizeof *G; i++) {
        rg_task t;
        assert_int_equal(rg_task_parse(G[i].task, &t), RG_OK);
        int want = G[i].distance == -2 ? rg_task_total_len(t, G[i].n) - 2 : G[i].distance;
        if (rg_task_longest_distance(t, G[i].n) != want)
            fail_msg("%s n=%d: longest distance %d, not %d", G[i].task, G[i].n, rg_task_longest_distance(t, G[i].n),
                     want);
        assert_int_equal(rg_task_views(t), G[i].views);
    }
    /* position coupling shares ids between x and y: its distances are shorter than the sequence */
    rg_task cc;
    assert_int_equal(rg_task_parse("copy_coupled", &cc), RG_OK);
    assert_true(rg_task_longest_distance(cc, 16) < rg_task_total_len(cc, 16) - 2);
    /* T5's fair max_distance follows the task; an encoding's own cap too; its floor is the encoding's validate */
    eng_options o = rf_options(rf_tmpdir);
    o.train_len = 16;
    o.fair_max_distance = true;
    eng_set_fair_max_distance(&o, copy2_id, RG_POS_T5);
    assert_int_equal((int)rg_pos_config_get(&o.model, "t5_max_distance"), 49);
    eng_set_fair_max_distance(&o, RG_TASK_COPY, RG_POS_T5);
    assert_int_equal((int)rg_pos_config_get(&o.model, "t5_max_distance"), 33);
    eng_set_fair_max_distance(&o, copy2_id, xbias_id);
    assert_int_equal((int)rg_pos_config_get(&o.model, "xbias_max_distance"), 49);
    assert_int_equal(eng_fair_max_distance(&o.model, RG_POS_T5, 9), 17); /* above num_buckets / 2 = 16 */
    assert_int_equal(eng_fair_max_distance(&o.model, RG_POS_ALIBI, 9), -1);
}

/* ------------------------------------------------------------------ both through the engine */

/* rg_engine_main with the words of cmd (argv[0] first) in a forked child; its exit status, or -1. */
static int engine_main(char *cmd)
{
    char *argv[64];
    int argc = 0;
    for (char *tok = strtok(cmd, " "); tok && argc < 63; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        _exit(rg_engine_main(argc, argv));
    }
    int st;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int engine_run(const char *task, const char *out, const char *extra)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "test_capabilities --task %s --pos xrope,t5,xbias --rope-scaling yarn --seeds 1 "
             "--steps 4 --batch 4 --d-model 8 --n-heads 2 --n-layers 1 --d-ff 16 --train-len 3 --test-lens 3,5 "
             "--eval-every 0 --extrap-every 0 --ckpt-every 4 --jobs 1 --quiet --out %s %s", task, out, extra);
    return engine_main(cmd);
}

/* A task brings its default training size: --task grid_copy alone is a valid command (4x4), and so is a task
 * without one (the program's 16); two tasks of different defaults need --train-len. */
static void test_task_default_size(void **state)
{
    static const struct { const char *args; int rc; } C[] = {
        {"--task grid_copy --pos rope-2d", 0}, {"--task grid_copy,grid_lookup --pos rope-2d", 0},
        {"--task copy2 --pos rope", 0},      {"--task grid_copy --train-len 16 --pos rope-2d", 2},
        {"--task frames,grid_copy --pos rope-2d", 2}};
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        char cmd[512], *msg;
        snprintf(cmd, sizeof cmd, "test_capabilities %s --print-config", C[i].args);
        int rc = RF_CAPTURE(&msg, engine_main(cmd));
        if (rc != C[i].rc) fail_msg("%s: exit %d, not %d: %s", C[i].args, rc, C[i].rc, msg);
        free(msg);
    }
}

static void test_engine_run(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "run");
    assert_int_equal(engine_run("copy2", out, "--overwrite --variants base,theta500k"), 0);
    char *csv = rf_slurp(out, "report.csv"), *md = rf_slurp(out, "report.md"), *js = rf_slurp(out, "report.json");
    assert_non_null(csv);
    assert_non_null(md);
    assert_non_null(js);
    assert_non_null(strstr(csv, "copy2,xrope,base,yarn,")); /* the rotary encoding's --rope-scaling rows */
    assert_null(strstr(csv, "copy2,xbias,base,yarn,"));
    assert_non_null(strstr(csv, "copy2,xrope,theta500k,none,")); /* and the theta variant, with its scaling rows */
    assert_non_null(strstr(csv, "copy2,xrope,theta500k,yarn,"));
    assert_null(strstr(csv, ",t5,theta500k,"));
    assert_non_null(strstr(md, "the longest training distance is 10, the first to the last fed position of a training sequence of copy2 at L = 3)"));
    assert_non_null(strstr(md, "max_distance 17")); /* T5: the fair value of 10 (at least num_buckets / 2 + 1) */
    /* the RoPE scaling factor in the task's own sequence length T(n) = 3n + 3, T(3) = 12 (3 + 2 + 7 tokens) */
    assert_non_null(strstr(md, "factor s = (3n+3)/12 and original_max_position_embeddings 12; at n <= 3 s = 1"));
    assert_non_null(strstr(md, "plots positions_<task>.svg"));
    /* no data file read (a registered task's sets are generated): the configuration line says so */
    assert_non_null(strstr(md, "- evaluation: greedy decoding with the KV cache (every test set generated"));
    assert_null(strstr(md, "KV cache on \n"));
    assert_null(strstr(js, "\"positions\":\tnull")); /* the answer's 2n+1 positions are counted */
    char *dat = rf_slurp(out, "positions_copy2.dat");
    assert_non_null(dat);
    assert_non_null(strstr(dat, "\n11 ")); /* n = 5: 2n+1 = 11 output positions */
    assert_null(strstr(dat, "\n12 "));
    char *gp = rf_slurp(out, "curves_copy2.gp");
    assert_non_null(gp);
    char want[64];
    snprintf(want, sizeof want, "lc rgb '%s' title 'xrope'", eng_plot_colour(xrope_id));
    assert_non_null(strstr(gp, want));
    assert_non_null(strstr(gp, "lc rgb '#123456' title 'xbias'"));
    free(csv), free(md), free(js), free(dat), free(gp);
}

/* A task whose sample hook writes a token past its vocabulary is a bug of that hook (exit 1, the hook named), not a
 * command-line problem (exit 2). */
static void test_task_bug_is_not_usage(void **state)
{
    char out[512], *msg;
    rf_make_dir(out, sizeof out, "bad");
    assert_int_equal(RF_CAPTURE(&msg, engine_run("badtok", out, "--overwrite")), 1);
    assert_non_null(strstr(msg, "task 'badtok'"));
    assert_non_null(strstr(msg, "a bug of the task's sample hook"));
    assert_null(strstr(msg, "allowed:"));
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_asks_no_builtin), cmocka_unit_test(test_registered_rotary_encoding),
        cmocka_unit_test(test_registered_styles),      cmocka_unit_test(test_task_geometry),
        cmocka_unit_test(test_engine_run),             cmocka_unit_test(test_task_bug_is_not_usage),
        cmocka_unit_test(test_task_default_size),
    };
    return cmocka_run_group_tests(tests, setup, rf_teardown);
}
