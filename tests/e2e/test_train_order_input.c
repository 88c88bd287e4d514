/* test_train_order_input.c: end-to-end tests of what examples/train_order is given, each driving the binary
 * (fork/exec, no shell; the harness in eng_harness.h):
 *   - bad command lines (unknown or abbreviated options, --seed with --seeds, empty or too long paths, options that
 *     do not apply to the mode, an input or mode option given twice) exit 2 and write nothing; --seed / --seeds;
 *   - checkpoints with hostile /run, /config, /optim, /rng or /params contents are refused with exit 2 and a
 *     message naming the checkpoint, before anything is built;
 *   - --config FILE (JSON: trailing text, NUL bytes and \u0000 escapes, duplicate keys, wrong types refused) and
 *     --print-config; a FIFO given as a file never blocks;
 *   - a folder holding another invocation's results is refused; two invocations on one folder at once: the second
 *     is refused by the lock and the first's results stay whole.
 * The group setup trains one tiny run (copy, rope, 4 steps) into th_tmpdir/run: the checkpoint and the folder
 * these tests start from. Runs and reports: test_train_order.c. */
#define _DEFAULT_SOURCE /* usleep */
#include "eng_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ bad command lines */

static void test_bad_flags_exit_2_and_write_nothing(void **state)
{
    char longpath[1300];
    snprintf(longpath, sizeof longpath, "%s/", th_tmpdir);
    while (strlen(longpath) < 1100) strcat(longpath, "d");
    struct { const char *args; bool own_out; } bad[] = {
        {"--task bogus", 0}, {"--pos rope,fourier", 0}, {"--steps 0", 0}, {"--steps 12x", 0}, {"--lr -1", 0},
        {"--rope-ext zzz", 0}, {"--test-lens 8,,", 0}, {"--jobs 0", 0}, {"--no-such-flag", 0}, {"--seeds", 0},
        {"--eval /nonexistent.h5", 0}, {"--resume a.h5 --eval b.h5", 0}, {"extra-argument", 0},
        {"--test-lens 8,8", 0}, {"--data tests/fixtures/attn.h5", 0}, {"--eval tests/fixtures/attn.h5", 0},
        /* a --data file that no test length reads (5 is generated; a grid task's sets are): still checked */
        {"--test-lens 5 --data tests/fixtures/attn.h5", 0}, {"--test-lens 5 --data README.md", 0},
        {"--task grid_copy --train-len 3x3 --test-lens 3x3 --data README.md", 0},
        {"--pos learned --train-len 79", 0}, {"--pos rope --random-positions --train-len 79", 0},
        /* one seed or several, exact option names (never a prefix) */
        {"--seed 7 --seeds 3", 0}, {"--seed 0", 0}, {"--seeds 1,1", 0}, {"--see 7", 0}, {"--ste 5", 0},
        {"--qui", 0}, {"--lr-schedule restart", 0}, {"--n-heads 3", 0}, {"--quiet=1", 0},
        {"--pos learned --random-positions --max-position 200", 0},
        {"--d-model 4096 --n-heads 8 --n-layers 64 --d-ff 65536", 0},
        /* hostile paths: empty and too long */
        {"--eval ''", 0}, {"--resume ''", 0}, {"--data ''", 0}, {"--config ''", 0},
        {"--config /nonexistent.json", 0}, {"--out ''", 1}, {"--out", 1},
        /* integers are decimal, a list names each item once */
        {"--steps 1e3", 0}, {"--steps 0x10", 0}, {"--batch 2.0", 0}, {"--seeds 0x3", 0}, {"--test-lens 8,1e1", 0},
        {"--task copy,copy", 0}, {"--pos rope,rope", 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char out[512];
        snprintf(out, sizeof out, "%s/bad%zu", th_tmpdir, i);
        /* tiny settings first (the bad value after them wins): a value wrongly accepted fails in seconds */
        int rc = bad[i].own_out ? th_run("--steps 2 --batch 2 --test-lens 8 --rope-ext none --quiet %s", bad[i].args)
                                : th_run("--steps 2 --batch 2 --test-lens 8 --rope-ext none --quiet %s --out %s",
                                      bad[i].args, out);
        if (rc != 2) fail_msg("'%s' exited %d, want 2:\n%s", bad[i].args, rc, th_logbuf);
        struct stat s;
        if (stat(out, &s) == 0) fail_msg("'%s' created %s", bad[i].args, out);
        if (!strstr(th_logbuf, "allowed")) fail_msg("'%s': no 'allowed' in the message:\n%s", bad[i].args, th_logbuf);
    }
    /* an --out past the path limit is refused, never cut */
    assert_int_equal(th_run("--steps 2 --batch 2 --test-lens 8 --quiet --out %s", longpath), 2);
    assert_non_null(strstr(th_logbuf, "longer than the limit"));
    longpath[1023] = 0;
    struct stat s;
    assert_int_not_equal(stat(longpath, &s), 0);
    /* an --out that is a file: bad usage (exit 2), the file untouched (it exited 1: "cannot create the lock file") */
    char afile[600];
    snprintf(afile, sizeof afile, "%s/afile", th_tmpdir);
    FILE *af = fopen(afile, "w");
    assert_non_null(af);
    fclose(af);
    assert_int_equal(th_run("--steps 2 --batch 2 --test-lens 8 --quiet --out %s", afile), 2);
    assert_non_null(strstr(th_logbuf, "is a file, not a folder"));
    assert_int_equal(stat(afile, &s), 0);
    assert_true(S_ISREG(s.st_mode) && s.st_size == 0);
    /* the message says what is wrong and what is allowed */
    assert_int_equal(th_run("--pos fourier --out %s/badmsg", th_tmpdir), 2);
    assert_non_null(strstr(th_logbuf, "fourier"));
    /* --seed is an option of its own, not an abbreviation of --seeds (resolved, never run: a run here would write
     * into the repository's ./out, and the exit status would depend on whether ./out already holds results) */
    assert_int_equal(th_run("--seed 7 --steps 2 --print-config"), 0);
    assert_non_null(strstr(th_logbuf, "\"seed\":\t7"));
    assert_int_equal(th_run("--ste 5 --seed 7"), 2);
    assert_non_null(strstr(th_logbuf, "abbreviation of --steps"));
}

/* Options that do not apply to the mode are errors (the checkpoint's settings are used). */
static void test_options_that_do_not_apply_are_refused(void **state)
{
    char ckpt[600];
    snprintf(ckpt, sizeof ckpt, "%s/run/ckpt/copy-rope-seed1.h5", th_tmpdir);
    const char *bad[] = {"--eval %s --lr 1e-3", "--eval %s --steps 5", "--eval %s --task copy", "--eval %s --pos rope",
                         "--eval %s --seed 2", "--eval %s --ckpt-every 5", "--resume %s --batch 4",
                         "--resume %s --d-model 32", "--resume %s --seeds 2", "--resume %s --lr 1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i], ckpt);
        int rc = th_run("%s --quiet --out %s/na%zu", args, th_tmpdir, i);
        if (rc != 2) fail_msg("'%s' exited %d, want 2:\n%s", bad[i], rc, th_logbuf);
        if (!strstr(th_logbuf, "does not apply")) fail_msg("'%s': %s", bad[i], th_logbuf);
    }
}

/* An option that names an input or a mode given twice is refused, naming it (the second silently replaced the
 * first: --continue A --continue B continued B); a bad value is still named as bad; a setting or --out given twice
 * takes the last value (make's RUN_ARGS add to a target's options), and --plugin may repeat. */
static void test_repeated_options(void **state)
{
    static const struct { const char *args; int status; const char *says; } cases[] = {
        {"--continue a --continue b", 2, "--continue given twice"},
        {"--data a.h5 --data b.h5", 2, "--data given twice"},
        {"--resume a.h5 --resume b.h5", 2, "--resume given twice"},
        {"--eval a.h5 --eval b.h5", 2, "--eval given twice"},
        {"--check-pos rope --check-pos alibi", 2, "--check-pos given twice"},
        {"--config a.json --config b.json", 2, "--config given twice"},
        {"--replot a.csv --replot b.csv", 2, "--replot given twice"},
        {"--compare a.csv b.csv --compare c.csv d.csv", 2, "--compare given twice"},
        {"--combine a.json --combine b.json", 2, "--combine given twice"},
        {"--continue a --continue ''", 2, "--continue: '' is not valid"},
        {"--steps 5 --steps 6", 0, "\"steps\":\t6,"},
        {"--out a --out b", 0, "\"out\":\t\"b\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = th_run("%s --print-config", cases[i].args);
        if (rc != cases[i].status || !strstr(th_logbuf, cases[i].says))
            fail_msg("'%s' exited %d, want %d saying '%s':\n%s", cases[i].args, rc, cases[i].status, cases[i].says,
                     th_logbuf);
    }
}

/* --seed S runs one seed, --seeds N the seeds 1..N, --seeds LIST the listed ones. */
static void test_seed_options(void **state)
{
    struct { const char *flag; const char *want[3]; const char *not; } cases[] = {
        {"--seed 7", {"seed7"}, "seed1"}, {"--seeds 2", {"seed1", "seed2"}, "seed3"},
        {"--seeds 3,9", {"seed3", "seed9"}, "seed1"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[512], f[128];
        snprintf(out, sizeof out, "%s/seeds%zu", th_tmpdir, i);
        int rc = th_run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet %s --out %s", cases[i].flag, out);
        if (rc != 0) fail_msg("%s exited %d:\n%s", cases[i].flag, rc, th_logbuf);
        for (int k = 0; k < 3 && cases[i].want[k]; k++) {
            snprintf(f, sizeof f, "ckpt/copy-none-%s.h5", cases[i].want[k]);
            if (!th_exists(out, f)) fail_msg("%s: no %s", cases[i].flag, f);
        }
        snprintf(f, sizeof f, "ckpt/copy-none-%s.h5", cases[i].not);
        if (th_exists(out, f)) fail_msg("%s wrote %s", cases[i].flag, f);
    }
}

/* ------------------------------------------------------------------ outputs never mix */

static void test_folder_with_results_is_refused_unless_overwrite(void **state)
{
    char out[512], md[600], before[8192], after[8192];
    snprintf(out, sizeof out, "%s/run", th_tmpdir);
    snprintf(md, sizeof md, "%s/report.md", out);
    th_read_text(md, before, sizeof before);
    assert_int_equal(th_run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --out %s", out), 2);
    assert_non_null(strstr(th_logbuf, "already holds results"));
    th_read_text(md, after, sizeof after);
    assert_string_equal(before, after);
    assert_int_equal(th_run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --overwrite --out %s", out), 0);
}

static bool locked(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

static void test_two_invocations_on_one_folder(void **state)
{
    char out[512], lock[600], loga[600], text[8192];
    snprintf(out, sizeof out, "%s/conc", th_tmpdir);
    snprintf(lock, sizeof lock, "%s/.train_order.lock", out);
    snprintf(loga, sizeof loga, "%s/log_a", th_tmpdir);
    pid_t a = th_start_bg(loga, "--pos rope --steps 1000 --batch 8 --test-lens 8 --rope-ext none --jobs 1 --quiet "
                       "--out %s", out);
    for (int i = 0; i < 3000 && !locked(lock); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!locked(lock)) fail_msg("the first invocation never took the lock %s", lock);
    /* a second invocation on the same folder, even with --overwrite, is refused while the first runs */
    int rc = th_run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --overwrite --out %s", out);
    if (rc != 1 || !strstr(th_logbuf, "in use by another train_order")) fail_msg("second invocation: %d\n%s", rc, th_logbuf);
    rc = th_run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --out %s", out);
    assert_int_not_equal(rc, 0);
    rc = th_wait_rc(a);
    th_read_text(loga, text, sizeof text);
    if (rc != 0) fail_msg("first invocation exited %d:\n%s", rc, text);
    /* its results are whole: one rope row, no row of the refused runs */
    char rows[2048];
    th_csv_rows(out, "rope", rows, sizeof rows);
    assert_int_equal(th_count_lines(rows), 1);
    th_csv_rows(out, "none", rows, sizeof rows);
    assert_int_equal(th_count_lines(rows), 0);
    assert_false(th_exists(out, "ckpt/copy-none-seed1.h5"));
    assert_true(tc_h5_attr(strcat(out, "/ckpt/copy-rope-seed1.h5"), "/", "step") == 1000);
}

/* ------------------------------------------------------------------ hostile checkpoints */

typedef enum { SET_INT, SET_DOUBLE, SET_STR, DELETE_ATTR, DELETE_LINK } edit_kind;

/* Edits obj/name of the checkpoint at path: v for SET_INT and SET_DOUBLE, str for SET_STR; then seals it. */
static void edit(const char *path, const char *obj, const char *name, edit_kind k, double v, const char *str)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    if (k == DELETE_LINK) {
        assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    } else {
        hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
        assert_true(o >= 0);
        if (H5Aexists(o, name) > 0) assert_true(H5Adelete(o, name) >= 0);
        if (k == SET_STR) {
            hid_t sp = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1);
            assert_true(H5Tset_size(t, strlen(str) + 1) >= 0);
            hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
            assert_true(H5Awrite(a, t, str) >= 0);
            H5Aclose(a);
            H5Tclose(t);
            H5Sclose(sp);
        } else if (k != DELETE_ATTR) {
            hid_t sp = H5Screate(H5S_SCALAR);
            hid_t t = k == SET_INT ? H5T_STD_I64LE : H5T_IEEE_F64LE;
            hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
            int64_t i = (int64_t)v;
            assert_true(H5Awrite(a, k == SET_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, k == SET_INT ?
                                 (void *)&i : (void *)&v) >= 0);
            H5Aclose(a);
            H5Sclose(sp);
        }
        H5Oclose(o);
    }
    H5Fclose(f);
    /* an edited file is refused by its digest until sealed again (docs/checkpoint.md, "Edited files"): seal it,
     * so that the value checks behind the digest are what is tested */
    assert_int_equal(rg_checkpoint_seal(path), RG_OK);
}

static void test_hostile_checkpoints_are_refused(void **state)
{
    char src[700];
    snprintf(src, sizeof src, "%s/run/ckpt/copy-rope-seed1.h5", th_tmpdir);
    struct { const char *obj, *name; edit_kind k; double v; const char *str, *mode, *says; } cases[] = {
        {"/run", "batch", DELETE_ATTR, 0, NULL, "--resume", "/run batch is missing"},
        {"/run", "batch", SET_INT, 0, NULL, "--resume", "/run batch = 0"},
        {"/run", "batch", SET_INT, 1e6, NULL, "--resume", "/run batch = 1000000"},
        {"/run", "batch", SET_DOUBLE, 8, NULL, "--eval", "/run batch is not an integer"},
        {"/run", "random_positions", DELETE_ATTR, 0, NULL, "--resume", "random_positions is missing"},
        {"/run", "micro_batches", SET_DOUBLE, 2, NULL, "--resume", "micro_batches is not an integer"},
        {"/run", "max_position", SET_INT, -1, NULL, "--resume", "max_position = -1"},
        {"/run", "max_position", SET_INT, 2147483648.0, NULL, "--resume", "max_position = 2147483648"},
        /* task, train_len and seed: rows of the settings table in /run, validated like the others */
        {"/run", "train_len", SET_INT, 100000, NULL, "--resume", "/run train_len = 100000"},
        {"/run", "train_len", SET_INT, 2147483647, NULL, "--eval", "/run train_len = 2147483647"},
        {"/run", "train_len", DELETE_ATTR, 0, NULL, "--eval", "/run train_len is missing"},
        {"/run", "seed", SET_INT, 0, NULL, "--resume", "/run seed = 0 is outside the limits of seed"},
        {"/run", "seed", SET_INT, 1000001, NULL, "--eval", "/run seed = 1000001"},
        {"/run", "seed", SET_STR, 0, "1", "--eval", "/run seed is not an integer"},
        {"/run", "task", DELETE_ATTR, 0, NULL, "--resume", "/run task is missing"},
        {"/run", "task", SET_INT, 1, NULL, "--eval", "/run task is not a string"},
        {"/run", "task", SET_STR, 0, "fly", "--eval", "/run task = 'fly' is not one value of --task"},
        {"/run", "task", SET_STR, 0, "all", "--resume", "/run task = 'all' is not one value of --task"},
        {"/run", "task", SET_STR, 0, "copy,sort", "--eval", "/run task = 'copy,sort' is not one value"},
        /* a value the flag's parser rejects (used to read past an array and run nothing, exit 0) */
        {"/run", "task", SET_STR, 0, "", "--eval", "/run task = '' is not one value of --task"},
        {"/run", "task", SET_STR, 0, "", "--resume", "/run task = '' is not one value of --task"},
        {"/config", "vocab_size", SET_INT, 1 << 24, NULL, "--eval", "vocab_size"},
        {"/optim", "step", SET_INT, 0, NULL, "--resume", "/optim step = 0, but the run's step is"},
        {"/config", "n_layers", SET_INT, 4096, NULL, "--eval", "n_layers 4096"},
        {"/config", "d_model", SET_INT, 4096, NULL, "--eval", "d_model 4096"},
        {"/", "step", SET_INT, -1, NULL, "--resume", "'step' on / = -1"},
        {"/optim", "lr_total", SET_INT, 4294967351.0, NULL, "--resume", "'lr_total' on /optim = 4294967351"},
        {"/optim", "lr_total", SET_INT, 0, NULL, "--resume", "lr_total = 0"},
        {"/optim", "lr_peak", SET_DOUBLE, -1, NULL, "--resume", "'lr_peak' on /optim = -1"},
        {NULL, "/rng/positions", DELETE_LINK, 0, NULL, "--resume", "/rng/positions is missing"},
        {NULL, "/rng/data", DELETE_LINK, 0, NULL, "--resume", "/rng/data is missing"},
        /* values only the full load sees: refused before anything is written too (used to exit 1 after writing
         * settings.json, ckpt/ and runs/ into --out) */
        {NULL, "/params/ln_f.bias", DELETE_LINK, 0, NULL, "--eval", "missing dataset /params/ln_f.bias"},
        {NULL, "/optim/exp_avg/ln_f.bias", DELETE_LINK, 0, NULL, "--resume",
         "missing dataset /optim/exp_avg/ln_f.bias"},
        {"/optim", "eps", SET_DOUBLE, 0, NULL, "--resume", "/optim eps = 0"},
        {"/run", "steps_to_learn", SET_INT, 1e9, NULL, "--eval", "steps_to_learn is not -1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char ck[700];
        snprintf(ck, sizeof ck, "%s/hostile%zu.h5", th_tmpdir, i);
        th_copy_file(src, ck);
        edit(ck, cases[i].obj, cases[i].name, cases[i].k, cases[i].v, cases[i].str);
        int rc = th_run("%s %s --test-lens 8 --quiet --out %s/hostile_out%zu", cases[i].mode, ck, th_tmpdir, i);
        if (rc != 2) fail_msg("case %zu (%s %s): exit %d, want 2:\n%s", i, cases[i].obj ? cases[i].obj : "",
                              cases[i].name, rc, th_logbuf);
        if (!strstr(th_logbuf, ck) && !strstr(th_logbuf, "hostile"))
            fail_msg("case %zu: the message does not name the checkpoint:\n%s", i, th_logbuf);
        if (!strstr(th_logbuf, cases[i].says)) fail_msg("case %zu: want '%s' in:\n%s", i, cases[i].says, th_logbuf);
        char out[600];
        snprintf(out, sizeof out, "%s/hostile_out%zu", th_tmpdir, i);
        struct stat s;
        if (stat(out, &s) == 0) fail_msg("case %zu created %s", i, out);
    }
    /* random positions from [0, 10) for sequences of 35 tokens (used to abort in pos.c) */
    char ck[700];
    snprintf(ck, sizeof ck, "%s/hostile_rp.h5", th_tmpdir);
    th_copy_file(src, ck);
    edit(ck, "/run", "random_positions", SET_INT, 1, NULL);
    edit(ck, "/run", "max_position", SET_INT, 10, NULL);
    assert_int_equal(th_run("--resume %s --test-lens 8 --quiet --out %s/hostile_rp", ck, th_tmpdir), 2);
    if (!strstr(th_logbuf, ck) || !strstr(th_logbuf, "need more random positions than [0, 10)")) fail_msg("%s", th_logbuf);
    /* a negative beta: refused by the checkpoint's own validation, before anything is built */
    snprintf(ck, sizeof ck, "%s/hostile_beta.h5", th_tmpdir);
    th_copy_file(src, ck);
    edit(ck, "/optim", "beta1", SET_DOUBLE, -0.5, NULL);
    assert_int_equal(th_run("--resume %s --steps 6 --test-lens 8 --quiet --out %s/hostile_beta", ck, th_tmpdir), 2);
    if (!strstr(th_logbuf, ck) || !strstr(th_logbuf, "'beta1' on /optim = -0.5")) fail_msg("%s", th_logbuf);
    /* NaN weights: refused at load, naming the checkpoint and the dataset */
    snprintf(ck, sizeof ck, "%s/hostile_nan.h5", th_tmpdir);
    th_copy_file(src, ck);
    hid_t f = H5Fopen(ck, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "/params/lm_head.weight", H5P_DEFAULT);
    assert_true(f >= 0 && d >= 0);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    float *nan = malloc(sizeof(float) * (size_t)n);
    for (hssize_t i = 0; i < n; i++) nan[i] = NAN;
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, nan) >= 0);
    free(nan);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    assert_int_equal(rg_checkpoint_seal(ck), RG_OK);
    int rc = th_run("--resume %s --steps 6 --test-lens 8 --quiet --out %s/hostile_nan", ck, th_tmpdir);
    if (rc != 2 || !strstr(th_logbuf, ck) || !strstr(th_logbuf, "holds nan")) fail_msg("NaN weights: exit %d\n%s", rc, th_logbuf);
    char nan_out[600];
    snprintf(nan_out, sizeof nan_out, "%s/hostile_nan", th_tmpdir);
    struct stat st;
    if (stat(nan_out, &st) == 0) fail_msg("NaN weights: %s was created", nan_out);
}

/* ------------------------------------------------------------------ --config */

static void test_config_file_and_print_config(void **state)
{
    char cfg[600], out[600], ck[700];
    snprintf(cfg, sizeof cfg, "%s/cfg.json", th_tmpdir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "{\"pos\": \"rope\", \"steps\": 3, \"batch\": 4, \"d_model\": 32, \"n_heads\": 2,\n"
               " \"test_lens\": [8], \"rope_ext\": \"none\", \"beta2\": 0.95, \"random_positions\": true}\n");
    fclose(f);
    assert_int_equal(th_run("--config %s --batch 6 --print-config", cfg), 0);
    const char *want[] = {"\"batch\":\t6", "\"d_model\":\t32", "\"beta2\":\t0.95", "\"test_lens\":\t\"8\"",
                          "\"random_positions\":\ttrue", "\"pos\":\t\"rope\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(th_logbuf, want[i])) fail_msg("--print-config lacks %s:\n%s", want[i], th_logbuf);
    /* the printed settings read back as a config give the same settings */
    char cfg2[600];
    static char first[sizeof th_logbuf];
    snprintf(cfg2, sizeof cfg2, "%s/cfg2.json", th_tmpdir);
    snprintf(first, sizeof first, "%s", th_logbuf);
    f = fopen(cfg2, "w");
    fputs(th_logbuf, f);
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", cfg2), 0);
    assert_string_equal(first, th_logbuf);
    /* seeds: a count, a list, and a list of one */
    const char *seeds[][2] = {{"3", "\"seeds\":\t\"1,2,3\""}, {"[4, 9]", "\"seeds\":\t\"4,9\""},
                              {"[5]", "\"seed\":\t5"}};
    for (int i = 0; i < 3; i++) {
        f = fopen(cfg2, "w");
        fprintf(f, "{\"seeds\": %s}\n", seeds[i][0]);
        fclose(f);
        assert_int_equal(th_run("--config %s --print-config", cfg2), 0);
        if (!strstr(th_logbuf, seeds[i][1])) fail_msg("seeds %s: want %s in\n%s", seeds[i][0], seeds[i][1], th_logbuf);
    }
    /* a run with it: the model and the settings are in the checkpoint (random positions: the run is rope+rand) */
    snprintf(out, sizeof out, "%s/cfgrun", th_tmpdir);
    int rc = th_run("--config %s --quiet --out %s", cfg, out);
    if (rc != 0) fail_msg("--config run exited %d:\n%s", rc, th_logbuf);
    snprintf(ck, sizeof ck, "%s/ckpt/copy-rope-rand-seed1.h5", out);
    assert_true(tc_h5_attr(ck, "/config", "d_model") == 32);
    assert_true(tc_h5_attr(ck, "/run", "batch") == 4);
    assert_true(tc_h5_attr(ck, "/run", "random_positions") == 1);
    /* unknown keys and bad values are refused */
    f = fopen(cfg, "w");
    fprintf(f, "{\"stepz\": 3}\n");
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", cfg), 2);
    assert_non_null(strstr(th_logbuf, "stepz: unknown setting"));
    f = fopen(cfg, "w");
    fprintf(f, "{\"steps\": 0}\n");
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", cfg), 2);
    f = fopen(cfg, "w");
    fprintf(f, "{\"steps\": 3,\n");
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", cfg), 2);
    /* files that cJSON alone would accept with a part of them dropped, and a folder: refused, naming the file */
    static const struct { const char *text; size_t len; const char *msg; } bad[] = {
        {"{\"steps\": 3} {\"steps\": 5}", 0, "syntax error"}, {"{\"steps\": 3} garbage", 0, "syntax error"},
        {"{\"steps\": 3}\0{\"steps\": 5}", 25, "NUL byte"}, {"{\"steps\": 3, \"steps\": 5}", 0, "given twice"},
        {"{\"seeds\": [5], \"seed\": 6}", 0, "given twice"}, {"{\"seed\": 3, \"seeds\": 4}", 0, "seed and seeds"},
        {"{\"task\": \"copy\\u0000sort\"}", 0, "\\u0000 escape at byte 14"},
        {"{\"steps\\u0000x\": 20}", 0, "\\u0000 escape"},
        {"{\"steps\": \"20\"}", 0, "a JSON string, but --steps takes a number"},
        {"{\"out\": 5}", 0, "a JSON number, but --out takes a string"},
        {"{\"quiet\": 1}", 0, "takes true or false"}, {"{\"lr\": null}", 0, "a JSON null"},
        {"{\"pos\": true}", 0, "--pos takes a string, a number or an array"}, {"", 0, "empty file"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(cfg, "wb");
        fwrite(bad[i].text, 1, bad[i].len ? bad[i].len : strlen(bad[i].text), f);
        fclose(f);
        int rc = th_run("--config %s --print-config", cfg);
        if (rc != 2 || !strstr(th_logbuf, bad[i].msg) || !strstr(th_logbuf, cfg))
            fail_msg("config '%s': exit %d, want 2 and '%s' naming the file:\n%s", bad[i].text, rc, bad[i].msg, th_logbuf);
    }
    assert_int_equal(th_run("--config %s --print-config", th_tmpdir), 2);
    assert_non_null(strstr(th_logbuf, "Is a directory"));
    /* a long array item is read whole (it used to be cut at 255 characters: "8,0...016" read as "8,1"), and a
     * value longer than the buffer is refused, never cut */
    static char big[12000];
    int zeros[2] = {254, 9000};
    for (int i = 0; i < 2; i++) {
        int len = snprintf(big, sizeof big, "{\"test_lens\": [\"8\", \"");
        memset(big + len, '0', (size_t)zeros[i]);
        snprintf(big + len + zeros[i], sizeof big - (size_t)(len + zeros[i]), "16\"]}\n");
        f = fopen(cfg, "w");
        fputs(big, f);
        fclose(f);
        int rc = th_run("--config %s --print-config", cfg);
        if (i == 0 && (rc != 0 || !strstr(th_logbuf, "\"test_lens\":\t\"8,16\"")))
            fail_msg("a 256-character item: exit %d\n%s", rc, th_logbuf);
        if (i == 1 && (rc != 2 || !strstr(th_logbuf, "test_lens: the value is too long")))
            fail_msg("a 9002-character item: exit %d\n%s", rc, th_logbuf);
    }
    /* an escaped backslash before "u0000" is text, not a NUL */
    f = fopen(cfg, "w");
    fprintf(f, "{\"out\": \"a\\\\u0000b\"}\n");
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", cfg), 0);
    assert_non_null(strstr(th_logbuf, "\"out\":\t\"a\\\\u0000b\""));
}

/* A FIFO given where a file is read (--config, --eval, --data) is refused or read as empty: never a hang. */
static void test_fifo_inputs_do_not_block(void **state)
{
    char fifo[512], out[512], log[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", th_tmpdir);
    snprintf(out, sizeof out, "%s/fifo_out", th_tmpdir);
    snprintf(log, sizeof log, "%s/fifo_log", th_tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *cases[] = {"--config %s --print-config", "--eval %s --out %s --quiet",
                           "--data %s --pos rope --steps 2 --batch 4 --test-lens 8 --out %s --quiet"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pid_t pid = th_start_bg(log, cases[i], fifo, out);
        int st = 0, waited = 0;
        while (waitpid(pid, &st, WNOHANG) == 0 && waited < 300) {
            usleep(100000);
            waited++;
        }
        if (waited == 300) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fail_msg("'%s' with a FIFO still runs after 30 s", cases[i]);
        }
        th_read_text(log, th_logbuf, sizeof th_logbuf);
        if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
            fail_msg("'%s' with a FIFO: status %d, want a refusal:\n%s", cases[i], st, th_logbuf);
    }
}

/* --combine: two blocks of seeds (--seed 1 here, --seed 2 below) read back as the one invocation --seeds 1,2 (the
 * same cells as that report read back, report_cells.csv byte for byte), and so do two blocks of encodings; refused: without --out, with a training option, a block twice, a
 * block of other settings (naming the setting), a folder holding results. */
static void test_combine_blocks_of_seeds(void **state)
{
    const char *tiny = "--task copy --pos rope --steps 4 --batch 4 --test-lens 8 --quiet";
    assert_int_equal(th_run("%s --seed 2 --out %s/run2", tiny, th_tmpdir), 0);
    assert_int_equal(th_run("%s --seeds 1,2 --out %s/run12", tiny, th_tmpdir), 0);
    assert_int_equal(th_run("%s --seed 3 --lr 3e-3 --out %s/run3lr", tiny, th_tmpdir), 0);
    assert_int_equal(th_run("--combine %s/run/report.json,%s/run2/report.csv --out %s/comb_csv", th_tmpdir, th_tmpdir,
                            th_tmpdir), 0); /* a report.csv reads its settings from the report.json beside it */
    assert_non_null(strstr(th_logbuf, "--combine: 2 training runs, 2 seeds, from 2 reports"));
    assert_int_equal(th_run("--combine %s/run/report.json,%s/run2/report.json --out %s/comb", th_tmpdir, th_tmpdir,
                            th_tmpdir), 0);
    /* the one invocation read back the same way (report.csv rounds values to 9 digits, report.json keeps them; a
     * report's in-memory values give sd's tenth digit differently) */
    assert_int_equal(th_run("--combine %s/run12/report.json --out %s/comb12", th_tmpdir, th_tmpdir), 0);
    char a[600], b[600], *ta = malloc(1 << 16), *tb = malloc(1 << 16), *md = malloc(1 << 16);
    snprintf(a, sizeof a, "%s/comb/report_cells.csv", th_tmpdir);
    snprintf(b, sizeof b, "%s/comb12/report_cells.csv", th_tmpdir);
    th_read_text(a, ta, 1 << 16);
    th_read_text(b, tb, 1 << 16);
    assert_true(strlen(ta) > 100);
    assert_string_equal(ta, tb);
    snprintf(a, sizeof a, "%s/comb/report.md", th_tmpdir);
    th_read_text(a, md, 1 << 16);
    assert_non_null(strstr(md, "## Combined from"));
    assert_non_null(strstr(md, "\"seeds\":\t\"1,2\""));
    /* split by encodings instead: rope at seeds 1,2 (run12) and alibi at seeds 1,2 read back as --pos rope,alibi */
    assert_int_equal(th_run("%s --pos alibi --seeds 1,2 --out %s/alibi12", tiny, th_tmpdir), 0);
    assert_int_equal(th_run("%s --pos rope,alibi --seeds 1,2 --out %s/both12", tiny, th_tmpdir), 0);
    assert_int_equal(th_run("--combine %s/run12/report.json,%s/alibi12/report.json --out %s/comb_pos", th_tmpdir,
                            th_tmpdir, th_tmpdir), 0);
    assert_int_equal(th_run("--combine %s/both12/report.json --out %s/comb_both", th_tmpdir, th_tmpdir), 0);
    snprintf(a, sizeof a, "%s/comb_pos/report_cells.csv", th_tmpdir);
    snprintf(b, sizeof b, "%s/comb_both/report_cells.csv", th_tmpdir);
    th_read_text(a, ta, 1 << 16);
    th_read_text(b, tb, 1 << 16);
    assert_non_null(strstr(ta, "alibi"));
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    free(md);
    struct { const char *args; int rc; const char *want; } bad[] = {
        {"--combine %s/run/report.json", 2, "name the folder of the combined report with --out"},
        {"--combine %s/run/report.json --lr 1 --out /nonexistent/x", 2, "--lr does not apply with --combine"},
        {"--combine %s/run/report.json,%s/run/report.csv --out %s/c1", 1, "is in"},
        {"--combine %s/run/report.json,%s/run3lr/report.json --out %s/c2", 1, "differ in the setting 'lr'"},
        {"--combine %s/run/report.json --out %s/run2", 2, "holds"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = th_run(bad[i].args, th_tmpdir, th_tmpdir, th_tmpdir);
        if (rc != bad[i].rc || !strstr(th_logbuf, bad[i].want))
            fail_msg("'%s' exited %d (want %d) without '%s':\n%s", bad[i].args, rc, bad[i].rc, bad[i].want, th_logbuf);
    }
}

/* --pos-config for an encoding not in --pos: accepted with a note naming the setting, its encoding and --pos (a
 * --config file of a larger grid carries such settings); none when the encoding is in the run or the value is the
 * declared default. */
static void test_pos_config_of_an_encoding_not_run(void **state)
{
    const struct { const char *args; const char *note; } cases[] = {
        {"--pos rope --pos-config fire_mlp_width=8", "--pos-config fire_mlp_width=8 is a setting of fire, which --pos "
                                                     "(rope) does not include: it has no effect"},
        {"--pos alibi --pos-config t5_max_distance=40", "t5_max_distance=40 is a setting of t5"},
        {"--pos rope,fire --pos-config fire_mlp_width=8", NULL},
        {"--pos rope --pos-config fire_mlp_width=0", NULL}, /* the declared default */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(th_run("%s --print-config", cases[i].args), 0);
        bool noted = strstr(th_logbuf, "note: --pos-config") != NULL;
        if (cases[i].note ? !strstr(th_logbuf, cases[i].note) : noted)
            fail_msg("'%s': %s", cases[i].args, th_logbuf);
    }
}

/* The harness's setup, then the run these tests start from: th_tmpdir/run with ckpt/copy-rope-seed1.h5. */
static int setup_with_run(void **state)
{
    if (th_setup(state)) return -1;
    int rc = th_run("--task copy --pos rope --steps 4 --batch 4 --test-lens 8 --quiet --out %s/run", th_tmpdir);
    if (rc != 0) fprintf(stderr, "test_train_order_input: the setup run exited %d:\n%s", rc, th_logbuf);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_flags_exit_2_and_write_nothing, th_reset),
        cmocka_unit_test_setup(test_options_that_do_not_apply_are_refused, th_reset),
        cmocka_unit_test_setup(test_repeated_options, th_reset),
        cmocka_unit_test_setup(test_seed_options, th_reset),
        cmocka_unit_test_setup(test_hostile_checkpoints_are_refused, th_reset),
        cmocka_unit_test_setup(test_config_file_and_print_config, th_reset),
        cmocka_unit_test_setup(test_fifo_inputs_do_not_block, th_reset),
        cmocka_unit_test_setup(test_two_invocations_on_one_folder, th_reset),
        cmocka_unit_test_setup(test_combine_blocks_of_seeds, th_reset),
        cmocka_unit_test_setup(test_pos_config_of_an_encoding_not_run, th_reset),
        cmocka_unit_test_setup(test_folder_with_results_is_refused_unless_overwrite, th_reset), /* rewrites run/ */
    };
    return cmocka_run_group_tests(tests, setup_with_run, th_teardown);
}
