/*
 * remote.h
 *		The idgen worker's connections to other servers over libpq: the
 *		node-id registry (lease.c) and the central segment server
 *		(segment_remote.c).
 *
 * Every call is asynchronous and bounded by a deadline; while it waits, the
 * worker sleeps on its latch, so SIGTERM is served and a server that hangs
 * cannot stall the worker.  Used only by the worker; no shared state.
 */
#ifndef IDGEN_REMOTE_H
#define IDGEN_REMOTE_H

#include "libpq-fe.h"

#define IDGEN_REMOTE_ERROR_LEN 256

/* One connection, opened on demand */
typedef struct IdgenRemote
{
	PGconn	   *conn;			/* NULL while closed */
	char	   *conninfo;		/* what conn was opened with */
	const char *appname;		/* fallback_application_name */
	char		error[IDGEN_REMOTE_ERROR_LEN];	/* last failure, one line */
} IdgenRemote;

/* Connect unless connected to conninfo; false (r->error set) on failure */
extern bool idgen_remote_connect(IdgenRemote *r, const char *conninfo,
								 int64 deadline_ms);

/*
 * Run one statement returning rows: the result (to PQclear), or NULL with
 * r->error set; the connection is closed unless the statement itself failed.
 */
extern PGresult *idgen_remote_exec(IdgenRemote *r, const char *sql,
								   int nparams, const char *const *params,
								   int64 deadline_ms);

/* Close the connection */
extern void idgen_remote_close(IdgenRemote *r);

#endif							/* IDGEN_REMOTE_H */
