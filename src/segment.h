/*
 * segment.h
 *		Leaf-style segment IDs: the shared cache of tags and the hot path
 *		(segment.c), allocations by the worker (segment_alloc.c), the central
 *		segment server (segment_server.c), the privileges of tags
 *		(segment_acl.c) and the SQL functions (segment_sql.c).
 *
 * Shared memory and its rules (the LWLock "idgen segment", slot
 * generations, the pos word, the seqlock of the descriptors): idgen.h.
 */
#ifndef IDGEN_SEGMENT_H
#define IDGEN_SEGMENT_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "citus.h"

/* Longest tag in bytes (as Leaf's biz_tag varchar(128)) */
#define IDGEN_SEGMENT_TAG_MAX 128

/* Segment descriptors kept per tag; a power of two dividing 2^24 */
#define IDGEN_SEG_RING 256

/*
 * Longest chain of segments ready ahead of the current one (CosId's
 * SegmentChainId); at most half the ring, so the allocator never writes the
 * descriptor of the current epoch.  1 is Leaf's double buffer.
 */
#define IDGEN_SEG_CHAIN_MAX (IDGEN_SEG_RING / 2)

/*
 * pos: 24 bits of epoch above 40 bits of offset.  The offset never reaches
 * bit 40: a segment has fewer than 2^31 IDs (its step is an int, and
 * idgen.segment_max_step at most INT_MAX), and once it is used up each
 * backend adds to pos at most once more in that epoch (it then waits in
 * switch_or_wait until the epoch moves on), at most IDGEN_SEG_CACHE_MAX at a
 * time: below 2^31 + MaxBackends (< 2^18) * 10000 < 2^33.
 */
#define IDGEN_SEG_OFF_BITS 40
#define IDGEN_SEG_OFF_MASK ((UINT64CONST(1) << IDGEN_SEG_OFF_BITS) - 1)
#define IDGEN_SEG_EPOCH_MASK ((UINT64CONST(1) << 24) - 1)
#define IDGEN_SEG_EPOCH_INVALID PG_UINT32_MAX

/*
 * Largest cache of a tag (column cache of idgen.segment_alloc, whose CHECK
 * says the same): IDs a backend takes from the shared segment with one add
 * and hands out itself.  Up to cache - 1 of them are lost per backend when
 * it exits, and the headroom of the offset bits (above) counts on it.
 */
#define IDGEN_SEG_CACHE_MAX 10000

/* What the worker found out about a tag */
typedef enum IdgenSegmentState
{
	IDGEN_SEG_LOADING = 0,		/* registered, first segment not loaded yet */
	IDGEN_SEG_ACTIVE,			/* the table has the tag */
	IDGEN_SEG_UNKNOWN,			/* the table has no such tag */
	IDGEN_SEG_EXHAUSTED			/* max_id reached the largest bigint */
} IdgenSegmentState;

/*
 * One allocated segment: the len IDs start, start + stride, ...,
 * start + (len - 1) * stride (stride 1 but with idgen.node_timeline_bits:
 * see segment_alloc.c)
 */
typedef struct IdgenSegmentDesc
{
	pg_atomic_uint32 epoch;		/* epoch it belongs to, INVALID while being
								 * written; allocator (seqlock) */
	int32		cache;			/* the tag's cache when allocated, 1 to
								 * IDGEN_SEG_CACHE_MAX; allocator */
	int64		start;			/* first ID; allocator */
	int64		len;			/* number of IDs (the step used); allocator */
	int64		stride;			/* from one ID to the next; allocator */
	int64		prefetch_at;	/* offset whose taker wakes the worker;
								 * allocator */
} IdgenSegmentDesc;

/* Key of a tag in shared memory: each database has tags of its own */
typedef struct IdgenSegmentKey
{
	Oid			dbid;			/* database of the tag */
	char		tag[IDGEN_SEGMENT_TAG_MAX + 1]; /* zero-padded */
} IdgenSegmentKey;

/* A tag in shared memory: an entry of the shared hash */
typedef struct IdgenSegmentSlot
{
	IdgenSegmentKey key;		/* hash key; set on insert */
	pg_atomic_uint64 generation;	/* 0 = removed; LWLock exclusive */
	pg_atomic_uint32 state;		/* IdgenSegmentState; allocator */
	pg_atomic_uint64 dyn_step;	/* step of the last allocation; allocator */
	pg_atomic_uint64 last_alloc;	/* TimestampTz of the last allocation,
									 * or since when unknown; allocator */
	pg_atomic_uint64 fetches;	/* segments allocated; allocator */
	pg_atomic_uint64 waits;		/* calls that waited for the worker; any */
	pg_atomic_uint64 last_fetch;	/* TimestampTz of the last allocation;
									 * allocator */
	pg_atomic_uint32 chain_len;	/* segments to keep ready ahead, 1 to
								 * IDGEN_SEG_CHAIN_MAX; allocator */
	pg_atomic_uint32 alloc_epoch;	/* current epoch at the last allocation;
									 * allocator */
	pg_atomic_uint64 chain_at;	/* TimestampTz chain_len last changed;
								 * allocator */
	pg_atomic_uint64 hunger_at; /* TimestampTz from which the chain's hunger
								 * is measured: the last allocation, or the
								 * last pause noticed; allocator */
	pg_atomic_uint32 hunger_epoch;	/* current epoch at hunger_at;
									 * allocator */
	pg_atomic_uint64 standby_wait_until;	/* monotonic ms (clock.c, the
											 * same in every process):
											 * while a committed
											 * allocation waits for the
											 * standbys' flush, a moment
											 * soon after the allocator
											 * last looked; 0 when none
											 * waits; allocator */
	pg_atomic_uint64 standby_timeouts;	/* allocations published after
										 * idgen.segment_standby_wait
										 * without every standby's flush;
										 * allocator */
	pg_atomic_uint64 unprotected;	/* allocations published with no
									 * streaming standby where one is
									 * expected (segment_alloc.c);
									 * allocator */
	IdgenSegmentDesc ring[IDGEN_SEG_RING];	/* by epoch, seqlock */
	char		pad1[PG_CACHE_LINE_SIZE];	/* keeps pos off the lines above */
	pg_atomic_uint64 pos;		/* (epoch << 40) | offset; fetch-add, CAS */
	char		pad2[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];
} IdgenSegmentSlot;

/*
 * The highest max_id this server allocated for a tag since it started: an
 * entry of the shared hash "idgen segment marks", never removed while the
 * server runs (a tag's slot is), so that no allocation goes back to or
 * below one made before, whatever idgen.segment_alloc says (segment_alloc.c).
 */
typedef struct IdgenSegmentMark
{
	IdgenSegmentKey key;		/* hash key; set on insert */
	int64		max_id;			/* last ID allocated; its database's
								 * allocator, under the LWLock */
	TimestampTz warned_at;		/* last warning that max_id is near the
								 * largest bigint, 0 if none; the same */
} IdgenSegmentMark;

/* Segment state shared by all processes */
typedef struct IdgenSegmentShared
{
	LWLock	   *lock;			/* protects the hash and ntags */
	ConditionVariable cv;		/* broadcast when a slot changes state, gets
								 * a segment or is removed */
	pg_atomic_uint64 next_generation;	/* source of slot generations */
	pg_atomic_uint64 acl_generation;	/* moves when the privileges or the
										 * owner of a tag change (commit) */
	int			ntags;			/* slots in the hash; LWLock */
	pg_atomic_uint32 refused;	/* why no segment ID is handed out until
								 * segment_resume (IDGEN_SEG_REFUSED_*,
								 * restore.h; 0: none): set as the region is
								 * created, or by an allocator that finds
								 * the timeline wrapped (segment_alloc.c);
								 * cleared by segment_resume */
} IdgenSegmentShared;

/* Shared state (segment.c), NULL until attached */
extern IdgenSegmentShared *idgen_segment;
extern HTAB *idgen_segment_hash;
extern HTAB *idgen_segment_marks;

/* Entries of idgen_segment_marks: tags allocated since the server started */
#define IDGEN_SEGMENT_MARKS (4 * idgen_segment_max_tags)

/* Shared memory and settings (segment.c, called from module.c) */
extern Size idgen_segment_shmem_size(void);
extern void idgen_segment_shmem_init(void);
extern void idgen_segment_define_gucs(void);
/* The central server's bound alone, also without the preload (module.c) */
extern void idgen_segment_define_serving_gucs(void);

/* Settings (segment.c) */
extern int	idgen_segment_max_tags;
extern double idgen_segment_prefetch;
extern int	idgen_segment_max_step;
extern int	idgen_segment_wait_timeout_ms;
extern int	idgen_segment_grow_after_ms;
extern int	idgen_segment_shrink_after_ms;
extern int	idgen_segment_chain_max;
extern int	idgen_segment_standby_wait_ms;

/* Checks before using segments in this backend (segment.c) */
extern void idgen_segment_check_usable(void);

/* The hash key of tag in this database (segment.c) */
extern void idgen_segment_key(IdgenSegmentKey *key, const char *tag);

/* Error unless tag is 1 to IDGEN_SEGMENT_TAG_MAX bytes (segment.c) */
extern void idgen_segment_check_tag_length(const char *tag, int len);

/*
 * Remove a tag's slot so its buffered IDs are never handed out; with gen
 * != 0, only if the slot still has that generation (segment.c).
 */
extern void idgen_segment_forget(const char *tag, uint64 gen);

/* Remove every slot of this database (segment.c) */
extern void idgen_segment_forget_all(void);

/* The "does not exist" error of a tag (segment.c) */
pg_noreturn extern void idgen_segment_unknown_tag_error(const char *tag);

/*
 * Role commands and the owners of this database's tags: DROP ROLE refused
 * for an owner, REASSIGN OWNED, DROP OWNED and a role's rename followed
 * (segment_sql.c).  Called before the statement (returns what the call
 * after it needs) and after it, with what the first call returned.
 */
extern List *idgen_segment_owner_utility(Node *stmt, bool before, List *dropped);

/* Next ID of the tag of len bytes at p: idgen.segment_nextval (segment.c) */
extern int64 idgen_segment_next(const char *p, int len);

/*
 * Privileges of tags (segment_acl.c, below the hot path of segment.c and
 * the SQL functions of segment_sql.c, which both call it)
 */

/*
 * Privileges on a tag: the mask of IDGEN_TAG_DRAW and IDGEN_TAG_READ that
 * role holds on tag, read with the latest snapshot; *found is false when
 * the table has no row for it
 */
#define IDGEN_TAG_DRAW 0x1
#define IDGEN_TAG_READ 0x2
extern int	idgen_segment_tag_privileges(const char *tag, Oid role, bool *found);
/*
 * Moved by this backend when what it found about privileges may no longer
 * hold: a role or membership changed (segment.c's syscache callback), or a
 * check was made in parallel mode with the statement's snapshot
 * (segment_acl.c), or this transaction changed privileges (segment_sql.c's
 * trigger)
 */
extern uint64 idgen_segment_acl_local;
/* Whether this transaction changed privileges of tags (segment_sql.c's trigger) */
extern bool idgen_segment_acl_changed_here;
/* Error of a role that lacks privilege on tag */
pg_noreturn extern void idgen_segment_acl_error(const char *tag, const char *what);
/*
 * Register, once per backend, the end-of-transaction callback that moves
 * the shared privilege generation when this transaction changed privileges
 * (idgen_segment_acl_changed_here)
 */
extern void idgen_segment_acl_register(void);
/* Whether idgen.segment_alloc has the privilege columns (0.4.0) */
extern bool idgen_segment_has_privilege_columns(void);

/*
 * Run the SPI calls that follow as the owner of idgen.segment_alloc (the
 * extension's owner), in a security-restricted operation, as PostgreSQL's
 * maintenance commands switch to a table's owner: between
 * idgen_segment_become_table_owner and idgen_segment_become_caller.  An
 * error restores the caller's identity with the (sub)transaction's abort.
 */
typedef struct IdgenTableOwnerSwitch
{
	Oid			save_userid;
	int			save_sec_context;
} IdgenTableOwnerSwitch;
extern void idgen_segment_become_table_owner(IdgenTableOwnerSwitch *sw);
extern void idgen_segment_become_caller(IdgenTableOwnerSwitch *sw);

/*
 * Segments ready ahead of the current epoch e of slot (segment.c); exact
 * for the allocator, a snapshot for anyone else.
 */
extern int	idgen_segment_ready(IdgenSegmentSlot *slot, uint64 e);

/* Name of an IdgenSegmentState, as segment_status shows it (segment.c) */
extern const char *idgen_segment_state_name(uint32 state);

/*
 * The central segment server (segment_server.c): with idgen.segment_server
 * set, segments are allocated from idgen.segment_alloc on that server
 * instead of the local table -- Leaf's own architecture of many issuers and
 * one allocation table.
 */

/* Setting: libpq connection string, "" for local */
extern char *idgen_segment_server;

/* Outcome of an allocation on the central server */
typedef enum IdgenSegmentServerAlloc
{
	IDGEN_SEGMENT_SERVER_OK,
	IDGEN_SEGMENT_SERVER_UNKNOWN,	/* the central table has no such tag */
	IDGEN_SEGMENT_SERVER_EXHAUSTED, /* its max_id is the largest bigint */
	IDGEN_SEGMENT_SERVER_FAILED /* unreachable, or the call failed */
} IdgenSegmentServerAlloc;

/*
 * The central segment server's connection string: idgen.segment_server, or
 * on a Citus worker the coordinator (citus.c); NULL for the local table
 */
static inline const char *
idgen_segment_server_conninfo(void)
{
	if (idgen_segment_server != NULL && idgen_segment_server[0] != '\0')
		return idgen_segment_server;
	return idgen_citus_segment_server();
}

/* Is a central segment server configured? */
static inline bool
idgen_segment_server_enabled(void)
{
	return idgen_segment_server_conninfo() != NULL;
}

/* Module load and shared memory (called from module.c) */
extern void idgen_segment_server_define_gucs(void);
extern Size idgen_segment_server_shmem_size(void);
extern void idgen_segment_server_shmem_init(void);

/*
 * Allocator: allocate the next segment of tag on the central server, asking
 * for want_step IDs (the server keeps it within the tag's step and
 * idgen.segment_max_step).  On IDGEN_SEGMENT_SERVER_OK the allocation is
 * committed there and *first, *len describe it.
 */
extern IdgenSegmentServerAlloc idgen_segment_server_allocate(const char *tag,
															 int64 want_step,
															 int64 *first,
															 int64 *len);

/*
 * Caller about to give up waiting for a segment of tag: raises an error
 * naming the central server's failure, if its last allocation failed.
 */
extern void idgen_segment_server_check(const char *tag);

/*
 * Tags kept when the extension is dropped (segment_keep.c): the object
 * access hook, and the removal of a dropped database's file
 */
extern void idgen_segment_keep_init(void);
extern void idgen_segment_keep_forget(Oid dbid);

#endif							/* IDGEN_SEGMENT_H */
