/*
 * currval.h
 *		What snowflake_currval() and segment_currval() return: the last ID
 *		this session drew, reset by DISCARD ALL / DISCARD SEQUENCES, with the
 *		draws of a parallel statement's workers reported to their leader
 *		(currval.c).
 */
#ifndef IDGEN_CURRVAL_H
#define IDGEN_CURRVAL_H

/* Longest segment tag, in bytes: IDGEN_SEGMENT_TAG_MAX (checked in segment_sql.c) */
#define IDGEN_CURRVAL_TAG_MAX 128

/* Tags of segment draws a parallel worker reports to its leader */
#define IDGEN_CURRVAL_WORKER_TAGS 8

/* Shared memory: one slot per PGPROC, for reports to that leader */
extern Size idgen_currval_shmem_size(void);
extern void idgen_currval_shmem_init(void);

/* This process drew snowflake (or gene) ID id */
extern void idgen_currval_note_snowflake(int64 id);

/* This process drew id from segment tag p[0..len), len checked */
extern void idgen_currval_note_segment(const char *p, int len, int64 id);

/* The session's last snowflake ID; false before the first */
extern bool idgen_currval_snowflake(int64 *id);

/*
 * The session's last ID of a segment tag; false before the first.  *lost is
 * set when it is unknown because parallel workers drew from more tags than
 * they can report.
 */
extern bool idgen_currval_segment(const char *p, int len, int64 *id,
								  bool *lost);

/* DISCARD ALL / DISCARD SEQUENCES: forget every currval of this session */
extern void idgen_currval_discard(void);

#endif							/* IDGEN_CURRVAL_H */
