/*
 * layout_sql.c
 *		SQL functions that take an ID apart and build one: id_decode,
 *		id_make, id_timestamp, and the ID bounds of times for partitioning
 *		by ID: id_floor, id_interval.  No shared state.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "common/int.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "idgen.h"

/* Layout from optional argument n (absent or NULL: the server's) */
static const IdgenLayout *
layout_from_arg(FunctionCallInfo fcinfo, int n, IdgenLayout *buf)
{
	char	   *spec = NULL;

	if (PG_NARGS() > n && !PG_ARGISNULL(n))
		spec = text_to_cstring(PG_GETARG_TEXT_PP(n));
	return idgen_layout_arg(spec, buf);
}

/* Refuse a negative ID: no layout makes one */
static void
check_id(int64 id)
{
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID " INT64_FORMAT " is negative", id),
				 errdetail("IDs made by idgen and the layouts it knows are never negative.")));
}

/* "0, 1 or 2": the values a constant field may hold, for a message */
static char *
allowed_values(const IdgenField *f)
{
	StringInfoData buf;
	int			n = 0,
				k = 0;

	for (int v = 0; v < 64; v++)
		n += (f->allowed >> v) & 1;
	initStringInfo(&buf);
	for (int v = 0; v < 64; v++)
	{
		if (((f->allowed >> v) & 1) == 0)
			continue;
		k++;
		appendStringInfo(&buf, "%s%d", k == 1 ? "" : k == n ? " or " : ", ", v);
	}
	return buf.data;
}

/*
 * Error unless the ID's constant fields (Vesta's method, type and version)
 * hold values the layout's system can write there; such an ID was not made
 * under this layout, so its time, node and sequence would be wrong.  The
 * SQLSTATE is numeric_value_out_of_range, as for a negative ID (check_id)
 * and as id_to_friendly reports the same IDs: the number is outside the set
 * of IDs the layout can hold.  Every field with an impossible value is named.
 */
static void
check_consts(const IdgenLayout *l, int64 id)
{
	StringInfoData detail;
	int			bad;

	if (idgen_layout_consts_ok(l, (uint64) id, &bad))
		return;
	initStringInfo(&detail);
	for (int i = bad; i < l->nconsts; i++)
	{
		const IdgenField *f = &l->consts[i];
		uint64		v = idgen_field_get(f, (uint64) id);

		if (v < 64 && ((f->allowed >> v) & 1))
			continue;
		appendStringInfo(&detail, "%sIts %s field is " UINT64_FORMAT ", but layout \"%s\" only makes IDs whose %s is %s.",
						 detail.len ? " " : "", f->name, v, l->name, f->name,
						 allowed_values(f));
	}
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("ID " INT64_FORMAT " cannot have been made by layout \"%s\"",
					id, l->name),
			 errdetail("%s", detail.data),
			 errhint("Decode the ID with the layout that made it.")));
}

/*
 * Error if the ID has bits set outside every field of the layout (above the
 * 53 bits of cosid_safe_js_ms, say): no ID of the layout has them, and
 * decoding would silently drop them
 */
static void
check_unused_bits(const IdgenLayout *l, int64 id)
{
	const IdgenField *fields[3 + IDGEN_MAX_PARTS];
	int			n = 0;
	uint64		mask = 0;

	fields[n++] = &l->ts;
	fields[n++] = &l->node;
	fields[n++] = &l->seq;
	for (int i = 0; i < l->nconsts; i++)
		fields[n++] = &l->consts[i];
	for (int i = 0; i < n; i++)
		if (fields[i]->bits > 0)
			mask |= idgen_field_max(fields[i]->bits) << fields[i]->shift;
	if (((uint64) id & ~mask) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID " INT64_FORMAT " cannot have been made by layout \"%s\"",
						id, l->name),
				 errdetail("It has bits set above the layout's %d bits.",
						   l->ts.bits + l->node.bits + l->seq.bits),
				 errhint("Decode the ID with the layout that made it.")));
}

/* Error unless the ID's tick is one the layout can show as a time */
static void
check_tick(const IdgenLayout *l, int64 id, int64 tick)
{
	if (tick > idgen_layout_ts_max(l))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("ID " INT64_FORMAT " is beyond the last time of layout \"%s\"",
						id, l->name),
				 errdetail("Its time would be after the year 9999.")));
}

/* Timestamp of a tick */
static TimestampTz
tick_timestamptz(const IdgenLayout *l, int64 tick)
{
	return idgen_tick_start(l, tick) - UNIX_TO_PG_US;
}

/*
 * The parts of an ID under layout l, after the checks every decoding
 * function makes: a non-negative ID, no bits outside the layout's fields,
 * its constant fields as the layout says, a tick the layout can show
 */
static void
decompose_checked(const IdgenLayout *l, int64 id, IdgenParts *p)
{
	check_id(id);
	check_unused_bits(l, id);
	check_consts(l, id);
	idgen_decompose(l, (uint64) id, p);
	check_tick(l, id, p->tick);
}

PG_FUNCTION_INFO_V1(id_decode);

/*
 * SQL: idgen.id_decode(id [, layout]) returns (ts, node_id, sequence, tick,
 * extra); extra is a jsonb object of the layout's named parts and constant
 * fields, such as Discord's worker and process.
 */
Datum
id_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 1, &buf);
	IdgenParts p;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};
	StringInfoData extra;

	decompose_checked(l, id, &p);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	initStringInfo(&extra);
	appendStringInfoChar(&extra, '{');
	for (int i = 0; i < l->nparts; i++)
		appendStringInfo(&extra, "%s\"%s\": " UINT64_FORMAT, i ? ", " : "",
						 l->parts[i].name, idgen_field_get(&l->parts[i], p.node));
	for (int i = 0; i < l->nconsts; i++)
		appendStringInfo(&extra, "%s\"%s\": " UINT64_FORMAT,
						 (i || l->nparts) ? ", " : "",
						 l->consts[i].name, idgen_field_get(&l->consts[i], (uint64) id));
	/*
	 * Under the server's own layout with idgen.node_timeline_bits: the two
	 * parts of the node id, idgen.node_id's and the timeline's
	 */
	if (PG_NARGS() < 2 && idgen_node_timeline_bits > 0)
		appendStringInfo(&extra, "%s\"node_base\": " UINT64_FORMAT ", \"node_timeline\": " UINT64_FORMAT,
						 (l->nparts || l->nconsts) ? ", " : "",
						 p.node >> idgen_node_timeline_bits,
						 p.node & ((UINT64CONST(1) << idgen_node_timeline_bits) - 1));
	appendStringInfoChar(&extra, '}');

	values[0] = TimestampTzGetDatum(tick_timestamptz(l, p.tick));
	values[1] = Int64GetDatum((int64) p.node);
	values[2] = Int64GetDatum((int64) p.seq);
	values[3] = Int64GetDatum(p.tick);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(extra.data));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(id_timestamp);

/* SQL: idgen.id_timestamp(id [, layout]) */
Datum
id_timestamp(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 1, &buf);
	IdgenParts p;

	decompose_checked(l, id, &p);
	PG_RETURN_TIMESTAMPTZ(tick_timestamptz(l, p.tick));
}

/* Error unless 0 <= v <= the field's max */
static void
check_part(const char *what, int64 v, const IdgenField *f, const IdgenLayout *l)
{
	if (v < 0 || (uint64) v > idgen_field_max(f->bits))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s " INT64_FORMAT " is out of range for layout \"%s\"",
						what, v, l->name),
				 errdetail("The layout has %d %s bits, so it must be between 0 and " UINT64_FORMAT ".",
						   f->bits, what, idgen_field_max(f->bits))));
}

/*
 * The ID of time ts (rounded down to its tick), node and sequence under l;
 * errors as id_make documents
 */
static int64
make_checked(const IdgenLayout *l, TimestampTz ts, int64 node, int64 seq)
{
	int64		tick;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("cannot make an ID from an infinite timestamp")));
	tick = idgen_tick_of(l, ts + UNIX_TO_PG_US);
	if (tick < 0 || tick > idgen_layout_ts_max(l))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp %s is out of range for layout \"%s\"",
						timestamptz_to_str(ts), l->name),
				 errdetail("The layout's timestamps run from %s to %s.",
						   pstrdup(timestamptz_to_str(tick_timestamptz(l, 0))),
						   pstrdup(timestamptz_to_str(tick_timestamptz(l, idgen_layout_ts_max(l) + 1) - 1)))));
	check_part("node", node, &l->node, l);
	check_part("sequence", seq, &l->seq, l);
	return (int64) idgen_compose(l, tick, (uint64) node, (uint64) seq);
}

PG_FUNCTION_INFO_V1(id_make);

/*
 * SQL: idgen.id_make(ts, node_id, sequence [, layout]): the ID of that time
 * (rounded down to its tick), node and sequence.
 */
Datum
id_make(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	int64		node = PG_GETARG_INT64(1);
	int64		seq = PG_GETARG_INT64(2);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 3, &buf);

	PG_RETURN_INT64(make_checked(l, ts, node, seq));
}

/* The integer value of key name in jsonb extra; false if absent */
static bool
extra_int(Jsonb *extra, const char *name, int64 *v)
{
	JsonbValue	buf;
	JsonbValue *jv;

	jv = getKeyJsonValueFromContainer(&extra->root, name, strlen(name), &buf);
	if (jv == NULL)
		return false;
	if (jv->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" of extra must be a number", name)));
	*v = DatumGetInt64(DirectFunctionCall1(numeric_int8,
										   NumericGetDatum(jv->val.numeric)));
	return true;
}

PG_FUNCTION_INFO_V1(id_make_extra);

/*
 * SQL: idgen.id_make(ts, node_id, sequence, layout, extra jsonb): id_make
 * under a named layout, the constant fields (Vesta's method, type, version)
 * taken from extra where it has them, as id_decode returns it; so
 * id_make(d.ts, d.node_id, d.sequence, layout, d.extra) of id_decode(id,
 * layout) d gives id back.  A named part of the node in extra (Discord's
 * worker and process) must agree with node_id.
 */
Datum
id_make_extra(PG_FUNCTION_ARGS)
{
	Jsonb	   *extra = PG_GETARG_JSONB_P(4);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 3, &buf);
	IdgenLayout with;
	int64		node = PG_GETARG_INT64(1);
	int64		v;

	with = *l;
	for (int i = 0; i < with.nconsts; i++)
	{
		IdgenField *f = &with.consts[i];

		if (!extra_int(extra, f->name, &v))
			continue;
		if (v < 0 || v >= 64 || ((f->allowed >> v) & 1) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s " INT64_FORMAT " is out of range for layout \"%s\"",
							f->name, v, l->name),
					 errdetail("Layout \"%s\" only makes IDs whose %s is %s.",
							   l->name, f->name, allowed_values(f))));
		f->value = (uint64) v;
	}
	for (int i = 0; i < with.nparts; i++)
	{
		const IdgenField *f = &with.parts[i];

		if (extra_int(extra, f->name, &v) && node >= 0 &&
			(uint64) v != idgen_field_get(f, (uint64) node))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s " INT64_FORMAT " of extra disagrees with node id " INT64_FORMAT,
							f->name, v, node),
					 errdetail("In layout \"%s\" the %s is part of the node id, whose %s is " UINT64_FORMAT ".",
							   l->name, f->name, f->name, idgen_field_get(f, (uint64) node))));
	}
	PG_RETURN_INT64(make_checked(&with, PG_GETARG_TIMESTAMPTZ(0), node,
								 PG_GETARG_INT64(2)));
}

PG_FUNCTION_INFO_V1(id_floor);

/*
 * SQL: idgen.id_floor(ts [, layout]): the smallest ID of that time, as
 * id_make(ts, 0, 0): every ID made at ts or later is at least this, every
 * ID made before ts's tick is below it.  A partition bound.
 */
Datum
id_floor(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 1, &buf);

	PG_RETURN_INT64(make_checked(l, ts, 0, 0));
}

/* A layout's tick as text, for a message: "1 ms", "10 ms", "1 s", "5 us" */
static char *
unit_text(int64 unit_us)
{
	if (unit_us % USECS_PER_SEC == 0)
		return psprintf(INT64_FORMAT " s", unit_us / USECS_PER_SEC);
	if (unit_us % 1000 == 0)
		return psprintf(INT64_FORMAT " ms", unit_us / 1000);
	return psprintf(INT64_FORMAT " us", unit_us);
}

PG_FUNCTION_INFO_V1(id_interval);

/*
 * SQL: idgen.id_interval(span [, layout]): the ID width of a duration, such
 * that the IDs made during [t, t + span) are [id_floor(t), id_floor(t) +
 * width) for any t on a tick.  A day is 24 hours (IDs count UTC time); an
 * interval with months has no fixed length and is refused, as is one that
 * is not a whole number of the layout's ticks: either would give partitions
 * whose bounds fall inside a tick, splitting its IDs between two of them.
 */
Datum
id_interval(PG_FUNCTION_ARGS)
{
	Interval   *span = PG_GETARG_INTERVAL_P(0);
	IdgenLayout buf;
	const IdgenLayout *l = layout_from_arg(fcinfo, 1, &buf);
	char	   *text = DatumGetCString(DirectFunctionCall1(interval_out,
															 IntervalPGetDatum(span)));
	int64		us;
	int64		width = 0;
	IdgenSpanResult result;

	if (span->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval \"%s\" has no fixed length", text),
				 errdetail("A month is 28 to 31 days long, so the IDs of a month have no fixed width."),
				 errhint("Give the interval in days, hours or smaller units.")));
	/*
	 * Past int64 microseconds: too long for any layout, or not positive,
	 * whatever the layout's tick.  Only days can overflow (alone, or added
	 * to a time of their sign), so the days' sign is the interval's.
	 */
	if (pg_mul_s64_overflow((int64) span->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, span->time, &us))
		result = span->day < 0 ? IDGEN_SPAN_NOT_POSITIVE : IDGEN_SPAN_TOO_LONG;
	else
		result = idgen_span_width(l, us, &width);
	switch (result)
	{
		case IDGEN_SPAN_OK:
			break;
		case IDGEN_SPAN_NOT_POSITIVE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("interval \"%s\" is not positive", text),
					 errdetail("An ID range has a positive width.")));
			break;
		case IDGEN_SPAN_NOT_WHOLE_TICKS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("interval \"%s\" is not a whole number of ticks of layout \"%s\"",
							text, l->name),
					 errdetail("The layout's tick is %s, and an ID holds its time only to the tick, so a span that ends inside a tick has no ID bound.",
							   unit_text(l->unit_us)),
					 errhint("Give a multiple of %s.", unit_text(l->unit_us))));
			break;
		case IDGEN_SPAN_NOT_TS_FIRST:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("layout \"%s\" does not start with the timestamp", l->name),
					 errdetail("The IDs of a time span are one integer interval only when the timestamp is above the node and the sequence.")));
			break;
		case IDGEN_SPAN_TOO_LONG:
			{
				/* A field reaching bit 63 (Discord's) holds less than its bits */
				uint64		cap = ((uint64) PG_INT64_MAX) >> l->ts.shift;

				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("interval \"%s\" is too long for layout \"%s\"",
								text, l->name),
						 cap < idgen_field_max(l->ts.bits) ?
						 errdetail("The layout's %d timestamp bits reach the sign bit, and a positive bigint holds at most " UINT64_FORMAT " ticks of %s there.",
								   l->ts.bits, cap, unit_text(l->unit_us)) :
						 errdetail("The layout's %d timestamp bits hold at most " UINT64_FORMAT " ticks of %s.",
								   l->ts.bits, idgen_field_max(l->ts.bits),
								   unit_text(l->unit_us))));
			}
			break;
	}
	PG_RETURN_INT64(width);
}
