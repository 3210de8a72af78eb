/*
 * currval.c
 *		The last ID this session drew, for snowflake_currval() and
 *		segment_currval().
 *
 * A session keeps its own values in process memory: the last snowflake (or
 * gene) ID, and a hash of the last ID of each segment tag.  DISCARD ALL and
 * DISCARD SEQUENCES forget them (idgen_currval_discard, called from the
 * ProcessUtility hook in module.c), as they do a sequence's currval.
 *
 * The draws of a parallel statement's workers belong to the leader's
 * session.  A worker keeps the largest ID it drew (snowflake, and per
 * segment tag, up to IDGEN_CURRVAL_WORKER_TAGS tags) and, when it exits,
 * merges them into the leader's slot of shared memory (one slot per PGPROC)
 * and sets the slot's pending flag.  The leader's statement ends only after
 * its workers have exited (DestroyParallelContext waits for that), so by
 * then the slot holds every worker's draws.  The leader takes them in (the
 * larger of its own and the reported value: IDs of a generator increase, so
 * the largest is the last) the next time it draws or reads a currval.
 *
 * Locking: a slot's fields are protected by its spinlock, held for a few
 * copies; pending is an atomic flag read without it by the leader.  A slot
 * belongs to the leader whose pid it names, written after the leader's
 * session began; anything else in it is stale and ignored.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/twophase.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "currval.h"

/* One tag's largest ID drawn by a parallel worker */
typedef struct WorkerTag
{
	int			len;
	char		tag[IDGEN_CURRVAL_TAG_MAX + 1];
	int64		id;
} WorkerTag;

/* What the parallel workers of one leader drew */
typedef struct WorkerDraws
{
	bool		have_snowflake;
	int64		snowflake;		/* largest snowflake ID */
	int			ntags;
	bool		tags_lost;		/* drew from more tags than fit */
	WorkerTag	tags[IDGEN_CURRVAL_WORKER_TAGS];
} WorkerDraws;

/* The slot of one leader (indexed by its PGPROC number) */
typedef struct CurrvalSlot
{
	slock_t		mutex;
	pg_atomic_uint32 pending;	/* set by a worker, cleared by the leader */
	int			leader_pid;		/* mutex: whose draws these are */
	TimestampTz written;		/* mutex: when last written */
	WorkerDraws draws;			/* mutex */
} CurrvalSlot;

typedef struct CurrvalShared
{
	int			nslots;
	CurrvalSlot slots[FLEXIBLE_ARRAY_MEMBER];
} CurrvalShared;

static CurrvalShared *cv_shared = NULL;

/* The session's own values */
static int64 snowflake_last = 0;
static bool snowflake_have = false;

typedef struct CurrvalTag
{
	char		tag[IDGEN_CURRVAL_TAG_MAX + 1]; /* hash key, zero-padded */
	int			len;
	int64		last_id;
} CurrvalTag;

static HTAB *tags = NULL;
static CurrvalTag *tag_last = NULL; /* entry of the last tag used */
static bool tags_lost = false;

/* In a parallel worker: what it drew, and for which leader */
static WorkerDraws worker_draws;
static bool worker_reporting = false;
static int	worker_slot = -1;
static int	worker_leader_pid = 0;

/* Number of slots: one per PGPROC */
static int
currval_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/* Shared memory needed */
Size
idgen_currval_shmem_size(void)
{
	return add_size(offsetof(CurrvalShared, slots),
					mul_size(currval_slots(), sizeof(CurrvalSlot)));
}

/* Create or attach the slots; caller holds AddinShmemInitLock */
void
idgen_currval_shmem_init(void)
{
	bool		found;

	cv_shared = ShmemInitStruct("idgen currval", idgen_currval_shmem_size(),
								&found);
	if (!found)
	{
		cv_shared->nslots = currval_slots();
		for (int i = 0; i < cv_shared->nslots; i++)
		{
			CurrvalSlot *slot = &cv_shared->slots[i];

			SpinLockInit(&slot->mutex);
			pg_atomic_init_u32(&slot->pending, 0);
			slot->leader_pid = 0;
			slot->written = 0;
			memset(&slot->draws, 0, sizeof(slot->draws));
		}
	}
}

/* Merge draw (tag p[0..len), id) into d, keeping the larger ID */
static void
draws_add_tag(WorkerDraws *d, const char *p, int len, int64 id)
{
	for (int i = 0; i < d->ntags; i++)
	{
		WorkerTag  *t = &d->tags[i];

		if (t->len == len && memcmp(t->tag, p, len) == 0)
		{
			t->id = Max(t->id, id);
			return;
		}
	}
	if (d->ntags == IDGEN_CURRVAL_WORKER_TAGS)
	{
		d->tags_lost = true;
		return;
	}
	d->tags[d->ntags].len = len;
	memcpy(d->tags[d->ntags].tag, p, len);
	d->tags[d->ntags].id = id;
	d->ntags++;
}

/* Merge src into dst */
static void
draws_merge(WorkerDraws *dst, const WorkerDraws *src)
{
	if (src->have_snowflake)
	{
		dst->snowflake = dst->have_snowflake ?
			Max(dst->snowflake, src->snowflake) : src->snowflake;
		dst->have_snowflake = true;
	}
	for (int i = 0; i < src->ntags; i++)
		draws_add_tag(dst, src->tags[i].tag, src->tags[i].len, src->tags[i].id);
	dst->tags_lost |= src->tags_lost;
}

/* A parallel worker exits: report its draws to its leader's slot */
static void
worker_report(int code, Datum arg)
{
	CurrvalSlot *slot = &cv_shared->slots[worker_slot];

	SpinLockAcquire(&slot->mutex);
	if (slot->leader_pid != worker_leader_pid)
	{
		slot->leader_pid = worker_leader_pid;
		memset(&slot->draws, 0, sizeof(slot->draws));
	}
	draws_merge(&slot->draws, &worker_draws);
	slot->written = GetCurrentTimestamp();
	SpinLockRelease(&slot->mutex);
	pg_atomic_write_u32(&slot->pending, 1);
}

/* In a parallel worker: report draws at exit; false if there is no leader */
static bool
worker_start_reporting(void)
{
	PGPROC	   *leader;

	if (worker_reporting)
		return true;
	leader = MyProc ? MyProc->lockGroupLeader : NULL;
	if (cv_shared == NULL || leader == NULL ||
		GetNumberFromPGProc(leader) >= cv_shared->nslots)
		return false;
	worker_slot = GetNumberFromPGProc(leader);
	worker_leader_pid = leader->pid;
	memset(&worker_draws, 0, sizeof(worker_draws));
	before_shmem_exit(worker_report, (Datum) 0);
	worker_reporting = true;
	return true;
}

/* This backend's own slot, or NULL */
static inline CurrvalSlot *
own_slot(void)
{
	if (cv_shared == NULL || MyProc == NULL ||
		GetNumberFromPGProc(MyProc) >= cv_shared->nslots)
		return NULL;
	return &cv_shared->slots[GetNumberFromPGProc(MyProc)];
}

/* Remember id as the session's last ID of tag p[0..len); keep the larger if max */
static void
tag_note(const char *p, int len, int64 id, bool max)
{
	CurrvalTag *ct = tag_last;

	if (ct == NULL || ct->len != len || memcmp(ct->tag, p, len) != 0)
	{
		char		key[IDGEN_CURRVAL_TAG_MAX + 1];
		bool		found;

		if (tags == NULL)
		{
			HASHCTL		info;

			info.keysize = IDGEN_CURRVAL_TAG_MAX + 1;
			info.entrysize = sizeof(CurrvalTag);
			tags = hash_create("idgen segment currval", 64, &info,
							   HASH_ELEM | HASH_BLOBS);
		}
		memset(key, 0, sizeof(key));
		memcpy(key, p, len);
		ct = hash_search(tags, key, HASH_ENTER, &found);
		if (!found)
		{
			ct->len = len;
			max = false;
		}
		tag_last = ct;
	}
	ct->last_id = max ? Max(ct->last_id, id) : id;
}

/* Forget every segment currval */
static void
tags_forget(void)
{
	if (tags != NULL)
		hash_destroy(tags);
	tags = NULL;
	tag_last = NULL;
}

/* Take in what this session's parallel workers reported */
static void
take_reports(CurrvalSlot *slot)
{
	WorkerDraws d;
	bool		mine;

	memset(&d, 0, sizeof(d));
	SpinLockAcquire(&slot->mutex);
	pg_atomic_write_u32(&slot->pending, 0);
	mine = slot->leader_pid == MyProcPid && slot->written >= MyStartTimestamp;
	if (mine)
		d = slot->draws;
	slot->leader_pid = 0;
	memset(&slot->draws, 0, sizeof(slot->draws));
	SpinLockRelease(&slot->mutex);
	if (!mine)
		return;

	if (d.have_snowflake)
	{
		snowflake_last = snowflake_have ? Max(snowflake_last, d.snowflake) :
			d.snowflake;
		snowflake_have = true;
	}
	if (d.tags_lost)
	{
		tags_forget();
		tags_lost = true;
	}
	for (int i = 0; i < d.ntags; i++)
		tag_note(d.tags[i].tag, d.tags[i].len, d.tags[i].id, true);
}

/* Take in the workers' reports if there are any */
static inline void
take_pending(void)
{
	CurrvalSlot *slot = own_slot();

	if (slot && pg_atomic_read_u32(&slot->pending) != 0)
		take_reports(slot);
}

/* See currval.h */
void
idgen_currval_note_snowflake(int64 id)
{
	if (unlikely(IsParallelWorker()))
	{
		if (worker_start_reporting())
		{
			worker_draws.snowflake = worker_draws.have_snowflake ?
				Max(worker_draws.snowflake, id) : id;
			worker_draws.have_snowflake = true;
		}
	}
	else
		take_pending();
	snowflake_last = id;
	snowflake_have = true;
}

/* See currval.h */
void
idgen_currval_note_segment(const char *p, int len, int64 id)
{
	if (unlikely(IsParallelWorker()))
	{
		if (worker_start_reporting())
			draws_add_tag(&worker_draws, p, len, id);
	}
	else
		take_pending();
	tag_note(p, len, id, false);
}

/* See currval.h */
bool
idgen_currval_snowflake(int64 *id)
{
	take_pending();
	*id = snowflake_last;
	return snowflake_have;
}

/* See currval.h */
bool
idgen_currval_segment(const char *p, int len, int64 *id, bool *lost)
{
	CurrvalTag *ct = NULL;

	take_pending();
	*lost = tags_lost;
	if (len <= IDGEN_CURRVAL_TAG_MAX && tags != NULL)
	{
		char		key[IDGEN_CURRVAL_TAG_MAX + 1];

		memset(key, 0, sizeof(key));
		memcpy(key, p, len);
		ct = hash_search(tags, key, HASH_FIND, NULL);
	}
	if (ct == NULL)
		return false;
	*id = ct->last_id;
	return true;
}

/* See currval.h */
void
idgen_currval_discard(void)
{
	CurrvalSlot *slot = own_slot();

	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		pg_atomic_write_u32(&slot->pending, 0);
		slot->leader_pid = 0;
		memset(&slot->draws, 0, sizeof(slot->draws));
		SpinLockRelease(&slot->mutex);
	}
	snowflake_have = false;
	snowflake_last = 0;
	tags_forget();
	tags_lost = false;
}
