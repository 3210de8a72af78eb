/*
 * segment_remote.h
 *		Segments allocated by a central segment server (idgen.segment_server)
 *		instead of the local idgen.segment_alloc: Leaf's own architecture of
 *		many issuers and one allocation table.
 */
#ifndef IDGEN_SEGMENT_REMOTE_H
#define IDGEN_SEGMENT_REMOTE_H

/* Setting (segment_remote.c): libpq connection string, "" for local */
extern char *idgen_segment_server;

/* Outcome of an allocation on the central server */
typedef enum IdgenRemoteAlloc
{
	IDGEN_REMOTE_ALLOC_OK,
	IDGEN_REMOTE_ALLOC_UNKNOWN, /* the central table has no such tag */
	IDGEN_REMOTE_ALLOC_EXHAUSTED,	/* its max_id is the largest bigint */
	IDGEN_REMOTE_ALLOC_FAILED	/* unreachable, or the call failed */
} IdgenRemoteAlloc;

/* Is a central segment server configured? */
static inline bool
idgen_segment_remote_enabled(void)
{
	return idgen_segment_server != NULL && idgen_segment_server[0] != '\0';
}

/* Module load and shared memory (called from idgen.c) */
extern void idgen_segment_remote_define_gucs(void);
extern Size idgen_segment_remote_shmem_size(void);
extern void idgen_segment_remote_shmem_init(void);

/*
 * Worker: allocate the next segment of tag on the central server, asking
 * for want_step IDs (the server keeps it within the tag's step and
 * idgen.segment_max_step).  On IDGEN_REMOTE_ALLOC_OK the allocation is
 * committed there and *first, *len describe it.
 */
extern IdgenRemoteAlloc idgen_segment_remote_allocate(const char *tag,
													  int64 want_step,
													  int64 *first,
													  int64 *len);

/*
 * Backend about to give up waiting for a segment of tag: raises an error
 * naming the central server's failure, if its last allocation failed.
 */
extern void idgen_segment_remote_check(const char *tag);

#endif							/* IDGEN_SEGMENT_REMOTE_H */
