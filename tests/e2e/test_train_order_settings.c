/* test_train_order_settings.c: every setting a checkpoint stores is used by `train_order --eval CKPT` and
 * `--resume CKPT` unless the command line gives it, and the report says which came from where:
 *   - one tiny run with a non-default value of every stored setting, then --eval and --resume of its checkpoint:
 *     the resolved settings (settings.json) hold each stored value (one table, one loop per mode);
 *   - a flag given with --eval wins over the stored value, and stderr and report.md say so;
 *   - a checkpoint without a stored evaluation setting (as written before it was stored) is evaluated with the
 *     default, and stderr and report.md say so;
 *   - a program reloading the checkpoint itself (rg_checkpoint_open) gets the same settings from one call,
 *     rg_engine_run_settings, which refuses a bad stored value with RG_ERR_FORMAT naming it.
 * The binary is driven through the harness (eng_harness.h). */
#include "eng_harness.h"
#include "engine/engine.h"
#include "tensor/gemm.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The source run: a non-default value of every setting the checkpoint stores (/run, /config). The YaRN factor 4/3
 * needs 17 digits to read back as itself (%g's "1.33333" is another factor, evaluated silently). */
#define SOURCE_ARGS "--task reverse --pos rope --seed 3 --steps 4 --batch 4 --train-len 6 --micro-batches 2 " \
    "--ckpt-every 2 --log-every 2 --eval-every 3 --extrap-every 2 --test-lens 4,8,11 " \
    "--rope-scaling yarn:1.3333333333333333 --random-positions --max-position 40 --rope-theta 2000 --d-model 16 " \
    "--n-heads 2 --n-layers 1 --d-ff 32"

/* Each stored setting and its value in the resolved settings (cJSON's unformatted text); train: a training
 * setting, which --resume may change (--steps is given there). */
static const struct { const char *key, *value; bool train; } STORED[] = {
    {"task", "\"reverse\"", 0}, {"seed", "3", 0}, {"steps", "4", 1}, {"batch", "4", 0}, {"train_len", "6", 0},
    {"micro_batches", "2", 0}, {"ckpt_every", "2", 0}, {"log_every", "2", 0}, {"eval_every", "3", 0},
    {"extrap_every", "2", 0}, {"test_lens", "\"4,8,11\"", 0}, {"rope_scaling", "\"yarn:1.3333333333333333\"", 0},
    {"random_positions", "true", 0}, {"max_position", "40", 0}, {"rope_theta", "2000", 0}, {"d_model", "16", 0},
    {"n_layers", "1", 0}, {"d_ff", "32", 0}, {"pos", "\"rope\"", 0},
    {"precision", NULL, 0}, /* bf16 where the CPU has it (precision_stored), else fp32 */
};
#define N_STORED (sizeof STORED / sizeof *STORED)

static char ckpt[512];
static const char *precision_stored = "\"fp32\"";

static int group_setup(void **state)
{
    if (th_setup(state)) return -1;
    char out[300];
    snprintf(out, sizeof out, "%s/src", th_tmpdir);
    char why[256];
    bool bf16 = rg_bf16_supported(why, sizeof why);
    if (bf16) precision_stored = "\"bf16\"";
    if (th_run(SOURCE_ARGS " --quiet %s --out %s", bf16 ? "--precision bf16" : "", out) != 0) {
        fprintf(stderr, "the source run failed:\n%s", th_logbuf);
        return -1;
    }
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/reverse-rope-rand-seed3.h5", out);
    return 0;
}

/* The value of key in dir/settings.json as cJSON's unformatted text into buf ("" when absent). */
static void setting_text(const char *dir, const char *key, char *buf, size_t cap)
{
    static char text[1 << 16];
    char path[600];
    snprintf(path, sizeof path, "%s/settings.json", dir);
    th_read_text(path, text, sizeof text);
    cJSON *root = cJSON_Parse(text);
    char *v = root ? cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, key)) : NULL;
    snprintf(buf, cap, "%s", v ? v : "");
    cJSON_free(v);
    cJSON_Delete(root);
}

/* --eval and --resume of the checkpoint: every stored setting is the source run's. */
static void test_every_stored_setting_is_used(void **state)
{
    const char *modes[] = {"--eval %s --quiet --out %s", "--resume %s --steps 6 --quiet --out %s"},
               *names[] = {"--eval", "--resume"};
    for (int m = 0; m < 2; m++) {
        char out[300], value[512], md[1 << 15], path[600];
        snprintf(out, sizeof out, "%s/mode%d", th_tmpdir, m);
        int rc = th_run_in(NULL, modes[m], ckpt, out);
        if (rc != 0) fail_msg("%s exited %d:\n%s", names[m], rc, th_logbuf);
        for (size_t i = 0; i < N_STORED; i++) {
            if (m == 1 && STORED[i].train) continue;
            const char *want = STORED[i].value ? STORED[i].value : precision_stored;
            setting_text(out, STORED[i].key, value, sizeof value);
            if (strcmp(value, want) != 0)
                fail_msg("%s: %s is %s, but the checkpoint stores %s", names[m], STORED[i].key, value, want);
        }
        snprintf(path, sizeof path, "%s/report.md", out);
        th_read_text(path, md, sizeof md);
        if (!strstr(md, "- settings sources: from the checkpoint ") || !strstr(md, "test_lens, rope_scaling, "
                                                                                   "eval_every, extrap_every"))
            fail_msg("%s: report.md does not say which settings came from the checkpoint:\n%s", names[m], md);
        if (strstr(md, "not in the checkpoint")) fail_msg("%s: a stored setting reported missing:\n%s", names[m], md);
    }
}

/* A flag given with --eval wins, loudly. */
static void test_command_line_wins_and_says_so(void **state)
{
    char out[300], value[64], md[1 << 15], path[600];
    snprintf(out, sizeof out, "%s/given", th_tmpdir);
    int rc = th_run("--eval %s --test-lens 8 --out %s", ckpt, out);
    if (rc != 0) fail_msg("exit %d:\n%s", rc, th_logbuf);
    setting_text(out, "test_lens", value, sizeof value);
    assert_string_equal(value, "\"8\"");
    setting_text(out, "rope_scaling", value, sizeof value);
    assert_string_equal(value, "\"yarn:1.3333333333333333\"");
    if (!strstr(th_logbuf, "note: test_lens 8 replaces the checkpoint's 4,8,11")) fail_msg("no note:\n%s", th_logbuf);
    snprintf(path, sizeof path, "%s/report.md", out);
    th_read_text(path, md, sizeof md);
    if (!strstr(md, "; from the command line or --config: test_lens\n")) fail_msg("report.md:\n%s", md);
}

/* Removes /run attribute key from rs (a checkpoint written before key was stored). */
static void drop_attr(rg_run_state *rs, const char *key)
{
    for (int i = 0; i < rs->n_attrs; i++)
        if (!strcmp(rs->attrs[i].key, key)) {
            rs->attrs[i] = rs->attrs[--rs->n_attrs];
            return;
        }
    fail_msg("the checkpoint has no /run %s", key);
}

/* A checkpoint lacking extrap_every: the default, said on stderr and in report.md. */
static void test_missing_setting_is_loud(void **state)
{
    rg_model *m;
    rg_adamw opt;
    static rg_run_state rs;
    char old[600], out[300], value[64], md[1 << 15], path[600];
    assert_int_equal(rg_checkpoint_open(ckpt, &m, &opt, &rs), RG_OK);
    drop_attr(&rs, "extrap_every");
    snprintf(old, sizeof old, "%s/older.h5", th_tmpdir);
    assert_int_equal(rg_checkpoint_save(old, m, &opt, &rs), RG_OK);
    rg_adamw_free(&opt);
    rg_model_free(m);
    snprintf(out, sizeof out, "%s/older", th_tmpdir);
    int rc = th_run("--resume %s --steps 6 --out %s", old, out);
    if (rc != 0) fail_msg("exit %d:\n%s", rc, th_logbuf);
    setting_text(out, "extrap_every", value, sizeof value);
    assert_string_equal(value, "500");
    if (!strstr(th_logbuf, "has no /run extrap_every (written before it was stored): the default 500 is used"))
        fail_msg("no note:\n%s", th_logbuf);
    snprintf(path, sizeof path, "%s/report.md", out);
    th_read_text(path, md, sizeof md);
    if (!strstr(md, "not in the checkpoint (written before they were stored), the defaults: extrap_every\n"))
        fail_msg("report.md:\n%s", md);
}

/* A hand-written reload gets the same settings in one call; a bad stored value is refused, naming it. */
static void test_run_settings_call(void **state)
{
    rg_model *m;
    static rg_run_state rs;
    rg_engine_settings s;
    assert_int_equal(rg_checkpoint_open(ckpt, &m, NULL, &rs), RG_OK);
    rg_model_free(m);
    assert_int_equal(rg_engine_run_settings(&rs, &s), RG_OK);
    assert_string_equal(s.task, "reverse");
    int want[] = {3, 6, 4, 4, 2, 2, 2, 40, 3, 2, 1}, got[] = {s.seed, s.train_len, s.steps, s.batch, s.micro_batches,
        s.ckpt_every, s.log_every, s.max_position, s.eval_every, s.extrap_every, s.random_positions};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (want[i] != got[i]) fail_msg("field %zu: %d, but the run had %d", i, got[i], want[i]);
    assert_int_equal(s.n_test_lens, 3);
    assert_int_equal(s.test_lens[2], 11);
    assert_int_equal(s.n_rope_scaling, 1);
    assert_int_equal(s.rope_type[0], RG_ROPE_EXT_YARN);
    assert_true(s.rope_factor[0] == 4.0 / 3.0);
    assert_string_equal(s.defaulted, "");
    static rg_run_state edited;
    edited = rs;
    drop_attr(&edited, "test_lens");
    assert_int_equal(rg_engine_run_settings(&edited, &s), RG_OK);
    assert_string_equal(s.defaulted, "test_lens");
    assert_int_equal(s.n_test_lens, 8); /* the defaults of train_len 6: 3, 6, 7, 8, 9, 12, 18, 24 */
    struct { const char *key, *text; int64_t v; const char *msg; } bad[] = {
        {"test_lens", "4,abc", 0, "/run test_lens = '4,abc' is not a value of --test-lens"},
        {"rope_scaling", "warp", 0, "/run rope_scaling = 'warp' is not a value of --rope-scaling"},
        {"extrap_every", NULL, -1, "/run extrap_every = -1 is outside the limits of --extrap-every"},
        {"task", "copy,sort", 0, "/run task = 'copy,sort' is not one value of --task"},
        {"seed", "three", 0, "/run seed is not an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        edited = rs;
        if (bad[i].text) rg_run_state_set_str(&edited, bad[i].key, bad[i].text);
        else rg_run_state_set_int(&edited, bad[i].key, bad[i].v);
        assert_int_equal(rg_engine_run_settings(&edited, &s), RG_ERR_FORMAT);
        if (!strstr(rg_last_error(), bad[i].msg)) fail_msg("%s: %s", bad[i].key, rg_last_error());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_stored_setting_is_used, th_reset),
        cmocka_unit_test_setup(test_command_line_wins_and_says_so, th_reset),
        cmocka_unit_test_setup(test_missing_setting_is_loud, th_reset),
        cmocka_unit_test_setup(test_run_settings_call, th_reset),
    };
    return cmocka_run_group_tests(tests, group_setup, th_teardown);
}
