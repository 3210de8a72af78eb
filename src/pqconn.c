/*
 * pqconn.c
 *		Bounded, interruptible libpq calls for the idgen workers.
 *
 * A connection is started with PQconnectStartParams and polled, and a
 * statement sent with PQsendQueryParams and read with PQconsumeInput, each
 * wait being a WaitLatchOrSocket on the worker's latch that ends at the
 * caller's deadline (CLOCK_MONOTONIC milliseconds, clock.h).  On any
 * failure the connection is closed and the next call opens a new one.
 *
 * Runs only in the workers, but for the check hook of the settings that
 * hold connection strings, which runs wherever they are set; an IdgenPqConn
 * belongs to one caller, and there is no shared state.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "clock.h"
#include "idgen.h"
#include "pqconn.h"

/* A check hook refused a value since idgen_pqconn_refused was last asked */
static bool refused = false;

/*
 * Whether libpq takes conninfo as a connection string, not as a plain
 * database name (libpq's recognized_connection_string)
 */
static bool
is_connection_string(const char *conninfo)
{
	return strncmp(conninfo, "postgresql://", 13) == 0 ||
		strncmp(conninfo, "postgres://", 11) == 0 ||
		strchr(conninfo, '=') != NULL;
}

/* See pqconn.h */
bool
idgen_pqconn_check_no_password(char **newval, void **extra, GucSource source)
{
	PQconninfoOption *opts;
	char	   *err = NULL;
	const char *secret = NULL;

	if (*newval == NULL || !is_connection_string(*newval))
		return true;
	opts = PQconninfoParse(*newval, &err);
	if (opts == NULL)
	{
		/* The worker's connection would fail with the same message */
		int			n = err ? strlen(err) : 0;

		/* libpq's message ends with a newline */
		while (n > 0 && err[n - 1] == '\n')
			err[--n] = '\0';
		refused = true;
		GUC_check_errmsg("invalid connection string");
		GUC_check_errdetail("%s.", n > 0 ? err : "out of memory");
		if (err)
			PQfreemem(err);
		return false;
	}
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (o->val != NULL && o->val[0] != '\0' &&
			(strcmp(o->keyword, "password") == 0 ||
			 strcmp(o->keyword, "sslpassword") == 0))
		{
			secret = o->keyword;
			break;
		}
	if (secret != NULL)
	{
		refused = true;
		GUC_check_errmsg("a connection string of idgen cannot contain a password");
		GUC_check_errdetail("It gives keyword \"%s\", and roles with pg_read_all_settings, pg_monitor among them, read the setting.",
							secret);
		GUC_check_errhint("Put the password in a password file: ~/.pgpass of the server's operating system user, the file named by PGPASSFILE in the server's environment, or passfile= in the connection string.");
	}
	PQconninfoFree(opts);
	return secret == NULL;
}

/* See pqconn.h */
void
idgen_pqconn_define_conninfo(const char *name, const char *short_desc,
							 char **valueAddr, GucContext context)
{
	refused = false;
	DefineCustomStringVariable(name, short_desc, NULL, valueAddr, "",
							   context, GUC_SUPERUSER_ONLY,
							   idgen_pqconn_check_no_password, NULL, NULL);

	/*
	 * A value of the configuration the check hook refuses here is only
	 * warned about by PostgreSQL, and the setting left empty: a server that
	 * should lease its node id or take its segments from another server
	 * would then run without it, so it does not start
	 */
	if (refused)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\" in the configuration", name),
				 errdetail("The WARNING before this message says why; the server does not start without the setting."),
				 errhint("Correct \"%s\" in postgresql.conf or postgresql.auto.conf; a password belongs in a password file (~/.pgpass, PGPASSFILE or passfile=).",
						 name)));
}

/* Record a failure in r->error as one line, without a trailing newline */
static void
set_error(IdgenPqConn *r, const char *msg)
{
	int			n;

	strlcpy(r->error, msg && msg[0] ? msg : "unknown error", sizeof(r->error));
	n = strlen(r->error);
	while (n > 0 && (r->error[n - 1] == '\n' || r->error[n - 1] == ' '))
		r->error[--n] = '\0';
	for (char *p = r->error; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

/* Close the connection */
void
idgen_pqconn_close(IdgenPqConn *r)
{
	if (r->conn)
		PQfinish(r->conn);
	r->conn = NULL;
}

/* Record msg, close the connection */
static void
fail(IdgenPqConn *r, const char *msg)
{
	set_error(r, msg);
	idgen_pqconn_close(r);
}

/*
 * Wait until the socket is ready for events, the latch is set or the
 * deadline passes; returns false at the deadline.
 */
static bool
wait_socket(IdgenPqConn *r, int events, int64 deadline_ms)
{
	int64		left = deadline_ms - idgen_clock_monotonic_ms();
	int			rc;

	if (left <= 0)
		return false;
	rc = WaitLatchOrSocket(MyLatch,
						   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
						   PQsocket(r->conn), (long) left, IDGEN_WAIT_EVENT);
	if (rc & WL_LATCH_SET)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/* See pqconn.h */
bool
idgen_pqconn_connect(IdgenPqConn *r, const char *conninfo, int64 deadline_ms)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {conninfo, r->appname, NULL};
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	if (r->conn && r->conninfo && strcmp(r->conninfo, conninfo) == 0 &&
		PQstatus(r->conn) == CONNECTION_OK)
		return true;
	idgen_pqconn_close(r);
	if (r->conninfo)
		pfree(r->conninfo);
	r->conninfo = MemoryContextStrdup(TopMemoryContext, conninfo);

	r->conn = PQconnectStartParams(keys, vals, true);
	if (r->conn == NULL)
	{
		set_error(r, "out of memory");
		return false;
	}
	if (PQstatus(r->conn) == CONNECTION_BAD)
	{
		fail(r, PQerrorMessage(r->conn));
		return false;
	}
	while (st != PGRES_POLLING_OK)
	{
		if (st == PGRES_POLLING_FAILED)
		{
			fail(r, PQerrorMessage(r->conn));
			return false;
		}
		if (!wait_socket(r, st == PGRES_POLLING_READING ?
						 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
						 deadline_ms))
		{
			fail(r, "timed out while connecting");
			return false;
		}
		st = PQconnectPoll(r->conn);
	}
	return true;
}

/* See pqconn.h */
PGresult *
idgen_pqconn_exec(IdgenPqConn *r, const char *sql, int nparams,
				  const char *const *params, int64 deadline_ms)
{
	PGresult   *last = NULL;
	PGresult   *res;

	if (!PQsendQueryParams(r->conn, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		fail(r, PQerrorMessage(r->conn));
		return NULL;
	}
	for (;;)
	{
		while (PQisBusy(r->conn))
		{
			if (!wait_socket(r, WL_SOCKET_READABLE, deadline_ms))
			{
				if (last)
					PQclear(last);
				fail(r, "timed out waiting for an answer");
				return NULL;
			}
			if (!PQconsumeInput(r->conn))
			{
				if (last)
					PQclear(last);
				fail(r, PQerrorMessage(r->conn));
				return NULL;
			}
		}
		res = PQgetResult(r->conn);
		if (res == NULL)
			break;
		if (last)
			PQclear(last);
		last = res;
	}
	if (last && PQresultStatus(last) == PGRES_TUPLES_OK)
	{
		r->error[0] = '\0';
		return last;
	}
	if (last)
	{
		/* An SQL error: the connection is still good */
		set_error(r, PQresultErrorMessage(last));
		PQclear(last);
		return NULL;
	}
	fail(r, PQerrorMessage(r->conn));
	return NULL;
}
