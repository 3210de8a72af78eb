/*
 * idgen.h
 *		Settings and helpers shared by every PostgreSQL-facing file of
 *		idgen, and the rules of its shared memory.
 *
 * The pure arithmetic lives in files without PostgreSQL headers (layout.h,
 * codec.h, gene.h).  Each component has one header: snowflake.h (the
 * generator, its state file and reservation, node-id leases), segment.h
 * (segment IDs, their allocation and the central segment server),
 * worker.h (the background workers and the steps each component gives
 * them), pqconn.h (bounded libpq calls), clock.h (the clocks).  module.c
 * holds _PG_init and is the only file that includes them all; below it the
 * includes form no circle (test/check_includes.sh checks).
 *
 * Shared memory
 * -------------
 * Created by module.c's shmem_startup_hook under AddinShmemInitLock; every
 * region is named, so a process that attaches later (EXEC_BACKEND) finds
 * it.  "Writer" is who may change a field once the server runs; the
 * postmaster's writes at creation happen before any other process exists.
 * Each database has one writer of its segment allocations, called the
 * allocator below: in idgen.database the "idgen worker", or, with
 * idgen.segment_server set, the "idgen remote worker"; in any other
 * database its "idgen segment worker" (worker.c), of which the registry
 * below lets only one run per database.
 *
 * "idgen snowflake" (IdgenSnowflakeShared, snowflake.h)
 *	state			pg_atomic; every caller adds one (the fast path) or
 *					installs a successor with compare-and-swap; raised (CAS to
 *					a larger value) by the postmaster at start, the idgen
 *					worker and the remote worker.  No lock: every change makes
 *					it larger, and a caller issues only the value its own add
 *					or CAS produced (an added value it cannot use is skipped,
 *					never issued), so IDs are unique and grow.
 *	reserved_end	pg_atomic; the idgen worker alone, after the reservation
 *					behind it is committed and in the state file (so a caller
 *					that reads it never uses a tick that is not durable); 0
 *					(revoked) when the extension is missing.
 *	wanted_tick		pg_atomic; raised by waiting callers with CAS, read by
 *					the idgen worker.
 *	asked_end		pg_atomic; written by callers (a plain write): the
 *					reservation end for which one of them woke the worker,
 *					so that the others do not.  A lost write costs one more
 *					wake-up; the worker's latch stays set until it runs.
 *	tick_entry		pg_atomic; written by callers (a plain write), read by
 *					callers: only a hint of which sequence a tick moved to
 *					starts at (snowflake.c), never of which values are free,
 *					so a stale or lost write costs at most a sequence jump.
 *	blocked			pg_atomic; set by the postmaster at start, cleared by
 *					the idgen worker once a superuser accepted.
 *	accept			pg_atomic; set by a superuser's
 *					idgen.snowflake_accept_layout(), cleared by the worker.
 *	blocked_node, blocked_layout, instance_key
 *					plain; the postmaster at start only, read-only after.
 *	file_until_us	pg_atomic; the postmaster at start, then the idgen
 *					worker (a standby's too); read by snowflake_status.
 *	wall_tick		pg_atomic; any caller, by compare-and-swap only, with a
 *					clock reading taken after the value it replaces was read
 *					(note_wall_tick), so a decrease is a real clock step.
 *	clock_back		pg_atomic; added to by the caller whose swap of
 *					wall_tick went down: one count per real step.
 *	clock_waits, reserve_waits
 *					pg_atomic statistics; any caller.
 *	counters[n]		pg_atomic, one cache line each; slot n is written by the
 *					process with pgprocno n only (a read and a write, no
 *					read-modify-write needed), summed by snowflake_status.
 *	reserve_cv		broadcast by the idgen worker on a new reservation.
 *
 * "idgen worker" (worker.c)
 *	procno[2]		pg_atomic; each worker writes its own entry at start and
 *					exit, backends read it to set the worker's latch.  A stale
 *					number only sets the latch of whatever process has that
 *					PGPROC now: a spurious wake-up, which latches allow.
 *	mutex			spinlock protecting db[]: an entry's dbid and started_ms
 *					are set by the backend that starts a database's segment
 *					worker and cleared by that worker at exit; its procno is
 *					set by the worker (only if no other runs for the
 *					database), under the mutex too, and read without it to
 *					set the latch (a stale number: a spurious wake-up).
 *					Entries in use (running, starting, or exited but not
 *					yet reaped: gone_pid, cleared once kill() finds no such
 *					process) are at most idgen.segment_max_workers,
 *					counted under the mutex.
 *	demand			pg_atomic; bumped by a backend that found
 *					idgen.segment_max_workers running for other databases;
 *					a segment worker that sees it change exits after its
 *					round, leaving its slot to the waiting database.
 *	problem			pg_atomic; why the idgen worker cannot keep the
 *					reservation (IdgenWorkerProblem): written by the idgen
 *					and remote workers, each write one atomic exchange (whoever
 *					changes the value logs the new one, so it is logged once)
 *					or, on exit while connecting, one atomic write; read by a
 *					caller's error when the worker has not reserved in time.
 *
 * "idgen lease" (IdgenSnowflakeLease, snowflake.h)
 *	word			pg_atomic; the remote worker alone, one atomic write
 *					after a write barrier; callers read node and lease end
 *					together with one atomic read (snowflake.h).
 *	mutex			spinlock protecting renewed_at_us, previous_tick,
 *					instance and last_error: written by the remote worker,
 *					read by callers (error details) and node_lease_status.
 *	cv				broadcast by the remote worker when it leases.
 *
 * "idgen segment" (IdgenSegmentShared) and the shared hash "idgen segment
 * tags" of IdgenSegmentSlot (segment.h)
 *	The hash key is (database OID, tag): a tag 'order' in two databases
 *	is two slots, and a process only ever looks at its own database's.
 *	LWLock "idgen segment" protects the hash and ntags: lookups under
 *	LW_SHARED; inserting a slot (a caller's first use of a tag) and removing
 *	one (segment_create/alter/drop, a caller that met an unknown tag, the
 *	allocator) under LW_EXCLUSIVE.  The allocator writes slots while it
 *	holds LW_SHARED, which keeps the slot from being removed under it.
 *	slot.generation	pg_atomic; set on insert and set to 0 just before
 *					removal, both under LW_EXCLUSIVE (next_generation is a
 *					fetch-add counter).  A process that keeps a slot pointer
 *					without the lock compares generations before trusting it.
 *	slot.pos		pg_atomic, (epoch << 40) | offset, on its own cache line;
 *					callers fetch-add it (the only hot-path write) and switch
 *					it to the next epoch with CAS.  An add that overshoots a
 *					used-up segment is thrown away, never returned.
 *	slot.ring[e % IDGEN_SEG_RING]
 *					the descriptor of epoch e: the allocator alone writes
 *					it, only those after the last ready epoch (the chain,
 *					current + 1 .. current + chain_len, at most
 *					IDGEN_SEG_RING / 2 ahead), in order, each as a seqlock
 *					(epoch INVALID, barrier, fields, barrier, epoch); readers
 *					check the epoch before and after.  Epoch e + 1 becomes
 *					current only once its descriptor is complete, so the
 *					current descriptor never changes while it is current, and
 *					callers never get ahead of the descriptor being written.
 *	slot.state, dyn_step, last_alloc, fetches, last_fetch, chain_len,
 *	alloc_epoch, chain_at, hunger_at, hunger_epoch
 *					pg_atomic; the allocator, under LW_SHARED; read by the
 *					allocator and segment_status.  dyn_step and last_alloc
 *					are atomics so that segment_status, which reads them
 *					under LW_SHARED while the allocator writes them, never
 *					sees half of one on a platform without 8-byte stores.
 *	slot.waits		pg_atomic; any caller.
 *	The shared hash "idgen segment marks" of IdgenSegmentMark, same key:
 *	the last max_id each tag's allocator committed since the server
 *	started; entries are never removed.  Inserted and raised by the
 *	database's allocator under LW_EXCLUSIVE, read by it under LW_SHARED.
 *	cv				broadcast when a slot changes state, gets a segment or is
 *					removed.
 *
 * "idgen segment server" (segment_server.c)
 *	mutex			spinlock protecting error: written by the allocator (the
 *					remote worker), read by a caller about to give up.
 *
 * "idgen citus" (citus.c)
 *	word			pg_atomic; the idgen worker alone, one atomic write after
 *					a write barrier: this node's Citus group id (+ 2), or
 *					none; callers read it with one atomic read.
 *	mutex			spinlock protecting server (the coordinator's connection
 *					string on a Citus worker), why and hint: written by the
 *					idgen worker, read by callers and the remote worker.
 *	cv				broadcast by the idgen worker each time it has looked.
 *
 * "idgen currval" (currval.c): one slot per PGPROC, for the backend using it
 *	mutex			spinlock protecting leader_pid, written and draws: a
 *					parallel worker merges its draws into its leader's slot
 *					when it exits; the leader takes them in and empties it.
 *	pending			pg_atomic; set by a worker after it wrote the slot,
 *					cleared by the leader under mutex; read by the leader
 *					without it before each draw.
 *
 * Everything else is process-local.  The durable state behind the shared
 * memory (the state file idgen.state, the tables) is described in
 * snowflake_state.c and segment_alloc.c.
 */
#ifndef IDGEN_H
#define IDGEN_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "layout.h"

/* Unix microseconds minus this are a PostgreSQL timestamp (microseconds since 2000) */
#define UNIX_TO_PG_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* Settings (idgen.c) */
extern int	idgen_node_id;			/* -1 when unset, IDGEN_NODE_AUTO or _CITUS */
extern char *idgen_layout_spec;
extern int	idgen_max_lead_ms;
extern int	idgen_layout_end_warning_s;
extern int	idgen_clock_wait_ms;
extern int	idgen_worker_wait_ms;
extern int	idgen_test_hold_lock;	/* idgen.test_hold_lock: tests only */
extern int	idgen_segment_max_workers;
extern char *idgen_database;
extern bool idgen_allow_on_standby;
extern bool idgen_allow_key_drop;
extern int	idgen_node_timeline_bits;	/* low node bits from the timeline */

/* The largest idgen.node_timeline_bits */
#define IDGEN_TIMELINE_BITS_MAX 16

/*
 * Ends the hint of each error a new installation meets: the README's
 * Troubleshooting section has them all (a string literal, joined to the
 * hint's own at compile time)
 */
#define IDGEN_HINT_TROUBLESHOOTING " See \"Troubleshooting\" in idgen's README."

/*
 * The node id in snowflake IDs made now for a fixed idgen.node_id
 * (snowflake.c): idgen.node_id, shifted left by idgen.node_timeline_bits
 * with the server's timeline modulo 2^bits below it
 */
extern int	idgen_fixed_node(void);

/* idgen_node_id when idgen.node_id = 'auto' (leased, snowflake_lease.c) */
#define IDGEN_NODE_AUTO (-2)

/* idgen_node_id when idgen.node_id = 'citus' (the Citus group id, citus.c) */
#define IDGEN_NODE_CITUS (-3)

/* The layout parsed from idgen.layout at start-up (idgen.c) */
extern IdgenLayout idgen_layout;

/*
 * Module load (idgen.c, called by _PG_init): check idgen.layout and
 * idgen.node_id and define the settings above; once every part is set up,
 * idgen_mark_loaded.
 */
extern void idgen_define_gucs(void);
extern void idgen_mark_loaded(void);

/* OID of table idgen.<name> in this database, InvalidOid if absent */
extern Oid	idgen_table_relid(const char *name);

/*
 * Error unless table idgen.id_key, about to be dropped, holds no key or
 * idgen.allow_key_drop is on (idkey.c; the object access hook calls it)
 */
extern void idgen_id_key_refuse_drop(Oid relid);

/*
 * A read-only SPI plan run with a snapshot taken now, in parallel mode too,
 * for the committed rows of idgen's table relid (idgen.c)
 */
struct _SPI_plan;
extern int	idgen_spi_read_fresh(struct _SPI_plan *plan, Datum *args,
								 const char *nulls, Oid relid, long tcount);

/*
 * Write a file of the data directory durably (idgen.c): data into tmp,
 * fsync, then a durable rename over path, so a crash leaves either the old
 * file or the new one.  Errors are ERRORs.
 */
extern void idgen_write_file_durably(const char *path, const char *tmp,
									 const void *data, size_t len);

/* Error unless the library was loaded via shared_preload_libraries */
extern void idgen_require_loaded(void);

/*
 * Layout named by a SQL argument: NULL means the server's idgen.layout.
 * Raises an error for an unknown preset or a bad spec.
 */
extern const IdgenLayout *idgen_layout_arg(const char *spec, IdgenLayout *buf);

/*
 * Wait events: idgen_wait_event(IDGEN_WAIT_CLOCK, _RESERVATION, _SEGMENT or
 * _STANDBY) (compat.h) is a named event on 17 and later, "Extension"
 * before.  Plain "Extension" for the rest (the remote worker's waits on a
 * socket).
 */
#define IDGEN_WAIT_EVENT PG_WAIT_EXTENSION

#endif							/* IDGEN_H */
