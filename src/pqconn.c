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
 * Runs only in the workers; an IdgenPqConn belongs to one caller, and
 * there is no shared state.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "clock.h"
#include "idgen.h"
#include "pqconn.h"

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
