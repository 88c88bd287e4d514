/* bench/child.c: what one child process of the benchmark runs for a row (bench/bench.h; the parent is bench/bench.c,
 * which re-executes itself with --child-row, or --child-ceiling for bench/ceiling.c, so that every row has its own
 * peak RSS and a fresh OpenBLAS). A row: the C training step exactly as src/engine/run/run.c takes it (rg_train_step), timed
 * after a warm-up, then optionally a long run that checks the memory stops growing. The result is one
 * tab-separated line on stdout that the parent parses.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "bench.h"
#include "task/task.h"
#include "tensor/gemm.h" /* rg_gemm_profile: the time inside products */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread: what the step cost this thread, without the time other processes on the shared
 * machine took the core away (at 1 thread the whole step; at 2 threads the calling thread's share). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const rg_precision PRECS[N_PREC] = {RG_PRECISION_FP32, RG_PRECISION_BF16};

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

int bench_seq_T(const bench_model *bm) { return 2 * bm->n + 2; }

/* Training FLOPs of B rows of T tokens (the formula at the top of bench.c). */
static double flops_bt(const bench_model *bm, int vocab, double B, double T)
{
    double M = B * T, d = bm->d_model, f = bm->d_ff;
    double per_layer = 4 * 2 * M * d * d + 2 * 2 * M * d * f + 2 * 2 * B * T * T * d;
    double fwd = bm->n_layers * per_layer + 2 * M * d * vocab;
    return 3 * fwd;
}

double bench_train_flops(const bench_model *bm, int vocab) { return flops_bt(bm, vocab, bm->batch, bench_seq_T(bm)); }

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

const char *bench_core_name(void)
{
    const char *s = openblas_get_corename();
    return s && *s ? s : "?";
}

int bench_chunks(void)
{
    const char *e = getenv("RG_BENCH_CHUNKS");
    int k = e ? atoi(e) : 1;
    return k >= 1 ? k : 1;
}

/* ------------------------------------------------------------------ one row */

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

/* What a row measured: the timed steps, then the long memory run (-1s when there was none). */
typedef struct {
    double ms_med, ms_min, cpu_min, flops_step, bytes_step, tokens_step, loss;
    double elem_ms, floor_ms, copy_gbs; /* the elementwise share and its memory floor (run_elementwise) */
    double prod_ms;                     /* the time inside products of the same profiled steps (run_elementwise) */
    int n;
    long peak_timed, rss_a, rss_b, max_a, max_b;
    long long mallocs_a, mallocs_b;
} row_measure;

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

/* One training step as src/engine/run/run.c takes it (rg_train_step); returns its wall time in seconds and writes the
 * calling thread's CPU time to *cpu (may be NULL). */
static double train_step_cpu(trainer *t, double *loss_out, double *cpu)
{
    next_batch(t);
    const bench_model *bm = t->bm;
    /* fixed rows: the batch in `chunks` micro-batches (1 = one piece); sampled rows: train_order's micro-batches */
    int k = bm->sampled ? bm->micro : bench_chunks();
    rg_batch rb = {t->batch.tokens, t->batch.targets, t->batch.len, t->batch.B, t->batch.T, NULL, NULL};
    rg_step_config sc = {k, rg_lr_schedule(t->step, 1e-3, 100, 1000, 0.1), 1.0, RG_TASK_IGNORE, NULL, 0};
    rg_step_stats ss;
    double c0 = cpu_s(), t0 = now_s();
    if (rg_train_step(&t->tr, t->m, &t->opt, &rb, &sc, &ss)) {
        fprintf(stderr, "bench: step: %s\n", rg_last_error());
        exit(1);
    }
    double dt = now_s() - t0, l = ss.loss;
    if (cpu) *cpu = cpu_s() - c0;
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

static double train_step(trainer *t, double *loss_out) { return train_step_cpu(t, loss_out, NULL); }

/* The model, optimizer, trainer and batch buffers of MODELS[model_i] with POS[pos_i]; 0, or 1 after a message. */
static int trainer_init(trainer *t, int model_i, int pos_i)
{
    const bench_model *bm = &MODELS[model_i];
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = bm->d_model;
    cfg.n_heads = bm->n_heads;
    cfg.n_layers = bm->n_layers;
    cfg.d_ff = bm->d_ff;
    cfg.pos = POS[pos_i].kind;
    memset(t, 0, sizeof *t);
    t->bm = bm;
    if (rg_model_new(&cfg, 1, &t->m) || rg_adamw_init(&t->opt, &t->m->params, 0.9, 0.98, 1e-8, 0.01) ||
        rg_task_batch_alloc(&t->batch, bm->batch, bm->n) || rg_trainer_init(&t->tr)) {
        fprintf(stderr, "bench: setup: %s\n", rg_last_error());
        return 1;
    }
    t->ns = malloc(sizeof(int) * (size_t)bm->batch);
    t->x = malloc(sizeof(int32_t) * (size_t)bm->batch * (size_t)bm->n);
    t->y = malloc(sizeof(int32_t) * (size_t)bm->n);
    if (!t->ns || !t->x || !t->y) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    for (int i = 0; i < bm->batch; i++) t->ns[i] = bm->n;
    rg_rng_seed(&t->rng, 1, 1);
    return 0;
}

static void trainer_free(trainer *t)
{
    rg_trainer_free(&t->tr);
    rg_task_batch_free(&t->batch);
    free(t->ns);
    free(t->x);
    free(t->y);
    rg_adamw_free(&t->opt);
    rg_model_free(t->m);
}

/* Warm-up, then the timed steps of plan p: fills the timing fields of r. 0, or 1 when out of memory. */
static int run_timed(trainer *t, const run_plan *p, row_measure *r)
{
    double t_start = now_s();
    for (int i = 0; i < p->warmup_steps && (i < 2 || now_s() - t_start < p->warmup_s); i++) train_step(t, &r->loss);
    int cap = p->target_steps > p->min_steps ? p->target_steps : p->min_steps;
    double *times = malloc(sizeof(double) * (size_t)cap), total = 0, flops0 = t->flops, tokens0 = t->tokens, cpu;
    if (!times) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    uint64_t bytes0 = t->tr.ctx->arena.bytes_total;
    int n = 0;
    r->cpu_min = 1e300;
    while (n < cap) {
        times[n] = train_step_cpu(t, &r->loss, &cpu);
        r->cpu_min = fmin(r->cpu_min, 1e3 * cpu);
        total += times[n++];
        if (n >= p->min_steps && (n >= p->target_steps || total >= p->target_s)) break;
    }
    r->peak_timed = maxrss_kb();
    r->n = n;
    r->flops_step = (t->flops - flops0) / n;
    r->tokens_step = (t->tokens - tokens0) / n;
    r->bytes_step = (double)(t->tr.ctx->arena.bytes_total - bytes0) / n;
    r->ms_min = 1e300;
    for (int i = 0; i < n; i++) r->ms_min = fmin(r->ms_min, 1e3 * times[i]);
    r->ms_med = 1e3 * median(times, n);
    free(times);
    return 0;
}

/* Memory over a long run: RSS after step 100 and after step rss_steps (the arena should stop growing after the first
 * step, so neither the RSS nor the arena's malloc count may move). Nothing when rss_steps is 0. */
static void run_rss(trainer *t, int rss_steps, row_measure *r)
{
    r->rss_a = r->rss_b = r->max_a = r->max_b = -1;
    r->mallocs_a = r->mallocs_b = -1;
    if (rss_steps <= 0) return;
    while (t->step < 100) train_step(t, &r->loss);
    r->rss_a = cur_rss_kb();
    r->max_a = maxrss_kb();
    r->mallocs_a = (long long)t->tr.ctx->arena.n_mallocs;
    while (t->step < rss_steps) train_step(t, &r->loss);
    r->rss_b = cur_rss_kb();
    r->max_b = maxrss_kb();
    r->mallocs_b = (long long)t->tr.ctx->arena.n_mallocs;
}

/* Single-thread copy bandwidth (GB/s, bytes read + written) of a 4 MB buffer, warm, best of 30: the rate at which
 * the step's intermediates can at best be written and read back (they are that size per micro-batch). */
static double copy_bandwidth(void)
{
    const size_t n = 4u << 20;
    char *a = malloc(n), *b = malloc(n);
    if (!a || !b) { free(a); free(b); return NAN; }
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 1e300;
    for (int r = 0; r < 30; r++) {
        double t0 = now_s();
        memcpy(r % 2 ? a : b, r % 2 ? b : a, n);
        best = fmin(best, now_s() - t0);
    }
    volatile char sink = a[n / 2] + b[n / 3];
    (void)sink;
    free(a);
    free(b);
    return 2.0 * (double)n / best * 1e-9;
}

/* The elementwise share of a step (1 thread only): 10 more steps with rg_gemm_profile on; per step, its time minus
 * the time inside products and minus the cost of the profiling's own clock reads (two per timed product,
 * calibrated), all on the monotonic clock (now_s, rg_gemm_profile_clock: the thread CPU clock cost ~650 ns a read,
 * which the ~27000 products of a large step with causal attention in blocks turned into 36 ms of calibrated
 * guesswork); the minimum over the steps. Everything that is not a product counts:
 * GELU, LayerNorm, softmax, RoPE, the cross-entropy, AdamW, bias and residual adds, copies, bf16 conversions and
 * the tape's bookkeeping. Its floor: every byte the step hands out of its arena written once and read back once
 * (2 x arena bytes per step) at the copy bandwidth. The time inside products is kept too (its minimum over the
 * same steps, less the one clock read inside each timed interval): the products' share of the step, which the
 * parent sets against the ceiling of the row's precision. */
static void run_elementwise(trainer *t, int threads, row_measure *r)
{
    r->elem_ms = r->floor_ms = r->copy_gbs = r->prod_ms = NAN;
    if (threads != 1) return;
    /* one clock read, what each timed product adds to the step (calibrated here, best of 5 x 1000) */
    double clock_cost = 1e300;
    for (int k = 0; k < 5; k++) {
        double c0 = rg_gemm_profile_clock();
        for (int i = 0; i < 1000; i++) (void)rg_gemm_profile_clock();
        clock_cost = fmin(clock_cost, (rg_gemm_profile_clock() - c0) / 1001);
    }
    double best = 1e300, prod_best = 1e300;
    for (int i = 0; i < 10; i++) {
        rg_gemm_profile(true);
        double step = train_step(t, &r->loss), prod = rg_gemm_profile_seconds(); /* rg_train_step's, monotonic */
        long calls = rg_gemm_profile_calls();
        rg_gemm_profile(false);
        /* the step's time minus its products' and minus the two clock reads each timed product added */
        best = fmin(best, step - prod - 2.0 * (double)calls * clock_cost);
        prod_best = fmin(prod_best, prod - (double)calls * clock_cost);
    }
    r->prod_ms = 1e3 * prod_best;
    r->copy_gbs = copy_bandwidth();
    r->elem_ms = 1e3 * best;
    r->floor_ms = 1e3 * 2 * r->bytes_step / (r->copy_gbs * 1e9);
}

int bench_child_row(int model_i, int pos_i, int threads, int prec_i, const run_plan *p)
{
    rg_set_num_threads(threads);
    if (rg_set_linear_precision(PRECS[prec_i])) {
        fprintf(stderr, "bench: %s\n", rg_last_error());
        return 1;
    }
    trainer t;
    row_measure r = {.loss = NAN};
    if (trainer_init(&t, model_i, pos_i) || run_timed(&t, p, &r)) return 1;
    run_elementwise(&t, threads, &r);
    run_rss(&t, p->rss_steps, &r);
    printf("ROW\t%.4f\t%.4f\t%.4f\t%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%lld\t%lld\t%lld\t%zu\t%.4f\t%s\t%.6g\t%.6g\t%.6g\t%.4f\t%.4f\t%.2f\t%.4f\n",
           r.ms_med, r.ms_min, r.cpu_min, r.n, r.peak_timed, r.rss_a, r.rss_b, r.max_a, r.max_b, r.mallocs_a, r.mallocs_b,
           (long long)t.step, t.tr.ctx->arena.high_water, r.loss, bench_core_name(), r.flops_step, r.bytes_step,
           r.tokens_step, r.elem_ms, r.floor_ms, r.copy_gbs, r.prod_ms);
    fflush(stdout);
    trainer_free(&t);
    return 0;
}
