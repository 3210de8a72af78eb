/*
 * snowflake.h
 *		Snowflake IDs: the shared generator (snowflake.c), its durable
 *		reservation and state file (snowflake_state.c), node ids leased from
 *		a registry (snowflake_lease.c) and the SQL functions
 *		(snowflake_sql.c).
 *
 * Shared memory and its rules: idgen.h.
 */
#ifndef IDGEN_SNOWFLAKE_H
#define IDGEN_SNOWFLAKE_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"

#include "clock.h"

/*
 * How far ahead of the newest tick the worker reserves, in ms.  Calls never
 * wait for the worker while it keeps up; a restart starts at most this far
 * ahead of the clock.
 */
#define IDGEN_RESERVE_AHEAD_MS 1000

/*
 * How long after the last ID the worker keeps the reservation moving with
 * the clock; after that an idle server writes nothing.
 */
#define IDGEN_RESERVE_LINGER_MS 60000

/*
 * Why snowflake IDs are refused (bits of IdgenSnowflakeShared.blocked): the
 * layout or node id changed so that new IDs could be smaller
 * (snowflake_accept_layout lifts it), or the server was started from a
 * backup or after archive recovery with a fixed node id, so its original may
 * have issued IDs above the restored reservation (only snowflake_resume,
 * which vouches for the original's last ID, lifts it), or the server was
 * promoted onto a timeline whose low idgen.node_timeline_bits bits an
 * earlier timeline had, so that its node id is that timeline's, which may
 * have issued IDs in WAL this server never replayed (snowflake_resume lifts
 * it too).  IDGEN_BLOCK_VOUCH: the refusals only snowflake_resume lifts.
 */
#define IDGEN_BLOCK_LAYOUT		0x1
#define IDGEN_BLOCK_RESTORED	0x2
#define IDGEN_BLOCK_TIMELINE	0x4
#define IDGEN_BLOCK_VOUCH		(IDGEN_BLOCK_RESTORED | IDGEN_BLOCK_TIMELINE)

/* Per-process counter, padded to its own cache line */
typedef union IdgenSnowflakeCounter
{
	pg_atomic_uint64 issued;	/* written by its own process only */
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenSnowflakeCounter;

/* The generator: shared memory "idgen snowflake" */
typedef struct IdgenSnowflakeShared
{
	pg_atomic_uint64 state;		/* (tick << seq_bits) | seq; CAS */
	char		pad1[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];
	pg_atomic_uint64 reserved_end;	/* first unreserved tick; idgen worker */
	pg_atomic_uint64 wall_tick; /* newest wall-clock tick seen; statistic */
	pg_atomic_uint64 clock_back;	/* times the wall clock went back */
	pg_atomic_uint64 clock_waits;	/* calls that waited for the clock */
	pg_atomic_uint64 reserve_waits; /* calls that waited for the worker */
	pg_atomic_uint64 wanted_tick;	/* highest tick a waiting call needs;
									 * raised by callers (CAS) */
	pg_atomic_uint64 tick_entry;	/* first value issued in the newest
									 * tick; callers, a hint */
	pg_atomic_uint64 asked_end; /* reserved_end for which a caller last
								 * woke the worker; callers */
	pg_atomic_uint32 blocked;	/* IDGEN_BLOCK_* bits: why IDs are
								 * refused; postmaster sets, idgen worker
								 * clears */
	pg_atomic_uint32 accept;	/* IDGEN_BLOCK_* bits a superuser
								 * accepted; callers set, worker clears */
	int32		blocked_node;	/* node id before the change; postmaster */
	char		blocked_layout[256];	/* layout before the change; postmaster */
	pg_atomic_uint64 file_until_us; /* (int64) reservation in the state
									 * file, -1 none; postmaster, then the
									 * idgen worker */
	uint64		instance_key;	/* random key of this start of the server;
								 * postmaster */
	ConditionVariable reserve_cv;	/* broadcast on a new reservation */
	int			nslots;			/* length of counters[]; postmaster */
	IdgenSnowflakeCounter counters[FLEXIBLE_ARRAY_MEMBER];	/* by pgprocno */
} IdgenSnowflakeShared;

/* The generator's shared memory (snowflake.c), NULL until attached */
extern IdgenSnowflakeShared *idgen_snowflake;

/* Shared memory (snowflake.c, called from module.c) */
extern Size idgen_snowflake_shmem_size(void);
extern void idgen_snowflake_shmem_init(void);

/*
 * Next snowflake ID (snowflake.c).  With gene_bits > 0, takes an aligned
 * block of 2^gene_bits sequence values and puts gene in its low bits.
 */
extern int64 idgen_snowflake_next(int gene_bits, uint64 gene);
extern int64 idgen_snowflake_lead_ticks(const IdgenLayout *l);
/*
 * Half the reservation margin, in ticks: a call whose tick is within it of
 * the reservation's end asks the worker for more (snowflake.c)
 */
extern int64 idgen_snowflake_ask_ticks(void);
extern int64 idgen_snowflake_layout_end_us(void);

/*
 * Sleep for up to want_ms, but not past deadline (monotonic ms); false,
 * without sleeping, once the deadline has passed.  With cv, sleeps on the
 * condition variable (the caller has prepared to sleep), else on the latch.
 */
extern bool idgen_snowflake_wait(int64 want_ms, int64 deadline,
								 ConditionVariable *cv, uint32 wait_event);

/* The generator as the reservation and the lease see it (snowflake.c) */
extern int64 idgen_snowflake_top_tick(void);
extern int64 idgen_snowflake_wanted_tick(void);
extern void idgen_snowflake_raise_floor(int64 tick);
extern int64 idgen_snowflake_reserved_end(void);
extern void idgen_snowflake_publish_reservation(int64 end_tick);
extern void idgen_snowflake_revoke_reservation(void);

/* Layout changes, the state file and the instance key (snowflake.c) */
extern void idgen_snowflake_block(const char *old_spec, int old_node);
extern void idgen_snowflake_block_restored(void);
extern void idgen_snowflake_block_timeline(void);
extern bool idgen_snowflake_blocked(void);
extern uint32 idgen_snowflake_blocked_why(void);
extern bool idgen_snowflake_accept(uint32 why);
extern bool idgen_snowflake_accept_pending(void);
extern void idgen_snowflake_unblock(void);
extern void idgen_snowflake_advance(int64 min_id, bool resume);
extern int64 idgen_snowflake_file_reservation(void);
extern void idgen_snowflake_set_file_reservation(int64 until_us);
extern void idgen_snowflake_set_instance_key(uint64 key);
extern uint64 idgen_snowflake_instance_key(void);

/*
 * The state file (snowflake_state.c): read by the postmaster when shared
 * memory is created; raises the floor and blocks IDs after a layout change.
 * The worker's step is declared in worker.h.
 */
extern void idgen_snowflake_state_load(void);

/*
 * Node ids leased from a registry (snowflake_lease.c), idgen.node_id =
 * 'auto'.  The leased node id and the time its lease runs out live in one
 * shared 64-bit word, so a caller reads both, consistently, with one atomic
 * read: bits 63..44 hold node + 1 (0: no node id yet), bits 43..0 the end
 * of the lease in CLOCK_MONOTONIC milliseconds.
 */
#define IDGEN_LEASE_MS_BITS 44
#define IDGEN_LEASE_MS_MASK ((UINT64CONST(1) << IDGEN_LEASE_MS_BITS) - 1)
#define IDGEN_LEASE_MAX_NODE ((1 << (64 - IDGEN_LEASE_MS_BITS)) - 2)
#define IDGEN_LEASE_TEXT_LEN 256

/* The lease: shared memory "idgen lease" */
typedef struct IdgenSnowflakeLease
{
	pg_atomic_uint64 word;		/* node and lease end; remote worker */
	ConditionVariable cv;		/* broadcast when the worker leases */
	slock_t		mutex;			/* protects the fields below */
	int64		renewed_at_us;	/* wall clock of the last renewal, or 0 */
	int64		previous_tick;	/* floor taken over from the previous
								 * holder, or -1 */
	char		instance[IDGEN_LEASE_TEXT_LEN]; /* our name in the registry */
	char		last_error[IDGEN_LEASE_TEXT_LEN];	/* last failed attempt,
													 * or "" */
} IdgenSnowflakeLease;

/* The lease's shared memory (snowflake_lease.c), NULL until attached */
extern IdgenSnowflakeLease *idgen_snowflake_lease;

/* Settings (snowflake_lease.c) */
extern char *idgen_node_registry;
extern char *idgen_node_namespace;
extern int	idgen_node_lease_ms;
extern int	idgen_node_guard_ms;
extern int	idgen_node_lease_max_ms;

/* Module load and shared memory (snowflake_lease.c, called from module.c) */
extern void idgen_snowflake_lease_define_gucs(void);
/* The registry's bound alone, also without the preload (module.c) */
extern void idgen_snowflake_lease_define_serving_gucs(void);
extern Size idgen_snowflake_lease_shmem_size(void);
extern void idgen_snowflake_lease_shmem_init(void);

/* Slow path of idgen_snowflake_lease_node: wait for a first lease, or fail */
extern int	idgen_snowflake_lease_node_slow(void);

/*
 * The node id to put in a snowflake ID made now, when idgen.node_id is
 * 'auto': one atomic read and a clock read while the lease is valid;
 * otherwise waits for the worker's first lease or raises an error.
 */
static inline int
idgen_snowflake_lease_node(void)
{
	uint64		w = pg_atomic_read_u64(&idgen_snowflake_lease->word);

	if ((w >> IDGEN_LEASE_MS_BITS) != 0 &&
		(int64) (w & IDGEN_LEASE_MS_MASK) > idgen_clock_monotonic_ms())
		return (int) (w >> IDGEN_LEASE_MS_BITS) - 1;
	return idgen_snowflake_lease_node_slow();
}

#endif							/* IDGEN_SNOWFLAKE_H */
