/* test_checkpoint.c: HDF5 checkpoints (src/io/checkpoint.h): bit-identical round trip and resume, atomic save,
 * and every kind of bad file rejected with its message while the model stays untouched.
 * All files go into a fresh mkdtemp folder under /tmp, removed at the end. */
#include "common.h"
#include "io/checkpoint.h"

#include <dirent.h>
#include <signal.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[64];

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

static rg_model_config small_config(void)
{
    rg_model_config c = rg_model_config_default();
    c.vocab_size = 11;
    c.d_model = 16;
    c.n_heads = 2;
    c.n_layers = 2;
    c.d_ff = 32;
    c.max_len = 16;
    return c;
}

static rg_model *new_model(uint64_t seed)
{
    rg_model_config c = small_config();
    rg_model *m = NULL;
    rg_status st = rg_model_new(&c, seed, &m);
    if (st != RG_OK) fail_msg("rg_model_new: %s", rg_last_error());
    return m;
}

static void new_adamw(rg_adamw *opt, rg_model *m)
{
    if (rg_adamw_init(opt, &m->params, 0.9, 0.95, 1e-8, 0.1) != RG_OK) fail_msg("rg_adamw_init: %s", rg_last_error());
}

/* Fills the optimizer moments with distinct values (v >= 0) and a step count. */
static void fill_moments(rg_adamw *opt, rg_model *m, uint64_t seed)
{
    rg_rng r;
    rg_rng_seed(&r, seed, 3);
    for (int i = 0; i < m->params.n; i++)
        for (int64_t j = 0; j < m->params.items[i]->numel; j++) {
            opt->m[i][j] = (rg_real)rg_rng_normal(&r);
            opt->v[i][j] = (rg_real)rg_rng_uniform(&r);
        }
    opt->step = 17;
}

static void run_state(rg_run_state *rs)
{
    rg_run_state_init(rs);
    rs->step = 17;
    snprintf(rs->task, sizeof rs->task, "sort");
    rs->L_train = 12;
    rs->seed = 0xfeedfacecafebeefULL;
    rs->lr = (rg_lr_state){.step = 17, .peak = 3e-3, .warmup = 5, .total = 100, .min_frac = 0.1, .grad_clip = 1.0};
    rg_rng a, b;
    rg_rng_seed(&a, 1, 1);
    rg_rng_seed(&b, 2, 7);
    for (int i = 0; i < 5; i++) rg_rng_u32(&a);
    assert_non_null(rg_run_state_add_rng(rs, "data", &a));
    assert_non_null(rg_run_state_add_rng(rs, "positions", &b));
    assert_int_equal(rg_run_state_set_int(rs, "batch_size", 32), RG_OK);
    assert_int_equal(rg_run_state_set_double(rs, "label_smoothing", 0.25), RG_OK);
    assert_int_equal(rg_run_state_set_str(rs, "git_commit", "88e8183"), RG_OK);
}

/* A bitwise copy of every parameter (and moment, when opt != NULL) of m. */
typedef struct {
    int n;
    rg_real **p, **m, **v;
} snapshot;

static snapshot snap(const rg_model *m, const rg_adamw *opt)
{
    snapshot s = {m->params.n, calloc((size_t)m->params.n, sizeof(rg_real *)),
                  calloc((size_t)m->params.n, sizeof(rg_real *)), calloc((size_t)m->params.n, sizeof(rg_real *))};
    for (int i = 0; i < s.n; i++) {
        size_t b = (size_t)m->params.items[i]->numel * sizeof(rg_real);
        s.p[i] = malloc(b);
        memcpy(s.p[i], m->params.items[i]->data, b);
        if (opt) {
            s.m[i] = malloc(b);
            s.v[i] = malloc(b);
            memcpy(s.m[i], opt->m[i], b);
            memcpy(s.v[i], opt->v[i], b);
        }
    }
    return s;
}

static void assert_same(const snapshot *s, const rg_model *m, const rg_adamw *opt, const char *when)
{
    assert_int_equal(s->n, m->params.n);
    for (int i = 0; i < s->n; i++) {
        const rg_tensor *p = m->params.items[i];
        size_t b = (size_t)p->numel * sizeof(rg_real);
        if (memcmp(s->p[i], p->data, b) != 0) fail_msg("%s: parameter %s differs", when, p->name);
        if (opt && s->m[i] && memcmp(s->m[i], opt->m[i], b) != 0) fail_msg("%s: exp_avg of %s differs", when, p->name);
        if (opt && s->v[i] && memcmp(s->v[i], opt->v[i], b) != 0)
            fail_msg("%s: exp_avg_sq of %s differs", when, p->name);
    }
}

static void snap_free(snapshot *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->p[i]);
        free(s->m[i]);
        free(s->v[i]);
    }
    free(s->p);
    free(s->m);
    free(s->v);
}

static void assert_contains(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("error message '%s' does not mention '%s'", msg, want);
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Number of entries of g_dir whose name contains ".tmp.". */
static int count_temp_files(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

/* Saves a reference checkpoint (model seed 1, moments, run state) to `name`; returns its full path in buf. */
static void save_reference(char *buf, size_t n, const char *name)
{
    path_in(buf, n, name);
    rg_model *m = new_model(1);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 5);
    rg_run_state rs;
    run_state(&rs);
    if (rg_checkpoint_save(buf, m, &opt, &rs) != RG_OK) fail_msg("save: %s", rg_last_error());
    rg_adamw_free(&opt);
    rg_model_free(m);
}

/* Loads `path` into a fresh model + optimizer + run state and checks that it fails with `code`, a message
 * containing each of want1/want2 (if not NULL), and that nothing was modified. Unless the error is about the
 * optimizer state only (optim_only), a load without optimizer must fail the same way. */
static void expect_load_error_opt(const char *path, rg_status code, const char *want1, const char *want2,
                                  bool optim_only)
{
    rg_model *m = new_model(99);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 77);
    rg_run_state rs, rs0;
    rg_run_state_init(&rs);
    rs.step = 5;
    rs0 = rs;
    snapshot s = snap(m, &opt);
    int64_t step0 = opt.step;
    double b1 = opt.beta1;
    rg_status st = rg_checkpoint_load(path, m, &opt, &rs);
    if (st != code) fail_msg("load %s: status %d, want %d (%s)", path, (int)st, (int)code, rg_last_error());
    assert_contains(rg_last_error(), path);
    if (want1) assert_contains(rg_last_error(), want1);
    if (want2) assert_contains(rg_last_error(), want2);
    assert_same(&s, m, &opt, "after a failed load");
    assert_int_equal(opt.step, step0);
    assert_true(opt.beta1 == b1);
    assert_memory_equal(&rs, &rs0, sizeof rs);
    /* without an optimizer too (the moments are then not read, the rest is checked the same way) */
    if (!optim_only) {
        st = rg_checkpoint_load(path, m, NULL, NULL);
        if (st != code) fail_msg("load %s without optimizer: status %d, want %d (%s)", path, (int)st, (int)code,
                                 rg_last_error());
        assert_same(&s, m, NULL, "after a failed load without optimizer");
    }
    snap_free(&s);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

static void expect_load_error(const char *path, rg_status code, const char *want1, const char *want2)
{
    expect_load_error_opt(path, code, want1, want2, false);
}

/* ------------------------------------------------------------------ HDF5 surgery on a saved checkpoint */

static hid_t open_rw(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s for surgery", path);
    return f;
}

static void put_dataset(hid_t f, const char *name, hid_t type, int nd, const hsize_t *dims)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0) assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hsize_t n = 1;
    for (int i = 0; i < nd; i++) n *= dims[i];
    double *zeros = calloc((size_t)n, sizeof(double));
    hid_t s = H5Screate_simple(nd, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    free(zeros);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

/* Copies the checkpoint ref to `name` in the test folder (its full path into buf) and opens the copy for surgery. */
static hid_t open_copy(const char *ref, char *buf, size_t n, const char *name)
{
    path_in(buf, n, name);
    copy_file(ref, buf);
    return open_rw(buf);
}

/* Closes a file after surgery and recomputes its digest (an edit made on purpose), so that the load reaches the
 * check under test. */
static void close_edit(hid_t f, const char *path)
{
    assert_true(H5Fclose(f) >= 0);
    if (rg_checkpoint_seal(path) != RG_OK) fail_msg("seal %s: %s", path, rg_last_error());
}

/* ------------------------------------------------------------------ tests */

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
    assert_string_equal(rs2.task, "sort");
    assert_int_equal(rs2.L_train, 12);
    assert_true(rs2.seed == 0xfeedfacecafebeefULL);
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
    assert_int_equal(c.t5_num_buckets, want.t5_num_buckets);
    assert_int_equal(rs3.step, 17);
    assert_string_equal(rs3.task, "sort");
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
    cases[5].key = "t5_max_distance is 128 in the checkpoint but 64";
    cases[5].c.t5_max_distance = 64;
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

static int g_hook_calls;
static char g_hook_tmp[512];

static int fail_hook(const char *tmp)
{
    g_hook_calls++;
    snprintf(g_hook_tmp, sizeof g_hook_tmp, "%s", tmp);
    /* the temporary file is complete at this point and lives next to the target */
    assert_true(file_exists(tmp));
    assert_true(strncmp(tmp, g_dir, strlen(g_dir)) == 0);
    return 1;
}

static void test_failure_before_rename(void **state)
{
    char ref[256];
    save_reference(ref, sizeof ref, "atomic.h5");
    struct stat st0, st1;
    assert_int_equal(stat(ref, &st0), 0);

    rg_model *m = new_model(555);
    rg_adamw opt;
    new_adamw(&opt, m);
    g_hook_calls = 0;
    rg_checkpoint_test_hook_before_rename = fail_hook;
    rg_status st = rg_checkpoint_save(ref, m, &opt, NULL);
    rg_checkpoint_test_hook_before_rename = NULL;
    assert_int_equal(st, RG_ERR_IO);
    assert_contains(rg_last_error(), "simulated failure");
    assert_int_equal(g_hook_calls, 1);
    assert_false(file_exists(g_hook_tmp));
    assert_int_equal(count_temp_files(), 0);
    assert_int_equal(stat(ref, &st1), 0);
    assert_int_equal(st0.st_ino, st1.st_ino);

    /* the old checkpoint is intact: it loads and has the reference (seed 1) values */
    rg_model *want = new_model(1);
    snapshot s = snap(want, NULL);
    assert_int_equal(rg_checkpoint_load(ref, m, &opt, NULL), RG_OK);
    assert_same(&s, m, NULL, "old checkpoint after a failed save");
    snap_free(&s);
    rg_model_free(want);

    /* a save into a folder that does not exist */
    char p[256];
    path_in(p, sizeof p, "no/such/folder/ck.h5");
    st = rg_checkpoint_save(p, m, &opt, NULL);
    assert_int_equal(st, RG_ERR_IO);
    assert_contains(rg_last_error(), "No such file or directory");
    assert_false(file_exists(p));
    rg_adamw_free(&opt);
    rg_model_free(m);
}

/* kill -9 of a process in the middle of saves: the target is always a complete checkpoint (the old or the new
 * one), never a partial file. A killed save may leave its <path>.tmp.<pid> behind (documented). */
static void test_kill_during_save(void **state)
{
    char p[256];
    path_in(p, sizeof p, "killed.h5");
    rg_model *a = new_model(21), *b = new_model(22);
    assert_int_equal(rg_checkpoint_save(p, a, NULL, NULL), RG_OK);
    snapshot sa = snap(a, NULL), sb = snap(b, NULL);
    rg_model *m = new_model(23);
    for (int round = 0; round < 8; round++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0;; i++)
                if (rg_checkpoint_save(p, i % 2 ? a : b, NULL, NULL) != RG_OK) _exit(1);
        }
        struct timespec ts = {0, (long)(1000 + 2500 * round) * 1000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int wst;
        waitpid(pid, &wst, 0);
        assert_true(WIFSIGNALED(wst)); /* it was still saving, not failing */
        if (rg_checkpoint_load(p, m, NULL, NULL) != RG_OK) fail_msg("round %d: %s", round, rg_last_error());
        bool is_a = true, is_b = true;
        for (int i = 0; i < m->params.n; i++) {
            size_t n = (size_t)m->params.items[i]->numel * sizeof(rg_real);
            is_a = is_a && memcmp(sa.p[i], m->params.items[i]->data, n) == 0;
            is_b = is_b && memcmp(sb.p[i], m->params.items[i]->data, n) == 0;
        }
        assert_true(is_a || is_b);
        char tmp[300];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
        unlink(tmp);
        assert_int_equal(count_temp_files(), 0);
    }
    snap_free(&sa);
    snap_free(&sb);
    rg_model_free(m);
    rg_model_free(b);
    rg_model_free(a);
}

/* Another process holds the checkpoint open for writing (HDF5 file locking): a clear error, no crash. */
static void test_locked_file(void **state)
{
    const char *env = getenv("HDF5_USE_FILE_LOCKING");
    if (env && (strcmp(env, "FALSE") == 0 || strcmp(env, "0") == 0)) skip();
    char ref[256];
    save_reference(ref, sizeof ref, "locked.h5");
    int to_child[2], to_parent[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        hid_t f = H5Fopen(ref, H5F_ACC_RDWR, H5P_DEFAULT);
        char ok = f >= 0 ? 'y' : 'n';
        if (write(to_parent[1], &ok, 1) != 1) _exit(2);
        char c;
        if (read(to_child[0], &c, 1) != 1) _exit(3);
        _exit(0); /* the lock goes with the process */
    }
    close(to_child[0]);
    close(to_parent[1]);
    char ok = 0;
    assert_int_equal(read(to_parent[0], &ok, 1), 1);
    rg_status st = RG_OK;
    char msg[1024] = "";
    if (ok == 'y') {
        rg_model *m = new_model(8);
        snapshot s = snap(m, NULL);
        st = rg_checkpoint_load(ref, m, NULL, NULL);
        snprintf(msg, sizeof msg, "%s", rg_last_error());
        assert_same(&s, m, NULL, "after a locked load");
        snap_free(&s);
        rg_model_free(m);
    }
    char c = 'q';
    assert_int_equal(write(to_child[1], &c, 1), 1);
    int wst;
    waitpid(pid, &wst, 0);
    close(to_child[1]);
    close(to_parent[0]);
    if (ok != 'y') fail_msg("the child could not open %s for writing", ref);
    if (st == RG_OK) skip(); /* file locking unsupported on this file system */
    if (st != RG_ERR_IO) fail_msg("locked file: status %d, want RG_ERR_IO (%s)", (int)st, msg);
    assert_contains(msg, "locked by another process");
    /* once the writer is gone, the file loads (HDF5 rewrote parts of it when opening it for writing: sealed
     * again, as an edit) */
    assert_int_equal(rg_checkpoint_seal(ref), RG_OK);
    rg_model *m = new_model(8);
    if (rg_checkpoint_load(ref, m, NULL, NULL) != RG_OK) fail_msg("after the writer: %s", rg_last_error());
    rg_model_free(m);
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


/* ---- the corruption and validation cases: one table, one loop. Each mutation edits a copy of the reference
 * checkpoint with HDF5 (then the copy is sealed again: an edit made on purpose, so that the check under test is
 * reached, not the digest); the load must fail with the status and a message containing `msg`, and change
 * nothing. */

/* Replaces (or creates) the scalar attribute obj/name with one of `type` holding *v (in the same type). */
static void put_attr(hid_t f, const char *obj, const char *name, hid_t type, const void *v)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) assert_true(H5Adelete_by_name(f, obj, name, H5P_DEFAULT) >= 0);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate_by_name(f, obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, type, v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
}

static void put_f64(hid_t f, const char *obj, const char *name, double v) { put_attr(f, obj, name, H5T_NATIVE_DOUBLE, &v); }
static void put_i64(hid_t f, const char *obj, const char *name, int64_t v) { put_attr(f, obj, name, H5T_NATIVE_INT64, &v); }

/* Sets element `index` of a float dataset to v. */
static void poke(hid_t f, const char *dset, int index, double v)
{
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t s = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    double *x = malloc((size_t)n * sizeof *x);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    x[index] = v;
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    free(x);
    H5Sclose(s);
    H5Dclose(d);
}

static void m_nan_weight(hid_t f) { poke(f, "/params/ln_f.weight", 3, NAN); }
static void m_inf_moment(hid_t f) { poke(f, "/optim/exp_avg/tok_emb.weight", 0, -INFINITY); }
static void m_negative_v(hid_t f) { poke(f, "/optim/exp_avg_sq/lm_head.weight", 5, -1e-3); }
static void m_beta1_negative(hid_t f) { put_f64(f, "/optim", "beta1", -0.1); }
static void m_beta2_one(hid_t f) { put_f64(f, "/optim", "beta2", 1.0); }
static void m_eps_negative(hid_t f) { put_f64(f, "/optim", "eps", -1e-8); }
static void m_wd_nan(hid_t f) { put_f64(f, "/optim", "weight_decay", NAN); }
static void m_lr_negative(hid_t f) { put_f64(f, "/optim", "lr_peak", -3e-3); }
static void m_min_frac(hid_t f) { put_f64(f, "/optim", "lr_min_frac", 1.5); }
static void m_step_negative(hid_t f) { put_i64(f, "/", "step", -1); }
static void m_optim_step_huge(hid_t f) { put_i64(f, "/optim", "step", (int64_t)1 << 40); }
static void m_lr_total_wraps(hid_t f) { put_i64(f, "/optim", "lr_total", ((int64_t)1 << 32) + 55); }
static void m_lr_step_negative(hid_t f) { put_i64(f, "/optim", "lr_step", -5); }
static void m_no_rng(hid_t f) { assert_true(H5Ldelete(f, "/rng", H5P_DEFAULT) >= 0); }
static void m_no_run(hid_t f) { assert_true(H5Ldelete(f, "/run", H5P_DEFAULT) >= 0); }
static void m_rng_shape(hid_t f)
{
    hsize_t d[1] = {3};
    put_dataset(f, "/rng/data", H5T_STD_U64LE, 1, d);
}
static void m_rng_dtype(hid_t f)
{
    hsize_t d[1] = {2};
    put_dataset(f, "/rng/positions", H5T_IEEE_F64LE, 1, d);
}
static void m_no_has_adamw(hid_t f) { assert_true(H5Adelete_by_name(f, "optim", "has_adamw", H5P_DEFAULT) >= 0); }
static void m_d_ff_float(hid_t f) { put_f64(f, "/config", "d_ff", 32.0); }
static void m_n_heads_zero(hid_t f) { put_i64(f, "/config", "n_heads", 0); }
static void m_seed_negative(hid_t f) { put_i64(f, "/config", "seed", -3); }
static void m_L_train_huge(hid_t f) { put_i64(f, "/config", "L_train", (int64_t)1 << 31); }
static void m_run_attr_compound(hid_t f)
{
    hsize_t two = 2;
    hid_t s = H5Screate_simple(1, &two, NULL);
    hid_t a = H5Acreate_by_name(f, "/run", "pair", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int32_t v[2] = {1, 2};
    H5Awrite(a, H5T_NATIVE_INT32, v);
    H5Aclose(a);
    H5Sclose(s);
}

/* Whole-file mutations of the copy at `path` (not sealed: the file itself is what is wrong). */
static void cut_to(const char *path, long size) { assert_int_equal(truncate(path, size), 0); }
static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}
static void f_empty(const char *p) { cut_to(p, 0); }
static void f_cut_8(const char *p) { cut_to(p, 8); }
static void f_cut_300(const char *p) { cut_to(p, 300); }
static void f_cut_700(const char *p) { cut_to(p, 700); }
static void f_cut_half(const char *p) { cut_to(p, file_size(p) / 2); }
static void f_cut_last(const char *p) { cut_to(p, file_size(p) - 1); }
static void f_text(const char *p)
{
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    for (int i = 0; i < 100; i++) fprintf(f, "this is not an HDF5 file, line %d\n", i);
    fclose(f);
}
static void f_missing(const char *p) { assert_int_equal(unlink(p), 0); }
static void f_folder(const char *p)
{
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkdir(p, 0755), 0);
}
/* An HDF5 file of another program: /params only, no root attributes. */
static void f_foreign(const char *p)
{
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gcreate2(f, "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {11, 16};
    put_dataset(g, "tok_emb.weight", H5T_IEEE_F32LE, 2, dims);
    H5Gclose(g);
    H5Fclose(f);
}
/* The same with a format attribute of another program. */
static void f_keras(const char *p)
{
    f_foreign(p);
    hid_t f = open_rw(p);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 8);
    put_attr(f, "/", "format", t, "keras\0\0\0");
    H5Tclose(t);
    H5Fclose(f);
}

static void m_version_2(hid_t f)
{
    int32_t v = 2;
    put_attr(f, "/", "format_version", H5T_NATIVE_INT32, &v);
}
static void m_shape(hid_t f)
{
    hsize_t d[2] = {32, 15};
    put_dataset(f, "/params/blocks.1.mlp.fc1.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_shape_moment(hid_t f)
{
    hsize_t d[1] = {17};
    put_dataset(f, "/optim/exp_avg_sq/ln_f.bias", H5T_IEEE_F32LE, 1, d);
}
static void m_float64(hid_t f)
{
    hsize_t d[2] = {11, 16};
    put_dataset(f, "/params/lm_head.weight", H5T_IEEE_F64LE, 2, d);
}
static void m_int32(hid_t f)
{
    hsize_t d[2] = {11, 16};
    put_dataset(f, "/params/lm_head.weight", H5T_STD_I32LE, 2, d);
}
static void m_no_param(hid_t f) { assert_true(H5Ldelete(f, "/params/blocks.0.attn.v_proj.bias", H5P_DEFAULT) >= 0); }
static void m_no_moment(hid_t f) { assert_true(H5Ldelete(f, "/optim/exp_avg/tok_emb.weight", H5P_DEFAULT) >= 0); }
static void m_no_d_ff(hid_t f) { assert_true(H5Adelete_by_name(f, "config", "d_ff", H5P_DEFAULT) >= 0); }
static void m_extra_param(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/params/pos_emb.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_extra_layer(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/params/blocks.2.attn.q_proj.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_extra_moment(hid_t f)
{
    hsize_t d[2] = {16, 16};
    put_dataset(f, "/optim/exp_avg/pos_emb.weight", H5T_IEEE_F32LE, 2, d);
}
static void m_n_layers_4096(hid_t f) { put_attr(f, "/config", "n_layers", H5T_NATIVE_INT32, &(int32_t){4096}); }
static void m_vocab(hid_t f) { put_attr(f, "/config", "vocab_size", H5T_NATIVE_INT32, &(int32_t){12}); }
static void m_rng_even(hid_t f)
{
    hid_t d = H5Dopen2(f, "/rng/data", H5P_DEFAULT);
    uint64_t v[2] = {5, 4};
    assert_true(H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
}

/* One case: an HDF5 edit of a copy of the reference (sealed again afterwards) or a whole-file mutation of the
 * copy; the status and up to two message parts; flags: */
enum {
    OPTIM_ONLY = 1, /* only a load with an optimizer reads it (a load without one succeeds) */
    STATE = 2       /* in the config or the run state: rg_checkpoint_read_config fails the same way */
};
static const struct {
    const char *name;
    void (*edit)(hid_t f);
    void (*file)(const char *path);
    int flags;
    rg_status code;
    const char *msg, *msg2;
} CORRUPTIONS[] = {
    /* files that are not checkpoints, or not whole */
    {"empty", NULL, f_empty, STATE, RG_ERR_FORMAT, "empty file", NULL},
    {"cut at 8 bytes", NULL, f_cut_8, STATE, RG_ERR_FORMAT, "not an HDF5 file", NULL},
    {"cut at 300 bytes", NULL, f_cut_300, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"cut at 700 bytes", NULL, f_cut_700, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"cut at half", NULL, f_cut_half, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"last byte cut", NULL, f_cut_last, STATE, RG_ERR_FORMAT, "(truncated or extended)", NULL},
    {"text file", NULL, f_text, STATE, RG_ERR_FORMAT, "not an HDF5 file", NULL},
    {"missing file", NULL, f_missing, STATE, RG_ERR_IO, "No such file", NULL},
    {"a folder", NULL, f_folder, STATE, RG_ERR_IO, "not a regular file", NULL},
    {"HDF5 of another program", NULL, f_foreign, STATE, RG_ERR_FORMAT, "not a ropegrad checkpoint", "another program"},
    {"format 'keras'", NULL, f_keras, STATE, RG_ERR_FORMAT, "not a ropegrad checkpoint", "'keras'"},
    {"format_version 2", m_version_2, NULL, STATE, RG_ERR_FORMAT, "format_version 2", NULL},
    /* datasets */
    {"wrong shape", m_shape, NULL, 0, RG_ERR_SHAPE, "/params/blocks.1.mlp.fc1.weight has shape [32, 15]", "[32, 16]"},
    {"wrong shape of a moment", m_shape_moment, NULL, OPTIM_ONLY, RG_ERR_SHAPE,
     "/optim/exp_avg_sq/ln_f.bias has shape [17]", "[16]"},
    {"float64 parameter", m_float64, NULL, 0, RG_ERR_FORMAT, "/params/lm_head.weight has dtype float64", "float32"},
    {"int32 parameter", m_int32, NULL, 0, RG_ERR_FORMAT, "/params/lm_head.weight has dtype int32", NULL},
    {"missing parameter", m_no_param, NULL, 0, RG_ERR_FORMAT, "missing dataset /params/blocks.0.attn.v_proj.bias", NULL},
    {"missing moment", m_no_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "missing dataset /optim/exp_avg/tok_emb.weight", NULL},
    {"unknown parameter", m_extra_param, NULL, 0, RG_ERR_FORMAT, "unknown dataset /params/pos_emb.weight", NULL},
    {"unknown moment", m_extra_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "unknown dataset /optim/exp_avg/pos_emb.weight", NULL},
    {"a third layer", m_extra_layer, NULL, STATE, RG_ERR_FORMAT, "n_layers 2, but /params has the layers of 3", NULL},
    /* values */
    {"NaN weight", m_nan_weight, NULL, 0, RG_ERR_FORMAT, "dataset /params/ln_f.weight holds nan at index 3", NULL},
    {"-inf moment", m_inf_moment, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "/optim/exp_avg/tok_emb.weight holds -inf", NULL},
    {"negative exp_avg_sq", m_negative_v, NULL, OPTIM_ONLY, RG_ERR_FORMAT, "expected finite and >= 0", NULL},
    {"beta1 < 0", m_beta1_negative, NULL, STATE, RG_ERR_FORMAT, "attribute 'beta1' on /optim = -0.1 is outside", NULL},
    {"beta2 = 1", m_beta2_one, NULL, STATE, RG_ERR_FORMAT, "attribute 'beta2' on /optim = 1 is outside", NULL},
    {"eps < 0", m_eps_negative, NULL, STATE, RG_ERR_FORMAT, "'eps' on /optim = -1e-08", NULL},
    {"weight_decay NaN", m_wd_nan, NULL, STATE, RG_ERR_FORMAT, "'weight_decay' on /optim = nan", NULL},
    {"lr_peak < 0", m_lr_negative, NULL, STATE, RG_ERR_FORMAT, "'lr_peak' on /optim = -0.003", NULL},
    {"lr_min_frac > 1", m_min_frac, NULL, STATE, RG_ERR_FORMAT, "'lr_min_frac' on /optim = 1.5", NULL},
    {"step -1", m_step_negative, NULL, STATE, RG_ERR_FORMAT, "attribute 'step' on / = -1 is outside 0..2147483647", NULL},
    {"optimizer step 2^40", m_optim_step_huge, NULL, STATE, RG_ERR_FORMAT, "'step' on /optim = 1099511627776", NULL},
    {"lr_total 2^32+55", m_lr_total_wraps, NULL, STATE, RG_ERR_FORMAT, "'lr_total' on /optim = 4294967351 is outside", NULL},
    {"lr_step -5", m_lr_step_negative, NULL, STATE, RG_ERR_FORMAT, "'lr_step' on /optim = -5", NULL},
    {"RNG increment even", m_rng_even, NULL, STATE, RG_ERR_FORMAT, "/rng/data: increment 4 is even", NULL},
    /* structure and types */
    {"no /rng", m_no_rng, NULL, STATE, RG_ERR_FORMAT, "missing group /rng", NULL},
    {"no /run", m_no_run, NULL, STATE, RG_ERR_FORMAT, "missing group /run", NULL},
    {"/rng/data [3]", m_rng_shape, NULL, STATE, RG_ERR_SHAPE, "dataset /rng/data has shape [3], expected [2]", NULL},
    {"/rng/positions float64", m_rng_dtype, NULL, STATE, RG_ERR_FORMAT, "/rng/positions has dtype float64", "uint64"},
    {"no has_adamw", m_no_has_adamw, NULL, STATE, RG_ERR_FORMAT, "missing attribute 'has_adamw' on /optim", NULL},
    {"no d_ff", m_no_d_ff, NULL, STATE, RG_ERR_FORMAT, "missing attribute 'd_ff' on /config", NULL},
    {"d_ff float", m_d_ff_float, NULL, STATE, RG_ERR_FORMAT, "attribute 'd_ff' on /config is float64", "integer"},
    {"n_heads 0", m_n_heads_zero, NULL, STATE, RG_ERR_FORMAT, "/config: ", NULL},
    {"n_layers 4096", m_n_layers_4096, NULL, STATE, RG_ERR_FORMAT, "n_layers 4096, but /params has the layers of 2", NULL},
    {"vocab_size 12", m_vocab, NULL, STATE, RG_ERR_FORMAT, "/params/tok_emb.weight is not [12, 16]", NULL},
    {"seed < 0", m_seed_negative, NULL, STATE, RG_ERR_FORMAT, "attribute 'seed' on /config = -3 is negative", NULL},
    {"L_train 2^31", m_L_train_huge, NULL, STATE, RG_ERR_FORMAT, "'L_train' on /config = 2147483648 is outside", NULL},
    {"/run attribute of 2 values", m_run_attr_compound, NULL, STATE, RG_ERR_FORMAT, "/run: attribute 'pair'", NULL},
};

static void test_corruption_table(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "table_ref.h5");
    for (size_t i = 0; i < sizeof CORRUPTIONS / sizeof CORRUPTIONS[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "case_%zu.h5", i);
        path_in(p, sizeof p, name);
        copy_file(ref, p);
        if (CORRUPTIONS[i].edit) {
            hid_t f = open_rw(p);
            CORRUPTIONS[i].edit(f);
            close_edit(f, p);
        } else {
            CORRUPTIONS[i].file(p);
        }
        print_message("  %-28s -> %s\n", CORRUPTIONS[i].name, CORRUPTIONS[i].msg);
        expect_load_error_opt(p, CORRUPTIONS[i].code, CORRUPTIONS[i].msg, CORRUPTIONS[i].msg2,
                              CORRUPTIONS[i].flags & OPTIM_ONLY);
        rg_model_config c;
        rg_status st = rg_checkpoint_read_config(p, &c, NULL);
        if ((CORRUPTIONS[i].flags & STATE) ? st != CORRUPTIONS[i].code : st != RG_OK)
            fail_msg("%s: read_config gives status %d (%s)", CORRUPTIONS[i].name, (int)st, rg_last_error());
        if (CORRUPTIONS[i].flags & OPTIM_ONLY) { /* the parameters alone load */
            rg_model *m = new_model(3);
            if (rg_checkpoint_load(p, m, NULL, NULL) != RG_OK) fail_msg("%s: %s", CORRUPTIONS[i].name, rg_last_error());
            rg_model_free(m);
        }
        if (CORRUPTIONS[i].file == f_folder) rmdir(p);
    }
}

/* An edit without resealing is refused by the digest; a file without the digest block still loads (probe). */
static void test_digest(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "dig_ref.h5");
    hid_t f = open_copy(ref, p, sizeof p, "dig_edit.h5");
    put_f64(f, "/optim", "lr_peak", 1e-3); /* a valid value: only the digest can tell */
    H5Fclose(f);
    expect_load_error(p, RG_ERR_FORMAT, "digest block records", "edited after saving");
    assert_int_equal(rg_checkpoint_seal(p), RG_OK);
    rg_model *m = new_model(4);
    rg_run_state rs;
    assert_int_equal(rg_checkpoint_load(p, m, NULL, &rs), RG_OK);
    assert_true(rs.lr.peak == 1e-3);
    /* the bytes after the block alone: an HDF5 file without digest block, as written before it existed */
    FILE *a = fopen(ref, "rb");
    path_in(p, sizeof p, "dig_bare.h5");
    FILE *b = fopen(p, "wb");
    char buf[4096];
    size_t n;
    assert_int_equal(fseek(a, 512, SEEK_SET), 0);
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
    fclose(a);
    fclose(b);
    assert_int_equal(rg_checkpoint_load(p, m, NULL, NULL), RG_OK);
    rg_model *want = new_model(1);
    snapshot s = snap(want, NULL);
    assert_same(&s, m, NULL, "file without digest block");
    /* a damaged digest block, a truncated sealed file */
    copy_file(ref, p);
    FILE *c = fopen(p, "r+b");
    fseek(c, 3, SEEK_SET);
    fputc('X', c);
    fclose(c);
    expect_load_error(p, RG_ERR_FORMAT, "user block is not a ropegrad digest block", NULL);
    snap_free(&s);
    rg_model_free(want);
    rg_model_free(m);
}

/* Strings as h5py writes them (variable-length UTF-8), non-ASCII text, and strings longer than 127 characters. */
static void put_vlen_str(hid_t f, const char *obj, const char *name, const char *v)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) H5Adelete_by_name(f, obj, name, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate_by_name(f, obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, &v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void test_strings(void **state)
{
    char ref[256], p[256];
    save_reference(ref, sizeof ref, "str_ref.h5");
    char long_str[600];
    memset(long_str, 'q', sizeof long_str - 1);
    long_str[sizeof long_str - 1] = 0;
    hid_t f = open_copy(ref, p, sizeof p, "str.h5");
    put_vlen_str(f, "/config", "pos_encoding", "none");
    put_vlen_str(f, "/config", "task", "sort");
    put_vlen_str(f, "/run", "note", "\xce\xb1-rope \xe2\x9c\x93"); /* "α-rope ✓" */
    put_vlen_str(f, "/run", "long", long_str);
    close_edit(f, p);
    rg_model *m = new_model(4);
    rg_run_state rs;
    if (rg_checkpoint_load(p, m, NULL, &rs) != RG_OK) fail_msg("load: %s", rg_last_error());
    assert_string_equal(rs.task, "sort");
    assert_string_equal(rg_run_state_attr(&rs, "note")->s, "\xce\xb1-rope \xe2\x9c\x93");
    assert_string_equal(rg_run_state_attr(&rs, "long")->s, long_str);
    /* written back (UTF-8 and long, fixed length) and read again */
    path_in(p, sizeof p, "str2.h5");
    assert_int_equal(rg_checkpoint_save(p, m, NULL, &rs), RG_OK);
    rg_run_state rs2;
    assert_int_equal(rg_checkpoint_load(p, m, NULL, &rs2), RG_OK);
    assert_string_equal(rg_run_state_attr(&rs2, "note")->s, "\xce\xb1-rope \xe2\x9c\x93");
    assert_string_equal(rg_run_state_attr(&rs2, "long")->s, long_str);
    /* too long for the run state, and invalid UTF-8: clear errors */
    char *huge = malloc(RG_CKPT_STR_LEN + 10);
    memset(huge, 'z', RG_CKPT_STR_LEN + 9);
    huge[RG_CKPT_STR_LEN + 9] = 0;
    f = open_copy(ref, p, sizeof p, "str3.h5");
    put_vlen_str(f, "/run", "huge", huge);
    close_edit(f, p);
    expect_load_error(p, RG_ERR_FORMAT, "attribute 'huge' on /run has 1033 characters, at most 1023 fit", NULL);
    free(huge);
    f = open_copy(ref, p, sizeof p, "str4.h5");
    put_vlen_str(f, "/run", "bad", "\xff\xfe");
    close_edit(f, p);
    expect_load_error(p, RG_ERR_FORMAT, "attribute 'bad' on /run is not valid UTF-8", NULL);
    rg_model_free(m);
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

/* A full disk during a save (RLIMIT_FSIZE in a child, SIGXFSZ ignored: write() fails with EFBIG): the right
 * message, the old checkpoint intact, no temporary file left, and a normal exit (HDF5's cleanup at exit used to
 * crash on the file the error path left open). */
static void test_disk_full(void **state)
{
    char ref[256];
    save_reference(ref, sizeof ref, "full.h5");
    struct stat st0;
    assert_int_equal(stat(ref, &st0), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {16384, 16384}; /* a checkpoint is larger */
        setrlimit(RLIMIT_FSIZE, &lim);
        rg_model *m = new_model(77);
        rg_status s = rg_checkpoint_save(ref, m, NULL, NULL);
        int code = s == RG_ERR_IO && strstr(rg_last_error(), "File too large") && strstr(rg_last_error(), ref) ? 0 : 3;
        if (code) fprintf(stderr, "disk-full save: status %d: %s\n", (int)s, rg_last_error());
        rg_model_free(m);
        exit(code); /* atexit handlers included: HDF5's own cleanup runs */
    }
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    if (WIFSIGNALED(wst)) fail_msg("the saving process died of signal %d", WTERMSIG(wst));
    assert_int_equal(WEXITSTATUS(wst), 0);
    assert_int_equal(count_temp_files(), 0);
    rg_model *m = new_model(3);
    assert_int_equal(rg_checkpoint_load(ref, m, NULL, NULL), RG_OK);
    rg_model *want = new_model(1);
    snapshot s = snap(want, NULL);
    assert_same(&s, m, NULL, "old checkpoint after a disk-full save");
    snap_free(&s);
    rg_model_free(want);
    rg_model_free(m);
}

/* Temporary files of killed saves: those of dead processes are removed at the next save, others stay. */
static void test_stale_temp_files(void **state)
{
    char p[256], dead[300], live[300], other[300];
    path_in(p, sizeof p, "stale.h5");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0); /* pid is now a dead process */
    snprintf(dead, sizeof dead, "%s.tmp.%ld", p, (long)pid);
    snprintf(live, sizeof live, "%s.tmp.%ld", p, (long)getppid());
    snprintf(other, sizeof other, "%s.tmp.abc", p);
    const char *files[] = {dead, live, other};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(files[i], "w");
        assert_non_null(f);
        fputs("partial", f);
        fclose(f);
    }
    rg_model *m = new_model(1);
    assert_int_equal(rg_checkpoint_save(p, m, NULL, NULL), RG_OK);
    assert_false(file_exists(dead));
    assert_true(file_exists(live));
    assert_true(file_exists(other));
    unlink(live);
    unlink(other);
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

/* ------------------------------------------------------------------ fixture: the temp folder */

static int rm_cb_dir(void)
{
    DIR *d = opendir(g_dir);
    if (!d) return 0;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(g_dir);
}

static int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rg_ckpt_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) { return getenv("RG_KEEP_TEST_FILES") ? 0 : rm_cb_dir(); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_state_api),
        cmocka_unit_test(test_roundtrip_bit_identical),
        cmocka_unit_test(test_save_without_optimizer),
        cmocka_unit_test(test_resume_bitwise),
        cmocka_unit_test(test_config_mismatch),
        cmocka_unit_test(test_failure_before_rename),
        cmocka_unit_test(test_kill_during_save),
        cmocka_unit_test(test_locked_file),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_every_encoding_reloads),
        cmocka_unit_test(test_corruption_table),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_run_state_getters),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_stale_temp_files),
    };
    return cmocka_run_group_tests_name("checkpoint", tests, setup, teardown);
}
