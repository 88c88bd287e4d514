/* bench/bench.c: the training-step benchmark of issue 8 (see bench/README.md; `make bench` runs it through
 * bench/run.sh, next to bench/bench_torch.py). A benchmark, never a test: nothing here fails on speed.
 *
 * What one row measures: the C training step exactly as examples/train_order/run.c takes it
 *     rg_ctx_reset, rg_model_forward, rg_cross_entropy (ignore -100), rg_params_zero_grad, rg_backward,
 *     rg_params_clip_grad_norm(1.0), rg_lr_schedule (peak 1e-3, warmup 100, cosine to 0.1 over 1000 steps),
 *     rg_adamw_step (betas 0.9/0.98, eps 1e-8, weight decay 0.01 on 2-D parameters)
 * on fixed-length copy-task batches (every row n symbols, built with rg_task_batch_build; a fresh batch per step,
 * built outside the timed region). The model reads the 2n+2 input tokens of each sample (BOS x SEP y; the final
 * EOS is only a target), so T = 2n+2: 34 for n=16, 130 for n=64.
 *
 * Every row runs in its own process (fork + exec of this binary with --child-row), so that the peak resident
 * memory (getrusage ru_maxrss) is that row's own and every row starts with a fresh OpenBLAS. The sgemm ceiling
 * is measured the same way (--child-sgemm).
 *
 * FLOPs counted (matrix products only; elementwise work, softmax, LayerNorm, the optimizer are not counted):
 *   M = B*T tokens, d = d_model, f = d_ff, V = vocab, L = layers
 *   forward GEMM FLOPs  F = L * ( 4 * 2*M*d*d        q, k, v, o projections
 *                               + 2 * 2*M*d*f        MLP fc1 and fc2
 *                               + 2 * 2*B*T*T*d )    QK^T and PV: per (batch, head) 2*T*T*hd each, H*hd = d,
 *                                                    counted as full T x T products (no causal saving)
 *                         + 2*M*d*V                  lm_head
 *   training FLOPs per step = 3 * F                  (backward = 2 GEMMs per forward GEMM: dX and dW)
 *   achieved GFLOP/s = 3F / median step time;  percent of the sgemm ceiling at the same thread count, the ceiling
 *   being the best of SGEMM_REPS large square cblas_sgemm calls (the machine's capability; other jobs only lower
 *   it).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "ropegrad.h"
#include "task/task.h"

/* ------------------------------------------------------------------ configurations */

typedef struct {
    const char *name;
    int d_model, n_heads, n_layers, d_ff;
    int batch, n;   /* batch rows of n symbols each: T = 2n+2 */
    int sampled;    /* 0: every row n symbols; 1: train_order's batches (rg_task_batch_sample, n <= L_train = n) */
    int micro;      /* micro-batches of a sampled batch (train_order's default 8) */
} bench_model;

static const bench_model MODELS[] = {
    {"ref", 64, 4, 2, 256, 64, 16, 0, 1},      /* the reference model of tools/ref_model.py */
    {"large", 256, 8, 4, 1024, 16, 64, 0, 1},
    {"exp", 64, 4, 2, 256, 64, 16, 1, 8},      /* exactly train_order's step: ref model, sampled copy batches */
};
#define N_MODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

static const struct { const char *name; rg_pos_kind kind; } POS[] = {
    {"rope", RG_POS_ROPE},   /* interleaved pairs */
    {"t5", RG_POS_T5},
};
#define N_POS ((int)(sizeof POS / sizeof POS[0]))
#define SGEMM_REPS 3

/* Timing plan of one row. */
typedef struct {
    int warmup_steps;      /* warm-up: this many steps, or fewer if warmup_s runs out (at least 2) */
    double warmup_s;
    int min_steps;         /* timed: at least min_steps, then stop at target_steps or after target_s */
    int target_steps;
    double target_s;
    int rss_steps;         /* 0, or run to this many steps in all and report RSS after 100 and after it */
} run_plan;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int seq_T(const bench_model *bm) { return 2 * bm->n + 2; }

/* Training FLOPs of B rows of T tokens (the formula at the top of this file). */
static double flops_bt(const bench_model *bm, int vocab, double B, double T)
{
    double M = B * T, d = bm->d_model, f = bm->d_ff;
    double per_layer = 4 * 2 * M * d * d + 2 * 2 * M * d * f + 2 * 2 * B * T * T * d;
    double fwd = bm->n_layers * per_layer + 2 * M * d * vocab;
    return 3 * fwd;
}

/* Training FLOPs per step of a fixed-length row. */
static double train_flops(const bench_model *bm, int vocab) { return flops_bt(bm, vocab, bm->batch, seq_T(bm)); }

/* Training FLOPs of a batch as rg_train_step runs it: rows sorted by length, k micro-batches of ceil(B/k) rows, each
 * padded to its longest row. */
static double batch_flops(const bench_model *bm, const int *len, int B, int k)
{
    int sorted[1024];
    for (int i = 0; i < B && i < 1024; i++) {
        int j = i;
        for (; j > 0 && sorted[j - 1] > len[i]; j--) sorted[j] = sorted[j - 1];
        sorted[j] = len[i];
    }
    if (k > B) k = B;
    int per = (B + k - 1) / k;
    double fl = 0;
    for (int lo = 0; lo < B; lo += per) {
        int rows = lo + per <= B ? per : B - lo;
        fl += flops_bt(bm, RG_TASK_VOCAB, rows, sorted[lo + rows - 1]);
    }
    return fl;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* kilobytes on Linux */
}

/* Current resident set (VmRSS) in kB from /proc/self/statm; -1 if unavailable. */
static long cur_rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, res;
    if (!f) return -1;
    int ok = fscanf(f, "%ld %ld", &size, &res) == 2;
    fclose(f);
    return ok ? res * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

static const char *core_name(void)
{
    const char *s = openblas_get_corename();
    return s && *s ? s : "?";
}

/* ------------------------------------------------------------------ child: one row */

typedef struct {
    rg_model *m;
    rg_adamw opt;
    rg_trainer tr;
    rg_task_batch batch;
    int *ns;
    int32_t *x, *y;
    rg_rng rng;
    const bench_model *bm;
    int64_t step;
    double flops, tokens;  /* matrix-product FLOPs and tokens (micro-batch padding included) of the steps taken */
} trainer;

/* A fresh copy-task batch (not timed): fixed-length rows, or sampled as train_order samples them. */
static void next_batch(trainer *t)
{
    const bench_model *bm = t->bm;
    if (bm->sampled) {
        if (rg_task_batch_sample(&t->batch, RG_TASK_COPY, &t->rng, bm->batch, bm->n)) goto fail;
        return;
    }
    for (int i = 0; i < bm->batch; i++)
        if (rg_task_sample(RG_TASK_COPY, &t->rng, bm->n, t->x + (size_t)i * bm->n, t->y)) goto fail;
    if (rg_task_batch_build(&t->batch, RG_TASK_COPY, bm->batch, t->ns, t->x, bm->n)) goto fail;
    return;
fail:
    fprintf(stderr, "bench: batch: %s\n", rg_last_error());
    exit(1);
}

/* Row chunks per step: RG_BENCH_CHUNKS (set by --chunks in the parent), default 1 (the batch in one piece). */
static int bench_chunks(void)
{
    const char *e = getenv("RG_BENCH_CHUNKS");
    int k = e ? atoi(e) : 1;
    return k >= 1 ? k : 1;
}

/* One training step as examples/train_order/run.c takes it (rg_train_step); returns its wall time in seconds. */
static double train_step(trainer *t, double *loss_out)
{
    next_batch(t);
    const bench_model *bm = t->bm;
    /* fixed rows: the batch in `chunks` micro-batches (1 = one piece); sampled rows: train_order's micro-batches */
    int k = bm->sampled ? bm->micro : bench_chunks();
    rg_batch rb = {t->batch.tokens, t->batch.targets, t->batch.len, t->batch.B, t->batch.T};
    rg_step_config sc = {k, rg_lr_schedule(t->step, 1e-3, 100, 1000, 0.1), 1.0, RG_TASK_IGNORE, NULL, 0};
    rg_step_stats ss;
    double t0 = now_s();
    if (rg_train_step(&t->tr, t->m, &t->opt, &rb, &sc, &ss)) {
        fprintf(stderr, "bench: step: %s\n", rg_last_error());
        exit(1);
    }
    double dt = now_s() - t0, l = ss.loss;
    t->flops += batch_flops(bm, t->batch.len, t->batch.B, k);
    t->tokens += (double)ss.tokens;
    t->step++;
    if (!isfinite(l)) {
        fprintf(stderr, "bench: loss is %g at step %lld\n", l, (long long)t->step);
        exit(1);
    }
    *loss_out = l;
    return dt;
}

static int child_row(int model_i, int pos_i, int threads, const run_plan *p)
{
    const bench_model *bm = &MODELS[model_i];
    rg_set_num_threads(threads);
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = bm->d_model;
    cfg.n_heads = bm->n_heads;
    cfg.n_layers = bm->n_layers;
    cfg.d_ff = bm->d_ff;
    cfg.pos = POS[pos_i].kind;
    trainer t;
    memset(&t, 0, sizeof t);
    t.bm = bm;
    if (rg_model_new(&cfg, 1, &t.m) || rg_adamw_init(&t.opt, &t.m->params, 0.9, 0.98, 1e-8, 0.01) ||
        rg_task_batch_alloc(&t.batch, bm->batch, bm->n) || rg_trainer_init(&t.tr)) {
        fprintf(stderr, "bench: setup: %s\n", rg_last_error());
        return 1;
    }
    t.ns = malloc(sizeof(int) * (size_t)bm->batch);
    t.x = malloc(sizeof(int32_t) * (size_t)bm->batch * (size_t)bm->n);
    t.y = malloc(sizeof(int32_t) * (size_t)bm->n);
    if (!t.ns || !t.x || !t.y) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    for (int i = 0; i < bm->batch; i++) t.ns[i] = bm->n;
    rg_rng_seed(&t.rng, 1, 1);

    double loss = NAN, t_start = now_s();
    for (int i = 0; i < p->warmup_steps && (i < 2 || now_s() - t_start < p->warmup_s); i++) train_step(&t, &loss);
    int cap = p->target_steps > p->min_steps ? p->target_steps : p->min_steps;
    double *times = malloc(sizeof(double) * (size_t)cap), total = 0, flops0 = t.flops, tokens0 = t.tokens;
    uint64_t bytes0 = t.tr.ctx->arena.bytes_total;
    int n = 0;
    while (n < cap) {
        times[n] = train_step(&t, &loss);
        total += times[n++];
        if (n >= p->min_steps && (n >= p->target_steps || total >= p->target_s)) break;
    }
    long peak_timed = maxrss_kb();
    double flops_step = (t.flops - flops0) / n, tokens_step = (t.tokens - tokens0) / n, bytes_step = (double)(t.tr.ctx->arena.bytes_total - bytes0) / n;
    double ms_min = 1e300;
    for (int i = 0; i < n; i++) ms_min = fmin(ms_min, 1e3 * times[i]);
    double ms_med = 1e3 * median(times, n);

    /* Memory over a long run: RSS after step 100 and after step rss_steps (the arena should stop growing after
     * the first step, so neither the RSS nor the arena's malloc count may move). */
    long rss_a = -1, rss_b = -1, max_a = -1, max_b = -1;
    long long mallocs_a = -1, mallocs_b = -1;
    if (p->rss_steps > 0) {
        while (t.step < 100) train_step(&t, &loss);
        rss_a = cur_rss_kb();
        max_a = maxrss_kb();
        mallocs_a = (long long)t.tr.ctx->arena.n_mallocs;
        while (t.step < p->rss_steps) train_step(&t, &loss);
        rss_b = cur_rss_kb();
        max_b = maxrss_kb();
        mallocs_b = (long long)t.tr.ctx->arena.n_mallocs;
    }
    printf("ROW\t%.4f\t%.4f\t%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%lld\t%lld\t%lld\t%zu\t%.4f\t%s\t%.6g\t%.6g\t%.6g\n", ms_med,
           ms_min, n, peak_timed, rss_a, rss_b, max_a, max_b, mallocs_a, mallocs_b, (long long)t.step,
           t.tr.ctx->arena.high_water, loss, core_name(), flops_step, bytes_step, tokens_step);
    fflush(stdout);
    free(times);
    rg_trainer_free(&t.tr);
    rg_task_batch_free(&t.batch);
    free(t.ns);
    free(t.x);
    free(t.y);
    rg_adamw_free(&t.opt);
    rg_model_free(t.m);
    return 0;
}

/* ------------------------------------------------------------------ child: the sgemm ceiling */

static int child_sgemm(int N, int threads, int reps)
{
    rg_set_num_threads(threads);
    size_t nn = (size_t)N * (size_t)N;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float)), *c = malloc(nn * sizeof(float));
    if (!a || !b || !c) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    rg_rng rng;
    rg_rng_seed(&rng, 3, 3);
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)(rg_rng_uniform(&rng) - 0.5);
        b[i] = (float)(rg_rng_uniform(&rng) - 0.5);
        c[i] = 0;
    }
    double flops = 2.0 * N * (double)N * N, *g = malloc(sizeof(double) * (size_t)reps);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N); /* warm-up */
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        g[r] = flops / (now_s() - t0) * 1e-9;
        best = fmax(best, g[r]);
    }
    printf("SGEMM\t%.3f\t%.3f\t%s\n", median(g, reps), best, core_name());
    fflush(stdout);
    free(g);
    free(a);
    free(b);
    free(c);
    return 0;
}

/* ------------------------------------------------------------------ parent */

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

typedef struct {
    int ok;
    double ms_med, ms_min;
    int steps;
    long peak_kb, rss_a, rss_b, max_a, max_b;
    long long mallocs_a, mallocs_b, total_steps;
    size_t arena_hw;
    double loss;
    char core[64];
    double flops, bytes, tokens; /* per timed step: matrix-product FLOPs, arena bytes handed out, tokens */
} row_result;

typedef struct {
    char model[32], pos[32];
    int threads, steps;
    double ms_med, ms_min;
} torch_row;

typedef struct {
    torch_row rows[64];
    int n;
    char version[64], core[64], coretype[64], optimizer[64];
} torch_results;

/* Reads bench_torch.py's TSV: "# key value" lines, a header line, then model pos threads steps ms_median ms_min. */
static int read_torch(const char *path, torch_results *tr)
{
    memset(tr, 0, sizeof *tr);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#') {
            char key[64], val[64];
            if (sscanf(line, "# %63s %63[^\n]", key, val) == 2) {
                if (!strcmp(key, "torch")) snprintf(tr->version, sizeof tr->version, "%s", val);
                else if (!strcmp(key, "openblas_core")) snprintf(tr->core, sizeof tr->core, "%s", val);
                else if (!strcmp(key, "OPENBLAS_CORETYPE")) snprintf(tr->coretype, sizeof tr->coretype, "%s", val);
                else if (!strcmp(key, "optimizer")) snprintf(tr->optimizer, sizeof tr->optimizer, "%s", val);
            }
            continue;
        }
        torch_row r;
        if (tr->n < 64 && sscanf(line, "%31s %31s %d %d %lf %lf", r.model, r.pos, &r.threads, &r.steps, &r.ms_med,
                                 &r.ms_min) == 6)
            tr->rows[tr->n++] = r;
    }
    fclose(f);
    return 0;
}

static const torch_row *find_torch(const torch_results *tr, const char *model, const char *pos, int threads)
{
    for (int i = 0; tr && i < tr->n; i++)
        if (!strcmp(tr->rows[i].model, model) && !strcmp(tr->rows[i].pos, pos) && tr->rows[i].threads == threads)
            return &tr->rows[i];
    return NULL;
}

static void load_avg(char *buf, size_t cap)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;
    if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
    else snprintf(buf, cap, "?");
    if (f) fclose(f);
}

/* Parses a comma-separated list of names (each in `names`, n of them) into a mask; -1 on an unknown name. */
static int parse_list(const char *s, const char *const *names, int n)
{
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int i = 0;
        while (i < n && strcmp(tok, names[i])) i++;
        if (i == n) return -1;
        mask |= 1 << i;
    }
    return mask;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench [--quick] [--torch FILE] [--torch-skipped REASON] [--threads 1,2] [--models ref,large]\n"
            "             [--pos rope,t5] [--no-rss] [--sgemm-n N] [--label TEXT] [--chunks K]\n"
            "  Times the ropegrad training step (forward, cross-entropy, backward, clip 1.0, AdamW) and OpenBLAS\n"
            "  sgemm, and prints one table. --torch FILE adds bench/bench_torch.py's results (its TSV).\n"
            "  --quick: a short run (few steps, smaller sgemm, RSS check over 200 steps instead of 1000).\n"
            "  --chunks K: the C step computes the batch in K row chunks (rg_model_loss_backward; default 1).\n"
            "  See bench/README.md.\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--child-row") && argc == 10) {
        /* argv: 2 model, 3 pos, 4 threads, 5 warm-up steps, 6 "warmup_s:target_s", 7 min, 8 target, 9 rss */
        run_plan p;
        memset(&p, 0, sizeof p);
        p.warmup_steps = atoi(argv[5]);
        p.min_steps = atoi(argv[7]);
        p.target_steps = atoi(argv[8]);
        p.rss_steps = atoi(argv[9]);
        if (sscanf(argv[6], "%lf:%lf", &p.warmup_s, &p.target_s) != 2) return 2;
        return child_row(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), &p);
    }
    if (argc >= 2 && !strcmp(argv[1], "--child-sgemm") && argc == 5)
        return child_sgemm(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));

    bool quick = false, rss = true;
    const char *torch_path = NULL, *torch_skipped = NULL, *label = NULL;
    int thread_list[8] = {1, 2}, n_threads = 2, sgemm_n = 0;
    int model_mask = (1 << N_MODELS) - 1, pos_mask = (1 << N_POS) - 1;
    const char *model_names[N_MODELS], *pos_names[N_POS];
    for (int i = 0; i < N_MODELS; i++) model_names[i] = MODELS[i].name;
    for (int i = 0; i < N_POS; i++) pos_names[i] = POS[i].name;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) quick = true;
        else if (!strcmp(a, "--no-rss")) rss = false;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (v && !strcmp(a, "--torch")) { torch_path = v; i++; }
        else if (v && !strcmp(a, "--torch-skipped")) { torch_skipped = v; i++; }
        else if (v && !strcmp(a, "--label")) { label = v; i++; }
        else if (v && !strcmp(a, "--sgemm-n")) { sgemm_n = atoi(v); i++; }
        else if (v && !strcmp(a, "--chunks")) {
            if (atoi(v) < 1) { fprintf(stderr, "bench: bad --chunks %s\n", v); return 2; }
            setenv("RG_BENCH_CHUNKS", v, 1); /* read by the --child-row processes */
            i++;
        }
        else if (v && !strcmp(a, "--models")) { model_mask = parse_list(v, model_names, N_MODELS); i++; }
        else if (v && !strcmp(a, "--pos")) { pos_mask = parse_list(v, pos_names, N_POS); i++; }
        else if (v && !strcmp(a, "--threads")) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            n_threads = 0;
            for (char *tok = strtok(buf, ","); tok && n_threads < 8; tok = strtok(NULL, ",")) {
                thread_list[n_threads] = atoi(tok);
                if (thread_list[n_threads] < 1 || thread_list[n_threads] > 64) n_threads = -100;
                n_threads++;
            }
            if (n_threads < 1) { fprintf(stderr, "bench: bad --threads %s\n", v); return 2; }
            i++;
        } else {
            fprintf(stderr, "bench: unknown or incomplete option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (model_mask <= 0 || pos_mask <= 0) {
        fprintf(stderr, "bench: unknown name in --models or --pos\n");
        return 2;
    }
    if (!sgemm_n) sgemm_n = quick ? 1024 : 2048;
    /* warm-up: 10 steps or 2 s (at least 2); timed: at least 3, then 30 steps or 3 s, whichever comes first
     * (bench_torch.py uses the same plan). */
    run_plan plan = quick ? (run_plan){3, 0.5, 3, 10, 0.5, rss ? 200 : 0}
                          : (run_plan){10, 2.0, 3, 30, 3.0, rss ? 1000 : 0};

    torch_results tr;
    bool have_torch = torch_path && read_torch(torch_path, &tr) == 0 && tr.n > 0;

    char load0[64], load1[64];
    load_avg(load0, sizeof load0);
    const char *env_core = getenv("OPENBLAS_CORETYPE"), *env_thr = getenv("OPENBLAS_NUM_THREADS"),
               *env_omp = getenv("OMP_WAIT_POLICY");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    /* the sgemm ceiling per thread count */
    double ceil_med[8] = {0}, ceil_best[8] = {0};
    char core[64] = "?";
    snprintf(core, sizeof core, "%s", core_name());
    for (int ti = 0; ti < n_threads; ti++) {
        char a_n[16], a_t[16], a_r[16];
        snprintf(a_n, sizeof a_n, "%d", sgemm_n);
        snprintf(a_t, sizeof a_t, "%d", thread_list[ti]);
        snprintf(a_r, sizeof a_r, "%d", SGEMM_REPS);
        char *args[] = {argv[0], "--child-sgemm", a_n, a_t, a_r, NULL};
        fprintf(stderr, "bench: sgemm %d^3, %d thread(s)...\n", sgemm_n, thread_list[ti]);
        char *out = run_child(args);
        char c2[64];
        if (!out || sscanf(out, "SGEMM %lf %lf %63s", &ceil_med[ti], &ceil_best[ti], c2) != 3)
            fprintf(stderr, "bench: the sgemm child failed\n");
        free(out);
    }

    int first_pos = 0;
    while (!(pos_mask & (1 << first_pos))) first_pos++;
    /* the training-step rows */
    row_result res[N_MODELS][N_POS][8];
    memset(res, 0, sizeof res);
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (!(model_mask & (1 << mi))) continue;
        for (int pi = 0; pi < N_POS; pi++) {
            if (!(pos_mask & (1 << pi))) continue;
            for (int ti = 0; ti < n_threads; ti++) {
                /* the long RSS run only for the reference model with the first encoding and thread count */
                int rss_steps = (mi == 0 && pi == first_pos && ti == 0) ? plan.rss_steps : 0;
                char a[8][32];
                snprintf(a[0], 32, "%d", mi);
                snprintf(a[1], 32, "%d", pi);
                snprintf(a[2], 32, "%d", thread_list[ti]);
                snprintf(a[3], 32, "%d", plan.warmup_steps);
                snprintf(a[4], 32, "%g:%g", plan.warmup_s, plan.target_s);
                snprintf(a[5], 32, "%d", plan.min_steps);
                snprintf(a[6], 32, "%d", plan.target_steps);
                snprintf(a[7], 32, "%d", rss_steps);
                char *args[] = {argv[0], "--child-row", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL};
                fprintf(stderr, "bench: %s/%s, %d thread(s)%s...\n", MODELS[mi].name, POS[pi].name, thread_list[ti],
                        rss_steps ? " (with the RSS run)" : "");
                char *out = run_child(args);
                row_result *r = &res[mi][pi][ti];
                if (out && sscanf(out, "ROW %lf %lf %d %ld %ld %ld %ld %ld %lld %lld %lld %zu %lf %63s %lf %lf %lf",
                                  &r->ms_med, &r->ms_min, &r->steps, &r->peak_kb, &r->rss_a, &r->rss_b, &r->max_a,
                                  &r->max_b, &r->mallocs_a, &r->mallocs_b, &r->total_steps, &r->arena_hw, &r->loss,
                                  r->core, &r->flops, &r->bytes, &r->tokens) == 17)
                    r->ok = 1;
                else
                    fprintf(stderr, "bench: the %s/%s row failed\n", MODELS[mi].name, POS[pi].name);
                free(out);
            }
        }
    }
    load_avg(load1, sizeof load1);

    /* ---- the table */
    printf("\n## ropegrad training step vs PyTorch%s%s\n\n", label ? ": " : "", label ? label : "");
    printf("- OpenBLAS: %s; core in use: **%s**; OPENBLAS_CORETYPE=%s, OPENBLAS_NUM_THREADS=%s, "
           "OMP_WAIT_POLICY=%s\n", openblas_get_config(), core, env_core ? env_core : "(unset)",
           env_thr ? env_thr : "(unset)", env_omp ? env_omp : "(unset)");
    printf("- machine: %ld CPUs online; load average %s at start, %s at end (other jobs share the CPUs: noisy)\n",
           ncpu, load0, load1);
    printf("- sgemm ceiling (cblas_sgemm %d x %d x %d, best of %d after a warm-up call):", sgemm_n, sgemm_n, sgemm_n,
           SGEMM_REPS);
    for (int ti = 0; ti < n_threads; ti++)
        printf("%s %d thread%s **%.1f GFLOP/s** (median %.1f)", ti ? "," : "", thread_list[ti],
               thread_list[ti] > 1 ? "s" : "", ceil_best[ti], ceil_med[ti]);
    printf("\n");
    printf("- step: forward + cross-entropy + zero_grad + backward + clip 1.0 + AdamW; median of %s%d-%d timed steps "
           "after %d warm-up steps (fewer when a step is slow: %g s warm-up, %g s timed)\n",
           quick ? "(quick run) " : "", plan.min_steps, plan.target_steps, plan.warmup_steps, plan.warmup_s,
           plan.target_s);
    if (have_torch)
        printf("- PyTorch %s (OpenBLAS core %s, OPENBLAS_CORETYPE=%s), %s, from %s\n", tr.version, tr.core,
               tr.coretype[0] ? tr.coretype : "?", tr.optimizer[0] ? tr.optimizer : "AdamW", torch_path);
    else if (torch_skipped)
        printf("- PyTorch: skipped (%s)\n", torch_skipped);
    else if (torch_path)
        printf("- PyTorch: skipped (no results in %s)\n", torch_path);
    else
        printf("- PyTorch: not run (pass --torch FILE; bench/run.sh does)\n");
    printf("- C step: rg_train_step; fixed-length rows in %d micro-batch(es) (gradient accumulation: the same "
           "gradient as one piece); row \"exp\": train_order's own step (copy batches from rg_task_batch_sample, "
           "n = 1..16, 8 length-sorted micro-batches; B x T shows the longest T; GFLOP/s from each step's "
           "micro-batch shapes); arena MB/step: intermediate memory handed out per step (bytes written)\n",
           bench_chunks());
    if (have_torch && strcmp(tr.core, core))
        printf("- WARNING: PyTorch ran with OpenBLAS core %s, the C side with %s: not comparable\n", tr.core, core);
    printf("\n| model | B x T | pos | thr | C ms/step | C min | tokens/s | GFLOP/s | %% sgemm | peak RSS MB |"
           " arena MB/step | PyTorch ms/step | speedup |\n");
    printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (!(model_mask & (1 << mi))) continue;
        const bench_model *bm = &MODELS[mi];
        double fl = train_flops(bm, RG_TASK_VOCAB);
        for (int pi = 0; pi < N_POS; pi++) {
            if (!(pos_mask & (1 << pi))) continue;
            for (int ti = 0; ti < n_threads; ti++) {
                const row_result *r = &res[mi][pi][ti];
                printf("| %s | %d x %d | %s | %d |", bm->name, bm->batch, seq_T(bm), POS[pi].name, thread_list[ti]);
                if (!r->ok) {
                    printf(" failed | | | | | | | | |\n");
                    continue;
                }
                double gf = (r->flops > 0 ? r->flops : fl) / (r->ms_med * 1e-3) * 1e-9;
                double tok = (r->tokens > 0 ? r->tokens : (double)bm->batch * seq_T(bm)) / (r->ms_med * 1e-3);
                printf(" %.2f | %.2f | %.0f | %.1f | %.0f%% | %.1f | %.1f |", r->ms_med, r->ms_min, tok, gf,
                       ceil_best[ti] > 0 ? 100 * gf / ceil_best[ti] : NAN, r->peak_kb / 1024.0, r->bytes / 1048576.0);
                const torch_row *t = have_torch ? find_torch(&tr, bm->name, POS[pi].name, thread_list[ti]) : NULL;
                if (t) printf(" %.2f | %.2fx |\n", t->ms_med, t->ms_med / r->ms_med);
                else printf(" - | - |\n");
            }
        }
    }
    printf("\nGFLOP per training step (3 x forward matrix products):");
    for (int mi = 0; mi < N_MODELS; mi++)
        if ((model_mask & (1 << mi)) && !MODELS[mi].sampled)
            printf(" %s %.3f;", MODELS[mi].name, train_flops(&MODELS[mi], RG_TASK_VOCAB) * 1e-9);
    printf(" speedup = PyTorch ms / C ms (> 1: C is faster).\n");
    for (int pi = 0; pi < N_POS; pi++) {
        const row_result *r = &res[0][pi][0];
        if (!(model_mask & 1) || !(pos_mask & (1 << pi)) || !r->ok || r->rss_a < 0) continue;
        printf("Memory, %s/%s, %d thread%s: VmRSS %.1f MB after step 100, %.1f MB after step %lld (peak %.1f -> "
               "%.1f MB); arena blocks malloc'ed %lld -> %lld; arena high water %.2f MB%s\n",
               MODELS[0].name, POS[pi].name, thread_list[0], thread_list[0] > 1 ? "s" : "", r->rss_a / 1024.0,
               r->rss_b / 1024.0, r->total_steps, r->max_a / 1024.0, r->max_b / 1024.0, r->mallocs_a, r->mallocs_b,
               r->arena_hw / 1048576.0,
               (r->rss_b - r->rss_a > 1024 || r->mallocs_b != r->mallocs_a) ? "  ** GROWTH **" : " (no growth)");
    }
    return 0;
}
