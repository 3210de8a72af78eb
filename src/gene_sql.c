/*
 * gene_sql.c
 *		SQL functions for gene IDs: gene_of, gene_id and gene_decode.
 *
 * The hashing is in gene.c; this file converts arguments and reports
 * errors.  Only gene_id(key, bits) touches shared state, through
 * idgen_snowflake_next (see snowflake.c for its locking rules); everything
 * else is a pure function of its arguments.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"

#include "gene.h"
#include "idgen.h"
#include "snowflake.h"

/* Refuse a gene width outside 1 to 31 */
static void
check_gene_bits(int32 bits)
{
	if (bits < IDGEN_GENE_MIN_BITS || bits > IDGEN_GENE_MAX_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gene bits %d are out of range", bits),
				 errdetail("A gene has from %d to %d bits.",
						   IDGEN_GENE_MIN_BITS, IDGEN_GENE_MAX_BITS)));
}

/*
 * Gene of a text key: Java's String.hashCode() of the key's UTF-16 code
 * units, masked.  The key is hashed as UTF-8, converted from the database
 * encoding if that is not UTF8, so every database gives a key the gene a
 * Java application computes for the same characters.
 */
static int32
text_gene(text *key, int32 bits)
{
	const char *s = VARDATA_ANY(key);
	int			len = VARSIZE_ANY_EXHDR(key);
	int32		gene;

	if (GetDatabaseEncoding() != PG_UTF8)
	{
		const char *utf8 = pg_server_to_any(s, len, PG_UTF8);

		if (utf8 != s)
			len = strlen(utf8);
		s = utf8;
	}
	if (!idgen_gene_of_text(s, len, bits, &gene))
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("gene key is not valid UTF-8"),
				 errdetail("Text keys are hashed as Java strings, so they must be convertible to UTF-8.")));
	return gene;
}

/* (origin << bits) | gene, refusing an origin that does not fit */
static int64
gene_compose(int64 origin, int32 bits, int32 gene)
{
	int64		max_origin = PG_INT64_MAX >> bits;

	if (origin < 0 || origin > max_origin)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("origin " INT64_FORMAT " does not fit a gene ID with %d gene bits",
						origin, bits),
				 errdetail("With %d gene bits the origin must be between 0 and " INT64_FORMAT ".",
						   bits, max_origin)));
	return (origin << bits) | gene;
}

PG_FUNCTION_INFO_V1(gene_of_text);

/* SQL: idgen.gene_of(key text, bits int) returns int */
Datum
gene_of_text(PG_FUNCTION_ARGS)
{
	text	   *key = PG_GETARG_TEXT_PP(0);
	int32		bits = PG_GETARG_INT32(1);

	check_gene_bits(bits);
	PG_RETURN_INT32(text_gene(key, bits));
}

PG_FUNCTION_INFO_V1(gene_of_int8);

/* SQL: idgen.gene_of(key bigint, bits int) returns int: the key's low bits */
Datum
gene_of_int8(PG_FUNCTION_ARGS)
{
	int64		key = PG_GETARG_INT64(0);
	int32		bits = PG_GETARG_INT32(1);

	check_gene_bits(bits);
	PG_RETURN_INT32(idgen_gene_of_int(key, bits));
}

PG_FUNCTION_INFO_V1(gene_id_origin_text);

/* SQL: idgen.gene_id(origin bigint, key text, bits int) returns bigint */
Datum
gene_id_origin_text(PG_FUNCTION_ARGS)
{
	int64		origin = PG_GETARG_INT64(0);
	text	   *key = PG_GETARG_TEXT_PP(1);
	int32		bits = PG_GETARG_INT32(2);

	check_gene_bits(bits);
	PG_RETURN_INT64(gene_compose(origin, bits, text_gene(key, bits)));
}

PG_FUNCTION_INFO_V1(gene_id_origin_int8);

/* SQL: idgen.gene_id(origin bigint, key bigint, bits int) returns bigint */
Datum
gene_id_origin_int8(PG_FUNCTION_ARGS)
{
	int64		origin = PG_GETARG_INT64(0);
	int64		key = PG_GETARG_INT64(1);
	int32		bits = PG_GETARG_INT32(2);

	check_gene_bits(bits);
	PG_RETURN_INT64(gene_compose(origin, bits, idgen_gene_of_int(key, bits)));
}

PG_FUNCTION_INFO_V1(gene_id_text);

/*
 * SQL: idgen.gene_id(key text, bits int) returns bigint: a snowflake ID from
 * the shared generator whose low bits are the key's gene
 */
Datum
gene_id_text(PG_FUNCTION_ARGS)
{
	text	   *key = PG_GETARG_TEXT_PP(0);
	int32		bits = PG_GETARG_INT32(1);

	idgen_require_loaded();
	check_gene_bits(bits);
	PG_RETURN_INT64(idgen_snowflake_next(bits, (uint64) text_gene(key, bits)));
}

PG_FUNCTION_INFO_V1(gene_id_int8);

/* SQL: idgen.gene_id(key bigint, bits int) returns bigint */
Datum
gene_id_int8(PG_FUNCTION_ARGS)
{
	int64		key = PG_GETARG_INT64(0);
	int32		bits = PG_GETARG_INT32(1);

	idgen_require_loaded();
	check_gene_bits(bits);
	PG_RETURN_INT64(idgen_snowflake_next(bits,
										 (uint64) idgen_gene_of_int(key, bits)));
}

PG_FUNCTION_INFO_V1(gene_decode);

/* SQL: idgen.gene_decode(id bigint, bits int, OUT origin bigint, OUT gene int) */
Datum
gene_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	int32		bits = PG_GETARG_INT32(1);
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	check_gene_bits(bits);
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID " INT64_FORMAT " is negative", id),
				 errdetail("Gene IDs are never negative.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	values[0] = Int64GetDatum(id >> bits);
	values[1] = Int32GetDatum((int32) ((uint64) id & idgen_gene_mask(bits)));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
