/* bench/report.c: the benchmark parent's report (bench/README.md): PyTorch's results read from bench_torch.py's
 * TSV, and the markdown printed after the run (the header, the table with PyTorch's times next to the C ones, the
 * footer and the targets). The measurements themselves are taken in bench/bench.c and bench/ceiling.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>

#include "bench_parent.h"
#include "task/task.h"
#include "tensor/gemm.h" /* rg_bf16_isa (internal: the benchmark reports what ran) */

/* ------------------------------------------------------------------ PyTorch's results */

/* Reads bench_torch.py's TSV: "# key value" lines, a header line, then model pos threads steps ms_median ms_min. */
int read_torch(const char *path, torch_results *tr)
{
    memset(tr, 0, sizeof *tr);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == '#') {
            char key[64], val[128];
            if (sscanf(line, "# %63s %127[^\n]", key, val) == 2) {
                if (!strcmp(key, "torch")) snprintf(tr->version, sizeof tr->version, "%s", val);
                else if (!strcmp(key, "openblas_core")) snprintf(tr->core, sizeof tr->core, "%s", val);
                else if (!strcmp(key, "OPENBLAS_CORETYPE")) snprintf(tr->coretype, sizeof tr->coretype, "%s", val);
                else if (!strcmp(key, "optimizer")) snprintf(tr->optimizer, sizeof tr->optimizer, "%s", val);
                else if (!strcmp(key, "blas")) snprintf(tr->blas, sizeof tr->blas, "%s", val);
                else if (!strcmp(key, "bf16_kernel")) snprintf(tr->bf16, sizeof tr->bf16, "%s", val);
                else if (!strcmp(key, "cpu_capability"))
                    snprintf(tr->capability, sizeof tr->capability, "%s", val);
            }
            continue;
        }
        torch_row r;
        snprintf(r.prec, sizeof r.prec, "fp32"); /* a 7th column names autocast's dtype (bf16) */
        if (tr->n < 64 && sscanf(line, "%31s %31s %d %d %lf %lf %15s", r.model, r.pos, &r.threads, &r.steps,
                                 &r.ms_med, &r.ms_min, r.prec) >= 6)
            tr->rows[tr->n++] = r;
    }
    fclose(f);
    return 0;
}

static const torch_row *find_torch(const torch_results *tr, const char *model, const char *pos, const char *prec,
                                   int threads)
{
    for (int i = 0; tr && i < tr->n; i++)
        if (!strcmp(tr->rows[i].model, model) && !strcmp(tr->rows[i].pos, pos) && tr->rows[i].threads == threads &&
            !strcmp(tr->rows[i].prec, prec))
            return &tr->rows[i];
    return NULL;
}

/* ------------------------------------------------------------------ the table */

void load_avg(char *buf, size_t cap)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;
    if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
    else snprintf(buf, cap, "?");
    if (f) fclose(f);
}

static const char *env_or_unset(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

/* The CPU as /proc/cpuinfo names it: "model name (family F, model M)", or "?". */
static void cpu_model(char *buf, size_t cap)
{
    char name[128] = "?", line[512];
    int family = -1, model = -1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) {
            if (family >= 0) break; /* the first processor's block is enough */
            continue;
        }
        line[strcspn(line, "\n")] = 0;
        const char *v = colon + 1 + (colon[1] == ' ');
        if (!strncmp(line, "model name", 10)) snprintf(name, sizeof name, "%s", v);
        else if (!strncmp(line, "cpu family", 10)) family = atoi(v);
        else if (!strncmp(line, "model\t", 6)) model = atoi(v);
    }
    if (f) fclose(f);
    snprintf(buf, cap, "%s (family %d, model %d)", name, family, model);
}

double ceiling_of(const bench_run *b, int ti, int ri, ceil_kernel *which)
{
    const ceil_result *c = b->ceil[ti];
    ceil_kernel fp32[] = {b->own_core ? CK_BLAS_OWN : CK_BLAS_GIVEN, CK_XSMM, CK_DNNL_F32}, bf16[] = {CK_DNNL_BF16};
    const ceil_kernel *ks = PRECS[ri] == RG_PRECISION_BF16 ? bf16 : fp32;
    int n = PRECS[ri] == RG_PRECISION_BF16 ? 1 : 3;
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (c[ks[i]].ok && !(c[ks[i]].best <= best)) {
            best = c[ks[i]].best;
            if (which) *which = ks[i];
        }
    return best;
}

static const char *const CK_NAME[N_CK] = {"OpenBLAS (environment's kernels)", "OpenBLAS (the CPU's own kernels)",
                                          "libxsmm JIT", "oneDNN f32 matmul", "oneDNN bf16 matmul"};

/* The ceilings bullet: every kernel's best (median) per thread count, and each precision's ceiling. */
static void print_ceilings(const bench_run *b)
{
    const bench_opts *o = b->o;
    printf("- product ceilings (%d x %d x %d, best of %d after a warm-up call, GFLOP/s; bench/ceiling.c):\n",
           o->ceiling_n, o->ceiling_n, o->ceiling_n, CEIL_REPS);
    for (int ti = 0; ti < o->n_threads; ti++) {
        printf("  - %d thread%s:", o->threads[ti], o->threads[ti] > 1 ? "s" : "");
        for (int k = 0; k < N_CK; k++) {
            const ceil_result *c = &b->ceil[ti][k];
            if (k == CK_BLAS_GIVEN && b->own_core && !strcasecmp(b->core, b->ceil[ti][CK_BLAS_OWN].detail)) continue;
            if (c->ok) printf(" %s [%s] %.1f (%.1f);", CK_NAME[k], c->detail, c->best, c->med);
            else printf(" %s not measured;", CK_NAME[k]);
        }
        for (int ri = 0; ri < N_PREC; ri++) {
            ceil_kernel w = CK_BLAS_GIVEN;
            double c = ceiling_of(b, ti, ri, &w);
            if (c == c) printf(" **%s ceiling %.1f** (%s)%s", rg_precision_name(PRECS[ri]), c, CK_NAME[w], ri ? "" : ";");
            else printf(" **%s ceiling not measured**%s", rg_precision_name(PRECS[ri]), ri ? "" : ";");
        }
        printf("\n");
    }
}

/* The title and the bullet list above the table: library, machine, ceilings, kernels, plan, PyTorch's source. */
void print_header(const bench_run *b)
{
    const bench_opts *o = b->o;
    const run_plan *pl = &b->plan;
    printf("\n## ropegrad training step vs PyTorch%s%s\n\n", o->label ? ": " : "", o->label ? o->label : "");
    printf("- OpenBLAS: %s; core in use: **%s**; OPENBLAS_CORETYPE=%s, OPENBLAS_NUM_THREADS=%s, "
           "OMP_WAIT_POLICY=%s\n", openblas_get_config(), b->core, env_or_unset("OPENBLAS_CORETYPE"),
           env_or_unset("OPENBLAS_NUM_THREADS"), env_or_unset("OMP_WAIT_POLICY"));
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    printf("- machine: %s, %ld CPUs online; bf16 instructions (oneDNN): %s; the CPU's own OpenBLAS kernels: %s; "
           "load average %s at start, %s at end (other jobs share the CPUs: noisy)\n",
           cpu, sysconf(_SC_NPROCESSORS_ONLN), rg_bf16_isa(), b->own_core ? b->own_core : "none known", b->load0,
           b->load1);
    print_ceilings(b);
    printf("- step: forward + cross-entropy + zero_grad + backward + clip 1.0 + AdamW; median of %s%d-%d timed steps "
           "after %d warm-up steps (fewer when a step is slow: %g s warm-up, %g s timed)\n",
           o->quick ? "(quick run) " : "", pl->min_steps, pl->target_steps, pl->warmup_steps, pl->warmup_s,
           pl->target_s);
    if (b->have_torch)
        printf("- PyTorch %s, %s, from %s; kernels: fp32 products on %s, OpenBLAS core **%s** "
               "(OPENBLAS_CORETYPE=%s); autocast bf16 products on %s; its own CPU kernels %s\n",
               b->torch.version, b->torch.optimizer[0] ? b->torch.optimizer : "AdamW", o->torch_path,
               b->torch.blas[0] ? b->torch.blas : "?", b->torch.core, b->torch.coretype[0] ? b->torch.coretype : "?",
               b->torch.bf16[0] ? b->torch.bf16 : "?", b->torch.capability[0] ? b->torch.capability : "?");
    else if (o->torch_skipped)
        printf("- PyTorch: skipped (%s)\n", o->torch_skipped);
    else if (o->torch_path)
        printf("- PyTorch: skipped (no results in %s)\n", o->torch_path);
    else
        printf("- PyTorch: not run (pass --torch FILE; bench/run.sh does)\n");
    printf("- C kernels: fp32 products on libxsmm's JIT kernels (N <= 256), OpenBLAS core **%s** (the larger ones) "
           "and oneDNN's f32 matmul (weight gradients with K > 1024)%s; bf16 products on oneDNN's bf16 matmul (%s)\n",
           b->core, rg_dnnl_available() ? "" : " (not loaded here)", rg_bf16_isa());
    printf("- C step: rg_train_step; fixed-length rows in %d micro-batch(es) (gradient accumulation: the same "
           "gradient as one piece); row \"exp\": train_order's own step (copy batches from rg_task_batch_sample, "
           "n = 1..16, 8 length-sorted micro-batches; B x T shows the longest T; GFLOP/s from each step's "
           "micro-batch shapes); arena MB/step: intermediate memory handed out per step (bytes written)\n",
           bench_chunks());
    printf("- timing: C ms/step is the median wall time, C min its minimum, C cpu min the minimum CPU time of the "
           "calling thread (CLOCK_THREAD_CPUTIME_ID: the step's whole cost at 1 thread, the calling thread's share at "
           "2; time other processes took the core is not in it); PyTorch: median wall time\n");
    printf("- elem ms (1 thread): the step's time minus the time inside its products and the profiler's clock "
           "reads (rg_gemm_profile, monotonic clock), minimum of 10 profiled steps: GELU, LayerNorm, softmax, RoPE, "
           "cross-entropy, AdamW, bias/residual adds, copies, bf16 conversions, the tape; elem/floor: that over 2 x "
           "arena bytes per step (each intermediate written and read once) at the single-thread copy bandwidth of a "
           "warm 4 MB buffer (best of 30 memcpy)\n");
    if (b->bf16_why[0])
        printf("- bf16 rows: refused here (%s)\n", b->bf16_why);
    else
        printf("- bf16 rows: Linear's products (forward, input and weight gradients) and attention's (Q K^T, P V "
               "and their gradients) with bf16 operands and float32 accumulation on oneDNN %s "
               "(rg_set_linear_precision); LayerNorm, softmax, losses, AdamW and the master weights float32; "
               "PyTorch: torch.autocast(\"cpu\", torch.bfloat16) around forward and loss\n", rg_bf16_isa());
    if (b->have_torch && strcmp(b->torch.core, b->core))
        printf("- WARNING: PyTorch ran with OpenBLAS core %s, the C side with %s: not comparable\n", b->torch.core,
               b->core);
}

/* The GFLOP/s of a row's time inside products as a percentage of its precision's ceiling at o->threads[ti]; NAN
 * when either was not measured (the products are timed at 1 thread only). */
static double row_product_pct(const bench_run *b, const row_result *r, int mi, int ti, int ri)
{
    double fl = r->flops > 0 ? r->flops : bench_train_flops(&MODELS[mi], RG_TASK_VOCAB);
    double ceil = ceiling_of(b, ti, ri, NULL);
    if (!r->ok || !(r->prod_ms > 0) || !(ceil > 0)) return NAN;
    return 100 * fl / (r->prod_ms * 1e-3) * 1e-9 / ceil;
}

/* One table row: MODELS[mi] with POS[pi] at PRECS[ri] and o->threads[ti], and PyTorch's time when it has one. */
static void print_row(const bench_run *b, int mi, int pi, int ri, int ti)
{
    const bench_model *bm = &MODELS[mi];
    const row_result *r = &b->res[mi][pi][ri][ti];
    int threads = b->o->threads[ti];
    const char *prec = rg_precision_name(PRECS[ri]);
    printf("| %s | %d x %d | %s | %s | %d |", bm->name, bm->batch, bench_seq_T(bm), POS[pi].name, prec, threads);
    if (!r->ok) {
        printf(" %s | | | | | | | | | | | | |\n", PRECS[ri] == RG_PRECISION_BF16 && b->bf16_why[0] ? "refused" : "failed");
        return;
    }
    double fl = bench_train_flops(bm, RG_TASK_VOCAB);
    double gf = (r->flops > 0 ? r->flops : fl) / (r->ms_med * 1e-3) * 1e-9;
    double tok = (r->tokens > 0 ? r->tokens : (double)bm->batch * bench_seq_T(bm)) / (r->ms_med * 1e-3);
    double ceil = ceiling_of(b, ti, ri, NULL), pct = row_product_pct(b, r, mi, ti, ri);
    printf(" %.2f | %.2f | %.2f | %.0f | %.1f | %.0f%% |", r->ms_med, r->ms_min, r->cpu_min, tok, gf, 100 * gf / ceil);
    if (pct == pct) printf(" %.0f%% |", pct);
    else printf(" - |");
    printf(" %.1f | %.1f |", r->peak_kb / 1024.0, r->bytes / 1048576.0);
    if (r->elem_ms == r->elem_ms) printf(" %.2f | %.1fx |", r->elem_ms, r->elem_ms / r->floor_ms);
    else printf(" - | - |");
    const torch_row *t = b->have_torch ? find_torch(&b->torch, bm->name, POS[pi].name, prec, threads) : NULL;
    if (t) printf(" %.2f | %.2fx |\n", t->ms_med, t->ms_med / r->ms_med);
    else printf(" - | - |\n");
}

void print_table(const bench_run *b)
{
    const bench_opts *o = b->o;
    printf("\n| model | B x T | pos | prec | thr | C ms/step | C min | C cpu min | tokens/s | GFLOP/s | %% ceil |"
           " products %% ceil | peak RSS MB | arena MB/step | elem ms | elem/floor | PyTorch ms/step | speedup |\n");
    printf("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int mi = 0; mi < N_MODELS; mi++)
        for (int pi = 0; pi < N_POS; pi++)
            for (int ri = 0; ri < N_PREC; ri++)
                for (int ti = 0; ti < o->n_threads; ti++)
                    if ((o->model_mask & (1 << mi)) && (o->pos_mask & (1 << pi)) && (o->prec_mask & (1 << ri)))
                        print_row(b, mi, pi, ri, ti);
}

/* Below the table: GFLOP per step of the fixed-length models, and the long memory run's verdict. */
void print_footer(const bench_run *b)
{
    const bench_opts *o = b->o;
    printf("\nGFLOP per training step (3 x forward matrix products):");
    for (int mi = 0; mi < N_MODELS; mi++)
        if ((o->model_mask & (1 << mi)) && !MODELS[mi].sampled)
            printf(" %s %.3f;", MODELS[mi].name, bench_train_flops(&MODELS[mi], RG_TASK_VOCAB) * 1e-9);
    printf(" speedup = PyTorch ms / C ms (> 1: C is faster); %% ceil: GFLOP/s over the ceiling of the row's own "
           "precision at its thread count; products %% ceil: GFLOP/s of the time inside products (1 thread) over "
           "that ceiling.\n");
    for (int ti = 0; ti < o->n_threads; ti++) {
        double f32 = ceiling_of(b, ti, 0, NULL), b16 = ceiling_of(b, ti, 1, NULL);
        if (!(f32 > 0) || !(b16 > 0)) continue;
        printf("bf16 against fp32 at %d thread%s: the bf16 ceiling is %.2fx the fp32 one (%.1f / %.1f GFLOP/s): ",
               o->threads[ti], o->threads[ti] > 1 ? "s" : "", b16 / f32, b16, f32);
        if (b16 / f32 < 1.2)
            printf("bf16 products can hardly be faster than fp32 ones on this CPU, so a bf16 step can gain only from "
                   "moving half the bytes, and its conversions cost; fp32 stays the default.\n");
        else
            printf("a step whose time is mostly products can gain up to that factor from bf16.\n");
    }
    for (int pi = 0; pi < N_POS; pi++) {
        const row_result *r = &b->res[0][pi][0][0];
        if (!(o->model_mask & 1) || !(o->pos_mask & (1 << pi)) || !r->ok || r->rss_a < 0) continue;
        printf("Memory, %s/%s, %d thread%s: VmRSS %.1f MB after step 100, %.1f MB after step %lld (peak %.1f -> "
               "%.1f MB); arena blocks malloc'ed %lld -> %lld; arena high water %.2f MB%s\n",
               MODELS[0].name, POS[pi].name, o->threads[0], o->threads[0] > 1 ? "s" : "", r->rss_a / 1024.0,
               r->rss_b / 1024.0, r->total_steps, r->max_a / 1024.0, r->max_b / 1024.0, r->mallocs_a, r->mallocs_b,
               r->arena_hw / 1048576.0,
               (r->rss_b - r->rss_a > 1024 || r->mallocs_b != r->mallocs_a) ? "  ** GROWTH **" : " (no growth)");
    }
}

/* The speed targets (bench/targets.c) from the 1-thread rows, when the run has them. PyTorch's times count only
 * when it ran at its best: its OpenBLAS on the CPU's own kernel set (bench/run.sh's second pass); otherwise the
 * speedup targets are "not measured" in this pass. */
void print_targets(const bench_run *b)
{
    static bench_cell cells[N_MODELS][N_POS][N_PREC];
    int ti = 0;
    while (ti < b->o->n_threads && b->o->threads[ti] != 1) ti++;
    if (ti == b->o->n_threads) {
        printf("\nThe targets: not checked (they are 1-thread targets, and this run has no 1-thread rows).\n");
        return;
    }
    bool torch_best = b->have_torch && (!b->own_core || !strcasecmp(b->torch.core, b->own_core));
    if (b->have_torch && !torch_best)
        printf("\nPyTorch ran with OpenBLAS core %s here, not the CPU's own %s: not at its best, so the speedup "
               "targets are not measured in this pass (see the pass with OPENBLAS_CORETYPE=%s).\n", b->torch.core,
               b->own_core, b->own_core);
    for (int mi = 0; mi < N_MODELS; mi++)
        for (int pi = 0; pi < N_POS; pi++)
            for (int ri = 0; ri < N_PREC; ri++) {
                const row_result *r = &b->res[mi][pi][ri][ti];
                const torch_row *t = torch_best ? find_torch(&b->torch, MODELS[mi].name, POS[pi].name,
                                                                rg_precision_name(PRECS[ri]), 1) : NULL;
                cells[mi][pi][ri] = (bench_cell){r->ok == 1, r->ms_med, r->elem_ms, r->floor_ms, t ? t->ms_med : NAN,
                                                 row_product_pct(b, r, mi, ti, ri)};
            }
    bench_print_targets(stdout, cells, !strcmp(rg_bf16_isa(), "AMX"));
}
