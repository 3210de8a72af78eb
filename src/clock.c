/*
 * clock.c
 *		The wall clock and the monotonic clock (clock.h).
 *
 * Every read of either clock in idgen goes through here.  No shared state.
 */
#include "postgres.h"

#include <time.h>

#include "clock.h"

/* Wall clock in Unix microseconds */
int64
idgen_clock_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CLOCK_MONOTONIC in milliseconds */
int64
idgen_clock_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
