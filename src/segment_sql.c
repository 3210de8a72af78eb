/*
 * segment_sql.c
 *		SQL functions of segment IDs: idgen.segment_nextval,
 *		segment_currval, the
 *		segment_status view's segment_status_fn, and the administration of
 *		tags, segment_create, segment_alter and segment_drop.
 *
 * The administration functions write idgen.segment_alloc through SPI.  They
 * run as their caller (SECURITY INVOKER, with a pinned search_path), check
 * the caller against the tag's owner, then switch to the table's owner for
 * the SPI calls, as a security-restricted operation, so a tag administrator
 * needs only EXECUTE on them (revoked from PUBLIC by the install script) and
 * no privilege on the table.  A tag is owned by the role that created it
 * (column owner_id, the role's OID; column owner, its name, for pg_dump):
 * altering, dropping, exporting, importing over and handing on a tag need
 * the privileges of its owner (has_privs_of_role) or a superuser, as for a
 * sequence; a tag whose owner role does not exist is a superuser's only.
 * max_id never moves backwards through them; the table's trigger
 * idgen.segment_alloc_guard enforces the same for every writer and keeps
 * the max_id of dropped tags, so a tag created again starts above it.
 * Dropping a tag, moving its max_id forward or changing its cache removes the tag's slot from
 * shared memory (idgen_segment_forget) so its buffered IDs are not handed
 * out; that removal is not transactional, so a rolled-back drop or alter
 * only costs the buffered IDs (a gap).  Until the transaction ends its row
 * lock keeps the worker from loading the tag again (the worker skips locked
 * rows), so callers wait for it, within idgen.segment_wait_timeout.
 *
 * No shared state of its own; the slot hash is read and changed under the
 * rules in idgen.h.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "storage/lmgr.h"
#include "storage/latch.h"
#include "pgstat.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "currval.h"
#include "idgen.h"
#include "restore.h"
#include "segment.h"

/* The tag argument, checked: not null, 1 to 128 bytes */
static char *
tag_arg(FunctionCallInfo fcinfo)
{
	char	   *tag;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("segment tag cannot be null")));
	tag = text_to_cstring(PG_GETARG_TEXT_PP(0));
	idgen_segment_check_tag_length(tag, strlen(tag));
	return tag;
}

/* Error unless a step is at least 1 */
static void
check_step(int32 step)
{
	if (step < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("segment step must be at least 1"),
				 errdetail("The step given was %d.", step)));
}

/*
 * Error unless a cache is 1 to IDGEN_SEG_CACHE_MAX (the CHECK of column
 * cache says the same; this error names the argument)
 */
static void
check_cache(int32 cache)
{
	if (cache < 1 || cache > IDGEN_SEG_CACHE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("segment cache must be between 1 and %d",
						IDGEN_SEG_CACHE_MAX),
				 errdetail("The cache given was %d.", cache)));
}

/*
 * Whether idgen.segment_alloc has its cache column: not before ALTER
 * EXTENSION idgen UPDATE to 0.4.0
 */
static bool
has_cache_column(void)
{
	Oid			relid = idgen_table_relid("segment_alloc");

	return OidIsValid(relid) && get_attnum(relid, "cache") != InvalidAttrNumber;
}

/*
 * Tags are administered where segments are allocated: in idgen.database of
 * a Citus worker, whose segments come from the coordinator, refuse (an
 * explicit idgen.segment_server is the administrator's own choice; other
 * databases allocate from their own table)
 */
static void
check_tag_admin(const char *what)
{
	if ((idgen_segment_server == NULL || idgen_segment_server[0] == '\0') &&
		get_database_oid(idgen_database, true) == MyDatabaseId)
		idgen_citus_check_tag_admin(what);
}

/*
 * Whether idgen.segment_alloc has its owner column: not before ALTER
 * EXTENSION idgen UPDATE from 0.3.0, whose functions are SECURITY DEFINER
 * and know no owners
 */
static bool
has_owner_column(void)
{
	Oid			relid = idgen_table_relid("segment_alloc");

	return OidIsValid(relid) && get_attnum(relid, "owner") != InvalidAttrNumber;
}

/*
 * Error unless role caller may administer tag, whose owner is role
 * owner_id (InvalidOid or a role that no longer exists: superusers only),
 * named owner in the table: a superuser, or a role with the owner's
 * privileges (has_privs_of_role, membership that inherits), as for a
 * sequence.  The role, not the name: a new role with the name of a dropped
 * one owns nothing.
 */
static void
check_tag_owner(Oid caller, const char *tag, Oid owner_id, const char *owner)
{
	bool		exists = OidIsValid(owner_id) &&
		SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner_id));

	if (superuser_arg(caller))
		return;
	if (exists && has_privs_of_role(caller, owner_id))
		return;
	if (exists)
	{
		const char *name = GetUserNameFromId(owner_id, false);

		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of segment tag \"%s\"", tag),
				 errdetail("Segment tag \"%s\" is owned by role \"%s\".", tag, name),
				 errhint("Ask a superuser to grant you role \"%s\", or role \"%s\" to hand the tag to you with idgen.segment_set_owner().",
						 name, name)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be owner of segment tag \"%s\"", tag),
			 owner[0] == '\0' ?
			 errdetail("Segment tag \"%s\" has no owner: its role is gone.", tag) :
			 errdetail("Segment tag \"%s\" is owned by role \"%s\", which does not exist.", tag, owner),
			 errhint("A superuser can hand the tag to an existing role with idgen.segment_set_owner().")));
}

/*
 * Inside SPI, as the table's owner, the tag's row locked: record role
 * owner_id as its owner, with the role's current name for pg_dump
 */
static void
set_tag_owner(const char *tag, Oid owner_id)
{
	Oid			types[3] = {TEXTOID, NAMEOID, OIDOID};
	Datum		args[3];
	int			ret;

	args[0] = CStringGetTextDatum(tag);
	args[1] = DirectFunctionCall1(namein,
								  CStringGetDatum(GetUserNameFromId(owner_id, false)));
	args[2] = ObjectIdGetDatum(owner_id);
	ret = SPI_execute_with_args("UPDATE idgen.segment_alloc SET owner = $2, owner_id = $3 "
								"WHERE biz_tag = $1",
								3, types, args, NULL, false, 0);
	if (ret != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not update idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
}

/*
 * Inside SPI, as the table's owner: lock the row of tag and check that
 * caller may administer it.  False when the tag does not exist; otherwise
 * *max_id, and the step and description where asked for, are set.
 */
static bool
lock_owned_tag(Oid caller, const char *tag,
			   int64 *max_id, int32 *step, Datum *description, bool *desc_null)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(tag)};
	int			ret;
	bool		isnull;
	char	   *owner;
	SPITupleTable *tt;
	Oid			refresh = InvalidOid;

	ret = SPI_execute_with_args(has_owner_column() ?
								"SELECT max_id, step, description, owner::pg_catalog.text, owner_id "
								"FROM idgen.segment_alloc "
								"WHERE biz_tag = $1 FOR UPDATE" :
								"SELECT max_id, step, description, NULL::pg_catalog.text, NULL::pg_catalog.oid "
								"FROM idgen.segment_alloc "
								"WHERE biz_tag = $1 FOR UPDATE",
								1, types, args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return false;
	tt = SPI_tuptable;
	owner = SPI_getvalue(tt->vals[0], tt->tupdesc, 4);
	if (owner != NULL)
	{
		Datum		id = SPI_getbinval(tt->vals[0],
									   tt->tupdesc, 5, &isnull);
		Oid			owner_id = isnull ? InvalidOid : DatumGetObjectId(id);
		char	   *name;

		check_tag_owner(caller, tag, owner_id, owner);

		if (OidIsValid(owner_id) &&
			(name = GetUserNameFromId(owner_id, true)) != NULL &&
			strcmp(name, owner) != 0)
			refresh = owner_id;
	}
	*max_id = DatumGetInt64(SPI_getbinval(tt->vals[0],
										  tt->tupdesc, 1, &isnull));
	if (step)
		*step = DatumGetInt32(SPI_getbinval(tt->vals[0],
											tt->tupdesc, 2, &isnull));
	if (description)
	{
		Datum		d = SPI_getbinval(tt->vals[0],
									  tt->tupdesc, 3, desc_null);

		*description = *desc_null ? (Datum) 0 :
			SPI_datumTransfer(d, false, -1);
	}
	/*
	 * The name is for pg_dump: refreshed here where the role was renamed
	 * from another database (the rename hook sees only its own), after
	 * every value above is read
	 */
	if (OidIsValid(refresh))
		set_tag_owner(tag, refresh);
	return true;
}

/*
 * A tag kept when extension idgen was dropped (segment_keep.c) is created
 * again only above its floor in idgen.segment_floor; inside SPI.  The hint
 * is read by idgen.adopt_column, which creates the tag there.
 */
static void
check_kept_floor(const char *tag, int64 start)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(tag)};
	bool		isnull;
	int64		floor;

	if (!OidIsValid(idgen_table_relid("segment_floor")))
		return;
	if (SPI_execute_with_args("SELECT max(max_id) FROM idgen.segment_floor WHERE biz_tag = $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.segment_floor");
	floor = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										SPI_tuptable->tupdesc, 1, &isnull));
	if (!isnull && start - 1 < floor)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("segment tag \"%s\" cannot start at " INT64_FORMAT, tag, start),
				 errdetail("Extension idgen was dropped after IDs up to " INT64_FORMAT " of the tag had been allocated, and they may have been handed out.",
						   floor),
				 errhint("Create the tag with a start of " INT64_FORMAT " or more.",
						 floor + 1)));
}

/*
 * Inside SPI, as the table's owner: insert tag, whose first ID is start,
 * owned by role owner_name (NULL before the owner column exists), with
 * cache (the column's default when it is 1); error if it exists.  The
 * caller forgets the tag's slot afterwards.
 */
static void
create_tag_spi(const char *tag, int64 start, int32 step, Datum description,
			   bool desc_null, const char *owner_name, int32 cache)
{
	Oid			types[5] = {TEXTOID, INT8OID, INT4OID, TEXTOID, NAMEOID};
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	int			ret;

	/* Leaf's max_id is the last ID given out: start - 1 */
	args[0] = CStringGetTextDatum(tag);
	args[1] = Int64GetDatum(start - 1);
	args[2] = Int32GetDatum(step);
	args[3] = desc_null ? (Datum) 0 : description;
	if (desc_null)
		nulls[3] = 'n';
	check_kept_floor(tag, start);
	if (owner_name != NULL && cache != 1)
	{
		Oid			types6[6] = {TEXTOID, INT8OID, INT4OID, TEXTOID, NAMEOID, INT4OID};
		Datum		args6[6];
		char		nulls6[6] = {' ', ' ', ' ', ' ', ' ', ' '};

		memcpy(args6, args, sizeof(args));
		nulls6[3] = nulls[3];
		args6[4] = DirectFunctionCall1(namein, CStringGetDatum(owner_name));
		args6[5] = Int32GetDatum(cache);
		ret = SPI_execute_with_args("INSERT INTO idgen.segment_alloc "
									"(biz_tag, max_id, step, description, update_time, owner, cache) "
									"VALUES ($1, $2, $3, $4, pg_catalog.now(), $5, $6) "
									"ON CONFLICT (biz_tag) DO NOTHING",
									6, types6, args6, nulls6, false, 0);
	}
	else if (owner_name != NULL)
	{
		args[4] = DirectFunctionCall1(namein, CStringGetDatum(owner_name));
		ret = SPI_execute_with_args("INSERT INTO idgen.segment_alloc "
									"(biz_tag, max_id, step, description, update_time, owner) "
									"VALUES ($1, $2, $3, $4, pg_catalog.now(), $5) "
									"ON CONFLICT (biz_tag) DO NOTHING",
									5, types, args, nulls, false, 0);
	}
	else
		ret = SPI_execute_with_args("INSERT INTO idgen.segment_alloc "
									"(biz_tag, max_id, step, description, update_time) "
									"VALUES ($1, $2, $3, $4, pg_catalog.now()) "
									"ON CONFLICT (biz_tag) DO NOTHING",
									4, types, args, nulls, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not insert into idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("segment tag \"%s\" already exists", tag),
				 errhint("Use idgen.segment_alter() to change it.")));
}

/*
 * Inside SPI, as the table's owner, the tag's row locked by lock_owned_tag:
 * set what is not null (cache_null where the table has no cache column).
 * True when max_id moved forward or the cache changed, so the caller must
 * forget the tag's buffered IDs (and backends their cached ones).
 */
static bool
alter_tag_spi(const char *tag, int64 cur_max, bool step_null, int32 step,
			  bool desc_null, Datum description, bool max_null, int64 max_id,
			  bool cache_null, int32 cache)
{
	Oid			types[5] = {TEXTOID, INT4OID, TEXTOID, INT8OID, INT4OID};
	Datum		args[5];
	char		nulls[5] = {' ', 'n', 'n', 'n', 'n'};
	int			ret;
	bool		cache_changed = false;

	if (!max_null && max_id < cur_max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot move max_id of segment tag \"%s\" backwards", tag),
				 errdetail("max_id is " INT64_FORMAT "; the new value " INT64_FORMAT " is smaller.",
						   cur_max, max_id),
				 errhint("IDs up to max_id may have been handed out already; only a larger max_id keeps new IDs unique.")));
	args[0] = CStringGetTextDatum(tag);
	args[1] = Int32GetDatum(step);
	args[2] = description;
	args[3] = Int64GetDatum(max_id);
	args[4] = Int32GetDatum(cache);
	if (!step_null)
		nulls[1] = ' ';
	if (!desc_null)
		nulls[2] = ' ';
	if (!max_null)
		nulls[3] = ' ';
	if (!cache_null)
	{
		bool		isnull;

		nulls[4] = ' ';
		/* The row is locked: its cache is the one in force */
		ret = SPI_execute_with_args("SELECT cache FROM idgen.segment_alloc "
									"WHERE biz_tag = $1",
									1, types, args, NULL, false, 1);
		if (ret != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not read idgen.segment_alloc: %s",
				 SPI_result_code_string(ret));
		cache_changed = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc,
													1, &isnull)) != cache;
	}
	ret = SPI_execute_with_args(cache_null ?
								"UPDATE idgen.segment_alloc SET "
								"step = coalesce($2, step), "
								"description = coalesce($3, description), "
								"max_id = coalesce($4, max_id), "
								"update_time = pg_catalog.now() "
								"WHERE biz_tag = $1" :
								"UPDATE idgen.segment_alloc SET "
								"step = coalesce($2, step), "
								"description = coalesce($3, description), "
								"max_id = coalesce($4, max_id), "
								"cache = $5, "
								"update_time = pg_catalog.now() "
								"WHERE biz_tag = $1",
								cache_null ? 4 : 5, types, args, nulls, false, 0);
	if (ret != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not update idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	return (!max_null && max_id > cur_max) || cache_changed;
}

/* Inside SPI, as the table's owner, the tag's row locked: delete it */
static void
drop_tag_spi(const char *tag)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(tag)};
	int			ret;

	ret = SPI_execute_with_args("DELETE FROM idgen.segment_alloc WHERE biz_tag = $1",
								1, types, args, NULL, false, 0);
	if (ret != SPI_OK_DELETE || SPI_processed != 1)
		elog(ERROR, "could not delete from idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
}

/* The name of the calling role, the owner of a tag it creates */
static const char *
caller_owner_name(void)
{
	return has_owner_column() ? GetUserNameFromId(GetUserId(), false) : NULL;
}

PG_FUNCTION_INFO_V1(segment_privileges_changed);

/*
 * Trigger (statement) of idgen.segment_privilege and of the owner and
 * privilege columns of idgen.segment_alloc: once this transaction ends,
 * every backend checks its privileges again
 */
Datum
segment_privileges_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger functions can only be called as triggers"),
				 errdetail("Function segment_privileges_changed is the trigger of idgen.segment_privilege and idgen.segment_alloc.")));
	idgen_segment_acl_register();
	idgen_segment_acl_changed_here = true;
	/* and this backend at once, for the rest of this transaction */
	idgen_segment_acl_local++;
	return PointerGetDatum(NULL);
}

/* The privilege argument: draw, read or all, as a mask */
static int
privilege_arg(FunctionCallInfo fcinfo)
{
	char	   *p;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("privilege cannot be null")));
	p = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (pg_strcasecmp(p, "draw") == 0)
		return IDGEN_TAG_DRAW;
	if (pg_strcasecmp(p, "read") == 0)
		return IDGEN_TAG_READ;
	if (pg_strcasecmp(p, "all") == 0)
		return IDGEN_TAG_DRAW | IDGEN_TAG_READ;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized segment tag privilege: \"%s\"", p),
			 errhint("A tag's privileges are draw, read and all.")));
}

/*
 * SQL: idgen.segment_grant(tag, privilege, grantee) and
 * idgen.segment_revoke(tag, privilege, grantee): by the tag's owner (its
 * privileges) or a superuser; grantee a role's name or 'public'
 */
static Datum
grant_or_revoke(FunctionCallInfo fcinfo, bool grant)
{
	char	   *tag = tag_arg(fcinfo);
	int			privs = privilege_arg(fcinfo);
	char	   *grantee;
	Oid			grantee_id = InvalidOid;
	Oid			caller = GetUserId();
	int64		max_id;
	IdgenTableOwnerSwitch sw;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("grantee cannot be null"),
				 errhint("Name a role, or public.")));
	grantee = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (pg_strcasecmp(grantee, "public") != 0)
		grantee_id = get_role_oid(grantee, false);
	if (!idgen_segment_has_privilege_columns())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment tags have no privileges before extension idgen 0.4.0"),
				 errhint("Run ALTER EXTENSION idgen UPDATE.")));
	check_tag_admin(grant ? "grant privileges on" : "revoke privileges on");

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(caller, tag, &max_id, NULL, NULL, NULL))
		idgen_segment_unknown_tag_error(tag);
	for (int bit = IDGEN_TAG_DRAW; bit <= IDGEN_TAG_READ; bit <<= 1)
	{
		const char *name = bit == IDGEN_TAG_DRAW ? "draw" : "read";
		Oid			types[4] = {TEXTOID, TEXTOID, NAMEOID, OIDOID};
		Datum		args[4];
		int			ret;

		if (!(privs & bit))
			continue;
		args[0] = CStringGetTextDatum(tag);
		args[1] = CStringGetTextDatum(name);
		args[2] = DirectFunctionCall1(namein, CStringGetDatum(grantee));
		args[3] = ObjectIdGetDatum(grantee_id);
		if (!OidIsValid(grantee_id))
		{
			char		sql[128];

			snprintf(sql, sizeof(sql),
					 "UPDATE idgen.segment_alloc SET public_%s = %s WHERE biz_tag = $1",
					 name, grant ? "true" : "false");
			ret = SPI_execute_with_args(sql, 1, types, args, NULL, false, 0);
		}
		else if (grant)
			ret = SPI_execute_with_args("INSERT INTO idgen.segment_privilege "
										"(biz_tag, privilege, grantee, grantee_id) "
										"VALUES ($1, $2, $3, $4) "
										"ON CONFLICT (biz_tag, privilege, grantee) "
										"DO UPDATE SET grantee_id = excluded.grantee_id",
										4, types, args, NULL, false, 0);
		else
			ret = SPI_execute_with_args("DELETE FROM idgen.segment_privilege "
										"WHERE biz_tag = $1 AND privilege = $2 "
										"AND (grantee_id = $4 OR grantee = $3)",
										4, types, args, NULL, false, 0);
		if (ret < 0)
			elog(ERROR, "could not change the privileges of segment tag \"%s\": %s",
				 tag, SPI_result_code_string(ret));
	}
	SPI_finish();
	idgen_segment_become_caller(&sw);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_grant);
Datum
segment_grant(PG_FUNCTION_ARGS)
{
	return grant_or_revoke(fcinfo, true);
}

PG_FUNCTION_INFO_V1(segment_revoke);
Datum
segment_revoke(PG_FUNCTION_ARGS)
{
	return grant_or_revoke(fcinfo, false);
}

PG_FUNCTION_INFO_V1(segment_create);

/*
 * SQL: idgen.segment_create(tag, start, step, description, cache); cache is
 * not there before ALTER EXTENSION idgen UPDATE to 0.4.0
 */
Datum
segment_create(PG_FUNCTION_ARGS)
{
	char	   *tag;
	int64		start;
	int32		step;
	int32		cache = 1;
	const char *owner;
	IdgenTableOwnerSwitch sw;

	idgen_segment_check_usable();
	check_tag_admin("create");
	tag = tag_arg(fcinfo);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("start and step of a segment tag cannot be null")));
	start = PG_GETARG_INT64(1);
	step = PG_GETARG_INT32(2);
	if (start < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("segment start must be at least 1"),
				 errdetail("The start given was " INT64_FORMAT ".", start)));
	check_step(step);
	if (PG_NARGS() > 4)
	{
		if (PG_ARGISNULL(4))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("cache of a segment tag cannot be null")));
		cache = PG_GETARG_INT32(4);
		check_cache(cache);
	}
	owner = caller_owner_name();

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	create_tag_spi(tag, start, step, PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3),
				   PG_ARGISNULL(3), owner, cache);
	SPI_finish();
	idgen_segment_become_caller(&sw);

	/* A slot left by calls before the tag existed must not linger */
	idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_alter);

/*
 * SQL: idgen.segment_alter(tag, step, description, max_id, cache); cache is
 * not there before ALTER EXTENSION idgen UPDATE to 0.4.0
 */
Datum
segment_alter(PG_FUNCTION_ARGS)
{
	char	   *tag;
	int64		cur_max;
	bool		forward;
	bool		cache_null = PG_NARGS() <= 4 || PG_ARGISNULL(4);
	IdgenTableOwnerSwitch sw;

	idgen_segment_check_usable();
	check_tag_admin("alter");
	tag = tag_arg(fcinfo);
	if (!PG_ARGISNULL(1))
		check_step(PG_GETARG_INT32(1));
	if (!cache_null)
	{
		check_cache(PG_GETARG_INT32(4));
		if (!has_cache_column())
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("segment tags have no cache before idgen 0.4.0"),
					 errhint("Run ALTER EXTENSION idgen UPDATE.")));
	}

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(sw.save_userid, tag, &cur_max, NULL, NULL, NULL))
		idgen_segment_unknown_tag_error(tag);
	forward = alter_tag_spi(tag, cur_max,
							PG_ARGISNULL(1), PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1),
							PG_ARGISNULL(2), PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2),
							PG_ARGISNULL(3), PG_ARGISNULL(3) ? 0 : PG_GETARG_INT64(3),
							cache_null, cache_null ? 1 : PG_GETARG_INT32(4));
	SPI_finish();
	idgen_segment_become_caller(&sw);

	/*
	 * Buffered IDs lie below the new max_id, or were cached under the old
	 * cache: drop them (the slot is loaded again once the row is committed,
	 * so a new cache holds from the commit on)
	 */
	if (forward)
		idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_drop);

/* SQL: idgen.segment_drop(tag) */
Datum
segment_drop(PG_FUNCTION_ARGS)
{
	char	   *tag;
	int64		cur_max;
	IdgenTableOwnerSwitch sw;

	idgen_segment_check_usable();
	check_tag_admin("drop");
	tag = tag_arg(fcinfo);

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(sw.save_userid, tag, &cur_max, NULL, NULL, NULL))
		idgen_segment_unknown_tag_error(tag);
	drop_tag_spi(tag);
	SPI_finish();
	idgen_segment_become_caller(&sw);

	idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_set_owner);

/*
 * SQL: idgen.segment_set_owner(tag, new_owner regrole): as ALTER SEQUENCE
 * ... OWNER TO, by the tag's owner (who must also be a member of the new
 * owner) or a superuser
 */
Datum
segment_set_owner(PG_FUNCTION_ARGS)
{
	char	   *tag;
	Oid			new_owner;
	int64		cur_max;
	IdgenTableOwnerSwitch sw;

	check_tag_admin("alter");
	tag = tag_arg(fcinfo);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("new owner of a segment tag cannot be null")));
	new_owner = PG_GETARG_OID(1);
	if (!has_owner_column())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment tags have no owners before idgen 0.4.0"),
				 errhint("Run ALTER EXTENSION idgen UPDATE.")));
	if (!superuser() && !is_member_of_role(GetUserId(), new_owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be member of role \"%s\" to hand segment tag \"%s\" to it",
						GetUserNameFromId(new_owner, false), tag),
				 errhint("Ask a superuser, or a member of role \"%s\", to hand the tag over.",
						 GetUserNameFromId(new_owner, false))));
	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(sw.save_userid, tag, &cur_max, NULL, NULL, NULL))
		idgen_segment_unknown_tag_error(tag);
	set_tag_owner(tag, new_owner);
	SPI_finish();
	idgen_segment_become_caller(&sw);
	PG_RETURN_VOID();
}

/*
 * Moving a tag between Leaf's leaf_alloc and idgen.segment_alloc (issue 14,
 * point 3).  Leaf's max_id is the next unused ID (its segments are
 * [max_id - step, max_id)); idgen's is the last allocated one.  They need
 * only EXECUTE on themselves, run as their caller, check the tag's owner
 * like segment_alter, and write as the table's owner, so the
 * segment_alloc_guard trigger and the tombstones in idgen.segment_dropped
 * apply: an import never goes below a dropped tag.
 */
PG_FUNCTION_INFO_V1(segment_import_leaf);

/* SQL: idgen.segment_import_leaf(biz_tag, max_id, step, description) */
Datum
segment_import_leaf(PG_FUNCTION_ARGS)
{
	char	   *tag;
	int64		leaf_max;
	int32		step;
	int64		cur_max;
	bool		forget;
	const char *owner;
	IdgenTableOwnerSwitch sw;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("biz_tag, max_id and step of a Leaf row cannot be null")));
	tag = text_to_cstring(PG_GETARG_TEXT_PP(0));
	leaf_max = PG_GETARG_INT64(1);
	step = PG_GETARG_INT32(2);
	if (leaf_max < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("Leaf max_id " INT64_FORMAT " of segment tag \"%s\" is out of range",
						leaf_max, tag),
				 errdetail("Leaf's max_id is the next ID it would hand out, at least 1.")));
	idgen_segment_check_tag_length(tag, strlen(tag));
	idgen_segment_check_usable();
	check_step(step);
	owner = caller_owner_name();

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(sw.save_userid, tag, &cur_max, NULL, NULL, NULL))
	{
		/* Leaf hands out max_id next: that is the tag's start */
		check_tag_admin("create");
		create_tag_spi(tag, leaf_max, step,
					   PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3),
					   PG_ARGISNULL(3), owner, 1);
		forget = true;
	}
	else
	{
		check_tag_admin("alter");
		if (leaf_max - 1 < cur_max)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot import Leaf max_id " INT64_FORMAT " of segment tag \"%s\"",
							leaf_max, tag),
					 errdetail("idgen has allocated IDs up to " INT64_FORMAT " for the tag, so Leaf's next ID must be " UINT64_FORMAT " or more.",
							   cur_max, (uint64) cur_max + 1),
					 errhint("Import the tag's current leaf_alloc row.")));
		forget = alter_tag_spi(tag, cur_max, false, step,
							   PG_ARGISNULL(3), PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3),
							   leaf_max - 1 == cur_max, leaf_max - 1,
							   true, 1);
	}
	SPI_finish();
	idgen_segment_become_caller(&sw);
	if (forget)
		idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_export_leaf);

/*
 * SQL: idgen.segment_export_leaf(tag, drop_tag): the tag as a row of Leaf's
 * leaf_alloc.  Dropping forgets the tag's buffered IDs and keeps its
 * tombstone, so idgen hands out no more of it and never re-creates it below
 * max_id.
 */
Datum
segment_export_leaf(PG_FUNCTION_ARGS)
{
	char	   *tag;
	bool		drop_tag;
	int64		max_id;
	int32		step;
	Datum		description;
	bool		desc_null;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	IdgenTableOwnerSwitch sw;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("segment tag and drop_tag cannot be null")));
	tag = text_to_cstring(PG_GETARG_TEXT_PP(0));
	drop_tag = PG_GETARG_BOOL(1);
	idgen_segment_check_tag_length(tag, strlen(tag));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (drop_tag)
	{
		idgen_segment_check_usable();
		check_tag_admin("drop");
	}

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (!lock_owned_tag(sw.save_userid, tag, &max_id, &step, &description,
						&desc_null))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("segment tag \"%s\" does not exist", tag)));
	if (max_id == PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("cannot export segment tag \"%s\" to Leaf", tag),
				 errdetail("Every bigint of the tag has been allocated; Leaf's next ID would not fit a bigint.")));
	if (drop_tag)
		drop_tag_spi(tag);
	SPI_finish();
	idgen_segment_become_caller(&sw);
	if (drop_tag)
		idgen_segment_forget(tag, 0);

	values[0] = CStringGetTextDatum(tag);
	values[1] = Int64GetDatum(max_id + 1);
	values[2] = Int32GetDatum(step);
	values[3] = description;
	nulls[3] = desc_null;
	values[4] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

StaticAssertDecl(IDGEN_CURRVAL_TAG_MAX == IDGEN_SEGMENT_TAG_MAX,
				 "currval.h and segment.h must agree on the longest tag");

PG_FUNCTION_INFO_V1(segment_nextval);

/* SQL: idgen.segment_nextval(tag text) */
Datum
segment_nextval(PG_FUNCTION_ARGS)
{
	text	   *t;
	const char *p;
	int			len;
	int64		id;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("segment tag cannot be null")));
	t = PG_GETARG_TEXT_PP(0);
	p = VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);

	id = idgen_segment_next(p, len);
	idgen_currval_note_segment(p, len, id);
	PG_RETURN_INT64(id);
}

PG_FUNCTION_INFO_V1(segment_currval);

/*
 * SQL: idgen.segment_currval(tag text): the last ID this session drew from
 * the tag; like a sequence's currval, an error before the first.
 */
Datum
segment_currval(PG_FUNCTION_ARGS)
{
	text	   *t;
	int64		id;
	bool		lost;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("segment tag cannot be null")));
	t = PG_GETARG_TEXT_PP(0);
	idgen_segment_check_tag_length(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	/* As a sequence's currval: draw or read (a dropped tag: no check) */
	{
		bool		found;
		char	   *tag = text_to_cstring(t);

		if (!(idgen_segment_tag_privileges(tag, GetUserId(), &found) &
			  (IDGEN_TAG_DRAW | IDGEN_TAG_READ)) && found)
			idgen_segment_acl_error(tag, "draw or read");
	}
	if (!idgen_currval_segment(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &id, &lost))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment_currval of tag \"%s\" is not yet defined in this session",
						text_to_cstring(t)),
				 lost ?
				 errdetail("Parallel workers of an earlier statement drew IDs from more than %d segment tags, more than they can report to their leader.",
						   IDGEN_CURRVAL_WORKER_TAGS) : 0,
				 errhint("Call idgen.segment_nextval('%s') first in this session.",
						 text_to_cstring(t))));
	PG_RETURN_INT64(id);
}

/*
 * The tags whose rows of segment_status the current role sees: NULL for
 * all of them (a superuser, a member of pg_monitor, before 0.4.0's
 * privileges, where only pg_monitor may call it), else those it owns or
 * holds read on
 */
static HTAB *
readable_tags(void)
{
	static const char *sql =
		"SELECT a.biz_tag FROM idgen.segment_alloc a "
		"WHERE a.public_read "
		"OR pg_catalog.pg_has_role($1, a.owner_id, 'USAGE') "
		"OR EXISTS (SELECT FROM idgen.segment_privilege p "
		"WHERE p.biz_tag OPERATOR(pg_catalog.=) a.biz_tag "
		"AND p.privilege OPERATOR(pg_catalog.=) 'read' "
		"AND pg_catalog.pg_has_role($1, p.grantee_id, 'USAGE'))";
	Oid			role = GetUserId();
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(role)};
	HASHCTL		info;
	HTAB	   *h;
	IdgenTableOwnerSwitch sw;
	SPIPlanPtr	plan;

	if (superuser_arg(role) || has_privs_of_role(role, ROLE_PG_MONITOR) ||
		!idgen_segment_has_privilege_columns())
		return NULL;
	info.keysize = IDGEN_SEGMENT_TAG_MAX + 1;
	info.entrysize = IDGEN_SEGMENT_TAG_MAX + 1;
	info.hcxt = CurrentMemoryContext;
	h = hash_create("idgen readable tags", 64, &info,
					HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	plan = SPI_prepare(sql, 1, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare the privileges of segment tags: %s",
			 SPI_result_code_string(SPI_result));

	/*
	 * A fresh snapshot, as idgen_segment_tag_privileges reads them: a
	 * REVOKE committed since a REPEATABLE READ transaction's snapshot hides
	 * the tag there too
	 */
	if (idgen_spi_read_fresh(plan, args, NULL,
							 idgen_table_relid("segment_privilege"), 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the privileges of segment tags");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *tag = SPI_getvalue(SPI_tuptable->vals[i],
									   SPI_tuptable->tupdesc, 1);
		char		key[IDGEN_SEGMENT_TAG_MAX + 1];

		strlcpy(key, tag, sizeof(key));
		(void) hash_search(h, key, HASH_ENTER, NULL);
	}
	SPI_finish();
	idgen_segment_become_caller(&sw);
	return h;
}

PG_FUNCTION_INFO_V1(segment_resume);

/*
 * SQL: idgen.segment_resume(), since 0.4.0: a superuser vouches that the
 * server this one was copied from hands out no more segment IDs (or that
 * its tags' max_id here were raised above what it allocated), so this copy
 * may allocate from idgen.segment_alloc again: the refusal after a restore
 * is lifted and its marker removed.  True if it lifted one, false if none
 * was in force.
 */
Datum
segment_resume(PG_FUNCTION_ARGS)
{
	idgen_require_loaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to resume segment IDs"),
				 errdetail("Only a superuser may vouch that the server this one was copied from hands out no more segment IDs.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot resume segment IDs during recovery"),
				 errhint("Run it once the server has been promoted or recovery has ended.")));
	if (pg_atomic_read_u32(&idgen_segment->refused) == 0)
		PG_RETURN_BOOL(false);
	/* The marker first: a crash in between leaves the refusal in force */
	idgen_segments_refusal_keep(0);
	pg_atomic_write_u32(&idgen_segment->refused, 0);
	ereport(LOG,
			(errmsg("idgen: a superuser resumed segment IDs")));
	PG_RETURN_BOOL(true);
}

PG_FUNCTION_INFO_V1(segment_status_fn);

/* SQL: idgen.segment_status_fn(), one row per tag in shared memory */
Datum
segment_status_fn(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS scan;
	IdgenSegmentSlot *slot;
	HTAB	   *readable;

	idgen_require_loaded();
	InitMaterializedSRF(fcinfo, 0);
	readable = readable_tags();

	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	hash_seq_init(&scan, idgen_segment_hash);
	while ((slot = hash_seq_search(&scan)) != NULL)
	{
		Datum		values[18];
		bool		nulls[18] = {0};
		uint64		p = pg_atomic_read_u64(&slot->pos);
		uint64		e = p >> IDGEN_SEG_OFF_BITS;
		uint64		off = p & IDGEN_SEG_OFF_MASK;
		uint64		ne = (e + 1) & IDGEN_SEG_EPOCH_MASK;
		IdgenSegmentDesc *d = &slot->ring[e % IDGEN_SEG_RING];
		IdgenSegmentDesc *nd = &slot->ring[ne % IDGEN_SEG_RING];
		bool		has_cur = (pg_atomic_read_u32(&d->epoch) == e && d->len > 0);
		bool		next_ready = (pg_atomic_read_u32(&nd->epoch) == ne);
		TimestampTz last = (TimestampTz) pg_atomic_read_u64(&slot->last_fetch);
		int64		dyn_step;

		if (slot->key.dbid != MyDatabaseId ||
			pg_atomic_read_u64(&slot->generation) == 0)
			continue;
		if (readable != NULL &&
			hash_search(readable, slot->key.tag, HASH_FIND, NULL) == NULL)
			continue;
		values[0] = CStringGetTextDatum(slot->key.tag);
		values[1] = CStringGetTextDatum(idgen_segment_state_name(pg_atomic_read_u32(&slot->state)));
		if (has_cur)
		{
			values[2] = Int64GetDatum(d->start + (int64) Min(off, (uint64) d->len) * d->stride);
			values[3] = Int64GetDatum(d->start + (d->len - 1) * d->stride);
			values[4] = Int64GetDatum(d->len);
		}
		else
			nulls[2] = nulls[3] = nulls[4] = true;
		values[5] = BoolGetDatum(next_ready);
		if (next_ready)
		{
			values[6] = Int64GetDatum(nd->start);
			values[7] = Int64GetDatum(nd->start + (nd->len - 1) * nd->stride);
			values[8] = Int64GetDatum(nd->len);
		}
		else
			nulls[6] = nulls[7] = nulls[8] = true;
		dyn_step = (int64) pg_atomic_read_u64(&slot->dyn_step);
		if (dyn_step > 0)
			values[9] = Int64GetDatum(dyn_step);
		else
			nulls[9] = true;
		values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->fetches));
		values[11] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->waits));
		if (last != 0)
			values[12] = TimestampTzGetDatum(last);
		else
			nulls[12] = true;
		values[13] = Int64GetDatum((int64) e);
		values[14] = Int32GetDatum((int32) pg_atomic_read_u32(&slot->chain_len));
		values[15] = Int32GetDatum(idgen_segment_ready(slot, e));
		values[16] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->standby_timeouts));
		/* (0.3.0's function, before ALTER EXTENSION UPDATE, has fewer columns) */
		values[17] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->unprotected));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(idgen_segment->lock);
	return (Datum) 0;
}

/*
 * Role commands and the tags of this database (ProcessUtility hook,
 * module.c), so that no tag is left owned by a role that is gone, as
 * PostgreSQL's shared dependencies do for a sequence: before DROP ROLE,
 * refuse to drop a role that owns tags here; after REASSIGN OWNED, hand
 * the tags on; after DROP OWNED, drop the tags (their max_id kept in
 * idgen.segment_dropped, as segment_drop does); after ALTER ROLE ...
 * RENAME TO, follow the new name (the owner is owner_id, the role; the
 * name is for pg_dump).  Only this database's tags are seen, and only where
 * idgen is preloaded; a tag whose owner is gone (dropped from another
 * database) is a superuser's only (check_tag_owner), and a new role with
 * the old name owns nothing.
 */
static void
owner_sql(const char *sql, Oid arg1, const char *arg2, bool forget)
{
	Oid			types[2] = {OIDOID, NAMEOID};
	Datum		args[2];
	int			ret;
	IdgenTableOwnerSwitch sw;

	args[0] = ObjectIdGetDatum(arg1);
	args[1] = arg2 ? DirectFunctionCall1(namein, CStringGetDatum(arg2)) : (Datum) 0;
	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	ret = SPI_execute_with_args(sql, arg2 ? 2 : 1, types, args, NULL, false, 0);
	if (ret < 0)
		elog(ERROR, "could not change the owners of segment tags: %s",
			 SPI_result_code_string(ret));
	for (uint64 i = 0; forget && i < SPI_processed; i++)
		idgen_segment_forget(SPI_getvalue(SPI_tuptable->vals[i],
										  SPI_tuptable->tupdesc, 1), 0);
	SPI_finish();
	idgen_segment_become_caller(&sw);
}

/*
 * As the table's owner: run sql, which counts the rows of a role ($1) and
 * names the least tag among them; returns the count, and that tag in
 * *first (NULL for none)
 */
static int64
tags_of_role(const char *sql, Oid role, char **first)
{
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(role)};
	bool		isnull;
	int64		n;
	IdgenTableOwnerSwitch sw;

	idgen_segment_become_table_owner(&sw);
	SPI_connect();
	if (SPI_execute_with_args(sql, 1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the segment tags of role %u", role);
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									SPI_tuptable->tupdesc, 1, &isnull));
	*first = n > 0 ? SPI_getvalue(SPI_tuptable->vals[0],
								  SPI_tuptable->tupdesc, 2) : NULL;
	if (*first)
		*first = MemoryContextStrdup(TopTransactionContext, *first);
	SPI_finish();
	idgen_segment_become_caller(&sw);
	return n;
}

/* A role DROP ROLE is about to drop: its OID and name, for after */
typedef struct DroppedRole
{
	Oid			id;
	char	   *name;
} DroppedRole;

/*
 * Before DROP ROLE: the roles that exist, those DROP ROLE will drop if it
 * may (a list of DroppedRole, for refuse_drop_of_owners after it)
 */
static List *
roles_to_drop(DropRoleStmt *stmt)
{
	List	   *existing = NIL;
	ListCell   *lc;

	foreach(lc, stmt->roles)
	{
		RoleSpec   *r = lfirst(lc);
		Oid			id;

		if (r->roletype == ROLESPEC_CSTRING &&
			OidIsValid(id = get_role_oid(r->rolename, true)))
		{
			DroppedRole *d = palloc(sizeof(DroppedRole));

			d->id = id;
			d->name = pstrdup(r->rolename);
			existing = lappend(existing, d);
		}
	}
	return existing;
}

/*
 * After DROP ROLE, before its commit: error if a role it dropped (of those
 * roles_to_drop found) owns tags of this database or holds privileges on
 * them
 */
static void
refuse_drop_of_owners(List *dropped)
{
	ListCell   *lc;

	/*
	 * After PostgreSQL's own checks (privileges, its dependencies), so that
	 * only a role that may drop the roles learns of their tags; the error
	 * rolls the drop back
	 */
	foreach(lc, dropped)
	{
		DroppedRole *d = lfirst(lc);
		int64		n;
		char	   *first;

		n = tags_of_role("SELECT pg_catalog.count(*), pg_catalog.min(biz_tag) "
						 "FROM idgen.segment_alloc "
						 "WHERE owner_id OPERATOR(pg_catalog.=) $1",
						 d->id, &first);
		if (n == 0 && idgen_segment_has_privilege_columns())
		{
			/* Privileges on tags, as PostgreSQL's on a table */
			n = tags_of_role("SELECT pg_catalog.count(*), pg_catalog.min(biz_tag) "
							 "FROM idgen.segment_privilege "
							 "WHERE grantee_id OPERATOR(pg_catalog.=) $1",
							 d->id, &first);
			if (n > 0)
				ereport(ERROR,
						(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
						 errmsg("role \"%s\" cannot be dropped because some objects depend on it",
								d->name),
						 errdetail("Role \"%s\" has privileges on segment tag \"%s\" in database \"%s\"%s.",
								   d->name, first, get_database_name(MyDatabaseId),
								   n > 1 ? " and on others" : ""),
						 errhint("Revoke them with idgen.segment_revoke(), or run DROP OWNED BY %s, in this database.",
								 quote_identifier(d->name))));
		}
		if (n > 0)
			ereport(ERROR,
					(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
					 errmsg("role \"%s\" cannot be dropped because some objects depend on it",
							d->name),
					 n == 1 ?
					 errdetail("Role \"%s\" owns segment tag \"%s\" in database \"%s\".",
							   d->name, first, get_database_name(MyDatabaseId)) :
					 errdetail("Role \"%s\" owns " INT64_FORMAT " segment tags in database \"%s\", \"%s\" among them.",
							   d->name, n, get_database_name(MyDatabaseId), first),
					 errhint("Hand them to another role with REASSIGN OWNED BY %s TO <role>, or drop them with DROP OWNED BY %s, in this database.",
							 quote_identifier(d->name), quote_identifier(d->name))));
	}
}

List *
idgen_segment_owner_utility(Node *stmt, bool before, List *dropped)
{
	ListCell   *lc;

	if (!(IsA(stmt, DropRoleStmt) || IsA(stmt, ReassignOwnedStmt) ||
		  IsA(stmt, DropOwnedStmt) ||
		  (IsA(stmt, RenameStmt) &&
		   ((RenameStmt *) stmt)->renameType == OBJECT_ROLE)))
		return NIL;
	if (!IsTransactionState() || !has_owner_column())
		return NIL;

	/*
	 * These statements run with the session's search_path, and the SQL
	 * below as the table's owner: every operator and function in it is
	 * schema-qualified.
	 */
	if (before && IsA(stmt, DropRoleStmt))
		return roles_to_drop((DropRoleStmt *) stmt);
	if (!before && IsA(stmt, DropRoleStmt))
		refuse_drop_of_owners(dropped);
	else if (!before && IsA(stmt, ReassignOwnedStmt))
	{
		ReassignOwnedStmt *ro = (ReassignOwnedStmt *) stmt;
		char	   *newrole = get_rolespec_name(ro->newrole);

		foreach(lc, ro->roles)
			owner_sql("UPDATE idgen.segment_alloc SET owner = $2 WHERE owner_id OPERATOR(pg_catalog.=) $1",
					  get_rolespec_oid(lfirst(lc), false), newrole, false);
	}
	else if (!before && IsA(stmt, DropOwnedStmt))
	{
		foreach(lc, ((DropOwnedStmt *) stmt)->roles)
		{
			owner_sql("DELETE FROM idgen.segment_alloc WHERE owner_id OPERATOR(pg_catalog.=) $1 RETURNING biz_tag",
					  get_rolespec_oid(lfirst(lc), false), NULL, true);
			/* and its privileges on tags, as on tables */
			if (idgen_segment_has_privilege_columns())
				owner_sql("DELETE FROM idgen.segment_privilege WHERE grantee_id OPERATOR(pg_catalog.=) $1",
						  get_rolespec_oid(lfirst(lc), false), NULL, false);
		}
	}
	else if (!before && IsA(stmt, RenameStmt))
	{
		/* of a role: the test at the top let no other RenameStmt through */
		owner_sql("UPDATE idgen.segment_alloc SET owner = $2 WHERE owner_id OPERATOR(pg_catalog.=) $1",
				  get_role_oid(((RenameStmt *) stmt)->newname, false),
				  ((RenameStmt *) stmt)->newname, false);
		if (idgen_segment_has_privilege_columns())
			owner_sql("UPDATE idgen.segment_privilege SET grantee = $2 WHERE grantee_id OPERATOR(pg_catalog.=) $1",
					  get_role_oid(((RenameStmt *) stmt)->newname, false),
					  ((RenameStmt *) stmt)->newname, false);
	}
	return NIL;
}
