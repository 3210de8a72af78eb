/*
 * module.c
 *		Module load: _PG_init and the shared-memory hooks.
 *
 * The one file that includes every component's header: it defines each
 * component's settings, asks for and creates each component's shared memory
 * (the regions and their rules: idgen.h) and registers the workers
 * (worker.c).  Runs in the postmaster at start-up via
 * shared_preload_libraries.  Without the preload it defines only the
 * bounds a serving server enforces (a node registry, a central segment
 * server), which idgen.serving_settings reports.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "citus.h"
#include "currval.h"
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
	RequestAddinShmemSpace(idgen_currval_shmem_size());
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
	idgen_currval_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * The database a statement needs free of sessions, whose segment worker
 * (worker.c) must stop first, or InvalidOid: DROP DATABASE, ALTER DATABASE
 * ... RENAME TO and ... SET TABLESPACE by the database's owner, and CREATE
 * DATABASE ... TEMPLATE by a role that may copy it (its owner, or any role
 * with CREATEDB when it is a template).  PostgreSQL checks the privileges
 * again and refuses these statements while any session is in the
 * database, as it would without idgen; it stops autovacuum's workers
 * itself.
 */
/* Is dbid a template and may the current role create databases? */
static bool
may_copy_template(Oid dbid)
{
	HeapTuple	tup;
	bool		istemplate = false;
	bool		createdb = false;

	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dbid));
	if (HeapTupleIsValid(tup))
	{
		istemplate = ((Form_pg_database) GETSTRUCT(tup))->datistemplate;
		ReleaseSysCache(tup);
	}
	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(GetUserId()));
	if (HeapTupleIsValid(tup))
	{
		createdb = ((Form_pg_authid) GETSTRUCT(tup))->rolcreatedb;
		ReleaseSysCache(tup);
	}
	return istemplate && createdb;
}

static Oid
database_to_free(Node *stmt)
{
	const char *dbname = NULL;
	bool		copy = false;
	Oid			dbid;

	if (IsA(stmt, DropdbStmt))
		dbname = ((DropdbStmt *) stmt)->dbname;
	else if (IsA(stmt, RenameStmt) &&
			 ((RenameStmt *) stmt)->renameType == OBJECT_DATABASE)
		dbname = ((RenameStmt *) stmt)->subname;
	else if (IsA(stmt, AlterDatabaseStmt))
	{
		ListCell   *lc;

		foreach(lc, ((AlterDatabaseStmt *) stmt)->options)
		{
			if (strcmp(((DefElem *) lfirst(lc))->defname, "tablespace") == 0)
				dbname = ((AlterDatabaseStmt *) stmt)->dbname;
		}
	}
	else if (IsA(stmt, CreatedbStmt))
	{
		ListCell   *lc;

		foreach(lc, ((CreatedbStmt *) stmt)->options)
		{
			DefElem    *d = (DefElem *) lfirst(lc);

			if (strcmp(d->defname, "template") == 0 && d->arg != NULL)
				dbname = defGetString(d);
		}
		copy = true;
	}
	if (dbname == NULL)
		return InvalidOid;
	dbid = get_database_oid(dbname, true);
	if (!OidIsValid(dbid))
		return InvalidOid;
	if (idgen_database_ownercheck(dbid, GetUserId()))
		return dbid;
	if (copy && may_copy_template(dbid))
		return dbid;
	return InvalidOid;
}

/*
 * Before a statement that needs a database free of sessions, stop that
 * database's segment worker, which would otherwise count as a session in
 * it and make the statement fail.  The next segment call in the database
 * starts a new one.  Once a database is dropped, its kept tags go
 * (segment_keep.c).
 *
 * DROP ROLE, REASSIGN OWNED, DROP OWNED and a role's rename keep the
 * owners of this database's segment tags defined (segment_sql.c).
 *
 * DISCARD ALL and DISCARD SEQUENCES, once they succeeded, also forget this
 * session's snowflake_currval and segment_currval (currval.c), as they do
 * a sequence's currval.
 */
static void
idgen_process_utility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	Oid			freed = database_to_free(pstmt->utilityStmt);
	List	   *dropped_roles;

	if (OidIsValid(freed))
		idgen_worker_stop_database(freed);
	dropped_roles = idgen_segment_owner_utility(pstmt->utilityStmt, true, NIL);
	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context,
								  params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
	if (OidIsValid(freed) && IsA(pstmt->utilityStmt, DropdbStmt))
		idgen_segment_keep_forget(freed);
	idgen_segment_owner_utility(pstmt->utilityStmt, false, dropped_roles);
	if (IsA(pstmt->utilityStmt, DiscardStmt))
	{
		DiscardMode target = ((DiscardStmt *) pstmt->utilityStmt)->target;

		if (target == DISCARD_ALL || target == DISCARD_SEQUENCES)
			idgen_currval_discard();
	}
}

/*
 * idgen.serving_settings(): the bounds this server enforces as a node
 * registry and as a central segment server.  Calling it loads the library,
 * which (preloaded or not) defines both settings as reload-only, so the
 * values are the server's own: postgresql.conf or ALTER SYSTEM, never a
 * caller's session (a session value set while they were placeholders is
 * refused with a WARNING when they are defined).
 */
PG_FUNCTION_INFO_V1(serving_settings);
Datum
serving_settings(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	Interval   *guard = palloc0(sizeof(Interval));
	Interval   *lease_max = palloc0(sizeof(Interval));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	guard->time = (int64) idgen_node_guard_ms * 1000;
	lease_max->time = (int64) idgen_node_lease_max_ms * 1000;
	values[0] = IntervalPGetDatum(guard);
	values[1] = Int64GetDatum((int64) idgen_segment_max_step);
	values[2] = IntervalPGetDatum(lease_max);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* Module load */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
	{
		/*
		 * A registry or central server without the preload: its bounds,
		 * reload-only.  Defining them drops (with a WARNING) what a
		 * session gave their placeholders (SET, PGOPTIONS, ALTER ROLE or
		 * DATABASE ... SET), but such a value had also displaced the
		 * configuration file's: read the file again, as on SIGHUP.
		 */
		idgen_snowflake_lease_define_serving_gucs();
		idgen_segment_define_serving_gucs();
		if (!IsParallelWorker())
			ProcessConfigFile(PGC_SIGHUP);
		/* Tags outlive DROP EXTENSION here too (segment_keep.c) */
		idgen_segment_keep_init();
		return;
	}

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
