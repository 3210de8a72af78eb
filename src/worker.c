/*
 * worker.c
 *		The "idgen worker" background process.
 *
 * One per server, connected to idgen.database.  Each round it renews the
 * node id lease when idgen.node_id is 'auto' (lease.c), keeps the
 * snowflake reservation ahead of use (reservation.c) and refills segment
 * buffers (segment.c), then sleeps on its latch until a backend wakes it or
 * the shortest timeout asked for by either part passes.  Each unit of work
 * runs in a transaction of its own.  Errors end the process; the postmaster
 * starts it again after one second, and callers wait for it meanwhile.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

#include "idgen.h"
#include "lease.h"

PGDLLEXPORT void idgen_worker_main(Datum main_arg);

/* On exit, stop advertising our latch */
static void
worker_exit(int code, Datum arg)
{
	idgen_snowflake_set_worker(INVALID_PGPROCNO);
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

	idgen_reservation_step(sleep_ms);

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	idgen_reservation_publish();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Entry point of the worker */
void
idgen_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(idgen_database, NULL, 0);

	/* Every allocation is durable before any ID from it is handed out */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET,
					PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog", PGC_SUSET, PGC_S_OVERRIDE);

	before_shmem_exit(worker_exit, (Datum) 0);
	idgen_snowflake_set_worker(MyProc->pgprocno);

	for (;;)
	{
		long		sleep_ms = 1000;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		idgen_lease_worker_step(&sleep_ms);
		reservation_round(&sleep_ms);
		idgen_segment_worker_step(&sleep_ms);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, IDGEN_WAIT_EVENT);
		ResetLatch(MyLatch);
	}
}
