/*
 * clock.h
 *		The two clocks idgen reads: the wall clock, which goes into IDs, and
 *		the monotonic clock, which bounds waits and times node-id leases.
 *
 * No shared state; safe in any process.
 */
#ifndef IDGEN_CLOCK_H
#define IDGEN_CLOCK_H

/* Wall clock (CLOCK_REALTIME) in Unix microseconds */
extern int64 idgen_clock_now_us(void);

/* CLOCK_MONOTONIC in milliseconds: the same in every process of the server */
extern int64 idgen_clock_monotonic_ms(void);

/*
 * Waits for the wall clock shorter than this (microseconds) are spent on the
 * CPU (idgen_clock_spin_until) rather than asleep
 */
#define IDGEN_CLOCK_SPIN_US 1000

/*
 * Wait on the CPU until the wall clock reaches until_us; serves interrupts,
 * reports wait_event.  False if the monotonic clock passed deadline_ms or
 * the wall clock stepped back first.
 */
extern bool idgen_clock_spin_until(int64 until_us, int64 deadline_ms,
								   uint32 wait_event);

#endif							/* IDGEN_CLOCK_H */
