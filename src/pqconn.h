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
#include "utils/guc.h"

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

/*
 * Check hook of idgen.node_registry and idgen.segment_server: refuses a
 * connection string libpq cannot parse or that carries a password (keyword
 * password or sslpassword, also in URI form), since pg_read_all_settings
 * reads them
 */
extern bool idgen_pqconn_check_no_password(char **newval, void **extra,
										   GucSource source);

/*
 * Define string setting name holding a connection string, superuser only,
 * checked by idgen_pqconn_check_no_password; an error if the value the
 * configuration gives it is refused (PostgreSQL alone would only warn at
 * start-up and leave it empty)
 */
extern void idgen_pqconn_define_conninfo(const char *name,
										 const char *short_desc,
										 char **valueAddr,
										 GucContext context);

#endif							/* IDGEN_PQCONN_H */
