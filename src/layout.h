/*
 * layout.h
 *		Bit layouts of 64-bit IDs: presets, custom specs, compose/decompose.
 *
 * Pure C: no PostgreSQL headers, so the unit tests and fuzzers can use it.
 * A layout is a list of fields from the most to the least significant bit.
 * Three fields always exist: the timestamp (ticks of unit_us microseconds
 * since epoch_us), the node and the sequence.  Constant fields (Vesta's
 * version, type and method bits) and named parts of the node (Discord's
 * worker and process) are described for decoding.  Bit 63 is never used, so
 * every ID is a non-negative bigint.
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDGEN_NAME_LEN 32

/* 10000-01-01T00:00:00Z in Unix microseconds: no layout's ticks go past it */
#define IDGEN_MAX_UNIX_US INT64_C(253402300800000000)
#define IDGEN_MAX_PARTS 4

/* One contiguous bit field of an ID */
typedef struct IdgenField
{
	char		name[IDGEN_NAME_LEN];	/* "worker", "version", ... */
	int			bits;			/* width; 0 when the field is absent */
	int			shift;			/* position of its lowest bit */
	uint64_t	value;			/* for constant fields: the value */
	uint64_t	allowed;		/* for constant fields: bit v set if the
								 * system the layout copies can put value v
								 * there (fields of at most 6 bits) */
} IdgenField;

typedef struct IdgenLayout
{
	char		name[IDGEN_NAME_LEN];	/* preset name, or "custom" */
	IdgenField	ts;				/* timestamp in ticks since the epoch */
	IdgenField	node;			/* node / machine / worker id */
	IdgenField	seq;			/* sequence within a tick */
	int64_t		unit_us;		/* length of one tick, in microseconds */
	int64_t		epoch_us;		/* the epoch, in microseconds since 1970 */
	int			nparts;			/* named sub-fields of node (decode only) */
	IdgenField	parts[IDGEN_MAX_PARTS];	/* shift relative to node.shift */
	int			nconsts;		/* fixed fields (set on make, shown on decode) */
	IdgenField	consts[IDGEN_MAX_PARTS];
} IdgenLayout;

/* Parts of an ID, as id_decode shows them */
typedef struct IdgenParts
{
	int64_t		tick;
	uint64_t	node;
	uint64_t	seq;
} IdgenParts;

/* A preset by name, or NULL */
extern const IdgenLayout *idgen_layout_preset(const char *name);

/* Names of all presets, NULL-terminated */
extern const char *const idgen_layout_preset_names[];

/*
 * Parse a preset name, a preset with settings of its constant fields such
 * as "vesta_max_peak,method=1", or a custom spec such as
 * "ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01" into *out.  On failure
 * returns false and writes a message (lower case, no trailing period) to err.
 */
extern bool idgen_layout_parse(const char *spec, IdgenLayout *out,
							   char *err, size_t errlen);

/* Why idgen_layout_parse_why refused a spec */
typedef enum IdgenLayoutError
{
	IDGEN_LAYOUT_INVALID,		/* bad syntax, or a layout idgen cannot use */
	IDGEN_LAYOUT_BAD_DATETIME	/* an epoch date or time that does not exist,
								 * such as 2024-02-31 or 24:00:00 */
} IdgenLayoutError;

/*
 * idgen_layout_parse, also saying why a spec was refused: *why (when not
 * NULL) is set on failure, so SQL can choose the SQLSTATE.
 */
extern bool idgen_layout_parse_why(const char *spec, IdgenLayout *out,
								   char *err, size_t errlen,
								   IdgenLayoutError *why);

/* Largest value of a field of the given width */
static inline uint64_t
idgen_field_max(int bits)
{
	return bits >= 64 ? UINT64_MAX : (((uint64_t) 1) << bits) - 1;
}

/* Build an ID; the caller has checked each part against its field's max */
extern uint64_t idgen_compose(const IdgenLayout *l, int64_t tick,
							  uint64_t node, uint64_t seq);

/* Take an ID apart */
extern void idgen_decompose(const IdgenLayout *l, uint64_t id, IdgenParts *out);

/* Value of a named part of the node or of a constant field of an ID */
extern uint64_t idgen_field_get(const IdgenField *f, uint64_t word);

/*
 * Whether every constant field of id holds a value the layout's system can
 * put there (Vesta: method 0, 1 or 2, the preset's type, version 0).  On
 * false, *bad (when not NULL) is the index in l->consts of the first field
 * that does not.  Layouts without constant fields accept every ID.
 */
extern bool idgen_layout_consts_ok(const IdgenLayout *l, uint64_t id, int *bad);

/* Days since 1970-01-01 of a proleptic Gregorian date */
extern int64_t idgen_days_from_civil(int64_t y, int m, int d);

/* Largest usable tick (positive bigint IDs, times before the year 10000) */
extern int64_t idgen_layout_ts_max(const IdgenLayout *l);

/* Tick containing the Unix time us (floor; may be negative before the epoch) */
extern int64_t idgen_tick_of(const IdgenLayout *l, int64_t unix_us);

/* Unix time in microseconds at the start of tick */
extern int64_t idgen_tick_start(const IdgenLayout *l, int64_t tick);

/* Why idgen_span_width cannot give a duration's ID width */
typedef enum IdgenSpanResult
{
	IDGEN_SPAN_OK,
	IDGEN_SPAN_NOT_POSITIVE,	/* zero or negative */
	IDGEN_SPAN_NOT_WHOLE_TICKS, /* not a multiple of the layout's unit */
	IDGEN_SPAN_NOT_TS_FIRST,	/* node or sequence above the timestamp: the
								 * IDs of a time span are not one interval */
	IDGEN_SPAN_TOO_LONG			/* more ticks than the timestamp field holds */
} IdgenSpanResult;

/*
 * The ID width of a duration of us microseconds: the IDs made during any
 * span of that length starting on a tick are exactly [f, f + *width), where
 * f is the ID of the span's first tick with node and sequence 0.  Set only
 * on IDGEN_SPAN_OK.
 */
extern IdgenSpanResult idgen_span_width(const IdgenLayout *l, int64_t us,
										int64_t *width);

#endif							/* IDGEN_LAYOUT_H */
