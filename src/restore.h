/*-------------------------------------------------------------------------
 *
 * restore.h
 *		How this start of the server came about: a restored copy (a base
 *		backup, archive recovery) or a former standby started without
 *		promotion, whose original may have issued IDs the copy never saw;
 *		and the marker that keeps segment IDs refused on such a copy
 *		across restarts until a superuser runs segment_resume.
 *
 * Pure detection and one file of the data directory; no shared memory
 * (the refusals live in snowflake.h's and segment.h's regions).
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_RESTORE_H
#define IDGEN_RESTORE_H

/*
 * Postmaster, as shared memory is created: is this start a restore idgen
 * can see?  Archive recovery (recovery.signal) or a start from a base
 * backup (backup_label) that is not a standby's (standby.signal), or a
 * former standby's data directory started without standby.signal and
 * without promotion (pg_control says it was in recovery).  A copy of a
 * stopped primary's data directory or a snapshot looks like a crash
 * restart and cannot be seen.
 */
extern bool idgen_start_is_restore(void);

/* Is the marker that segment IDs stay refused there?  (data directory) */
extern bool idgen_segments_refusal_kept(void);

/* Write the marker durably, or remove it durably (ERROR on failure) */
extern void idgen_segments_refusal_keep(bool keep);

#endif							/* IDGEN_RESTORE_H */
