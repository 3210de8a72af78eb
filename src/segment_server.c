/*
 * segment_server.c
 *		A central segment server: with idgen.segment_server set, the idgen
 *		worker allocates segments from idgen.segment_alloc on that server,
 *		over libpq, instead of from the local table.
 *
 * This is Leaf's own architecture: many issuing servers, one allocation
 * table.  Each allocation is one call of idgen.segment_allocate on the
 * central server, a transaction of its own that locks the tag's row,
 * advances max_id and commits with synchronous_commit on before it answers;
 * only then does the worker publish the segment (segment_alloc.c), so a
 * crash of either side leaves gaps, never a duplicate.  While the central
 * server cannot be reached, issuers hand out what their buffers hold
 * (current and next segment), then callers wait up to
 * idgen.segment_wait_timeout and fail with an error naming the server's
 * failure; the worker retries on its own and callers are served again as
 * soon as it answers.  Tags are administered on the central server.
 *
 * Runs in the remote worker, which allocates segments in this mode, except
 * idgen_segment_server_check, which runs in callers.  Shared memory "idgen
 * segment server": rules in idgen.h; the connection is the worker's alone.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"

#include "clock.h"
#include "idgen.h"
#include "pqconn.h"
#include "segment.h"

/* Longest one call may take, and how long to wait after a failure */
#define REMOTE_DEADLINE_MS 2000
#define REMOTE_RETRY_MS 500

typedef struct SegmentServerShared
{
	slock_t		mutex;			/* protects the fields below */
	char		error[IDGEN_PQCONN_ERROR_LEN];	/* last failure, "" after a
												 * success */
} SegmentServerShared;

/* Setting */
char	   *idgen_segment_server = NULL;

static SegmentServerShared *srs = NULL;

/* Worker-local state */
static IdgenPqConn central = {.appname = "idgen worker"};
static int64 retry_at_ms = 0;
static char logged_error[IDGEN_PQCONN_ERROR_LEN];

/* Define idgen.segment_server */
void
idgen_segment_server_define_gucs(void)
{
	idgen_pqconn_define_conninfo("idgen.segment_server",
								 "Connection string of a central server whose idgen.segment_alloc allocates this server's segments; empty for the local table.",
								 &idgen_segment_server, PGC_POSTMASTER);
}

/* Shared memory needed */
Size
idgen_segment_server_shmem_size(void)
{
	return MAXALIGN(sizeof(SegmentServerShared));
}

/* Create or attach the shared state; caller holds AddinShmemInitLock */
void
idgen_segment_server_shmem_init(void)
{
	bool		found;

	srs = ShmemInitStruct("idgen segment server", sizeof(SegmentServerShared),
						  &found);
	if (!found)
	{
		SpinLockInit(&srs->mutex);
		srs->error[0] = '\0';
	}
}

/* On worker exit, close the connection */
static void
remote_exit(int code, Datum arg)
{
	idgen_pqconn_close(&central);
}

/* Record the outcome of a call: msg, or "" for a success; log new errors */
static void
note_result(const char *msg)
{
	SpinLockAcquire(&srs->mutex);
	strlcpy(srs->error, msg, sizeof(srs->error));
	SpinLockRelease(&srs->mutex);
	if (msg[0] && strcmp(msg, logged_error) != 0)
		ereport(LOG,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not allocate a segment from the central segment server: %s",
						msg)));
	else if (!msg[0] && logged_error[0])
		ereport(LOG,
				(errmsg("allocating segments from the central segment server again")));
	strlcpy(logged_error, msg, sizeof(logged_error));
}

/* See segment.h */
IdgenSegmentServerAlloc
idgen_segment_server_allocate(const char *tag, int64 want_step,
							  int64 *first, int64 *len)
{
	static bool exit_registered = false;
	int64		now = idgen_clock_monotonic_ms();
	int64		deadline = now + REMOTE_DEADLINE_MS;
	char		stepbuf[32],
				maxbuf[32];
	const char *params[3];
	PGresult   *res;
	IdgenSegmentServerAlloc result;

	if (!exit_registered)
	{
		on_proc_exit(remote_exit, (Datum) 0);
		exit_registered = true;
	}
	/* Right after a failure, do not knock again for every tag */
	if (now < retry_at_ms)
		return IDGEN_SEGMENT_SERVER_FAILED;

	if (!idgen_pqconn_connect(&central, idgen_segment_server_conninfo(), deadline))
	{
		note_result(central.error);
		retry_at_ms = idgen_clock_monotonic_ms() + REMOTE_RETRY_MS;
		return IDGEN_SEGMENT_SERVER_FAILED;
	}
	snprintf(stepbuf, sizeof(stepbuf), INT64_FORMAT, Max(want_step, 1));
	snprintf(maxbuf, sizeof(maxbuf), "%d", idgen_segment_max_step);
	params[0] = tag;
	params[1] = stepbuf;
	params[2] = maxbuf;
	res = idgen_pqconn_exec(&central,
							"SELECT known, first_id, len FROM idgen.segment_allocate($1, $2, $3)",
							3, params, deadline);
	if (res == NULL)
	{
		note_result(central.error);
		retry_at_ms = idgen_clock_monotonic_ms() + REMOTE_RETRY_MS;
		return IDGEN_SEGMENT_SERVER_FAILED;
	}
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		note_result("idgen.segment_allocate returned no row");
		retry_at_ms = idgen_clock_monotonic_ms() + REMOTE_RETRY_MS;
		return IDGEN_SEGMENT_SERVER_FAILED;
	}
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		result = IDGEN_SEGMENT_SERVER_UNKNOWN;
	else if (PQgetisnull(res, 0, 1) || PQgetisnull(res, 0, 2))
		result = IDGEN_SEGMENT_SERVER_EXHAUSTED;
	else
	{
		*first = strtoi64(PQgetvalue(res, 0, 1), NULL, 10);
		*len = strtoi64(PQgetvalue(res, 0, 2), NULL, 10);
		result = *len > 0 ? IDGEN_SEGMENT_SERVER_OK : IDGEN_SEGMENT_SERVER_EXHAUSTED;
	}
	PQclear(res);
	note_result("");
	return result;
}

/* See segment.h */
void
idgen_segment_server_check(const char *tag)
{
	char		err[IDGEN_PQCONN_ERROR_LEN];

	if (!idgen_segment_server_enabled() || srs == NULL)
		return;
	SpinLockAcquire(&srs->mutex);
	strlcpy(err, srs->error, sizeof(err));
	SpinLockRelease(&srs->mutex);
	if (err[0] == '\0')
		return;
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("could not draw an ID for segment tag \"%s\": the central segment server did not allocate a segment within %d ms",
					tag, idgen_segment_wait_timeout_ms),
			 errdetail("This server's segments come from the server named by idgen.segment_server, and the last attempt failed: %s.",
					   err),
			 errhint("IDs are issued again as soon as the central segment server answers; calls wait up to idgen.segment_wait_timeout for it.")));
}
