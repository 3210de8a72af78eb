/*
 * adopt.c
 *		idgen.adopt_column and its snowflake primitive (issue 30, points 1
 *		and 2).
 *
 * adopt_column runs its work, the PL/pgSQL function idgen.adopt_column_body
 * (src/idgen.sql), as the table's owner under a security-restricted
 * operation, the way REFRESH MATERIALIZED VIEW, VACUUM and REINDEX run a
 * table's code (src/backend/commands/matview.c): a superuser adopting
 * another role's table never runs that role's CHECK constraints, index
 * expressions or functions with a superuser's rights.  The caller must have
 * the privileges of the table's owner (owner, member or superuser).
 *
 * The steps of adopt_column_body (idgen.adopt_target ... idgen.adopt_switch)
 * run only while adopt_column adopts their table: each first calls
 * idgen.adopt_step, which refuses otherwise.  adopt_snowflake_advance moves
 * the snowflake generator above the table's largest value only then, once,
 * before the first step that alters anything (adopt_step with rewrite),
 * within idgen.max_lead of the clock (idgen_snowflake_advance refuses more),
 * and never while snowflake IDs are refused (a restored copy, a changed
 * layout), so it cannot lift a refusal that only a superuser's deliberate
 * call may lift.  The table's code, which runs in the rewrite, cannot call
 * it: it is closed by then.
 *
 * State: adopting and advance_open, backend-local, set by adopt_column for
 * the length of its call and cleared on the way out, error or not.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "parser/parse_func.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "idgen.h"
#include "snowflake.h"

/* The table adopt_column is adopting in this backend, or InvalidOid */
static Oid	adopting = InvalidOid;

/* adopt_snowflake_advance may still be called once for it */
static bool advance_open = false;

/*
 * The advisory lock that one adoption of a table holds until its
 * transaction ends (field4 3: neither of pg_advisory_lock's key forms)
 */
#define ADOPT_LOCK_KEY 0x49444741	/* "IDGA" */
#define ADOPT_LOCK_KIND 3

/*
 * Only one adopt_column of a table at a time: a second one, in another
 * transaction, fails at once with 55P03 naming the table, rather than
 * waiting for the first and then adopting from what it read before (the
 * first dropped the sequences it would lock)
 */
static void
adopt_lock_table(Oid relid)
{
	LOCKTAG		tag;
	char	   *relname;
	char	   *nspname;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, relid, ADOPT_LOCK_KEY,
						 ADOPT_LOCK_KIND);
	if (LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
		return;
	relname = get_rel_name(relid);
	nspname = get_namespace_name(get_rel_namespace(relid));
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not adopt table %s: another transaction is adopting it",
					relname && nspname ?
					quote_qualified_identifier(nspname, relname) : "?"),
			 errdetail("One adopt_column of a table runs at a time; the other fails at once."),
			 errhint("When that transaction has ended, look at the column: if it committed, the column is adopted already.")));
}

/*
 * The owner of table relid; an error unless the current user has its
 * privileges (is it, a member of it, or a superuser)
 */
static Oid
adopt_check_owner(Oid relid)
{
	HeapTuple	tup;
	Oid			owner;
	char	   *relname;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);

	if (!has_privs_of_role(GetUserId(), owner))
	{
		relname = get_rel_name(relid);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s", relname ? relname : "?"),
				 errhint("Run it as the table's owner, role \"%s\", or as a member of that role.",
						 GetUserNameFromId(owner, false))));
	}
	return owner;
}

PG_FUNCTION_INFO_V1(adopt_column);

/*
 * SQL: idgen.adopt_column(tbl, col, generator): checks the caller, then runs
 * idgen.adopt_column_body(tbl, col, generator) as the table's owner
 */
Datum
adopt_column(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Oid			owner;
	Oid			body;
	Oid			argtypes[3] = {REGCLASSOID, NAMEOID, TEXTOID};
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo_body, 3);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table, column and generator of adopt_column cannot be null")));
	relid = PG_GETARG_OID(0);
	owner = adopt_check_owner(relid);
	adopt_lock_table(relid);

	body = LookupFuncName(list_make2(makeString("idgen"),
									 makeString("adopt_column_body")),
						  3, argtypes, false);
	fmgr_info(body, &flinfo);
	InitFunctionCallInfoData(*fcinfo_body, &flinfo, 3, InvalidOid, NULL, NULL);
	fcinfo_body->args[0].value = PG_GETARG_DATUM(0);
	fcinfo_body->args[0].isnull = false;
	fcinfo_body->args[1].value = PG_GETARG_DATUM(1);
	fcinfo_body->args[1].isnull = false;
	fcinfo_body->args[2].value = PG_GETARG_DATUM(2);
	fcinfo_body->args[2].isnull = false;

	if (OidIsValid(adopting))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot call adopt_column while it adopts a column")));

	/*
	 * As the table's owner, under a security-restricted operation, with GUC
	 * changes local to it (matview.c).  An error restores the user and the
	 * GUCs through (sub)transaction abort.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();

	adopting = relid;
	advance_open = true;
	PG_TRY();
	{
		(void) FunctionCallInvoke(fcinfo_body);
	}
	PG_FINALLY();
	{
		adopting = InvalidOid;
		advance_open = false;
	}
	PG_END_TRY();

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	PG_RETURN_VOID();
}

/*
 * Error unless adopt_column is adopting relid in this backend; InvalidOid
 * (a null argument) is always refused
 */
static void
adopt_require_running(Oid relid, const char *what)
{
	if (!OidIsValid(adopting) || adopting != relid)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s can only be called by idgen.adopt_column", what),
				 errdetail("It is a step of adopting a column, safe only in its place among the others."),
				 errhint("Call SELECT idgen.adopt_column('table', 'column', 'snowflake'), or 'segment:<tag>'.")));
}

PG_FUNCTION_INFO_V1(adopt_step);

/*
 * SQL: idgen.adopt_step(tbl, rewrite): refuses unless adopt_column is
 * adopting tbl; with rewrite, the steps that alter the table (and run its
 * code) begin, and adopt_snowflake_advance is closed
 */
Datum
adopt_step(PG_FUNCTION_ARGS)
{
	/* Not STRICT: a null argument is no call of adopt_column's, refused */
	adopt_require_running(PG_ARGISNULL(0) || PG_ARGISNULL(1) ?
						  InvalidOid : PG_GETARG_OID(0),
						  "this step of adopt_column");
	if (PG_GETARG_BOOL(1))
		advance_open = false;
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(adopt_snowflake_advance);

/*
 * SQL: idgen.adopt_snowflake_advance(tbl, min_id): while adopt_column adopts
 * tbl, once, before anything is altered (min_id is then the largest value
 * adopt_floor read), every later snowflake ID of this server becomes larger
 * than min_id, if that is within idgen.max_lead of the clock and snowflake
 * IDs are not refused
 */
Datum
adopt_snowflake_advance(PG_FUNCTION_ARGS)
{
	Oid			relid;
	int64		min_id;
	uint32		why;

	idgen_require_loaded();
	/* Not STRICT: a null argument is no call of adopt_column's, refused */
	adopt_require_running(PG_ARGISNULL(0) || PG_ARGISNULL(1) ?
						  InvalidOid : PG_GETARG_OID(0),
						  "adopt_snowflake_advance");
	relid = PG_GETARG_OID(0);
	min_id = PG_GETARG_INT64(1);
	if (!advance_open)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("adopt_snowflake_advance can only be called once by idgen.adopt_column, before it alters the table")));
	advance_open = false;
	(void) adopt_check_owner(relid);
	if (min_id < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot advance the snowflake generator past ID " INT64_FORMAT, min_id),
				 errdetail("Every snowflake ID is above it already."),
				 errhint("Pass the largest ID of the table's column.")));

	/*
	 * The refusal of a restored copy or a changed layout is set by the
	 * postmaster at start and lifted only by a superuser's deliberate call
	 * (snowflake_resume, snowflake_accept_layout): never here.  The
	 * message is the refusal's own; idgen_snowflake_advance without resume
	 * refuses too, but with the superuser's hint.
	 */
	why = idgen_snowflake_blocked_why();
	if (why & IDGEN_BLOCK_TIMELINE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake IDs are refused because this server was promoted onto a timeline whose low idgen.node_timeline_bits bits an earlier timeline had"),
				 errdetail("A column's largest value does not show what the server of the earlier timeline issued, so adopting a column never lifts the refusal."),
				 errhint("Have a superuser lift the refusal first, as the error of SELECT idgen.snowflake_nextval() says, then call adopt_column again.")));
	if (why & IDGEN_BLOCK_RESTORED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake IDs are refused because this server was started from a backup or after archive recovery"),
				 errdetail("A column's largest value does not show what the original server issued, so adopting a column never lifts the refusal."),
				 errhint("Have a superuser lift the refusal first, as the error of SELECT idgen.snowflake_nextval() says, then call adopt_column again.")));
	if (why != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake IDs are refused because idgen.layout or idgen.node_id changed"),
				 errdetail("Adopting a column never accepts the change."),
				 errhint("Have a superuser deal with the refusal first, as the error of SELECT idgen.snowflake_nextval() says, then call adopt_column again.")));

	idgen_snowflake_advance(min_id, false);
	PG_RETURN_VOID();
}
