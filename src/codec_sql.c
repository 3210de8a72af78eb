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

/* SQLSTATE for an encoder's or decoder's refusal */
static int
codec_errcode(const IdgenCodecError *err)
{
	if (err->layout)
		return ERRCODE_FEATURE_NOT_SUPPORTED;
	if (err->range)
		return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
	return ERRCODE_INVALID_TEXT_REPRESENTATION;
}

PG_FUNCTION_INFO_V1(id_to_base62);

/* SQL: idgen.id_to_base62(id bigint) returns text, 11 characters */
Datum
id_to_base62(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char		buf[IDGEN_BASE62_LEN + 1];

	if (!idgen_base62_encode(id, buf))
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

PG_FUNCTION_INFO_V1(id_to_friendly);

/*
 * SQL: idgen.id_to_friendly(id bigint [, layout text]) returns text of the
 * form yyyyMMddHHmmssSSS-node-sequence, time in UTC
 */
Datum
id_to_friendly(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	IdgenLayout buf;
	const IdgenLayout *l;
	char		out[IDGEN_FRIENDLY_MAXLEN + 1];
	IdgenCodecError err;

	l = friendly_layout(fcinfo, 1, &buf);
	if (!idgen_friendly_encode(l, id, out, sizeof(out), &err))
		ereport(ERROR,
				(errcode(codec_errcode(&err)),
				 errmsg("cannot show ID " INT64_FORMAT " in friendly form", id),
				 errdetail("%s", err.detail)));
	PG_RETURN_TEXT_P(cstring_to_text(out));
}

PG_FUNCTION_INFO_V1(id_from_friendly);

/* SQL: idgen.id_from_friendly(text [, layout text]) returns bigint */
Datum
id_from_friendly(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	IdgenLayout buf;
	const IdgenLayout *l;
	int64		id;
	IdgenCodecError err;

	l = friendly_layout(fcinfo, 1, &buf);
	if (!idgen_friendly_decode(l, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &id,
							   &err))
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
