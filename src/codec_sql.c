/*
 * codec_sql.c
 *		SQL functions for the text forms of IDs: id_to_base62,
 *		id_from_base62, id_to_friendly and id_from_friendly.
 *
 * The encoders and decoders are in codec.c; this file converts arguments
 * and turns their refusals into errors that quote the text.  No shared
 * state; the server's layout is read-only after start-up.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "codec.h"
#include "idgen.h"

/* Layout from optional argument n (absent: the server's idgen.layout) */
static const IdgenLayout *
friendly_layout(FunctionCallInfo fcinfo, int n, IdgenLayout *buf)
{
	char	   *spec = NULL;

	if (PG_NARGS() > n)
		spec = text_to_cstring(PG_GETARG_TEXT_PP(n));
	return idgen_layout_arg(spec, buf);
}

/*
 * SQLSTATE for an encoder's or decoder's refusal: a time outside the
 * layout's range is 22008, as id_make's timestamp is
 */
static int
codec_errcode(const IdgenCodecError *err)
{
	if (err->layout)
		return ERRCODE_FEATURE_NOT_SUPPORTED;
	if (err->time)
		return ERRCODE_DATETIME_VALUE_OUT_OF_RANGE;
	if (err->range)
		return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
	return ERRCODE_INVALID_TEXT_REPRESENTATION;
}

PG_FUNCTION_INFO_V1(id_to_base62);

/*
 * SQL: idgen.id_to_base62(id bigint [, pad boolean]) returns text: 11
 * characters, or with pad false CosId's unpadded form (1 to 11)
 */
Datum
id_to_base62(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	bool		pad = PG_NARGS() < 2 || PG_GETARG_BOOL(1);
	char		buf[IDGEN_BASE62_LEN + 1];

	if (!(pad ? idgen_base62_encode(id, buf) :
		  idgen_base62_encode_unpadded(id, buf)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("cannot encode negative ID " INT64_FORMAT " in base62", id),
				 errdetail("Base62 IDs stand for non-negative bigints only.")));
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

PG_FUNCTION_INFO_V1(id_from_base62);

/* SQL: idgen.id_from_base62(text) returns bigint */
Datum
id_from_base62(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	int64		id;
	IdgenCodecError err;

	if (!idgen_base62_decode(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &id, &err))
	{
		if (err.range)
			ereport(ERROR,
					(errcode(codec_errcode(&err)),
					 errmsg("base62 ID \"%s\" is out of range for type bigint",
							text_to_cstring(t)),
					 errdetail("%s", err.detail)));
		ereport(ERROR,
				(errcode(codec_errcode(&err)),
				 errmsg("invalid base62 ID: \"%s\"", text_to_cstring(t)),
				 errdetail("%s", err.detail)));
	}
	PG_RETURN_INT64(id);
}

/*
 * Offset from UTC, in microseconds, of time zone zone (argument n, when
 * given) at the instant unix_us: PostgreSQL's timezone(zone, timestamptz),
 * so every zone name, abbreviation and offset it knows works the same here
 */
static int64
zone_offset(FunctionCallInfo fcinfo, int n, int64 unix_us)
{
	TimestampTz utc = unix_us - UNIX_TO_PG_US;
	Timestamp	local;

	if (PG_NARGS() <= n)
		return 0;
	local = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone,
												  PG_GETARG_DATUM(n),
												  TimestampTzGetDatum(utc)));
	return local - utc;
}

/*
 * The instant (Unix microseconds) of local time local_us in zone zone
 * (argument n), as CosId reads its friendly form (Java's
 * ZonedDateTime.of): a local time that occurs twice, when clocks moved
 * back, is the earlier instant (the offset before the change); a local time
 * the clocks skipped is moved forward by the length of the gap (the offset
 * before the change, too).
 *
 * PostgreSQL's timestamp_zone does the latter already, but reads a repeated
 * time with the offset after the change, the later instant.  So the offsets
 * in force some time before that instant are tried: any offset o larger
 * than PostgreSQL's for which local_us - o is an instant whose offset is o
 * is an earlier reading of the same local time, and the largest such offset
 * gives the earliest.  The distances looked back cover every change of
 * offset of the tz database (at most a day, usually an hour).
 */
static int64
local_to_utc(FunctionCallInfo fcinfo, int n, int64 local_us)
{
	static const int64 back_us[] = {
		INT64CONST(900000000),	/* 15 min */
		INT64CONST(1800000000),	/* 30 min */
		INT64CONST(3600000000),	/* 1 h */
		INT64CONST(7200000000),	/* 2 h */
		INT64CONST(10800000000),	/* 3 h */
		INT64CONST(86400000000)	/* 1 day */
	};
	Timestamp	local = local_us - UNIX_TO_PG_US;
	TimestampTz utc;
	int64		utc_us;
	int64		offset;
	int64		best;

	utc = DatumGetTimestampTz(DirectFunctionCall2(timestamp_zone,
												  PG_GETARG_DATUM(n),
												  TimestampGetDatum(local)));
	utc_us = utc + UNIX_TO_PG_US;
	offset = local_us - utc_us;
	best = offset;
	for (int i = 0; i < lengthof(back_us); i++)
	{
		int64		o = zone_offset(fcinfo, n, utc_us - back_us[i]);

		if (o > best && zone_offset(fcinfo, n, local_us - o) == o)
			best = o;
	}
	return local_us - best;
}

PG_FUNCTION_INFO_V1(id_to_friendly);

/*
 * SQL: idgen.id_to_friendly(id bigint [, layout text [, zone text]]) returns
 * text of the form yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for
 * layouts of whole seconds), time in UTC or in the zone given
 */
Datum
id_to_friendly(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	IdgenLayout buf;
	const IdgenLayout *l;
	char		out[IDGEN_FRIENDLY_MAXLEN + 1];
	IdgenCodecError err;
	int64		offset = 0;

	l = friendly_layout(fcinfo, 1, &buf);
	if (PG_NARGS() > 2)
	{
		IdgenParts p;

		/*
		 * The zone is checked whatever the ID (an unknown zone is 22023);
		 * an ID the encoder refuses gets its error below
		 */
		idgen_decompose(l, (uint64) id, &p);
		if (id >= 0 && l->unit_us > 0 && p.tick <= idgen_layout_ts_max(l))
			offset = zone_offset(fcinfo, 2, idgen_tick_start(l, p.tick));
		else
			(void) zone_offset(fcinfo, 2, l->epoch_us);
	}
	if (!idgen_friendly_encode_local(l, id, offset, out, sizeof(out), &err))
		ereport(ERROR,
				(errcode(codec_errcode(&err)),
				 errmsg("cannot show ID " INT64_FORMAT " in friendly form", id),
				 errdetail("%s", err.detail)));
	PG_RETURN_TEXT_P(cstring_to_text(out));
}

PG_FUNCTION_INFO_V1(id_from_friendly);

/*
 * SQL: idgen.id_from_friendly(text [, layout text [, zone text]]) returns
 * bigint; the time is read in UTC or in the zone given
 */
Datum
id_from_friendly(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	IdgenLayout buf;
	const IdgenLayout *l;
	int64		id;
	IdgenCodecError err;
	IdgenFriendlyText parts;
	bool		ok;

	l = friendly_layout(fcinfo, 1, &buf);
	/* The zone is checked whatever the text (an unknown zone is 22023) */
	if (PG_NARGS() > 2)
		(void) zone_offset(fcinfo, 2, l->epoch_us);
	ok = idgen_friendly_parse(l, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &parts,
							  &err);
	if (ok && PG_NARGS() > 2)
		parts.local_us = local_to_utc(fcinfo, 2, parts.local_us);
	if (ok)
		ok = idgen_friendly_compose(l, &parts, parts.local_us, &id, &err);
	if (!ok)
	{
		if (err.layout)
			ereport(ERROR,
					(errcode(codec_errcode(&err)),
					 errmsg("layout \"%s\" has no friendly form", l->name),
					 errdetail("%s", err.detail)));
		if (err.range)
			ereport(ERROR,
					(errcode(codec_errcode(&err)),
					 errmsg("friendly ID \"%s\" is out of range", text_to_cstring(t)),
					 errdetail("%s", err.detail)));
		ereport(ERROR,
				(errcode(codec_errcode(&err)),
				 errmsg("invalid friendly ID: \"%s\"", text_to_cstring(t)),
				 errdetail("%s", err.detail)));
	}
	PG_RETURN_INT64(id);
}
