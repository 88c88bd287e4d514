/* bench/bench_parent.h: what the two parts of the benchmark's parent process share: bench/bench.c (options, one
 * child process per measurement, main) and bench/report.c (PyTorch's results and the table printed after the run).
 * Not used by bench/child.c or bench/targets.c (those share bench/bench.h). */
#ifndef RG_BENCH_PARENT_H
#define RG_BENCH_PARENT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench.h"

#define SGEMM_REPS 3
#define MAX_THREADS 8       /* entries of --threads */

/* The command line. */
typedef struct {
    bool quick, rss;
    const char *torch_path, *torch_skipped, *label;
    int threads[MAX_THREADS], n_threads, sgemm_n;
    int model_mask, pos_mask, prec_mask;
    const char *child_row, *child_sgemm; /* the internal --child-row / --child-sgemm argument, or NULL */
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
    char version[64], core[64], coretype[64], optimizer[64];
} torch_results;

/* Everything the table shows: the options, the plan, the machine and the measurements. */
typedef struct {
    const bench_opts *o;
    run_plan plan;
    torch_results torch;
    bool have_torch;
    char load0[64], load1[64], core[64];
    double ceil_med[MAX_THREADS], ceil_best[MAX_THREADS];
    row_result res[N_MODELS][N_POS][N_PREC][MAX_THREADS];
    char bf16_why[256];     /* why bf16 rows are refused here ("" when they run) */
} bench_run;

/* ------------------------------------------------------------------ report.c */

/* Reads bench_torch.py's TSV into tr; -1 when the file cannot be opened. */
int read_torch(const char *path, torch_results *tr);

/* The load average of /proc/loadavg as text into buf ("?" when unreadable). */
void load_avg(char *buf, size_t cap);

/* The report, in this order: the title and bullet list, the table, what follows the table, issue 22's targets. */
void print_header(const bench_run *b);
void print_table(const bench_run *b);
void print_footer(const bench_run *b);
void print_targets(const bench_run *b);

#endif
