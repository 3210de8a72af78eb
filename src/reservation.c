/*
 * reservation.c
 *		The durable high-water mark of the snowflake generator.
 *
 * The generator may use a tick only once a reservation covering it is
 * durable.  The reservation is the single row of table
 * idgen.snowflake_reservation in idgen.database, which the worker updates
 * with synchronous_commit on.  A table row, rather than a WAL record of our
 * own, because it is WAL-logged and streamed to standbys by PostgreSQL
 * itself, survives checkpoints and crash recovery, is visible after a
 * promotion, needs no custom resource manager on the standby and can be read
 * with SQL.
 *
 * On start, and on every step, the worker reads the row and raises the
 * generator's floor above it; on a primary it then extends the row to
 * IDGEN_RESERVE_AHEAD_MS past the newest tick in use when less than half of
 * that margin is left, commits, and only then publishes the new end.
 *
 * Runs only in the worker, inside the transaction worker.c opened.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "idgen.h"

/* Does the reservation table exist in this database? */
static bool
table_exists(void)
{
	int			ret = SPI_execute("SELECT to_regclass('idgen.snowflake_reservation') IS NOT NULL",
								  true, 1);

	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not look up idgen.snowflake_reservation");
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
									  SPI_tuptable->tupdesc, 1, &(bool) {0}));
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

	ret = SPI_execute("SELECT reserved_until FROM idgen.snowflake_reservation",
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

/* Store a new reservation (Unix microseconds) */
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
 * One step of the worker: read the reservation, raise the floor, extend it
 * when needed.  The new end is published by idgen_reservation_publish after
 * the caller has committed.
 */
void
idgen_reservation_step(long *sleep_ms)
{
	const IdgenLayout *l = &idgen_layout;
	int64		stored;
	int64		top,
				now_tick,
				now_us,
				margin;
	static int64 last_top = -1;		/* top tick seen by the previous round */
	static int64 last_active_us = 0;	/* when it last changed */
	bool		primary;

	/*
	 * A transaction begun during recovery stays read-only after a promotion,
	 * and the write in it would fail: treat such a round as one on a standby
	 * and run the next one soon.
	 */
	primary = !RecoveryInProgress() && !XactReadOnly;
	if (!primary && !RecoveryInProgress())
		*sleep_ms = Min(*sleep_ms, 10);

	pending_end = 0;
	if (!table_exists())
	{
		/* Extension not installed here (yet): look again soon */
		idgen_snowflake_revoke_reservation();
		*sleep_ms = Min(*sleep_ms, 1000);
		return;
	}

	/*
	 * Until this server has published a reservation of its own (start,
	 * restart, or a standby before promotion), the stored one bounds every ID
	 * issued before: start above it.  Afterwards only this worker writes it.
	 */
	stored = read_reservation();
	if (stored >= 0 && idgen_snowflake_reserved_end() == 0)
		idgen_snowflake_raise_floor(idgen_tick_of(l, stored));
	if (!primary)
		return;

	/*
	 * Extend when less than half the margin is left beyond the newest tick
	 * in use or asked for by a waiting call.  While IDs are being drawn, and
	 * for IDGEN_RESERVE_LINGER_MS after the last one, the wall clock counts
	 * as in use too, so a steady trickle of calls never waits.  A server
	 * that stays idle longer stops writing (no WAL, no flushes); its next
	 * call waits for one commit of the worker.
	 */
	now_us = idgen_now_us();
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
	if (stored >= 0 && idgen_snowflake_reserved_end() > 0 &&
		top + margin / 2 < idgen_snowflake_reserved_end())
		return;
	top = Max(top, now_tick);

	write_reservation(idgen_tick_start(l, top + margin));
	pending_end = top + margin + 1;
}

/* After the commit: let callers use what was reserved */
void
idgen_reservation_publish(void)
{
	if (pending_end > 0)
		idgen_snowflake_publish_reservation(pending_end);
	pending_end = 0;
}
