/*
 * worker.c
 *		The "idgen worker" background process.
 *
 * One per server, connected to idgen.database.  Each round it keeps the
 * snowflake reservation ahead of use (reservation.c) and refills segment
 * buffers from the local table (segment_worker.c), then sleeps on its latch
 * until a backend wakes it or the shortest timeout asked for by either part
 * passes.  Each unit of work runs in a transaction of its own.  Errors end
 * the process; the postmaster starts it again after one second, and callers
 * wait for it meanwhile.
 *
 * Work that talks to other servers -- renewing the node id lease when
 * idgen.node_id is 'auto' (lease.c) and allocating segments from
 * idgen.segment_server -- runs in a second process, the "idgen remote
 * worker", registered only when one of them is configured.  A remote server
 * that hangs then delays only that work, never the snowflake reservation
 * or local segments.
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
#include "segment_remote.h"

PGDLLEXPORT void idgen_worker_main(Datum main_arg);

/* On exit, stop advertising our latch */
static void
worker_exit(int code, Datum arg)
{
	idgen_snowflake_set_worker(INVALID_PROC_NUMBER, DatumGetBool(arg));
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

/* Does this server need the remote worker? */
bool
idgen_remote_worker_needed(void)
{
	return idgen_node_id == IDGEN_NODE_AUTO || idgen_segment_remote_enabled();
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
	idgen_snowflake_set_worker(GetNumberFromPGProc(MyProc), remote);

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
			idgen_lease_worker_step(&sleep_ms);
		else
			reservation_round(&sleep_ms);
		if (remote == idgen_segment_remote_enabled())
			idgen_segment_worker_step(&sleep_ms);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, idgen_wait_event(IDGEN_WAIT_RESERVATION));
		ResetLatch(MyLatch);
	}
}
