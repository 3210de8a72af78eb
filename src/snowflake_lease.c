/*
 * snowflake_lease.c
 *		Node ids leased from a registry database over libpq, as CosId's
 *		machine-id distributor does.
 *
 * With idgen.node_id = 'auto' the worker connects to the database named by
 * idgen.node_registry and leases a node id in table idgen.node_lease there,
 * within namespace idgen.node_namespace: the row it holds already if this
 * start of the server leased one (the worker restarted, a renewal was
 * lost), else the lowest id whose lease ended more than
 * idgen.node_lease_guard ago, else the lowest id never leased.  Every start
 * (and crash restart) leases under a new name (instance()), so a restarted
 * server gets its old id back only once that lease and the guard have run
 * out.  It renews the lease every third of idgen.node_lease_time.
 *
 * Each renewal records in the row a promise: the highest tick this server
 * may use before its lease runs out (its wall clock plus the lease time plus
 * idgen.max_lead, or the generator's own tick if that is further).  A server
 * that takes over a lapsed id raises its generator's floor above the
 * previous holder's promise, so it never repeats one of its IDs.
 *
 * Fencing: locally, a lease is valid for idgen.node_lease_time after the
 * moment its renewal was sent, measured on CLOCK_MONOTONIC.  The registry
 * stamps the renewal with its now(), which is later, so the local lease
 * always ends before the registry's; the registry then keeps the id unused
 * for the guard time on top.  Backends refuse to make snowflake IDs once the
 * local lease has ended, until the worker renews it.
 *
 * Registry calls go through pqconn.c, bounded by a deadline (a third
 * of the lease time), waiting on the worker's latch, so a registry that
 * hangs never stalls the worker past its next renewal and SIGTERM is served.
 *
 * Runs in the remote worker (idgen_snowflake_lease_step, worker.h) and,
 * for the slow path of idgen_snowflake_lease_node, in callers.  Shared
 * memory "idgen lease": rules in idgen.h.  In the registry, acquisitions in
 * a namespace are serialized by the lock of the namespace's row in
 * idgen.node_lease_lock, a table no other role may read or lock
 * (idgen.node_lease_acquire); a renewal and a takeover of the same row by
 * the row lock of their UPDATEs.  The registry's guard time is its own
 * idgen.node_lease_guard, read through idgen.serving_settings.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "idgen.h"
#include "pqconn.h"
#include "snowflake.h"
#include "worker.h"

/* Settings */
char	   *idgen_node_registry = NULL;
char	   *idgen_node_namespace = NULL;
int			idgen_node_lease_ms = 30000;
int			idgen_node_guard_ms = 10000;
int			idgen_node_lease_max_ms = 600000;

/* The lease's shared memory */
IdgenSnowflakeLease *idgen_snowflake_lease = NULL;

/* Worker-local state */
static IdgenPqConn registry = {.appname = "idgen worker"};
static int64 next_due_ms = 0;
static bool expiry_logged = false;
static char logged_error[IDGEN_LEASE_TEXT_LEN];
static char instance_name[IDGEN_LEASE_TEXT_LEN];
static char instance_shown[IDGEN_LEASE_TEXT_LEN];

/*
 * Define the registry's own bounds, idgen.node_lease_guard and
 * idgen.node_lease_max_time.  Also runs when
 * the library is loaded without the preload (a registry calling
 * idgen.serving_settings): reload-only, so its value comes from the
 * server's configuration (postgresql.conf, ALTER SYSTEM), never from a
 * session's SET, set_config or ALTER ROLE/DATABASE ... SET.
 */
void
idgen_snowflake_lease_define_serving_gucs(void)
{
	DefineCustomIntVariable("idgen.node_lease_guard",
							"How long a node id whose lease ran out stays unused before another server may lease it.",
							NULL, &idgen_node_guard_ms, 10000, 0, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.node_lease_max_time",
							"The longest node id lease this server grants as a node registry; a server asking for a longer one is refused.",
							NULL, &idgen_node_lease_max_ms, 600000, 1000, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
}

/* Define the lease settings and check them against idgen.node_id */
void
idgen_snowflake_lease_define_gucs(void)
{
	idgen_pqconn_define_conninfo("idgen.node_registry",
								 "Connection string of the registry database from which a server with idgen.node_id = 'auto' leases its node id.",
								 &idgen_node_registry, PGC_SIGHUP);
	DefineCustomStringVariable("idgen.node_namespace",
							   "Namespace in the registry within which node ids are leased; servers that share IDs share a namespace.",
							   NULL, &idgen_node_namespace, "default",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.node_lease_time",
							"How long a node id lease lasts unless renewed; the worker renews it every third of this time, and snowflake IDs stop when it runs out.",
							NULL, &idgen_node_lease_ms, 30000, 1000, INT_MAX / 2,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	idgen_snowflake_lease_define_serving_gucs();

	if (idgen_node_id == IDGEN_NODE_AUTO &&
		(idgen_node_registry == NULL || idgen_node_registry[0] == '\0'))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen.node_id is 'auto' but idgen.node_registry is not set"),
				 errdetail("A server with idgen.node_id = 'auto' leases its node id from a registry database."),
				 errhint("Set idgen.node_registry to a connection string of a database where extension idgen is installed, or set idgen.node_id to a number.")));
}

/* Shared memory needed */
Size
idgen_snowflake_lease_shmem_size(void)
{
	return MAXALIGN(sizeof(IdgenSnowflakeLease));
}

/* Create or attach the shared state; caller holds AddinShmemInitLock */
void
idgen_snowflake_lease_shmem_init(void)
{
	bool		found;

	idgen_snowflake_lease = ShmemInitStruct("idgen lease",
											idgen_snowflake_lease_shmem_size(),
											&found);
	if (!found)
	{
		pg_atomic_init_u64(&idgen_snowflake_lease->word, 0);
		ConditionVariableInit(&idgen_snowflake_lease->cv);
		SpinLockInit(&idgen_snowflake_lease->mutex);
		idgen_snowflake_lease->renewed_at_us = 0;
		idgen_snowflake_lease->previous_tick = -1;
		idgen_snowflake_lease->instance[0] = '\0';
		idgen_snowflake_lease->last_error[0] = '\0';
	}
}

/* Copy the worker's last error into buf */
static void
read_last_error(char *buf)
{
	SpinLockAcquire(&idgen_snowflake_lease->mutex);
	strlcpy(buf, idgen_snowflake_lease->last_error, IDGEN_LEASE_TEXT_LEN);
	SpinLockRelease(&idgen_snowflake_lease->mutex);
}

/* Raise the fencing error: node's lease has run out */
static void
report_expired(int node)
{
	char		err[IDGEN_LEASE_TEXT_LEN];

	read_last_error(err);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not generate a snowflake ID: the lease of node id %d has run out",
					node),
			 errdetail("The idgen worker has not renewed the lease in the registry within idgen.node_lease_time (%d ms), so another server may take this node id over.%s%s",
					   idgen_node_lease_ms,
					   err[0] ? " The last attempt failed: " : "", err),
			 errhint("Make sure the database named by idgen.node_registry is reachable; IDs are issued again as soon as the lease is renewed.")));
}

/* See snowflake.h */
int
idgen_snowflake_lease_node_slow(void)
{
	long		left = idgen_worker_wait_ms;
	bool		on_cv = false;

	for (;;)
	{
		uint64		w = pg_atomic_read_u64(&idgen_snowflake_lease->word);
		int			node = (int) (w >> IDGEN_LEASE_MS_BITS) - 1;
		long		ms;

		if (node >= 0 && (int64) (w & IDGEN_LEASE_MS_MASK) > idgen_clock_monotonic_ms())
		{
			if (on_cv)
				ConditionVariableCancelSleep();
			return node;
		}
		if (node >= 0)
		{
			if (on_cv)
				ConditionVariableCancelSleep();
			report_expired(node);
		}
		if (left <= 0)
		{
			char		err[IDGEN_LEASE_TEXT_LEN];

			if (on_cv)
				ConditionVariableCancelSleep();
			read_last_error(err);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not generate a snowflake ID: no node id has been leased yet"),
					 errdetail("idgen.node_id is 'auto', and the idgen worker has not leased a node id from the registry named by idgen.node_registry.%s%s",
							   err[0] ? " The last attempt failed: " : "", err),
					 errhint("Make sure the registry database is reachable and has extension idgen installed, and that the \"idgen worker\" process is running.")));
		}
		if (!on_cv)
			ConditionVariablePrepareToSleep(&idgen_snowflake_lease->cv);
		on_cv = true;
		ms = Min(left, 100);
		(void) ConditionVariableTimedSleep(&idgen_snowflake_lease->cv, ms,
										   idgen_wait_event(IDGEN_WAIT_RESERVATION));
		left -= ms;
	}
}

/*
 * Our name in the registry: new for every start of the server, the same
 * for the worker's restarts within it.  It ends with the random key drawn
 * when shared memory is created (snowflake_state.c), so no caller of the
 * registry's functions can guess it and claim this server's live lease as
 * its own, and a copy of this data directory never leases under this
 * start's name.  instance_shown is the name without the key, for
 * node_lease_status.
 */
static const char *
instance(void)
{
	if (instance_name[0] == '\0')
	{
		char		host[128];

		if (gethostname(host, sizeof(host)) != 0)
			strlcpy(host, "localhost", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		snprintf(instance_shown, sizeof(instance_shown),
				 "%s:%d %s (system " UINT64_FORMAT ")",
				 host, PostPortNumber, DataDir, GetSystemIdentifier());
		snprintf(instance_name, sizeof(instance_name), "%s key %016llx",
				 instance_shown, (unsigned long long) idgen_snowflake_instance_key());
	}
	return instance_name;
}

/* On worker exit, close the registry connection */
static void
lease_exit(int code, Datum arg)
{
	idgen_pqconn_close(&registry);
}

/* Record the outcome of an attempt; logs each new error once */
static void
note_error(const char *msg)
{
	char		buf[IDGEN_LEASE_TEXT_LEN];

	/* One line already: libpq's errors come through pqconn.c's set_error */
	strlcpy(buf, msg ? msg : "", sizeof(buf));

	SpinLockAcquire(&idgen_snowflake_lease->mutex);
	strlcpy(idgen_snowflake_lease->last_error, buf, IDGEN_LEASE_TEXT_LEN);
	SpinLockRelease(&idgen_snowflake_lease->mutex);

	if (buf[0] && strcmp(buf, logged_error) != 0)
		ereport(LOG,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not lease a node id from the registry: %s", buf)));
	strlcpy(logged_error, buf, sizeof(logged_error));
}

/*
 * The highest tick this server may use before a lease renewed now runs
 * out: the clock, plus the lease time and the generator's allowed lead
 * (idgen_snowflake_lead_ticks), or
 * the generator's own top if that is further.
 */
static int64
promise_tick(void)
{
	int64		ahead_us = (int64) idgen_node_lease_ms * 1000;
	int64		tick = idgen_tick_of(&idgen_layout, idgen_clock_now_us() + ahead_us) +
		idgen_snowflake_lead_ticks(&idgen_layout);

	tick = Max(tick, idgen_snowflake_top_tick());
	tick = Max(tick, idgen_snowflake_reserved_end());
	return tick;
}

/* Publish node as leased until valid_until_ms (monotonic) */
static void
publish(int node, int64 valid_until_ms)
{
	uint64		w = ((uint64) (node + 1) << IDGEN_LEASE_MS_BITS) |
		((uint64) Max(valid_until_ms, 0) & IDGEN_LEASE_MS_MASK);

	pg_write_barrier();
	pg_atomic_write_u64(&idgen_snowflake_lease->word, w);
	ConditionVariableBroadcast(&idgen_snowflake_lease->cv);
}

/*
 * Renew our lease on node: 1 when renewed, 0 when the registry says another
 * server holds it (or the row is gone), -1 on an error.
 */
static int
renew(int node, int64 deadline_ms)
{
	char		nodebuf[16],
				leasebuf[16],
				tickbuf[32];
	const char *params[5];
	PGresult   *res;
	int			ret;

	snprintf(nodebuf, sizeof(nodebuf), "%d", node);
	snprintf(leasebuf, sizeof(leasebuf), "%d", idgen_node_lease_ms);
	snprintf(tickbuf, sizeof(tickbuf), INT64_FORMAT, promise_tick());
	params[0] = idgen_node_namespace;
	params[1] = nodebuf;
	params[2] = instance();
	params[3] = leasebuf;
	params[4] = tickbuf;
	res = idgen_pqconn_exec(&registry,
							"SELECT idgen.node_lease_renew($1, $2, $3, $4, $5)",
							5, params, deadline_ms);
	if (res == NULL)
	{
		note_error(registry.error);
		return -1;
	}
	ret = (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0) ? 1 : 0;
	PQclear(res);
	return ret;
}

/*
 * Lease a node id; returns it, or -1 (with an error noted).  When the id
 * was another server's, raises the generator's floor above its promise.
 */
static int
acquire(int64 deadline_ms)
{
	char		maxbuf[16],
				leasebuf[16],
				guardbuf[16],
				tickbuf[32];
	const char *params[6];
	PGresult   *res;
	uint64		maxnode = Min(idgen_field_max(idgen_layout.node.bits),
							  (uint64) IDGEN_LEASE_MAX_NODE);
	int			node;
	int64		prev_tick = -1;
	char		msg[IDGEN_LEASE_TEXT_LEN];

	snprintf(maxbuf, sizeof(maxbuf), "%d", (int) maxnode);
	snprintf(leasebuf, sizeof(leasebuf), "%d", idgen_node_lease_ms);
	snprintf(guardbuf, sizeof(guardbuf), "%d", idgen_node_guard_ms);
	snprintf(tickbuf, sizeof(tickbuf), INT64_FORMAT, promise_tick());
	params[0] = idgen_node_namespace;
	params[1] = instance();
	params[2] = maxbuf;
	params[3] = leasebuf;
	params[4] = guardbuf;
	params[5] = tickbuf;
	res = idgen_pqconn_exec(&registry,
							"SELECT leased_node, previous_instance, previous_last_tick "
							"FROM idgen.node_lease_acquire($1, $2, $3, $4, $5, $6)",
							6, params, deadline_ms);
	if (res == NULL)
	{
		note_error(registry.error);
		return -1;
	}
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		snprintf(msg, sizeof(msg),
				 "every node id from 0 to " UINT64_FORMAT " in namespace \"%s\" is leased",
				 maxnode, idgen_node_namespace);
		note_error(msg);
		return -1;
	}
	node = atoi(PQgetvalue(res, 0, 0));

	/*
	 * Another server's row: a 0.4.0 registry returns no previous holder for
	 * our own row (and the other's name without its key); a registry still
	 * at 0.3.0 returns our own full name, hence the comparison
	 */
	if (!PQgetisnull(res, 0, 1) && !PQgetisnull(res, 0, 2) &&
		strcmp(PQgetvalue(res, 0, 1), instance()) != 0)
	{
		prev_tick = strtoi64(PQgetvalue(res, 0, 2), NULL, 10);
		idgen_snowflake_raise_floor(prev_tick);
	}
	PQclear(res);

	SpinLockAcquire(&idgen_snowflake_lease->mutex);
	idgen_snowflake_lease->previous_tick = prev_tick;
	SpinLockRelease(&idgen_snowflake_lease->mutex);
	ereport(LOG,
			(errmsg("leased node id %d in namespace \"%s\" of the registry",
					node, idgen_node_namespace),
			 prev_tick >= 0 ?
			 errdetail("The id was last held by another server; IDs start above its tick " INT64_FORMAT ".",
					   prev_tick) : 0));
	return node;
}

/* Renew or take a lease, starting at t0 (monotonic ms); true on success */
static bool
lease_round(int64 t0)
{
	int64		deadline = t0 + Max(idgen_node_lease_ms / 3, 500);
	uint64		w = pg_atomic_read_u64(&idgen_snowflake_lease->word);
	int			node = (int) (w >> IDGEN_LEASE_MS_BITS) - 1;

	if (!idgen_pqconn_connect(&registry, idgen_node_registry, deadline))
	{
		note_error(registry.error);
		return false;
	}
	if (node >= 0 && (w & IDGEN_LEASE_MS_MASK) != 0)
	{
		int			r = renew(node, deadline);

		if (r < 0)
			return false;
		if (r == 0)
		{
			/* Fence at once, keeping the node for the error message */
			publish(node, 0);
			ereport(LOG,
					(errmsg("lost the lease of node id %d: the registry has given it to another server",
							node)));
			node = -1;
		}
	}
	else
		node = -1;
	if (node < 0)
	{
		node = acquire(deadline);
		if (node < 0)
			return false;
	}
	publish(node, t0 + idgen_node_lease_ms);
	SpinLockAcquire(&idgen_snowflake_lease->mutex);
	idgen_snowflake_lease->renewed_at_us = idgen_clock_now_us();
	(void) instance();
	strlcpy(idgen_snowflake_lease->instance, instance_shown, IDGEN_LEASE_TEXT_LEN);
	SpinLockRelease(&idgen_snowflake_lease->mutex);
	if (expiry_logged)
		ereport(LOG,
				(errmsg("renewed the lease of node id %d; snowflake IDs are issued again",
						node)));
	expiry_logged = false;
	note_error(NULL);
	return true;
}

/* See snowflake.h */
void
idgen_snowflake_lease_step(long *sleep_ms)
{
	static bool exit_registered = false;
	uint64		w;
	int64		now,
				until;
	bool		ok;

	if (idgen_node_id != IDGEN_NODE_AUTO)
		return;
	if (!exit_registered)
	{
		on_proc_exit(lease_exit, (Datum) 0);
		exit_registered = true;
	}
	/* A standby takes no node id; it leases one once promoted */
	if (RecoveryInProgress() && !idgen_allow_on_standby)
	{
		*sleep_ms = Min(*sleep_ms, 1000);
		return;
	}

	now = idgen_clock_monotonic_ms();
	w = pg_atomic_read_u64(&idgen_snowflake_lease->word);
	until = (int64) (w & IDGEN_LEASE_MS_MASK);
	if ((w >> IDGEN_LEASE_MS_BITS) != 0 && until <= now && !expiry_logged)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the lease of node id %d has run out; snowflake IDs are refused until it is renewed",
						(int) (w >> IDGEN_LEASE_MS_BITS) - 1)));
		expiry_logged = true;
	}

	if (now >= next_due_ms)
	{
		ok = lease_round(now);
		now = idgen_clock_monotonic_ms();
		if (ok)
			next_due_ms = now + Max(idgen_node_lease_ms / 3, 1);
		else
			next_due_ms = now + Min(1000, Max(idgen_node_lease_ms / 6, 100));
		w = pg_atomic_read_u64(&idgen_snowflake_lease->word);
		until = (int64) (w & IDGEN_LEASE_MS_MASK);
	}
	*sleep_ms = Min(*sleep_ms, Max(next_due_ms - now, 1));
	if (until > now)
		*sleep_ms = Min(*sleep_ms, until - now + 1);
}
