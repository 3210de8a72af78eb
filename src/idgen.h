/*
 * idgen.h
 *		Declarations shared by idgen's PostgreSQL-facing files.
 *
 * The pure arithmetic lives in files without PostgreSQL headers (layout.h,
 * codec.h, gene.h); this header is for the glue.
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

/* GUCs (idgen.c) */
extern int	idgen_node_id;			/* -1 when unset */
extern char *idgen_layout_spec;
extern int	idgen_max_lead_ms;
extern int	idgen_clock_wait_ms;
extern int	idgen_worker_wait_ms;
extern char *idgen_database;
extern bool idgen_allow_on_standby;

/* The layout parsed from idgen.layout at start-up (idgen.c) */
extern IdgenLayout idgen_layout;

/* OID of table idgen.<name> in this database, InvalidOid if absent (idgen.c) */
extern Oid	idgen_table_relid(const char *name);

/* Error unless the library was loaded via shared_preload_libraries */
extern void idgen_require_loaded(void);

/*
 * Layout named by a SQL argument: NULL means the server's idgen.layout.
 * Raises an error for an unknown preset or a bad spec.
 */
extern const IdgenLayout *idgen_layout_arg(const char *spec, IdgenLayout *buf);

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
 * Wait events: idgen_wait_event(IDGEN_WAIT_CLOCK, _RESERVATION or _SEGMENT)
 * (compat.h) is a named event on 17 and later, "Extension" before.  Plain
 * "Extension" for the rest (the remote worker's waits on a socket).
 */
#define IDGEN_WAIT_EVENT PG_WAIT_EXTENSION

/* Shared memory of the snowflake generator (snowflake.c) */
extern Size idgen_snowflake_shmem_size(void);
extern void idgen_snowflake_shmem_init(void);

/* Shared memory and settings of the segment cache (segment.c) */
extern Size idgen_segment_shmem_size(void);
extern void idgen_segment_shmem_init(void);
extern void idgen_segment_define_gucs(void);

/*
 * Worker side of the snowflake reservation (reservation.c): called in the
 * worker's loop inside a transaction; may lower *sleep_ms.
 */
extern void idgen_reservation_step(long *sleep_ms);
extern void idgen_reservation_publish(void);

/*
 * Worker side of segments (segment.c): called in the worker's loop outside
 * any transaction (it opens one per allocation); may lower *sleep_ms.
 */
extern void idgen_segment_worker_step(long *sleep_ms);

/* Wake the idgen worker, if it runs (snowflake.c) */
extern void idgen_wake_worker(void);

/* Snowflake state as the reservation code sees it (snowflake.c) */
extern void idgen_snowflake_set_worker(int pgprocno, bool remote);
extern int64 idgen_snowflake_top_tick(void);
extern int64 idgen_snowflake_wanted_tick(void);
extern void idgen_snowflake_raise_floor(int64 tick);
extern int64 idgen_snowflake_reserved_end(void);
extern void idgen_snowflake_publish_reservation(int64 end_tick);
extern void idgen_snowflake_revoke_reservation(void);

/* Layout changes, the state file and the instance key (snowflake.c) */
extern void idgen_snowflake_block(const char *old_spec, int old_node);
extern bool idgen_snowflake_blocked(void);
extern bool idgen_snowflake_accept_pending(void);
extern void idgen_snowflake_unblock(void);
extern int64 idgen_snowflake_file_reservation(void);
extern void idgen_snowflake_set_file_reservation(int64 until_us);
extern void idgen_snowflake_set_instance_key(uint64 key);
extern uint64 idgen_snowflake_instance_key(void);

/*
 * The state file (reservation.c): read by the postmaster when shared memory
 * is created; raises the floor and blocks IDs after a layout change.
 */
extern void idgen_reservation_load(void);

/* Whether the remote worker runs: leases or a central segment server (worker.c) */
extern bool idgen_remote_worker_needed(void);

/* Wall clock in Unix microseconds (snowflake.c) */
extern int64 idgen_now_us(void);

/*
 * Next snowflake ID (snowflake.c).  With gene_bits > 0, takes an aligned
 * block of 2^gene_bits sequence values and puts gene in its low bits.
 */
extern int64 idgen_snowflake_next(int gene_bits, uint64 gene);

#endif							/* IDGEN_H */
