/*
 * segment.h
 *		Internals of Leaf-style segment IDs, shared by segment.c (shared
 *		memory, the hot path, status), segment_worker.c (allocations by the
 *		idgen worker) and segment_sql.c (create, alter, drop).
 *
 * Locking rules
 * -------------
 * The shared hash of tags and ntags are protected by the LWLock "idgen
 * segment": lookups under LW_SHARED, inserting or removing a tag under
 * LW_EXCLUSIVE.  A slot's generation is set when the slot is inserted and
 * set to 0 just before it is removed, both under LW_EXCLUSIVE; a process
 * that remembers a slot pointer revalidates it by comparing generations,
 * so it never needs the lock on the hot path.
 *
 * Within a slot, pos = (epoch << IDGEN_SEG_OFF_BITS) | offset is the only
 * word callers write on the hot path (atomic fetch-add; a switch to the next
 * epoch is a compare-and-swap).  The descriptor of epoch e lives in
 * ring[e % IDGEN_SEG_RING].  Only the worker writes descriptors, and only
 * the one of epoch current + 1, holding the LWLock in LW_SHARED mode (which
 * keeps the slot from being removed under it); readers check the
 * descriptor's epoch before and after reading it (a seqlock).  Epoch e + 1
 * can become current only once its descriptor is complete, so the current
 * epoch's descriptor never changes while it is current.  The worker-only
 * fields are written by the worker under LW_SHARED and read by anyone.
 */
#ifndef IDGEN_SEGMENT_H
#define IDGEN_SEGMENT_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

/* Longest tag in bytes (as Leaf's biz_tag varchar(128)) */
#define IDGEN_SEGMENT_TAG_MAX 128

/* Segment descriptors kept per tag; a power of two dividing 2^24 */
#define IDGEN_SEG_RING 4

/* pos: 24 bits of epoch above 40 bits of offset */
#define IDGEN_SEG_OFF_BITS 40
#define IDGEN_SEG_OFF_MASK ((UINT64CONST(1) << IDGEN_SEG_OFF_BITS) - 1)
#define IDGEN_SEG_EPOCH_MASK ((UINT64CONST(1) << 24) - 1)
#define IDGEN_SEG_EPOCH_INVALID PG_UINT32_MAX

/* What the worker found out about a tag */
typedef enum IdgenSegmentState
{
	IDGEN_SEG_LOADING = 0,		/* registered, first segment not loaded yet */
	IDGEN_SEG_ACTIVE,			/* the table has the tag */
	IDGEN_SEG_UNKNOWN,			/* the table has no such tag */
	IDGEN_SEG_EXHAUSTED			/* max_id reached the largest bigint */
} IdgenSegmentState;

/* One allocated segment: IDs start .. start + len - 1 */
typedef struct IdgenSegmentDesc
{
	pg_atomic_uint32 epoch;		/* epoch it belongs to, INVALID while being
								 * written; worker writes (seqlock) */
	int64		start;			/* first ID; worker writes */
	int64		len;			/* number of IDs (the step used); worker */
	int64		prefetch_at;	/* offset whose taker wakes the worker; worker */
} IdgenSegmentDesc;

/* A tag in shared memory: an entry of the shared hash */
typedef struct IdgenSegmentSlot
{
	char		tag[IDGEN_SEGMENT_TAG_MAX + 1]; /* hash key; set on insert */
	pg_atomic_uint64 generation;	/* 0 = removed; LWLock exclusive */
	pg_atomic_uint32 state;		/* IdgenSegmentState; worker, LWLock shared */
	int64		dyn_step;		/* step of the last allocation; worker */
	TimestampTz last_alloc;		/* time of the last allocation; worker */
	pg_atomic_uint64 fetches;	/* segments allocated; worker */
	pg_atomic_uint64 waits;		/* calls that waited for the worker; atomic */
	pg_atomic_uint64 last_fetch;	/* TimestampTz of the last allocation;
									 * worker */
	IdgenSegmentDesc ring[IDGEN_SEG_RING];	/* see the locking rules */
	char		pad1[PG_CACHE_LINE_SIZE];	/* keeps pos off the lines above */
	pg_atomic_uint64 pos;		/* (epoch << 40) | offset; fetch-add, CAS */
	char		pad2[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];
} IdgenSegmentSlot;

/* Segment state shared by all processes */
typedef struct IdgenSegmentShared
{
	LWLock	   *lock;			/* protects the hash and ntags */
	ConditionVariable cv;		/* broadcast when a slot changes state, gets
								 * a segment or is removed */
	pg_atomic_uint64 next_generation;	/* source of slot generations */
	int			ntags;			/* slots in the hash; LWLock */
	Oid			relid;			/* idgen.segment_alloc as last seen by the
								 * worker; worker only */
} IdgenSegmentShared;

/* Shared state (segment.c), NULL until attached */
extern IdgenSegmentShared *idgen_seg;
extern HTAB *idgen_seg_hash;

/* Settings (segment.c) */
extern int	idgen_segment_max_tags;
extern double idgen_segment_prefetch;
extern int	idgen_segment_max_step;
extern int	idgen_segment_wait_timeout_ms;
extern int	idgen_segment_grow_after_ms;
extern int	idgen_segment_shrink_after_ms;

/* Checks before using segments in this backend (segment.c) */
extern void idgen_segment_check_usable(void);

/* Error unless tag is 1 to IDGEN_SEGMENT_TAG_MAX bytes (segment.c) */
extern void idgen_segment_check_tag_length(const char *tag, int len);

/*
 * Remove a tag's slot so its buffered IDs are never handed out; with gen
 * != 0, only if the slot still has that generation (segment.c).
 */
extern void idgen_segment_forget(const char *tag, uint64 gen);

/* Remove every slot (segment.c) */
extern void idgen_segment_forget_all(void);

/* The "does not exist" error of a tag (segment.c) */
pg_noreturn extern void idgen_segment_unknown_tag_error(const char *tag);

#endif							/* IDGEN_SEGMENT_H */
