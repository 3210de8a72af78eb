/*
 * segment.c
 *		Leaf-style segment IDs: the shared cache of tags and the hot path of
 *		idgen.segment_nextval.
 *
 * Each tag in use has a slot in a shared hash (segment.h), keyed by
 * database and tag: every database where the extension is created has tags
 * of its own, allocated from its own idgen.segment_alloc by a worker
 * connected to it (worker.c).  A slot holds
 * the current segment and a chain of the next ones (loaded ahead by the
 * worker, see segment_alloc.c): one, Leaf's double buffer, unless the tag is
 * hungry, when the chain grows (CosId's SegmentChainId).  Drawing an ID is one atomic fetch-add on the slot's
 * pos word, whose high bits name the segment (epoch) the offset belongs to,
 * so an offset is always checked against the segment it was taken from: an
 * add that overshoots a used-up segment is thrown away, never returned, and
 * no add can land in a segment after it was replaced.  When the current
 * segment is used up and the next is ready, the caller switches pos to the
 * next epoch with a compare-and-swap; when the next is not ready it wakes
 * the worker and waits on a condition variable, within
 * idgen.segment_wait_timeout.  Callers never write the table.
 *
 * Each backend keeps a local map of tag -> (slot, generation), and
 * remembers the tag of its last call, so the usual call does no hash lookup
 * and takes no lock.  Shared memory and its rules: idgen.h.  The SQL
 * functions are in segment_sql.c; the privilege check of a draw, in
 * segment_acl.c.
 */
#include "postgres.h"

#include <float.h>
#include <limits.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/shmem.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/inval.h"
#include "utils/syscache.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "clock.h"
#include "idgen.h"
#include "restore.h"
#include "segment.h"
#include "worker.h"

/* Settings */
int			idgen_segment_max_tags = 1000;
double		idgen_segment_prefetch = 0.1;
int			idgen_segment_max_step = 1000000;
int			idgen_segment_wait_timeout_ms = 5000;
int			idgen_segment_grow_after_ms = 15 * 60 * 1000;
int			idgen_segment_shrink_after_ms = 30 * 60 * 1000;
int			idgen_segment_chain_max = IDGEN_SEG_CHAIN_MAX;
int			idgen_segment_standby_wait_ms = 10000;

/* Shared state */
IdgenSegmentShared *idgen_segment = NULL;
HTAB	   *idgen_segment_hash = NULL;
HTAB	   *idgen_segment_marks = NULL;

/* A tag this backend has used: where its slot is */
typedef struct LocalTag
{
	char		tag[IDGEN_SEGMENT_TAG_MAX + 1]; /* hash key */
	int			len;			/* strlen(tag) */
	IdgenSegmentSlot *slot;		/* NULL until attached */
	uint64		gen;			/* slot's generation when attached */
	int64		cache;			/* IDs to take per add: the cache of the
								 * segment drawn from last, 1 at first */
	uint64		next;			/* IDs next, next + stride, ... below end */
	uint64		end;			/* of generation gen are this backend's to
								 * hand out (unsigned: end is past 2^63 - 1
								 * when the run ends at the largest bigint) */
	uint64		stride;			/* of the segment they came from */
	Oid			acl_user;		/* role found to hold draw on generation gen */
	uint64		acl_gen;		/* at privilege generation acl_gen */
} LocalTag;

static HTAB *local_tags = NULL;
static LocalTag *last_tag = NULL;

/* Shared memory needed */
Size
idgen_segment_shmem_size(void)
{
	return add_size(add_size(MAXALIGN(sizeof(IdgenSegmentShared)),
							 hash_estimate_size(idgen_segment_max_tags,
												sizeof(IdgenSegmentSlot))),
					hash_estimate_size(IDGEN_SEGMENT_MARKS,
									   sizeof(IdgenSegmentMark)));
}

/*
 * Postmaster, as the region is created (start, crash restart): a restored
 * copy or a former standby started without promotion refuses segment IDs,
 * and the marker file keeps it so across restarts until segment_resume.
 * Its original may have allocated segments above the restored
 * idgen.segment_alloc: allocating from it again would repeat them.
 */
static uint32
refuse_after_restore(void)
{
	bool		restore = idgen_start_is_restore();
	int			kept = idgen_segments_refusal_kept();

	if (!restore)
		return (uint32) kept;
	idgen_segments_refusal_keep(IDGEN_SEG_REFUSED_RESTORED);
	ereport(LOG,
			(errmsg("idgen: segment IDs are refused: this server is started from a backup, for archive recovery or from a standby's data directory without promotion"),
			 errdetail("The server it was copied from may have allocated segments above the restored idgen.segment_alloc."),
			 errhint("Once recovery has ended, have a superuser run SELECT idgen.segment_resume().")));
	return IDGEN_SEG_REFUSED_RESTORED;
}

/* Create or attach the shared state; caller holds AddinShmemInitLock */
void
idgen_segment_shmem_init(void)
{
	HASHCTL		info;
	bool		found;

	idgen_segment = ShmemInitStruct("idgen segment",
									sizeof(IdgenSegmentShared), &found);
	if (!found)
	{
		idgen_segment->lock = &(GetNamedLWLockTranche("idgen segment"))->lock;
		ConditionVariableInit(&idgen_segment->cv);
		pg_atomic_init_u64(&idgen_segment->next_generation, 1);
		pg_atomic_init_u64(&idgen_segment->acl_generation, 0);
		idgen_segment->ntags = 0;
		pg_atomic_init_u32(&idgen_segment->refused, refuse_after_restore());
	}
	info.keysize = sizeof(IdgenSegmentKey);
	info.entrysize = sizeof(IdgenSegmentSlot);
	idgen_segment_hash = ShmemInitHash_compat("idgen segment tags",
											  idgen_segment_max_tags,
											  idgen_segment_max_tags,
											  &info, HASH_ELEM | HASH_BLOBS);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(IdgenSegmentKey);
	info.entrysize = sizeof(IdgenSegmentMark);
	idgen_segment_marks = ShmemInitHash_compat("idgen segment marks",
											   IDGEN_SEGMENT_MARKS,
											   IDGEN_SEGMENT_MARKS,
											   &info, HASH_ELEM | HASH_BLOBS);
}

/*
 * Define idgen.segment_max_step, the central segment server's own bound.
 * Also runs when the library is loaded without the preload (a central
 * server calling idgen.serving_settings): reload-only, so its value comes
 * from the server's configuration, never from a session.
 */
void
idgen_segment_define_serving_gucs(void)
{
	DefineCustomIntVariable("idgen.segment_max_step",
							"Largest step the dynamic step may grow to.",
							NULL, &idgen_segment_max_step, 1000000, 1, INT_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
}

/* Define the segment settings */
void
idgen_segment_define_gucs(void)
{
	DefineCustomIntVariable("idgen.segment_max_tags",
							"Number of segment tags that shared memory holds at once.",
							NULL, &idgen_segment_max_tags, 1000, 1, 1000000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomRealVariable("idgen.segment_prefetch",
							 "Share of the current segment used before the worker loads the next one (Leaf: 0.1).",
							 NULL, &idgen_segment_prefetch, 0.1, 0.0, 1.0,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	idgen_segment_define_serving_gucs();
	DefineCustomIntVariable("idgen.segment_wait_timeout",
							"How long a call waits for the idgen worker to load a segment before it fails.",
							NULL, &idgen_segment_wait_timeout_ms, 5000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.segment_step_grow_after",
							"A segment used up in less than this doubles the next step.",
							NULL, &idgen_segment_grow_after_ms, 15 * 60 * 1000,
							0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.segment_step_shrink_after",
							"A segment that lasted longer than this halves the next step.",
							NULL, &idgen_segment_shrink_after_ms, 30 * 60 * 1000,
							0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.segment_chain_max",
							"Most segments a hungry tag keeps ready ahead; 1 keeps Leaf's double buffer.",
							NULL, &idgen_segment_chain_max, IDGEN_SEG_CHAIN_MAX,
							1, IDGEN_SEG_CHAIN_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.segment_standby_wait",
							"How long the worker waits for the streaming physical standbys to flush a segment allocation before it hands the segments out anyway; 0 does not wait.",
							NULL, &idgen_segment_standby_wait_ms, 10000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
}

/* Is this backend in idgen.database?  -1 until known */
static int	in_main_database = -1;

/*
 * Error unless the preload is there; learn whether this is idgen.database,
 * whose segments the idgen worker (or the remote worker) allocates, or
 * another one, whose segments its own segment worker allocates.
 */
void
idgen_segment_check_usable(void)
{
	idgen_require_loaded();
	if (in_main_database < 0)
		in_main_database =
			(get_database_oid(idgen_database, true) == MyDatabaseId) ? 1 : 0;
}

/* The hash key of tag in this database */
void
idgen_segment_key(IdgenSegmentKey *key, const char *tag)
{
	memset(key, 0, sizeof(*key));
	key->dbid = MyDatabaseId;
	strlcpy(key->tag, tag, sizeof(key->tag));
}

/*
 * Does a central segment server allocate this database's segments?  Only
 * idgen.database's: other databases allocate from their own table.
 */
static bool
uses_server(void)
{
	return in_main_database == 1 && idgen_segment_server_enabled();
}

/*
 * Error if segment IDs are refused here (idgen_segment->refused): on a
 * restored copy or a former standby started without promotion from the
 * start, on a timeline whose low bits came round to an earlier one's from
 * the first allocation on it (segment_alloc.c).  A central segment server
 * allocates for idgen.database: not refused there.  prepared: the caller
 * prepared to sleep on the condition variable.
 */
static void
check_refused(bool prepared)
{
	uint32		why = pg_atomic_read_u32(&idgen_segment->refused);

	if (why == 0 || uses_server())
		return;
	if (prepared)
		ConditionVariableCancelSleep();
	if (why == IDGEN_SEG_REFUSED_TIMELINE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("segment IDs are refused because this server was promoted onto timeline %u, whose low %d bits an earlier timeline of its history had",
						GetWALInsertionTimeLine(), idgen_node_timeline_bits),
				 errdetail("With idgen.node_timeline_bits = %d, segment allocations of timelines that agree in those bits are not disjoint: timeline %u may have handed out IDs in WAL this server never replayed.",
						   idgen_node_timeline_bits,
						   GetWALInsertionTimeLine() - (1U << idgen_node_timeline_bits)),
				 errhint("Raise idgen.node_timeline_bits so that 2^bits is above the timeline, and restart; or, once no earlier server of this history hands out segment IDs and each tag is above their last ID (segment_alter(max_id => ...)), have a superuser run SELECT idgen.segment_resume().")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("segment IDs are refused because this server was started from a backup, after archive recovery or from a standby's data directory without promotion"),
			 errdetail("The server it was copied from may have allocated segments above the restored idgen.segment_alloc, and this server would hand their IDs out again."),
			 errhint("Once the original server issues no more segment IDs, have a superuser run SELECT idgen.segment_resume(). Two copies resumed from one backup still repeat each other's segment IDs.")));
}

/*
 * Was this backend's last wake-up queued behind idgen.segment_max_workers
 * segment workers of other databases?  Then a wait that times out says so.
 */
static bool wake_queued = false;

/*
 * Wake the worker that allocates this database's segments.  With need, a
 * segment worker that cannot be started (no background worker slot) is an
 * error; otherwise the next wake-up tries again.  A database queued behind
 * idgen.segment_max_workers others gets a worker once one of them makes
 * room (worker.c); the caller waits for it as for any segment.
 */
static void
wake_allocator(bool need)
{
	IdgenWakeResult r;

	if (in_main_database == 1)
	{
		idgen_worker_wake_all();
		return;
	}
	r = idgen_worker_wake_database(MyDatabaseId);
	wake_queued = (r == IDGEN_WAKE_QUEUED);
	if (r == IDGEN_WAKE_NO_SLOT && need)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the idgen segment worker of database \"%s\"",
						get_database_name(MyDatabaseId)),
				 errdetail("Segment IDs of a database other than idgen.database (\"%s\") are allocated by a background worker of that database, and no background worker slot is free.",
						   idgen_database),
				 errhint("Raise max_worker_processes, and restart the server: idgen's workers take the idgen worker's slot (two with idgen.node_id = 'auto', idgen.segment_server or Citus) and up to idgen.segment_max_workers (%d) more, besides those of parallel query and logical replication.",
						 idgen_segment_max_workers)));
}

/* The error of a wait that timed out while queued for a segment worker */
static void
report_queued(const char *tag)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("could not draw an ID for segment tag \"%s\": no idgen segment worker was free for database \"%s\" within %d ms",
					tag, get_database_name(MyDatabaseId),
					idgen_segment_wait_timeout_ms),
			 errdetail("idgen.segment_max_workers (%d) segment workers were busy allocating segments for other databases all that time.",
					   idgen_segment_max_workers),
			 errhint("Raise idgen.segment_max_workers (and max_worker_processes by as much), or idgen.segment_wait_timeout.")));
}

/* Error unless tag is 1 to IDGEN_SEGMENT_TAG_MAX bytes */
void
idgen_segment_check_tag_length(const char *tag, int len)
{
	if (len > IDGEN_SEGMENT_TAG_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("segment tag is too long"),
				 errdetail("A segment tag has at most %d bytes; this one has %d.",
						   IDGEN_SEGMENT_TAG_MAX, len)));
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("segment tag cannot be empty")));
}

/* The "does not exist" error of a tag */
void
idgen_segment_unknown_tag_error(const char *tag)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("segment tag \"%s\" does not exist", tag),
			 errhint("Create it with idgen.segment_create().")));
}

/* Remove a slot; caller holds the lock exclusively */
static void
remove_slot(IdgenSegmentSlot *slot)
{
	pg_atomic_write_u64(&slot->generation, 0);
	pg_memory_barrier();
	(void) hash_search(idgen_segment_hash, &slot->key, HASH_REMOVE, NULL);
	idgen_segment->ntags--;
}

/*
 * Make room by removing one slot of a tag the table does not have (left
 * for its callers to see the error); caller holds the lock exclusively.
 */
static bool
evict_unknown_slot(void)
{
	HASH_SEQ_STATUS scan;
	IdgenSegmentSlot *slot;

	hash_seq_init(&scan, idgen_segment_hash);
	while ((slot = hash_seq_search(&scan)) != NULL)
	{
		if (pg_atomic_read_u32(&slot->state) == IDGEN_SEG_UNKNOWN)
		{
			hash_seq_term(&scan);
			remove_slot(slot);
			ConditionVariableBroadcast(&idgen_segment->cv);
			return true;
		}
	}
	return false;
}

/* Remove a tag's slot (only at generation gen unless gen is 0) */
void
idgen_segment_forget(const char *tag, uint64 gen)
{
	IdgenSegmentKey key;
	IdgenSegmentSlot *slot;

	idgen_segment_key(&key, tag);
	LWLockAcquire(idgen_segment->lock, LW_EXCLUSIVE);
	slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
	if (slot && (gen == 0 || pg_atomic_read_u64(&slot->generation) == gen))
		remove_slot(slot);
	LWLockRelease(idgen_segment->lock);
	ConditionVariableBroadcast(&idgen_segment->cv);
}

/* Remove every slot of this database */
void
idgen_segment_forget_all(void)
{
	HASH_SEQ_STATUS scan;
	IdgenSegmentSlot *slot;

	LWLockAcquire(idgen_segment->lock, LW_EXCLUSIVE);
	hash_seq_init(&scan, idgen_segment_hash);
	while ((slot = hash_seq_search(&scan)) != NULL)
	{
		if (slot->key.dbid == MyDatabaseId)
			remove_slot(slot);	/* removing the current entry is allowed */
	}
	LWLockRelease(idgen_segment->lock);
	ConditionVariableBroadcast(&idgen_segment->cv);
}

/* Forget a tag in this backend's map */
static void
local_forget(LocalTag *lt)
{
	if (last_tag == lt)
		last_tag = NULL;
	lt->next = lt->end = 0;		/* its cached IDs are lost with it */
	(void) hash_search(local_tags, lt->tag, HASH_REMOVE, NULL);
}

/* Syscache callback: a role or a membership changed */
static void
role_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	idgen_segment_acl_local++;
}

/* What a draw privilege found earlier is valid for */
static inline uint64
acl_generation(void)
{
	return pg_atomic_read_u64(&idgen_segment->acl_generation) +
		idgen_segment_acl_local;
}

/*
 * Error unless the current role may draw from lt's tag (attached).  The
 * answer is kept for the role, the slot's generation (a tag dropped and
 * created again is checked again) and the privilege generation, so a draw
 * costs a comparison; a transaction that changed privileges itself checks
 * every time, as its change is not yet committed.
 */
static void
check_draw_slow(LocalTag *lt)
{
	Oid			user = GetUserId();
	bool		found;
	uint64		gen = acl_generation();
	int			privs = idgen_segment_tag_privileges(lt->tag, user, &found);

	if (!found && !uses_server())
	{
		char		tag[IDGEN_SEGMENT_TAG_MAX + 1];

		strlcpy(tag, lt->tag, sizeof(tag));
		local_forget(lt);
		idgen_segment_unknown_tag_error(tag);
	}
	/* A tag of a central segment server: its server checks the worker */
	if (found && !(privs & IDGEN_TAG_DRAW))
		idgen_segment_acl_error(lt->tag, "draw");
	lt->acl_user = idgen_segment_acl_changed_here ? InvalidOid : user;
	lt->acl_gen = gen;
}

static inline void
check_draw(LocalTag *lt)
{
	if (likely(lt->acl_user == GetUserId() &&
			   lt->acl_gen == acl_generation()))
		return;
	check_draw_slow(lt);
}

/* Find or add a tag in this backend's map; all checks of first use */
static LocalTag *
local_lookup(const char *p, int len)
{
	char		key[IDGEN_SEGMENT_TAG_MAX + 1];
	LocalTag   *lt;
	bool		found;

	idgen_segment_check_tag_length(p, len);
	idgen_segment_check_usable();
	check_refused(false);
	if (local_tags == NULL)
	{
		HASHCTL		info;

		CacheRegisterSyscacheCallback(AUTHOID, role_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, role_changed, (Datum) 0);

		info.keysize = IDGEN_SEGMENT_TAG_MAX + 1;
		info.entrysize = sizeof(LocalTag);
		local_tags = hash_create("idgen segment local tags", 64, &info,
								 HASH_ELEM | HASH_STRINGS);
	}
	memcpy(key, p, len);
	key[len] = '\0';
	lt = hash_search(local_tags, key, HASH_ENTER, &found);
	if (!found)
	{
		lt->len = len;
		lt->slot = NULL;
		lt->gen = 0;
		lt->cache = 1;
		lt->next = lt->end = 0;
		lt->acl_user = InvalidOid;
	}
	last_tag = lt;
	return lt;
}

/* Initialize a new slot; caller holds the lock exclusively */
static void
init_slot(IdgenSegmentSlot *slot)
{
	pg_atomic_init_u32(&slot->state, IDGEN_SEG_LOADING);
	pg_atomic_init_u64(&slot->dyn_step, 0);
	pg_atomic_init_u64(&slot->last_alloc, 0);
	pg_atomic_init_u64(&slot->fetches, 0);
	pg_atomic_init_u64(&slot->waits, 0);
	pg_atomic_init_u64(&slot->last_fetch, 0);
	pg_atomic_init_u32(&slot->chain_len, 1);
	pg_atomic_init_u32(&slot->alloc_epoch, 0);
	pg_atomic_init_u64(&slot->chain_at, 0);
	pg_atomic_init_u64(&slot->hunger_at, 0);
	pg_atomic_init_u32(&slot->hunger_epoch, 0);
	pg_atomic_init_u64(&slot->standby_wait_until, 0);
	pg_atomic_init_u64(&slot->standby_timeouts, 0);
	pg_atomic_init_u64(&slot->unprotected, 0);
	/* Epoch 0 is an empty segment: the first call finds it used up */
	for (int i = 0; i < IDGEN_SEG_RING; i++)
	{
		pg_atomic_init_u32(&slot->ring[i].epoch,
						   i == 0 ? 0 : IDGEN_SEG_EPOCH_INVALID);
		slot->ring[i].cache = 1;
		slot->ring[i].start = 0;
		slot->ring[i].len = 0;
		slot->ring[i].stride = 1;
		slot->ring[i].prefetch_at = 0;
	}
	pg_atomic_init_u64(&slot->pos, 0);
	pg_write_barrier();
	pg_atomic_write_u64(&slot->generation,
						pg_atomic_fetch_add_u64(&idgen_segment->next_generation, 1));
}

/*
 * Does idgen.segment_alloc have a row for tag, as this transaction sees it?
 * Looked up through the primary key index without a privilege check: the
 * caller needs no privilege on the table, and learns only what
 * segment_nextval itself would tell.  Returns true when the table cannot be
 * read at once (it is locked): the worker then decides, as before.
 */
static bool
tag_exists(const char *tag)
{
	Oid			relid = idgen_table_relid("segment_alloc");
	Relation	rel;
	Oid			indexid;
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	if (!OidIsValid(relid))
		return false;
	if (!ConditionalLockRelationOid(relid, AccessShareLock))
		return true;
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, AccessShareLock);
		return false;
	}
	indexid = RelationGetPrimaryKeyIndex_compat(rel);
	if (!OidIsValid(indexid) || !ConditionalLockRelationOid(indexid, AccessShareLock))
	{
		relation_close(rel, AccessShareLock);
		return true;
	}
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   TupleDescAttr(RelationGetDescr(rel), 0)->attcollation,
						   F_TEXTEQ, CStringGetTextDatum(tag));
	scan = systable_beginscan(rel, indexid, true,
							  ActiveSnapshotSet() ? GetActiveSnapshot() :
							  GetTransactionSnapshot(), 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	UnlockRelationOid(indexid, AccessShareLock);
	relation_close(rel, AccessShareLock);
	return found;
}

/* Point lt at the tag's slot, registering the tag if it has none */
static void
attach(LocalTag *lt)
{
	IdgenSegmentSlot *slot;
	IdgenSegmentKey key;
	uint64		gen = 0;
	bool		found;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot draw segment IDs during recovery"),
				 errdetail("Segments are allocated by writing idgen.segment_alloc, which only a primary can do."),
				 errhint("Draw segment IDs on the primary.")));

	idgen_segment_key(&key, lt->tag);
	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
	if (slot)
		gen = pg_atomic_read_u64(&slot->generation);
	LWLockRelease(idgen_segment->lock);

	/*
	 * Only a tag of the table gets a slot, so calls for tags that do not
	 * exist cannot fill shared memory.  With a central segment server the
	 * tags live there; its answer comes through the worker.
	 */
	if ((slot == NULL || gen == 0) && !uses_server() &&
		!tag_exists(lt->tag))
	{
		char		tag[IDGEN_SEGMENT_TAG_MAX + 1];

		strlcpy(tag, lt->tag, sizeof(tag));
		local_forget(lt);
		idgen_segment_unknown_tag_error(tag);
	}

	if (slot == NULL || gen == 0)
	{
		LWLockAcquire(idgen_segment->lock, LW_EXCLUSIVE);
		slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
		if (slot == NULL)
		{
			if (idgen_segment->ntags >= idgen_segment_max_tags)
				slot = evict_unknown_slot() ?
					hash_search(idgen_segment_hash, &key, HASH_ENTER_NULL,
								&found) : NULL;
			else
				slot = hash_search(idgen_segment_hash, &key,
								   HASH_ENTER_NULL, &found);
			if (slot == NULL)
			{
				LWLockRelease(idgen_segment->lock);
				ereport(ERROR,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("could not load segment tag \"%s\" into shared memory",
								lt->tag),
						 errdetail("All %d tag slots allowed by idgen.segment_max_tags hold tags that exist and have been drawn from since the server started.",
								   idgen_segment_max_tags),
						 errhint("Raise idgen.segment_max_tags above the number of tags in use and restart the server.")));
			}
			init_slot(slot);
			idgen_segment->ntags++;
		}
		gen = pg_atomic_read_u64(&slot->generation);
		LWLockRelease(idgen_segment->lock);
		wake_allocator(true);
	}
	lt->slot = slot;
	lt->gen = gen;
	/* A new slot, or one loaded again: nothing cached holds */
	lt->cache = 1;
	lt->next = lt->end = 0;
	lt->acl_user = InvalidOid;
}

/*
 * switch_or_wait found no next segment of lt's tag, and none will come: the
 * table has no such tag (IDGEN_SEG_UNKNOWN: forgotten here and in shared
 * memory) or it ran out (IDGEN_SEG_EXHAUSTED).  prepared: it prepared to
 * sleep on the condition variable.
 */
pg_noreturn static void
no_segment_error(LocalTag *lt, uint32 state, bool prepared)
{
	if (state == IDGEN_SEG_UNKNOWN)
	{
		char		tag[IDGEN_SEGMENT_TAG_MAX + 1];

		if (prepared)
			ConditionVariableCancelSleep();
		strlcpy(tag, lt->tag, sizeof(tag));
		idgen_segment_forget(tag, lt->gen);
		local_forget(lt);
		idgen_segment_unknown_tag_error(tag);
	}
	if (prepared)
		ConditionVariableCancelSleep();
	ereport(ERROR,
			(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
			 errmsg("segment tag \"%s\" has run out of IDs", lt->tag),
			 errdetail("Its max_id in idgen.segment_alloc has reached the largest bigint.")));
	pg_unreachable();
}

/*
 * switch_or_wait waited idgen.segment_wait_timeout for a segment of lt's
 * tag in vain (prepared to sleep): the error, naming the central server's
 * failure or a wake-up left in the queue where there was one
 */
pg_noreturn static void
wait_timeout_error(LocalTag *lt)
{
	ConditionVariableCancelSleep();
	if (uses_server())
		idgen_segment_server_check(lt->tag);
	if (wake_queued)
		report_queued(lt->tag);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not draw an ID for segment tag \"%s\": the idgen worker did not load a segment within %d ms",
					lt->tag, idgen_segment_wait_timeout_ms),
			 errdetail("IDs are handed out only from segments that the idgen worker has allocated in idgen.segment_alloc in database \"%s\".",
					   get_database_name(MyDatabaseId)),
			 errhint("Make sure the \"idgen worker\" process is running and that no transaction holds a lock on the tag's row; idgen.segment_wait_timeout sets how long to wait.")));
	pg_unreachable();
}

/*
 * The current segment (epoch e, len IDs) is used up: switch to the next one
 * if it is ready, else wait for the worker to load it.  Returns when the
 * epoch has moved on or the slot went away; errors for an unknown tag, an
 * exhausted one or a timeout.
 */
static void
switch_or_wait(LocalTag *lt, uint64 e)
{
	IdgenSegmentSlot *slot = lt->slot;
	uint64		ne = (e + 1) & IDGEN_SEG_EPOCH_MASK;
	IdgenSegmentDesc *nd = &slot->ring[ne % IDGEN_SEG_RING];
	int64		start = 0;		/* monotonic ms: a clock step moves no wait */
	bool		prepared = false;

	for (;;)
	{
		uint64		cur;
		uint32		state;
		long		left_ms;

		if (pg_atomic_read_u64(&slot->generation) != lt->gen)
			break;

		cur = pg_atomic_read_u64(&slot->pos);
		if ((cur >> IDGEN_SEG_OFF_BITS) != e)
			break;

		/* Next segment ready: make it current */
		if (pg_atomic_read_u32(&nd->epoch) == ne)
		{
			while ((cur >> IDGEN_SEG_OFF_BITS) == e)
			{
				if (pg_atomic_compare_exchange_u64(&slot->pos, &cur,
												   ne << IDGEN_SEG_OFF_BITS))
					break;
			}
			break;
		}

		state = pg_atomic_read_u32(&slot->state);
		if (state == IDGEN_SEG_UNKNOWN || state == IDGEN_SEG_EXHAUSTED)
			no_segment_error(lt, state, prepared);
		/* refused since (a wrapped timeline): no allocation comes */
		check_refused(prepared);

		/* Wait for the worker */
		if (!prepared)
		{
			pg_atomic_fetch_add_u64(&slot->waits, 1);
			start = idgen_clock_monotonic_ms();
			wake_allocator(true);
			ConditionVariablePrepareToSleep(&idgen_segment->cv);
			prepared = true;
			continue;			/* check again before the first sleep */
		}
		left_ms = idgen_segment_wait_timeout_ms -
			(long) (idgen_clock_monotonic_ms() - start);
		if (left_ms <= 0 && !uses_server() &&
			((int64) pg_atomic_read_u64(&slot->standby_wait_until) >
			 idgen_clock_monotonic_ms() ||
			 idgen_worker_waits_for_sync_rep(in_main_database == 1 ?
											 InvalidOid : MyDatabaseId)))
		{
			/*
			 * The allocation is made and waits for a synchronous standby,
			 * as every commit here does, or for the streaming standbys'
			 * flush (within idgen.segment_standby_wait): wait with it, as a
			 * commit would (statement_timeout and cancellation still end
			 * the wait)
			 */
			start = idgen_clock_monotonic_ms();
			continue;
		}
		if (left_ms <= 0)
			wait_timeout_error(lt);
		/* Short sleeps: a wake-up may be missed while the worker restarts */
		(void) ConditionVariableTimedSleep(&idgen_segment->cv,
										   Min(left_ms, 100),
										   idgen_wait_event(IDGEN_WAIT_SEGMENT));
		wake_allocator(false);
	}
	if (prepared)
		ConditionVariableCancelSleep();
}

/*
 * Next ID of the tag lt.
 *
 * With the tag's cache at 1 each call takes one offset of the current
 * segment with one fetch-add.  With a cache of N > 1 (a sequence's CACHE) a
 * call adds N instead and keeps the offsets [off, min(off + N, len)) of that
 * segment in lt, so the next calls of this backend hand them out without
 * touching shared memory but for a read of the slot's generation; an add
 * that reaches past the segment's end only makes the run shorter (offsets
 * past len are no IDs; the next segment starts again at offset 0).  A
 * backend learns the cache from the descriptor of the segment it drew from
 * (read under the seqlock anyway), so its first add after attaching is 1.
 * IDs stay unique, and increase within a backend; across backends one may
 * be below an ID another backend handed out before, and a backend's unused
 * cached IDs are lost (gaps) when it exits or the slot is replaced.
 */
static int64
draw(LocalTag *lt)
{
	/* IDs cached by this backend, while the slot is the one they came from */
	if (lt->next < lt->end)
	{
		if (lt->slot != NULL &&
			pg_atomic_read_u64(&lt->slot->generation) == lt->gen)
		{
			int64		id = (int64) lt->next;

			check_draw(lt);
			lt->next += lt->stride;
			return id;
		}
		lt->next = lt->end = 0;
	}

	for (;;)
	{
		IdgenSegmentSlot *slot = lt->slot;
		IdgenSegmentDesc *d;
		uint64		p,
					e,
					off,
					taken;
		uint32		e1,
					e2;
		int64		start,
					len,
					stride,
					prefetch_at;
		int32		cache;

		if (slot == NULL || pg_atomic_read_u64(&slot->generation) != lt->gen)
		{
			CHECK_FOR_INTERRUPTS();
			attach(lt);
			continue;
		}
		check_draw(lt);

		p = pg_atomic_fetch_add_u64(&slot->pos, (uint64) lt->cache);
		e = p >> IDGEN_SEG_OFF_BITS;
		off = p & IDGEN_SEG_OFF_MASK;

		/* Read the descriptor of epoch e, seqlock style */
		d = &slot->ring[e % IDGEN_SEG_RING];
		e1 = pg_atomic_read_u32(&d->epoch);
		pg_read_barrier();
		start = d->start;
		len = d->len;
		stride = d->stride;
		prefetch_at = d->prefetch_at;
		cache = d->cache;
		pg_read_barrier();
		e2 = pg_atomic_read_u32(&d->epoch);

		if (e1 != e || e2 != e)
			continue;			/* e was replaced meanwhile: try again */
		if (off < (uint64) len)
		{
			/* The slot must still be the tag's (not removed and reused) */
			if (pg_atomic_read_u64(&slot->generation) != lt->gen)
				continue;
			taken = Min((uint64) lt->cache, (uint64) len - off);
			lt->cache = Max(Min(cache, IDGEN_SEG_CACHE_MAX), 1);
			if (taken > 1)
			{
				lt->stride = (uint64) stride;
				lt->next = (uint64) start + (off + 1) * lt->stride;
				lt->end = (uint64) start + (off + taken) * lt->stride;
			}
			/*
			 * Past the wake point (one of the offsets taken): wake the
			 * allocator only when it has work, at most half of the chain left
			 * (see segment_alloc.c), so a hungry tag wakes it once per
			 * refill, not once per segment
			 */
			if ((uint64) prefetch_at - off < taken &&
				idgen_segment_ready(slot, e) <=
				(int) pg_atomic_read_u32(&slot->chain_len) / 2)
				wake_allocator(false);
			return start + (int64) off * stride;
		}
		CHECK_FOR_INTERRUPTS();
		switch_or_wait(lt, e);
	}
}

/* Next ID of the tag of len bytes at p; see segment.h */
int64
idgen_segment_next(const char *p, int len)
{
	LocalTag   *lt = last_tag;

	if (lt == NULL || lt->len != len || memcmp(lt->tag, p, len) != 0)
		lt = local_lookup(p, len);
	return draw(lt);
}

/* Segments ready ahead of epoch e; see segment.h */
int
idgen_segment_ready(IdgenSegmentSlot *slot, uint64 e)
{
	int			r = 0;

	while (r < IDGEN_SEG_RING - 1)
	{
		uint64		x = (e + r + 1) & IDGEN_SEG_EPOCH_MASK;

		if (pg_atomic_read_u32(&slot->ring[x % IDGEN_SEG_RING].epoch) != x)
			break;
		r++;
	}
	return r;
}

/* Name of a slot state */
const char *
idgen_segment_state_name(uint32 state)
{
	switch (state)
	{
		case IDGEN_SEG_LOADING:
			return "loading";
		case IDGEN_SEG_ACTIVE:
			return "active";
		case IDGEN_SEG_UNKNOWN:
			return "unknown";
		case IDGEN_SEG_EXHAUSTED:
			return "exhausted";
	}
	return "?";
}
