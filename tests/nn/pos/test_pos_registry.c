/* test_pos_registry.c (float32): the registry of position encodings (pos.h) and the encodings' declared settings.
 *   - rg_pos_register refuses bad descriptors (a table of cases, each with the words its message must hold) and
 *     registers a good one after the built-ins; names parse; an unknown name's message says how to register.
 *   - settings: defaults, set, text, limits, integrality, unknown names, capacity; rg_model_config_validate checks
 *     values written into the config directly and calls the encoding's validate hook.
 *   - checkpoints: a registered encoding's setting is written and read back; a T5 setting that differs from the
 *     model's is a config mismatch naming it; a file of an encoding this process has not registered is refused
 *     with a message naming it and rg_pos_register.
 *   - examples/custom_encoding (a user encoding on the public header only) runs a few steps, saves, reloads with
 *     bit-equal logits, refuses to replace its checkpoint; its file is then the unregistered case above.
 *   - train_order: --pos kerple-log,kerple-power with --pos-config prints the setting in --print-config; a bad
 *     --pos-config is a usage error (2). */
#include "ckpt_helpers.h"

#include <fcntl.h>
#include <limits.h>

/* ------------------------------------------------------------------ a test encoding: a constant bias per head */

static rg_tensor *const_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                             rg_tensor *q, rg_tensor *k)
{
    (void)state, (void)prep, (void)layer, (void)k;
    int H = q->shape[2] / 8; /* head_dim 8 in the tests below */
    rg_tensor *b = rg_tensor_zeros(c, 3, (int[]){H, s->T, s->S});
    return b;
}

static const rg_pos_setting TEST_SETTINGS[] = {
    {"testenc_width", RG_POS_SETTING_INT, 4, 1, 64, "a test integer"},
    {"testenc_gain", RG_POS_SETTING_DOUBLE, 0.5, 0, 2, "a test number"},
};

static rg_status test_validate(const rg_model_config *cfg)
{
    if (rg_pos_config_get(cfg, "testenc_width") == 13) return rg_error(RG_ERR_ARG, "testenc: width 13 is unlucky");
    return RG_OK;
}

static const rg_pos_encoding TEST_ENC = {.name = "test-enc", .doc = "a zero bias (test)", .settings = TEST_SETTINGS,
                                         .n_settings = 2, .validate = test_validate, .score_bias = const_bias};

static rg_pos_kind test_id(void)
{
    static rg_pos_kind id;
    static bool done;
    if (!done) {
        if (rg_pos_register(&TEST_ENC, &id)) fail_msg("register: %s", rg_last_error());
        done = true;
    }
    return id;
}

/* ------------------------------------------------------------------ registration */

static const rg_pos_setting BAD_LIMITS[] = {{"bad_x", RG_POS_SETTING_DOUBLE, 5, 0, 1, "default outside"}};
static const rg_pos_setting BAD_INT[] = {{"bad_y", RG_POS_SETTING_INT, 0.5, 0, 1, "not integral"}};
static const rg_pos_setting BAD_NAME[] = {{"bad name", RG_POS_SETTING_INT, 0, 0, 1, "a space"}};
static const rg_pos_setting TWICE[] = {{"bad_z", RG_POS_SETTING_INT, 0, 0, 1, ""},
                                       {"bad_z", RG_POS_SETTING_INT, 0, 0, 1, ""}};
static const rg_pos_setting CLASH[] = {{"t5_num_buckets", RG_POS_SETTING_INT, 16, 4, 64, "T5's, differently"}};
static const rg_pos_setting INF_LIMIT[] = {{"bad_w", RG_POS_SETTING_DOUBLE, 0, 0, INFINITY, "infinite"}};

static void test_register_refuses(void **state)
{
    static const struct { rg_pos_encoding enc; const char *want; } CASES[] = {
        {{.name = NULL}, "needs a name"},
        {{.name = ""}, "needs a name"},
        {{.name = "Rope"}, "needs a name"},
        {{.name = "a name"}, "needs a name"},
        {{.name = "an-encoding-name-of-32-characters"}, "needs a name"},
        {{.name = "rope"}, "registered already"},
        {{.name = "kerple-log"}, "registered already"},
        {{.name = "nine", .n_settings = 9, .settings = BAD_LIMITS}, "9 settings"},
        {{.name = "nosettings", .n_settings = 1}, "1 settings"},
        {{.name = "limits", .n_settings = 1, .settings = BAD_LIMITS}, "bad_x: default 5"},
        {{.name = "integral", .n_settings = 1, .settings = BAD_INT}, "bad_y"},
        {{.name = "infinite", .n_settings = 1, .settings = INF_LIMIT}, "bad_w"},
        {{.name = "badname", .n_settings = 1, .settings = BAD_NAME}, "setting 0 has no valid name"},
        {{.name = "twice", .n_settings = 2, .settings = TWICE}, "bad_z is declared twice"},
        {{.name = "clash", .n_settings = 1, .settings = CLASH}, "t5_num_buckets is declared differently"},
    };
    int before = rg_pos_count();
    assert_true(before >= RG_POS_BUILTIN_COUNT);
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        rg_pos_kind id = (rg_pos_kind)-1;
        assert_int_equal(rg_pos_register(&CASES[i].enc, &id), RG_ERR_ARG);
        if (!strstr(rg_last_error(), CASES[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, rg_last_error(), CASES[i].want);
        assert_int_equal((int)id, -1);
        assert_int_equal(rg_pos_count(), before);
    }
    assert_int_equal(rg_pos_register(NULL, NULL), RG_ERR_ARG);
}

static void test_register_and_parse(void **state)
{
    /* the built-ins have their stable ids */
    static const char *const NAMES[RG_POS_BUILTIN_COUNT] = {"none", "sinusoidal", "learned", "t5", "xl", "alibi",
        "rope", "rope-half", "fire", "kerple-log", "kerple-power", "rope-2d", "rope-2d-pixtral", "mrope",
        "learned-2d", "sinusoidal-2d", "alibi-2d-manhattan", "alibi-2d-euclidean", "t5-2d"};
    for (int i = 0; i < RG_POS_BUILTIN_COUNT; i++) {
        rg_pos_kind k;
        assert_int_equal(rg_pos_parse(NAMES[i], &k), RG_OK);
        assert_int_equal((int)k, i);
        assert_string_equal(rg_pos_name(k), NAMES[i]);
        assert_ptr_equal(rg_pos_encoding_of(k)->name, rg_pos_name(k));
    }
    rg_pos_kind id = test_id();
    assert_true((int)id >= RG_POS_BUILTIN_COUNT && (int)id < rg_pos_count());
    rg_pos_kind k;
    assert_int_equal(rg_pos_parse("test-enc", &k), RG_OK);
    assert_int_equal(k, id);
    assert_ptr_equal(rg_pos_encoding_of(id), &TEST_ENC);
    assert_int_equal(rg_pos_register(&TEST_ENC, NULL), RG_ERR_ARG); /* once */
    assert_int_equal(rg_pos_parse("mystery", &k), RG_ERR_ARG);
    assert_contains(rg_last_error(), "'mystery'");
    assert_contains(rg_last_error(), "test-enc");
    assert_contains(rg_last_error(), "rg_pos_register");
    assert_null(rg_pos_encoding_of((rg_pos_kind)rg_pos_count()));
    assert_string_equal(rg_pos_name((rg_pos_kind)rg_pos_count()), "?");
}

/* ------------------------------------------------------------------ settings */

static void test_settings(void **state)
{
    rg_model_config cfg = small_config();
    cfg.pos = test_id();
    assert_true(rg_pos_config_get(&cfg, "testenc_width") == 4); /* the default */
    assert_true(rg_pos_config_get(&cfg, "t5_max_distance") == 128);
    assert_true(rg_pos_config_get(&cfg, "kerple_eps") == 0.01);
    assert_int_equal(rg_pos_config_set(&cfg, "testenc_width", 9), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "testenc_width", 10), RG_OK); /* replaces */
    assert_int_equal(cfg.n_pos_values, 1);
    assert_true(rg_pos_config_get(&cfg, "testenc_width") == 10);
    assert_int_equal(rg_pos_config_set_text(&cfg, "testenc_gain=1.25"), RG_OK);
    assert_true(rg_pos_config_get(&cfg, "testenc_gain") == 1.25);
    assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
    static const struct { const char *text, *want; } BAD[] = {
        {"testenc_width=65", "testenc_width = 65 must be an integer in [1, 64]"},
        {"testenc_width=2.5", "must be an integer"},
        {"testenc_gain=-1", "testenc_gain"},
        {"testenc_gain=nan", "testenc_gain"},
        {"testenc_gain=1x", "is not a number"},
        {"nosuch=1", "unknown encoding setting 'nosuch'"},
        {"=1", "NAME=VALUE"},
        {"testenc_gain", "NAME=VALUE"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        rg_model_config before = cfg;
        assert_int_equal(rg_pos_config_set_text(&cfg, BAD[i].text), RG_ERR_ARG);
        if (!strstr(rg_last_error(), BAD[i].want))
            fail_msg("'%s': '%s' lacks '%s'", BAD[i].text, rg_last_error(), BAD[i].want);
        assert_memory_equal(&cfg, &before, sizeof cfg);
    }
    assert_contains((rg_pos_config_set(&cfg, "nosuch", 1), rg_last_error()), "t5_num_buckets"); /* lists them */
    const char *eps = strstr(rg_last_error(), "kerple_eps"); /* once, though both kerple variants declare it */
    assert_non_null(eps);
    assert_null(strstr(eps + 1, "kerple_eps"));
    /* the encoding's validate hook, and values written directly */
    assert_int_equal(rg_pos_config_set(&cfg, "testenc_width", 13), RG_OK);
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    assert_contains(rg_last_error(), "unlucky");
    cfg.pos_values[0].value = 100;
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    assert_contains(rg_last_error(), "testenc_width");
    cfg.pos_values[0].value = 3;
    snprintf(cfg.pos_values[1].name, RG_POS_NAME_MAX, "testenc_width"); /* twice */
    cfg.pos_values[1].value = 3;
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    assert_contains(rg_last_error(), "twice");
    /* T5's relation between its settings */
    rg_model_config t5 = small_config();
    t5.pos = RG_POS_T5;
    assert_int_equal(rg_pos_config_set(&t5, "t5_max_distance", 16), RG_OK);
    assert_int_equal(rg_model_config_validate(&t5), RG_ERR_ARG);
    assert_contains(rg_last_error(), "t5_max_distance 16 must be > t5_num_buckets/2");
    /* capacity: RG_POS_VALUES_MAX values */
    rg_model_config full = small_config();
    full.n_pos_values = RG_POS_VALUES_MAX;
    for (int i = 0; i < RG_POS_VALUES_MAX; i++) snprintf(full.pos_values[i].name, RG_POS_NAME_MAX, "x%d", i);
    assert_int_equal(rg_pos_config_set(&full, "kerple_eps", 0.02), RG_ERR_ARG);
    assert_contains(rg_last_error(), "at most");
}

/* ------------------------------------------------------------------ checkpoints */

static void test_checkpoint_settings(void **state)
{
    char p[256];
    /* a registered encoding's settings round-trip */
    rg_model_config cfg = small_config();
    cfg.d_model = 16, cfg.n_heads = 2; /* head_dim 8 (const_bias) */
    cfg.pos = test_id();
    assert_int_equal(rg_pos_config_set(&cfg, "testenc_gain", 0.75), RG_OK);
    rg_model *m = NULL;
    assert_int_equal(rg_model_new(&cfg, 3, &m), RG_OK);
    path_in(p, sizeof p, "testenc.h5");
    assert_int_equal(rg_checkpoint_save(p, m, NULL, NULL), RG_OK);
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(p, &got, NULL), RG_OK);
    assert_int_equal(got.pos, cfg.pos);
    assert_true(rg_pos_config_get(&got, "testenc_gain") == 0.75 && rg_pos_config_get(&got, "testenc_width") == 4);
    assert_int_equal(rg_checkpoint_load(p, m, NULL, NULL), RG_OK);
    rg_model_free(m);
    /* a T5 setting that differs */
    rg_model_config t5 = small_config();
    t5.pos = RG_POS_T5;
    assert_int_equal(rg_model_new(&t5, 3, &m), RG_OK);
    path_in(p, sizeof p, "t5.h5");
    assert_int_equal(rg_checkpoint_save(p, m, NULL, NULL), RG_OK);
    rg_model_free(m);
    assert_int_equal(rg_pos_config_set(&t5, "t5_max_distance", 64), RG_OK);
    assert_int_equal(rg_model_new(&t5, 3, &m), RG_OK);
    assert_int_equal(rg_checkpoint_load(p, m, NULL, NULL), RG_ERR_ARG);
    assert_contains(rg_last_error(), "t5_max_distance is 128 in the checkpoint but 64");
    rg_model_free(m);
    /* an out-of-limits setting in a file */
    char bad[256];
    hid_t f = open_copy(p, bad, sizeof bad, "t5_bad.h5");
    put_i64(f, "/config", "t5_num_buckets", 2);
    close_edit(f, bad);
    assert_int_equal(rg_checkpoint_read_config(bad, &got, NULL), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "t5_num_buckets");
    /* an encoding this process has not registered */
    f = open_copy(p, bad, sizeof bad, "mystery.h5");
    put_str(f, "/config", "pos_encoding", "mystery-bias");
    close_edit(f, bad);
    assert_int_equal(rg_checkpoint_read_config(bad, &got, NULL), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), bad);
    assert_contains(rg_last_error(), "unknown position encoding 'mystery-bias'");
    assert_contains(rg_last_error(), "rg_pos_register");
}

/* ------------------------------------------------------------------ the programs */

/* Runs build/<rel> with args (NULL-terminated), output into out (cap bytes); the exit status, or -1. */
static int run(const char *rel, char *out, size_t cap, const char *const *args)
{
    const char *bd = getenv("RG_BUILD_DIR");
    char exe[PATH_MAX], log[300];
    snprintf(exe, sizeof exe, "%s/%s", bd && *bd ? bd : "build", rel);
    path_in(log, sizeof log, "log.txt");
    const char *argv[16] = {exe};
    for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    FILE *fl = fopen(log, "r");
    size_t n = fl ? fread(out, 1, cap - 1, fl) : 0;
    out[n] = 0;
    if (fl) fclose(fl);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_custom_encoding_example(void **state)
{
    static char out[1 << 14];
    const char *args[] = {"--steps", "40", "--out", g_dir, NULL};
    int rc = run("examples/custom_encoding", out, sizeof out, args);
    print_message("%s", out);
    assert_int_equal(rc, 0);
    assert_contains(out, "pos_encoding alibi-learned, alibi_learned_scale 0.5, step 40");
    assert_contains(out, "reloaded logits equal bit for bit");
    assert_int_equal(run("examples/custom_encoding", out, sizeof out, args), 2); /* never replaced */
    assert_contains(out, "exists already");
    /* its checkpoint in a process that did not register alibi-learned */
    char p[256];
    path_in(p, sizeof p, "alibi-learned.h5");
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(p, &got, NULL), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "unknown position encoding 'alibi-learned'");
    assert_contains(rg_last_error(), "rg_pos_register");
    const char *bad[] = {"--steps", "0", NULL};
    assert_int_equal(run("examples/custom_encoding", out, sizeof out, bad), 2);
}

static void test_train_order_pos_config(void **state)
{
    static char out[1 << 16];
    const char *ok[] = {"--pos", "kerple-log,kerple-power,t5", "--pos-config", "kerple_eps=0.02,t5_max_distance=64",
                        "--print-config", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, ok), 0);
    assert_contains(out, "\"pos\":\t\"t5,kerple-log,kerple-power\"");
    assert_contains(out, "\"pos_config\":\t\"t5_num_buckets=32,t5_max_distance=64,kerple_eps=0.02\"");
    const char *all[] = {"--print-config", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, all), 0);
    assert_contains(out, "fire,kerple-log,kerple-power\"");
    /* --pos all: the 11 1-D encodings, not the opt-in grid ones (rope-2d, rope-2d-pixtral, mrope), which are named */
    const char *all1d[] = {"--pos", "all", "--print-config", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, all1d), 0);
    assert_contains(out, "\"pos\":\t\"none,sinusoidal,learned,t5,xl,alibi,rope,rope-half,fire,kerple-log,kerple-power\"");
    const char *grid[] = {"--pos", "mrope,rope-2d", "--pos-config", "mrope_section_t=2,mrope_section_h=2,"
                          "mrope_section_w=4", "--print-config", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, grid), 0);
    assert_contains(out, "\"pos\":\t\"rope-2d,mrope\"");
    assert_contains(out, "mrope_section_t=2,mrope_section_h=2,mrope_section_w=4");
    const char *badsec[] = {"--pos", "mrope", "--pos-config", "mrope_section_h=4", "--print-config", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, badsec), 2);
    assert_contains(out, "mrope_section [0, 4, 0] must sum to rotary_dim / 2 = 8 pairs");
    const char *bad[] = {"--pos-config", "kerple_eps=5", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, bad), 2);
    assert_contains(out, "kerple_eps");
    /* each refusal says why, in the library's words (the limits), and a setting given twice is refused */
    static const struct { const char *value, *why; } why[] = {
        {"kerple_eps=0", "kerple_eps = 0 must be a number in [1e-06, 1]"},
        {"kerple_eps=abc", "kerple_eps: 'abc' is not a number"},
        {"garbage", "'garbage' is not NAME=VALUE"},
        {"kerple_epz=0.1", "unknown encoding setting 'kerple_epz'"},
        {"kerple_eps=0.1,kerple_eps=0.2", "kerple_eps is given twice"},
        {"kerple_eps=0.1,", "an empty item"},
    };
    for (size_t i = 0; i < sizeof why / sizeof *why; i++) {
        const char *argv[] = {"--pos-config", why[i].value, "--print-config", NULL};
        assert_int_equal(run("examples/train_order", out, sizeof out, argv), 2);
        if (!strstr(out, why[i].why)) fail_msg("--pos-config %s: no '%s' in:\n%s", why[i].value, why[i].why, out);
    }
    const char *t5bad[] = {"--pos", "t5", "--pos-config", "t5_max_distance=8", NULL};
    assert_int_equal(run("examples/train_order", out, sizeof out, t5bad), 2);
    assert_contains(out, "t5_max_distance 8 must be > t5_num_buckets/2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_refuses),        cmocka_unit_test(test_register_and_parse),
        cmocka_unit_test(test_settings),                cmocka_unit_test(test_checkpoint_settings),
        cmocka_unit_test(test_custom_encoding_example), cmocka_unit_test(test_train_order_pos_config),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
