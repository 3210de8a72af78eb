/*
 * idgen.c
 *		Settings and helpers shared by the SQL entry points.
 *
 * idgen_define_gucs runs in the postmaster at start-up (from _PG_init,
 * module.c); idgen_require_loaded, idgen_layout_arg, idgen_table_relid and
 * idgen_spi_read_fresh run in backends and keep no shared state.
 * Functions of pure arithmetic (genes, codecs, decode and make with a
 * named layout) work without the preload; generators, status functions and
 * anything using the server's idgen.layout need it.
 */
#include "postgres.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "postmaster/postmaster.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "idgen.h"

/* Settings */
static char *idgen_node_id_string = NULL;
int			idgen_node_id = -1;
char	   *idgen_layout_spec = NULL;
int			idgen_max_lead_ms = 5000;
int			idgen_layout_end_warning_s = 365 * 86400;
int			idgen_clock_wait_ms = 1000;
int			idgen_worker_wait_ms = 10000;
int			idgen_test_hold_lock = 0;
int			idgen_segment_max_workers = 2;
char	   *idgen_database = NULL;
bool		idgen_allow_on_standby = false;
bool		idgen_allow_key_drop = false;
int			idgen_node_timeline_bits = 0;

/* The layout of idgen.layout, parsed once in the postmaster */
IdgenLayout idgen_layout;

/* True once _PG_init ran from shared_preload_libraries */
static bool idgen_loaded = false;

/*
 * Parse idgen.node_id: empty means unset (-1), 'auto' leased from the
 * registry (IDGEN_NODE_AUTO), 'citus' the Citus group id (IDGEN_NODE_CITUS);
 * otherwise a whole number.  Returns false on
 * bad syntax.
 */
static bool
parse_node_id(const char *s, int *out)
{
	char	   *end;
	long		v;

	if (s == NULL || s[0] == '\0')
	{
		*out = -1;
		return true;
	}
	if (pg_strcasecmp(s, "auto") == 0)
	{
		*out = IDGEN_NODE_AUTO;
		return true;
	}
	if (pg_strcasecmp(s, "citus") == 0)
	{
		*out = IDGEN_NODE_CITUS;
		return true;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > INT_MAX)
		return false;
	*out = (int) v;
	return true;
}

/* Check hook for idgen.node_id (ALTER SYSTEM and reloads) */
static bool
check_node_id(char **newval, void **extra, GucSource source)
{
	int			v;

	if (!parse_node_id(*newval, &v))
	{
		GUC_check_errdetail("idgen.node_id must be 'auto', 'citus' or a whole number from 0 to the largest node of idgen.layout.");
		return false;
	}
	return true;
}

/*
 * SQLSTATE for a refused layout spec: an epoch date or time that does not
 * exist (2024-02-31, 24:00:00) is datetime_field_overflow, as for
 * '2024-02-31'::date; anything else is invalid_parameter_value.
 */
static int
layout_errcode(IdgenLayoutError why)
{
	return why == IDGEN_LAYOUT_BAD_DATETIME ? ERRCODE_DATETIME_FIELD_OVERFLOW :
		ERRCODE_INVALID_PARAMETER_VALUE;
}

/* Check hook for idgen.layout */
static bool
check_layout(char **newval, void **extra, GucSource source)
{
	IdgenLayout l;
	char		err[256];
	IdgenLayoutError why;

	if (!idgen_layout_parse_why(*newval, &l, err, sizeof(err), &why))
	{
		GUC_check_errcode(layout_errcode(why));
		GUC_check_errdetail("%s.", err);
		return false;
	}
	return true;
}

/* Parse idgen.node_timeline_bits: 0 when unset */
static bool
parse_timeline_bits(const char *s, int *out)
{
	char	   *end;
	long		v;

	if (s == NULL || *s == '\0')
	{
		*out = 0;
		return true;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 ||
		v > IDGEN_TIMELINE_BITS_MAX)
		return false;
	*out = (int) v;
	return true;
}

/*
 * Validate the start-up values of idgen.layout and idgen.node_id.  A bad
 * value in postgresql.conf only draws a WARNING from the GUC machinery when a
 * module defines its variables, and the default would then be used silently;
 * instead the server refuses to start, naming the setting.
 */
static void
validate_startup_settings(const char *raw_layout, const char *raw_node,
						  const char *raw_tlbits)
{
	char		err[256];
	IdgenLayoutError why;
	uint64		maxnode;

	if (!idgen_layout_parse_why(raw_layout ? raw_layout : "idgen",
								&idgen_layout, err, sizeof(err), &why))
		ereport(ERROR,
				(errcode(layout_errcode(why)),
				 errmsg("invalid value for parameter \"idgen.layout\": \"%s\"",
						raw_layout),
				 errdetail("%s.", err),
				 errhint("Use a preset (idgen, twitter, discord, sonyflake, vesta_max_peak, vesta_min_granularity, uid_generator, cosid_safe_js_ms, cosid_safe_js_s, pgedge, sonyflake_v2) or a spec such as 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01'.")));

	if (!parse_node_id(raw_node, &idgen_node_id))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"idgen.node_id\": \"%s\"",
						raw_node),
				 errdetail("idgen.node_id must be 'auto', 'citus' or a whole number.")));

	if (!parse_timeline_bits(raw_tlbits, &idgen_node_timeline_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"idgen.node_timeline_bits\": \"%s\"",
						raw_tlbits),
				 errdetail("idgen.node_timeline_bits must be a whole number from 0 to %d.",
						   IDGEN_TIMELINE_BITS_MAX)));
	if (idgen_node_timeline_bits > idgen_layout.node.bits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen.node_timeline_bits %d is more than the %d node bits of layout \"%s\"",
						idgen_node_timeline_bits, idgen_layout.node.bits,
						idgen_layout.name),
				 errdetail("The low idgen.node_timeline_bits bits of the node id come from the server's timeline, and the rest from idgen.node_id."),
				 errhint("Set idgen.node_timeline_bits to %d or less, or use a layout with more node bits.",
						 idgen_layout.node.bits)));
	if (idgen_node_timeline_bits > 0 &&
		(idgen_node_id == IDGEN_NODE_AUTO || idgen_node_id == IDGEN_NODE_CITUS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen.node_timeline_bits cannot be used with idgen.node_id = '%s'",
						idgen_node_id == IDGEN_NODE_AUTO ? "auto" : "citus"),
				 errdetail("Timeline bits are part of a fixed node id; a leased or Citus node id is already this server's alone."),
				 errhint("Set idgen.node_timeline_bits to 0, or give the server a fixed idgen.node_id.")));

	maxnode = idgen_field_max(idgen_layout.node.bits - idgen_node_timeline_bits);
	if (idgen_node_id >= 0 && (uint64) idgen_node_id > maxnode)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen.node_id %d is out of range for layout \"%s\"",
						idgen_node_id, idgen_layout.name),
				 idgen_node_timeline_bits > 0 ?
				 errdetail("The layout has %d node bits, %d of them for the timeline (idgen.node_timeline_bits), so idgen.node_id must be between 0 and " UINT64_FORMAT ".",
						   idgen_layout.node.bits, idgen_node_timeline_bits, maxnode) :
				 errdetail("The layout has %d node bits, so idgen.node_id must be between 0 and " UINT64_FORMAT ".",
						   idgen_layout.node.bits, maxnode)));
}

/* Check idgen.layout and idgen.node_id, define the core settings */
void
idgen_define_gucs(void)
{
	const char *raw;
	char	   *raw_layout = NULL;
	char	   *raw_node = NULL;
	char	   *raw_tlbits = NULL;

	raw = GetConfigOption("idgen.layout", true, false);
	if (raw)
		raw_layout = pstrdup(raw);
	raw = GetConfigOption("idgen.node_id", true, false);
	if (raw)
		raw_node = pstrdup(raw);
	raw = GetConfigOption("idgen.node_timeline_bits", true, false);
	if (raw)
		raw_tlbits = pstrdup(raw);
	validate_startup_settings(raw_layout, raw_node, raw_tlbits);

	DefineCustomStringVariable("idgen.node_id",
							   "This server's node id, written into every snowflake ID; unique among the servers that share IDs.",
							   NULL, &idgen_node_id_string, "",
							   PGC_POSTMASTER, 0, check_node_id, NULL, NULL);
	DefineCustomStringVariable("idgen.layout",
							   "Bit layout of snowflake IDs: a preset name or a spec such as 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01'.",
							   NULL, &idgen_layout_spec, "idgen",
							   PGC_POSTMASTER, 0, check_layout, NULL, NULL);
	DefineCustomIntVariable("idgen.max_lead",
							"How far the snowflake generator's clock may run ahead of the wall clock, at least one tick, after the clock moved back or during a burst.",
							NULL, &idgen_max_lead_ms, 5000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.layout_end_warning",
							"How long before the snowflake layout runs out the idgen worker starts to log a daily WARNING; 0 turns it off.",
							NULL, &idgen_layout_end_warning_s, 365 * 86400, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.clock_wait_timeout",
							"How long a call waits for the wall clock to come within idgen.max_lead before it fails.",
							NULL, &idgen_clock_wait_ms, 1000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.worker_wait_timeout",
							"How long a call waits for the idgen worker to reserve snowflake time before it fails.",
							NULL, &idgen_worker_wait_ms, 10000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.segment_max_workers",
							"Most idgen segment workers (one per database other than idgen.database that draws segment IDs) that run at once.",
							NULL, &idgen_segment_max_workers, 2, 1, MAX_BACKENDS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("idgen.database",
							   "Database the idgen worker connects to, where it keeps the snowflake reservation and the segment table.",
							   NULL, &idgen_database, "postgres",
							   PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.test_hold_lock",
							"For tests only: snowflake_resume waits for this advisory lock key between raising the generator and lifting the refusal; 0 waits for nothing.",
							NULL, &idgen_test_hold_lock, 0, INT_MIN, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.node_timeline_bits",
							"How many low bits of the node id in snowflake IDs come from the server's timeline, so that a promoted standby or a restored copy issues under a node id of its own.",
							NULL, &idgen_node_timeline_bits, 0, 0, IDGEN_TIMELINE_BITS_MAX,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("idgen.allow_on_standby",
							 "Allow snowflake IDs on a server in recovery, where they are not protected by a durable reservation.",
							 NULL, &idgen_allow_on_standby, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("idgen.allow_key_drop",
							 "Let DROP EXTENSION idgen drop the keys of public IDs in table idgen.id_key, which it refuses otherwise.",
							 NULL, &idgen_allow_key_drop, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* Every part is set up: the functions that need the preload may run */
void
idgen_mark_loaded(void)
{
	idgen_loaded = true;
}

/* OID of table idgen.<name> in this database, InvalidOid if absent; no lock */
Oid
idgen_table_relid(const char *name)
{
	Oid			nsp = get_namespace_oid("idgen", true);

	return OidIsValid(nsp) ? get_relname_relid(name, nsp) : InvalidOid;
}

/*
 * Run a read-only SPI plan with a snapshot taken now, whatever the
 * transaction's, for the committed rows of idgen's table relid: privileges
 * and keys, which PostgreSQL's own would read from the catalog.
 * GetCatalogSnapshot() takes one afresh on every call for a table without
 * a syscache and, unlike GetLatestSnapshot(), in parallel mode too.
 * Returns SPI_execute_snapshot's result.
 */
int
idgen_spi_read_fresh(SPIPlanPtr plan, Datum *args, const char *nulls,
					 Oid relid, long tcount)
{
	Snapshot	snap = RegisterSnapshot(GetCatalogSnapshot(relid));
	int			ret;

	ret = SPI_execute_snapshot(plan, args, nulls, snap, InvalidSnapshot,
							   true, false, tcount);
	UnregisterSnapshot(snap);
	return ret;
}

/* Error unless loaded via shared_preload_libraries */
void
idgen_require_loaded(void)
{
	if (!idgen_loaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via \"shared_preload_libraries\""),
				 errhint("Add idgen to shared_preload_libraries in postgresql.conf and restart the server." IDGEN_HINT_TROUBLESHOOTING)));
}

/*
 * The layout a SQL function should use: the server's for NULL, else the
 * preset or spec given.  The last parsed spec is cached per backend.
 */
const IdgenLayout *
idgen_layout_arg(const char *spec, IdgenLayout *buf)
{
	static char *cached_spec = NULL;
	static IdgenLayout cached;
	char		err[256];
	IdgenLayoutError why;

	/* The server's layout needs the preload; a named one does not */
	if (spec == NULL)
	{
		idgen_require_loaded();
		return &idgen_layout;
	}
	if (cached_spec && strcmp(cached_spec, spec) == 0)
	{
		*buf = cached;
		return buf;
	}
	if (!idgen_layout_parse_why(spec, buf, err, sizeof(err), &why))
		ereport(ERROR,
				(errcode(layout_errcode(why)),
				 errmsg("invalid layout \"%s\"", spec),
				 errdetail("%s.", err),
				 errhint("Use a preset (idgen, twitter, discord, sonyflake, vesta_max_peak, vesta_min_granularity, uid_generator, cosid_safe_js_ms, cosid_safe_js_s, pgedge, sonyflake_v2) or a spec such as 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01'.")));
	if (cached_spec)
		pfree(cached_spec);
	cached_spec = MemoryContextStrdup(TopMemoryContext, spec);
	cached = *buf;
	return buf;
}

/* See idgen.h */
void
idgen_write_file_durably(const char *path, const char *tmp,
						 const void *data, size_t len)
{
	int			fd;

	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmp)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
	(void) durable_rename(tmp, path, ERROR);
}
