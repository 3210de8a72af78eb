/*
 * clock.c
 *		The wall clock and the monotonic clock (clock.h).
 *
 * Every read of either clock in idgen goes through here.  No shared state.
 */
#include "postgres.h"

#include <time.h>

#include "miscadmin.h"
#include "port/atomics.h"

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

/*
 * Wait on the CPU until the wall clock reaches until_us, at most
 * IDGEN_CLOCK_SPIN_US away: a snowflake call that used up its tick waits for
 * the next one.  Reads the clock (a vDSO call, no system call) in a loop
 * with the CPU's pause instruction between reads, and serves interrupts.  A
 * sleep or sched_yield() this short would hand the CPU to whatever else runs
 * for a scheduler slice, longer than the tick being waited for: at the
 * layout's full rate that loses a tick of IDs per wait.
 */
void
idgen_clock_spin_until(int64 until_us)
{
	int			i = 0;

	while (idgen_clock_now_us() < until_us)
	{
		pg_spin_delay();
		if ((++i & 255) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}
