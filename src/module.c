/*
 * module.c
 *		Module load: _PG_init and the shared-memory hooks.
 *
 * The one file that includes every component's header: it defines each
 * component's settings, asks for and creates each component's shared memory
 * (the regions and their rules: idgen.h) and registers the workers
 * (worker.c).  Runs in the postmaster at start-up via
 * shared_preload_libraries; without the preload it does nothing.
 */
#include "postgres.h"

#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/guc.h"

#include "citus.h"
#include "idgen.h"
#include "segment.h"
#include "snowflake.h"
#include "worker.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/* Reserve shared memory for every part */
static void
idgen_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(idgen_worker_shmem_size());
	RequestAddinShmemSpace(idgen_snowflake_shmem_size());
	RequestAddinShmemSpace(idgen_segment_shmem_size());
	RequestAddinShmemSpace(idgen_snowflake_lease_shmem_size());
	RequestAddinShmemSpace(idgen_segment_server_shmem_size());
	RequestAddinShmemSpace(idgen_citus_shmem_size());
	RequestNamedLWLockTranche("idgen segment", 1);
}

/* Create or attach every part's shared memory */
static void
idgen_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	idgen_worker_shmem_init();
	idgen_snowflake_shmem_init();
	idgen_segment_shmem_init();
	idgen_snowflake_lease_shmem_init();
	idgen_segment_server_shmem_init();
	idgen_citus_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * DROP DATABASE by its owner: first stop the database's segment worker
 * (worker.c), which would otherwise count as a session in it and make the
 * drop fail.  The next segment call in a database of that name starts a new
 * one.  Once dropped, the database's kept tags go (segment_keep.c).
 */
static void
idgen_process_utility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	Oid			dropped_db = InvalidOid;

	if (IsA(pstmt->utilityStmt, DropdbStmt))
	{
		DropdbStmt *stmt = (DropdbStmt *) pstmt->utilityStmt;
		Oid			dbid = get_database_oid(stmt->dbname, true);

		if (OidIsValid(dbid) && idgen_database_ownercheck(dbid, GetUserId()))
			idgen_worker_stop_database(dbid);
		dropped_db = dbid;
	}
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
	if (OidIsValid(dropped_db))
		idgen_segment_keep_forget(dropped_db);
}

/* Module load */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	idgen_define_gucs();
	idgen_segment_define_gucs();
	idgen_snowflake_lease_define_gucs();
	idgen_segment_server_define_gucs();
	idgen_citus_init();
	MarkGUCPrefixReserved("idgen");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = idgen_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = idgen_shmem_startup;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = idgen_process_utility;
	idgen_segment_keep_init();

	/* Under Citus a worker node's segments come from the coordinator */
	idgen_worker_register(idgen_node_id == IDGEN_NODE_AUTO ||
						  idgen_segment_server_enabled() ||
						  idgen_citus_preloaded);
	idgen_mark_loaded();
}
