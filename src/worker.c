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
 * The steps are the components' (worker.h); this file includes none of
 * their headers.  Shared memory: "idgen worker" in idgen.h.
 */
#include "postgres.h"

#include "access/xact.h"
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
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

#include "idgen.h"
#include "worker.h"

/* The latch registry: each worker's pgprocno, or INVALID_PROC_NUMBER */
typedef struct WorkerShared
{
	pg_atomic_uint32 procno[2]; /* [0] idgen worker, [1] remote worker;
								 * each written by that worker */
} WorkerShared;

static WorkerShared *ws = NULL;

/* Shared memory needed */
Size
idgen_worker_shmem_size(void)
{
	return MAXALIGN(sizeof(WorkerShared));
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

/* Wake both workers, if they run */
void
idgen_worker_wake_all(void)
{
	wake(0);
	wake(1);
}

/* Is the idgen worker running? */
bool
idgen_worker_running(void)
{
	return pg_atomic_read_u32(&ws->procno[0]) != INVALID_PROC_NUMBER;
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

/* Keep the snowflake reservation ahead, in one transaction */
static void
reservation_round(long *sleep_ms)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "idgen: snowflake reservation");

	idgen_snowflake_state_step(sleep_ms);
	idgen_citus_step(sleep_ms);

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	idgen_snowflake_state_publish();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Entry point of both workers: main_arg is true for the remote worker */
void
idgen_worker_main(Datum main_arg)
{
	bool		remote = DatumGetBool(main_arg);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(idgen_database, NULL, 0);

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

	before_shmem_exit(worker_exit, BoolGetDatum(remote));
	pg_atomic_write_u32(&ws->procno[remote ? 1 : 0],
						(uint32) GetNumberFromPGProc(MyProc));

	for (;;)
	{
		long		sleep_ms = 1000;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		if (remote)
			idgen_snowflake_lease_step(&sleep_ms);
		else
			reservation_round(&sleep_ms);
		idgen_segment_alloc_step(&sleep_ms, remote);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, idgen_wait_event(IDGEN_WAIT_RESERVATION));
		ResetLatch(MyLatch);
	}
}
