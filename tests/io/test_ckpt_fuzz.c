/* test_ckpt_fuzz.c: the corruption campaign (no crash, hang or silent load on a damaged file), bounded for the suite. A reference checkpoint
 * (model, AdamW moments, run state) is saved; then single-byte changes aimed at its non-chunk bytes (metadata:
 * superblock, object headers, B-trees, heaps, attributes, the digest block; the parameter chunks are left out,
 * Fletcher-32 guards those) are loaded one by one in a forked child with a time limit. Each outcome is one of
 *   clean error  the load returned an error status (the expected outcome for a change that matters)
 *   same values  the load succeeded and every loaded value, setting and name equals the reference (harmless)
 *   SILENT       the load succeeded with something different (a value, a setting, a name): a defect
 *   CRASH        the child died of a signal: a defect
 *   HANG         the child ran past the time limit: a defect
 * and the test requires 0 SILENT, 0 CRASH, 0 HANG. RG_FUZZ_N (default 300) sets the number of mutations and
 * RG_FUZZ_SEED (default 1) the seed; `RG_FUZZ_N=1000 build/tests/test_ckpt_fuzz` is the campaign of
 * docs/checkpoint.md. */
#include "common.h"
#include "io/checkpoint.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OUT_SAME, OUT_ERROR, OUT_SILENT, OUT_CRASH, OUT_HANG, N_OUT };
static const char *const out_names[N_OUT] = {"same values", "clean error", "SILENT", "CRASH", "HANG"};
enum { CHILD_TIME_LIMIT = 20 }; /* seconds */

static char g_dir[64];

static rg_model_config fuzz_config(void)
{
    rg_model_config c = rg_model_config_default();
    c.vocab_size = 11;
    c.d_model = 16;
    c.n_heads = 2;
    c.n_layers = 2;
    c.d_ff = 32;
    c.max_len = 16;
    c.pos = RG_POS_ROPE;
    return c;
}

typedef struct {
    rg_model *m;
    rg_adamw opt;
    rg_run_state rs;
} ref_state;

static void make_reference(ref_state *r)
{
    rg_model_config c = fuzz_config();
    if (rg_model_new(&c, 1, &r->m) != RG_OK) fail_msg("rg_model_new: %s", rg_last_error());
    assert_int_equal(rg_adamw_init(&r->opt, &r->m->params, 0.9, 0.95, 1e-8, 0.1), RG_OK);
    rg_rng g;
    rg_rng_seed(&g, 5, 3);
    for (int i = 0; i < r->m->params.n; i++)
        for (int64_t j = 0; j < r->m->params.items[i]->numel; j++) {
            r->opt.m[i][j] = (rg_real)rg_rng_normal(&g);
            r->opt.v[i][j] = (rg_real)rg_rng_uniform(&g);
        }
    r->opt.step = 17;
    rg_run_state_init(&r->rs);
    r->rs.step = 17;
    r->rs.lr = (rg_lr_state){.step = 17, .peak = 3e-3, .warmup = 5, .total = 100, .min_frac = 0.1, .grad_clip = 1};
    rg_rng a, b;
    rg_rng_seed(&a, 1, 1);
    rg_rng_seed(&b, 2, 7);
    assert_non_null(rg_run_state_add_rng(&r->rs, "data", &a));
    assert_non_null(rg_run_state_add_rng(&r->rs, "positions", &b));
    assert_int_equal(rg_run_state_set_int(&r->rs, "batch", 32), RG_OK);
    assert_int_equal(rg_run_state_set_double(&r->rs, "label_smoothing", 0.25), RG_OK);
    assert_int_equal(rg_run_state_set_str(&r->rs, "git_commit", "88e8183"), RG_OK);
}

static void free_reference(ref_state *r)
{
    rg_adamw_free(&r->opt);
    rg_model_free(r->m);
}

/* the settings a's encoding declares, resolved */
static bool same_pos_settings(const rg_model_config *a, const rg_model_config *b)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(a->pos);
    for (int i = 0; e && i < e->n_settings; i++)
        if (rg_pos_config_get(a, e->settings[i].name) != rg_pos_config_get(b, e->settings[i].name)) return false;
    return true;
}

static bool same_config(const rg_model_config *a, const rg_model_config *b)
{
    return a->vocab_size == b->vocab_size && a->d_model == b->d_model && a->n_heads == b->n_heads &&
           a->n_layers == b->n_layers && a->d_ff == b->d_ff && a->max_len == b->max_len && a->causal == b->causal &&
           a->pos == b->pos && a->rope_base == b->rope_base && a->rotary_dim == b->rotary_dim &&
           a->rope_ext == b->rope_ext && a->rope_scale == b->rope_scale && a->rope_orig_len == b->rope_orig_len &&
           a->llama3_low_freq_factor == b->llama3_low_freq_factor &&
           a->llama3_high_freq_factor == b->llama3_high_freq_factor && a->yarn_beta_fast == b->yarn_beta_fast &&
           a->yarn_beta_slow == b->yarn_beta_slow && same_pos_settings(a, b);
}

static bool same_run_state(const rg_run_state *a, const rg_run_state *b)
{
    if (a->step != b->step || memcmp(&a->lr, &b->lr, sizeof a->lr) != 0 || a->n_rngs != b->n_rngs || a->n_attrs != b->n_attrs)
        return false;
    for (int i = 0; i < a->n_rngs; i++)
        if (strcmp(a->rngs[i].name, b->rngs[i].name) != 0 || a->rngs[i].rng.state != b->rngs[i].rng.state ||
            a->rngs[i].rng.inc != b->rngs[i].rng.inc)
            return false;
    for (int i = 0; i < a->n_attrs; i++) {
        const rg_run_attr *x = &a->attrs[i], *y = &b->attrs[i];
        if (strcmp(x->key, y->key) != 0 || x->type != y->type) return false;
        if (x->type == RG_RUN_ATTR_INT && x->i != y->i) return false;
        if (x->type == RG_RUN_ATTR_DOUBLE && memcmp(&x->d, &y->d, sizeof x->d) != 0) return false;
        if (x->type == RG_RUN_ATTR_STRING && strcmp(x->s, y->s) != 0) return false;
    }
    return true;
}

/* With RG_FUZZ_VERBOSE set, the child prints each error message. */
static int report(int outcome)
{
    if (getenv("RG_FUZZ_VERBOSE")) printf("      %s\n", rg_last_error());
    return outcome;
}

/* In the child: read_config + load of `path`; the exit code is the outcome. */
static int child_load(const char *path, const ref_state *ref)
{
    rg_model_config cfg, want = fuzz_config();
    want.rotary_dim = want.d_model / want.n_heads;
    want.rope_orig_len = want.max_len;
    rg_run_state *rs = malloc(sizeof *rs), *rs2 = malloc(sizeof *rs2);
    if (!rs || !rs2) return 99;
    if (rg_checkpoint_read_config(path, &cfg, rs) != RG_OK) return report(OUT_ERROR);
    if (!same_config(&cfg, &want) || !same_run_state(rs, &ref->rs)) return OUT_SILENT;
    rg_model_config c = fuzz_config();
    rg_model *m = NULL;
    if (rg_model_new(&c, 2, &m) != RG_OK) return 99;
    rg_adamw opt;
    if (rg_adamw_init(&opt, &m->params, 0.5, 0.5, 1e-3, 0) != RG_OK) return 99;
    if (rg_checkpoint_load(path, m, &opt, rs2) != RG_OK) return report(OUT_ERROR);
    if (!same_run_state(rs2, &ref->rs) || opt.step != ref->opt.step || opt.beta1 != ref->opt.beta1 ||
        opt.beta2 != ref->opt.beta2 || opt.eps != ref->opt.eps || opt.weight_decay != ref->opt.weight_decay)
        return OUT_SILENT;
    for (int i = 0; i < m->params.n; i++) {
        size_t b = (size_t)m->params.items[i]->numel * sizeof(rg_real);
        if (memcmp(m->params.items[i]->data, ref->m->params.items[i]->data, b) != 0 ||
            memcmp(opt.m[i], ref->opt.m[i], b) != 0 || memcmp(opt.v[i], ref->opt.v[i], b) != 0)
            return OUT_SILENT;
    }
    return OUT_SAME;
}

static int run_child(const char *path, const ref_state *ref)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka catches SIGSEGV & co. to fail the running test: in the child a crash must be a crash */
        int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2); /* a crash report of the old code is noise here */
        alarm(CHILD_TIME_LIMIT);
        _exit(child_load(path, ref));
    }
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    if (WIFSIGNALED(wst)) return WTERMSIG(wst) == SIGALRM ? OUT_HANG : OUT_CRASH;
    int code = WEXITSTATUS(wst);
    if (code == 99) fail_msg("child setup failed");
    return code < N_OUT ? code : OUT_CRASH; /* an exit() from inside a library counts as a crash */
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

static void write_all(const char *path, const unsigned char *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* Marks in chunk[] the bytes of every parameter and moment array as stored in the file (the raw values followed
 * by their 4-byte Fletcher-32 checksum), found by searching for the values themselves: no HDF5 address
 * arithmetic, so the same code measures any file layout. Returns the number of arrays found. */
static int mark_chunks(const unsigned char *file, size_t n, const ref_state *ref, bool *chunk)
{
    int found = 0;
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < ref->m->params.n; i++) {
            const rg_tensor *p = ref->m->params.items[i];
            const void *data = s == 0 ? (const void *)p->data : s == 1 ? (const void *)ref->opt.m[i] : ref->opt.v[i];
            size_t b = (size_t)p->numel * sizeof(rg_real);
            for (size_t off = 0; off + b <= n; off++)
                if (memcmp(file + off, data, b) == 0) {
                    for (size_t k = off; k < off + b + 4 && k < n; k++) chunk[k] = true;
                    found++;
                    break;
                }
        }
    return found;
}

/* The campaign: n_mut single-byte changes at non-chunk offsets of the checkpoint at ref_path; counts[] gets the
 * outcomes. Prints the table. */
static void campaign(const char *label, const char *ref_path, const ref_state *ref, int n_mut, uint64_t seed,
                     int counts[N_OUT])
{
    size_t n;
    unsigned char *orig = read_all(ref_path, &n);
    bool *chunk = calloc(n, 1);
    assert_non_null(chunk);
    int found = mark_chunks(orig, n, ref, chunk);
    if (found != 3 * ref->m->params.n) fail_msg("found %d of %d arrays in %s", found, 3 * ref->m->params.n, ref_path);
    size_t *offs = malloc(n * sizeof *offs), n_offs = 0;
    assert_non_null(offs);
    for (size_t i = 0; i < n; i++)
        if (!chunk[i]) offs[n_offs++] = i;
    char mut[256];
    snprintf(mut, sizeof mut, "%s/mutated.h5", g_dir);
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    rg_rng r;
    rg_rng_seed(&r, seed, 77);
    memset(counts, 0, N_OUT * sizeof counts[0]);
    for (int k = 0; k < n_mut; k++) {
        size_t off = offs[rg_rng_below(&r, (uint32_t)n_offs)];
        unsigned char flip = (unsigned char)(1 + rg_rng_below(&r, 255));
        memcpy(buf, orig, n);
        buf[off] ^= flip;
        write_all(mut, buf, n);
        int o = run_child(mut, ref);
        counts[o]++;
        if (o >= OUT_SILENT) printf("    %s: byte %zu ^= 0x%02x\n", out_names[o], off, flip);
    }
    printf("  %s: %d single-byte changes among %zu non-chunk bytes of %zu (seed %llu)\n", label, n_mut, n_offs, n,
           (unsigned long long)seed);
    printf("  | crashes | hangs | clean errors | silent loads | loads with the same values |\n");
    printf("  | %d | %d | %d | %d | %d |\n", counts[OUT_CRASH], counts[OUT_HANG], counts[OUT_ERROR],
           counts[OUT_SILENT], counts[OUT_SAME]);
    free(buf);
    free(offs);
    free(chunk);
    free(orig);
    unlink(mut);
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : def;
}

static void test_single_byte_metadata_changes(void **state)
{
    ref_state ref;
    make_reference(&ref);
    char path[256];
    snprintf(path, sizeof path, "%s/ref.h5", g_dir);
    if (rg_checkpoint_save(path, ref.m, &ref.opt, &ref.rs) != RG_OK) fail_msg("save: %s", rg_last_error());
    /* the unmutated file loads with the same values (the comparison itself is right) */
    assert_int_equal(run_child(path, &ref), OUT_SAME);
    int counts[N_OUT];
    campaign("checkpoint", path, &ref, env_int("RG_FUZZ_N", 300), (uint64_t)env_int("RG_FUZZ_SEED", 1), counts);
    assert_int_equal(counts[OUT_CRASH], 0);
    assert_int_equal(counts[OUT_HANG], 0);
    assert_int_equal(counts[OUT_SILENT], 0);

    /* the same file without its digest block (as written before digests existed): the HDF5 reader
     * process (h5_image.h) must turn every crash or hang of HDF5 into an error; silent changes are possible here (no digest:
     * docs/checkpoint.md) and only counted */
    char bare[256];
    snprintf(bare, sizeof bare, "%s/bare.h5", g_dir);
    size_t n;
    unsigned char *img = read_all(path, &n);
    write_all(bare, img + 512, n - 512);
    free(img);
    assert_int_equal(run_child(bare, &ref), OUT_SAME);
    campaign("without digest block", bare, &ref, env_int("RG_FUZZ_N", 300) / 3, (uint64_t)env_int("RG_FUZZ_SEED", 1),
             counts);
    assert_int_equal(counts[OUT_CRASH], 0);
    assert_int_equal(counts[OUT_HANG], 0);
    unlink(bare);
    unlink(path);
    free_reference(&ref);
}

static int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rg_fuzz_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    return rmdir(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_byte_metadata_changes),
    };
    return cmocka_run_group_tests_name("checkpoint fuzz", tests, setup, teardown);
}
