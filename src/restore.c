/*-------------------------------------------------------------------------
 *
 * restore.c
 *		Is this start a restored copy or a former standby started without
 *		promotion (restore.h)?  The file idgen.segments_refused of the data
 *		directory keeps segment IDs refused on such a copy across restarts
 *		(segment.c sets the refusal as its shared memory is created;
 *		segment_resume lifts it and removes the file).
 *
 * Snowflake IDs have their own refusal, kept in the state file
 * (snowflake_state.c), because a registry's node id lease protects them
 * where segment IDs have no such protection: a restored copy allocates
 * from the restored idgen.segment_alloc, below what its original may have
 * handed out since.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "storage/fd.h"

#include "idgen.h"
#include "restore.h"

#define SEGMENTS_REFUSED_FILE		"idgen.segments_refused"
#define SEGMENTS_REFUSED_FILE_TMP	"idgen.segments_refused.tmp"
#define SEGMENTS_TIMELINE_FILE		"idgen.segments_timeline"
#define SEGMENTS_TIMELINE_FILE_TMP	"idgen.segments_timeline.tmp"
#define SNOWFLAKE_TIMELINE_FILE		"idgen.snowflake_timeline"
#define SNOWFLAKE_TIMELINE_FILE_TMP	"idgen.snowflake_timeline.tmp"

/* The first line of the marker, by the reason it keeps (restore.h) */
static const char refused_restored[] =
	"idgen: segment IDs are refused on this copy until a superuser runs SELECT idgen.segment_resume()\n";
static const char refused_timeline[] =
	"idgen: segment IDs are refused on this timeline, whose low idgen.node_timeline_bits bits an earlier one had, until a superuser runs SELECT idgen.segment_resume()\n";

/*
 * Was the data directory a standby's when the server last stopped (or
 * crashed)?  pg_control's state says so: shut down in recovery, or in
 * archive recovery at a crash.  A control file that cannot be read or
 * fails its CRC says nothing here (the server refuses to start on it).
 */
static bool
last_ran_in_recovery(void)
{
	bool		crc_ok;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		in_recovery;

	in_recovery = crc_ok &&
		(cf->state == DB_SHUTDOWNED_IN_RECOVERY ||
		 cf->state == DB_IN_ARCHIVE_RECOVERY);
	pfree(cf);
	return in_recovery;
}

/* See restore.h */
bool
idgen_start_is_restore(void)
{
	struct stat st;

	if (stat(STANDBY_SIGNAL_FILE, &st) == 0)
		return false;
	return stat(RECOVERY_SIGNAL_FILE, &st) == 0 ||
		stat(BACKUP_LABEL_FILE, &st) == 0 ||
		last_ran_in_recovery();
}

/*
 * The first bytes of a small file of the data directory, NUL-terminated,
 * into buf; false if there is none
 */
static bool
read_small_file(const char *path, char *buf, size_t size)
{
	FILE	   *f = AllocateFile(path, PG_BINARY_R);
	size_t		n;

	if (f == NULL)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	FreeFile(f);
	return true;
}

/* See restore.h */
int
idgen_segments_refusal_kept(void)
{
	char		buf[sizeof(refused_timeline)];

	if (!read_small_file(SEGMENTS_REFUSED_FILE, buf, sizeof(buf)))
		return 0;
	/* a marker of 0.4.0, or any other text: a restored copy */
	return strcmp(buf, refused_timeline) == 0 ?
		IDGEN_SEG_REFUSED_TIMELINE : IDGEN_SEG_REFUSED_RESTORED;
}

/* See restore.h */
void
idgen_segments_refusal_keep(int why)
{
	const char *text = why == IDGEN_SEG_REFUSED_TIMELINE ?
		refused_timeline : refused_restored;

	if (why != 0)
		idgen_write_file_durably(SEGMENTS_REFUSED_FILE, SEGMENTS_REFUSED_FILE_TMP,
								 text, strlen(text));
	else if (idgen_segments_refusal_kept() != 0)
		durable_unlink(SEGMENTS_REFUSED_FILE, ERROR);
}

/* The timeline a file of the data directory names; 0 if none */
static uint32
timeline_in_file(const char *path)
{
	char		buf[16];

	if (!read_small_file(path, buf, sizeof(buf)))
		return 0;
	return (uint32) strtoul(buf, NULL, 10);
}

/* Write a timeline into a file of the data directory, durably */
static void
timeline_to_file(const char *path, const char *tmp, uint32 tli)
{
	char		buf[16];

	snprintf(buf, sizeof(buf), "%u\n", tli);
	idgen_write_file_durably(path, tmp, buf, strlen(buf));
}

/* The file that keeps the last timeline checked for who's wrap */
static const char *
wrap_file(IdgenWrapWho who, bool tmp)
{
	if (who == IDGEN_WRAP_SEGMENTS)
		return tmp ? SEGMENTS_TIMELINE_FILE_TMP : SEGMENTS_TIMELINE_FILE;
	return tmp ? SNOWFLAKE_TIMELINE_FILE_TMP : SNOWFLAKE_TIMELINE_FILE;
}

/* See restore.h */
bool
idgen_timeline_wraps(IdgenWrapWho who, uint32 tli)
{
	if (idgen_node_timeline_bits <= 0)
		return false;
	return tli > ((uint32) 1 << idgen_node_timeline_bits) &&
		timeline_in_file(wrap_file(who, false)) != tli;
}

/* See restore.h */
void
idgen_timeline_wrap_checked(IdgenWrapWho who, uint32 tli)
{
	timeline_to_file(wrap_file(who, false), wrap_file(who, true), tli);
}
