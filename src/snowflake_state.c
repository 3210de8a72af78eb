/*
 * snowflake_state.c
 *		The durable high-water mark of the snowflake generator: the state
 *		file and the reservation row.
 *
 * The generator may use a tick only once a reservation covering it is
 * durable.  The reservation is kept in two places, and the generator starts
 * above the larger of them:
 *
 * 1. The state file "idgen.state" in the data directory.  It belongs to the
 *    server, not to any database or to the extension, so it survives DROP
 *    EXTENSION, pg_restore --clean, a superuser emptying the extension's
 *    tables, and is copied by pg_basebackup.  The worker writes it (write,
 *    fsync, durable rename) before each reservation is published; the
 *    postmaster reads it when it creates shared memory, so a crash restart
 *    and a restart with the clock set back start above it.  It also records
 *    the layout and node id the reservation was made under, so that a
 *    layout change that could make new IDs smaller is refused (see
 *    idgen_snowflake_state_load), and a random key that makes this server's name
 *    in a node registry impossible to guess (snowflake_lease.c).
 *
 * 2. The single row of table idgen.snowflake_reservation in idgen.database,
 *    written by the worker with synchronous_commit on.  A table row is
 *    WAL-logged and streamed to standbys by PostgreSQL itself, survives
 *    pg_upgrade (table files are carried over), and needs no custom resource
 *    manager that every standby and every crash recovery would then depend
 *    on.  A standby's worker copies a newer row into its own state file, so a
 *    promoted standby keeps the mark even if the extension is dropped later.
 *    The table is not dumped by pg_dump: the mark is the server's state, and
 *    a restored old row must never meet a newer one.
 *
 * Order on a primary: the file is written first, then the row is committed,
 * then the new end is published to callers.  A crash between the steps only
 * leaves a mark higher than anything handed out.
 *
 * The worker never waits for a lock on the reservation table: it takes it
 * conditionally and tries again on the next round.
 *
 * Runs in the idgen worker (idgen_snowflake_state_step, inside the
 * transaction worker.c opened) and, for idgen_snowflake_state_load, in the
 * postmaster while shared memory is created.  Shared memory: through the
 * functions of snowflake.c, under the rules in idgen.h.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "idgen.h"
#include "restore.h"
#include "snowflake.h"
#include "worker.h"

#define STATE_FILE "idgen.state"
#define STATE_FILE_TMP "idgen.state.tmp"
#define STATE_MAGIC 0x49444753	/* "IDGS" */
#define STATE_VERSION 1
#define STATE_SPEC_LEN 256

/* A layout as the state file records it: every field that places bits */
typedef struct StoredField
{
	int32		bits;
	int32		shift;
	uint64		value;			/* constant fields only */
} StoredField;

typedef struct StoredLayout
{
	StoredField ts;
	StoredField node;
	StoredField seq;
	int64		unit_us;
	int64		epoch_us;
	int32		nconsts;
	StoredField consts[IDGEN_MAX_PARTS];
} StoredLayout;

/* The state file; all integers in this machine's byte order */
typedef struct StateFile
{
	uint32		magic;
	uint32		version;
	int64		reserved_until_us;	/* start of the last reserved tick, Unix
									 * microseconds; -1 when none yet */
	int32		node_id;		/* idgen_node_id when written (-2: 'auto') */
	int32		flags;			/* IDGEN_BLOCK_RESTORED, IDGEN_BLOCK_TIMELINE:
								 * refused until snowflake_resume; 0 in
								 * files of 0.3.0 and before */
	uint64		instance_key;	/* random; see snowflake_lease.c */
	char		layout_spec[STATE_SPEC_LEN];	/* idgen.layout when written */
	StoredLayout layout;		/* the layout it names */
	pg_crc32c	crc;			/* of everything above */
} StateFile;

/* The file as last read or written by this process */
static StateFile state;
static bool state_valid = false;

/* Copy a layout into its stored form */
static void
store_layout(const IdgenLayout *l, StoredLayout *s)
{
	memset(s, 0, sizeof(*s));
	s->ts.bits = l->ts.bits;
	s->ts.shift = l->ts.shift;
	s->node.bits = l->node.bits;
	s->node.shift = l->node.shift;
	s->seq.bits = l->seq.bits;
	s->seq.shift = l->seq.shift;
	s->unit_us = l->unit_us;
	s->epoch_us = l->epoch_us;
	s->nconsts = Min(l->nconsts, IDGEN_MAX_PARTS);
	for (int i = 0; i < s->nconsts; i++)
	{
		s->consts[i].bits = l->consts[i].bits;
		s->consts[i].shift = l->consts[i].shift;
		s->consts[i].value = l->consts[i].value;
	}
}

/* A layout back from its stored form (enough to compose IDs) */
static void
load_layout(const StoredLayout *s, IdgenLayout *l)
{
	memset(l, 0, sizeof(*l));
	strlcpy(l->name, "stored", sizeof(l->name));
	l->ts.bits = s->ts.bits;
	l->ts.shift = s->ts.shift;
	l->node.bits = s->node.bits;
	l->node.shift = s->node.shift;
	l->seq.bits = s->seq.bits;
	l->seq.shift = s->seq.shift;
	l->unit_us = s->unit_us;
	l->epoch_us = s->epoch_us;
	l->nconsts = Min(Max(s->nconsts, 0), IDGEN_MAX_PARTS);
	for (int i = 0; i < l->nconsts; i++)
	{
		l->consts[i].bits = s->consts[i].bits;
		l->consts[i].shift = s->consts[i].shift;
		l->consts[i].value = s->consts[i].value;
	}
}

/* CRC of a state file's contents */
static pg_crc32c
state_crc(const StateFile *f)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, f, offsetof(StateFile, crc));
	FIN_CRC32C(crc);
	return crc;
}

/*
 * Write the state file durably: a temporary file, fsync, then a durable
 * rename over the old one, so a crash leaves either the old or the new file.
 */
static void
write_state(int64 until_us)
{
	state.magic = STATE_MAGIC;
	state.version = STATE_VERSION;
	state.reserved_until_us = until_us;
	state.node_id = idgen_node_id;
	state.flags = (int32) (idgen_snowflake_blocked_why() & IDGEN_BLOCK_VOUCH);
	if (idgen_snowflake_instance_key() != 0)
		state.instance_key = idgen_snowflake_instance_key();
	memset(state.layout_spec, 0, sizeof(state.layout_spec));
	strlcpy(state.layout_spec, idgen_layout_spec ? idgen_layout_spec : "idgen",
			sizeof(state.layout_spec));
	store_layout(&idgen_layout, &state.layout);
	state.crc = state_crc(&state);

	idgen_write_file_durably(STATE_FILE, STATE_FILE_TMP, &state, sizeof(state));
	state_valid = true;
}

/*
 * Read the state file into state; false when there is none.  A file that
 * cannot be trusted is an error: starting without it could repeat IDs.
 */
static bool
read_state(void)
{
	FILE	   *f;
	size_t		n;

	f = AllocateFile(STATE_FILE, PG_BINARY_R);
	if (f == NULL)
	{
		if (errno == ENOENT)
			return false;
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", STATE_FILE)));
	}
	n = fread(&state, 1, sizeof(state), f);
	FreeFile(f);
	if (n != sizeof(state) || state.magic != STATE_MAGIC ||
		state.version != STATE_VERSION || state.crc != state_crc(&state))
		ereport(FATAL,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen state file \"%s\" is corrupt", STATE_FILE),
				 errdetail("The file holds the durable high-water mark of snowflake IDs; without it IDs issued before could be issued again."),
				 errhint("Restore the file from a backup of this data directory.  If it is lost, move it away and make sure the clock is past every ID issued before restarting: idgen then starts above idgen.snowflake_reservation only.")));
	state_valid = true;
	return true;
}

/*
 * Would every ID made under the current layout and node id, starting above
 * the reservation, be larger than every ID made before under the stored
 * ones?  The largest old ID has the last reserved tick and the largest
 * sequence; the smallest new one the next tick and sequence 0.
 */
static bool
new_ids_provably_larger(void)
{
	IdgenLayout old;
	const IdgenLayout *cur = &idgen_layout;
	int64		old_tick,
				new_tick;
	uint64		old_node,
				new_node,
				old_max,
				new_min;

	load_layout(&state.layout, &old);
	if (old.unit_us <= 0 || old.ts.bits <= 0 || old.ts.bits > 63)
		return false;
	old_tick = idgen_tick_of(&old, state.reserved_until_us);
	old_tick = Min(Max(old_tick, 0), (int64) idgen_field_max(old.ts.bits));
	new_tick = idgen_tick_of(cur, state.reserved_until_us) + 1;
	new_tick = Max(new_tick, 0);
	if ((uint64) new_tick > idgen_field_max(cur->ts.bits))
		return false;
	old_node = state.node_id >= 0 ? (uint64) state.node_id :
		idgen_field_max(old.node.bits);
	old_node = Min(old_node, idgen_field_max(old.node.bits));
	/* the smallest node id this server can use: timeline bits 0 */
	new_node = idgen_node_id >= 0 ?
		(uint64) idgen_node_id << idgen_node_timeline_bits : 0;

	old_max = idgen_compose(&old, old_tick, old_node,
							idgen_field_max(old.seq.bits));
	new_min = idgen_compose(cur, new_tick, new_node, 0);
	return new_min > old_max;
}

/*
 * After a restore, a server with a fixed node id refuses snowflake IDs
 * until a superuser calls snowflake_resume: its original may have issued
 * IDs above the restored reservation, under the same node id.  The refusal
 * is kept in the state file, so a restart does not lift it.  With
 * idgen.node_id = 'auto' the registry protects the IDs instead
 * (snowflake_lease.c): every start leases under a new name.
 */
static void
refuse_after_restore(void)
{
	bool		restore = idgen_start_is_restore();

	if (idgen_node_id == IDGEN_NODE_AUTO)
		return;
	if (!restore && !(state_valid && (state.flags & IDGEN_BLOCK_RESTORED)))
		return;
	idgen_snowflake_block_restored();
	if (restore)
		ereport(LOG,
				(errmsg("idgen: snowflake IDs are refused: this server is started from a backup, for archive recovery or from a standby's data directory without promotion, with node id %d",
						idgen_node_id),
				 errdetail("The server it was copied from may have issued IDs above the restored high-water mark."),
				 errhint("Once recovery has ended, have a superuser run SELECT idgen.snowflake_resume(N) with N the largest snowflake ID the original server issued (or any larger ID); snowflake_advance does not lift this refusal. Two copies resumed from one backup still repeat each other's IDs unless they are given different node ids.")));
}

/*
 * A random key, new for each start: the server's name in a node registry
 * ends with it (snowflake_lease.c), so no caller of the registry can guess
 * it, and a copy of this data directory never leases under this start's name.
 */
static uint64
new_instance_key(void)
{
	uint64		key;

	if (!pg_strong_random(&key, sizeof(key)))
		key = (uint64) GetCurrentTimestamp() ^ ((uint64) MyProcPid << 32);
	return key;
}

/*
 * Postmaster, while shared memory is created (start, crash restart): read
 * the state file, start the generator above its reservation, and refuse
 * snowflake IDs when the layout or node id changed so that new IDs could be
 * smaller than old ones, or after a restore (refuse_after_restore).
 * Without a file, make one.
 */
void
idgen_snowflake_state_load(void)
{
	bool		same_layout;

	idgen_snowflake_set_instance_key(new_instance_key());
	if (!read_state())
	{
		memset(&state, 0, sizeof(state));
		refuse_after_restore();
		write_state(-1);
		return;
	}
	refuse_after_restore();
	if ((state.flags & IDGEN_BLOCK_TIMELINE) && idgen_node_id >= 0)
		idgen_snowflake_block_timeline();
	if ((idgen_snowflake_blocked_why() & IDGEN_BLOCK_RESTORED) &&
		!(state.flags & IDGEN_BLOCK_RESTORED))
		write_state(state.reserved_until_us);
	if (state.reserved_until_us < 0)
		return;

	idgen_snowflake_raise_floor(idgen_tick_of(&idgen_layout,
											  state.reserved_until_us));
	idgen_snowflake_set_file_reservation(state.reserved_until_us);

	{
		StoredLayout cur;

		store_layout(&idgen_layout, &cur);
		same_layout = memcmp(&cur, &state.layout, sizeof(cur)) == 0;
	}
	if (same_layout && state.node_id == idgen_node_id)
		return;
	if (new_ids_provably_larger())
	{
		ereport(LOG,
				(errmsg("idgen: idgen.layout or idgen.node_id changed since IDs were last issued (layout \"%s\", node id %d before)",
						state.layout_spec, state.node_id),
				 errdetail("Every new ID is larger than every ID issued before, so snowflake IDs are issued as usual.")));
		return;
	}
	idgen_snowflake_block(state.layout_spec, state.node_id);
	ereport(LOG,
			(errmsg("idgen: snowflake IDs are refused: idgen.layout or idgen.node_id changed from layout \"%s\", node id %d, to layout \"%s\", node id %d",
					state.layout_spec, state.node_id,
					idgen_layout_spec ? idgen_layout_spec : "idgen", idgen_node_id),
			 errdetail("IDs made now could be smaller than IDs issued before."),
			 errhint("Restore the old settings, or have a superuser run SELECT idgen.snowflake_accept_layout();")));
}

/*
 * The stored reservation in Unix microseconds, or -1 if there is none.  No
 * row lock: only this worker writes the row, and a lock would cost a WAL
 * record and a flush on every round.
 */
static int64
read_reservation(void)
{
	bool		isnull;
	Datum		d;
	int			ret;

	ret = SPI_execute("SELECT max(reserved_until) FROM idgen.snowflake_reservation",
					  true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen.snowflake_reservation");
	if (SPI_processed == 0)
		return -1;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return -1;
	return DatumGetTimestampTz(d) + UNIX_TO_PG_US;
}

/* Store a new reservation (Unix microseconds) in the table */
static void
write_reservation(int64 until_us)
{
	Oid			argtypes[1] = {TIMESTAMPTZOID};
	Datum		args[1] = {TimestampTzGetDatum(until_us - UNIX_TO_PG_US)};
	int			ret;

	ret = SPI_execute_with_args("INSERT INTO idgen.snowflake_reservation AS r (reserved_until) VALUES ($1) "
								"ON CONFLICT (only_row) DO UPDATE SET reserved_until = greatest(r.reserved_until, excluded.reserved_until)",
								1, argtypes, args, NULL, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not write idgen.snowflake_reservation");
}

/* End of a reservation written in this transaction, published on commit */
static int64 pending_end = 0;

/*
 * Does the generator need a reservation round now, before the one its last
 * round asked for (see worker.c)?  Yes when no reservation is published, a
 * layout change waits for a decision, a call waits for a tick, or the
 * generator is within half the margin of the reservation's end (where calls
 * also wake the worker).
 */
bool
idgen_snowflake_state_wanted(void)
{
	int64		end = idgen_snowflake_reserved_end();

	return end == 0 ||
		idgen_snowflake_blocked() ||
		idgen_snowflake_wanted_tick() >= end ||
		idgen_snowflake_top_tick() + idgen_snowflake_ask_ticks() >= end;
}

/*
 * Once a day, while less than idgen.layout_end_warning is left before the
 * layout runs out, say so (the idgen worker, each reservation round)
 */
static void
warn_layout_end(void)
{
	static int64 warned_ms = -1;	/* monotonic ms of the last warning */
	int64		end_us = idgen_snowflake_layout_end_us();
	int64		left_us = end_us - idgen_clock_now_us();
	int64		now_ms = idgen_clock_monotonic_ms();

	if (idgen_layout_end_warning_s <= 0 ||
		left_us >= (int64) idgen_layout_end_warning_s * USECS_PER_SEC)
		return;
	if (warned_ms >= 0 && now_ms - warned_ms < (int64) 86400 * 1000)
		return;
	warned_ms = now_ms;
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 left_us > 0 ?
			 errmsg("idgen: snowflake layout \"%s\" runs out at %s, in " INT64_FORMAT " days",
					idgen_layout.name,
					timestamptz_to_str(end_us - UNIX_TO_PG_US),
					left_us / USECS_PER_DAY) :
			 errmsg("idgen: snowflake layout \"%s\" ran out at %s",
					idgen_layout.name,
					timestamptz_to_str(end_us - UNIX_TO_PG_US)),
			 errdetail("From then on snowflake and gene IDs are refused (SQLSTATE 22008): no ID of the layout is later."),
			 errhint("Move to a layout with a later end before then (docs/durability.md, \"Changing the layout\"); idgen.layout_end_warning sets how early this daily warning starts.")));
}

/*
 * The reservation table of this database, locked for the round: false
 * (with *sleep_ms shortened to look again soon) when the extension is not
 * installed here or the table is locked by someone else
 */
static bool
lock_reservation_table(long *sleep_ms)
{
	Oid			relid = idgen_table_relid("snowflake_reservation");

	if (!OidIsValid(relid))
	{
		/* Extension not installed here (yet): look again soon */
		idgen_snowflake_revoke_reservation();
		idgen_worker_note_problem(IDGEN_WORKER_NO_EXTENSION);
		*sleep_ms = Min(*sleep_ms, 1000);
		return false;
	}
	idgen_worker_note_problem(IDGEN_WORKER_OK);

	/* Never wait for a lock held by someone else: try again soon */
	if (!ConditionalLockRelationOid(relid, RowExclusiveLock))
	{
		*sleep_ms = Min(*sleep_ms, 10);
		return false;
	}
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		*sleep_ms = Min(*sleep_ms, 10);
		return false;
	}
	return true;
}

/*
 * A round on a standby (or in a read-only transaction after a promotion),
 * which found the reservation stored (-1 if none)
 */
static void
standby_round(int64 stored, long *sleep_ms)
{
	/*
	 * A standby keeps what its primary reserved in its own file, so a
	 * promotion after the extension was dropped still starts above it; it
	 * looks often, as the row may go away with the next WAL record.
	 */
	*sleep_ms = Min(*sleep_ms, 100);
	if (stored > idgen_snowflake_file_reservation() &&
		!idgen_snowflake_blocked())
	{
		write_state(stored);
		idgen_snowflake_set_file_reservation(stored);
	}
}

/*
 * A round on the primary, which found the reservation stored (-1 if none):
 * extend it when needed, the file first, and leave the new end in
 * pending_end
 */
static void
extend_reservation(int64 stored)
{
	const IdgenLayout *l = &idgen_layout;
	int64		top,
				now_tick,
				now_us,
				margin,
				until_us;
	static int64 last_top = -1;		/* top tick seen by the previous round */
	static int64 last_active_us = 0;	/* when it last changed */
	static int64 last_written_us = -1;	/* last reservation this worker wrote */

	/*
	 * Extend when less than half the margin is left beyond the newest tick
	 * in use or asked for by a waiting call.  While IDs are being drawn, and
	 * for IDGEN_RESERVE_LINGER_MS after the last one, the wall clock counts
	 * as in use too, so a steady trickle of calls never waits.  A server
	 * that stays idle longer stops writing (no WAL, no flushes); its next
	 * call waits for one commit of the worker.  A row that went backwards
	 * (emptied by a superuser) is written again at once.
	 */
	now_us = idgen_clock_now_us();
	now_tick = idgen_tick_of(l, now_us);
	top = Max(idgen_snowflake_top_tick(), idgen_snowflake_wanted_tick());
	if (top != last_top)
	{
		last_top = top;
		last_active_us = now_us;
	}
	if (now_us - last_active_us < (int64) IDGEN_RESERVE_LINGER_MS * 1000 ||
		idgen_snowflake_reserved_end() == 0)
		top = Max(top, now_tick);
	margin = Max((int64) IDGEN_RESERVE_AHEAD_MS * 1000 / l->unit_us, 2);
	if (stored >= 0 && stored >= last_written_us &&
		idgen_snowflake_reserved_end() > 0 &&
		!idgen_snowflake_blocked() &&
		top + margin / 2 < idgen_snowflake_reserved_end())
		return;
	top = Max(top, now_tick);
	until_us = idgen_tick_start(l, top + margin);
	until_us = Max(until_us, last_written_us);

	/* The file first: it alone survives DROP EXTENSION */
	write_state(until_us);
	idgen_snowflake_set_file_reservation(until_us);
	if (idgen_snowflake_blocked())
		idgen_snowflake_unblock();
	write_reservation(until_us);
	last_written_us = until_us;
	pending_end = idgen_tick_of(l, until_us) + 1;
}

/*
 * The worker has seen this server in recovery and then promoted: with
 * node ids that follow the timeline, a WARNING when no WAL archive told the
 * promotion which timelines were taken (restore_command empty).  Two
 * standbys of one primary promoted that way both take the next timeline,
 * so the same node id; with restore_command reading one archive that every
 * node archives to, PostgreSQL gives each promotion a timeline of its own
 * (test/t/119_promotions.pl).  Once per promotion this process sees.
 */
static void
warn_promoted_without_archive(void)
{
	const char *restore = GetConfigOption("restore_command", true, false);
	TimeLineID	tli = GetWALInsertionTimeLine();
	int			node;

	if (idgen_node_timeline_bits == 0 || idgen_node_id < 0 ||
		(restore != NULL && restore[0] != '\0'))
		return;
	node = idgen_fixed_node();
	ereport(WARNING,
			(errmsg("idgen: this server was promoted to timeline %u without a WAL archive, and its snowflake IDs carry node id %d",
					tli, node),
			 errdetail("restore_command is empty, so the promotion could not see the timelines other servers of this history took: another standby of the same primary promoted the same way also takes timeline %u and node id %d, and the two may hand out the same IDs.",
					   tli, node),
			 errhint("Archive WAL from every node to one archive and set restore_command on every standby, or make sure only one standby is ever promoted (a failover manager's leader lock), or use idgen.node_id = 'auto'.")));
}

/*
 * Before this server's first reservation on a timeline, with node ids that
 * follow the timeline: is its node id one an earlier timeline of this
 * history had?  With idgen.node_timeline_bits = k, timeline tli > 2^k has
 * the low bits of timeline tli - 2^k, an ancestor or a timeline another
 * server was promoted onto, whose server may have issued IDs in WAL this
 * server never replayed, and how far past the replayed reservation it went
 * nothing here can know (the lag at that failover).  So refuse snowflake IDs
 * until a superuser vouches for the earlier servers' last ID
 * (snowflake_resume), as after a restore: the refusal is kept in the state
 * file, and the timeline checked in a file of its own (restore.h), so that
 * a restart refuses again until the resume and not after it.  No ID goes
 * out on the new timeline first: callers wait for this worker's first
 * reservation there.
 */
static void
refuse_timeline_wrap(void)
{
	static TimeLineID checked = 0;
	TimeLineID	tli;

	if (idgen_node_timeline_bits <= 0 || idgen_node_id < 0)
		return;
	tli = GetWALInsertionTimeLine();
	if (tli == checked)
		return;
	if (idgen_timeline_wraps(IDGEN_WRAP_SNOWFLAKE, tli))
	{
		/* the log has it before any caller can see the refusal */
		ereport(WARNING,
				(errmsg("idgen: snowflake IDs are refused: this server was promoted onto timeline %u, whose low %d bits (idgen.node_timeline_bits) timeline %u of its history had",
						tli, idgen_node_timeline_bits,
						tli - ((TimeLineID) 1 << idgen_node_timeline_bits)),
				 errdetail("Its snowflake IDs carry node id %d, as that timeline's did, and the server of that timeline may have issued IDs in WAL this server never replayed.",
						   idgen_fixed_node()),
				 errhint("Once no server of an earlier timeline issues IDs, have a superuser run SELECT idgen.snowflake_resume(N), with N the largest snowflake ID they issued (or any larger ID); or raise idgen.node_timeline_bits so that 2^bits is above the timeline, and restart.")));
		idgen_snowflake_block_timeline();
		write_state(idgen_snowflake_file_reservation());
	}
	idgen_timeline_wrap_checked(IDGEN_WRAP_SNOWFLAKE, tli);
	checked = tli;
}

/*
 * One step of the worker: read the reservation, raise the floor, extend it
 * when needed.  The new end is published by idgen_snowflake_state_publish after
 * the caller has committed.
 */
void
idgen_snowflake_state_step(long *sleep_ms)
{
	int64		stored;
	bool		primary;
	static bool in_recovery_seen = false;

	warn_layout_end();

	/*
	 * A transaction begun during recovery stays read-only after a promotion,
	 * and the write in it would fail: treat such a round as one on a standby
	 * and run the next one soon.
	 */
	primary = !RecoveryInProgress() && !XactReadOnly;
	if (!primary && !RecoveryInProgress())
		*sleep_ms = Min(*sleep_ms, 10);
	if (RecoveryInProgress())
		in_recovery_seen = true;
	else if (primary && in_recovery_seen)
	{
		in_recovery_seen = false;
		warn_promoted_without_archive();
	}

	pending_end = 0;
	if (primary)
		refuse_timeline_wrap();

	/* A layout change is waiting for a superuser's decision */
	if (idgen_snowflake_blocked())
	{
		if (!idgen_snowflake_accept_pending() || !primary)
		{
			*sleep_ms = Min(*sleep_ms, 1000);
			return;
		}
	}

	if (!lock_reservation_table(sleep_ms))
		return;

	/*
	 * Until this server has published a reservation of its own (start,
	 * restart, or a standby before promotion), the stored one bounds every ID
	 * issued before: start above it.  Afterwards only this worker writes it.
	 */
	stored = read_reservation();
	if (stored >= 0 && idgen_snowflake_reserved_end() == 0)
		idgen_snowflake_raise_floor(idgen_tick_of(&idgen_layout, stored));
	if (!primary)
		standby_round(stored, sleep_ms);
	else
		extend_reservation(stored);
}

/* After the commit: let callers use what was reserved */
void
idgen_snowflake_state_publish(void)
{
	if (pending_end > 0)
		idgen_snowflake_publish_reservation(pending_end);
	pending_end = 0;
}
