/*
 * pqconn.h
 *		The idgen workers' connections to other servers over libpq: the
 *		node-id registry (snowflake_lease.c) and the central segment server
 *		(segment_server.c).
 *
 * Every call is asynchronous and bounded by a deadline; while it waits, the
 * worker sleeps on its latch, so SIGTERM is served and a server that hangs
 * cannot stall the worker.  Used only by the worker; no shared state.
 */
#ifndef IDGEN_PQCONN_H
#define IDGEN_PQCONN_H

#include "libpq-fe.h"

#define IDGEN_PQCONN_ERROR_LEN 256

/* One connection, opened on demand */
typedef struct IdgenPqConn
{
	PGconn	   *conn;			/* NULL while closed */
	char	   *conninfo;		/* what conn was opened with */
	const char *appname;		/* fallback_application_name */
	char		error[IDGEN_PQCONN_ERROR_LEN];	/* last failure, one line */
} IdgenPqConn;

/* Connect unless connected to conninfo; false (r->error set) on failure */
extern bool idgen_pqconn_connect(IdgenPqConn *r, const char *conninfo,
								 int64 deadline_ms);

/*
 * Run one statement returning rows: the result (to PQclear), or NULL with
 * r->error set; the connection is closed unless the statement itself failed.
 */
extern PGresult *idgen_pqconn_exec(IdgenPqConn *r, const char *sql,
								   int nparams, const char *const *params,
								   int64 deadline_ms);

/* Close the connection */
extern void idgen_pqconn_close(IdgenPqConn *r);

#endif							/* IDGEN_PQCONN_H */
