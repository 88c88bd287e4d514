/* gemm_profile.c: the time spent in matrix products (gemm_profile.h): the totals of the thread that turned it on,
 * nested products counted once. */
#include "gemm_profile.h"

#include <time.h>

static bool profiling;                 /* rg_gemm_profile: off unless the benchmark turns it on */
static double profile_s;               /* seconds inside products on the thread that turned it on */
static long profile_calls;             /* products timed */
static _Thread_local int profile_depth; /* > 0 inside a timed product: nested calls are not counted twice */

void rg_gemm_profile(bool on) { profiling = on; profile_s = 0; profile_calls = 0; }
double rg_gemm_profile_seconds(void) { return profile_s; }
long rg_gemm_profile_calls(void) { return profile_calls; }

double rg_gemm_profile_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: ~24 ns here; the thread CPU clock is a ~650 ns system call */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double rg_gemm_profile_enter(void)
{
    if (!profiling || profile_depth++ > 0) return -1;
    profile_calls++;
    return rg_gemm_profile_clock();
}
void rg_gemm_profile_leave(double t0)
{
    if (!profiling) return;
    profile_depth--;
    if (t0 >= 0) profile_s += rg_gemm_profile_clock() - t0;
}
