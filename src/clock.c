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
#include "utils/wait_event.h"

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
 *
 * The wait is bounded: it gives up, returning false, when the monotonic
 * clock passes deadline_ms, or when the wall clock steps back below where it
 * was when the wait began (the tick would then be further away than a spin
 * is for, perhaps by hours).  The caller decides what to do then.  The wait
 * is reported as wait_event while it lasts.
 */
bool
idgen_clock_spin_until(int64 until_us, int64 deadline_ms, uint32 wait_event)
{
	int64		start_us = idgen_clock_now_us();
	int64		now_us = start_us;
	bool		reached = true;
	int			i = 0;

	pgstat_report_wait_start(wait_event);
	while (now_us < until_us)
	{
		if (now_us < start_us)
		{
			reached = false;
			break;
		}
		pg_spin_delay();
		if ((++i & 255) == 0)
		{
			CHECK_FOR_INTERRUPTS();
			if (idgen_clock_monotonic_ms() >= deadline_ms)
			{
				reached = false;
				break;
			}
		}
		now_us = idgen_clock_now_us();
	}
	pgstat_report_wait_end();
	return reached;
}
