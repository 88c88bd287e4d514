/* clock.h: the engine's clock (clock.c). */
#ifndef ENG_BASE_CLOCK_H
#define ENG_BASE_CLOCK_H

/* Seconds on a monotonic clock. */
double eng_now_seconds(void);

#endif
