/*
 * worker.h
 *		The background workers: their registration, their latches, their main
 *		loops (worker.c), and the steps each component runs in them.
 *
 * worker.c knows no component: it calls only the step functions declared
 * at the bottom, which the components define.  Components include this
 * header to wake a worker and to declare their steps.
 */
#ifndef IDGEN_WORKER_H
#define IDGEN_WORKER_H

/* The three kinds of worker */
typedef enum IdgenWorkerKind
{
	IDGEN_WORKER_MAIN,			/* "idgen worker", in idgen.database */
	IDGEN_WORKER_REMOTE,		/* "idgen remote worker", in idgen.database */
	IDGEN_WORKER_DATABASE		/* "idgen segment worker", one per other
								 * database that draws segment IDs */
} IdgenWorkerKind;

/* Shared memory of the latch registry ("idgen worker", see idgen.h) */
extern Size idgen_worker_shmem_size(void);
extern void idgen_worker_shmem_init(void);

/*
 * Register the "idgen worker" and, with with_remote, the "idgen remote
 * worker" (postmaster, _PG_init).  None during a binary upgrade.
 */
extern void idgen_worker_register(bool with_remote);

/* Entry point of both workers (bgw_main_arg: true for the remote one) */
PGDLLEXPORT void idgen_worker_main(Datum main_arg);

/* Entry point of a segment worker (bgw_main_arg: its database's OID) */
PGDLLEXPORT void idgen_worker_database_main(Datum main_arg);

/* Entry point of the idgen database check (waits until idgen.database exists) */
PGDLLEXPORT void idgen_worker_check_database_main(Datum main_arg);

/* Wake the idgen worker, if it runs */
extern void idgen_worker_wake(void);

/*
 * Is the worker that allocates for database dbid (InvalidOid: the idgen
 * worker, which also keeps the snowflake reservation) waiting for
 * synchronous replication to confirm its commit?  A caller waiting for it
 * then waits on, as a commit would, instead of timing out.
 */
extern bool idgen_worker_waits_for_sync_rep(Oid dbid);

/* Wake both workers, if they run (segments may be either's work) */
extern void idgen_worker_wake_all(void);

/* What idgen_worker_wake_database did */
typedef enum IdgenWakeResult
{
	IDGEN_WAKE_OK,				/* woken or started */
	IDGEN_WAKE_QUEUED,			/* idgen.segment_max_workers run for other
								 * databases: one will make room; call again */
	IDGEN_WAKE_NO_SLOT			/* no free background worker slot */
} IdgenWakeResult;

/*
 * Wake the segment worker of database dbid (not idgen.database), starting
 * it if it does not run and fewer than idgen.segment_max_workers do.
 */
extern IdgenWakeResult idgen_worker_wake_database(Oid dbid);

/*
 * Stop the segment worker of database dbid, if it runs, and wait until it
 * has gone: called before DROP DATABASE, CREATE DATABASE ... TEMPLATE and
 * ALTER DATABASE ... RENAME TO / SET TABLESPACE (module.c), which refuse a
 * database with a session in it (PostgreSQL stops autovacuum's workers
 * itself)
 */
extern void idgen_worker_stop_database(Oid dbid);

/* Is the idgen worker running? */
extern bool idgen_worker_running(void);

/*
 * Why the idgen worker cannot keep the snowflake reservation: what a
 * caller's error names when the worker has not reserved in time
 */
typedef enum IdgenWorkerProblem
{
	IDGEN_WORKER_OK = 0,		/* none known */
	IDGEN_WORKER_CONNECT_FAILED,	/* its last start ended while connecting
									 * to idgen.database */
	IDGEN_WORKER_NO_DATABASE,	/* idgen.database does not exist */
	IDGEN_WORKER_NO_EXTENSION	/* extension idgen is not installed there */
} IdgenWorkerProblem;

extern IdgenWorkerProblem idgen_worker_problem(void);

/* Record the worker's problem; a new one is logged once */
extern void idgen_worker_note_problem(IdgenWorkerProblem problem);

/*
 * The steps, one call per round of the loop; each may lower *sleep_ms, the
 * time until the next round.
 *
 * idgen worker, inside a transaction the loop opened; then, after the
 * commit, idgen_snowflake_state_publish (snowflake_state.c):
 */
extern void idgen_snowflake_state_step(long *sleep_ms);
/* Does the generator need a round before the one it asked for is due? */
extern bool idgen_snowflake_state_wanted(void);
extern void idgen_snowflake_state_publish(void);

/* idgen worker, in the same transaction: Citus's group id (citus.c) */
extern void idgen_citus_step(long *sleep_ms);

/* Remote worker, no transaction (snowflake_lease.c) */
extern void idgen_snowflake_lease_step(long *sleep_ms);

/*
 * Every worker, no transaction (segment_alloc.c): allocates the segments of
 * the worker's database.  In idgen.database only one worker does it: the
 * remote worker with a central segment server, else the idgen worker.
 * Returns whether there was work for it: a tag of the database that
 * needed a segment (or was found unknown).
 */
extern bool idgen_segment_alloc_step(long *sleep_ms, IdgenWorkerKind kind);

/*
 * Does an allocation of this worker wait for the standbys' flush before it
 * is published (segment_alloc.c)?  The worker then sleeps with wait event
 * IdgenStandbyFlush.
 */
extern bool idgen_segment_alloc_waiting(void);

#endif							/* IDGEN_WORKER_H */
