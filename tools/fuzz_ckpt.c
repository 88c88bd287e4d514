/* fuzz_ckpt.c: the re-sealed mutation campaign of issue 25 (`make fuzz`, tools/fuzz.sh; docs/checkpoint.md,
 * "Parsing out of process"). Not part of `make test`.
 *
 *   fuzz_ckpt REF.h5 N SEED TRAIN_ORDER SCRATCH_DIR [RESUME_EVERY]
 *
 * REF.h5 is a checkpoint written by train_order. Each of the N mutations (seeded: SEED) changes a copy of its bytes
 * after the digest block: one byte xor 1..255, 2-8 scattered bytes, a region of 1-64 random bytes, a copy of 8-64
 * bytes from elsewhere in the file (a duplicated pointer or length), or a truncation; 70% of them aim at bytes
 * outside the parameter and moment chunks (the metadata HDF5 parses: object headers, B-trees, heaps, attributes).
 * The digest block is then recomputed (rg_guard_seal: the Python snippet of docs/checkpoint.md), so the loader's
 * CRC passes and the content reaches HDF5, as a tool or an attacker produces it. Each mutant is then
 *   1. loaded with the library (rg_checkpoint_read_config + rg_checkpoint_load with an optimizer) in a forked
 *      process standing for the caller, and compared with the reference:
 *        error     a clean error status
 *        caught    a clean error status because HDF5 crashed, hung or hit a limit in the reader process (h5_image.h)
 *        same      loaded, every value, setting and name equal to the reference
 *        edited    loaded, every dataset (parameters, moments, RNGs) equal, an attribute value changed within its
 *                  range (a re-sealed in-range edit: what the digest no longer guards once recomputed)
 *        SILENT    loaded with a dataset value different from the reference (silent zeros): a defect
 *        CRASH     the process died of a signal (or exited from inside the library): a defect
 *        HANG      it ran past 60 s: a defect
 *   2. evaluated with `TRAIN_ORDER --eval` (every mutant) and resumed one step with `--resume` (every
 *      RESUME_EVERY-th, default 10): exit status 0, 1 or 2, or CRASH / HANG as above.
 * Prints one line per defect and a summary table; exits 1 if any defect was found. */
#include "io/checkpoint.h"
#include "io/guard.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { L_ERROR, L_CAUGHT, L_SAME, L_EDITED, L_SILENT, L_CRASH, L_HANG, N_L };
static const char *const l_names[N_L] = {"error", "caught", "same", "edited", "SILENT", "CRASH", "HANG"};
enum { LIMIT_S = 60 };

typedef struct {
    rg_model_config cfg;
    rg_model *m;
    rg_adamw opt;
    rg_run_state rs;
} state;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_ckpt: %s: %s\n", what, rg_last_error());
    exit(2);
}

static void load_state(const char *path, state *s, uint64_t seed)
{
    if (rg_checkpoint_read_config(path, &s->cfg, &s->rs)) die("read_config");
    if (rg_model_new(&s->cfg, seed, &s->m)) die("model");
    if (rg_adamw_init(&s->opt, &s->m->params, 0.5, 0.5, 1e-3, 0)) die("adamw");
    if (rg_checkpoint_load(path, s->m, &s->opt, &s->rs)) die("load");
}

static bool same_rs(const rg_run_state *a, const rg_run_state *b, bool *rng_same)
{
    *rng_same = a->n_rngs == b->n_rngs;
    for (int i = 0; *rng_same && i < a->n_rngs; i++)
        *rng_same = strcmp(a->rngs[i].name, b->rngs[i].name) == 0 && a->rngs[i].rng.state == b->rngs[i].rng.state &&
                    a->rngs[i].rng.inc == b->rngs[i].rng.inc;
    if (a->step != b->step || memcmp(&a->lr, &b->lr, sizeof a->lr) || a->n_attrs != b->n_attrs) return false;
    for (int i = 0; i < a->n_attrs; i++) {
        const rg_run_attr *x = &a->attrs[i], *y = &b->attrs[i];
        if (strcmp(x->key, y->key) || x->type != y->type || (x->type == RG_RUN_ATTR_INT && x->i != y->i) ||
            (x->type == RG_RUN_ATTR_DOUBLE && memcmp(&x->d, &y->d, 8)) ||
            (x->type == RG_RUN_ATTR_STRING && strcmp(x->s, y->s)))
            return false;
    }
    return true;
}

/* An error; L_CAUGHT if HDF5 crashed, hung or ran out of a limit in the reader process (h5_image.h). */
static int error_kind(void) { return strstr(rg_last_error(), "HDF5 reader process") ? L_CAUGHT : L_ERROR; }

/* In the forked child: the library load of path against ref; the exit code is the outcome. */
static int lib_child(const char *path, const state *ref)
{
    static state s;
    if (rg_checkpoint_read_config(path, &s.cfg, &s.rs)) return error_kind();
    bool cfg_same = memcmp(&s.cfg, &ref->cfg, sizeof s.cfg) == 0;
    if (rg_model_new(&s.cfg, 7, &s.m) || rg_adamw_init(&s.opt, &s.m->params, 0.5, 0.5, 1e-3, 0)) return L_ERROR;
    if (rg_checkpoint_load(path, s.m, &s.opt, &s.rs)) return error_kind();
    bool rng_same;
    bool attrs_same = same_rs(&s.rs, &ref->rs, &rng_same) && s.opt.step == ref->opt.step &&
                      s.opt.beta1 == ref->opt.beta1 && s.opt.beta2 == ref->opt.beta2 && s.opt.eps == ref->opt.eps &&
                      s.opt.weight_decay == ref->opt.weight_decay;
    if (s.m->params.n != ref->m->params.n) return L_SILENT;
    for (int i = 0; i < s.m->params.n; i++) {
        if (s.m->params.items[i]->numel != ref->m->params.items[i]->numel) return L_SILENT;
        size_t b = (size_t)s.m->params.items[i]->numel * sizeof(rg_real);
        if (memcmp(s.m->params.items[i]->data, ref->m->params.items[i]->data, b) ||
            memcmp(s.opt.m[i], ref->opt.m[i], b) || memcmp(s.opt.v[i], ref->opt.v[i], b))
            return L_SILENT;
    }
    if (!rng_same) return L_SILENT;
    return attrs_same && cfg_same ? L_SAME : L_EDITED;
}

/* Waits for pid; the outcome of a signal or a timeout, else -1 - exit status. */
static int wait_outcome(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {}
    if (WIFSIGNALED(st)) return WTERMSIG(st) == SIGALRM ? L_HANG : L_CRASH;
    return -1 - WEXITSTATUS(st);
}

static void child_common(void)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) { dup2(dn, 1); dup2(dn, 2); }
    alarm(LIMIT_S);
}

static int run_lib(const char *path, const state *ref)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        child_common();
        _exit(lib_child(path, ref));
    }
    int o = wait_outcome(pid);
    if (o >= 0) return o;
    int code = -1 - o;
    return code <= L_SILENT ? code : L_CRASH; /* an exit() from inside the library counts as a crash */
}

/* train_order with argv; returns L_CRASH / L_HANG or -1 - its exit status. */
static int run_prog(char *const argv[])
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        child_common();
        execv(argv[0], argv);
        _exit(127);
    }
    return wait_outcome(pid);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) { perror(path); exit(2); }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f)) { perror(path); exit(2); }
}

/* chunk[i]: byte i holds a parameter or moment value (found by searching for the values themselves). */
static void mark_chunks(const unsigned char *file, size_t n, const state *ref, bool *chunk)
{
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < ref->m->params.n; i++) {
            const rg_tensor *p = ref->m->params.items[i];
            const void *d = s == 0 ? (const void *)p->data : s == 1 ? (const void *)ref->opt.m[i] : ref->opt.v[i];
            size_t b = (size_t)p->numel * sizeof(rg_real);
            for (size_t off = RG_GUARD_BLOCK; off + b <= n; off++)
                if (memcmp(file + off, d, b) == 0) {
                    for (size_t k = off; k < off + b + 4 && k < n; k++) chunk[k] = true;
                    break;
                }
        }
}

/* Mutates buf (n bytes, *len in/out) in place; describes it in desc. */
static void mutate(unsigned char *buf, size_t *len, const size_t *meta, size_t n_meta, rg_rng *r, char *desc,
                   size_t dn)
{
    size_t n = *len, body = n - RG_GUARD_BLOCK;
    bool aim = rg_rng_below(r, 10) < 7;
#define OFF() (aim ? meta[rg_rng_below(r, (uint32_t)n_meta)] : RG_GUARD_BLOCK + rg_rng_below(r, (uint32_t)body))
    unsigned kind = rg_rng_below(r, 10);
    if (kind < 4) {
        size_t o = OFF();
        unsigned x = 1 + rg_rng_below(r, 255);
        buf[o] ^= (unsigned char)x;
        snprintf(desc, dn, "byte %zu ^= 0x%02x", o, x);
    } else if (kind < 6) {
        int k = 2 + (int)rg_rng_below(r, 7);
        for (int i = 0; i < k; i++) buf[OFF()] ^= (unsigned char)(1 + rg_rng_below(r, 255));
        snprintf(desc, dn, "%d scattered bytes", k);
    } else if (kind < 8) {
        size_t o = OFF(), k = 1 + rg_rng_below(r, 64);
        for (size_t i = 0; i < k && o + i < n; i++) buf[o + i] = (unsigned char)rg_rng_below(r, 256);
        snprintf(desc, dn, "%zu random bytes at %zu", k, o);
    } else if (kind < 9) {
        size_t o = OFF(), from = RG_GUARD_BLOCK + rg_rng_below(r, (uint32_t)body), k = 8 + rg_rng_below(r, 57);
        if (from + k > n) k = n - from;
        if (o + k > n) k = n - o;
        memmove(buf + o, buf + from, k);
        snprintf(desc, dn, "%zu bytes copied from %zu to %zu", k, from, o);
    } else {
        *len = RG_GUARD_BLOCK + 1 + rg_rng_below(r, (uint32_t)body - 1);
        snprintf(desc, dn, "truncated to %zu bytes", *len);
    }
#undef OFF
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: fuzz_ckpt REF.h5 N SEED TRAIN_ORDER SCRATCH_DIR [RESUME_EVERY]\n");
        return 2;
    }
    const char *ref_path = argv[1], *prog = argv[4], *dir = argv[5];
    int n_mut = atoi(argv[2]), resume_every = argc > 6 ? atoi(argv[6]) : 10;
    uint64_t seed = strtoull(argv[3], NULL, 10);
    static state ref;
    load_state(ref_path, &ref, 1);
    size_t n;
    unsigned char *orig = slurp(ref_path, &n);
    bool *chunk = calloc(n, 1);
    size_t *meta = malloc(n * sizeof *meta), n_meta = 0;
    unsigned char *buf = malloc(n);
    if (!chunk || !meta || !buf) return 2;
    mark_chunks(orig, n, &ref, chunk);
    for (size_t i = RG_GUARD_BLOCK; i < n; i++)
        if (!chunk[i]) meta[n_meta++] = i;
    char mut[4096], out[4096];
    snprintf(mut, sizeof mut, "%s/mutant.h5", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    char *eval_argv[] = {(char *)prog, "--eval", mut, "--out", out, "--overwrite", "--quiet", "--test-lens", "8,16",
                         "--rope-scaling", "none", "--jobs", "1", NULL};
    char *resume_argv[] = {(char *)prog, "--resume", mut, "--steps", "1000000", "--out", out, "--overwrite", "--quiet",
                           "--test-lens", "8", "--rope-scaling", "none", "--jobs", "1", NULL};
    char steps[32];
    snprintf(steps, sizeof steps, "%lld", (long long)ref.rs.step + 1);
    resume_argv[4] = steps;
    /* the unmutated file: the library loads the same values, train_order exits 0 */
    if (run_lib(ref_path, &ref) != L_SAME) { fprintf(stderr, "fuzz_ckpt: the reference does not reload\n"); return 2; }
    int lib[N_L] = {0}, eval_exit[3] = {0}, eval_bad[N_L] = {0}, res_exit[3] = {0}, res_bad[N_L] = {0}, n_res = 0;
    rg_rng r;
    rg_rng_seed(&r, seed, 25);
    time_t t0 = time(NULL);
    for (int k = 0; k < n_mut; k++) {
        size_t len = n;
        char desc[128];
        memcpy(buf, orig, n);
        mutate(buf, &len, meta, n_meta, &r, desc, sizeof desc);
        rg_guard_seal(buf, len); /* re-sealed: the CRC passes */
        spit(mut, buf, len);
        const char *only = getenv("RG_FUZZ_ONLY"); /* RG_FUZZ_ONLY=k: only mutation k, kept as SCRATCH/mutant.h5 */
        if (only && atoi(only) != k) continue;
        if (only) {
            printf("mutation %d: %s: library %s\n", k, desc, l_names[run_lib(mut, &ref)]);
            return 0;
        }
        int o = run_lib(mut, &ref);
        lib[o]++;
        if (o >= L_SILENT) printf("  library %s: mutation %d: %s\n", l_names[o], k, desc);
        int e = run_prog(eval_argv);
        if (e >= 0) { eval_bad[e]++; printf("  --eval %s: mutation %d: %s\n", l_names[e], k, desc); }
        else if (-1 - e <= 2) eval_exit[-1 - e]++;
        else { eval_bad[L_CRASH]++; printf("  --eval exit %d: mutation %d: %s\n", -1 - e, k, desc); }
        if (resume_every > 0 && k % resume_every == 0) {
            n_res++;
            int q = run_prog(resume_argv);
            if (q >= 0) { res_bad[q]++; printf("  --resume %s: mutation %d: %s\n", l_names[q], k, desc); }
            else if (-1 - q <= 2) res_exit[-1 - q]++;
            else { res_bad[L_CRASH]++; printf("  --resume exit %d: mutation %d: %s\n", -1 - q, k, desc); }
        }
        if ((k + 1) % 250 == 0) {
            printf("  ... %d mutations, %ld s\n", k + 1, (long)(time(NULL) - t0));
            fflush(stdout);
        }
    }
    long wall = (long)(time(NULL) - t0);
    printf("\n%d re-sealed mutations of %s (%zu bytes, %zu outside the value chunks), seed %llu, %ld s\n", n_mut,
           ref_path, n, n_meta, (unsigned long long)seed, wall);
    printf("| load | crashes | hangs | silent loads | clean errors (of them: HDF5 crashed or hung in the reader "
           "process) | loads, same values | loads, in-range attribute edit |\n|---|---|---|---|---|---|---|\n");
    printf("| library (read_config + load) | %d | %d | %d | %d (%d) | %d | %d |\n", lib[L_CRASH], lib[L_HANG],
           lib[L_SILENT], lib[L_ERROR] + lib[L_CAUGHT], lib[L_CAUGHT], lib[L_SAME], lib[L_EDITED]);
    printf("\n| train_order | runs | crashes | hangs | exit 0 | exit 1 | exit 2 |\n|---|---|---|---|---|---|---|\n");
    printf("| --eval | %d | %d | %d | %d | %d | %d |\n", n_mut, eval_bad[L_CRASH], eval_bad[L_HANG], eval_exit[0],
           eval_exit[1], eval_exit[2]);
    printf("| --resume (one step) | %d | %d | %d | %d | %d | %d |\n", n_res, res_bad[L_CRASH], res_bad[L_HANG],
           res_exit[0], res_exit[1], res_exit[2]);
    int defects = lib[L_CRASH] + lib[L_HANG] + lib[L_SILENT] + eval_bad[L_CRASH] + eval_bad[L_HANG] +
                  res_bad[L_CRASH] + res_bad[L_HANG];
    printf("\ndefects (crashes, hangs, silent loads): %d\n", defects);
    unlink(mut);
    free(buf);
    free(meta);
    free(chunk);
    free(orig);
    return defects ? 1 : 0;
}
