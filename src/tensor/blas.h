/* blas.h: which OpenBLAS kernels run, and choosing fast ones on CPUs the installed OpenBLAS does not recognize.
 *
 * Debian 12's OpenBLAS 0.3.21 (DYNAMIC_ARCH) picks its kernels once, when the library loads. On processors newer
 * than the release (for example Intel Xeon model 207) its detection falls back to the generic "Prescott" SSE3
 * kernels, which run sgemm 5-10 times slower than the AVX-512 ("SkylakeX") or AVX2 ("Haswell") ones the CPU
 * supports (measured here: 2240x256x64 sgemm at 13, 72 and 119 GFLOP/s on one core). The
 * OPENBLAS_CORETYPE environment variable overrides the choice, but only before the library loads, so the fix is a
 * re-execution of the program with it set. Since products moved to libxsmm (gemm.h), a program needs neither: when
 * OpenBLAS reports generic kernels, rg_gemm sends every product to libxsmm's CPUID-dispatched kernels (measured with
 * OPENBLAS_CORETYPE=Prescott: reference step 24.1 ms against 52.2 ms on OpenBLAS alone; large 543 ms against 1220).
 * The re-execution below remains for code that calls cblas itself. */
#ifndef RG_BLAS_H
#define RG_BLAS_H

/* The name of the OpenBLAS kernel family in use ("Haswell", "SkylakeX", "Prescott", ...). */
const char *rg_blas_core(void);

/* If OPENBLAS_CORETYPE is unset, OpenBLAS runs generic SSE kernels (Prescott, Core2, Nehalem, Atom, Katmai) and the
 * CPU supports AVX-512 (F, BW, VL, DQ) or else AVX2 and FMA, re-executes the running program (/proc/self/exe, same
 * argv and environment) with OPENBLAS_CORETYPE=SkylakeX or Haswell; tests/tensor/test_blas.c checks that sgemm is exact
 * with the kernels it picks. Returns normally in every other case, and when the re-execution fails (the program
 * then goes on with the slow kernels). Setting RG_KEEP_BLAS_CORE=1 disables it. Call it first thing in main(),
 * before any other work; argv must be main's argv. Used by examples/train_order and tests/tensor/test_blas.c (bench/run.sh
 * sets OPENBLAS_CORETYPE itself, the same for the C and the PyTorch side). */
void rg_blas_prefer_fast_kernels(char **argv);

/* Stops OpenBLAS's worker threads (pthreads build; nothing with another BLAS): its next threaded call starts them
 * from the calling thread, which they then inherit FTZ/DAZ from (tensor.h). The library calls it when its first
 * context is made and from rg_set_num_threads. */
void rg_blas_restart_workers(void);

#endif
