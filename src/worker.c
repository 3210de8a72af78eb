/*
 * worker.c
 *		The "idgen worker" and "idgen remote worker" background processes:
 *		registration, the latch registry and wake-ups, the main loop.
 *
 * One idgen worker per server, connected to idgen.database.  Each round it
 * keeps the snowflake reservation ahead of use (snowflake_state.c) and
 * refills segment buffers from the local table (segment_alloc.c), then
 * sleeps on its latch until a backend wakes it or the shortest timeout
 * asked for by either part passes.  Each unit of work runs in a transaction of its own.  Errors end
 * the process; the postmaster starts it again after one second, and callers
 * wait for it meanwhile.
 *
 * Work that talks to other servers -- renewing the node id lease when
 * idgen.node_id is 'auto' (snowflake_lease.c) and allocating segments from
 * idgen.segment_server -- runs in a second process, the "idgen remote
 * worker", registered only when one of them is configured.  A remote server
 * that hangs then delays only that work, never the snowflake reservation
 * or local segments.
 *
 * Segment IDs in any other database are allocated by an "idgen segment
 * worker" connected to that database: a dynamic background worker that the
 * first backend needing a segment there starts (idgen_worker_wake_database),
 * one per database (the registry below makes sure), which exits after
 * DATABASE_IDLE_MS without work and is started again when a backend needs
 * a segment.  It is not restarted by the postmaster: the next backend that
 * needs it starts it.
 *
 * At most idgen.segment_max_workers segment workers run at once, so that
 * the background worker slots that parallel query and logical replication
 * need stay free.  A backend of another database that needs a worker while
 * that many run is queued: it bumps the demand counter and sets the
 * running workers' latches, and each of them, after its current round,
 * exits and leaves its slot to the waiting database (it has allocated what
 * its database needed; a backend there that needs more starts it again).
 * The waiting backend retries while it waits for its segment
 * (segment.c), so the databases take turns.
 *
 * Connecting to a database that does not exist ends the process (FATAL),
 * so before it connects the worker has an "idgen database check" look for
 * idgen.database: a dynamic background worker connected to no database,
 * only to the shared catalogs, that logs (WARNING) that the database is
 * missing, again once a minute while it is, looks for it every second and
 * exits once it exists; the
 * worker waits for it, then connects.  A missing database is thus one
 * WARNING a minute in the log, no FATAL and no exit of the worker.  Only when no
 * background worker slot is free for the check does the worker connect
 * unchecked: then a missing database is one FATAL, and the next start
 * waits connected to no database and exits once it exists (one FATAL and
 * one WARNING).
 *
 * The steps are the components' (worker.h); this file includes none of
 * their headers.  Shared memory: "idgen worker" in idgen.h.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "clock.h"
#include "idgen.h"
#include "worker.h"

/* How long a segment worker may take to start before it is started again */
#define DATABASE_START_MS 10000

/* How long a segment worker stays without work */
#define DATABASE_IDLE_MS 10000

/* The segment worker of one database */
typedef struct DatabaseWorker
{
	Oid			dbid;			/* InvalidOid: a free entry; mutex */
	int64		started_ms;		/* monotonic ms it was registered; mutex */
	pg_atomic_uint32 procno;	/* its pgprocno once running; the worker,
								 * under mutex */
	pid_t		gone_pid;		/* a worker that exited from this entry and
								 * may still hold its background worker slot
								 * (until the postmaster reaps it), or 0;
								 * mutex */
	int64		gone_ms;		/* monotonic ms it exited; mutex */
} DatabaseWorker;

/* The latch registry: each worker's pgprocno, or INVALID_PROC_NUMBER */
typedef struct WorkerShared
{
	pg_atomic_uint32 procno[2]; /* [0] idgen worker, [1] remote worker;
								 * each written by that worker */
	pg_atomic_uint32 problem;	/* IdgenWorkerProblem; see idgen.h */
	pg_atomic_uint64 demand;	/* bumped by each backend queued for a
								 * segment worker; read by the workers */
	slock_t		mutex;			/* protects the entries of db[] */
	int			ndb;			/* length of db[] */
	DatabaseWorker db[FLEXIBLE_ARRAY_MEMBER];
} WorkerShared;

static WorkerShared *ws = NULL;

/* Shared memory needed */
Size
idgen_worker_shmem_size(void)
{
	return MAXALIGN(add_size(offsetof(WorkerShared, db),
							 mul_size(max_worker_processes,
									  sizeof(DatabaseWorker))));
}

/* Create or attach the registry; caller holds AddinShmemInitLock */
void
idgen_worker_shmem_init(void)
{
	bool		found;

	ws = ShmemInitStruct("idgen worker", idgen_worker_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u32(&ws->procno[0], INVALID_PROC_NUMBER);
		pg_atomic_init_u32(&ws->procno[1], INVALID_PROC_NUMBER);
		pg_atomic_init_u32(&ws->problem, IDGEN_WORKER_OK);
		pg_atomic_init_u64(&ws->demand, 0);
		SpinLockInit(&ws->mutex);
		ws->ndb = max_worker_processes;
		for (int i = 0; i < ws->ndb; i++)
		{
			ws->db[i].dbid = InvalidOid;
			ws->db[i].started_ms = 0;
			ws->db[i].gone_pid = 0;
			ws->db[i].gone_ms = 0;
			pg_atomic_init_u32(&ws->db[i].procno, INVALID_PROC_NUMBER);
		}
	}
}

/* Set the latch of worker i, if it runs */
static void
wake(int i)
{
	uint32		procno = pg_atomic_read_u32(&ws->procno[i]);

	if (procno != INVALID_PROC_NUMBER)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
}

/* Wake the idgen worker, if it runs */
void
idgen_worker_wake(void)
{
	wake(0);
}

/* See worker.h */
bool
idgen_worker_waits_for_sync_rep(Oid dbid)
{
	uint32		procno = INVALID_PROC_NUMBER;

	if (!OidIsValid(dbid))
		procno = pg_atomic_read_u32(&ws->procno[0]);
	else
	{
		SpinLockAcquire(&ws->mutex);
		for (int i = 0; i < ws->ndb; i++)
		{
			if (ws->db[i].dbid == dbid)
			{
				procno = pg_atomic_read_u32(&ws->db[i].procno);
				break;
			}
		}
		SpinLockRelease(&ws->mutex);
	}
	if (procno == INVALID_PROC_NUMBER)
		return false;

	/*
	 * Read without a lock, as pg_stat_activity reads it: a 32-bit value
	 * written whole; a stale answer costs one more round of waiting or one
	 * less
	 */
	return GetPGProcByNumber(procno)->wait_event_info == WAIT_EVENT_SYNC_REP;
}

/* Wake both workers, if they run */
void
idgen_worker_wake_all(void)
{
	wake(0);
	wake(1);
}

/*
 * Can entry w be given to another database?  Free, or registered long ago
 * by a backend and never taken by its worker (its database was dropped, or
 * it was idgen.database).  Caller holds the mutex.
 */
static bool
entry_reusable(DatabaseWorker *w, int64 now)
{
	if (w->dbid == InvalidOid)
		return w->gone_pid == 0 || now - w->gone_ms >= DATABASE_START_MS;
	return pg_atomic_read_u32(&w->procno) == INVALID_PROC_NUMBER &&
		now - w->started_ms >= DATABASE_START_MS;
}

/*
 * Free the entries of segment workers that have exited and been reaped by
 * the postmaster, which frees their background worker slot as it reaps
 * them: until then an exited worker still counts against
 * idgen.segment_max_workers, so that the segment workers never hold more
 * slots than that.  kill() outside the spinlock; a stale read only delays
 * the entry to the next call.
 */
static void
forget_gone_workers(void)
{
	for (int i = 0; i < ws->ndb; i++)
	{
		DatabaseWorker *w = &ws->db[i];
		pid_t		pid = w->gone_pid;

		if (pid != 0 && kill(pid, 0) != 0 && errno == ESRCH)
		{
			SpinLockAcquire(&ws->mutex);
			if (w->gone_pid == pid)
				w->gone_pid = 0;
			SpinLockRelease(&ws->mutex);
		}
	}
}

/*
 * How many segment workers run or are starting, at most
 * idgen.segment_max_workers.  Caller holds the mutex.
 */
static int
database_workers_active(int64 now)
{
	int			n = 0;

	for (int i = 0; i < ws->ndb; i++)
		if (!entry_reusable(&ws->db[i], now))
			n++;
	return n;
}

/* Register the segment worker of database dbid; false if no slot is free */
static bool
register_database_worker(Oid dbid)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "idgen");
	strcpy(worker.bgw_function_name, "idgen_worker_database_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "idgen segment worker of database %u",
			 dbid);
	strcpy(worker.bgw_type, "idgen segment worker");
	worker.bgw_main_arg = ObjectIdGetDatum(dbid);
	worker.bgw_notify_pid = 0;
	return RegisterDynamicBackgroundWorker(&worker, &handle);
}

/*
 * See worker.h.  Sends SIGTERM (the worker exits at once, between
 * allocations, whose transactions are atomic) and waits until its entry is
 * free; an entry registered but never taken within DATABASE_START_MS counts
 * as gone.  Gives up after DATABASE_START_MS: DROP DATABASE then reports the
 * session it finds, as without this.
 */
void
idgen_worker_stop_database(Oid dbid)
{
	int64		deadline = idgen_clock_monotonic_ms() + DATABASE_START_MS;

	for (;;)
	{
		int64		now = idgen_clock_monotonic_ms();
		pid_t		pid = 0;
		bool		found = false;

		SpinLockAcquire(&ws->mutex);
		for (int i = 0; i < ws->ndb; i++)
		{
			DatabaseWorker *w = &ws->db[i];

			if (w->dbid == dbid && !entry_reusable(w, now))
			{
				uint32		procno = pg_atomic_read_u32(&w->procno);

				found = true;
				if (procno != INVALID_PROC_NUMBER)
					pid = GetPGProcByNumber(procno)->pid;
				break;
			}
		}
		SpinLockRelease(&ws->mutex);
		if (!found || now >= deadline)
			return;
		if (pid != 0)
			(void) kill(pid, SIGTERM);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, IDGEN_WAIT_EVENT);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* See worker.h */
IdgenWakeResult
idgen_worker_wake_database(Oid dbid)
{
	int64		now = idgen_clock_monotonic_ms();
	DatabaseWorker *w = NULL;
	DatabaseWorker *free_entry = NULL;
	uint32		procno = INVALID_PROC_NUMBER;
	uint32		running[64];
	int			nrunning = 0;
	bool		start = false;

	forget_gone_workers();
	SpinLockAcquire(&ws->mutex);
	for (int i = 0; i < ws->ndb; i++)
	{
		if (ws->db[i].dbid == dbid)
		{
			w = &ws->db[i];
			break;
		}
		if (free_entry == NULL && entry_reusable(&ws->db[i], now))
			free_entry = &ws->db[i];
	}
	if (w == NULL && free_entry != NULL &&
		database_workers_active(now) < idgen_segment_max_workers)
	{
		w = free_entry;
		w->dbid = dbid;
		w->started_ms = now;
		w->gone_pid = 0;
		start = true;
	}
	else if (w == NULL)
	{
		/* At the cap: ask the running workers to make room */
		for (int i = 0; i < ws->ndb && nrunning < (int) lengthof(running); i++)
		{
			uint32		p = pg_atomic_read_u32(&ws->db[i].procno);

			if (ws->db[i].dbid != InvalidOid && p != INVALID_PROC_NUMBER)
				running[nrunning++] = p;
		}
	}
	else
	{
		procno = pg_atomic_read_u32(&w->procno);
		if (procno == INVALID_PROC_NUMBER &&
			now - w->started_ms >= DATABASE_START_MS)
		{
			/* Registered long ago and never came up: start it again */
			w->started_ms = now;
			start = true;
		}
	}
	SpinLockRelease(&ws->mutex);

	if (w == NULL)
	{
		pg_atomic_fetch_add_u64(&ws->demand, 1);
		for (int i = 0; i < nrunning; i++)
			SetLatch(&GetPGProcByNumber(running[i])->procLatch);
		return IDGEN_WAKE_QUEUED;
	}
	if (procno != INVALID_PROC_NUMBER)
		SetLatch(&GetPGProcByNumber(procno)->procLatch);
	if (start && !register_database_worker(dbid))
	{
		/* No free slot: give the entry up, so the next call tries again */
		SpinLockAcquire(&ws->mutex);
		if (w->dbid == dbid && pg_atomic_read_u32(&w->procno) == INVALID_PROC_NUMBER)
		{
			w->dbid = InvalidOid;
			w->gone_pid = 0;
		}
		SpinLockRelease(&ws->mutex);
		return IDGEN_WAKE_NO_SLOT;
	}
	return IDGEN_WAKE_OK;
}

/* Is the idgen worker running? */
bool
idgen_worker_running(void)
{
	return pg_atomic_read_u32(&ws->procno[0]) != INVALID_PROC_NUMBER;
}

/* See worker.h */
IdgenWorkerProblem
idgen_worker_problem(void)
{
	return (IdgenWorkerProblem) pg_atomic_read_u32(&ws->problem);
}

/* The WARNING that idgen.database does not exist */
static void
warn_no_database(void)
{
	ereport(WARNING,
			(errcode(ERRCODE_UNDEFINED_DATABASE),
			 errmsg("database \"%s\" named by idgen.database does not exist",
					idgen_database),
			 errdetail("The idgen worker keeps the snowflake reservation there: no snowflake ID is issued until the database exists and has extension idgen. The worker looks for it every second, and repeats this warning once a minute while it is missing."),
			 errhint("Create it (CREATE DATABASE %s) and run CREATE EXTENSION idgen in it, or set idgen.database to the database where extension idgen is installed and restart the server.",
					 quote_identifier(idgen_database))));
}

/* See worker.h */
void
idgen_worker_note_problem(IdgenWorkerProblem problem)
{
	if (pg_atomic_exchange_u32(&ws->problem, (uint32) problem) == (uint32) problem)
		return;
	if (problem == IDGEN_WORKER_NO_DATABASE)
		warn_no_database();
	else if (problem == IDGEN_WORKER_NO_EXTENSION)
		ereport(LOG,
				(errmsg("extension idgen is not installed in database \"%s\" named by idgen.database",
						idgen_database),
				 errdetail("The idgen worker keeps the snowflake reservation there: no snowflake ID is issued until the extension is installed."),
				 errhint("Run CREATE EXTENSION idgen in database \"%s\".",
						 idgen_database)));
}

/*
 * Set while a worker connects to idgen.database: if the process ends then
 * (FATAL), the next start looks for the database first
 */
static bool connecting = false;

/* On exit while connecting, have the next start look for the database */
static void
connect_exit(int code, Datum arg)
{
	if (connecting && idgen_worker_problem() != IDGEN_WORKER_NO_DATABASE)
		pg_atomic_write_u32(&ws->problem, IDGEN_WORKER_CONNECT_FAILED);
}

/*
 * Does idgen.database exist?  Read with a heap scan of pg_database, as the
 * autovacuum launcher lists the databases: a process connected to no
 * database cannot open a catalog index before the relation cache's init
 * file exists ("cannot read pg_class without having selected a database").
 */
static bool
database_exists(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (!found && HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
		found = strcmp(NameStr(((Form_pg_database) GETSTRUCT(tup))->datname),
					   idgen_database) == 0;
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return found;
}

/*
 * The last start could not connect to idgen.database: connected to no
 * database, wait until it exists (logging once that it does not), then
 * exit so that the postmaster starts the worker again, connected.  When it
 * exists already (the connection failed for another reason) exit at once:
 * the restart interval spaces the attempts.
 */
static void
wait_for_database(int exit_code, bool repeat)
{
	int64		warned_ms = idgen_clock_monotonic_ms();

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_activity(STATE_RUNNING, "idgen: waiting for idgen.database");
	for (;;)
	{
		int64		now_ms;

		CHECK_FOR_INTERRUPTS();
		if (database_exists())
		{
			if (idgen_worker_problem() == IDGEN_WORKER_NO_DATABASE)
				ereport(LOG,
						(errmsg("database \"%s\" named by idgen.database exists now",
								idgen_database)));
			idgen_worker_note_problem(IDGEN_WORKER_OK);
			proc_exit(exit_code);
		}
		now_ms = idgen_clock_monotonic_ms();
		if (repeat && idgen_worker_problem() == IDGEN_WORKER_NO_DATABASE &&
			now_ms - warned_ms >= 60000)
		{
			warn_no_database();	/* again, once a minute */
			warned_ms = now_ms;
		}
		else if (idgen_worker_problem() != IDGEN_WORKER_NO_DATABASE)
			warned_ms = now_ms;
		idgen_worker_note_problem(IDGEN_WORKER_NO_DATABASE);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000, idgen_wait_event(IDGEN_WAIT_RESERVATION));
		ResetLatch(MyLatch);
	}
}

/*
 * Entry point of the idgen database check: wait until idgen.database
 * exists, then exit with 0 (the postmaster forgets the worker).  main_arg
 * is true for the remote worker's, which leaves the repeated WARNING to
 * the idgen worker's.
 */
void
idgen_worker_check_database_main(Datum main_arg)
{
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	wait_for_database(0, !DatumGetBool(main_arg));	/* does not return */
}

/*
 * Wait until idgen.database exists, looked for by an idgen database check;
 * false when no background worker slot is free for it
 */
static bool
check_database(bool remote)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "idgen");
	strcpy(worker.bgw_function_name, "idgen_worker_check_database_main");
	strcpy(worker.bgw_name, "idgen database check");
	strcpy(worker.bgw_type, "idgen database check");
	worker.bgw_main_arg = BoolGetDatum(remote);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		return false;
	if (WaitForBackgroundWorkerShutdown(handle) == BGWH_POSTMASTER_DIED)
		proc_exit(1);
	return true;
}

/* Register a background worker: the idgen worker, or the remote one */
static void
register_worker(bool remote)
{
	BackgroundWorker worker;
	const char *name = remote ? "idgen remote worker" : "idgen worker";

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	strcpy(worker.bgw_library_name, "idgen");
	strcpy(worker.bgw_function_name, "idgen_worker_main");
	strcpy(worker.bgw_name, name);
	strcpy(worker.bgw_type, name);
	worker.bgw_main_arg = BoolGetDatum(remote);
	RegisterBackgroundWorker(&worker);
}

/* Register the workers (postmaster, _PG_init) */
void
idgen_worker_register(bool with_remote)
{
	/*
	 * No worker while pg_upgrade runs the server (binary upgrade): it must
	 * not write tables whose files pg_upgrade is about to carry over.
	 */
	if (IsBinaryUpgrade)
		return;
	register_worker(false);
	if (with_remote)
		register_worker(true);
}

/* On exit, stop advertising our latch */
static void
worker_exit(int code, Datum arg)
{
	pg_atomic_write_u32(&ws->procno[DatumGetBool(arg) ? 1 : 0],
						INVALID_PROC_NUMBER);
}

/* On a segment worker's exit, free its entry */
static void
database_worker_exit(int code, Datum arg)
{
	DatabaseWorker *w = (DatabaseWorker *) DatumGetPointer(arg);

	SpinLockAcquire(&ws->mutex);
	pg_atomic_write_u32(&w->procno, INVALID_PROC_NUMBER);
	w->dbid = InvalidOid;
	w->gone_pid = MyProcPid;
	w->gone_ms = idgen_clock_monotonic_ms();
	SpinLockRelease(&ws->mutex);
}

/* Settings every worker runs with */
static void
set_worker_options(void)
{
	/* Every allocation is durable before any ID from it is handed out */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET,
					PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);

	/*
	 * The worker takes the locks on its tables conditionally and never
	 * waits for them; this bounds any other lock wait (an index being
	 * rebuilt, say): the round fails, and the worker starts again.
	 */
	SetConfigOption("lock_timeout", "5000", PGC_SUSET, PGC_S_OVERRIDE);
}

/*
 * When the next reservation round is due (monotonic ms), as its last round
 * asked; 0: at once.  The worker's latch is also set for segment refills,
 * and a round is a transaction: it runs only when due or when a snowflake
 * call needs it (reservation_wanted).
 */
static int64 reservation_due_ms = 0;

/* Is a reservation round due, or does a snowflake call need one? */
static bool
reservation_wanted(void)
{
	return idgen_clock_monotonic_ms() >= reservation_due_ms ||
		idgen_snowflake_state_wanted();
}

/* Keep the snowflake reservation ahead, in one transaction */
static void
reservation_round(long *sleep_ms)
{
	long		own = *sleep_ms;

	if (!reservation_wanted())
	{
		*sleep_ms = Min(*sleep_ms,
						Max(reservation_due_ms - idgen_clock_monotonic_ms(), 1));
		return;
	}
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "idgen: snowflake reservation");

	idgen_snowflake_state_step(&own);
	idgen_citus_step(&own);

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	idgen_snowflake_state_publish();
	pgstat_report_activity(STATE_IDLE, NULL);
	reservation_due_ms = idgen_clock_monotonic_ms() + own;
	*sleep_ms = Min(*sleep_ms, own);
}

/*
 * With fsync = off the state file's fsync and the reservation row's commit
 * reach the disk whenever the operating system pleases: say so at start
 * (and on a reload that turned fsync off), once per change
 */
static void
warn_if_not_durable(void)
{
	static bool warned = false;

	if (!enableFsync && !warned)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("idgen's snowflake high-water mark is not durable because fsync is off"),
				 errdetail("The idgen worker writes the reservation to file \"idgen.state\" and table idgen.snowflake_reservation without forcing them to disk, so after an operating system crash or power loss a restarted server may issue IDs it issued before."),
				 errhint("Set fsync to on for IDs that stay unique across crashes of the machine.")));
	warned = !enableFsync;
}

/*
 * The wait event of a worker's sleep between rounds: IdgenStandbyFlush while
 * a segment allocation waits for the standbys, else IdgenReservation
 */
static uint32
loop_wait_event(void)
{
	return idgen_wait_event(idgen_segment_alloc_waiting() ?
							IDGEN_WAIT_STANDBY : IDGEN_WAIT_RESERVATION);
}

/* Entry point of both workers: main_arg is true for the remote worker */
void
idgen_worker_main(Datum main_arg)
{
	bool		remote = DatumGetBool(main_arg);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/*
	 * Connect only to a database that exists; after a failed connection
	 * (no slot was free for the check) wait connected to no database
	 */
	if (idgen_worker_problem() == IDGEN_WORKER_CONNECT_FAILED ||
		!check_database(remote))
	{
		switch (idgen_worker_problem())
		{
			case IDGEN_WORKER_CONNECT_FAILED:
			case IDGEN_WORKER_NO_DATABASE:
				wait_for_database(1, !remote);	/* does not return */
				break;
			default:
				break;
		}
	}
	before_shmem_exit(connect_exit, (Datum) 0);
	connecting = true;
	BackgroundWorkerInitializeConnection(idgen_database, NULL, 0);
	connecting = false;
	set_worker_options();

	before_shmem_exit(worker_exit, BoolGetDatum(remote));
	pg_atomic_write_u32(&ws->procno[remote ? 1 : 0],
						(uint32) GetNumberFromPGProc(MyProc));
	if (!remote)
		warn_if_not_durable();

	for (;;)
	{
		long		sleep_ms = 1000;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			reservation_due_ms = 0;
			if (!remote)
				warn_if_not_durable();
		}

		if (remote)
			idgen_snowflake_lease_step(&sleep_ms);
		else
			reservation_round(&sleep_ms);
		(void) idgen_segment_alloc_step(&sleep_ms, remote ?
										IDGEN_WORKER_REMOTE :
										IDGEN_WORKER_MAIN);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, loop_wait_event());
		ResetLatch(MyLatch);
	}
}

/* Entry point of the segment worker of one database */
void
idgen_worker_database_main(Datum main_arg)
{
	Oid			dbid = DatumGetObjectId(main_arg);
	DatabaseWorker *w = NULL;
	Oid			main_dbid;
	int64		idle_since;
	uint64		demand;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	set_worker_options();

	/* idgen.database is the idgen worker's (a stale request) */
	StartTransactionCommand();
	main_dbid = get_database_oid(idgen_database, true);
	CommitTransactionCommand();
	if (main_dbid == MyDatabaseId)
		proc_exit(0);

	/* Take this database's entry, unless another worker has it */
	forget_gone_workers();
	SpinLockAcquire(&ws->mutex);
	for (int i = 0; i < ws->ndb; i++)
	{
		if (ws->db[i].dbid == dbid)
		{
			w = &ws->db[i];
			break;
		}
	}
	if (w == NULL &&
		database_workers_active(idgen_clock_monotonic_ms()) < idgen_segment_max_workers)
	{
		int64		now = idgen_clock_monotonic_ms();

		for (int i = 0; i < ws->ndb; i++)
		{
			if (entry_reusable(&ws->db[i], now))
			{
				w = &ws->db[i];
				w->dbid = dbid;
				w->started_ms = now;
				w->gone_pid = 0;
				break;
			}
		}
	}
	if (w == NULL || pg_atomic_read_u32(&w->procno) != INVALID_PROC_NUMBER)
	{
		SpinLockRelease(&ws->mutex);
		proc_exit(0);
	}
	pg_atomic_write_u32(&w->procno, (uint32) GetNumberFromPGProc(MyProc));
	SpinLockRelease(&ws->mutex);
	before_shmem_exit(database_worker_exit, PointerGetDatum(w));

	idle_since = idgen_clock_monotonic_ms();
	demand = pg_atomic_read_u64(&ws->demand);
	for (;;)
	{
		long		sleep_ms = 1000;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		if (idgen_segment_alloc_step(&sleep_ms, IDGEN_WORKER_DATABASE))
			idle_since = idgen_clock_monotonic_ms();
		else if (idgen_clock_monotonic_ms() - idle_since >= DATABASE_IDLE_MS)
			proc_exit(0);

		/*
		 * Another database waits for a slot: leave it ours after a round,
		 * once no allocation waits for the standbys
		 */
		if (pg_atomic_read_u64(&ws->demand) != demand &&
			!idgen_segment_alloc_waiting())
			proc_exit(0);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, loop_wait_event());
		ResetLatch(MyLatch);
	}
}
