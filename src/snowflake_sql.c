/*
 * snowflake_sql.c
 *		SQL functions of snowflake IDs: idgen.snowflake_nextval,
 *		snowflake_currval, snowflake_status, snowflake_accept_layout,
 *		snowflake_refusal and node_lease_status.
 *
 * They read the shared state of snowflake.c and snowflake_lease.c under
 * the rules in idgen.h; the generator itself is idgen_snowflake_next.
 */
#include "postgres.h"

#include "access/xlog.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "citus.h"
#include "currval.h"
#include "idgen.h"
#include "snowflake.h"
#include "worker.h"

PG_FUNCTION_INFO_V1(snowflake_currval);

/*
 * SQL: idgen.snowflake_currval(): the last ID this session drew with
 * snowflake_nextval() or gene_id(key, bits); like a sequence's currval, an
 * error before the first.
 */
Datum
snowflake_currval(PG_FUNCTION_ARGS)
{
	int64		id;

	if (!idgen_currval_snowflake(&id))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_currval is not yet defined in this session"),
				 errhint("Call idgen.snowflake_nextval() or idgen.gene_id(key, bits) first in this session.")));
	PG_RETURN_INT64(id);
}

PG_FUNCTION_INFO_V1(snowflake_accept_layout);

/*
 * SQL: idgen.snowflake_accept_layout(): a superuser accepts that IDs made
 * under a changed layout or node id may be smaller than old ones.  Waits for
 * the worker to record the new layout in the state file.
 */
Datum
snowflake_accept_layout(PG_FUNCTION_ARGS)
{
	int64		deadline;

	idgen_require_loaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to accept a change of idgen.layout"),
				 errdetail("Only a superuser may accept that new snowflake IDs could be smaller than IDs already issued.")));
	if ((idgen_snowflake_blocked_why() & IDGEN_BLOCK_LAYOUT) == 0)
		PG_RETURN_BOOL(false);
	ereport(LOG,
			(errmsg("idgen: a superuser accepted the change from layout \"%s\" with node id %d to layout \"%s\" with node id %d",
					idgen_snowflake->blocked_layout, idgen_snowflake->blocked_node,
					idgen_layout_spec, idgen_node_id)));
	(void) idgen_snowflake_accept(IDGEN_BLOCK_LAYOUT);
	if (idgen_snowflake_blocked_why() & IDGEN_BLOCK_VOUCH)
	{
		ereport(NOTICE,
				(errmsg("snowflake IDs stay refused until idgen.snowflake_resume() is called"),
				 (idgen_snowflake_blocked_why() & IDGEN_BLOCK_RESTORED) ?
				 errdetail("This server was started from a backup or after archive recovery.") :
				 errdetail("This server was promoted onto a timeline whose low idgen.node_timeline_bits bits an earlier timeline had.")));
		PG_RETURN_BOOL(true);
	}
	idgen_worker_wake();
	deadline = idgen_clock_monotonic_ms() + idgen_worker_wait_ms;
	while (idgen_snowflake_blocked())
	{
		if (!idgen_snowflake_wait(10, deadline, NULL,
								  idgen_wait_event(IDGEN_WAIT_RESERVATION)))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not accept the layout change: the idgen worker did not record it"),
					 errhint("Make sure the \"idgen worker\" process is running on this primary; the acceptance takes effect as soon as it does.")));
		idgen_worker_wake();
	}
	PG_RETURN_BOOL(true);
}

PG_FUNCTION_INFO_V1(snowflake_advance);

/*
 * SQL: idgen.snowflake_advance(min_id): a superuser makes every later
 * snowflake and gene ID of this server larger than min_id, durably.  It never
 * lifts the refusal of a server started from a backup (snowflake_resume).
 */
Datum
snowflake_advance(PG_FUNCTION_ARGS)
{
	int64		min_id = PG_GETARG_INT64(0);

	idgen_require_loaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to advance the snowflake generator"),
				 errdetail("Only a superuser may move the generator of this server.")));
	idgen_snowflake_advance(min_id, false);
	ereport(LOG,
			(errmsg("idgen: a superuser advanced the snowflake generator past ID " INT64_FORMAT,
					min_id)));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(snowflake_resume);

/*
 * SQL: idgen.snowflake_resume(last_id_of_original): a superuser vouches
 * that last_id_of_original is at or above every snowflake ID the server this
 * one was copied from issued; the generator moves above it, as
 * snowflake_advance does, and the refusal after a restore is lifted.  True
 * if it lifted one, false if none was in force (the generator is advanced
 * all the same).
 */
Datum
snowflake_resume(PG_FUNCTION_ARGS)
{
	int64		last_id = PG_GETARG_INT64(0);
	bool		restored;
	uint32		why;

	idgen_require_loaded();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to resume snowflake IDs"),
				 errdetail("Only a superuser may vouch for the last ID of the server this one was copied from.")));
	why = idgen_snowflake_blocked_why();
	restored = (why & IDGEN_BLOCK_VOUCH) != 0;
	idgen_snowflake_advance(last_id, true);
	if (why & IDGEN_BLOCK_RESTORED)
		ereport(LOG,
				(errmsg("idgen: a superuser resumed snowflake IDs after a restore above ID " INT64_FORMAT ", vouched for as the original server's last",
						last_id)));
	else if (restored)
		ereport(LOG,
				(errmsg("idgen: a superuser resumed snowflake IDs on timeline %u above ID " INT64_FORMAT ", vouched for as the last of the earlier timelines' servers",
						GetWALInsertionTimeLine(), last_id)));
	else
		ereport(LOG,
				(errmsg("idgen: a superuser advanced the snowflake generator past ID " INT64_FORMAT,
						last_id)));
	PG_RETURN_BOOL(restored);
}

PG_FUNCTION_INFO_V1(snowflake_nextval);

/* SQL: idgen.snowflake_nextval() */
Datum
snowflake_nextval(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(idgen_snowflake_next(0, 0));
}

PG_FUNCTION_INFO_V1(snowflake_status);

/* SQL: idgen.snowflake_status(), one row of the generator's state */
Datum
snowflake_status(PG_FUNCTION_ARGS)
{
	const IdgenLayout *l = &idgen_layout;
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12] = {0};
	uint64		state;
	int64		tick,
				now_tick,
				rend,
				file_until_us;
	uint64		issued = 0;

	idgen_require_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	state = pg_atomic_read_u64(&idgen_snowflake->state);
	tick = (int64) (state >> l->seq.bits);
	now_tick = idgen_tick_of(l, idgen_clock_now_us());
	rend = (int64) pg_atomic_read_u64(&idgen_snowflake->reserved_end);
	for (int i = 0; i < idgen_snowflake->nslots; i++)
		issued += pg_atomic_read_u64(&idgen_snowflake->counters[i].issued);

	if (idgen_node_id == IDGEN_NODE_AUTO &&
		(pg_atomic_read_u64(&idgen_snowflake_lease->word) >> IDGEN_LEASE_MS_BITS) != 0)
		values[0] = Int32GetDatum((int) (pg_atomic_read_u64(&idgen_snowflake_lease->word) >> IDGEN_LEASE_MS_BITS) - 1);
	else if (idgen_citus_current_node() >= 0)
		values[0] = Int32GetDatum(idgen_citus_current_node());
	else if (idgen_node_id >= 0)
		values[0] = Int32GetDatum(idgen_fixed_node());
	else
		nulls[0] = true;
	values[1] = CStringGetTextDatum(idgen_layout_spec);
	if (state != 0)
	{
		values[2] = TimestampTzGetDatum(idgen_tick_start(l, tick) - UNIX_TO_PG_US);
		values[3] = Float8GetDatum((double) (tick - now_tick) * l->unit_us / 1000.0);
	}
	else
		nulls[2] = nulls[3] = true;
	if (rend > 0)
		values[4] = TimestampTzGetDatum(idgen_tick_start(l, rend) - UNIX_TO_PG_US);
	else
		nulls[4] = true;
	values[5] = Int64GetDatum((int64) issued);
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&idgen_snowflake->clock_back));
	values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&idgen_snowflake->clock_waits));
	values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&idgen_snowflake->reserve_waits));
	values[9] = BoolGetDatum(idgen_worker_running());
	/* Since 0.2.0: the reservation in the state file */
	file_until_us = idgen_snowflake_file_reservation();
	if (file_until_us >= 0)
		values[10] = TimestampTzGetDatum(file_until_us - UNIX_TO_PG_US);
	else
		nulls[10] = true;
	/* Since 0.4.0: when the layout runs out */
	values[11] = TimestampTzGetDatum(idgen_snowflake_layout_end_us() - UNIX_TO_PG_US);
	if (tupdesc->natts < 10 || tupdesc->natts > 12)
		elog(ERROR, "unexpected result row of %d columns", tupdesc->natts);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(snowflake_refusal);

/*
 * SQL: idgen.snowflake_refusal(), since 0.4.0: which refusals that only a
 * superuser lifts are in force, for monitoring (monitoring/): started from a
 * backup or after archive recovery (snowflake_resume lifts it), or a change
 * of idgen.layout or idgen.node_id (snowflake_accept_layout lifts it).  A
 * refusal already accepted, waiting for the worker, is not one.
 */
Datum
snowflake_refusal(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {0};
	uint32		why;

	idgen_require_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	why = idgen_snowflake_blocked_why();
	values[0] = BoolGetDatum((why & IDGEN_BLOCK_VOUCH) != 0);
	values[1] = BoolGetDatum((why & IDGEN_BLOCK_LAYOUT) != 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(node_lease_status);

/* SQL: idgen.node_lease_status(), one row about this server's lease */
Datum
node_lease_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {0};
	uint64		w;
	int			node;
	int64		left;
	int64		renewed_at;
	int64		previous_tick;
	char		inst[IDGEN_LEASE_TEXT_LEN];
	char		err[IDGEN_LEASE_TEXT_LEN];

	idgen_require_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	w = pg_atomic_read_u64(&idgen_snowflake_lease->word);
	node = (int) (w >> IDGEN_LEASE_MS_BITS) - 1;
	left = (int64) (w & IDGEN_LEASE_MS_MASK) - idgen_clock_monotonic_ms();
	SpinLockAcquire(&idgen_snowflake_lease->mutex);
	renewed_at = idgen_snowflake_lease->renewed_at_us;
	previous_tick = idgen_snowflake_lease->previous_tick;
	strlcpy(inst, idgen_snowflake_lease->instance, sizeof(inst));
	strlcpy(err, idgen_snowflake_lease->last_error, sizeof(err));
	SpinLockRelease(&idgen_snowflake_lease->mutex);

	values[0] = BoolGetDatum(idgen_node_id == IDGEN_NODE_AUTO);
	if (idgen_node_id == IDGEN_NODE_AUTO && node >= 0)
	{
		values[1] = Int32GetDatum(node);
		values[2] = BoolGetDatum(left > 0);
		values[3] = Int64GetDatum(Max(left, 0));
	}
	else
		nulls[1] = nulls[2] = nulls[3] = true;
	if (inst[0])
		values[4] = CStringGetTextDatum(inst);
	else
		nulls[4] = true;
	if (renewed_at > 0)
		values[5] = TimestampTzGetDatum(renewed_at - UNIX_TO_PG_US);
	else
		nulls[5] = true;
	if (previous_tick >= 0)
		values[6] = Int64GetDatum(previous_tick);
	else
		nulls[6] = true;
	if (err[0])
		values[7] = CStringGetTextDatum(err);
	else
		nulls[7] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
