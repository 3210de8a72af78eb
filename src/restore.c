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

/* See restore.h */
bool
idgen_segments_refusal_kept(void)
{
	struct stat st;

	return stat(SEGMENTS_REFUSED_FILE, &st) == 0;
}

/* See restore.h */
void
idgen_segments_refusal_keep(bool keep)
{
	static const char text[] =
		"idgen: segment IDs are refused on this copy until a superuser runs SELECT idgen.segment_resume()\n";

	if (keep)
		idgen_write_file_durably(SEGMENTS_REFUSED_FILE, SEGMENTS_REFUSED_FILE_TMP,
								 text, sizeof(text) - 1);
	else if (idgen_segments_refusal_kept())
		durable_unlink(SEGMENTS_REFUSED_FILE, ERROR);
}
