/* bench/bench.c: the training-step benchmark (see bench/README.md; `make bench` runs it through
 * bench/run.sh, next to bench/bench_torch.py). A benchmark, never a test: nothing here fails on speed.
 *
 * What one row measures: the C training step exactly as src/engine/run/run.c takes it
 *     rg_ctx_reset, rg_model_forward, rg_cross_entropy (ignore -100), rg_params_zero_grad, rg_backward,
 *     rg_params_clip_grad_norm(1.0), rg_lr_schedule (peak 1e-3, warmup 100, cosine to 0.1 over 1000 steps),
 *     rg_adamw_step (betas 0.9/0.98, eps 1e-8, weight decay 0.01 on 2-D parameters)
 * on fixed-length copy-task batches (every row n symbols, built with rg_task_batch_build; a fresh batch per step,
 * built outside the timed region). The model reads the 2n+2 input tokens of each sample (BOS x SEP y; the final
 * EOS is only a target), so T = 2n+2: 34 for n=16, 130 for n=64.
 *
 * Every row runs in its own process (fork + exec of this binary with --child-row; bench/child.c is what such a
 * process runs), so that the peak resident memory (getrusage ru_maxrss) is that row's own and every row starts with
 * a fresh OpenBLAS. The product ceilings are measured the same way (--child-ceiling, bench/ceiling.c), OpenBLAS's
 * with the CPU's own kernel set (OPENBLAS_CORETYPE set for that child) and, when it differs, the environment's.
 *
 * FLOPs counted (matrix products only; elementwise work, softmax, LayerNorm, the optimizer are not counted):
 *   M = B*T tokens, d = d_model, f = d_ff, V = vocab, L = layers
 *   forward GEMM FLOPs  F = L * ( 4 * 2*M*d*d        q, k, v, o projections
 *                               + 2 * 2*M*d*f        MLP fc1 and fc2
 *                               + 2 * 2*B*T*T*d )    QK^T and PV: per (batch, head) 2*T*T*hd each, H*hd = d,
 *                                                    counted as full T x T products (no causal saving)
 *                         + 2*M*d*V                  lm_head
 *   training FLOPs per step = 3 * F                  (backward = 2 GEMMs per forward GEMM: dX and dW)
 *   achieved GFLOP/s = 3F / median step time;  percent of the ceiling of the row's precision at the same thread
 *   count, the ceiling being the fastest kernel's best of CEIL_REPS large square products (the machine's
 *   capability; other jobs only lower it). At 1 thread also 3F / the time inside products: the products' share.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cblas.h>

#include "bench.h"
#include "bench_parent.h"
#include "task/task.h"
#include "tensor/gemm.h" /* rg_bf16_supported (internal: the benchmark reports what ran) */

/* ------------------------------------------------------------------ configurations */

const bench_model MODELS[N_MODELS] = {
    {"ref", 64, 4, 2, 256, 64, 16, 0, 1},      /* the reference model of tools/ref_model.py */
    {"large", 256, 8, 4, 1024, 16, 64, 0, 1},
    {"exp", 64, 4, 2, 256, 64, 16, 1, 8},      /* exactly train_order's step: ref model, sampled copy batches */
};

const bench_pos POS[N_POS] = {
    {"rope", RG_POS_ROPE},   /* interleaved pairs */
    {"t5", RG_POS_T5},
};

/* ------------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench [--quick] [--torch FILE] [--torch-skipped REASON] [--threads 1,2] [--models ref,large]\n"
            "             [--pos rope,t5] [--precision fp32,bf16] [--no-rss] [--ceiling-n N] [--label TEXT]\n"
            "             [--chunks K]\n"
            "       bench --own-coretype\n"
            "  Times the ropegrad training step (forward, cross-entropy, backward, clip 1.0, AdamW) and the product\n"
            "  ceilings (OpenBLAS, libxsmm, oneDNN fp32 and bf16), and prints one table. --torch FILE adds\n"
            "  bench/bench_torch.py's results (its TSV).\n"
            "  --quick: a short run (few steps, smaller ceiling products, RSS check over 200 steps instead of 1000).\n"
            "  --threads: up to 8 thread counts, each 1..64. --models: ref, large, exp. --pos: rope, t5.\n"
            "  --precision: the products' precision (rg_set_linear_precision; default fp32,bf16, bf16 rows\n"
            "  printed as refused where the build or CPU has no bf16 products).\n"
            "  --ceiling-n N: the ceiling products' size, a multiple of 256 up to 16384 (default 2048, 1024 with\n"
            "  --quick).\n"
            "  --own-coretype: prints the OpenBLAS kernel set made for this CPU (an OPENBLAS_CORETYPE value;\n"
            "  bench/run.sh's second pass), or nothing, and exits.\n"
            "  --chunks K: the C step computes the batch in K row chunks (rg_model_loss_backward; default 1).\n"
            "  See bench/README.md.\n");
}

static int model_index(const char *name)
{
    for (int i = 0; i < N_MODELS; i++)
        if (!strcmp(name, MODELS[i].name)) return i;
    return -1;
}

static int prec_index(const char *name)
{
    for (int i = 0; i < N_PREC; i++)
        if (!strcmp(name, rg_precision_name(PRECS[i]))) return i;
    return -1;
}

static int pos_index(const char *name)
{
    for (int i = 0; i < N_POS; i++)
        if (!strcmp(name, POS[i].name)) return i;
    return -1;
}

/* A comma-separated list of names as a mask of their indices (index_of: -1 for an unknown name); -1 on an unknown
 * name or an empty list. */
static int parse_list(const char *s, int (*index_of)(const char *))
{
    int mask = 0;
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return -1;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int i = index_of(tok);
        if (i < 0) return -1;
        mask |= 1 << i;
    }
    return mask ? mask : -1;
}

/* A whole decimal integer in [lo, hi] into *out; -1 otherwise. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* --threads: 1 to MAX_THREADS comma-separated counts, each 1..64; -1 otherwise. */
static int parse_threads(const char *s, bench_opts *o)
{
    char buf[128];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return -1;
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (n == MAX_THREADS || parse_int(tok, 1, 64, &o->threads[n++])) return -1;
    if (n == 0) return -1;
    o->n_threads = n;
    return 0;
}

static int bad_usage(const char *opt, const char *val, const char *allowed)
{
    fprintf(stderr, "bench: bad %s '%s': %s\n", opt, val, allowed);
    return 2;
}

/* One option of getopt_long's table (c) with its argument v; 0, or 2 after a message. */
static int parse_opt(int c, const char *v, bench_opts *o)
{
    int k;
    switch (c) {
    case 'q': o->quick = true; return 0;
    case 'R': o->rss = false; return 0;
    case 't': o->torch_path = v; return 0;
    case 's': o->torch_skipped = v; return 0;
    case 'l': o->label = v; return 0;
    case 'g':
        return parse_int(v, 256, 16384, &o->ceiling_n) || o->ceiling_n % 256
                   ? bad_usage("--ceiling-n", v, "a multiple of 256 up to 16384") : 0;
    case 'c':
        if (parse_int(v, 1, 1 << 20, &k)) return bad_usage("--chunks", v, "an integer >= 1");
        setenv("RG_BENCH_CHUNKS", v, 1); /* read by the --child-row processes */
        return 0;
    case 'm':
        o->model_mask = parse_list(v, model_index);
        return o->model_mask < 0 ? bad_usage("--models", v, "a comma-separated list of ref, large, exp") : 0;
    case 'p':
        o->pos_mask = parse_list(v, pos_index);
        return o->pos_mask < 0 ? bad_usage("--pos", v, "a comma-separated list of rope, t5") : 0;
    case 'P':
        o->prec_mask = parse_list(v, prec_index);
        return o->prec_mask < 0 ? bad_usage("--precision", v, "a comma-separated list of fp32, bf16") : 0;
    case 'T':
        return parse_threads(v, o) ? bad_usage("--threads", v, "up to 8 comma-separated counts, each 1..64") : 0;
    case 'C': o->child_row = v; return 0;
    case 'S': o->child_ceiling = v; return 0;
    default: usage(stderr); return 2;
    }
}

/* The command line into o: -1 to go on, else the exit status (0 after --help, 2 after a message). */
static int parse_args(int argc, char **argv, bench_opts *o)
{
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, 'q'},          {"no-rss", no_argument, NULL, 'R'},
        {"torch", required_argument, NULL, 't'},    {"torch-skipped", required_argument, NULL, 's'},
        {"label", required_argument, NULL, 'l'},    {"ceiling-n", required_argument, NULL, 'g'},
        {"chunks", required_argument, NULL, 'c'},   {"models", required_argument, NULL, 'm'},
        {"pos", required_argument, NULL, 'p'},      {"threads", required_argument, NULL, 'T'},
        {"precision", required_argument, NULL, 'P'}, {"help", no_argument, NULL, 'h'},
        {"own-coretype", no_argument, NULL, 'O'},
        {"child-row", required_argument, NULL, 'C'}, /* internal: one row in this process (run_rows) */
        {"child-ceiling", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'O') {
            const char *own = bench_own_coretype();
            if (own) printf("%s\n", own);
            return 0;
        }
        int rc = parse_opt(c, optarg, o);
        if (rc) return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "bench: unexpected argument '%s' (bench takes options only)\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return -1;
}

/* --child-row M,P,PREC,THREADS,WARMUP,WARMUP_S,MIN,TARGET,TARGET_S,RSS (as run_rows writes it): one row here. */
static int child_row_main(const char *spec)
{
    int mi, pi, ri, threads, n;
    run_plan p;
    if (sscanf(spec, "%d,%d,%d,%d,%d,%lf,%d,%d,%lf,%d%n", &mi, &pi, &ri, &threads, &p.warmup_steps, &p.warmup_s,
               &p.min_steps, &p.target_steps, &p.target_s, &p.rss_steps, &n) != 10 || spec[n] || mi < 0 ||
        mi >= N_MODELS || pi < 0 || pi >= N_POS || ri < 0 || ri >= N_PREC || threads < 1 || p.min_steps < 1 ||
        p.target_steps < 1)
        return bad_usage("--child-row", spec,
                         "the parent's M,P,PREC,THREADS,WARMUP,WARMUP_S,MIN,TARGET,TARGET_S,RSS");
    return bench_child_row(mi, pi, threads, ri, &p);
}

/* --child-ceiling N,THREADS,REPS,BLAS_ONLY: the ceilings here (bench/ceiling.c). */
static int child_ceiling_main(const char *spec)
{
    int N, threads, reps, blas_only, n;
    if (sscanf(spec, "%d,%d,%d,%d%n", &N, &threads, &reps, &blas_only, &n) != 4 || spec[n] || N < 1 ||
        threads < 1 || reps < 1)
        return bad_usage("--child-ceiling", spec, "the parent's N,THREADS,REPS,BLAS_ONLY");
    return bench_child_ceiling(N, threads, reps, blas_only != 0);
}

/* ------------------------------------------------------------------ parent: the child processes */

/* Runs this binary with args in a child process and returns its stdout (malloc'ed; NULL if it failed). */
static char *run_child(char *const *args)
{
    int fd[2];
    if (pipe(fd)) return NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return NULL;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        execv("/proc/self/exe", args);
        fprintf(stderr, "bench: exec /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(fd[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    buf[len] = 0;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The CEIL lines of a child's output into res (openblas into res[blas]). */
static void parse_ceilings(char *out, ceil_kernel blas, ceil_result *res)
{
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char kname[32], detail[64];
        double med, best;
        if (sscanf(line, "CEIL %31s %lf %lf %63s", kname, &med, &best, detail) != 4) continue;
        int k = !strcmp(kname, "openblas")      ? (int)blas
                : !strcmp(kname, "libxsmm")     ? CK_XSMM
                : !strcmp(kname, "onednn_f32")  ? CK_DNNL_F32
                : !strcmp(kname, "onednn_bf16") ? CK_DNNL_BF16
                                                : -1;
        if (k < 0) continue;
        res[k] = (ceil_result){true, med, best, ""};
        snprintf(res[k].detail, sizeof res[k].detail, "%s", detail);
    }
}

/* One ceiling child at o->threads[ti] with OPENBLAS_CORETYPE=coretype (NULL: the environment as given). */
static void ceiling_child(const char *argv0, bench_run *b, int ti, const char *coretype, bool blas_only)
{
    const bench_opts *o = b->o;
    char spec[64], saved[64] = "";
    const char *given = getenv("OPENBLAS_CORETYPE");
    if (given) snprintf(saved, sizeof saved, "%s", given);
    snprintf(spec, sizeof spec, "%d,%d,%d,%d", o->ceiling_n, o->threads[ti], CEIL_REPS, blas_only);
    char *args[] = {(char *)argv0, "--child-ceiling", spec, NULL};
    fprintf(stderr, "bench: ceilings %d^3, %d thread(s), OpenBLAS %s%s...\n", o->ceiling_n, o->threads[ti],
            coretype ? coretype : "as given", blas_only ? " only" : "");
    if (coretype) setenv("OPENBLAS_CORETYPE", coretype, 1);
    char *out = run_child(args);
    if (coretype && given) setenv("OPENBLAS_CORETYPE", saved, 1);
    else if (coretype) unsetenv("OPENBLAS_CORETYPE");
    if (!out) fprintf(stderr, "bench: the ceiling child failed\n");
    else parse_ceilings(out, coretype ? CK_BLAS_OWN : CK_BLAS_GIVEN, b->ceil[ti]);
    free(out);
}

/* The ceilings per thread count: every kernel with OpenBLAS on the CPU's own kernel set, then OpenBLAS as the
 * environment has it when that is another set (the rows run with the environment's). */
static void run_ceilings(const char *argv0, bench_run *b)
{
    const bench_opts *o = b->o;
    for (int ti = 0; ti < o->n_threads; ti++) {
        ceiling_child(argv0, b, ti, b->own_core, false);
        if (!b->own_core) continue;
        if (strcasecmp(b->ceil[ti][CK_BLAS_OWN].detail, b->core)) ceiling_child(argv0, b, ti, NULL, true);
        else b->ceil[ti][CK_BLAS_GIVEN] = b->ceil[ti][CK_BLAS_OWN];
    }
}

/* One training-step row in its own child into r; rss_steps as in run_plan. */
static void run_row(const char *argv0, const run_plan *pl, int mi, int pi, int ri, int threads, int rss_steps,
                    row_result *r)
{
    char spec[256];
    snprintf(spec, sizeof spec, "%d,%d,%d,%d,%d,%.17g,%d,%d,%.17g,%d", mi, pi, ri, threads, pl->warmup_steps,
             pl->warmup_s, pl->min_steps, pl->target_steps, pl->target_s, rss_steps);
    char *args[] = {(char *)argv0, "--child-row", spec, NULL};
    fprintf(stderr, "bench: %s/%s %s, %d thread(s)%s...\n", MODELS[mi].name, POS[pi].name,
            rg_precision_name(PRECS[ri]), threads, rss_steps ? " (with the RSS run)" : "");
    char *out = run_child(args);
    if (out && sscanf(out, "ROW %lf %lf %lf %d %ld %ld %ld %ld %ld %lld %lld %lld %zu %lf %63s %lf %lf %lf %lf %lf %lf %lf",
                      &r->ms_med, &r->ms_min, &r->cpu_min, &r->steps, &r->peak_kb, &r->rss_a, &r->rss_b, &r->max_a, &r->max_b, &r->mallocs_a,
                      &r->mallocs_b, &r->total_steps, &r->arena_hw, &r->loss, r->core, &r->flops, &r->bytes,
                      &r->tokens, &r->elem_ms, &r->floor_ms, &r->copy_gbs, &r->prod_ms) == 22)
        r->ok = 1;
    else
        fprintf(stderr, "bench: the %s/%s row failed\n", MODELS[mi].name, POS[pi].name);
    free(out);
}

/* Every selected model x encoding x thread count; the long RSS run only for the reference model with the first
 * selected encoding and thread count. */
static void run_rows(const char *argv0, bench_run *b)
{
    const bench_opts *o = b->o;
    int first_pos = 0;
    while (!(o->pos_mask & (1 << first_pos))) first_pos++;
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (!(o->model_mask & (1 << mi))) continue;
        for (int pi = 0; pi < N_POS; pi++) {
            if (!(o->pos_mask & (1 << pi))) continue;
            for (int ri = 0; ri < N_PREC; ri++) {
                if (!(o->prec_mask & (1 << ri)) || (PRECS[ri] == RG_PRECISION_BF16 && b->bf16_why[0])) continue;
                for (int ti = 0; ti < o->n_threads; ti++) {
                    int rss_steps = (mi == 0 && pi == first_pos && ri == 0 && ti == 0) ? b->plan.rss_steps : 0;
                    run_row(argv0, &b->plan, mi, pi, ri, o->threads[ti], rss_steps, &b->res[mi][pi][ri][ti]);
                }
            }
        }
    }
}


/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    /* defaults: every model and encoding at 1 and 2 threads, the full plan with the RSS run */
    bench_opts o = {.rss = true, .threads = {1, 2}, .n_threads = 2, .model_mask = (1 << N_MODELS) - 1,
                    .pos_mask = (1 << N_POS) - 1, .prec_mask = (1 << N_PREC) - 1};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (o.child_row) return child_row_main(o.child_row);
    if (o.child_ceiling) return child_ceiling_main(o.child_ceiling);
    if (!o.ceiling_n) o.ceiling_n = o.quick ? 1024 : 2048;

    /* build: the plan (warm-up: 10 steps or 2 s, at least 2; timed: at least 3, then 30 steps or 3 s, whichever
     * comes first; bench_torch.py uses the same plan), PyTorch's results, the machine at the start */
    static bench_run b; /* static: the results table is large for a stack */
    b.o = &o;
    b.plan = o.quick ? (run_plan){3, 0.5, 3, 10, 0.5, o.rss ? 200 : 0}
                     : (run_plan){10, 2.0, 3, 30, 3.0, o.rss ? 1000 : 0};
    b.have_torch = o.torch_path && read_torch(o.torch_path, &b.torch) == 0 && b.torch.n > 0;
    load_avg(b.load0, sizeof b.load0);
    snprintf(b.core, sizeof b.core, "%s", bench_core_name());
    b.own_core = bench_own_coretype();
    if (!rg_bf16_supported(b.bf16_why, sizeof b.bf16_why) && !b.bf16_why[0]) snprintf(b.bf16_why, 2, "?");

    /* run: every measurement in a child of its own */
    run_ceilings(argv[0], &b);
    run_rows(argv[0], &b);
    load_avg(b.load1, sizeof b.load1);

    print_header(&b);
    print_table(&b);
    print_footer(&b);
    print_targets(&b);
    return 0;
}
