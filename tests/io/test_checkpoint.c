/* test_checkpoint.c: HDF5 checkpoints (src/io/checkpoint.h): the run state, a bit-identical round trip, resume
 * bit for bit, config mismatches, bad arguments, every position encoding reloading to the same logits, and files
 * of the older layout (experiment keys in /config) loading. Bad files are tests/io/test_ckpt_corrupt.c, the atomic
 * save tests/io/test_ckpt_save.c, random damage tests/test_ckpt_fuzz.c. */
#include "ckpt_helpers.h"

static void test_run_state_api(void **state)
{
    rg_run_state rs;
    rg_run_state_init(&rs);
    rg_rng r;
    rg_rng_seed(&r, 3, 5);
    rg_rng *a = rg_run_state_add_rng(&rs, "data", &r);
    assert_non_null(a);
    assert_ptr_equal(rg_run_state_rng(&rs, "data"), a);
    assert_null(rg_run_state_rng(&rs, "nope"));
    rg_rng r2;
    rg_rng_seed(&r2, 4, 5);
    assert_ptr_equal(rg_run_state_add_rng(&rs, "data", &r2), a); /* overwrite, same slot */
    assert_int_equal(rs.n_rngs, 1);
    assert_true(a->state == r2.state);
    assert_null(rg_run_state_add_rng(&rs, "", &r));
    assert_null(rg_run_state_add_rng(&rs, "a/b", &r));
    assert_null(rg_run_state_add_rng(&rs, "0123456789012345678901234567890123456789", &r));
    for (int i = 1; i < RG_CKPT_MAX_RNGS; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "r%d", i);
        assert_non_null(rg_run_state_add_rng(&rs, nm, &r));
    }
    assert_null(rg_run_state_add_rng(&rs, "one_too_many", &r));
    assert_contains(rg_last_error(), "RG_CKPT_MAX_RNGS");

    assert_int_equal(rg_run_state_set_int(&rs, "k", 3), RG_OK);
    assert_int_equal(rg_run_state_set_str(&rs, "k", "text"), RG_OK); /* replaces, whatever the type */
    assert_int_equal(rs.n_attrs, 1);
    const rg_run_attr *at = rg_run_state_attr(&rs, "k");
    assert_non_null(at);
    assert_int_equal(at->type, RG_RUN_ATTR_STRING);
    assert_string_equal(at->s, "text");
    assert_null(rg_run_state_attr(&rs, "x"));
    char big[RG_CKPT_STR_LEN + 4];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(rg_run_state_set_str(&rs, "big", big), RG_ERR_ARG);
    /* a string value without its NUL (a state filled by hand) is refused before saving */
    assert_int_equal(rg_run_state_check(&rs), RG_OK);
    memset(rs.attrs[0].s, 'y', sizeof rs.attrs[0].s);
    assert_int_equal(rg_run_state_check(&rs), RG_ERR_ARG);
    assert_contains(rg_last_error(), "'k': string value not terminated");
}

/* Typed access to run attributes: missing and wrongly typed are errors, never defaults. */
static void test_run_state_getters(void **state)
{
    rg_run_state rs;
    rg_run_state_init(&rs);
    assert_int_equal(rg_run_state_set_int(&rs, "batch", 32), RG_OK);
    assert_int_equal(rg_run_state_set_str(&rs, "mode", "x"), RG_OK);
    int64_t v = -7;
    assert_int_equal(rg_run_state_get_int(&rs, "batch", 1, 4096, &v), RG_OK);
    assert_int_equal(v, 32);
    assert_int_equal(rg_run_state_get_int(&rs, "batch", 64, 4096, &v), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "'batch' = 32 is outside 64..4096");
    assert_int_equal(rg_run_state_get_int(&rs, "micro_batches", 1, 64, &v), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "run attribute 'micro_batches' is missing");
    assert_int_equal(rg_run_state_get_int(&rs, "mode", 1, 64, &v), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "'mode' is a string, expected an integer");
    assert_int_equal(v, 32);
    double d;
    assert_int_equal(rg_run_state_get_double(&rs, "batch", 0, 1, &d), RG_ERR_FORMAT);
    const char *s;
    assert_int_equal(rg_run_state_get_str(&rs, "mode", &s), RG_OK);
    assert_string_equal(s, "x");
    rg_rng *r;
    assert_int_equal(rg_run_state_get_rng(&rs, "positions", &r), RG_ERR_FORMAT);
    assert_contains(rg_last_error(), "no RNG 'positions'");
    assert_null(r);
}

static void test_roundtrip_bit_identical(void **state)
{
    char path[256];
    path_in(path, sizeof path, "rt.h5");
    rg_model *m = new_model(1);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 5);
    rg_run_state rs;
    run_state(&rs);
    assert_int_equal(rg_checkpoint_save(path, m, &opt, &rs), RG_OK);
    assert_int_equal(count_temp_files(), 0);
    snapshot s = snap(m, &opt);

    rg_model *m2 = new_model(2); /* different weights */
    rg_adamw opt2;
    rg_adamw_init(&opt2, &m2->params, 0.5, 0.5, 1e-3, 0.0); /* different hyperparameters */
    rg_run_state rs2;
    rg_run_state_init(&rs2);
    if (rg_checkpoint_load(path, m2, &opt2, &rs2) != RG_OK) fail_msg("load: %s", rg_last_error());
    assert_same(&s, m2, &opt2, "after load");
    assert_int_equal(opt2.step, 17);
    assert_true(opt2.beta1 == 0.9 && opt2.beta2 == 0.95 && opt2.eps == 1e-8 && opt2.weight_decay == 0.1);
    assert_int_equal(rs2.step, 17);
    assert_memory_equal(&rs2.lr, &rs.lr, sizeof rs.lr);
    assert_int_equal(rs2.n_rngs, 2);
    assert_string_equal(rs2.rngs[0].name, "data"); /* creation order kept */
    assert_string_equal(rs2.rngs[1].name, "positions");
    assert_memory_equal(&rs2.rngs[0].rng, &rs.rngs[0].rng, sizeof(rg_rng));
    assert_memory_equal(&rs2.rngs[1].rng, &rs.rngs[1].rng, sizeof(rg_rng));
    assert_int_equal(rs2.n_attrs, 3);
    assert_string_equal(rs2.attrs[0].key, "batch_size");
    assert_int_equal(rs2.attrs[0].type, RG_RUN_ATTR_INT);
    assert_int_equal(rs2.attrs[0].i, 32);
    assert_int_equal(rg_run_state_attr(&rs2, "label_smoothing")->type, RG_RUN_ATTR_DOUBLE);
    assert_true(rg_run_state_attr(&rs2, "label_smoothing")->d == 0.25);
    assert_string_equal(rg_run_state_attr(&rs2, "git_commit")->s, "88e8183");
    /* the loaded data RNG continues the saved stream */
    rg_rng *d1 = rg_run_state_rng(&rs, "data"), *d2 = rg_run_state_rng(&rs2, "data");
    for (int i = 0; i < 10; i++) assert_int_equal(rg_rng_u32(d1), rg_rng_u32(d2));

    /* read_config gives the model's config (resolved: rotary_dim = head_dim, rope_orig_len = max_len) */
    rg_model_config c;
    rg_run_state rs3;
    assert_int_equal(rg_checkpoint_read_config(path, &c, &rs3), RG_OK);
    rg_model_config want = small_config();
    assert_int_equal(c.vocab_size, want.vocab_size);
    assert_int_equal(c.d_model, want.d_model);
    assert_int_equal(c.n_heads, want.n_heads);
    assert_int_equal(c.n_layers, want.n_layers);
    assert_int_equal(c.d_ff, want.d_ff);
    assert_int_equal(c.max_len, want.max_len);
    assert_int_equal(c.causal, want.causal);
    assert_int_equal(c.pos, want.pos);
    assert_int_equal(c.rope_ext, want.rope_ext);
    assert_true(c.rope_base == want.rope_base && c.rope_scale == want.rope_scale);
    assert_int_equal(c.rotary_dim, want.d_model / want.n_heads);
    assert_int_equal(c.rope_orig_len, want.max_len);
    assert_int_equal(c.n_pos_values, 0); /* NoPE declares no settings */
    assert_int_equal(rs3.step, 17);
    assert_int_equal(rs3.n_attrs, 3);
    assert_string_equal(rg_run_state_attr(&rs3, "git_commit")->s, "88e8183");
    /* a model built from that config loads the checkpoint */
    rg_model *m3 = NULL;
    assert_int_equal(rg_model_new(&c, 3, &m3), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m3, NULL, NULL), RG_OK);
    assert_same(&s, m3, NULL, "model built from read_config");

    /* saving the loaded state again writes the same values */
    char path2[256];
    path_in(path2, sizeof path2, "rt2.h5");
    assert_int_equal(rg_checkpoint_save(path2, m2, &opt2, &rs2), RG_OK);
    rg_model *m4 = new_model(4);
    rg_adamw opt4;
    new_adamw(&opt4, m4);
    assert_int_equal(rg_checkpoint_load(path2, m4, &opt4, NULL), RG_OK);
    assert_same(&s, m4, &opt4, "second generation");

    snap_free(&s);
    rg_adamw_free(&opt4);
    rg_model_free(m4);
    rg_model_free(m3);
    rg_adamw_free(&opt2);
    rg_model_free(m2);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

static void test_save_without_optimizer(void **state)
{
    char path[256];
    path_in(path, sizeof path, "noopt.h5");
    rg_model *m = new_model(1);
    assert_int_equal(rg_checkpoint_save(path, m, NULL, NULL), RG_OK);
    rg_model *m2 = new_model(2);
    rg_run_state rs;
    assert_int_equal(rg_checkpoint_load(path, m2, NULL, &rs), RG_OK);
    snapshot s = snap(m, NULL);
    assert_same(&s, m2, NULL, "after load");
    assert_int_equal(rs.step, 0);
    assert_int_equal(rs.n_rngs, 0);
    snap_free(&s);
    rg_model_free(m2);
    rg_model_free(m);
    /* asking for moments that were not saved is an error, nothing changes */
    expect_load_error_opt(path, RG_ERR_FORMAT, "no optimizer state", NULL, true);
}

/* ---- resume: N steps == N/2 + save + load into fresh objects + N/2 */

enum { B = 4, T = 8, N_STEPS = 6 };

/* A batch drawn from rng: rows count up from a random start (mod vocab), target = next token (last = -100). */
static void draw_batch(rg_rng *rng, int vocab, int32_t *tok, int32_t *tgt)
{
    for (int b = 0; b < B; b++) {
        int32_t start = (int32_t)rg_rng_below(rng, (uint32_t)vocab);
        for (int t = 0; t < T; t++) tok[b * T + t] = (start + t) % vocab;
        for (int t = 0; t < T; t++) tgt[b * T + t] = t + 1 < T ? tok[b * T + t + 1] : -100;
    }
}

/* One training step using rs's "data" RNG and schedule; returns the loss. */
static double train_step(rg_ctx *c, rg_model *m, rg_adamw *opt, rg_run_state *rs)
{
    int32_t tok[B * T], tgt[B * T];
    rg_rng *data = rg_run_state_rng(rs, "data");
    assert_non_null(data);
    draw_batch(data, m->cfg.vocab_size, tok, tgt);
    rg_ctx_reset(c);
    rg_params_zero_grad(&m->params);
    rg_tensor *logits = NULL;
    if (rg_model_forward(c, m, tok, NULL, B, T, NULL, &logits) != RG_OK) fail_msg("forward: %s", rg_last_error());
    rg_tensor *loss = rg_cross_entropy(c, logits, tgt, -100);
    rg_backward(c, loss, NULL);
    rg_params_clip_grad_norm(&m->params, rs->lr.grad_clip);
    double lr = rg_lr_schedule(rs->lr.step, rs->lr.peak, rs->lr.warmup, rs->lr.total, rs->lr.min_frac);
    rg_adamw_step(opt, &m->params, lr);
    rs->lr.step++;
    rs->step++;
    return (double)loss->data[0];
}

static void init_run(rg_run_state *rs)
{
    rg_run_state_init(rs);
    rs->lr = (rg_lr_state){.step = 0, .peak = 1e-2, .warmup = 2, .total = N_STEPS, .min_frac = 0.1, .grad_clip = 0.5};
    rg_rng r;
    rg_rng_seed(&r, 42, 1);
    assert_non_null(rg_run_state_add_rng(rs, "data", &r));
}

static void test_resume_bitwise(void **state)
{
    char path[256];
    path_in(path, sizeof path, "resume.h5");
    rg_ctx *c = rg_ctx_new();

    /* uninterrupted */
    rg_model *a = new_model(7);
    rg_adamw oa;
    new_adamw(&oa, a);
    rg_run_state ra;
    init_run(&ra);
    double la[N_STEPS];
    for (int s = 0; s < N_STEPS; s++) la[s] = train_step(c, a, &oa, &ra);

    /* first half, save, drop everything */
    rg_model *b = new_model(7);
    rg_adamw ob;
    new_adamw(&ob, b);
    rg_run_state rb;
    init_run(&rb);
    double lb[N_STEPS];
    for (int s = 0; s < N_STEPS / 2; s++) lb[s] = train_step(c, b, &ob, &rb);
    assert_int_equal(rg_checkpoint_save(path, b, &ob, &rb), RG_OK);
    rg_adamw_free(&ob);
    rg_model_free(b);

    /* fresh model (other init seed), fresh optimizer, fresh run state: load and continue */
    rg_model *b2 = new_model(1234);
    rg_adamw ob2;
    new_adamw(&ob2, b2);
    rg_run_state rb2;
    rg_run_state_init(&rb2);
    if (rg_checkpoint_load(path, b2, &ob2, &rb2) != RG_OK) fail_msg("load: %s", rg_last_error());
    assert_int_equal(rb2.step, N_STEPS / 2);
    assert_int_equal(ob2.step, N_STEPS / 2);
    for (int s = N_STEPS / 2; s < N_STEPS; s++) lb[s] = train_step(c, b2, &ob2, &rb2);

    for (int s = 0; s < N_STEPS; s++)
        if (memcmp(&la[s], &lb[s], sizeof(double)) != 0)
            fail_msg("loss of step %d: %.9g uninterrupted, %.9g resumed", s, la[s], lb[s]);
    assert_true(la[N_STEPS - 1] < la[0]); /* it did train */
    snapshot sa = snap(a, &oa);
    assert_same(&sa, b2, &ob2, "resumed vs uninterrupted");
    assert_int_equal(oa.step, ob2.step);
    assert_memory_equal(&ra.rngs[0].rng, &rb2.rngs[0].rng, sizeof(rg_rng));
    assert_memory_equal(&ra.lr, &rb2.lr, sizeof ra.lr);
    snap_free(&sa);
    rg_adamw_free(&ob2);
    rg_model_free(b2);
    rg_adamw_free(&oa);
    rg_model_free(a);
    rg_ctx_free(c);
}

static void test_config_mismatch(void **state)
{
    char ref[256];
    save_reference(ref, sizeof ref, "cfg_ref.h5");
    struct {
        const char *key;
        rg_model_config c;
    } cases[6];
    for (int i = 0; i < 6; i++) cases[i].c = small_config();
    cases[0].key = "d_ff is 32 in the checkpoint but 48 in the model";
    cases[0].c.d_ff = 48;
    cases[1].key = "n_layers is 2 in the checkpoint but 1 in the model";
    cases[1].c.n_layers = 1;
    cases[2].key = "causal is 1 in the checkpoint but 0";
    cases[2].c.causal = false;
    cases[3].key = "rope_base is 10000 in the checkpoint but 500";
    cases[3].c.rope_base = 500;
    cases[4].key = "max_len is 16 in the checkpoint but 20";
    cases[4].c.max_len = 20;
    cases[5].key = "pos_encoding is 'none' in the checkpoint but 't5'"; /* settings: test_pos_registry.c */
    cases[5].c.pos = RG_POS_T5;
    for (int i = 0; i < 6; i++) {
        rg_model *m = NULL;
        if (rg_model_new(&cases[i].c, 9, &m) != RG_OK) fail_msg("rg_model_new: %s", rg_last_error());
        snapshot s = snap(m, NULL);
        rg_status st = rg_checkpoint_load(ref, m, NULL, NULL);
        assert_int_equal(st, RG_ERR_ARG);
        assert_contains(rg_last_error(), "config mismatch");
        assert_contains(rg_last_error(), cases[i].key);
        assert_same(&s, m, NULL, "after a config mismatch");
        snap_free(&s);
        rg_model_free(m);
    }
}

static void test_bad_arguments(void **state)
{
    char p[256];
    path_in(p, sizeof p, "args.h5");
    rg_model *m = new_model(1);
    assert_int_equal(rg_checkpoint_save(p, NULL, NULL, NULL), RG_ERR_ARG);
    rg_model_config c = small_config();
    c.n_layers = 1;
    rg_model *m1 = NULL;
    assert_int_equal(rg_model_new(&c, 1, &m1), RG_OK);
    rg_adamw opt1;
    new_adamw(&opt1, m1);
    assert_int_equal(rg_checkpoint_save(p, m, &opt1, NULL), RG_ERR_ARG); /* optimizer of another model */
    assert_false(file_exists(p));
    rg_run_state rs;
    rg_run_state_init(&rs);
    rs.n_rngs = 1; /* an unnamed RNG */
    assert_int_equal(rg_checkpoint_save(p, m, NULL, &rs), RG_ERR_ARG);
    assert_false(file_exists(p));
    rg_adamw_free(&opt1);
    rg_model_free(m1);
    rg_model_free(m);
}

/* ---- every position encoding: checkpoint -> read_config -> rg_model_new -> load gives bitwise-equal logits.
 * Also writes <dir>/export_<name>.h5 (the checkpoint) and <dir>/export_<name>_logits.h5 (/tokens int32 [B, T],
 * /logits float32 [B, T, V] from the C forward) for tools/ckpt_to_torch.py --logits; <dir> is
 * $RG_CKPT_EXPORT_DIR if set (kept), else the test's temp folder (removed). */

static void write_logits_file(const char *path, const int32_t *tok, int b, int t, const rg_tensor *logits)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hsize_t d2[2] = {(hsize_t)b, (hsize_t)t};
    hid_t s = H5Screate_simple(2, d2, NULL);
    hid_t d = H5Dcreate2(f, "tokens", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, tok) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    hsize_t d3[3] = {(hsize_t)logits->shape[0], (hsize_t)logits->shape[1], (hsize_t)logits->shape[2]};
    s = H5Screate_simple(3, d3, NULL);
    d = H5Dcreate2(f, "logits", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, logits->data) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
}

static void test_every_encoding_reloads(void **state)
{
    const char *dir = getenv("RG_CKPT_EXPORT_DIR");
    if (!dir || !dir[0]) dir = g_dir;
    struct {
        const char *name, *pos, *ext;
        int rotary_dim;
        double scale;
    } cases[] = {
        {"none", "none", "none", 0, 1},
        {"sinusoidal", "sinusoidal", "none", 0, 1},
        {"learned", "learned", "none", 0, 1},
        {"t5", "t5", "none", 0, 1},
        {"xl", "xl", "none", 0, 1},
        {"alibi", "alibi", "none", 0, 1},
        {"rope", "rope", "none", 0, 1},
        {"rope-half", "rope-half", "none", 0, 1},
        {"rope-half_partial_ntk", "rope-half", "ntk", 4, 2},
        {"rope_yarn", "rope", "yarn", 0, 2},
        {"rope-2d", "rope-2d", "none", 0, 1},
        {"rope-2d-pixtral", "rope-2d-pixtral", "none", 0, 1},
        {"mrope", "mrope", "none", 0, 1},
    };
    enum { EB = 2, ET = 12 };
    int32_t tok[EB * ET];
    rg_rng r;
    rg_rng_seed(&r, 2024, 9);
    for (int i = 0; i < EB * ET; i++) tok[i] = (int32_t)rg_rng_below(&r, 11);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rg_model_config cfg = small_config();
        assert_int_equal(rg_pos_parse(cases[k].pos, &cfg.pos), RG_OK);
        assert_int_equal(rg_rope_ext_parse(cases[k].ext, &cfg.rope_ext), RG_OK);
        cfg.rotary_dim = cases[k].rotary_dim;
        cfg.rope_scale = cases[k].scale;
        cfg.rope_orig_len = cases[k].scale != 1 ? 6 : 0;
        rg_model *m = NULL;
        if (rg_model_new(&cfg, 11 + k, &m) != RG_OK) fail_msg("rg_model_new(%s): %s", cases[k].name, rg_last_error());
        /* perturb every parameter (zero biases, unit LayerNorm weights, zero u/v would hide a wrong mapping) */
        for (int i = 0; i < m->params.n; i++) {
            rg_tensor *p = m->params.items[i];
            for (int64_t j = 0; j < p->numel; j++) p->data[j] += (rg_real)(0.05 * rg_rng_normal(&r));
        }
        char ck[512], lg[512];
        snprintf(ck, sizeof ck, "%s/export_%s.h5", dir, cases[k].name);
        snprintf(lg, sizeof lg, "%s/export_%s_logits.h5", dir, cases[k].name);
        if (rg_checkpoint_save(ck, m, NULL, NULL) != RG_OK) fail_msg("save %s: %s", ck, rg_last_error());
        rg_ctx_reset(c);
        rg_tensor *l1 = NULL;
        assert_int_equal(rg_model_forward(c, m, tok, NULL, EB, ET, NULL, &l1), RG_OK);
        write_logits_file(lg, tok, EB, ET, l1);

        rg_model_config c2;
        assert_int_equal(rg_checkpoint_read_config(ck, &c2, NULL), RG_OK);
        rg_model *m2 = NULL;
        if (rg_model_new(&c2, 999, &m2) != RG_OK) fail_msg("rg_model_new(read_config %s): %s", ck, rg_last_error());
        if (rg_checkpoint_load(ck, m2, NULL, NULL) != RG_OK) fail_msg("load %s: %s", ck, rg_last_error());
        rg_tensor *l2 = NULL;
        assert_int_equal(rg_model_forward(c, m2, tok, NULL, EB, ET, NULL, &l2), RG_OK);
        assert_int_equal(l1->numel, l2->numel);
        if (memcmp(l1->data, l2->data, (size_t)l1->numel * sizeof(rg_real)) != 0)
            fail_msg("%s: logits after reload differ", cases[k].name);
        rg_model_free(m2);
        rg_model_free(m);
    }
    rg_ctx_free(c);
}

/* Files written before the experiment settings moved to /run hold /config task (string), L_train (int64) and seed
 * (uint64), with the same format_version 1. The library no longer writes them; on reading they are ignored: such a
 * file loads (parameters, moments and run state as saved), also with values the old reader refused. */
static void test_legacy_config_keys_ignored(void **state)
{
    (void)state;
    char ref[256], p[256];
    rg_model *m = new_model(1);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 5);
    rg_run_state rs;
    run_state(&rs);
    path_in(ref, sizeof ref, "legacy_ref.h5");
    assert_int_equal(rg_checkpoint_save(ref, m, &opt, &rs), RG_OK);
    snapshot s = snap(m, &opt);
    hid_t f = open_rw(ref);
    const char *gone[] = {"task", "L_train", "seed"};
    for (int i = 0; i < 3; i++)
        if (H5Aexists_by_name(f, "/config", gone[i], H5P_DEFAULT) != 0) fail_msg("/config %s is still written", gone[i]);
    H5Fclose(f);
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "legacy%d.h5", k);
        f = open_copy(ref, p, sizeof p, name);
        if (k == 0) { /* as train_order wrote them */
            put_str(f, "/config", "task", "sort");
            put_i64(f, "/config", "L_train", 12);
            put_u64(f, "/config", "seed", 0xfeedfacecafebeefULL);
        } else { /* values the old reader refused: not read any more */
            put_f64(f, "/config", "task", 1.5);
            put_i64(f, "/config", "L_train", (int64_t)1 << 40);
            put_i64(f, "/config", "seed", -3);
        }
        close_edit(f, p);
        rg_model *m2 = new_model(2);
        rg_adamw opt2;
        new_adamw(&opt2, m2);
        rg_run_state rs2, rs3;
        rg_model_config c;
        if (rg_checkpoint_load(p, m2, &opt2, &rs2) != RG_OK) fail_msg("load %s: %s", name, rg_last_error());
        assert_same(&s, m2, &opt2, name);
        if (rg_checkpoint_read_config(p, &c, &rs3) != RG_OK) fail_msg("read_config %s: %s", name, rg_last_error());
        assert_int_equal(c.d_model, m->cfg.d_model);
        const rg_run_state *got[] = {&rs2, &rs3};
        for (int j = 0; j < 2; j++) {
            assert_int_equal(got[j]->step, rs.step);
            assert_memory_equal(&got[j]->lr, &rs.lr, sizeof rs.lr);
            assert_int_equal(got[j]->n_rngs, rs.n_rngs);
            assert_memory_equal(&got[j]->rngs[0].rng, &rs.rngs[0].rng, sizeof(rg_rng));
            assert_int_equal(got[j]->n_attrs, rs.n_attrs); /* nothing of /config shows up as a run attribute */
            for (int i = 0; i < 3; i++) assert_null(rg_run_state_attr(got[j], gone[i]));
        }
        rg_adamw_free(&opt2);
        rg_model_free(m2);
    }
    snap_free(&s);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_state_api),
        cmocka_unit_test(test_run_state_getters),
        cmocka_unit_test(test_roundtrip_bit_identical),
        cmocka_unit_test(test_save_without_optimizer),
        cmocka_unit_test(test_resume_bitwise),
        cmocka_unit_test(test_config_mismatch),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_every_encoding_reloads),
        cmocka_unit_test(test_legacy_config_keys_ignored),
    };
    return cmocka_run_group_tests_name("checkpoint", tests, setup, teardown);
}
