/* gemm_profile.h: the time spent in matrix products (gemm_profile.c), for the benchmark. Internal to the library;
 * every product (gemm.c's and dnnl.c's) brackets itself with enter/leave. */
#ifndef RG_GEMM_PROFILE_H
#define RG_GEMM_PROFILE_H

#include <stdbool.h>

/* Product time, for the benchmark's elementwise share (results/bench/history/): rg_gemm_profile(true) zeroes the totals
 * and from then on every outermost product (rg_gemm, rg_mm_run, rg_gemm_bf16, rg_gemm_dnnl_f32) on the calling
 * thread adds its time (rg_gemm_profile_clock: CLOCK_MONOTONIC seconds, read through the vDSO, so that a step of
 * tens of thousands of small products is not dominated by the clock; meaningful at 1 thread on an otherwise idle
 * CPU) and counts one call; rg_gemm_profile(false) stops. Off, it costs one branch per product. enter/leave
 * bracket a product (enter returns the start, or -1 when not timed). */
void rg_gemm_profile(bool on);
double rg_gemm_profile_seconds(void);
long rg_gemm_profile_calls(void);
double rg_gemm_profile_clock(void);
double rg_gemm_profile_enter(void);
void rg_gemm_profile_leave(double t0);

#endif
