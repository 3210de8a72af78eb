/*
 * segment_sql.c
 *		SQL functions of segment IDs: idgen.segment_nextval,
 *		segment_currval, the
 *		segment_status view's segment_status_fn, and the administration of
 *		tags, segment_create, segment_alter and segment_drop.
 *
 * The administration functions write idgen.segment_alloc through SPI.  They are SECURITY DEFINER
 * with a pinned search_path, so a tag administrator needs only EXECUTE on
 * them (revoked from PUBLIC by the install script) and no privilege on the
 * table.  max_id never moves backwards through them; the table's trigger
 * idgen.segment_alloc_guard enforces the same for every writer and keeps
 * the max_id of dropped tags, so a tag created again starts above it.
 * Dropping a tag, or moving its max_id forward, removes the tag's slot from
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

#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/tuplestore.h"

#include "currval.h"
#include "idgen.h"
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

PG_FUNCTION_INFO_V1(segment_create);

/* SQL: idgen.segment_create(tag, start, step, description) */
Datum
segment_create(PG_FUNCTION_ARGS)
{
	char	   *tag;
	int64		start;
	int32		step;
	Oid			types[4] = {TEXTOID, INT8OID, INT4OID, TEXTOID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	int			ret;
	uint64		created;

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

	/* Leaf's max_id is the last ID given out: start - 1 */
	args[0] = CStringGetTextDatum(tag);
	args[1] = Int64GetDatum(start - 1);
	args[2] = Int32GetDatum(step);
	if (PG_ARGISNULL(3))
	{
		args[3] = (Datum) 0;
		nulls[3] = 'n';
	}
	else
		args[3] = PG_GETARG_DATUM(3);

	SPI_connect();
	check_kept_floor(tag, start);
	ret = SPI_execute_with_args("INSERT INTO idgen.segment_alloc "
								"(biz_tag, max_id, step, description, update_time) "
								"VALUES ($1, $2, $3, $4, pg_catalog.now()) "
								"ON CONFLICT (biz_tag) DO NOTHING",
								4, types, args, nulls, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not insert into idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	created = SPI_processed;
	SPI_finish();
	if (created == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("segment tag \"%s\" already exists", tag),
				 errhint("Use idgen.segment_alter() to change it.")));

	/* A slot left by calls before the tag existed must not linger */
	idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_alter);

/* SQL: idgen.segment_alter(tag, step, description, max_id) */
Datum
segment_alter(PG_FUNCTION_ARGS)
{
	char	   *tag;
	Oid			types[4] = {TEXTOID, INT4OID, TEXTOID, INT8OID};
	Datum		args[4];
	char		nulls[4] = {' ', 'n', 'n', 'n'};
	int			ret;
	bool		isnull;
	int64		cur_max;

	idgen_segment_check_usable();
	check_tag_admin("alter");
	tag = tag_arg(fcinfo);
	args[0] = CStringGetTextDatum(tag);
	for (int i = 1; i < 4; i++)
	{
		args[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		if (!PG_ARGISNULL(i))
			nulls[i] = ' ';
	}
	if (!PG_ARGISNULL(1))
		check_step(PG_GETARG_INT32(1));

	SPI_connect();
	ret = SPI_execute_with_args("SELECT max_id FROM idgen.segment_alloc "
								"WHERE biz_tag = $1 FOR UPDATE",
								1, types, args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	if (SPI_processed == 0)
		idgen_segment_unknown_tag_error(tag);
	cur_max = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
	if (!PG_ARGISNULL(3) && PG_GETARG_INT64(3) < cur_max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot move max_id of segment tag \"%s\" backwards", tag),
				 errdetail("max_id is " INT64_FORMAT "; the new value " INT64_FORMAT " is smaller.",
						   cur_max, PG_GETARG_INT64(3)),
				 errhint("IDs up to max_id may have been handed out already; only a larger max_id keeps new IDs unique.")));

	ret = SPI_execute_with_args("UPDATE idgen.segment_alloc SET "
								"step = coalesce($2, step), "
								"description = coalesce($3, description), "
								"max_id = coalesce($4, max_id), "
								"update_time = pg_catalog.now() "
								"WHERE biz_tag = $1",
								4, types, args, nulls, false, 0);
	if (ret != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not update idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	SPI_finish();

	/* Buffered IDs lie below the new max_id: drop them */
	if (!PG_ARGISNULL(3) && PG_GETARG_INT64(3) > cur_max)
		idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_drop);

/* SQL: idgen.segment_drop(tag) */
Datum
segment_drop(PG_FUNCTION_ARGS)
{
	char	   *tag;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	int			ret;
	uint64		deleted;

	idgen_segment_check_usable();
	check_tag_admin("drop");
	tag = tag_arg(fcinfo);
	args[0] = CStringGetTextDatum(tag);

	SPI_connect();
	ret = SPI_execute_with_args("DELETE FROM idgen.segment_alloc WHERE biz_tag = $1",
								1, types, args, NULL, false, 0);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "could not delete from idgen.segment_alloc: %s",
			 SPI_result_code_string(ret));
	deleted = SPI_processed;
	SPI_finish();
	if (deleted == 0)
		idgen_segment_unknown_tag_error(tag);

	idgen_segment_forget(tag, 0);
	PG_RETURN_VOID();
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

PG_FUNCTION_INFO_V1(segment_status_fn);

/* SQL: idgen.segment_status_fn(), one row per tag in shared memory */
Datum
segment_status_fn(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS scan;
	IdgenSegmentSlot *slot;

	idgen_require_loaded();
	InitMaterializedSRF(fcinfo, 0);

	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	hash_seq_init(&scan, idgen_segment_hash);
	while ((slot = hash_seq_search(&scan)) != NULL)
	{
		Datum		values[16];
		bool		nulls[16] = {0};
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
		values[0] = CStringGetTextDatum(slot->key.tag);
		values[1] = CStringGetTextDatum(idgen_segment_state_name(pg_atomic_read_u32(&slot->state)));
		if (has_cur)
		{
			values[2] = Int64GetDatum(d->start + (int64) Min(off, (uint64) d->len));
			values[3] = Int64GetDatum(d->start + d->len - 1);
			values[4] = Int64GetDatum(d->len);
		}
		else
			nulls[2] = nulls[3] = nulls[4] = true;
		values[5] = BoolGetDatum(next_ready);
		if (next_ready)
		{
			values[6] = Int64GetDatum(nd->start);
			values[7] = Int64GetDatum(nd->start + nd->len - 1);
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
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(idgen_segment->lock);
	return (Datum) 0;
}
