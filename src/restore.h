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

/*
 * Why segment IDs stay refused, as the marker in the data directory says:
 * 0 (no marker), IDGEN_SEG_REFUSED_RESTORED or IDGEN_SEG_REFUSED_TIMELINE
 */
#define IDGEN_SEG_REFUSED_RESTORED	1	/* a restored copy, or a former
										 * standby started without promotion */
#define IDGEN_SEG_REFUSED_TIMELINE	2	/* promoted onto a timeline whose low
										 * idgen.node_timeline_bits bits an
										 * earlier one of its history had */
extern int	idgen_segments_refusal_kept(void);

/* Write the marker of why durably, or (0) remove it (ERROR on failure) */
extern void idgen_segments_refusal_keep(int why);

/*
 * The last timeline an allocator checked for the wrap (segment_alloc.c),
 * kept in the data directory so that a restart, another allocator or a
 * segment_resume does not check it again; 0 if none
 */
extern uint32 idgen_segments_timeline_checked(void);
extern void idgen_segments_timeline_check_done(uint32 tli);

/* The same for the snowflake generator (snowflake_state.c) */
extern uint32 idgen_snowflake_timeline_checked(void);
extern void idgen_snowflake_timeline_check_done(uint32 tli);

#endif							/* IDGEN_RESTORE_H */
