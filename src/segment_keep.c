/*
 * segment_keep.c
 *		Segment tags outlive the extension: what DROP EXTENSION idgen would
 *		forget is kept in the data directory, and CREATE EXTENSION idgen
 *		reads it back.  The same object access hook refuses to drop keys
 *		of public IDs (idkey.c).
 *
 * A tag's max_id lives in idgen.segment_alloc (and idgen.segment_dropped for
 * dropped tags), tables of the extension: DROP EXTENSION idgen, or DROP
 * SCHEMA idgen CASCADE, drops them, and a tag created again afterwards would
 * hand out its IDs a second time.  So, as the snowflake reservation is kept
 * in the state file (snowflake_state.c), the last max_id of every tag is
 * written, when the extension is dropped, to the file "idgen.tags.<database
 * OID>" in the data directory.  CREATE EXTENSION idgen (the update script of
 * 0.4.0, which every install runs) copies it into table idgen.segment_floor,
 * whose rows are floors: segment_create refuses to start a tag at or below
 * its floor, and a row inserted otherwise (pg_restore of an older dump,
 * segment_import_leaf) is raised to it by the trigger of segment_alloc.
 *
 * The file is written when the tag tables are dropped (the object access
 * hook sees each drop before the table goes, whatever the statement: DROP
 * EXTENSION, DROP SCHEMA ... CASCADE, DROP OWNED), durably (write, fsync,
 * durable rename), merged with what an earlier drop kept.  A drop that rolls
 * back leaves a file of floors no higher than the tags' max_id: harmless.
 * DROP DATABASE removes the database's file (module.c).  The file is the
 * server's, not the database's: it is copied by pg_basebackup but not sent
 * to standbys (docs/durability.md).
 *
 * Runs in the backend that drops or creates the extension: with the
 * preload the hook is in every backend; without it (a central segment
 * server), the extension's event trigger idgen_segment_keep loads the
 * library before a drop, and _PG_init installs the hook.  No shared memory.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "idgen.h"
#include "segment.h"

#define KEEP_MAGIC 0x49444754	/* "IDGT" */
#define KEEP_VERSION 1

/* One kept tag */
typedef struct KeptTag
{
	char		tag[IDGEN_SEGMENT_TAG_MAX + 1];
	int64		max_id;
} KeptTag;

static object_access_hook_type prev_object_access_hook = NULL;

/* The file of database dbid */
static void
keep_path(Oid dbid, char *path, size_t len)
{
	snprintf(path, len, "idgen.tags.%u", dbid);
}

/*
 * Read the kept tags of database dbid into a palloc'd array; 0 when there
 * is no file.  A file that cannot be trusted is an error: a tag's floor
 * could be lost.
 */
static int
read_kept(Oid dbid, KeptTag **out)
{
	char		path[MAXPGPATH];
	FILE	   *f;
	uint32		head[3];
	KeptTag    *tags;
	pg_crc32c	crc,
				stored;

	*out = NULL;
	keep_path(dbid, path, sizeof(path));
	f = AllocateFile(path, PG_BINARY_R);
	if (f == NULL)
	{
		if (errno == ENOENT)
			return 0;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	}
	INIT_CRC32C(crc);
	if (fread(head, sizeof(head), 1, f) != 1 ||
		head[0] != KEEP_MAGIC || head[1] != KEEP_VERSION ||
		head[2] > 100000000 / sizeof(KeptTag))
		goto corrupt;
	COMP_CRC32C(crc, head, sizeof(head));
	tags = palloc0(sizeof(KeptTag) * Max(head[2], 1));
	for (uint32 i = 0; i < head[2]; i++)
	{
		uint32		len;

		if (fread(&tags[i].max_id, sizeof(int64), 1, f) != 1 ||
			fread(&len, sizeof(len), 1, f) != 1 ||
			len < 1 || len > IDGEN_SEGMENT_TAG_MAX ||
			fread(tags[i].tag, len, 1, f) != 1)
			goto corrupt;
		COMP_CRC32C(crc, &tags[i].max_id, sizeof(int64));
		COMP_CRC32C(crc, &len, sizeof(len));
		COMP_CRC32C(crc, tags[i].tag, len);
	}
	FIN_CRC32C(crc);
	if (fread(&stored, sizeof(stored), 1, f) != 1 || stored != crc)
		goto corrupt;
	FreeFile(f);
	*out = tags;
	return (int) head[2];

corrupt:
	FreeFile(f);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen file \"%s\" is corrupt", path),
			 errdetail("The file keeps the last max_id of the segment tags of this database from when extension idgen was dropped."),
			 errhint("Restore the file from a backup of the data directory, or move it away if every tag will be created again above the IDs it handed out.")));
	return 0;					/* keep the compiler quiet */
}

/* Write the kept tags of database dbid durably */
static void
write_kept(Oid dbid, KeptTag *tags, int n)
{
	char		path[MAXPGPATH],
				tmp[MAXPGPATH + 4];
	uint32		head[3] = {KEEP_MAGIC, KEEP_VERSION, (uint32) n};
	StringInfoData buf;
	pg_crc32c	crc;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (char *) head, sizeof(head));
	for (int i = 0; i < n; i++)
	{
		uint32		len = strlen(tags[i].tag);

		appendBinaryStringInfo(&buf, (char *) &tags[i].max_id, sizeof(int64));
		appendBinaryStringInfo(&buf, (char *) &len, sizeof(len));
		appendBinaryStringInfo(&buf, tags[i].tag, len);
	}
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf.data, buf.len);
	FIN_CRC32C(crc);
	appendBinaryStringInfo(&buf, (char *) &crc, sizeof(crc));

	keep_path(dbid, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	idgen_write_file_durably(path, tmp, buf.data, buf.len);
	pfree(buf.data);
}

/*
 * The extension is being dropped: keep every tag's max_id (segment_alloc,
 * segment_dropped and the floors already kept), merged with the file.
 */
static void
keep_tags(void)
{
	StringInfoData q;
	KeptTag    *old,
			   *tags;
	int			nold,
				n = 0;
	MemoryContext caller;
	const char *tables[] = {"segment_alloc", "segment_dropped", "segment_floor"};

	initStringInfo(&q);
	appendStringInfoString(&q, "SELECT biz_tag, max(max_id) FROM (");
	for (int i = 0; i < lengthof(tables); i++)
	{
		if (!OidIsValid(idgen_table_relid(tables[i])))
			continue;
		if (n++ > 0)
			appendStringInfoString(&q, " UNION ALL ");
		appendStringInfo(&q, "SELECT biz_tag, max_id FROM idgen.%s", tables[i]);
	}
	if (n == 0)
		return;
	appendStringInfoString(&q, ") t GROUP BY biz_tag");

	nold = read_kept(MyDatabaseId, &old);
	PushActiveSnapshot(GetTransactionSnapshot());
	caller = CurrentMemoryContext;
	SPI_connect();
	if (SPI_execute(q.data, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the segment tags");
	/*
	 * In the caller's context: SPI_finish frees what was allocated after
	 * SPI_connect, and the tags are written after it (an assert-enabled
	 * server fills freed memory with 0x7f: the file was written corrupt)
	 */
	tags = MemoryContextAllocZero(caller,
								  sizeof(KeptTag) * (SPI_processed + nold + 1));
	n = 0;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		char	   *tag = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);

		if (tag == NULL || isnull || strlen(tag) < 1 ||
			strlen(tag) > IDGEN_SEGMENT_TAG_MAX)
			continue;
		strlcpy(tags[n].tag, tag, sizeof(tags[n].tag));
		tags[n].max_id = DatumGetInt64(d);
		n++;
	}
	SPI_finish();
	PopActiveSnapshot();

	/* Merge in what an earlier drop kept: the larger max_id of each tag */
	for (int i = 0; i < nold; i++)
	{
		int			j;

		for (j = 0; j < n; j++)
			if (strcmp(tags[j].tag, old[i].tag) == 0)
				break;
		if (j == n)
			tags[n++] = old[i];
		else
			tags[j].max_id = Max(tags[j].max_id, old[i].max_id);
	}
	if (n > 0)
		write_kept(MyDatabaseId, tags, n);
}

/*
 * DROP EXTENSION idgen in idgen.database stops snowflake IDs of every
 * database: the worker keeps the reservation there.  Say so (only where
 * idgen is preloaded: elsewhere there is no worker and no idgen.database).
 */
static void
warn_reservation_database(void)
{
	if (idgen_database == NULL ||
		get_database_oid(idgen_database, true) != MyDatabaseId)
		return;
	ereport(WARNING,
			(errmsg("snowflake IDs of every database of this server stop until extension idgen is created again in database \"%s\"",
					idgen_database),
			 errdetail("The idgen worker keeps the durable snowflake reservation in database \"%s\", the one named by idgen.database.",
					   idgen_database),
			 errhint("Run CREATE EXTENSION idgen in this database again, or set idgen.database to a database that has the extension and restart the server.")));
}

/*
 * Object access hook.  PostgreSQL calls it for each object just before
 * deleting it, the extension's members before the extension: the tags are
 * read when the first of the tag tables goes (the others still exist) and
 * again, merged, for each later one.
 */
static void
keep_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				   int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || IsBinaryUpgrade || subId != 0)
		return;
	if (classId == RelationRelationId)
	{
		bool		alloc = objectId == idgen_table_relid("segment_alloc");

		if (alloc ||
			objectId == idgen_table_relid("segment_dropped") ||
			objectId == idgen_table_relid("segment_floor"))
			keep_tags();

		/*
		 * The segments buffered in shared memory for this database's tags
		 * came from the table that goes: forget them now, so that no call
		 * hands one out after the drop (the tags exist again only once
		 * created again, above their floors).  The drop holds the table's
		 * AccessExclusiveLock, so the worker allocates nothing from it
		 * meanwhile; a drop that rolls back leaves only a gap.  Without the
		 * preload (a central segment server) there is no shared memory.
		 */
		if (alloc && idgen_segment != NULL)
			idgen_segment_forget_all();

		/* Keys of public IDs are refused a drop instead (idkey.c) */
		if (objectId == idgen_table_relid("id_key"))
			idgen_id_key_refuse_drop(objectId);
	}
	else if (classId == ExtensionRelationId &&
			 objectId == get_extension_oid("idgen", true))
		warn_reservation_database();
}

/*
 * Install the hook (module.c, _PG_init): with the preload in every backend;
 * without it in a backend that loads the library, which the event trigger
 * idgen_segment_keep makes each session that drops the extension do.
 */
void
idgen_segment_keep_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = keep_object_access;
}

/* DROP DATABASE has removed database dbid: its kept tags go too (module.c) */
void
idgen_segment_keep_forget(Oid dbid)
{
	char		path[MAXPGPATH];

	keep_path(dbid, path, sizeof(path));
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", path)));
}

PG_FUNCTION_INFO_V1(segment_keep_on_drop);

/*
 * SQL: the event trigger idgen_segment_keep, before DROP EXTENSION, DROP
 * SCHEMA and DROP OWNED.  Calling it has loaded the library, whose _PG_init
 * installed the hook above; nothing else to do.
 */
Datum
segment_keep_on_drop(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function segment_keep_on_drop can only be called as an event trigger")));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(segment_kept_floors);

/*
 * SQL: idgen.segment_kept_floors(): the tags of this database kept when
 * extension idgen was last dropped, as (biz_tag, max_id); called by the
 * install script to fill idgen.segment_floor.
 */
Datum
segment_kept_floors(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	KeptTag    *tags;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	n = read_kept(MyDatabaseId, &tags);
	for (int i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = CStringGetTextDatum(tags[i].tag);
		values[1] = Int64GetDatum(tags[i].max_id);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
