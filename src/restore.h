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

/* The generators whose timeline wrap is checked, each on its own */
typedef enum IdgenWrapWho
{
	IDGEN_WRAP_SNOWFLAKE,		/* snowflake_state.c */
	IDGEN_WRAP_SEGMENTS			/* segment_alloc.c */
} IdgenWrapWho;

/*
 * Whether tli, this server's timeline, comes round for who: with
 * idgen.node_timeline_bits = k > 0, tli is above 2^k, so timeline tli - 2^k
 * of its history had its low k bits, and tli was not checked for who before.
 * The caller refuses (durably) first, then records tli as checked with
 * idgen_timeline_wrap_checked, kept in the data directory so that a
 * restart, another process or a resume does not check it again.
 */
extern bool idgen_timeline_wraps(IdgenWrapWho who, uint32 tli);
extern void idgen_timeline_wrap_checked(IdgenWrapWho who, uint32 tli);

#endif							/* IDGEN_RESTORE_H */
