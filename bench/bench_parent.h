/* bench/bench_parent.h: what the two parts of the benchmark's parent process share: bench/bench.c (options, one
 * child process per measurement, main) and bench/report.c (PyTorch's results and the table printed after the run).
 * Not used by bench/child.c or bench/targets.c (those share bench/bench.h). */
#ifndef RG_BENCH_PARENT_H
#define RG_BENCH_PARENT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

#define CEIL_REPS 5
#define MAX_THREADS 8       /* entries of --threads */

/* The command line. */
typedef struct {
    bool quick, rss;
    const char *torch_path, *torch_skipped, *label;
    int threads[MAX_THREADS], n_threads, ceiling_n;
    int model_mask, pos_mask, prec_mask;
    const char *child_row, *child_ceiling; /* the internal --child-row / --child-ceiling argument, or NULL */
} bench_opts;

/* What a child row printed (bench_child_row's ROW line). */
typedef struct {
    int ok;
    double ms_med, ms_min, cpu_min;
    int steps;
    long peak_kb, rss_a, rss_b, max_a, max_b;
    long long mallocs_a, mallocs_b, total_steps;
    size_t arena_hw;
    double loss;
    char core[64];
    double flops, bytes, tokens; /* per timed step: matrix-product FLOPs, arena bytes handed out, tokens */
    double elem_ms, floor_ms, copy_gbs; /* the elementwise share, its memory floor, the copy bandwidth (1 thread) */
    double prod_ms;                     /* the time inside products of the same profiled steps (1 thread) */
} row_result;

/* ------------------------------------------------------------------ PyTorch's results */

typedef struct {
    char model[32], pos[32], prec[16];
    int threads, steps;
    double ms_med, ms_min;
} torch_row;

typedef struct {
    torch_row rows[64];
    int n;
    char version[128], core[128], coretype[128], optimizer[128];
    char blas[128], bf16[128], capability[128]; /* its BLAS, what runs its autocast bf16 products, its CPU kernels */
} torch_results;

/* The kernels of the ceilings (bench/ceiling.c): OpenBLAS with the environment's kernel set and with the CPU's own
 * (bench_own_coretype), libxsmm, oneDNN float32, oneDNN bf16. */
typedef enum { CK_BLAS_GIVEN, CK_BLAS_OWN, CK_XSMM, CK_DNNL_F32, CK_DNNL_BF16, N_CK } ceil_kernel;

typedef struct {
    bool ok;
    double med, best; /* GFLOP/s */
    char detail[64];  /* the OpenBLAS core, or oneDNN's bf16 ISA */
} ceil_result;

/* Everything the table shows: the options, the plan, the machine and the measurements. */
typedef struct {
    const bench_opts *o;
    run_plan plan;
    torch_results torch;
    bool have_torch;
    char load0[64], load1[64], core[64];
    const char *own_core;   /* bench_own_coretype(), or NULL */
    ceil_result ceil[MAX_THREADS][N_CK];
    row_result res[N_MODELS][N_POS][N_PREC][MAX_THREADS];
    char bf16_why[256];     /* why bf16 rows are refused here ("" when they run) */
} bench_run;

/* ------------------------------------------------------------------ report.c */

/* Reads bench_torch.py's TSV into tr; -1 when the file cannot be opened. */
int read_torch(const char *path, torch_results *tr);

/* The load average of /proc/loadavg as text into buf ("?" when unreadable). */
void load_avg(char *buf, size_t cap);

/* The ceiling of precision PRECS[ri] at o->threads[ti] (the fastest of its kernels' best GFLOP/s: fp32 OpenBLAS
 * with the CPU's own kernel set, or the environment's when the CPU has none, libxsmm and oneDNN float32; bf16
 * oneDNN bf16), NAN when none was measured; *which (may be NULL) names the kernel. */
double ceiling_of(const bench_run *b, int ti, int ri, ceil_kernel *which);

/* The report, in this order: the title and bullet list, the table, what follows the table, the targets. */
void print_header(const bench_run *b);
void print_table(const bench_run *b);
void print_footer(const bench_run *b);
void print_targets(const bench_run *b);

#endif
