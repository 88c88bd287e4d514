/* bench/bench.h: what the parts of the training-step benchmark share (bench/README.md). bench/bench.c is the
 * parent (options, one child process per measurement; bench/report.c prints the table, see bench_parent.h);
 * bench/child.c is what a child process runs for one training-step row, bench/ceiling.c for the product ceilings,
 * each printing tab-separated lines on stdout; bench/targets.c checks a run's 1-thread rows against the speed
 * targets.
 */
#ifndef RG_BENCH_H
#define RG_BENCH_H

#include <stdio.h>

#include "ropegrad.h"

typedef struct {
    const char *name;
    int d_model, n_heads, n_layers, d_ff;
    int batch, n;   /* batch rows of n symbols each: T = 2n+2 */
    int sampled;    /* 0: every row n symbols; 1: train_order's batches (rg_task_batch_sample, n <= L_train = n) */
    int micro;      /* micro-batches of a sampled batch (train_order's default 8) */
} bench_model;

typedef struct {
    const char *name;
    rg_pos_kind kind;
} bench_pos;

#define N_MODELS 3
#define N_POS 2
extern const bench_model MODELS[N_MODELS]; /* bench.c: ref, large, exp */
extern const bench_pos POS[N_POS];         /* bench.c: rope, t5 */

/* Timing plan of one row. */
typedef struct {
    int warmup_steps;      /* warm-up: this many steps, or fewer if warmup_s runs out (at least 2) */
    double warmup_s;
    int min_steps;         /* timed: at least min_steps, then stop at target_steps or after target_s */
    int target_steps;
    double target_s;
    int rss_steps;         /* 0, or run to this many steps in all and report RSS after 100 and after it */
} run_plan;

/* T = 2n+2: the tokens the model reads per row of bm. */
int bench_seq_T(const bench_model *bm);

/* Training FLOPs per step of bm's fixed-length batch (matrix products only; the formula atop bench.c). */
double bench_train_flops(const bench_model *bm, int vocab);

/* Row chunks per step: RG_BENCH_CHUNKS (set by --chunks in the parent), default 1 (the batch in one piece). */
int bench_chunks(void);

/* OpenBLAS's core name in use, or "?". */
const char *bench_core_name(void);

/* The precisions of a row (rg_set_linear_precision): PRECS[i] is "fp32" or "bf16". */
#define N_PREC 2
extern const rg_precision PRECS[N_PREC];

/* Child: trains MODELS[model_i] with POS[pos_i] on `threads` threads at precision PRECS[prec_i] following p, prints
 * one "ROW\t..." line. Returns 0, or 1 after a message on stderr (setup failed, or bf16 refused); a failed step or a
 * non-finite loss exits 1. */
int bench_child_row(int model_i, int pos_i, int threads, int prec_i, const run_plan *p);

/* Child (bench/ceiling.c): on `threads` threads, times `reps` N x N x N products after a warm-up call on each kernel
 * (OpenBLAS with this process's kernel set; unless blas_only, libxsmm, oneDNN float32 and oneDNN bf16 where they
 * run) and prints one "CEIL\tkernel\tmedian\tbest\tdetail" line each (GFLOP/s; kernel openblas, libxsmm,
 * onednn_f32 or onednn_bf16; detail the OpenBLAS core, or oneDNN's bf16 ISA). N must be a multiple of 256. Returns
 * 0, or 1 after a message (out of memory, a bad N). */
int bench_child_ceiling(int N, int threads, int reps, bool blas_only);

/* The OpenBLAS kernel set (an OPENBLAS_CORETYPE value) made for this CPU's vector instructions: "SkylakeX" with
 * AVX-512 (F, BW, VL, DQ), "Haswell" with AVX2 and FMA, NULL otherwise (the one OpenBLAS detects is then used). */
const char *bench_own_coretype(void);

/* One 1-thread row of a run as bench/targets.c checks it: ok when the row ran; its median ms/step, elementwise ms
 * and memory floor ms (NAN when not measured); PyTorch's median ms/step at the same precision and thread count
 * (NAN without one, or when PyTorch did not run at its best: bench/report.c); prod_pct the GFLOP/s of the step's
 * time inside products as a percentage of the ceiling of the row's precision (NAN when either was not measured). */
typedef struct {
    bool ok;
    double ms_med, elem_ms, floor_ms, torch_ms, prod_pct;
} bench_cell;

/* A target's verdict (bench_target_verdict says when each is given). */
typedef enum { BENCH_MET, BENCH_NOT_MET, BENCH_NOT_MEASURED, BENCH_PARTLY_MEASURED } bench_verdict;

/* The number of speed targets (the list atop bench/targets.c). */
int bench_n_targets(void);

/* Target i (0 <= i < bench_n_targets()) against the cells [model][pos][prec] of a machine with AMX (amx) or
 * without: value[p] its measured value for POS[p] (ms for the exp step's target, whose bound is lower where AMX
 * is; a PyTorch / C ratio for the speedups; the worse of fp32's and bf16's percentage for the product shares and
 * elem / floor ratio for the floors), NAN when the cells do not measure it: a row that did not run, a speedup
 * without both of PyTorch's times (fp32 and autocast bf16, the faster being the baseline), a share or a floor
 * without both precisions' rows. BENCH_MET when every encoding was measured and met it; BENCH_NOT_MET when one
 * measured encoding missed it; BENCH_PARTLY_MEASURED when the measured ones met it and another was not measured;
 * BENCH_NOT_MEASURED when none was. */
bench_verdict bench_target_verdict(int i, const bench_cell cells[N_MODELS][N_POS][N_PREC], bool amx,
                                   double value[N_POS]);

/* Prints the targets as a markdown table (target, one value column per encoding, verdict) to f. */
void bench_print_targets(FILE *f, const bench_cell cells[N_MODELS][N_POS][N_PREC], bool amx);

#endif
