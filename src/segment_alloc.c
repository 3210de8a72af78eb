/*
 * segment_alloc.c
 *		The worker's share of segment IDs: it alone writes
 *		idgen.segment_alloc and fills the next segment of each tag.
 *
 * Each round, idgen_segment_alloc_step looks (under the LWLock, shared) for
 * slots whose chain of ready segments is short and whose current one is
 * used past idgen.segment_prefetch, or used up, or not loaded yet; callers
 * that are waiting come first.  For each it runs one transaction that locks
 * the tag's row (SKIP LOCKED, so an administrator's open transaction delays
 * only that tag), advances max_id by the dynamic step times the number of
 * segments missing, and commits; the range is then split into segments of
 * the step.
 *
 * The chain (CosId's SegmentChainId): a tag keeps chain_len segments ready
 * ahead of the current one, 1 being Leaf's double buffer.  It is refilled
 * when at most half of them are left and the current segment is past its
 * prefetch point (or used up), at most once per segment.  A tag is
 * hungry when its segments since the last allocation, or since a pause
 * (below), lasted less than CHAIN_HUNGRY_MS each.  A hungry tag whose step cannot grow
 * (idgen.segment_step_grow_after = 0, or the step is at
 * idgen.segment_max_step) doubles its chain, up to idgen.segment_chain_max,
 * so that Leaf's dynamic step stays the first answer to hunger and each
 * allocation stays one segment while the step can still grow (once the step
 * reached its maximum, from the next refill on).  A refill that finds the
 * tag not hungry halves the chain.  So does every CHAIN_SHRINK_MS without
 * an allocation (a pause), but never below the segments still ready: a
 * chain shorter than what is ready would be refilled only once they are
 * nearly all used, and the first calls after the pause would wait for the
 * worker.  A pause also starts the measure of hunger afresh, so that after
 * it a tag drawing as fast as before is still hungry (the pause is not
 * segments that lasted long).  Leaf's dynamic step still counts from the
 * last allocation.
 *
 * The remote worker (a central segment server) keeps the double buffer: its
 * tags' chains stay at 1.
 *
 * With idgen.node_timeline_bits = k > 0, allocations of different
 * timelines are disjoint: an allocation takes the IDs above max_id that
 * are congruent to the server's timeline modulo 2^k, every 2^k-th one, and
 * max_id becomes the last of them.  Two primaries out of one history (two
 * standbys of one primary promoted onto timelines 2 and 3, or an old
 * primary still allocating in WAL its promoted standby never replayed)
 * then never hand out the same segment ID, whatever max_id each of them
 * saw, as long as their timelines differ in the low k bits; a timeline
 * whose low bits come round to an ancestor's shares its IDs (the wrap,
 * docs/high-availability.md).  It costs density: a tag uses 2^k times the
 * ID space per ID.  max_id stays an ID, so a change of k keeps every new
 * ID above every old one.  With k = 0 allocations are dense, as before;
 * so are a central segment server's (stride 1 here).
 *
 * The worker forces synchronous_commit on, so the allocation is durable (and
 * replicated to synchronous standbys) before its segments are published to
 * the slot; a crash can only leave unused IDs behind, never hand one out
 * twice.
 *
 * Nor does a failover to an asynchronous standby: a committed allocation
 * is published only once every physical standby streaming from this server
 * has flushed its commit record (the walsenders' flush positions, as
 * pg_stat_replication shows them), so that a standby that may be promoted
 * continues above every segment handed out here.  Meanwhile it waits in a
 * list of this process (pending), the tag's slot shows standby_wait (its
 * callers then wait on past idgen.segment_wait_timeout, as for a commit
 * waiting for a synchronous standby), and the worker goes on with other
 * tags and the snowflake reservation, polling the flush positions (the
 * walsenders set no latch of ours) with wait event IdgenStandbyFlush.  A
 * standby that has not flushed within idgen.segment_standby_wait is named
 * in a WARNING, the tag's standby_timeouts counts it, and the segments are
 * published anyway: a failover to that standby may hand them out again.
 * Such a standby is then excused: the worker waits for it no more until it
 * has flushed WAL up to where WAL ended when it was excused (it has caught
 * up) or its walsender is gone, so a hanging standby costs one wait, not
 * one for every allocation.  Allocations handed out meanwhile without its
 * flush count in standby_timeouts too, with a WARNING at most once a
 * minute.
 * An allocation handed out with no streaming standby at all, where one is
 * expected, is unprotected: where this process has seen a streaming
 * standby since it started, or the server has been promoted (its timeline
 * is past 1), while idgen.segment_standby_wait is on and max_wal_senders
 * above 0.  The tag's unprotected counts it, with a WARNING at most once a
 * minute: a failover to a standby that was not streaming may hand it out
 * again.
 * Standbys still catching up are waited for too; logical walsenders and
 * standbys of standbys are not; with no standby connected nothing is.
 *
 * Publishing re-finds the slot by tag under the LWLock (shared) and checks
 * its generation, so a tag dropped or altered meanwhile is not refilled with
 * a stale range.  Runs only in the allocator of a database, outside any
 * transaction, and touches only that database's slots: in idgen.database
 * the idgen worker, or the remote worker with a central segment server
 * (segment_server.c); in any other database its segment worker (worker.c).
 * Shared memory and its rules: idgen.h.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"

#include "clock.h"
#include "idgen.h"
#include "restore.h"
#include "segment.h"
#include "worker.h"

/* Most time one step spends allocating before it lets the loop go on */
#define STEP_BUDGET_MS 200

/* How soon to look again at a tag whose row was locked */
#define BUSY_RETRY_MS 20

/*
 * How long a slot found unknown stays for its callers to see; then the
 * worker removes it, in case they were cancelled before they could.
 */
#define UNKNOWN_KEEP_MS 10000

/* Segments used up faster than this each make a tag hungry */
#define CHAIN_HUNGRY_MS 1000

/* A tag with no allocation for this long halves its chain, and again after */
#define CHAIN_SHRINK_MS 5000

/* Longest sleep between two looks at the standbys' flush positions */
#define STANDBY_POLL_MAX_MS 100

/* Most standbys one WARNING names */
#define STANDBY_NAMED_MAX 8

/*
 * Least time between two WARNINGs of allocations past excused standbys,
 * and between two of unprotected allocations
 */
#define EXCUSED_WARN_MS 60000

/* A slot that needs its next segment */
typedef struct SegmentNeed
{
	char		tag[IDGEN_SEGMENT_TAG_MAX + 1];
	uint64		gen;			/* slot generation when seen */
	bool		urgent;			/* used up or never loaded: callers wait */
	int64		prev_step;		/* slot's dyn_step, 0 if none */
	int64		lasted_ms;		/* how long each segment since the last
								 * allocation lasted, -1 if none */
	int64		hunger_ms;		/* the same since a pause noticed after
								 * it, if any; -1 if none */
	int			count;			/* segments to allocate */
} SegmentNeed;

/* Result of one allocation */
typedef enum AllocResult
{
	ALLOC_OK,
	ALLOC_UNKNOWN,				/* no such row */
	ALLOC_EXHAUSTED,			/* max_id at the largest bigint */
	ALLOC_BUSY,					/* row locked by another transaction */
	ALLOC_NO_TABLE,				/* extension not installed here */
	ALLOC_STALE,				/* slot removed since it was seen */
	ALLOC_REFUSED				/* segment IDs refused here */
} AllocResult;

/*
 * A committed allocation not published yet: it waits for the standbys to
 * flush its commit record (see the top of this file)
 */
typedef struct PendingAlloc
{
	SegmentNeed need;			/* the slot it is for */
	int64		first;			/* publish()'s arguments */
	int64		len;
	int64		seg_len;
	int32		cache;
	XLogRecPtr	lsn;			/* end of its commit record */
	int64		committed;		/* when it committed, monotonic ms */
} PendingAlloc;

static MemoryContext step_cxt = NULL;

/* Allocations waiting for the standbys, and the context they live in */
static List *pending = NIL;
static MemoryContext pending_cxt = NULL;

/*
 * Standbys excused from the wait (see the top of this file), by walsender
 * slot: the walsender's pid (0: none) and the end of WAL when it was
 * excused.  Allocated in TopMemoryContext on the first excuse.
 */
typedef struct ExcusedStandby
{
	pid_t		pid;
	XLogRecPtr	until;
} ExcusedStandby;

static ExcusedStandby *excused = NULL;
static int64 excused_warned_at = -1;	/* last such WARNING, monotonic ms */

/*
 * Has this process seen a physical standby streaming (walsender_behind)?
 * The last WARNING of an unprotected allocation, monotonic ms
 */
static bool seen_standby = false;
static int64 unprotected_warned_at = -1;

/* What publish() counts of an allocation */
#define PUBLISH_LATE		0x01	/* in standby_timeouts */
#define PUBLISH_UNPROTECTED 0x02	/* in unprotected */

/* The kind of worker this process is, as its step was last called */
static IdgenWorkerKind alloc_kind = IDGEN_WORKER_MAIN;

/* idgen.segment_alloc of this database as last seen */
static Oid	last_relid = InvalidOid;

/*
 * The allocation's statements, planned once per worker and kept (a refill
 * of a hungry tag comes many times a second, and parsing and planning them
 * each time was most of its CPU).  The plan cache re-plans them when the
 * table changes.
 */
static SPIPlanPtr plan_lock = NULL;
static SPIPlanPtr plan_lock_cache = NULL;
static SPIPlanPtr plan_exists = NULL;
static SPIPlanPtr plan_advance = NULL;

/*
 * From one ID of an allocation to the next, and the residue of its IDs
 * modulo that: 2^idgen.node_timeline_bits and the timeline (see the top of
 * this file); 1 and 0 when the allocations come from a central segment
 * server
 */
static int64
alloc_stride(void)
{
	if (alloc_kind == IDGEN_WORKER_REMOTE || idgen_node_timeline_bits <= 0)
		return 1;
	return (int64) 1 << idgen_node_timeline_bits;
}

static int64
alloc_residue(void)
{
	return (int64) GetWALInsertionTimeLine() & (alloc_stride() - 1);
}

/*
 * May this server allocate on its timeline?  Not where segment IDs are
 * refused (a restored copy, segment.c), nor on a timeline whose low k bits
 * came round: with idgen.node_timeline_bits = k, a timeline above 2^k
 * shares its residue with timeline tli - 2^k, which an earlier server of
 * this history used (an ancestor, or another server promoted out of it)
 * and may have allocated on in WAL this server never replayed, so its IDs
 * and ours are not disjoint: refuse segment IDs until segment_resume, as
 * on a restored copy.  Checked before the first allocation of each
 * allocator on each timeline, so no ID of the new timeline goes out
 * first; the timeline checked is kept in the data directory (restore.h),
 * so that a restart, another allocator or a resume does not refuse it
 * again.
 */
static bool
timeline_allows(void)
{
	static TimeLineID checked = 0;
	TimeLineID	tli;

	if (pg_atomic_read_u32(&idgen_segment->refused) != 0)
		return false;
	if (idgen_node_timeline_bits <= 0 || alloc_kind == IDGEN_WORKER_REMOTE)
		return true;
	tli = GetWALInsertionTimeLine();
	if (tli == checked)
		return true;
	if (idgen_timeline_wraps(IDGEN_WRAP_SEGMENTS, tli))
	{
		/* the log has it before any caller can see the refusal */
		ereport(WARNING,
				(errmsg("idgen: segment IDs are refused: this server was promoted onto timeline %u, whose low %d bits (idgen.node_timeline_bits) timeline %u of its history had",
						tli, idgen_node_timeline_bits,
						tli - ((TimeLineID) 1 << idgen_node_timeline_bits)),
				 errdetail("Segment allocations of the two timelines are not disjoint, and the earlier one may have handed out IDs in WAL this server never replayed."),
				 errhint("Raise idgen.node_timeline_bits so that 2^bits is above the timeline, and restart; or, once no earlier server of this history hands out segment IDs, have a superuser run SELECT idgen.segment_resume().")));
		idgen_segments_refusal_keep(IDGEN_SEG_REFUSED_TIMELINE);
		pg_atomic_write_u32(&idgen_segment->refused, IDGEN_SEG_REFUSED_TIMELINE);
		ConditionVariableBroadcast(&idgen_segment->cv);
	}
	idgen_timeline_wrap_checked(IDGEN_WRAP_SEGMENTS, tli);
	checked = tli;
	return pg_atomic_read_u32(&idgen_segment->refused) == 0;
}

/* The last ID of an allocation of len IDs from first */
static int64
range_last(int64 first, int64 len)
{
	return first + (len - 1) * alloc_stride();
}

/* A kept plan of sql with nargs arguments of types */
static SPIPlanPtr
kept_plan(SPIPlanPtr *plan, const char *sql, int nargs, Oid *types)
{
	if (*plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL)
			elog(ERROR, "could not prepare \"%s\": %s", sql,
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "could not keep the plan of \"%s\"", sql);
		*plan = p;
	}
	return *plan;
}

/* Drop the kept plans (the table they were made for is gone) */
static void
forget_plans(void)
{
	SPIPlanPtr *plans[] = {&plan_lock, &plan_lock_cache, &plan_exists,
	&plan_advance};

	for (int i = 0; i < lengthof(plans); i++)
	{
		if (*plans[i] != NULL)
			SPI_freeplan(*plans[i]);
		*plans[i] = NULL;
	}
}

/*
 * The last ID this server allocated for a tag of this database since it
 * started, or 0 if none (segment IDs are at least 1).
 */
static int64
mark_of(const char *tag)
{
	IdgenSegmentKey key;
	IdgenSegmentMark *m;
	int64		max_id;

	idgen_segment_key(&key, tag);
	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	m = hash_search(idgen_segment_marks, &key, HASH_FIND, NULL);
	max_id = m ? m->max_id : 0;
	LWLockRelease(idgen_segment->lock);
	return max_id;
}

/* A committed allocation of a tag reached max_id: remember it */
static void
mark_set(const char *tag, int64 max_id)
{
	static bool full_logged = false;
	IdgenSegmentKey key;
	IdgenSegmentMark *m;
	bool		found;
	bool		near_top = false;
	TimestampTz now = GetCurrentTimestamp();

	idgen_segment_key(&key, tag);
	LWLockAcquire(idgen_segment->lock, LW_EXCLUSIVE);
	m = hash_search(idgen_segment_marks, &key, HASH_ENTER_NULL, &found);
	if (m != NULL)
	{
		if (!found)
			m->warned_at = 0;
		if (!found || m->max_id < max_id)
			m->max_id = max_id;
		/* Within 1% of the largest bigint: warn, once a day */
		if (max_id > PG_INT64_MAX - PG_INT64_MAX / 100 &&
			(m->warned_at == 0 ||
			 TimestampDifferenceExceeds(m->warned_at, now, 86400 * 1000)))
		{
			m->warned_at = now;
			near_top = true;
		}
	}
	LWLockRelease(idgen_segment->lock);
	if (near_top)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("idgen: segment tag \"%s\" is within 1%% of the largest bigint: max_id is " INT64_FORMAT,
						tag, max_id),
				 errdetail(INT64_FORMAT " IDs are left; once max_id reaches 9223372036854775807 the tag is refused (SQLSTATE 2200H).",
						   PG_INT64_MAX - max_id),
				 errhint("Move the tag's users to a new tag before then; this warning comes once a day.")));
	if (m == NULL && !full_logged)
	{
		full_logged = true;
		ereport(WARNING,
				(errmsg("idgen: no room to remember the allocations of segment tag \"%s\"", tag),
				 errdetail("Shared memory remembers the last allocation of %d tags since the server started; for tags beyond them a table edit that lowers max_id is not caught until a restart.",
						   IDGEN_SEGMENT_MARKS),
				 errhint("Raise idgen.segment_max_tags (it counts four times here) and restart the server.")));
	}
}

/*
 * The table (or a central server) says a tag continues after max_id, below
 * the last ID this server allocated for it: its row was moved back outside
 * idgen (a DELETE and INSERT, a data-only restore of an older dump).  Log
 * it; the caller continues above the remembered value.
 */
static void
warn_went_back(const char *tag, int64 max_id, int64 mark, const char *where)
{
	ereport(WARNING,
			(errmsg("idgen: segment tag \"%s\" went back: %s says max_id " INT64_FORMAT ", but this server already allocated up to " INT64_FORMAT,
					tag, where, max_id, mark),
			 errdetail("The tag's row was changed outside idgen while the server ran (a DELETE and INSERT, or a data-only restore of an older dump)."),
			 errhint("New segments start above " INT64_FORMAT ", so no ID is handed out twice; the higher value is written back where the table is this server's.",
					 mark)));
}

/* Is the slot seen in need still there, with the same generation? */
static bool
need_is_current(const SegmentNeed *need)
{
	IdgenSegmentSlot *slot;
	IdgenSegmentKey key;
	bool		current;

	idgen_segment_key(&key, need->tag);
	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
	current = (slot && pg_atomic_read_u64(&slot->generation) == need->gen);
	LWLockRelease(idgen_segment->lock);
	return current;
}

/*
 * The step of the next allocation (Leaf): double it when the previous
 * segment lasted less than idgen.segment_step_grow_after, halve it when it
 * lasted more than idgen.segment_step_shrink_after, always within the tag's
 * configured step and max(that, idgen.segment_max_step).
 */
static int64
next_step(const SegmentNeed *need, int64 min_step)
{
	int64		max_step = Max((int64) idgen_segment_max_step, min_step);
	int64		step = need->prev_step;

	if (step <= 0 || need->lasted_ms < 0)
		step = Max(step, min_step);
	else
	{
		if (need->lasted_ms < idgen_segment_grow_after_ms)
			step = Min(step * 2, max_step);
		else if (need->lasted_ms > idgen_segment_shrink_after_ms)
			step = step / 2;
	}
	return Min(Max(step, min_step), max_step);
}

/*
 * Allocate the next segment of a tag on the central segment server
 * (segment_server.c), of the next step: as allocate() says, with one
 * segment of all the IDs the server gave
 */
static AllocResult
allocate_remote(const SegmentNeed *need, int64 *first, int64 *len,
				int64 *seg_len)
{
	switch (idgen_segment_server_allocate(need->tag,
										  next_step(need, 1),
										  first, len))
	{
		case IDGEN_SEGMENT_SERVER_OK:
			{
				int64		mark = mark_of(need->tag);

				if (*first <= mark)
				{
					warn_went_back(need->tag, *first - 1, mark,
								   "the central segment server");
					if (*first + *len - 1 <= mark)
						return ALLOC_BUSY;	/* all of it: the next one */
					*len -= mark + 1 - *first;
					*first = mark + 1;
				}
				mark_set(need->tag, *first + *len - 1);
				*seg_len = *len;
				return ALLOC_OK;
			}
		case IDGEN_SEGMENT_SERVER_UNKNOWN:
			return ALLOC_UNKNOWN;
		case IDGEN_SEGMENT_SERVER_EXHAUSTED:
			return ALLOC_EXHAUSTED;
		case IDGEN_SEGMENT_SERVER_FAILED:
			break;
	}
	return ALLOC_NO_TABLE;		/* unreachable: try again in a second */
}

/*
 * In allocate()'s transaction, the row of need->tag locked and read into
 * SPI_tuptable: *max_id, the tag's configured *min_step and, where the
 * table has_cache, its *cache.  A max_id below the tag's tombstone or floor
 * is raised to it, with a warning.
 */
static void
read_locked_row(const SegmentNeed *need, bool has_cache, int64 *max_id,
				int64 *min_step, int32 *cache)
{
	bool		isnull;

	*max_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
	*min_step = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
											SPI_tuptable->tupdesc, 2, &isnull));
	if (has_cache)
	{
		Datum		c = SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 3, &isnull);

		/* The column's CHECK says the same; a row is not trusted */
		*cache = isnull ? 1 :
			Max(Min(DatumGetInt32(c), IDGEN_SEG_CACHE_MAX), 1);

		/*
		 * A row put back below what the tag ever allocated (an old
		 * data-only restore with triggers disabled, after a restart forgot
		 * the mark): its tombstone and floor still know
		 */
		for (int col = 4; col <= 5; col++)
		{
			Datum		v = SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, col, &isnull);

			if (!isnull && DatumGetInt64(v) > *max_id)
			{
				ereport(WARNING,
						(errmsg("idgen: segment tag \"%s\" went back: idgen.segment_alloc says max_id " INT64_FORMAT ", but %s says the tag allocated up to " INT64_FORMAT,
								need->tag, *max_id,
								col == 4 ? "idgen.segment_dropped" : "idgen.segment_floor",
								DatumGetInt64(v)),
						 errdetail("The tag's row was put back below IDs it had allocated, bypassing the table's trigger (a data-only restore of an older dump with triggers disabled)."),
						 errhint("New segments start above " INT64_FORMAT ", so no ID is handed out twice.",
								 DatumGetInt64(v))));
				*max_id = DatumGetInt64(v); /* written back below */
			}
		}
	}
}

/*
 * The first ID an allocation above max_id takes: the next one of this
 * timeline's residue (see the top of this file); above PG_INT64_MAX when
 * none is left
 */
static uint64
first_above(int64 max_id)
{
	uint64		stride = (uint64) alloc_stride();
	uint64		f = (uint64) max_id + 1;

	return f + ((uint64) alloc_residue() + stride - f % stride) % stride;
}

/*
 * In allocate()'s transaction, the row of need->tag locked: move its max_id
 * past need->count segments of step IDs from first (first_above(max_id),
 * at most PG_INT64_MAX), the last of which may be short, and set *first,
 * *len and *seg_len.  args[0] is the tag.
 */
static void
advance_max_id(const SegmentNeed *need, Oid *types, Datum *args,
			   int64 first_id, int64 step,
			   int64 *first, int64 *len, int64 *seg_len)
{
	int64		stride = alloc_stride();
	int64		room = (PG_INT64_MAX - first_id) / stride + 1;	/* IDs left */
	int64		total = 0;
	int			ret;

	/* count segments of step; the last one may be short */
	for (int i = 0; i < need->count; i++)
	{
		if (total > room - step)
		{
			total = room;
			break;
		}
		total += step;
	}
	args[1] = Int64GetDatum(first_id + (total - 1) * stride);
	ret = SPI_execute_plan(kept_plan(&plan_advance,
									 "UPDATE idgen.segment_alloc "
									 "SET max_id = $2, update_time = now() "
									 "WHERE biz_tag = $1",
									 2, types),
						   args, NULL, false, 0);
	if (ret != SPI_OK_UPDATE || SPI_processed != 1)
		elog(ERROR, "could not advance max_id of segment tag \"%s\"",
			 need->tag);
	*first = first_id;
	*len = total;
	*seg_len = step;
}

/*
 * In allocate()'s transaction, idgen.segment_alloc locked (with its cache
 * column where has_cache): lock the row of need->tag, never waiting for
 * it, and allocate from it, as allocate() says.  args[0] is the tag.
 */
static AllocResult
allocate_from_row(const SegmentNeed *need, bool has_cache, Oid *types,
				  Datum *args, int64 *first, int64 *len, int64 *seg_len,
				  int32 *cache)
{
	int			ret;
	int64		max_id,
				min_step,
				step,
				mark;

	ret = SPI_execute_plan(has_cache ?
						   kept_plan(&plan_lock_cache,
									 "SELECT a.max_id, a.step, a.cache, "
									 "(SELECT pg_catalog.max(d.max_id) FROM idgen.segment_dropped d "
									 " WHERE d.biz_tag OPERATOR(pg_catalog.=) a.biz_tag), "
									 "(SELECT pg_catalog.max(f.max_id) FROM idgen.segment_floor f "
									 " WHERE f.biz_tag OPERATOR(pg_catalog.=) a.biz_tag) "
									 "FROM idgen.segment_alloc a "
									 "WHERE a.biz_tag OPERATOR(pg_catalog.=) $1 FOR UPDATE OF a SKIP LOCKED",
									 1, types) :
						   kept_plan(&plan_lock,
									 "SELECT max_id, step FROM idgen.segment_alloc "
									 "WHERE biz_tag = $1 FOR UPDATE SKIP LOCKED",
									 1, types),
						   args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not lock the row of segment tag \"%s\"", need->tag);
	if (SPI_processed == 0)
	{
		/* Locked by someone else, or not there at all? */
		ret = SPI_execute_plan(kept_plan(&plan_exists,
										 "SELECT 1 FROM idgen.segment_alloc WHERE biz_tag = $1",
										 1, types),
							   args, NULL, true, 1);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "could not read the row of segment tag \"%s\"", need->tag);
		return SPI_processed == 0 ? ALLOC_UNKNOWN : ALLOC_BUSY;
	}
	if (!need_is_current(need))
	{
		/*
		 * Dropped or altered since we looked: its row lock was released
		 * after it removed the slot, so skip rather than allocate a segment
		 * nobody can use.
		 */
		return ALLOC_STALE;
	}
	read_locked_row(need, has_cache, &max_id, &min_step, cache);
	step = next_step(need, Max(min_step, 1));
	mark = mark_of(need->tag);
	if (max_id < mark)
	{
		warn_went_back(need->tag, max_id, mark, "idgen.segment_alloc");
		max_id = mark;			/* the UPDATE below writes it back */
	}
	if (max_id >= PG_INT64_MAX || first_above(max_id) > (uint64) PG_INT64_MAX)
		return ALLOC_EXHAUSTED;
	advance_max_id(need, types, args, (int64) first_above(max_id), step,
				   first, len, seg_len);
	return ALLOC_OK;
}

/*
 * Allocate the next need->count segments of a tag in a transaction of its
 * own.  On ALLOC_OK, *len IDs from *first on, alloc_stride() apart, are
 * committed, to be split into segments of *seg_len IDs (the last may be shorter), and *cache
 * is the tag's cache: column cache of its row, or 1 before ALTER EXTENSION
 * UPDATE to 0.4.0 added it and with a central segment server (whose
 * segment_allocate does not say it).
 */
static AllocResult
allocate(const SegmentNeed *need, int64 *first, int64 *len, int64 *seg_len,
		 int32 *cache)
{
	Oid			relid;
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		args[2];
	AllocResult result = ALLOC_OK;

	*cache = 1;
	/* With a central segment server, allocate there (segment_server.c) */
	if (alloc_kind == IDGEN_WORKER_REMOTE)
		return allocate_remote(need, first, len, seg_len);
	if (!timeline_allows())
		return ALLOC_REFUSED;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "idgen: segment allocation");

	relid = idgen_table_relid("segment_alloc");
	args[0] = CStringGetTextDatum(need->tag);

	if (!OidIsValid(relid))
		result = ALLOC_NO_TABLE;
	else if (!ConditionalLockRelationOid(relid, RowExclusiveLock))
	{
		/*
		 * Locked by someone (LOCK TABLE, a schema change): never wait for
		 * it, so the snowflake reservation and other work go on; try again
		 * soon.
		 */
		result = ALLOC_BUSY;
	}
	else if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		result = ALLOC_NO_TABLE;
	else if (OidIsValid(last_relid) && last_relid != relid)
	{
		/* The table was dropped and created again: nothing buffered holds */
		last_relid = relid;
		idgen_segment_forget_all();
		forget_plans();
		result = ALLOC_BUSY;
	}
	else
	{
		bool		has_cache = get_attnum(relid, "cache") != InvalidAttrNumber;

		last_relid = relid;
		result = allocate_from_row(need, has_cache, types, args,
								   first, len, seg_len, cache);
	}

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	/* Committed: never below it again while the server runs */
	if (result == ALLOC_OK)
		mark_set(need->tag, range_last(*first, *len));
	return result;
}

/*
 * Make a committed allocation (or what was found) visible in the slot: the
 * len IDs from first on, alloc_stride() apart, become the segments (of
 * seg_len IDs) after the last one ready, each with the tag's cache.  flags: PUBLISH_LATE, a
 * standby did not flush the allocation (within idgen.segment_standby_wait,
 * or excused); PUBLISH_UNPROTECTED, no standby streamed where one is
 * expected.
 */
static void
publish(const SegmentNeed *need, AllocResult result, int64 first, int64 len,
		int64 seg_len, int32 cache, int flags)
{
	IdgenSegmentSlot *slot;
	IdgenSegmentKey key;

	idgen_segment_key(&key, need->tag);
	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
	if (slot && pg_atomic_read_u64(&slot->generation) == need->gen)
	{
		if (result == ALLOC_UNKNOWN)
		{
			pg_atomic_write_u64(&slot->last_alloc,
								(uint64) GetCurrentTimestamp());	/* since when */
			pg_atomic_write_u32(&slot->state, IDGEN_SEG_UNKNOWN);
		}
		else if (result == ALLOC_EXHAUSTED)
			pg_atomic_write_u32(&slot->state, IDGEN_SEG_EXHAUSTED);
		else if (result == ALLOC_OK)
		{
			uint64		e = pg_atomic_read_u64(&slot->pos) >> IDGEN_SEG_OFF_BITS;
			int			r = idgen_segment_ready(slot, e);
			uint64		x = (e + r + 1) & IDGEN_SEG_EPOCH_MASK;
			TimestampTz now = GetCurrentTimestamp();
			int64		done = 0;
			uint64		n = 0;

			/*
			 * Callers may move the current epoch on meanwhile, but never
			 * past x, whose descriptor is not ready yet; e is at most the
			 * current epoch, so a descriptor less than IDGEN_SEG_RING epochs
			 * ahead of e is never the current one.  The chain is at most half
			 * the ring, so every segment fits; one that did not would only
			 * leave a gap.
			 */
			while (done < len &&
				   ((x - e) & IDGEN_SEG_EPOCH_MASK) < IDGEN_SEG_RING)
			{
				IdgenSegmentDesc *d = &slot->ring[x % IDGEN_SEG_RING];
				int64		l = Min(seg_len, len - done);
				double		at = (double) l * idgen_segment_prefetch;

				pg_atomic_write_u32(&d->epoch, IDGEN_SEG_EPOCH_INVALID);
				pg_write_barrier();
				d->start = first + done * alloc_stride();
				d->len = l;
				d->stride = alloc_stride();
				d->prefetch_at = (int64) Min(at, (double) l);
				d->cache = cache;
				pg_write_barrier();
				pg_atomic_write_u32(&d->epoch, (uint32) x);
				done += l;
				n++;
				x = (x + 1) & IDGEN_SEG_EPOCH_MASK;
			}
			pg_atomic_write_u64(&slot->dyn_step, (uint64) seg_len);
			pg_atomic_write_u64(&slot->last_alloc, (uint64) now);
			pg_atomic_write_u64(&slot->last_fetch, (uint64) now);
			pg_atomic_write_u32(&slot->alloc_epoch, (uint32) e);
			pg_atomic_write_u64(&slot->hunger_at, (uint64) now);
			pg_atomic_write_u32(&slot->hunger_epoch, (uint32) e);
			pg_atomic_fetch_add_u64(&slot->fetches, n);
			if (flags & PUBLISH_LATE)
				pg_atomic_fetch_add_u64(&slot->standby_timeouts, 1);
			if (flags & PUBLISH_UNPROTECTED)
				pg_atomic_fetch_add_u64(&slot->unprotected, 1);
			pg_atomic_write_u64(&slot->standby_wait_until, 0);
			pg_atomic_write_u32(&slot->state, IDGEN_SEG_ACTIVE);
		}
	}
	LWLockRelease(idgen_segment->lock);
	ConditionVariableBroadcast(&idgen_segment->cv);
}

/*
 * Is walsender slot i a physical standby's that has not flushed WAL up to
 * lsn?  Its pid in *pid either way (0: none).  A walsender counts while
 * its state is streaming, catching up or stopping: a standby still
 * catching up can be promoted too (Patroni promotes one within
 * maximum_lag_on_failover), and t/115 repeated segment IDs when one that
 * had just rejoined was not waited for.  The entry is read under its
 * spinlock, as pg_stat_replication reads it.  Notes in seen_standby that a
 * physical standby streams.  An excused standby whose
 * walsender is gone, or that has caught up (flushed up to its until), is
 * excused no more (the latter with a LOG line).
 */
static bool
walsender_behind(int i, XLogRecPtr lsn, pid_t *pid)
{
	WalSnd	   *w = &WalSndCtl->walsnds[i];
	WalSndState state;
	XLogRecPtr	flush;
	PGPROC	   *proc;

	SpinLockAcquire(&w->mutex);
	*pid = w->pid;
	state = w->state;
	flush = w->flush;
	SpinLockRelease(&w->mutex);
	if (excused != NULL && excused[i].pid != 0)
	{
		if (excused[i].pid != *pid)
			excused[i].pid = 0;
		else if (flush >= excused[i].until)
		{
			ereport(LOG,
					(errmsg("idgen: the standby of walsender pid %d has caught up; segment allocations wait for it again",
							(int) *pid)));
			excused[i].pid = 0;
		}
	}
	if (*pid == 0 ||
		(state != WALSNDSTATE_STREAMING && state != WALSNDSTATE_CATCHUP &&
		 state != WALSNDSTATE_STOPPING))
		return false;
	/* A logical walsender is connected to a database; skip it */
	proc = BackendPidGetProc(*pid);
	if (proc == NULL || OidIsValid(proc->databaseId))
		return false;
	seen_standby = true;
	return flush < lsn;
}

/*
 * How many physical standbys streaming from this server have not flushed
 * WAL up to lsn and are not excused; the pids of the first max of them in
 * pids; *n_excused (when not NULL) is set to how many excused standbys have
 * not flushed it either
 */
static int
standbys_behind(XLogRecPtr lsn, pid_t *pids, int max, int *n_excused)
{
	int			n = 0;

	if (n_excused)
		*n_excused = 0;
	if (WalSndCtl == NULL)
		return 0;
	for (int i = 0; i < max_wal_senders; i++)
	{
		pid_t		pid;

		if (!walsender_behind(i, lsn, &pid))
			continue;
		if (excused != NULL && excused[i].pid == pid)
		{
			if (n_excused)
				(*n_excused)++;
			continue;
		}
		if (n < max)
			pids[n] = pid;
		n++;
	}
	return n;
}

/*
 * Excuse every physical standby that has not flushed lsn (and is not
 * excused already) until it has flushed WAL up to where it ends now
 */
static void
excuse_standbys(XLogRecPtr lsn)
{
	XLogRecPtr	until = GetXLogInsertRecPtr();

	if (WalSndCtl == NULL)
		return;
	if (excused == NULL)
		excused = MemoryContextAllocZero(TopMemoryContext,
										 sizeof(ExcusedStandby) * Max(max_wal_senders, 1));
	for (int i = 0; i < max_wal_senders; i++)
	{
		pid_t		pid;

		if (walsender_behind(i, lsn, &pid) && excused[i].pid != pid)
		{
			excused[i].pid = pid;
			excused[i].until = until;
		}
	}
}

/*
 * The standbys of pids, as pg_stat_replication names them: application
 * name, pid and address.  Runs a transaction of its own.
 */
static char *
standby_names(const pid_t *pids, int n)
{
	StringInfoData sql;
	StringInfoData names;
	int			ret;

	initStringInfo(&names);
	initStringInfo(&sql);
	appendStringInfoString(&sql,
						   "SELECT pid, application_name, client_addr "
						   "FROM pg_catalog.pg_stat_replication WHERE pid IN (");
	for (int i = 0; i < n; i++)
		appendStringInfo(&sql, "%s%d", i > 0 ? ", " : "", (int) pids[i]);
	appendStringInfoString(&sql, ") ORDER BY pid");

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	ret = SPI_execute(sql.data, true, 0);
	if (ret == SPI_OK_SELECT)
	{
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			char	   *pid = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
			char	   *app = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2);
			char	   *addr = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3);

			appendStringInfo(&names, "%s\"%s\" (pid %s%s%s)",
							 r > 0 ? ", " : "", app ? app : "",
							 pid, addr ? ", " : "", addr ? addr : "");
		}
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	/* Gone meanwhile: their pids */
	if (names.len == 0)
		for (int i = 0; i < n; i++)
			appendStringInfo(&names, "%spid %d", i > 0 ? ", " : "", (int) pids[i]);
	return names.data;
}

/* A pending allocation gave up on standbys: say which, and what it costs */
static void
warn_late(const PendingAlloc *p, const pid_t *pids, int n)
{
	char	   *names = standby_names(pids, Min(n, STANDBY_NAMED_MAX));

	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("idgen: segment tag \"%s\": %d streaming standby(s) did not flush its allocation within %d ms: %s",
					p->need.tag, n, idgen_segment_standby_wait_ms, names),
			 errdetail("IDs " INT64_FORMAT " to " INT64_FORMAT " are handed out anyway; if such a standby is promoted before it has received the allocation (commit record at %X/%X), it may hand them out again. Allocations wait for it no more until it has caught up.",
					   p->first, range_last(p->first, p->len), LSN_FORMAT_ARGS(p->lsn)),
			 errhint("Check the standby's connection and disk; idgen.segment_standby_wait sets how long the idgen worker waits, and segment_status.standby_timeouts counts these.")));
	excused_warned_at = idgen_clock_monotonic_ms();
}

/*
 * An allocation handed out without the flush of n excused standbys: a
 * WARNING at most once every EXCUSED_WARN_MS
 */
static void
warn_excused(const SegmentNeed *need, int64 first, int64 len, int n)
{
	int64		now = idgen_clock_monotonic_ms();

	if (excused_warned_at >= 0 && now - excused_warned_at < EXCUSED_WARN_MS)
		return;
	excused_warned_at = now;
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("idgen: segment tag \"%s\": IDs " INT64_FORMAT " to " INT64_FORMAT " handed out without waiting for %d streaming standby(s) that missed idgen.segment_standby_wait before",
					need->tag, first, range_last(first, len), n),
			 errdetail("Allocations wait for such a standby again once it has caught up; until then a failover to it may hand their IDs out again, and segment_status.standby_timeouts counts each of them. This WARNING comes at most once a minute."),
			 errhint("Check the standby's connection and disk.")));
}

/* Has the tag an allocation waiting for the standbys? */
static bool
is_pending(const char *tag)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		PendingAlloc *p = lfirst(lc);

		if (strcmp(p->need.tag, tag) == 0)
			return true;
	}
	return false;
}

/*
 * Tell the tag's callers that its allocation waits for the standbys, until
 * a moment after the next look: past it (the worker gone) they stop waiting
 * on its account
 */
static void
show_standby_wait(const SegmentNeed *need, int64 now, long next_ms)
{
	IdgenSegmentSlot *slot;
	IdgenSegmentKey key;

	idgen_segment_key(&key, need->tag);
	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	slot = hash_search(idgen_segment_hash, &key, HASH_FIND, NULL);
	if (slot && pg_atomic_read_u64(&slot->generation) == need->gen)
		pg_atomic_write_u64(&slot->standby_wait_until,
							(uint64) (now + next_ms + 1000));
	LWLockRelease(idgen_segment->lock);
}

/*
 * Publish the pending allocations that every streaming standby has
 * flushed, or that waited idgen.segment_standby_wait (with a WARNING).
 * Lowers *sleep_ms to the next look for the others.
 */
static void
check_pending(long *sleep_ms)
{
	ListCell   *lc;
	int64		now = idgen_clock_monotonic_ms();

	foreach(lc, pending)
	{
		PendingAlloc *p = lfirst(lc);
		pid_t		pids[STANDBY_NAMED_MAX];
		int			n = 0;
		int			n_excused = 0;
		long		waited = (long) (now - p->committed);
		long		left = idgen_segment_standby_wait_ms - waited;

		if (idgen_segment_standby_wait_ms > 0)
			n = standbys_behind(p->lsn, pids, lengthof(pids), &n_excused);
		if (n > 0 && left > 0)
		{
			/* Look again soon: a quarter of the wait so far, within bounds */
			long		next = Max(Min(Min(waited / 4, STANDBY_POLL_MAX_MS), left), 1);

			show_standby_wait(&p->need, now, next);
			*sleep_ms = Min(*sleep_ms, next);
			continue;
		}
		if (n > 0)
		{
			warn_late(p, pids, n);
			MemoryContextSwitchTo(step_cxt);	/* its transaction left it */
			excuse_standbys(p->lsn);
		}
		else if (n_excused > 0)
			warn_excused(&p->need, p->first, p->len, n_excused);
		publish(&p->need, ALLOC_OK, p->first, p->len, p->seg_len, p->cache,
				(n > 0 || n_excused > 0) ? PUBLISH_LATE : 0);
		pending = foreach_delete_current(pending, lc);
		pfree(p);
	}
}

/* How many physical standbys stream from this server (any flush position) */
static int
standbys_streaming(void)
{
	int			n = 0;

	if (WalSndCtl == NULL)
		return 0;
	for (int i = 0; i < max_wal_senders; i++)
	{
		pid_t		pid;

		/* behind the largest position: every physical standby streaming */
		if (walsender_behind(i, PG_UINT64_MAX, &pid))
			n++;
	}
	return n;
}

/*
 * Is an allocation handed out now unprotected: no standby streams, where
 * one is expected (see the top of this file)?  Says so in a WARNING at
 * most once every EXCUSED_WARN_MS.
 */
static bool
unprotected(const SegmentNeed *need, int64 first, int64 len)
{
	int64		now;

	if (max_wal_senders <= 0 || standbys_streaming() > 0 ||
		(!seen_standby && GetWALInsertionTimeLine() <= 1))
		return false;
	now = idgen_clock_monotonic_ms();
	if (unprotected_warned_at < 0 || now - unprotected_warned_at >= EXCUSED_WARN_MS)
	{
		unprotected_warned_at = now;
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("idgen: segment tag \"%s\": IDs " INT64_FORMAT " to " INT64_FORMAT " handed out with no streaming standby",
						need->tag, first, range_last(first, len)),
				 errdetail("%s; a failover to a standby that was not streaming may hand these IDs out again. segment_status.unprotected counts such allocations; this WARNING comes at most once a minute.",
						   seen_standby ? "A standby streamed from this server before" : "This server was promoted (timeline above 1)"),
				 errhint("Reconnect the standby, or set idgen.segment_standby_wait = 0 on a server meant to run without one.")));
	}
	return true;
}

/*
 * A committed allocation: publish it at once unless a streaming standby
 * has yet to flush its commit record (then it waits in pending)
 */
static void
publish_or_wait(const SegmentNeed *need, int64 first, int64 len,
				int64 seg_len, int32 cache, long *sleep_ms)
{
	XLogRecPtr	lsn = XactLastCommitEnd;
	PendingAlloc *p;
	MemoryContext old;
	int			n_excused = 0;

	/* A central server's allocation was committed there */
	if (alloc_kind == IDGEN_WORKER_REMOTE || idgen_segment_standby_wait_ms <= 0)
	{
		publish(need, ALLOC_OK, first, len, seg_len, cache, 0);
		return;
	}
	if (standbys_behind(lsn, NULL, 0, &n_excused) == 0)
	{
		int			flags = 0;

		if (n_excused > 0)
		{
			warn_excused(need, first, len, n_excused);
			flags = PUBLISH_LATE;
		}
		else if (unprotected(need, first, len))
			flags = PUBLISH_UNPROTECTED;
		publish(need, ALLOC_OK, first, len, seg_len, cache, flags);
		return;
	}
	if (pending_cxt == NULL)
		pending_cxt = AllocSetContextCreate(TopMemoryContext,
											"idgen segments pending",
											ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(pending_cxt);
	p = palloc0(sizeof(PendingAlloc));
	p->need = *need;
	p->first = first;
	p->len = len;
	p->seg_len = seg_len;
	p->cache = cache;
	p->lsn = lsn;
	p->committed = idgen_clock_monotonic_ms();
	pending = lappend(pending, p);
	MemoryContextSwitchTo(old);
	show_standby_wait(need, p->committed, 1);
	*sleep_ms = Min(*sleep_ms, 1);
}

/* See worker.h */
bool
idgen_segment_alloc_waiting(void)
{
	return pending != NIL;
}

/*
 * slot_needs found the slot of state (epoch e, r segments ready, a chain of
 * k, at most kmax, its last allocation at prev_alloc) not due for a
 * segment: shrink its chain where it should, setting *changed
 */
static void
chain_when_not_due(IdgenSegmentSlot *slot, TimestampTz now, uint32 state,
				   uint64 e, int k, int kmax, int r, TimestampTz prev_alloc,
				   bool *changed)
{
	int			knew;

	/*
	 * Not due.  A chain longer than idgen.segment_chain_max shrinks to it.
	 * A pause (no allocation, chain change or pause noticed for
	 * CHAIN_SHRINK_MS) halves the chain, never below the segments still
	 * ready, and starts the measure of hunger afresh.
	 */
	if (k > kmax)
	{
		pg_atomic_write_u32(&slot->chain_len, (uint32) kmax);
		pg_atomic_write_u64(&slot->chain_at, (uint64) now);
		*changed = true;
	}
	else if (state == IDGEN_SEG_ACTIVE &&
			 TimestampDifferenceExceeds(prev_alloc, now, CHAIN_SHRINK_MS) &&
			 TimestampDifferenceExceeds((TimestampTz) pg_atomic_read_u64(&slot->chain_at),
										now, CHAIN_SHRINK_MS) &&
			 TimestampDifferenceExceeds((TimestampTz) pg_atomic_read_u64(&slot->hunger_at),
										now, CHAIN_SHRINK_MS))
	{
		knew = Max(Max(k / 2, r), 1);
		if (knew != k)
		{
			pg_atomic_write_u32(&slot->chain_len, (uint32) knew);
			pg_atomic_write_u64(&slot->chain_at, (uint64) now);
			*changed = true;
		}
		pg_atomic_write_u64(&slot->hunger_at, (uint64) now);
		pg_atomic_write_u32(&slot->hunger_epoch, (uint32) e);
	}
}

/*
 * slot_needs, for an active slot (current epoch e) allocated before, at
 * prev_alloc: how long its segments lasted since then, and since the pause
 * noticed last, in need
 */
static void
measure_hunger(IdgenSegmentSlot *slot, TimestampTz now, uint64 e,
			   TimestampTz prev_alloc, SegmentNeed *need)
{
	uint64		used = (e - pg_atomic_read_u32(&slot->alloc_epoch)) &
		IDGEN_SEG_EPOCH_MASK;
	TimestampTz since = (TimestampTz) pg_atomic_read_u64(&slot->hunger_at);

	need->lasted_ms = (now - prev_alloc) / 1000 / (int64) Max(used, 1);
	/*
	 * Hunger since the pause noticed last, if any: over two segments at
	 * least, as the first may have been used mostly before it
	 */
	used = (e - pg_atomic_read_u32(&slot->hunger_epoch)) & IDGEN_SEG_EPOCH_MASK;
	need->hunger_ms = (since > prev_alloc && used >= 2) ?
		(now - since) / 1000 / (int64) used : need->lasted_ms;
}

/*
 * Does the slot need segments, and how many?  Also grows or shrinks its
 * chain (see the top of this file).  Returns the number of segments to
 * allocate, 0 if none; *changed tells whether the chain changed.  Caller
 * holds the lock.
 */
static int
slot_needs(IdgenSegmentSlot *slot, TimestampTz now, SegmentNeed *need,
		   bool *changed)
{
	uint32		state = pg_atomic_read_u32(&slot->state);
	uint64		p = pg_atomic_read_u64(&slot->pos);
	uint64		e = p >> IDGEN_SEG_OFF_BITS;
	uint64		off = p & IDGEN_SEG_OFF_MASK;
	IdgenSegmentDesc *d = &slot->ring[e % IDGEN_SEG_RING];
	int			k = (int) pg_atomic_read_u32(&slot->chain_len);
	int			kmax = (alloc_kind == IDGEN_WORKER_REMOTE) ? 1 :
		idgen_segment_chain_max;
	int			r;
	int			knew;
	bool		urgent;
	TimestampTz prev_alloc = (TimestampTz) pg_atomic_read_u64(&slot->last_alloc);
	int64		prev_step = (int64) pg_atomic_read_u64(&slot->dyn_step);
	bool		hungry;
	bool		step_fixed;

	if (state == IDGEN_SEG_UNKNOWN || state == IDGEN_SEG_EXHAUSTED)
		return 0;
	r = idgen_segment_ready(slot, e);
	urgent = (state == IDGEN_SEG_LOADING || (r == 0 && off >= (uint64) d->len));
	/*
	 * Due: at most half the chain left, the current segment past its wake
	 * point, and at most one refill per segment (the current one is not the
	 * one of the last allocation); or callers wait.
	 */
	if (!urgent && !(r < k && r <= k / 2 && off >= (uint64) d->prefetch_at &&
					 (uint32) e != pg_atomic_read_u32(&slot->alloc_epoch)))
	{
		chain_when_not_due(slot, now, state, e, k, kmax, r, prev_alloc,
						   changed);
		return 0;
	}

	need->urgent = urgent;
	need->prev_step = prev_step;
	need->lasted_ms = -1;
	need->hunger_ms = -1;
	if (prev_alloc != 0 && state == IDGEN_SEG_ACTIVE)
		measure_hunger(slot, now, e, prev_alloc, need);

	/*
	 * Hunger: the segments went fast.  A caller that waited behind a segment
	 * that lasted long met a slow allocation (a locked row, a busy disk),
	 * which a longer chain would not have avoided.
	 */
	hungry = state == IDGEN_SEG_ACTIVE &&
		need->hunger_ms >= 0 && need->hunger_ms < CHAIN_HUNGRY_MS;
	step_fixed = idgen_segment_grow_after_ms == 0 ||
		prev_step >= (int64) idgen_segment_max_step;
	if (hungry && step_fixed)
		knew = Min(k * 2, kmax);
	else if (hungry)
		knew = Min(k, kmax);
	else
		knew = Max(k / 2, 1);
	knew = Max(Min(knew, kmax), 1);
	if (knew != k)
	{
		pg_atomic_write_u32(&slot->chain_len, (uint32) knew);
		pg_atomic_write_u64(&slot->chain_at, (uint64) now);
		*changed = true;
	}

	/*
	 * A step held fixed (idgen.segment_step_grow_after = 0) gets the longer
	 * chain at once; after the dynamic step reached its maximum it takes
	 * effect at the next refill, so that each allocation of Leaf's rule is
	 * one segment.
	 */
	need->count = (idgen_segment_grow_after_ms == 0 ? knew : Min(k, knew)) - r;
	if (urgent)
		need->count = Max(need->count, 1);
	return Max(need->count, 0);
}

/*
 * Collect the slots of this database that need a segment, urgent ones
 * first, and in *unknown the slots left unknown for longer than
 * UNKNOWN_KEEP_MS.
 */
static List *
collect_needs(List **unknown, bool *changed)
{
	HASH_SEQ_STATUS scan;
	IdgenSegmentSlot *slot;
	List	   *urgent = NIL;
	List	   *later = NIL;
	TimestampTz now = GetCurrentTimestamp();

	LWLockAcquire(idgen_segment->lock, LW_SHARED);
	hash_seq_init(&scan, idgen_segment_hash);
	while ((slot = hash_seq_search(&scan)) != NULL)
	{
		SegmentNeed *need;

		if (slot->key.dbid != MyDatabaseId ||
			pg_atomic_read_u64(&slot->generation) == 0)
			continue;
		if (pg_atomic_read_u32(&slot->state) == IDGEN_SEG_UNKNOWN &&
			TimestampDifferenceExceeds((TimestampTz) pg_atomic_read_u64(&slot->last_alloc),
									   now, UNKNOWN_KEEP_MS))
		{
			need = palloc0(sizeof(SegmentNeed));
			strlcpy(need->tag, slot->key.tag, sizeof(need->tag));
			need->gen = pg_atomic_read_u64(&slot->generation);
			*unknown = lappend(*unknown, need);
			continue;
		}
		/*
		 * Its last allocation still waits for the standbys: not due, and
		 * its chain is left as it is (rounds come every few ms meanwhile)
		 */
		if (is_pending(slot->key.tag))
			continue;
		need = palloc0(sizeof(SegmentNeed));
		if (slot_needs(slot, now, need, changed) == 0)
		{
			pfree(need);
			continue;
		}
		strlcpy(need->tag, slot->key.tag, sizeof(need->tag));
		need->gen = pg_atomic_read_u64(&slot->generation);
		if (need->urgent)
			urgent = lappend(urgent, need);
		else
			later = lappend(later, need);
	}
	LWLockRelease(idgen_segment->lock);
	return list_concat(urgent, later);
}

/* One round of the allocator's segment work; see worker.h */
bool
idgen_segment_alloc_step(long *sleep_ms, IdgenWorkerKind kind)
{
	MemoryContext old;
	int64		start;			/* monotonic ms */
	List	   *needs;
	List	   *unknown = NIL;
	ListCell   *lc;
	bool		work;
	bool		changed = false;

	/* In idgen.database: the remote worker with a central server */
	if ((kind == IDGEN_WORKER_MAIN && idgen_segment_server_enabled()) ||
		(kind == IDGEN_WORKER_REMOTE && !idgen_segment_server_enabled()))
		return false;
	alloc_kind = kind;
	if (idgen_segment == NULL || RecoveryInProgress())
		return true;
	if (step_cxt == NULL)
		step_cxt = AllocSetContextCreate(TopMemoryContext,
										 "idgen segment worker",
										 ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(step_cxt);
	old = MemoryContextSwitchTo(step_cxt);

	check_pending(sleep_ms);
	start = idgen_clock_monotonic_ms();
	needs = collect_needs(&unknown, &changed);
	work = (needs != NIL || unknown != NIL || changed);
	foreach(lc, unknown)
	{
		SegmentNeed *gone = lfirst(lc);

		idgen_segment_forget(gone->tag, gone->gen);
	}
	foreach(lc, needs)
	{
		SegmentNeed *need = lfirst(lc);
		AllocResult result;
		int64		first = 0,
					len = 0,
					seg_len = 0;
		int32		cache = 1;

		CHECK_FOR_INTERRUPTS();
		if (idgen_clock_monotonic_ms() - start >= STEP_BUDGET_MS)
		{
			/* Let the snowflake reservation have its turn, then go on */
			*sleep_ms = 0;
			break;
		}
		result = allocate(need, &first, &len, &seg_len, &cache);
		MemoryContextSwitchTo(step_cxt);
		if (result == ALLOC_BUSY)
			*sleep_ms = Min(*sleep_ms, BUSY_RETRY_MS);
		else if (result == ALLOC_NO_TABLE)
			*sleep_ms = Min(*sleep_ms, 1000);
		else if (result == ALLOC_STALE)
			*sleep_ms = 0;		/* look for the new slot at once */
		else if (result == ALLOC_REFUSED)
			*sleep_ms = Min(*sleep_ms, 1000);	/* callers get the error */
		else if (result == ALLOC_OK)
			publish_or_wait(need, first, len, seg_len, cache, sleep_ms);
		else
			publish(need, result, first, len, seg_len, cache, 0);
	}

	MemoryContextSwitchTo(old);
	MemoryContextReset(step_cxt);
	return work || pending != NIL;
}
