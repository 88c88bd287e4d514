/* clock.c: the engine's clock (a monotonic time in seconds) for wall times, train times and timeouts. */
#include "engine/base/clock.h"

#include <time.h>

double eng_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
