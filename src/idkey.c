/*
 * idkey.c
 *		Keys of public IDs and their SQL functions: idgen.id_key_create,
 *		idgen.id_encrypt, idgen.id_decrypt, idgen.id_key_grant and
 *		idgen.id_key_revoke.
 *
 * A key is 32 bytes (AES-256) from pg_strong_random(), made inside the
 * server and stored in idgen.id_key, which only superusers read; these
 * functions read and write it as the table's owner, with a pinned
 * search_path.  The bytes go from the table into an FF1 context (ff1.c)
 * and are wiped from every buffer of this file; no message, log line or
 * result shows them.  The cipher is FF1 with radix 2, n = width and an
 * empty tweak: a permutation of [0, 2^width).
 *
 * Per backend, a cache maps a key's name to its prepared FF1 context (the
 * AES key schedule in an OpenSSL EVP_CIPHER_CTX, freed when the cache is
 * reset).  A key's bytes and width never change and a key is never deleted
 * (the table's trigger refuses both), so an entry stays right while the
 * table it came from exists; the cache is reset when a transaction or
 * subtransaction aborts (a key created there and cached is gone) and on a
 * relation-cache invalidation of the table or of every relation (DROP
 * EXTENSION; id_key_revoke sends the latter).  An invalidation only marks
 * the cache: the next call resets it, so no entry goes away under a call.
 *
 * Privileges: a key's owner, its members and superusers use it; other roles
 * need 'use' granted with id_key_grant.  The answer is read with the latest
 * snapshot and kept while the privilege generation of segment_acl.c (in
 * shared memory) stays where it was when the check began: statement
 * triggers on idgen.id_key_privilege and on a key's owner make it move
 * when their transaction ends, after the commit is visible, and a change
 * of roles moves this backend's part.  So a statement that starts after a
 * revoke commits is refused, in a REPEATABLE READ transaction too.
 * Without the preload (no shared memory) the answer is kept for the
 * current statement only (its start time and the backend's transaction
 * count).  The functions
 * are PARALLEL RESTRICTED, so they never run in a parallel worker; in the
 * leader during a parallel query the check reads with a fresh catalog
 * snapshot, which parallel mode allows.  A call whose arguments are all
 * constants is folded when the statement is planned, so a plan that
 * PostgreSQL keeps holds its result; id_key_revoke sends an invalidation
 * of every relation when it commits, which makes every backend plan again
 * its kept plans that read a relation (not those that read none).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "ff1.h"
#include "idgen.h"
#include "segment.h"

#define IDKEY_NAME_MAX 63
#define IDKEY_BYTES 32

typedef struct IdKeyEntry
{
	char		name[IDKEY_NAME_MAX + 1];	/* hash key, zero-padded */
	IdgenFF1	ff1;
	unsigned	width;
	/* The privilege answer of the current statement (or generation) */
	TimestampTz use_stmt;
	uint64		use_xact;
	uint64		use_gen;		/* privilege generation; 0: none */
	Oid			use_role;
	bool		use_ok;
} IdKeyEntry;

static HTAB *key_cache = NULL;
static IdKeyEntry *last_entry = NULL;
static bool cache_stale = false;
static Oid	cached_relid = InvalidOid;
static uint64 xact_count = 0;	/* transactions ended in this backend */
static SPIPlanPtr load_plan = NULL;
static SPIPlanPtr use_plan = NULL;

/* Free every FF1 context and empty the cache */
static void
reset_cache(void)
{
	HASH_SEQ_STATUS seq;
	IdKeyEntry *e;

	last_entry = NULL;
	cache_stale = false;
	cached_relid = InvalidOid;
	if (key_cache == NULL)
		return;
	hash_seq_init(&seq, key_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		idgen_ff1_free(&e->ff1);
	hash_destroy(key_cache);
	key_cache = NULL;
}

static void
idkey_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		reset_cache();
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		xact_count++;
}

static void
idkey_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		reset_cache();
}

/* Mark the cache for a reset when the key table goes (or every relation) */
static void
idkey_relcache_callback(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == cached_relid)
		cache_stale = true;
}

/* A role or membership changed: answers found through one are stale */
static void
idkey_role_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	idgen_segment_acl_local++;
}

/* Register the callbacks once per backend */
static void
register_callbacks(void)
{
	static bool registered = false;

	if (registered)
		return;
	RegisterXactCallback(idkey_xact_callback, NULL);
	RegisterSubXactCallback(idkey_subxact_callback, NULL);
	CacheRegisterRelcacheCallback(idkey_relcache_callback, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHOID, idkey_role_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, idkey_role_changed, (Datum) 0);
	registered = true;
}

/*
 * The privilege generation (segment_acl.c's, shared with segment tags):
 * it moves when a transaction that changed idgen.id_key_privilege or a
 * key's owner ends (their statement triggers), and in this backend at once
 * and on a change of roles; 0 without the preload (no shared memory): the
 * answer is then kept for the current statement only
 */
static uint64
privilege_generation(void)
{
	if (idgen_segment == NULL)
		return 0;
	return 1 + pg_atomic_read_u64(&idgen_segment->acl_generation) +
		idgen_segment_acl_local;
}

/* The OID of idgen.id_key, or an error if this database has none */
static Oid
key_table_relid(void)
{
	Oid			relid = idgen_table_relid("id_key");

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table idgen.id_key does not exist"),
				 errhint("Create extension idgen in this database, or update it with ALTER EXTENSION idgen UPDATE.")));
	return relid;
}

/* Become the owner of idgen.id_key (restricted), saving the caller */
static void
become_table_owner(Oid relid, Oid *save_userid, int *save_sec)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(owner, *save_sec |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

/* Error unless name is a valid key name (1 to 63 bytes) */
static void
check_key_name(const char *name, int len)
{
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key name cannot be empty")));
	if (len > IDKEY_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("key name is too long"),
				 errdetail("A key name has at most %d bytes; this one has %d.",
						   IDKEY_NAME_MAX, len)));
}

/* The "does not exist" error of a key */
static void
unknown_key_error(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("key \"%s\" of public IDs does not exist", name),
			 errhint("Create it with idgen.id_key_create().")));
}

/* Run a saved plan, preparing it first if need be */
static int
run_plan(SPIPlanPtr *plan, const char *sql, int nargs, Oid *types,
		 Datum *args, const char *nulls, bool read_only, Oid relid)
{
	if (*plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL)
			elog(ERROR, "could not prepare a query of idgen.id_key: %s",
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "could not keep a query of idgen.id_key");
		*plan = p;
	}
	if (!read_only)
		return SPI_execute_plan(*plan, args, nulls, false, 0);
	/* The latest committed rows, in parallel mode too */
	return idgen_spi_read_fresh(*plan, args, nulls, relid, 1);
}

/*
 * The cache entry of the key named by text t, loaded on first use; error
 * if there is no such key
 */
static IdKeyEntry *
key_entry(text *t)
{
	const char *p = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	char		name[IDKEY_NAME_MAX + 1];
	IdKeyEntry *e;
	bool		found;

	if (cache_stale)
		reset_cache();
	if (last_entry != NULL && len <= IDKEY_NAME_MAX &&
		last_entry->name[len] == '\0' && memcmp(last_entry->name, p, len) == 0)
		return last_entry;
	check_key_name(p, len);
	memset(name, 0, sizeof(name));
	memcpy(name, p, len);
	register_callbacks();
	if (key_cache == NULL)
	{
		HASHCTL		info;

		info.keysize = IDKEY_NAME_MAX + 1;
		info.entrysize = sizeof(IdKeyEntry);
		key_cache = hash_create("idgen public id keys", 16, &info,
								HASH_ELEM | HASH_STRINGS);
	}
	e = hash_search(key_cache, name, HASH_FIND, &found);
	if (e == NULL)
	{
		Oid			relid = key_table_relid();
		Oid			types[1] = {TEXTOID};
		Datum		args[1];
		Oid			save_userid;
		int			save_sec;
		uint8_t		keybuf[IDKEY_BYTES];
		int			width = 0;
		int			rc = IDGEN_FF1_OK;
		bool		have = false;

		args[0] = CStringGetTextDatum(name);
		become_table_owner(relid, &save_userid, &save_sec);
		SPI_connect();
		if (run_plan(&load_plan,
					 "SELECT k.width, k.key FROM idgen.id_key k "
					 "WHERE k.name OPERATOR(pg_catalog.=) $1",
					 1, types, args, NULL, true, relid) != SPI_OK_SELECT)
			elog(ERROR, "could not read idgen.id_key");
		if (SPI_processed == 1)
		{
			HeapTuple	tup = SPI_tuptable->vals[0];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull1,
						isnull2;
			Datum		w = SPI_getbinval(tup, desc, 1, &isnull1);
			Datum		k = SPI_getbinval(tup, desc, 2, &isnull2);

			if (!isnull1 && !isnull2)
			{
				bytea	   *b = DatumGetByteaPP(k);

				width = DatumGetInt32(w);
				if (VARSIZE_ANY_EXHDR(b) == IDKEY_BYTES &&
					width >= IDGEN_FF1_MIN_WIDTH && width <= IDGEN_FF1_MAX_WIDTH)
				{
					memcpy(keybuf, VARDATA_ANY(b), IDKEY_BYTES);
					have = true;
				}
				/* Leave no copy of the bytes behind in SPI's memory */
				explicit_bzero(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
			}
		}
		SPI_finish();
		SetUserIdAndSecContext(save_userid, save_sec);
		if (!have)
			unknown_key_error(name);
		e = hash_search(key_cache, name, HASH_ENTER, &found);
		memset(&e->ff1, 0, sizeof(e->ff1));
		rc = idgen_ff1_init(&e->ff1, keybuf, IDKEY_BYTES, 2);
		explicit_bzero(keybuf, sizeof(keybuf));
		if (rc != IDGEN_FF1_OK)
		{
			hash_search(key_cache, name, HASH_REMOVE, NULL);
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("could not prepare key \"%s\" of public IDs: %s",
							name, idgen_ff1_strerror(rc))));
		}
		e->width = width;
		e->use_stmt = 0;
		e->use_xact = 0;
		e->use_gen = 0;
		e->use_role = InvalidOid;
		e->use_ok = false;
		cached_relid = relid;
	}
	last_entry = e;
	return e;
}

/* Error unless the current role may use key e in this statement */
static void
check_use(IdKeyEntry *e)
{
	Oid			role = GetUserId();
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	uint64		gen = privilege_generation();

	if (e->use_ok && e->use_role == role &&
		((gen != 0 && e->use_gen == gen) ||
		 (e->use_stmt == stmt && e->use_xact == xact_count)))
		return;
	if (!superuser_arg(role))
	{
		Oid			relid = key_table_relid();
		Oid			types[2] = {TEXTOID, OIDOID};
		Datum		args[2];
		Oid			save_userid;
		int			save_sec;
		bool		ok = false;
		char		name[IDKEY_NAME_MAX + 1];

		strlcpy(name, e->name, sizeof(name));
		args[0] = CStringGetTextDatum(name);
		args[1] = ObjectIdGetDatum(role);
		become_table_owner(relid, &save_userid, &save_sec);
		SPI_connect();
		if (run_plan(&use_plan,
					 "SELECT pg_catalog.pg_has_role($2, k.owner_id, 'USAGE') "
					 "OR EXISTS (SELECT FROM idgen.id_key_privilege p "
					 "WHERE p.key_name OPERATOR(pg_catalog.=) k.name "
					 "AND p.privilege OPERATOR(pg_catalog.=) 'use' "
					 "AND (p.grantee_id OPERATOR(pg_catalog.=) 0 "
					 "OR pg_catalog.pg_has_role($2, p.grantee_id, 'USAGE'))) "
					 "FROM idgen.id_key k WHERE k.name OPERATOR(pg_catalog.=) $1",
					 2, types, args, NULL, true, relid) != SPI_OK_SELECT)
			elog(ERROR, "could not read the privileges of a key of public IDs");
		if (SPI_processed == 1)
		{
			bool		isnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull);

			ok = !isnull && DatumGetBool(v);
		}
		SPI_finish();
		SetUserIdAndSecContext(save_userid, save_sec);
		/* An invalidation during the read may have marked the cache */
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for key \"%s\" of public IDs", name),
					 errdetail("Role \"%s\" needs privilege use on the key.",
							   GetUserNameFromId(role, false)),
					 errhint("The key's owner can grant it with idgen.id_key_grant('%s', 'use', '%s').",
							 name, GetUserNameFromId(role, false))));
	}
	e->use_ok = true;
	e->use_role = role;
	e->use_stmt = stmt;
	e->use_xact = xact_count;
	/* read before the check: a change committed since moved it */
	e->use_gen = gen;
}

/* Error for an integer outside a key's domain */
static void
range_error(const char *what, int64 v, IdKeyEntry *e)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("%s " INT64_FORMAT " is out of range for key \"%s\"",
					what, v, e->name),
			 errdetail("Key \"%s\" has width %u: values from 0 to " INT64_FORMAT ".",
					   e->name, e->width,
					   (int64) ((UINT64CONST(1) << e->width) - 1))));
}

/* id_encrypt and id_decrypt */
static Datum
crypt_call(FunctionCallInfo fcinfo, bool encrypt)
{
	int64		in = PG_GETARG_INT64(0);
	IdKeyEntry *e = key_entry(PG_GETARG_TEXT_PP(1));
	uint64		out = 0;
	int			rc;

	check_use(e);
	if (in < 0 || (uint64) in >= (UINT64CONST(1) << e->width))
		range_error(encrypt ? "id" : "public ID", in, e);
	rc = encrypt ?
		idgen_ff1_encrypt_u64(&e->ff1, NULL, 0, e->width, (uint64) in, &out) :
		idgen_ff1_decrypt_u64(&e->ff1, NULL, 0, e->width, (uint64) in, &out);
	if (rc == IDGEN_FF1_ERANGE)
		range_error(encrypt ? "id" : "public ID", in, e);
	if (rc != IDGEN_FF1_OK)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("could not %s with key \"%s\": %s",
						encrypt ? "encrypt" : "decrypt", e->name,
						idgen_ff1_strerror(rc))));
	PG_RETURN_INT64((int64) out);
}

PG_FUNCTION_INFO_V1(id_encrypt);

/* SQL: idgen.id_encrypt(id bigint, key text) */
Datum
id_encrypt(PG_FUNCTION_ARGS)
{
	return crypt_call(fcinfo, true);
}

PG_FUNCTION_INFO_V1(id_decrypt);

/* SQL: idgen.id_decrypt(public_id bigint, key text) */
Datum
id_decrypt(PG_FUNCTION_ARGS)
{
	return crypt_call(fcinfo, false);
}

/* The key name argument argno, checked; error if null */
static char *
name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("key name cannot be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	check_key_name(name, strlen(name));
	return name;
}

PG_FUNCTION_INFO_V1(id_key_create);

/* SQL: idgen.id_key_create(name text, width int) */
Datum
id_key_create(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, 0);
	int32		width;
	Oid			relid = key_table_relid();
	Oid			role = GetUserId();
	char	   *owner = GetUserNameFromId(role, false);
	bytea	   *key;
	Oid			types[5] = {TEXTOID, NAMEOID, OIDOID, INT4OID, BYTEAOID};
	Datum		args[5];
	Oid			save_userid;
	int			save_sec;
	int			ret;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("width of a key cannot be null")));
	width = PG_GETARG_INT32(1);
	if (width < IDGEN_FF1_MIN_WIDTH || width > IDGEN_FF1_MAX_WIDTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("width of a key must be between %d and %d",
						IDGEN_FF1_MIN_WIDTH, IDGEN_FF1_MAX_WIDTH),
				 errdetail("The width given was %d.", width)));

	key = (bytea *) palloc(VARHDRSZ + IDKEY_BYTES);
	SET_VARSIZE(key, VARHDRSZ + IDKEY_BYTES);
	if (!pg_strong_random(VARDATA(key), IDKEY_BYTES))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random key")));
	args[0] = CStringGetTextDatum(name);
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(owner));
	args[2] = ObjectIdGetDatum(role);
	args[3] = Int32GetDatum(width);
	args[4] = PointerGetDatum(key);

	become_table_owner(relid, &save_userid, &save_sec);
	SPI_connect();
	ret = SPI_execute_with_args("SELECT FROM idgen.id_key k "
								"WHERE k.name OPERATOR(pg_catalog.=) $1",
								1, types, args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.id_key");
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("key \"%s\" of public IDs already exists", name),
				 errdetail("A key's name is never given to other bytes, so that public IDs made with it keep their meaning."),
				 errhint("Choose another name.")));
	ret = SPI_execute_with_args("INSERT INTO idgen.id_key (name, owner, owner_id, width, key) "
								"VALUES ($1, $2, $3, $4, $5)",
								5, types, args, NULL, false, 0);
	explicit_bzero(VARDATA(key), IDKEY_BYTES);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not insert into idgen.id_key");
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	PG_RETURN_VOID();
}

/* id_key_grant and id_key_revoke */
static Datum
grant_call(FunctionCallInfo fcinfo, bool grant)
{
	char	   *name = name_arg(fcinfo, 0);
	char	   *priv;
	char	   *grantee;
	Oid			grantee_id;
	Oid			relid = key_table_relid();
	Oid			role = GetUserId();
	Oid			types[3] = {TEXTOID, NAMEOID, OIDOID};
	Datum		args[3];
	Oid			save_userid;
	int			save_sec;
	Oid			owner_id = InvalidOid;
	bool		owner_null = true;
	int			ret;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("privilege and grantee cannot be null")));
	priv = text_to_cstring(PG_GETARG_TEXT_PP(1));
	grantee = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (pg_strcasecmp(priv, "use") != 0 && pg_strcasecmp(priv, "all") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized privilege on a key of public IDs: \"%s\"", priv),
				 errhint("The privilege of a key is use (or all).")));
	if (pg_strcasecmp(grantee, "public") == 0)
	{
		grantee = "public";
		grantee_id = InvalidOid;
	}
	else
		grantee_id = get_role_oid(grantee, false);

	args[0] = CStringGetTextDatum(name);
	become_table_owner(relid, &save_userid, &save_sec);
	SPI_connect();
	ret = SPI_execute_with_args("SELECT k.owner_id FROM idgen.id_key k "
								"WHERE k.name OPERATOR(pg_catalog.=) $1",
								1, types, args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.id_key");
	if (SPI_processed == 0)
		unknown_key_error(name);
	owner_id = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
											  SPI_tuptable->tupdesc, 1,
											  &owner_null));
	if (!superuser_arg(role) &&
		(owner_null || !has_privs_of_role(role, owner_id)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of key \"%s\" of public IDs to %s its privileges",
						name, grant ? "grant" : "revoke")));
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(grantee));
	args[2] = ObjectIdGetDatum(grantee_id);
	if (grant)
		ret = SPI_execute_with_args("INSERT INTO idgen.id_key_privilege "
									"(key_name, privilege, grantee, grantee_id) "
									"VALUES ($1, 'use', $2, $3) ON CONFLICT DO NOTHING",
									3, types, args, NULL, false, 0);
	else
		ret = SPI_execute_with_args("DELETE FROM idgen.id_key_privilege p "
									"WHERE p.key_name OPERATOR(pg_catalog.=) $1 "
									"AND p.grantee OPERATOR(pg_catalog.=) $2",
									2, types, args, NULL, false, 0);
	if (ret != (grant ? SPI_OK_INSERT : SPI_OK_DELETE))
		elog(ERROR, "could not write idgen.id_key_privilege");
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	/* Plans that folded a call with constant arguments are planned again */
	if (!grant)
		CacheInvalidateRelcacheAll();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(id_key_grant);

/* SQL: idgen.id_key_grant(key text, privilege text, grantee text) */
Datum
id_key_grant(PG_FUNCTION_ARGS)
{
	return grant_call(fcinfo, true);
}

PG_FUNCTION_INFO_V1(id_key_revoke);

/* SQL: idgen.id_key_revoke(key text, privilege text, grantee text) */
Datum
id_key_revoke(PG_FUNCTION_ARGS)
{
	return grant_call(fcinfo, false);
}

/*
 * See idgen.h.  A key dropped with the extension can never be made again
 * (id_key_create draws new bytes), so every public ID made with it would
 * decrypt to nothing: refused, as PostgreSQL refuses a DROP that would take
 * dependent objects along, unless the superuser says so for the session.
 * The drop holds the table's AccessExclusiveLock; a fresh snapshot counts
 * every committed key, also under an older REPEATABLE READ snapshot.
 */
void
idgen_id_key_refuse_drop(Oid relid)
{
	SPIPlanPtr	plan;
	int64		n;
	bool		isnull;

	if (idgen_allow_key_drop)
		return;
	SPI_connect();
	plan = SPI_prepare("SELECT pg_catalog.count(*) FROM idgen.id_key", 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare a query of idgen.id_key: %s",
			 SPI_result_code_string(SPI_result));
	if (idgen_spi_read_fresh(plan, NULL, NULL, relid, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not count the keys of public IDs");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	if (n > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop table idgen.id_key because it holds " INT64_FORMAT " key%s of public IDs",
						n, n == 1 ? "" : "s"),
				 errdetail("A public ID made with a dropped key can never be decrypted again: a key made anew under its name has other bytes."),
				 errhint("Keep the keys first (pg_dump --data-only --table=idgen.id_key), then run SET idgen.allow_key_drop = on in this session and drop again.")));
}
