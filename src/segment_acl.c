/*
 * segment_acl.c
 *		Privileges of segment tags, below both their callers: the check of
 *		the hot path (segment.c) and of the SQL functions (segment_sql.c),
 *		the end-of-transaction bookkeeping that tells every backend to check
 *		again, and the switch to the table's owner that the check and the
 *		administration functions run under.
 *
 * Privileges of tags (issue 37, point 6): draw (segment_nextval,
 * segment_currval) and read (segment_currval, the tag's row of
 * segment_status), as a sequence has USAGE and SELECT.  PUBLIC's are two
 * columns of idgen.segment_alloc (draw true, read false by default, as
 * every earlier version behaved); a role's are rows of
 * idgen.segment_privilege, kept by OID with the name for pg_dump, as the
 * owner is.  The owner, its members and superusers hold both.
 *
 * A backend keeps what it found for draw (segment.c) until the privilege
 * generation moves: a statement trigger on both tables marks the
 * transaction, and its end moves the shared generation (after the commit
 * is visible, so a check made afterwards sees it; an abort moves it too,
 * for the changing backend's own checks).  A check reads with a snapshot
 * taken for it (idgen_spi_read_fresh), as PostgreSQL reads a table's
 * privileges from the catalog and not with the transaction's snapshot: an
 * old snapshot of a REPEATABLE READ transaction never keeps a revoked
 * privilege, in a serial plan or in a parallel one, leader or worker.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "segment.h"

/*
 * Changes of roles and memberships seen by this backend (syscache
 * invalidations, as acl.c's own cache of memberships, registered by
 * segment.c): a privilege found through a membership is checked again
 * after one
 */
uint64		idgen_segment_acl_local = 0;

/* See segment.h */
void
idgen_segment_become_table_owner(IdgenTableOwnerSwitch *sw)
{
	Oid			relid = idgen_table_relid("segment_alloc");
	Oid			owner;
	HeapTuple	tup;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table idgen.segment_alloc does not exist"),
				 errhint("Create extension idgen in this database.")));
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	GetUserIdAndSecContext(&sw->save_userid, &sw->save_sec_context);
	SetUserIdAndSecContext(owner, sw->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

/* See segment.h */
void
idgen_segment_become_caller(IdgenTableOwnerSwitch *sw)
{
	SetUserIdAndSecContext(sw->save_userid, sw->save_sec_context);
}

/* See segment.h */
bool		idgen_segment_acl_changed_here = false;

static void
acl_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (idgen_segment_acl_changed_here)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has changed the privileges or the owner of a segment tag")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			if (idgen_segment_acl_changed_here && idgen_segment != NULL)
				pg_atomic_fetch_add_u64(&idgen_segment->acl_generation, 1);
			idgen_segment_acl_changed_here = false;
			break;
		default:
			break;
	}
}

/* See segment.h */
void
idgen_segment_acl_register(void)
{
	static bool registered = false;

	if (!registered)
	{
		RegisterXactCallback(acl_xact_callback, NULL);
		registered = true;
	}
}

/* See segment.h */
bool
idgen_segment_has_privilege_columns(void)
{
	Oid			relid = idgen_table_relid("segment_alloc");

	return OidIsValid(relid) &&
		get_attnum(relid, "public_draw") != InvalidAttrNumber &&
		OidIsValid(idgen_table_relid("segment_privilege"));
}

/*
 * Lock the two tables for reading without queueing for the lock: a table
 * locked by an administrator (LOCK TABLE, VACUUM FULL) makes a call wait
 * up to idgen.segment_wait_timeout, as a call that needs the worker waits
 * for it, and then fail, rather than wait behind it for good or make
 * later lockers queue behind this call
 */
static void
lock_privilege_tables(const char *tag)
{
	Oid			rels[2] = {idgen_table_relid("segment_alloc"),
		idgen_table_relid("segment_privilege")};
	TimestampTz start = GetCurrentTimestamp();

	for (int i = 0; i < 2; i++)
	{
		while (!ConditionalLockRelationOid(rels[i], AccessShareLock))
		{
			if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(),
										   idgen_segment_wait_timeout_ms))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("could not draw an ID for segment tag \"%s\": its privileges could not be read within %d ms",
								tag, idgen_segment_wait_timeout_ms),
						 errdetail("Table %s is locked by another transaction.",
								   i == 0 ? "idgen.segment_alloc" : "idgen.segment_privilege"),
						 errhint("Find the lock in pg_locks; this session reads the privileges once, and later calls need no lock.")));
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
}

/* See segment.h */
int
idgen_segment_tag_privileges(const char *tag, Oid role, bool *found)
{
	/* Run as the table's owner: every operator and function qualified */
	static const char *sql =
		"SELECT a.public_draw, a.public_read, "
		"pg_catalog.pg_has_role($2, a.owner_id, 'USAGE'), "
		"EXISTS (SELECT FROM idgen.segment_privilege p "
		"WHERE p.biz_tag OPERATOR(pg_catalog.=) a.biz_tag "
		"AND p.privilege OPERATOR(pg_catalog.=) 'draw' "
		"AND pg_catalog.pg_has_role($2, p.grantee_id, 'USAGE')), "
		"EXISTS (SELECT FROM idgen.segment_privilege p "
		"WHERE p.biz_tag OPERATOR(pg_catalog.=) a.biz_tag "
		"AND p.privilege OPERATOR(pg_catalog.=) 'read' "
		"AND pg_catalog.pg_has_role($2, p.grantee_id, 'USAGE')) "
		"FROM idgen.segment_alloc a WHERE a.biz_tag OPERATOR(pg_catalog.=) $1";
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		args[2];
	SPIPlanPtr	plan;
	IdgenTableOwnerSwitch sw;
	int			privs = 0;
	int			ret;

	*found = true;
	if (superuser_arg(role) || !idgen_segment_has_privilege_columns())
		return IDGEN_TAG_DRAW | IDGEN_TAG_READ;
	lock_privilege_tables(tag);
	idgen_segment_acl_register();
	args[0] = CStringGetTextDatum(tag);
	args[1] = ObjectIdGetDatum(role);
	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	plan = SPI_prepare(sql, 2, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the privileges of a segment tag: %s",
			 SPI_result_code_string(SPI_result));
	/* Fresh, in a parallel worker too (see the top of this file) */
	ret = idgen_spi_read_fresh(plan, args, NULL,
							   idgen_table_relid("segment_privilege"), 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read the privileges of a segment tag: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed == 0)
		*found = false;
	else
	{
		HeapTuple	t = SPI_tuptable->vals[0];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;

		for (int i = 1; i <= 5; i++)
		{
			Datum		v = SPI_getbinval(t, d, i, &isnull);

			if (isnull || !DatumGetBool(v))
				continue;
			if (i == 1 || i == 4)
				privs |= IDGEN_TAG_DRAW;
			else if (i == 2 || i == 5)
				privs |= IDGEN_TAG_READ;
			else
				privs |= IDGEN_TAG_DRAW | IDGEN_TAG_READ;
		}
	}
	SPI_finish();
	idgen_segment_become_caller(&sw);
	return privs;
}

/* See segment.h */
void
idgen_segment_acl_error(const char *tag, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for segment tag \"%s\"", tag),
			 errdetail("Role \"%s\" needs privilege %s on the tag.",
					   GetUserNameFromId(GetUserId(), false), what),
			 errhint("The tag's owner can grant it with idgen.segment_grant('%s', 'draw', '%s').",
					 tag, GetUserNameFromId(GetUserId(), false))));
}

/*
 * idgen.cluster_id(): this cluster's system identifier, which rows of tags
 * and keys record beside their roles' OIDs, so that a restore tells a row
 * of this cluster (its OID is a role here) from a row of another (its OID
 * means nothing here: the role of its name); see src/idgen.sql, "roles of
 * restored rows".  As bigint, the bits of the uint64.
 */
PG_FUNCTION_INFO_V1(idgen_cluster_id);
Datum
idgen_cluster_id(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) GetSystemIdentifier());
}
