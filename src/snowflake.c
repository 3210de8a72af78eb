/*
 * snowflake.c
 *		The shared snowflake generator: one per server, in shared memory.
 *
 * State is one 64-bit word, (tick << seq_bits) | seq, of the last ID issued.
 * A call adds one to it (the fast path: while the state is not behind the
 * wall clock, plus one is the successor) or reads it, computes the successor
 * and installs it with compare-and-swap; no lock is taken.  A call that used
 * up its tick at the layout's full rate waits for the next tick on the CPU
 * (idgen_clock_spin_until).  The sequence keeps counting across
 * ticks and wraps only together with a step of the tick, so successive IDs
 * walk through every residue of id % 2^k (except after a tick used at over
 * half the layout's rate by a generator held to the clock: moved_seq), and
 * (tick, seq) only ever grows: every ID is larger than every earlier one on
 * this server.
 *
 * The tick is max(wall clock, last tick), so a clock moving back or a burst
 * beyond the layout's rate runs on a logical clock, at most idgen.max_lead
 * ahead of the wall clock, and at least one tick
 * (idgen_snowflake_lead_ticks).  Held to the clock, a statement that draws
 * faster than the layout allows after a pause may take the ticks unused
 * since it began instead of the wall clock's (lowest_tick).  A call is the
 * fast path (next_fast), else the slow path (next_slow), which waits for the
 * clock (wait_for_clock) or the reservation (wait_for_reservation); then
 * the bookkeeping (note_issued).  A tick may only be used once the worker has made
 * a reservation covering it durable (snowflake_state.c): reserved_end is the
 * first tick not covered, 0 until the worker has loaded the reservation.
 *
 * No locks: the rules for each field of IdgenSnowflakeShared are in idgen.h.
 * The SQL functions are in snowflake_sql.c.
 */
#include "postgres.h"

#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "citus.h"
#include "currval.h"
#include "idgen.h"
#include "snowflake.h"
#include "worker.h"

/* The generator's shared memory */
IdgenSnowflakeShared *idgen_snowflake = NULL;

/* Number of per-process counter slots */
static int
counter_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/* Shared memory needed */
Size
idgen_snowflake_shmem_size(void)
{
	return add_size(offsetof(IdgenSnowflakeShared, counters),
					mul_size(counter_slots(), sizeof(IdgenSnowflakeCounter)));
}

/* Create or attach the shared state; caller holds AddinShmemInitLock */
void
idgen_snowflake_shmem_init(void)
{
	bool		found;

	idgen_snowflake = ShmemInitStruct("idgen snowflake",
									  idgen_snowflake_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u64(&idgen_snowflake->state, 0);
		pg_atomic_init_u64(&idgen_snowflake->reserved_end, 0);
		pg_atomic_init_u64(&idgen_snowflake->wall_tick, 0);
		pg_atomic_init_u64(&idgen_snowflake->clock_back, 0);
		pg_atomic_init_u64(&idgen_snowflake->clock_waits, 0);
		pg_atomic_init_u64(&idgen_snowflake->reserve_waits, 0);
		pg_atomic_init_u64(&idgen_snowflake->wanted_tick, 0);
		pg_atomic_init_u64(&idgen_snowflake->tick_entry, 0);
		pg_atomic_init_u64(&idgen_snowflake->asked_end, UINT64_MAX);
		pg_atomic_init_u32(&idgen_snowflake->blocked, 0);
		pg_atomic_init_u32(&idgen_snowflake->accept, 0);
		idgen_snowflake->blocked_node = -1;
		idgen_snowflake->blocked_layout[0] = '\0';
		pg_atomic_init_u64(&idgen_snowflake->file_until_us,
						   (uint64) (int64) -1);
		idgen_snowflake->instance_key = 0;
		ConditionVariableInit(&idgen_snowflake->reserve_cv);
		idgen_snowflake->nslots = counter_slots();
		for (int i = 0; i < idgen_snowflake->nslots; i++)
			pg_atomic_init_u64(&idgen_snowflake->counters[i].issued, 0);

		/* Start above the durable reservation of the state file */
		idgen_snowflake_state_load();
	}
}

/*
 * Note the wall clock tick; count a step back.  wall_tick holds a clock
 * reading, and each value replacing it is a reading taken after that value
 * was read from wall_tick (the caller's now_tick may be older: it only
 * tells whether anything changed), installed by compare-and-swap.  So the
 * values wall_tick takes are clock readings in the order they were made,
 * and a value below the one before is a real step back of the clock,
 * counted once, by the call whose swap installed it.  A caller that merely
 * read the clock before another one (and was slower to get here) counts
 * nothing.
 */
static void
note_wall_tick(int64 now_tick)
{
	uint64		seen = pg_atomic_read_u64(&idgen_snowflake->wall_tick);

	if ((uint64) now_tick == seen)
		return;
	for (;;)
	{
		int64		fresh = idgen_tick_of(&idgen_layout, idgen_clock_now_us());

		if (fresh < 0 || (uint64) fresh == seen)
			return;
		if (pg_atomic_compare_exchange_u64(&idgen_snowflake->wall_tick, &seen,
										   (uint64) fresh))
		{
			if ((uint64) fresh < seen)
				pg_atomic_fetch_add_u64(&idgen_snowflake->clock_back, 1);
			return;
		}
		/* seen now holds the newer value; read the clock again after it */
	}
}

/*
 * Raise the error of a caller the worker has not covered within
 * idgen.worker_wait_timeout, naming the worker's problem when it knows it
 */
static void
report_not_reserved(void)
{
	switch (idgen_worker_problem())
	{
		case IDGEN_WORKER_NO_DATABASE:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the idgen worker has not reserved its time range"),
					 errdetail("Database \"%s\" named by idgen.database does not exist; the worker keeps the reservation there.",
							   idgen_database),
					 errhint("Create database \"%s\" and run CREATE EXTENSION idgen in it, or set idgen.database to the database where extension idgen is installed and restart the server." IDGEN_HINT_TROUBLESHOOTING,
							 idgen_database)));
			break;
		case IDGEN_WORKER_NO_EXTENSION:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: the idgen worker has not reserved its time range"),
					 errdetail("Extension idgen is not installed in database \"%s\" named by idgen.database, where the worker keeps the reservation.",
							   idgen_database),
					 errhint("Run CREATE EXTENSION idgen in database \"%s\"." IDGEN_HINT_TROUBLESHOOTING,
							 idgen_database)));
			break;
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not generate a snowflake ID: the idgen worker has not reserved its time range"),
			 errdetail("IDs are handed out only after the worker has made a reservation durable in database \"%s\".",
					   idgen_database),
			 errhint("Make sure extension idgen is installed in the database named by idgen.database and that the \"idgen worker\" process is running." IDGEN_HINT_TROUBLESHOOTING)));
}

/* The error of a server that refuses IDs (idgen_snowflake_blocked_why) */
static void
report_blocked(void)
{
	if (idgen_snowflake_blocked_why() & IDGEN_BLOCK_RESTORED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake IDs are refused because this server was started from a backup or after archive recovery"),
				 errdetail("The server it was copied from may have issued IDs with node id %d above the restored high-water mark, and new IDs could repeat them.",
						   idgen_node_id),
				 errhint("Have a superuser run SELECT idgen.snowflake_resume(N), with N the largest snowflake ID the original server issued (or any larger ID), or lease node ids from a registry (idgen.node_id = 'auto'); snowflake_advance does not lift this refusal. Two copies resumed from one backup still repeat each other's IDs unless they are given different node ids.")));
	if (idgen_snowflake_blocked_why() & IDGEN_BLOCK_TIMELINE)
	{
		TimeLineID	tli = GetWALInsertionTimeLine();
		TimeLineID	round = (TimeLineID) 1 << idgen_node_timeline_bits;

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake IDs are refused because this server was promoted onto timeline %u, whose low %d bits an earlier timeline of its history had",
						tli, idgen_node_timeline_bits),
				 errdetail("Its node id %d is the one timeline %u had, and the server of that timeline may have issued IDs in WAL this server never replayed.",
						   idgen_fixed_node(), tli > round ? tli - round : tli),
				 errhint("Have a superuser run SELECT idgen.snowflake_resume(N), with N the largest snowflake ID the servers of earlier timelines issued (or any larger ID), once none of them issues IDs any more; or raise idgen.node_timeline_bits so that 2^bits is above the timeline, and restart.")));
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake IDs are refused because idgen.layout or idgen.node_id changed: was layout \"%s\" with node id %d, is layout \"%s\" with node id %d",
					idgen_snowflake->blocked_layout, idgen_snowflake->blocked_node,
					idgen_layout_spec, idgen_node_id),
			 errdetail("This server has issued IDs under the old settings, and IDs made under the new ones could be smaller than those."),
			 errhint("Set idgen.layout and idgen.node_id back and restart the server, or, if smaller IDs are acceptable, have a superuser run SELECT idgen.snowflake_accept_layout();")));
}

/*
 * Checks made before each generation; errors for a misuse.  Returns the
 * node id to put in the ID: idgen.node_id, or the leased one
 * (snowflake_lease.c).
 */
static int
check_can_generate(void)
{
	idgen_require_loaded();
	if (idgen_node_id == -1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen.node_id is not set"),
				 errdetail("Snowflake IDs carry the node id of the server that made them, and it has no default."),
				 errhint("Set idgen.node_id in postgresql.conf to a number unique among your servers (0 to " UINT64_FORMAT " for layout \"%s\") and restart the server." IDGEN_HINT_TROUBLESHOOTING,
						 idgen_field_max(idgen_layout.node.bits), idgen_layout.name)));
	if (RecoveryInProgress() && !idgen_allow_on_standby)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby usually has a copy of its primary's idgen.node_id, so its IDs could collide with the primary's."),
				 errhint("Set idgen.allow_on_standby to on only if this server has a node id of its own.")));
	if (idgen_node_id == IDGEN_NODE_AUTO)
		return idgen_snowflake_lease_node();
	if (idgen_node_id == IDGEN_NODE_CITUS)
		return idgen_citus_node();
	return idgen_fixed_node();
}

/*
 * See idgen.h.  A primary's timeline does not change while it runs (a
 * promotion ends recovery once; a demoted primary is restarted), so the
 * node id is computed once a backend sees recovery over and kept; during
 * recovery (idgen.allow_on_standby) it comes from the replayed timeline,
 * each time.
 */
int
idgen_fixed_node(void)
{
	static int	node = -1;
	TimeLineID	tli;
	bool		recovery;
	int			n;

	if (idgen_node_timeline_bits == 0)
		return idgen_node_id;
	if (node >= 0)
		return node;
	recovery = RecoveryInProgress();
	if (recovery)
		(void) GetXLogReplayRecPtr(&tli);
	else
		tli = GetWALInsertionTimeLine();
	tli &= (((TimeLineID) 1) << idgen_node_timeline_bits) - 1;
	n = (idgen_node_id << idgen_node_timeline_bits) | (int) tli;
	if (!recovery)
		node = n;
	return n;
}

/* See snowflake.h */
bool
idgen_snowflake_wait(int64 want_ms, int64 deadline, ConditionVariable *cv,
					 uint32 wait_event)
{
	int64		left = deadline - idgen_clock_monotonic_ms();
	long		ms = (long) Min(Max(want_ms, 1), left);

	if (left <= 0)
		return false;
	if (cv)
		ConditionVariableTimedSleep(cv, ms, wait_event);
	else
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ms, wait_event);
		ResetLatch(MyLatch);
	}
	CHECK_FOR_INTERRUPTS();
	return true;
}

/*
 * How many ticks an ID's tick may be ahead of the wall clock's: idgen.max_lead
 * in ticks, and at least one.  One tick ahead means the tick after the
 * current one may begin once the current tick's sequence is used up: an ID's
 * time is then less than one tick ahead of the clock.  Without it, a
 * generator held to the clock (max_lead 0) loses the rest of a tick each time
 * it enters one late, a scheduler slice or a statement boundary after the
 * clock, and cannot sustain the layout's rate.
 */
int64
idgen_snowflake_lead_ticks(const IdgenLayout *l)
{
	/* Every call asks: divide only when the setting or layout changed */
	static int	cached_ms = -1;
	static int64 cached_unit = 0;
	static int64 cached_ticks;

	if (cached_ms != idgen_max_lead_ms || cached_unit != l->unit_us)
	{
		cached_ticks = Max((int64) idgen_max_lead_ms * 1000 / l->unit_us, 1);
		cached_ms = idgen_max_lead_ms;
		cached_unit = l->unit_us;
	}
	return cached_ticks;
}

/*
 * A tick entered late.  The sequence normally walks on across ticks (see
 * the top of this file).  But a generator held to the clock (idgen.max_lead
 * under two ticks, so that the lead cannot absorb it) that falls behind the
 * clock — a statement boundary, a scheduler slice — would then begin the
 * current tick mid-sequence, and the sequence values below that are lost:
 * at the layout's full rate a part of a tick's IDs each time.  So the first
 * value issued in the newest tick is kept in tick_entry, and a state that
 * falls behind the clock after more than half a tick's sequence was issued
 * in its tick continues at sequence 0: the generator runs at over half the
 * layout's rate, and every residue of id % 2^k up to half the sequence came
 * round in that tick already.  Below half the rate, or with a lead that can
 * absorb it, the sequence walks on.  And a process that had to wait for
 * the clock a few ticks ago (recent_clock_wait) draws faster than the
 * layout allows: its statement will use every value of the tick, so it
 * continues at sequence 0 whatever was issued before.  Without that, a
 * loop of 10,000-row statements from one backend, whose pauses between
 * statements let the state fall behind the clock after ticks entered
 * mid-sequence, skipped 5.2% of the layout's values (mean of nine runs on
 * a 2-CPU VM; 3.4% with it).  tick_entry and that wait are hints only
 * (which sequence a value moved forward takes); uniqueness never depends on
 * them.
 */
static inline uint64
moved_seq(int64 tick, uint64 seq, uint64 mask, int s, int64 lead_max,
		  bool fast)
{
	uint64		entry;

	if (lead_max > 1)
		return seq;
	if (fast)
		return 0;
	if (seq <= mask / 2)
		return seq;
	entry = pg_atomic_read_u64(&idgen_snowflake->tick_entry);
	if ((int64) (entry >> s) == tick && seq >= (entry & mask) &&
		seq - (entry & mask) > mask / 2)
		return 0;
	return seq;
}

/*
 * When this process last began to wait for the clock (idgen_clock_now_us),
 * 0 if never; and whether that was less than IDGEN_FAST_TICKS ticks before
 * now_us: the process draws faster than the layout allows (moved_seq)
 */
#define IDGEN_FAST_TICKS 10
static int64 last_clock_wait_us = 0;

static inline bool
recent_clock_wait(const IdgenLayout *l, int64 now_us)
{
	return last_clock_wait_us != 0 &&
		now_us - last_clock_wait_us < IDGEN_FAST_TICKS * l->unit_us;
}

/* value, issued by this call, is the first of its tick: remember it */
static inline void
note_tick_entry(uint64 value)
{
	pg_atomic_write_u64(&idgen_snowflake->tick_entry, value);
}

/*
 * The layout's last usable tick, and the margin (half the reservation
 * ahead, in ticks) below which a call asks the worker for more.  The
 * layout is fixed while the server runs: computed once per process.
 */
static void
layout_limits(const IdgenLayout *l, int64 *tmax, int64 *ask_ticks)
{
	static const IdgenLayout *cached = NULL;
	static int64 cached_tmax,
				cached_ask;

	if (cached != l)
	{
		cached_tmax = idgen_layout_ts_max(l);
		cached_ask = IDGEN_RESERVE_AHEAD_MS * 500 / l->unit_us;
		cached = l;
	}
	*tmax = cached_tmax;
	*ask_ticks = cached_ask;
}

/* Ticks of half the reservation margin: see snowflake.h */
int64
idgen_snowflake_ask_ticks(void)
{
	int64		tmax,
				ask_ticks;

	layout_limits(&idgen_layout, &tmax, &ask_ticks);
	return ask_ticks;
}

/*
 * Unix microseconds at which the server's layout runs out: the end of its
 * last usable tick; no snowflake or gene ID is issued from then on.
 */
int64
idgen_snowflake_layout_end_us(void)
{
	int64		tmax,
				ask_ticks;

	layout_limits(&idgen_layout, &tmax, &ask_ticks);
	return idgen_tick_start(&idgen_layout, tmax + 1);
}

/* Tell the worker that a call needs ticks up to tick reserved */
static void
want_tick(int64 tick)
{
	uint64		old = pg_atomic_read_u64(&idgen_snowflake->wanted_tick);

	while (old < (uint64) tick &&
		   !pg_atomic_compare_exchange_u64(&idgen_snowflake->wanted_tick, &old,
										   (uint64) tick))
		;
	idgen_worker_wake();
}

/*
 * Where a state behind the clock moves to: the lowest tick a call may give
 * its ID.  Normally the wall clock's tick.  A generator held to the clock
 * (idgen.max_lead under two ticks) cannot run ahead to make up for ticks
 * nobody used, so a statement that draws IDs faster than the layout allows
 * after a pause (a materialised FROM generate_series builds all its rows
 * before the first call; a slow first row) would lose every tick of the
 * pause: from 1.7 s of 6.6 in one 20,000,000-row statement, a quarter of
 * the layout's rate.  Such a statement goes on with the ticks that went
 * unused since it began: its first call may take the tick of the
 * statement's start, and its later calls keep that lag behind the clock
 * while they come back to back (less than a tick apart), which they only do
 * at a rate the layout's ticks cannot keep up with: they catch up with the
 * clock.  A pause between two calls gives back as many ticks of the lag as
 * it lasted (rounded up): a caller drawing slower than the layout allows is
 * on the clock's tick again after at most as long as its statement had
 * paused, while one that is preempted for a few ticks keeps the rest.  The
 * lag used to drop to nothing at any pause over a tick: with two backends
 * on two cores, one descheduled for a scheduler slice then moved the shared
 * state up to the clock and threw away the other's unused ticks too (two
 * 10,000,000-row statements reached 87% to 99% of the layout's rate, 91%
 * the median of four runs; 99% in each of four without the reset).  So an
 * ID's time is never before the start of the statement that drew it.  The
 * ticks taken are never below the state (the last ID issued on this
 * server), so uniqueness and order do not depend on any of this.  One
 * statement per process at a time: the statement start says when a new one
 * began.
 */
static int64
lowest_tick(const IdgenLayout *l, int64 now_us, int64 now_tick, int64 lead_max)
{
	static TimestampTz stmt_start = 0;
	static int64 lag_ticks = 0;
	static int64 last_call_us = 0;
	TimestampTz start;
	int64		gap_us = now_us - last_call_us;

	if (lead_max > 1)
		return now_tick;
	last_call_us = now_us;
	start = GetCurrentStatementStartTimestamp();
	if (start != stmt_start)
	{
		int64		start_tick = idgen_tick_of(l, start + UNIX_TO_PG_US);

		stmt_start = start;
		lag_ticks = start_tick >= 0 ? Max(now_tick - start_tick, 0) : 0;
	}
	else if (gap_us < 0)
		lag_ticks = 0;
	else if (gap_us >= l->unit_us)
		lag_ticks = Max(lag_ticks - (gap_us + l->unit_us - 1) / l->unit_us, 0);
	return now_tick - lag_ticks;
}

/*
 * Context of one call's slow path: its deadlines (each set when the first
 * wait of its kind begins), and whether it sleeps on the reservation's
 * condition variable
 */
typedef struct NextWaits
{
	int64		clock_deadline;
	int64		reserve_deadline;
	bool		waited_clock;
	bool		waited_reserve;
	bool		on_cv;
} NextWaits;

/*
 * Fast path, for a single value: one atomic add.  While the state is not
 * below the lowest tick a call may take (lowest_tick), the state plus one
 * is the successor (a full sequence carries into the tick).  Unlike a
 * compare-and-swap, the add cannot fail under contention, and it takes the
 * state's cache line once per ID.  The value v it produced is this call's
 * alone, and every later value is larger, so the call may still adjust it
 * or wait before issuing it:
 *
 * - the state was below the lowest tick: move v there, keeping its
 *   sequence, with a CAS that succeeds only if v is still the state (so the
 *   sequence walks on as in the slow path);
 * - v's tick is ahead of the clock by more than idgen.max_lead, but by less
 *   than IDGEN_CLOCK_SPIN_US: wait for the clock on the CPU, then issue v.
 *   Calls that overlap in time may return in either order; a call that
 *   starts after another returned gets a larger ID.
 *
 * Otherwise (a lost CAS, a longer wait, a tick not reserved yet, the end of
 * the layout) v is skipped, never issued, and the slow path decides.
 * Returns whether v was issued, as *ntick and *idseq.
 */
static bool
next_fast(const IdgenLayout *l, int64 lead_max, int64 tmax, NextWaits *w,
		  int64 *ntick, uint64 *idseq)
{
	int			s = l->seq.bits;
	uint64		mask = idgen_field_max(s);
	int64		now_us = idgen_clock_now_us();
	int64		now_tick = idgen_tick_of(l, now_us);
	int64		low;
	uint64		v;
	int64		vt;
	bool		usable = true;
	bool		first;

	if (now_tick < 0)
		return false;
	low = lowest_tick(l, now_us, now_tick, lead_max);
	v = pg_atomic_add_fetch_u64(&idgen_snowflake->state, 1);
	vt = (int64) (v >> s);

	/* A sequence 0 not moved: the first value of tick vt */
	first = (v & mask) == 0;
	if (vt < low)
	{
		uint64		expected = v;
		uint64		moved;

		moved = ((uint64) low << s) | moved_seq(vt, v & mask, mask, s, lead_max,
												recent_clock_wait(l, now_us));
		usable = pg_atomic_compare_exchange_u64(&idgen_snowflake->state,
												&expected, moved);
		v = moved;
		vt = low;
		first = true;
	}
	else if (vt - now_tick > lead_max)
	{
		int64		until_us = idgen_tick_start(l, vt - lead_max);

		usable = until_us - now_us <= IDGEN_CLOCK_SPIN_US && vt <= tmax;
		if (usable)
		{
			/*
			 * The slow path goes on with the same deadline if the spin gives
			 * up (a clock step back): v is skipped
			 */
			pg_atomic_fetch_add_u64(&idgen_snowflake->clock_waits, 1);
			last_clock_wait_us = now_us;
			w->waited_clock = true;
			w->clock_deadline = idgen_clock_monotonic_ms() + idgen_clock_wait_ms;
			usable = idgen_clock_spin_until(until_us, w->clock_deadline,
											idgen_wait_event(IDGEN_WAIT_CLOCK));
			now_tick = vt - lead_max;
		}
	}
	if (!usable || vt > tmax ||
		((uint64) vt >= pg_atomic_read_u64(&idgen_snowflake->reserved_end) &&
		 !RecoveryInProgress()))
		return false;
	note_wall_tick(now_tick);
	if (first)
		note_tick_entry(v);
	*ntick = vt;
	*idseq = v & mask;
	return true;
}

/*
 * ntick is further ahead of the clock (now_us, its tick now_tick) than
 * idgen.max_lead allows: wait for the clock, within idgen.clock_wait_timeout
 * from the first wait of this call.  Close to the tick the wait is on the
 * CPU (idgen_clock_spin_until), further it sleeps until it is close.  When
 * the clock cannot catch up before the deadline, fails at once with 58000.
 * The caller looks at the state and the clock again afterwards.
 */
static void
wait_for_clock(const IdgenLayout *l, int64 ntick, int64 now_tick,
			   int64 now_us, int64 lead_max, NextWaits *w)
{
	int64		need_us = idgen_tick_start(l, ntick - lead_max) - now_us;
	int64		need_ms = need_us / 1000;

	last_clock_wait_us = now_us;
	if (!w->waited_clock)
	{
		pg_atomic_fetch_add_u64(&idgen_snowflake->clock_waits, 1);
		w->clock_deadline = idgen_clock_monotonic_ms() + idgen_clock_wait_ms;
	}
	w->waited_clock = true;

	if (need_us <= IDGEN_CLOCK_SPIN_US &&
		idgen_clock_monotonic_ms() < w->clock_deadline)
	{
		/*
		 * Whether the clock came or the spin gave up (a step back, the
		 * deadline), the caller looks again: the error comes from the
		 * clock's new reading or the passed deadline
		 */
		(void) idgen_clock_spin_until(now_us + need_us, w->clock_deadline,
									  idgen_wait_event(IDGEN_WAIT_CLOCK));
		return;
	}
	if (need_us > IDGEN_CLOCK_SPIN_US)
		need_ms = (need_us - IDGEN_CLOCK_SPIN_US / 2) / 1000;
	if (need_ms > w->clock_deadline - idgen_clock_monotonic_ms() ||
		!idgen_snowflake_wait(need_ms + 1, w->clock_deadline, NULL,
							  idgen_wait_event(IDGEN_WAIT_CLOCK)))
	{
		if (w->on_cv)
			ConditionVariableCancelSleep();
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not generate a snowflake ID: the system clock is " INT64_FORMAT " ms behind the generator",
						(ntick - now_tick) * l->unit_us / 1000),
				 errdetail("The system clock moved back, or IDs were requested faster than layout \"%s\" allows, and idgen.max_lead is %d ms.",
						   l->name, idgen_max_lead_ms),
				 errhint("Retry once the clock has caught up, or raise idgen.max_lead.")));
	}
}

/*
 * ntick is not covered by a durable reservation yet: ask the worker for it
 * and sleep on the reservation's condition variable, within
 * idgen.worker_wait_timeout from the first wait of this call; then the
 * caller looks again.  While a layout change is refused the worker
 * publishes no reservation, so the refusal costs the hot path nothing: it
 * is reported here.
 */
static void
wait_for_reservation(int64 ntick, NextWaits *w)
{
	if (idgen_snowflake_blocked_why() != 0)
	{
		if (w->on_cv)
			ConditionVariableCancelSleep();
		report_blocked();
	}
	if (!w->waited_reserve)
	{
		pg_atomic_fetch_add_u64(&idgen_snowflake->reserve_waits, 1);
		w->reserve_deadline = idgen_clock_monotonic_ms() + idgen_worker_wait_ms;
	}
	w->waited_reserve = true;
	want_tick(ntick);
	if (!w->on_cv)
		ConditionVariablePrepareToSleep(&idgen_snowflake->reserve_cv);
	w->on_cv = true;
	if (!idgen_snowflake_wait(idgen_worker_wait_ms, w->reserve_deadline,
							  &idgen_snowflake->reserve_cv,
							  idgen_wait_event(IDGEN_WAIT_RESERVATION)))
	{
		/*
		 * The reservation is written and waits for a synchronous standby,
		 * as every commit here does: wait with it, as a commit would
		 * (statement_timeout and cancellation still end the wait)
		 */
		if (idgen_worker_waits_for_sync_rep(InvalidOid))
		{
			w->reserve_deadline = idgen_clock_monotonic_ms() + idgen_worker_wait_ms;
			return;
		}
		ConditionVariableCancelSleep();
		report_not_reserved();
	}
}

/*
 * Slow path: read the state, compute the successor (the next aligned block
 * of 2^gene_bits sequence values, moving to the lowest tick a call may take
 * if the state is below it, perhaps at sequence 0: see moved_seq), wait for
 * the clock or the reservation when it needs either, and install it with
 * compare-and-swap.  Sets *ntick and *idseq (gene included).
 */
static void
next_slow(const IdgenLayout *l, int gene_bits, uint64 gene, int64 lead_max,
		  int64 tmax, NextWaits *w, int64 *ntick, uint64 *idseq)
{
	int			s = l->seq.bits;
	uint64		mask = idgen_field_max(s);
	uint64		block = ((uint64) 1) << gene_bits;
	uint64		old = pg_atomic_read_u64(&idgen_snowflake->state);

	for (;;)
	{
		int64		tick = (int64) (old >> s);
		uint64		seq = old & mask;
		int64		now_us = idgen_clock_now_us();
		int64		now_tick = idgen_tick_of(l, now_us);
		int64		low;
		int64		t;
		uint64		start;

		if (now_tick < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("the system clock is before the epoch of layout \"%s\"",
							l->name)));
		note_wall_tick(now_tick);
		low = lowest_tick(l, now_us, now_tick, lead_max);

		start = (seq + block) & ~(block - 1);
		if (start > mask - (block - 1))
		{
			t = Max(low, tick + 1);
			start = 0;
		}
		else if (tick < low)
		{
			t = low;
			if (moved_seq(tick, seq + 1, mask, s, lead_max,
						  recent_clock_wait(l, now_us)) == 0)
				start = 0;
		}
		else
			t = tick;

		if (t > tmax)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("snowflake timestamp overflows layout \"%s\"", l->name),
					 errdetail("The layout's %d timestamp bits end at %s.",
							   l->ts.bits,
							   timestamptz_to_str(idgen_tick_start(l, tmax + 1) - UNIX_TO_PG_US))));
		if (t - now_tick > lead_max)
			wait_for_clock(l, t, now_tick, now_us, lead_max, w);
		else if ((uint64) t >= pg_atomic_read_u64(&idgen_snowflake->reserved_end) &&
				 !RecoveryInProgress())
			wait_for_reservation(t, w);
		else if (pg_atomic_compare_exchange_u64(&idgen_snowflake->state, &old,
												((uint64) t << s) | (start + block - 1)))
		{
			if (t != tick)
				note_tick_entry(((uint64) t << s) | start);
			*ntick = t;
			*idseq = start | gene;
			return;
		}
		else
			continue;			/* old holds the state another call installed */
		old = pg_atomic_read_u64(&idgen_snowflake->state);
	}
}

/*
 * Bookkeeping of an ID issued in tick ntick: ask for more reservation while
 * half of the margin is left, once per reservation end, not in every call
 * until the worker has renewed it (a generator running ahead at full speed
 * would set the worker's latch for every ID, from every backend, all on one
 * cache line); count it for this process
 */
static void
note_issued(int64 ntick, int64 ask_ticks)
{
	uint64		end = pg_atomic_read_u64(&idgen_snowflake->reserved_end);

	if ((uint64) (ntick + ask_ticks) >= end &&
		pg_atomic_read_u64(&idgen_snowflake->asked_end) != end)
	{
		pg_atomic_write_u64(&idgen_snowflake->asked_end, end);
		idgen_worker_wake();
	}
	if (MyProc && GetNumberFromPGProc(MyProc) < idgen_snowflake->nslots)
	{
		pg_atomic_uint64 *c =
			&idgen_snowflake->counters[GetNumberFromPGProc(MyProc)].issued;

		pg_atomic_write_u64(c, pg_atomic_read_u64(c) + 1);
	}
}

/* Next snowflake ID; see idgen.h */
int64
idgen_snowflake_next(int gene_bits, uint64 gene)
{
	const IdgenLayout *l = &idgen_layout;
	NextWaits	w = {0};
	int64		lead_max;
	int64		tmax;
	int64		ask_ticks;
	int64		ntick;
	uint64		idseq;
	int			node;
	int64		id;

	node = check_can_generate();
	if (gene_bits > l->seq.bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gene bits %d exceed the %d sequence bits of layout \"%s\"",
						gene_bits, l->seq.bits, l->name)));
	if (gene_bits > 0 && l->seq.shift != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("layout \"%s\" cannot carry a gene", l->name),
				 errdetail("A gene lives in the lowest bits of the ID, and this layout does not put the sequence there.")));
	lead_max = idgen_snowflake_lead_ticks(l);
	layout_limits(l, &tmax, &ask_ticks);

	if (gene_bits != 0 || !next_fast(l, lead_max, tmax, &w, &ntick, &idseq))
		next_slow(l, gene_bits, gene, lead_max, tmax, &w, &ntick, &idseq);
	if (w.on_cv)
		ConditionVariableCancelSleep();
	note_issued(ntick, ask_ticks);
	id = (int64) idgen_compose(l, ntick, (uint64) node, idseq);
	idgen_currval_note_snowflake(id);
	return id;
}

/* Tick of the last ID issued */
int64
idgen_snowflake_top_tick(void)
{
	return (int64) (pg_atomic_read_u64(&idgen_snowflake->state) >>
					idgen_layout.seq.bits);
}

/* Highest tick a waiting call has asked to be reserved */
int64
idgen_snowflake_wanted_tick(void)
{
	return (int64) pg_atomic_read_u64(&idgen_snowflake->wanted_tick);
}

/* Make sure the next ID has a tick above tick */
void
idgen_snowflake_raise_floor(int64 tick)
{
	uint64		floor;
	uint64		old;

	if (tick < 0)
		return;
	floor = ((uint64) tick << idgen_layout.seq.bits) |
		idgen_field_max(idgen_layout.seq.bits);
	old = pg_atomic_read_u64(&idgen_snowflake->state);
	while (old < floor &&
		   !pg_atomic_compare_exchange_u64(&idgen_snowflake->state, &old, floor))
		;
}

/* First tick not covered by the reservation */
int64
idgen_snowflake_reserved_end(void)
{
	return (int64) pg_atomic_read_u64(&idgen_snowflake->reserved_end);
}

/* A durable reservation now covers ticks below end_tick */
void
idgen_snowflake_publish_reservation(int64 end_tick)
{
	if ((uint64) end_tick > pg_atomic_read_u64(&idgen_snowflake->reserved_end))
		pg_atomic_write_u64(&idgen_snowflake->reserved_end, (uint64) end_tick);
	ConditionVariableBroadcast(&idgen_snowflake->reserve_cv);
}

/* Forget the reservation (the worker lost track of it) */
void
idgen_snowflake_revoke_reservation(void)
{
	pg_atomic_write_u64(&idgen_snowflake->reserved_end, 0);
}

/* Refuse IDs: the layout changed from old_spec/old_node (postmaster) */
void
idgen_snowflake_block(const char *old_spec, int old_node)
{
	strlcpy(idgen_snowflake->blocked_layout, old_spec,
			sizeof(idgen_snowflake->blocked_layout));
	idgen_snowflake->blocked_node = old_node;
	pg_atomic_fetch_or_u32(&idgen_snowflake->blocked, IDGEN_BLOCK_LAYOUT);
}

/* Refuse IDs: started from a backup or after archive recovery (postmaster) */
void
idgen_snowflake_block_restored(void)
{
	pg_atomic_fetch_or_u32(&idgen_snowflake->blocked, IDGEN_BLOCK_RESTORED);
}

/*
 * Refuse IDs: promoted onto a timeline whose low bits came round (the idgen
 * worker, before its first reservation on that timeline; or the postmaster,
 * from the state file)
 */
void
idgen_snowflake_block_timeline(void)
{
	pg_atomic_fetch_or_u32(&idgen_snowflake->blocked, IDGEN_BLOCK_TIMELINE);
}

/* Are IDs refused, for any reason? */
bool
idgen_snowflake_blocked(void)
{
	return pg_atomic_read_u32(&idgen_snowflake->blocked) != 0;
}

/* The reasons IDs are refused and not yet accepted (IDGEN_BLOCK_* bits) */
uint32
idgen_snowflake_blocked_why(void)
{
	return pg_atomic_read_u32(&idgen_snowflake->blocked) &
		~pg_atomic_read_u32(&idgen_snowflake->accept);
}

/*
 * A superuser lifts the refusals in why; false if none of them applies.
 * The worker lifts them once it has recorded the decision.
 */
bool
idgen_snowflake_accept(uint32 why)
{
	if ((pg_atomic_read_u32(&idgen_snowflake->blocked) & why) == 0)
		return false;
	pg_atomic_fetch_or_u32(&idgen_snowflake->accept, why);
	return true;
}

/* Has a superuser accepted every refusal in force? */
bool
idgen_snowflake_accept_pending(void)
{
	return idgen_snowflake_blocked() && idgen_snowflake_blocked_why() == 0;
}

/* The worker recorded the decision: issue IDs again */
void
idgen_snowflake_unblock(void)
{
	pg_atomic_write_u32(&idgen_snowflake->blocked, 0);
	pg_atomic_write_u32(&idgen_snowflake->accept, 0);
}

/* Reservation in the state file (snowflake_state.c), -1 if none */
int64
idgen_snowflake_file_reservation(void)
{
	return (int64) pg_atomic_read_u64(&idgen_snowflake->file_until_us);
}

/* The state file now holds this reservation (postmaster or worker) */
void
idgen_snowflake_set_file_reservation(int64 until_us)
{
	pg_atomic_write_u64(&idgen_snowflake->file_until_us, (uint64) until_us);
}

/* The random key of this data directory (postmaster, from the state file) */
void
idgen_snowflake_set_instance_key(uint64 key)
{
	idgen_snowflake->instance_key = key;
}

/* See idgen.h */
uint64
idgen_snowflake_instance_key(void)
{
	return idgen_snowflake->instance_key;
}

/*
 * Make every later snowflake and gene ID larger than min_id
 * (idgen.snowflake_advance and idgen.snowflake_resume): raise the generator
 * to min_id's tick, so that the next ID has a later one, and wait until the
 * worker has made a reservation past that tick durable (the state file and
 * the reservation row), so that a crash right after still starts above
 * min_id.  Refused at once when the next tick would be further ahead of the
 * clock than idgen.max_lead allows: calls would only wait and fail; and
 * when min_id is below 1, which every ID already exceeds (or equals).
 *
 * Only resume, the caller's word that min_id is at or above the last ID of
 * the server this one was copied from (snowflake_resume), lifts the refusal
 * after a restore.  Without it a restored server's refusal stays and the
 * call fails with it before anything moves: no ID this copy can know of
 * (its own, a column's maximum) says what the original issued since.
 */
void
idgen_snowflake_advance(int64 min_id, bool resume)
{
	const IdgenLayout *l = &idgen_layout;
	IdgenParts	p;
	int64		tick,
				now_us,
				now_tick,
				lead_max,
				tmax,
				ask_ticks,
				deadline;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot advance the snowflake generator during recovery")));
	layout_limits(l, &tmax, &ask_ticks);
	lead_max = idgen_snowflake_lead_ticks(l);
	now_us = idgen_clock_now_us();
	now_tick = idgen_tick_of(l, now_us);

	if (min_id < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot advance the snowflake generator past ID " INT64_FORMAT, min_id),
				 errdetail("No snowflake ID is below 1, so an argument below 1 can only be a mistake."),
				 resume ?
				 errhint("Pass the largest snowflake ID the original server issued.") :
				 errhint("Pass the largest ID that every later ID must exceed.")));
	if (!resume && (idgen_snowflake_blocked_why() & IDGEN_BLOCK_VOUCH))
		report_blocked();

	idgen_decompose(l, (uint64) min_id, &p);
	tick = p.tick;
	if (tick >= tmax ||
		idgen_compose(l, tick + 1, 0, 0) <= (uint64) min_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot advance the snowflake generator past ID " INT64_FORMAT, min_id),
				 errdetail("No ID of layout \"%s\" is larger than it.", l->name),
				 errhint("Pass an ID of this server's layout; if the ID was made under another layout, set idgen.layout to that layout.")));
	if (tick + 1 - now_tick > lead_max)
	{
		int64		ahead_ms = (tick + 1 - now_tick) * l->unit_us / 1000;

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot advance the snowflake generator past ID " INT64_FORMAT, min_id),
				 errdetail("IDs above it would be " INT64_FORMAT " ms ahead of the system clock (layout \"%s\", ID time %s), and idgen.max_lead is %d ms.",
						   ahead_ms, l->name,
						   timestamptz_to_str(idgen_tick_start(l, tick) - UNIX_TO_PG_US),
						   idgen_max_lead_ms),
				 errhint("Set idgen.max_lead to at least " INT64_FORMAT " ms (a reload is enough) and call it again, or wait until the clock has passed the ID's time; if the ID was made under another layout, set idgen.layout to that layout.",
						 ahead_ms + 1)));
	}


	/*
	 * The floor first, then the refusal lifted: no backend can draw an ID
	 * at or below min_id in between, however long this backend is
	 * descheduled there (idgen.test_hold_lock holds it there in tests)
	 */
	idgen_snowflake_raise_floor(tick);
	if (resume)
	{
		if (idgen_test_hold_lock != 0)
			(void) DirectFunctionCall1(pg_advisory_xact_lock_shared_int8,
									   Int64GetDatum((int64) idgen_test_hold_lock));
		(void) idgen_snowflake_accept(IDGEN_BLOCK_VOUCH);
	}
	tick = Max(tick + 1, now_tick);
	deadline = idgen_clock_monotonic_ms() + idgen_worker_wait_ms;
	ConditionVariablePrepareToSleep(&idgen_snowflake->reserve_cv);
	while (idgen_snowflake_blocked() ||
		   (uint64) tick >= pg_atomic_read_u64(&idgen_snowflake->reserved_end))
	{
		if (idgen_snowflake_blocked_why() != 0)
		{
			ConditionVariableCancelSleep();
			report_blocked();
		}
		want_tick(tick);
		if (!idgen_snowflake_wait(100, deadline, &idgen_snowflake->reserve_cv,
								  idgen_wait_event(IDGEN_WAIT_RESERVATION)))
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not advance the snowflake generator: the idgen worker has not reserved its time range"),
					 errdetail("The generator is raised, but a restart could start below the ID until the worker has made a reservation durable in database \"%s\".",
							   idgen_database),
					 errhint("Make sure extension idgen is installed in the database named by idgen.database and that the \"idgen worker\" process is running, then call it again.")));
		}
	}
	ConditionVariableCancelSleep();
}
