/*
 * compat.h
 *		Every difference between the PostgreSQL major versions idgen builds
 *		against (15, 17, 18 and 19), keyed on PG_VERSION_NUM.  16 is built
 *		nowhere here (it is in no Debian release): the switches at 160000
 *		are where 16 changed the API, their two sides compiled on 15 and on
 *		17 and later, never on 16 itself.
 *
 * As Citus's pg_version_compat.h does: code elsewhere uses the newest
 * version's names, and this header supplies them on older versions; where a
 * function's arguments changed, code calls a name_compat() that is right on
 * each.  Dropping a version later is deleting its block here.  Included by
 * idgen.h, after postgres.h.
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#include "postgres.h"

#include "utils/wait_event.h"

/* 16 moved the varlena macros (VARDATA_ANY, VARSIZE_ANY_EXHDR) to varatt.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 17 numbers processes with ProcNumber: GetNumberFromPGProc() and
 * INVALID_PROC_NUMBER replace PGPROC.pgprocno and INVALID_PGPROCNO.
 * GetPGProcByNumber() is the same on every version.
 */
#if PG_VERSION_NUM < 170000
#define INVALID_PROC_NUMBER INVALID_PGPROCNO
#define GetNumberFromPGProc(proc) ((proc)->pgprocno)
#endif

/*
 * 18 marks functions that do not return with pg_noreturn before the
 * declaration; pg_attribute_noreturn() after it is gone.
 */
#if PG_VERSION_NUM < 180000
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 18 added RelationGetPrimaryKeyIndex(rel, deferrable_ok); false is what
 * the one-argument form did before (no index for a deferrable key).
 */
#if PG_VERSION_NUM >= 180000
#define RelationGetPrimaryKeyIndex_compat(rel) RelationGetPrimaryKeyIndex((rel), false)
#else
#define RelationGetPrimaryKeyIndex_compat(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/*
 * Wait events.  17 lets an extension name its own (WaitEventExtensionNew),
 * shown in pg_stat_activity.wait_event with wait_event_type "Extension";
 * before 17 every extension wait shows as just "Extension".
 * idgen_wait_event() returns the event for one kind of wait; the names are
 * registered lazily, at a process's first wait of that kind.
 */
typedef enum IdgenWait
{
	IDGEN_WAIT_CLOCK,			/* "IdgenClock": the clock to reach a tick */
	IDGEN_WAIT_RESERVATION,		/* "IdgenReservation": the worker's reservation
								 * or node-id lease, and the worker's own sleep */
	IDGEN_WAIT_SEGMENT,			/* "IdgenSegment": a segment to be loaded */
	IDGEN_WAIT_STANDBY,			/* "IdgenStandbyFlush": the worker, for the
								 * standbys to flush a segment allocation */
	IDGEN_WAIT_KINDS
} IdgenWait;

static inline uint32
idgen_wait_event(IdgenWait kind)
{
#if PG_VERSION_NUM >= 170000
	static const char *const names[IDGEN_WAIT_KINDS] = {
		"IdgenClock", "IdgenReservation", "IdgenSegment", "IdgenStandbyFlush"
	};
	static uint32 events[IDGEN_WAIT_KINDS];

	/* Looked up (or made) by name in shared memory once per process */
	if (events[kind] == 0)
		events[kind] = WaitEventExtensionNew(names[kind]);
	return events[kind];
#else
	return PG_WAIT_EXTENSION;
#endif
}

/* Ownership of a database: object_ownercheck since 16 */
#if PG_VERSION_NUM >= 160000
#define idgen_database_ownercheck(dbid, roleid) \
	object_ownercheck(DatabaseRelationId, (dbid), (roleid))
#else
#define idgen_database_ownercheck(dbid, roleid) \
	pg_database_ownercheck((dbid), (roleid))
#endif

/*
 * 19 declares get_database_oid() in catalog/pg_database.h; before, it was in
 * commands/dbcommands.h, which callers include on every version.
 */
#if PG_VERSION_NUM >= 190000
#include "catalog/pg_database.h"
#endif

/*
 * 19's ShmemInitHash() takes one size, the number of entries (a hash table
 * in shared memory never grows); before, an initial and a maximum size.
 * idgen's tables are made at their full size, so the two are the same.
 */
#if PG_VERSION_NUM >= 190000
#define ShmemInitHash_compat(name, init_size, max_size, infoP, hash_flags) \
	ShmemInitHash((name), (max_size), (infoP), (hash_flags))
#else
#define ShmemInitHash_compat(name, init_size, max_size, infoP, hash_flags) \
	ShmemInitHash((name), (init_size), (max_size), (infoP), (hash_flags))
#endif

#endif							/* IDGEN_COMPAT_H */
