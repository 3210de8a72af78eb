/*
 * citus.c
 *		idgen inside a Citus cluster.
 *
 * Node ids.  With idgen.node_id = 'citus' the node id of a server is its
 * Citus group id (pg_dist_local_group.groupid): 0 on the coordinator, 1, 2
 * ... on the workers, shared by a primary and its standbys, never reused by
 * Citus once a node is removed.  The idgen worker reads it once a round
 * (each second, or sooner when woken), so a node removed and added again
 * takes its new group id without a restart.  A group id counts only once
 * the node is in the cluster's metadata: a fresh server has group 0 until
 * citus_add_node, so group G is used only when pg_dist_node has a row of
 * group G (the coordinator's own row comes from citus_set_coordinator_host).
 * Until then, or where Citus is missing, snowflake IDs are refused with an
 * error that says why.  A standby refuses IDs anyway (idgen.allow_on_standby)
 * and, promoted, keeps its group's node id and starts above the old
 * primary's reservation, which reached it through WAL.
 *
 * Segments.  On a Citus worker (group > 0) the coordinator is the central
 * segment server (segment_server.c): the remote worker allocates this
 * server's segments from the coordinator's idgen.segment_alloc over libpq,
 * so a tag created on the coordinator is one tag across the cluster, and
 * creating, altering or dropping a tag on a worker is refused.  An explicit
 * idgen.segment_server takes precedence.
 *
 * Locking: the node word is written only by the idgen worker, with atomic
 * writes, and read by backends; the text fields are protected by the
 * spinlock.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "citus.h"
#include "idgen.h"
#include "worker.h"

#define CITUS_TEXT_LEN 512

/* Values of the node word besides group id + 2 */
#define CITUS_WORD_UNKNOWN 0	/* the worker has not looked yet */
#define CITUS_WORD_NONE 1		/* it looked: no usable group id */

typedef struct CitusShared
{
	pg_atomic_uint64 word;		/* see above; worker writes */
	ConditionVariable cv;		/* broadcast when the worker has looked */
	slock_t		mutex;			/* protects the fields below */
	char		server[CITUS_TEXT_LEN]; /* coordinator's conninfo on a
										 * worker, else "" */
	char		why[CITUS_TEXT_LEN];	/* why there is no node id */
	char		hint[CITUS_TEXT_LEN];	/* what to do about it */
} CitusShared;

bool		idgen_citus_preloaded = false;

static CitusShared *cs = NULL;

/* Worker-local: what was last logged */
static int	logged_node = -2;
static char logged_server[CITUS_TEXT_LEN];

/* Note whether Citus was loaded before us */
void
idgen_citus_init(void)
{
	/* Citus defines its settings in its own _PG_init, which ran first */
	idgen_citus_preloaded = GetConfigOption("citus.node_conninfo", true, false) != NULL;
	if (idgen_node_id == IDGEN_NODE_CITUS && !idgen_citus_preloaded)
		ereport(LOG,
				(errmsg("idgen.node_id is 'citus' but Citus is not loaded before idgen"),
				 errhint("Put citus before idgen in shared_preload_libraries: shared_preload_libraries = 'citus,idgen'.")));
}

/* Shared memory needed */
Size
idgen_citus_shmem_size(void)
{
	return MAXALIGN(sizeof(CitusShared));
}

/* Create or attach the shared state; caller holds AddinShmemInitLock */
void
idgen_citus_shmem_init(void)
{
	bool		found;

	cs = ShmemInitStruct("idgen citus", idgen_citus_shmem_size(), &found);
	if (!found)
	{
		pg_atomic_init_u64(&cs->word, CITUS_WORD_UNKNOWN);
		ConditionVariableInit(&cs->cv);
		SpinLockInit(&cs->mutex);
		cs->server[0] = '\0';
		cs->why[0] = '\0';
		cs->hint[0] = '\0';
	}
}

/* Raise the error of a node without a usable group id */
static void
report_no_node(void)
{
	char		why[CITUS_TEXT_LEN];
	char		hint[CITUS_TEXT_LEN];

	SpinLockAcquire(&cs->mutex);
	strlcpy(why, cs->why, sizeof(why));
	strlcpy(hint, cs->hint, sizeof(hint));
	SpinLockRelease(&cs->mutex);
	if (why[0] == '\0')
		strlcpy(why, "The idgen worker has not read this node's Citus group id yet.", sizeof(why));
	if (hint[0] == '\0')
		strlcpy(hint, "Make sure the \"idgen worker\" process is running in the database named by idgen.database.", sizeof(hint));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not generate a snowflake ID: this node has no Citus group id to use as its node id"),
			 errdetail("idgen.node_id is 'citus'. %s", why),
			 errhint("%s", hint)));
}

/* See citus.h */
int
idgen_citus_node(void)
{
	uint64		w = pg_atomic_read_u64(&cs->word);
	long		left = idgen_worker_wait_ms;
	bool		on_cv = false;

	/* Right after a start the worker may not have looked yet: wait for it */
	while (w == CITUS_WORD_UNKNOWN && left > 0)
	{
		long		ms = Min(left, 100);

		if (!on_cv)
			ConditionVariablePrepareToSleep(&cs->cv);
		on_cv = true;
		(void) ConditionVariableTimedSleep(&cs->cv, ms,
										   idgen_wait_event(IDGEN_WAIT_RESERVATION));
		left -= ms;
		w = pg_atomic_read_u64(&cs->word);
	}
	if (on_cv)
		ConditionVariableCancelSleep();
	if (w <= CITUS_WORD_NONE)
		report_no_node();
	return (int) (w - 2);
}

/* See citus.h */
int
idgen_citus_current_node(void)
{
	uint64		w;

	if (cs == NULL || idgen_node_id != IDGEN_NODE_CITUS)
		return -1;
	w = pg_atomic_read_u64(&cs->word);
	return w <= CITUS_WORD_NONE ? -1 : (int) (w - 2);
}

/* See citus.h */
const char *
idgen_citus_segment_server(void)
{
	static char buf[CITUS_TEXT_LEN];

	if (cs == NULL || !idgen_citus_preloaded)
		return NULL;
	SpinLockAcquire(&cs->mutex);
	strlcpy(buf, cs->server, sizeof(buf));
	SpinLockRelease(&cs->mutex);
	return buf[0] ? buf : NULL;
}

/* See citus.h */
void
idgen_citus_check_tag_admin(const char *what)
{
	if (idgen_citus_segment_server() == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot %s a segment tag on a Citus worker", what),
			 errdetail("This server's segments are allocated by the Citus coordinator, so its tags are the coordinator's."),
			 errhint("Run this on the coordinator; every node then draws from the same tag.")));
}

/* Append key='value' to a connection string, quoted as libpq wants */
static void
append_conn_param(StringInfo s, const char *key, const char *value)
{
	if (s->len > 0)
		appendStringInfoChar(s, ' ');
	appendStringInfo(s, "%s='", key);
	for (const char *p = value; *p; p++)
	{
		if (*p == '\'' || *p == '\\')
			appendStringInfoChar(s, '\\');
		appendStringInfoChar(s, *p);
	}
	appendStringInfoChar(s, '\'');
}

/* Publish what the worker found, log a change once, wake waiting callers */
static void
publish(int node, const char *server, const char *why, const char *hint)
{
	uint64		w = node >= 0 ? (uint64) node + 2 : CITUS_WORD_NONE;
	bool		changed;

	SpinLockAcquire(&cs->mutex);
	changed = strcmp(cs->server, server) != 0;
	strlcpy(cs->server, server, sizeof(cs->server));
	strlcpy(cs->why, why, sizeof(cs->why));
	strlcpy(cs->hint, hint, sizeof(cs->hint));
	SpinLockRelease(&cs->mutex);
	pg_write_barrier();
	if (pg_atomic_read_u64(&cs->word) != w)
	{
		pg_atomic_write_u64(&cs->word, w);
		if (idgen_node_id == IDGEN_NODE_CITUS && node != logged_node)
		{
			if (node >= 0)
				ereport(LOG,
						(errmsg("idgen: node id %d from this node's Citus group id", node)));
			else
				ereport(LOG,
						(errmsg("idgen: no node id from Citus; snowflake IDs are refused"),
						 errdetail("%s", why)));
			logged_node = node;
		}
	}
	ConditionVariableBroadcast(&cs->cv);
	if (changed || strcmp(logged_server, server) != 0)
	{
		if (server[0])
			ereport(LOG,
					(errmsg("idgen: segments of this Citus worker are allocated by the coordinator")));
		strlcpy(logged_server, server, sizeof(logged_server));
	}
}

/* Run a query of one row; the value of column col, or NULL */
static char *
spi_value(int col)
{
	if (SPI_processed != 1)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);
}

/* See citus.h */
void
idgen_citus_step(long *sleep_ms)
{
	char	   *v;
	int			group;
	bool		in_metadata;
	char	   *coord_host;
	char	   *coord_port;
	StringInfoData server;
	uint64		maxnode = idgen_field_max(idgen_layout.node.bits);
	char		why[CITUS_TEXT_LEN];

	if (!idgen_citus_preloaded && idgen_node_id != IDGEN_NODE_CITUS)
		return;

	if (!idgen_citus_preloaded ||
		SPI_execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus'"
					" AND pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL"
					" AND pg_catalog.to_regclass('pg_catalog.pg_dist_node') IS NOT NULL",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
	{
		snprintf(why, sizeof(why),
				 "Citus is not %s.",
				 idgen_citus_preloaded ?
				 psprintf("installed in database \"%s\"", idgen_database) :
				 "loaded before idgen");
		publish(-1, "", why,
				"Preload Citus before idgen (shared_preload_libraries = 'citus,idgen') and run CREATE EXTENSION citus in the database named by idgen.database, or set idgen.node_id to a number.");
		return;
	}

	if (SPI_execute("SELECT g.groupid,"
					" EXISTS (SELECT 1 FROM pg_catalog.pg_dist_node n WHERE n.groupid = g.groupid),"
					" c.nodename, c.nodeport"
					" FROM pg_catalog.pg_dist_local_group g"
					" LEFT JOIN LATERAL (SELECT nodename, nodeport FROM pg_catalog.pg_dist_node"
					"  WHERE groupid = 0 AND noderole = 'primary' ORDER BY nodeid LIMIT 1) c ON true",
					true, 1) != SPI_OK_SELECT || (v = spi_value(1)) == NULL)
	{
		publish(-1, "", "Table pg_dist_local_group has no row.",
				"Check the Citus installation in the database named by idgen.database.");
		return;
	}
	group = atoi(v);
	in_metadata = strcmp(spi_value(2), "t") == 0;
	coord_host = spi_value(3);
	coord_port = spi_value(4);

	/* A worker's segments come from the coordinator */
	initStringInfo(&server);
	if (group > 0 && coord_host != NULL && coord_port != NULL)
	{
		const char *extra = GetConfigOption("citus.node_conninfo", true, false);

		append_conn_param(&server, "host", coord_host);
		append_conn_param(&server, "port", coord_port);
		append_conn_param(&server, "dbname", idgen_database);
		if (extra != NULL && extra[0] != '\0')
			appendStringInfo(&server, " %s", extra);
	}
	else if (group > 0)
		append_conn_param(&server, "service", "idgen-citus-coordinator-not-in-metadata");

	if (!in_metadata)
	{
		snprintf(why, sizeof(why),
				 group == 0 ?
				 "This node's Citus group id is 0, but pg_dist_node has no row of group 0: it is neither a coordinator in the metadata nor a worker added to a cluster yet." :
				 "This node's Citus group id is %d, but pg_dist_node has no row of that group.",
				 group);
		publish(-1, server.data, why,
				"On the coordinator, run SELECT citus_set_coordinator_host(host, port) for the coordinator itself, or SELECT citus_add_node(host, port) for this worker; snowflake IDs are issued as soon as the idgen worker sees the node in the metadata.");
	}
	else if ((uint64) group > maxnode)
	{
		snprintf(why, sizeof(why),
				 "This node's Citus group id %d is larger than the largest node id of layout \"%s\" (" UINT64_FORMAT ").",
				 group, idgen_layout.name, maxnode);
		publish(-1, server.data, why,
				"Choose an idgen.layout with more node bits; Citus never reuses the group id of a removed node.");
	}
	else
		publish(group, server.data, "", "");
	pfree(server.data);
	*sleep_ms = Min(*sleep_ms, 1000);
}
