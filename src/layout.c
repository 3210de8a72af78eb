/*
 * layout.c
 *		Layout presets, the custom spec parser, and compose/decompose.
 *
 * Pure C (see layout.h).  No state: every function reads only its arguments
 * and the constant preset table.
 */
#include "layout.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS	INT64_C(1000)
#define SEC	INT64_C(1000000)

#define F(n, b, s)		{.name = n, .bits = b, .shift = s}
#define C(n, b, s, v, ok)	{.name = n, .bits = b, .shift = s, .value = v, .allowed = ok}

/*
 * The presets.  Field order, widths, epoch and unit come from each system's
 * own documentation or source, cited beside it.  Shifts are bit positions of
 * each field's lowest bit.
 */
static const IdgenLayout presets[] = {
	/*
	 * idgen's default: Twitter's proven 41/10/12 split with a recent epoch,
	 * 2024-01-01T00:00:00Z, good until 2093; 1,024 nodes, 4,096 IDs per ms.
	 */
	{.name = "idgen", .ts = F("ts", 41, 22), .node = F("node", 10, 12),
		.seq = F("seq", 12, 0), .unit_us = MS,
	.epoch_us = INT64_C(1704067200000) * MS},

	/*
	 * Twitter Snowflake (twitter-archive/snowflake, IdWorker.scala): twepoch
	 * 1288834974657 ms, 41-bit ms timestamp, 5-bit datacenter, 5-bit worker,
	 * 12-bit sequence.
	 */
	{.name = "twitter", .ts = F("ts", 41, 22), .node = F("node", 10, 12),
		.seq = F("seq", 12, 0), .unit_us = MS,
		.epoch_us = INT64_C(1288834974657) * MS,
	.nparts = 2, .parts = {F("datacenter", 5, 5), F("worker", 5, 0)}},

	/*
	 * Discord (discord.com/developers/docs/reference, "Snowflakes"): 42-bit ms
	 * timestamp since 2015-01-01T00:00:00Z (1420070400000), 5-bit internal
	 * worker id, 5-bit internal process id, 12-bit increment.
	 */
	{.name = "discord", .ts = F("ts", 42, 22), .node = F("node", 10, 12),
		.seq = F("seq", 12, 0), .unit_us = MS,
		.epoch_us = INT64_C(1420070400000) * MS,
	.nparts = 2, .parts = {F("worker", 5, 5), F("process", 5, 0)}},

	/*
	 * Sonyflake (github.com/sony/sonyflake, README): 39 bits of time in units
	 * of 10 ms since 2014-09-01T00:00:00Z, then 8 bits of sequence, then 16
	 * bits of machine id -- the sequence sits above the machine id.
	 */
	{.name = "sonyflake", .ts = F("ts", 39, 24), .node = F("node", 16, 0),
		.seq = F("seq", 8, 16), .unit_us = 10 * MS,
	.epoch_us = INT64_C(1409529600000) * MS},

	/*
	 * Vesta (github.com/robertleepeak/vesta-id-generator, IdMeta and
	 * IdConverterImpl): from the low bit, 10-bit machine, sequence, time,
	 * 2-bit generation method, 1-bit type, 1-bit version.  Type 0, "max
	 * peak": 20-bit sequence and 30-bit time in seconds.  The epoch is
	 * TimeUtils.EPOCH = 1420041600000 ms (2015-01-01T00:00:00+08:00).
	 *
	 * Values the constant fields can hold (Vesta's Id bean): method 0
	 * (embedded), 1 (central server) or 2 (REST), 3 being "reserved, unused";
	 * type 0 here and 1 in vesta_min_granularity, as each preset has the
	 * time and sequence widths of one type only, so an ID of the other type
	 * is not one of its IDs; version 0, as Vesta's version 1 ("extension in
	 * progress") sets bit 63 and makes the ID a negative bigint.  id_make
	 * writes the first of each (value); id_decode refuses IDs whose fields
	 * hold a value outside these sets (allowed, a bit per value).
	 * t/082_vesta.pl checks both presets bit for bit against Vesta's own
	 * IdConverterImpl and IdServiceImpl when VESTA_SRC names a checkout.
	 */
	{.name = "vesta_max_peak", .ts = F("ts", 30, 30), .node = F("node", 10, 0),
		.seq = F("seq", 20, 10), .unit_us = SEC,
		.epoch_us = INT64_C(1420041600000) * MS,
		.nconsts = 3,
	.consts = {C("method", 2, 60, 0, 0x7), C("type", 1, 62, 0, 0x1),
	C("version", 1, 63, 0, 0x1)}},

	/* Vesta type 1, "min granularity": 10-bit sequence, 40-bit time in ms */
	{.name = "vesta_min_granularity", .ts = F("ts", 40, 20),
		.node = F("node", 10, 0), .seq = F("seq", 10, 10), .unit_us = MS,
		.epoch_us = INT64_C(1420041600000) * MS,
		.nconsts = 3,
	.consts = {C("method", 2, 60, 0, 0x7), C("type", 1, 62, 1, 0x2),
	C("version", 1, 63, 0, 0x1)}},

	/*
	 * Baidu UidGenerator (github.com/baidu/uid-generator, README and
	 * DefaultUidGenerator): sign bit, 28-bit delta seconds since epochStr
	 * "2016-05-20", 22-bit worker id, 13-bit sequence.  The epoch is the
	 * default epochSeconds, 1463673600000 ms: 2016-05-20T00:00:00+08:00, as
	 * the Java code parses "yyyy-MM-dd" in the JVM's (China's) zone; its
	 * javadoc's end of life "2024-11-20 21:24:16" is that epoch + 2^28 s in
	 * +08:00 too.
	 */
	{.name = "uid_generator", .ts = F("ts", 28, 35), .node = F("node", 22, 13),
		.seq = F("seq", 13, 0), .unit_us = SEC,
	.epoch_us = INT64_C(1463673600000) * MS},

	/*
	 * CosId's SafeJavaScriptSnowflakeId.ofMillisecond (github.com/Ahoo-Wang/
	 * CosId, cosid-core, SafeJavaScriptSnowflakeId and MillisecondSnowflakeId):
	 * 53 bits, so every ID is at most 2^53 - 1 and survives a JavaScript
	 * number (a double).  41-bit ms timestamp since CosId.COSID_EPOCH
	 * 1577203200000 (2019-12-24T16:00:00Z), 3-bit machine (10 - 7), 9-bit
	 * sequence (12 - 3).
	 */
	{.name = "cosid_safe_js_ms", .ts = F("ts", 41, 12), .node = F("node", 3, 9),
		.seq = F("seq", 9, 0), .unit_us = MS,
	.epoch_us = INT64_C(1577203200000) * MS},

	/*
	 * CosId's SafeJavaScriptSnowflakeId.ofSecond (SecondSnowflakeId): 31-bit
	 * timestamp in seconds since COSID_EPOCH_SECOND 1577203200, 3-bit machine
	 * (10 - 7), 19-bit sequence (22 - 3); 53 bits in all.
	 */
	{.name = "cosid_safe_js_s", .ts = F("ts", 31, 22), .node = F("node", 3, 19),
		.seq = F("seq", 19, 0), .unit_us = SEC,
	.epoch_us = INT64_C(1577203200000) * MS},

	/*
	 * pgEdge's snowflake extension (github.com/pgEdge/snowflake, snowflake.c):
	 * SNOWFLAKE_MSEC_SHIFT 22 with a 41-bit mask, SNOWFLAKE_NODE_SHIFT 12 with
	 * a 10-bit mask, SNOWFLAKE_COUNT_SHIFT 0 with a 12-bit mask; the time is
	 * (tv_sec - SNOWFLAKE_EPOCH_OFFSET) * 1000 + tv_nsec / 1000000 of
	 * CLOCK_REALTIME, SNOWFLAKE_EPOCH_OFFSET = 1672531200 s
	 * (2023-01-01T00:00:00Z).  The same split as idgen's default, a year
	 * earlier: continuing pgEdge's IDs needs this epoch.
	 */
	{.name = "pgedge", .ts = F("ts", 41, 22), .node = F("node", 10, 12),
		.seq = F("seq", 12, 0), .unit_us = MS,
	.epoch_us = INT64_C(1672531200000) * MS},

	/*
	 * Sonyflake v2 (github.com/sony/sonyflake, v2/sonyflake.go) with New's
	 * defaults: defaultBitsSequence 8, defaultBitsMachine 16, bitsTime 63 - 8
	 * - 16 = 39, defaultTimeUnit 10 ms, StartTime 2025-01-01T00:00:00Z; toID
	 * puts time << (8 + 16) | sequence << 16 | machine, as v1 does.
	 */
	{.name = "sonyflake_v2", .ts = F("ts", 39, 24), .node = F("node", 16, 0),
		.seq = F("seq", 8, 16), .unit_us = 10 * MS,
	.epoch_us = INT64_C(1735689600000) * MS},
};

const char *const idgen_layout_preset_names[] = {
	"idgen", "twitter", "discord", "sonyflake", "vesta_max_peak",
	"vesta_min_granularity", "uid_generator", "cosid_safe_js_ms",
	"cosid_safe_js_s", "pgedge", "sonyflake_v2", NULL
};

/* A preset by name, or NULL */
const IdgenLayout *
idgen_layout_preset(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm) */
int64_t
idgen_days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Read exactly n digits; false if they are not all there */
static bool
read_digits(const char **p, int n, int *out)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) (*p)[i]))
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* Days in month m (1 to 12) of year y, proleptic Gregorian */
static int
days_in_month(int y, int m)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/*
 * Parse an epoch: "YYYY-MM-DD", optionally "THH:MM:SS[.fff]" (or a space
 * for the T) and "Z", in UTC; or a bare integer of Unix milliseconds.  Sets
 * *us.  On failure writes a message quoting s to err and sets *why: a date
 * or time that does not exist (2024-02-31, 2023-02-29, month 13, day 0,
 * hour 24, minute or second 60) is IDGEN_LAYOUT_BAD_DATETIME, anything else
 * IDGEN_LAYOUT_INVALID.  UTC offsets such as +08:00 are not accepted.
 */
static bool
parse_epoch(const char *s, int64_t *us, char *err, size_t errlen,
			IdgenLayoutError *why)
{
	const char *p = s;
	int			y,
				mo,
				d,
				h = 0,
				mi = 0,
				se = 0,
				ms = 0;

	if (s[0] != '\0' && strspn(s, "0123456789") == strlen(s))
	{
		long long	v;

		errno = 0;
		v = strtoll(s, NULL, 10);
		if (errno != 0 || v > IDGEN_MAX_UNIX_US / MS)
			goto syntax;
		*us = (int64_t) v * MS;
		return true;
	}
	if (!read_digits(&p, 4, &y) || *p++ != '-' || !read_digits(&p, 2, &mo) ||
		*p++ != '-' || !read_digits(&p, 2, &d))
		goto syntax;
	if (*p == 'T' || *p == ' ')
	{
		p++;
		if (!read_digits(&p, 2, &h) || *p++ != ':' || !read_digits(&p, 2, &mi) ||
			*p++ != ':' || !read_digits(&p, 2, &se))
			goto syntax;
		if (*p == '.')
		{
			p++;
			if (!read_digits(&p, 3, &ms))
				goto syntax;
		}
	}
	if (*p == 'Z')
		p++;
	if (*p != '\0')
		goto syntax;

	/* well-formed: now the date and the time must exist */
	if (mo < 1 || mo > 12)
		snprintf(err, errlen, "layout epoch \"%.40s\" names month %02d, but months run from 01 to 12",
				 s, mo);
	else if (d < 1 || d > days_in_month(y, mo))
		snprintf(err, errlen, "layout epoch \"%.40s\" names day %02d of %04d-%02d, which has days 01 to %02d",
				 s, d, y, mo, days_in_month(y, mo));
	else if (h > 23)
		snprintf(err, errlen, "layout epoch \"%.40s\" names hour %02d, but hours run from 00 to 23",
				 s, h);
	else if (mi > 59)
		snprintf(err, errlen, "layout epoch \"%.40s\" names minute %02d, but minutes run from 00 to 59",
				 s, mi);
	else if (se > 59)
		snprintf(err, errlen, "layout epoch \"%.40s\" names second %02d, but seconds run from 00 to 59",
				 s, se);
	else
	{
		*us = ((idgen_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000
			   + ms) * MS;
		return true;
	}
	*why = IDGEN_LAYOUT_BAD_DATETIME;
	return false;

syntax:
	*why = IDGEN_LAYOUT_INVALID;
	snprintf(err, errlen, "layout epoch \"%.40s\" is not a date such as 2024-01-01 or Unix milliseconds", s);
	return false;
}

/* Parse a unit such as "1ms", "10ms", "1s", "100us" into microseconds */
static bool
parse_unit(const char *s, int64_t *us)
{
	char	   *end;
	long long	n;
	int64_t		mult;

	if (!isdigit((unsigned char) s[0]))
		return false;
	n = strtoll(s, &end, 10);
	if (strcmp(end, "us") == 0)
		mult = 1;
	else if (strcmp(end, "ms") == 0)
		mult = MS;
	else if (strcmp(end, "s") == 0)
		mult = SEC;
	else
		return false;
	if (n <= 0 || n > INT64_C(86400) * SEC / mult)
		return false;
	*us = (int64_t) n * mult;
	return true;
}

/* What parse_custom has read of a custom spec so far */
typedef struct CustomSpec
{
	IdgenField *order[3];		/* the fields, in the order given */
	int			nfields;
	bool		have_unit;
	bool		have_epoch;
} CustomSpec;

/* One item key=value of a custom spec, into l and cs; see parse_custom */
static bool
parse_custom_item(char *item, IdgenLayout *l, CustomSpec *cs,
				  char *err, size_t errlen, IdgenLayoutError *why)
{
	char	   *eq = strchr(item, '=');
	char	   *key = item,
			   *val;

	while (isspace((unsigned char) *key))
		key++;
	if (eq == NULL)
	{
		snprintf(err, errlen, "layout item \"%.40s\" is not key=value", key);
		return false;
	}
	*eq = '\0';
	val = eq + 1;
	if (strcmp(key, "ts") == 0 || strcmp(key, "node") == 0 ||
		strcmp(key, "seq") == 0)
	{
		IdgenField *f = key[0] == 't' ? &l->ts : key[0] == 'n' ? &l->node : &l->seq;
		char	   *end;
		long		bits = strtol(val, &end, 10);

		if (f->name[0] != '\0')
		{
			snprintf(err, errlen, "layout field \"%s\" is given twice", key);
			return false;
		}
		if (!isdigit((unsigned char) val[0]) || *end != '\0' ||
			bits < 0 || bits > 63)
		{
			snprintf(err, errlen, "layout field \"%s\" needs a width from 0 to 63, not \"%.40s\"", key, val);
			return false;
		}
		strcpy(f->name, key);
		f->bits = (int) bits;
		cs->order[cs->nfields++] = f;
	}
	else if (strcmp(key, "unit") == 0)
	{
		if (cs->have_unit || !parse_unit(val, &l->unit_us))
		{
			snprintf(err, errlen, "layout unit \"%.40s\" is not a duration such as 1ms, 10ms or 1s", val);
			return false;
		}
		cs->have_unit = true;
	}
	else if (strcmp(key, "epoch") == 0)
	{
		if (cs->have_epoch)
		{
			snprintf(err, errlen, "layout key \"epoch\" is given twice");
			return false;
		}
		if (!parse_epoch(val, &l->epoch_us, err, errlen, why))
			return false;
		cs->have_epoch = true;
	}
	else
	{
		snprintf(err, errlen, "unknown layout key \"%.40s\"", key);
		return false;
	}
	return true;
}

/*
 * The custom layout l read into cs is whole and fits a positive bigint:
 * lay its fields out (the first given highest); see parse_custom
 */
static bool
check_custom(IdgenLayout *l, CustomSpec *cs, char *err, size_t errlen)
{
	int			shift = 0;

	if (cs->nfields != 3)
	{
		snprintf(err, errlen, "layout must give ts, node and seq widths");
		return false;
	}
	if (!cs->have_unit || !cs->have_epoch)
	{
		snprintf(err, errlen, "layout must give a unit and an epoch");
		return false;
	}
	if (l->ts.bits < 8 || l->seq.bits < 1)
	{
		snprintf(err, errlen, "layout needs at least 8 timestamp bits and 1 sequence bit");
		return false;
	}
	if (l->ts.bits + l->node.bits + l->seq.bits > 63)
	{
		snprintf(err, errlen, "layout uses %d bits, more than the 63 of a positive bigint",
				 l->ts.bits + l->node.bits + l->seq.bits);
		return false;
	}
	for (int i = cs->nfields - 1; i >= 0; i--)
	{
		cs->order[i]->shift = shift;
		shift += cs->order[i]->bits;
	}
	if (cs->order[0] != &l->ts)
	{
		snprintf(err, errlen, "layout must start with the timestamp, so IDs sort by time");
		return false;
	}
	if (l->epoch_us >= IDGEN_MAX_UNIX_US)
	{
		snprintf(err, errlen, "layout epoch must be before the year 10000");
		return false;
	}
	return true;
}

/* Parse a custom spec; see idgen_layout_parse_why */
static bool
parse_custom(const char *spec, IdgenLayout *l, char *err, size_t errlen,
			 IdgenLayoutError *why)
{
	char		buf[256];
	CustomSpec	cs = {0};
	char	   *item;
	char	   *next;

	if (strlen(spec) >= sizeof(buf))
	{
		snprintf(err, errlen, "layout spec is too long");
		return false;
	}
	strcpy(buf, spec);
	memset(l, 0, sizeof(*l));
	strcpy(l->name, "custom");

	for (item = buf; item != NULL; item = next)
	{
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (!parse_custom_item(item, l, &cs, err, errlen, why))
			return false;
	}
	return check_custom(l, &cs, err, errlen);
}

/*
 * A preset followed by settings of its constant fields, such as
 * "vesta_max_peak,method=1": IDs made under it carry that value, as Vesta's
 * central-server (1) and REST (2) deployments write it.  Only values the
 * preset's system writes are accepted.  *preset is set when spec starts with
 * a preset name and a comma, so the caller knows whether an error was
 * written; the layout keeps the whole spec as its name.
 */
static bool
preset_with_options(const char *spec, IdgenLayout *out, char *err,
					size_t errlen, const IdgenLayout **preset)
{
	char		buf[IDGEN_NAME_LEN];
	const char *comma = strchr(spec, ',');
	const char *item;

	*preset = NULL;
	if (comma == NULL || (size_t) (comma - spec) >= sizeof(buf))
		return false;
	memcpy(buf, spec, comma - spec);
	buf[comma - spec] = '\0';
	*preset = idgen_layout_preset(buf);
	if (*preset == NULL)
		return false;
	if (strlen(spec) >= IDGEN_NAME_LEN)
	{
		snprintf(err, errlen, "layout \"%.60s\" is too long", spec);
		return false;
	}
	*out = **preset;
	for (item = comma + 1; item != NULL;)
	{
		const char *next = strchr(item, ',');
		size_t		n = next ? (size_t) (next - item) : strlen(item);
		const char *eq = memchr(item, '=', n);
		IdgenField *f = NULL;
		int			v;

		if (eq != NULL)
			for (int i = 0; i < out->nconsts; i++)
				if (strlen(out->consts[i].name) == (size_t) (eq - item) &&
					strncmp(out->consts[i].name, item, eq - item) == 0)
					f = &out->consts[i];
		if (f == NULL)
		{
			snprintf(err, errlen, "layout \"%s\" has no setting \"%.*s\"",
					 buf, (int) (eq ? eq - item : (ptrdiff_t) n), item);
			return false;
		}
		if (n - (eq - item) != 2 || !isdigit((unsigned char) eq[1]) ||
			(v = eq[1] - '0') >= 64 || (f->allowed & (UINT64_C(1) << v)) == 0)
		{
			snprintf(err, errlen, "layout \"%s\" cannot have %s \"%.*s\"",
					 buf, f->name, (int) (n - (eq - item) - 1), eq + 1);
			return false;
		}
		f->value = (uint64_t) v;
		item = next ? next + 1 : NULL;
	}
	strcpy(out->name, spec);
	return true;
}

/* Parse a preset name or a custom spec; see layout.h */
bool
idgen_layout_parse(const char *spec, IdgenLayout *out, char *err, size_t errlen)
{
	return idgen_layout_parse_why(spec, out, err, errlen, NULL);
}

/* Parse a preset name or a custom spec, saying why it failed; see layout.h */
bool
idgen_layout_parse_why(const char *spec, IdgenLayout *out, char *err,
					   size_t errlen, IdgenLayoutError *why)
{
	const IdgenLayout *p;
	IdgenLayoutError dummy;

	if (why == NULL)
		why = &dummy;
	*why = IDGEN_LAYOUT_INVALID;

	if (spec == NULL || spec[0] == '\0')
	{
		snprintf(err, errlen, "layout is empty");
		return false;
	}
	p = idgen_layout_preset(spec);
	if (p)
	{
		*out = *p;
		return true;
	}
	if (preset_with_options(spec, out, err, errlen, &p))
		return true;
	if (p != NULL)
		return false;
	if (strchr(spec, '=') == NULL)
	{
		snprintf(err, errlen, "unknown layout \"%.40s\"", spec);
		return false;
	}
	return parse_custom(spec, out, err, errlen, why);
}

/* Value of a field within a word */
uint64_t
idgen_field_get(const IdgenField *f, uint64_t word)
{
	if (f->bits == 0)
		return 0;
	return (word >> f->shift) & idgen_field_max(f->bits);
}

/* Whether id's constant fields hold values the layout allows; see layout.h */
bool
idgen_layout_consts_ok(const IdgenLayout *l, uint64_t id, int *bad)
{
	for (int i = 0; i < l->nconsts; i++)
	{
		uint64_t	v = idgen_field_get(&l->consts[i], id);

		if (v >= 64 || (l->consts[i].allowed & (UINT64_C(1) << v)) == 0)
		{
			if (bad)
				*bad = i;
			return false;
		}
	}
	return true;
}

/* Build an ID from its parts and the layout's constant fields */
uint64_t
idgen_compose(const IdgenLayout *l, int64_t tick, uint64_t node, uint64_t seq)
{
	uint64_t	id = ((uint64_t) tick << l->ts.shift) |
		(node << l->node.shift) | (seq << l->seq.shift);

	for (int i = 0; i < l->nconsts; i++)
		id |= l->consts[i].value << l->consts[i].shift;
	return id;
}

/* Take an ID apart */
void
idgen_decompose(const IdgenLayout *l, uint64_t id, IdgenParts *out)
{
	out->tick = (int64_t) idgen_field_get(&l->ts, id);
	out->node = idgen_field_get(&l->node, id);
	out->seq = idgen_field_get(&l->seq, id);
}

/* Tick containing unix_us (floor division, correct before the epoch too) */
int64_t
idgen_tick_of(const IdgenLayout *l, int64_t unix_us)
{
	int64_t		d = unix_us - l->epoch_us;
	int64_t		q;

	/*
	 * Every snowflake call divides here: for the common units a division by
	 * a constant, which the compiler makes a multiplication
	 */
	switch (l->unit_us)
	{
		case 1000:
			q = d / 1000;
			break;
		case 10000:
			q = d / 10000;
			break;
		case 1000000:
			q = d / 1000000;
			break;
		default:
			q = d / l->unit_us;
			break;
	}
	/* Round towards minus infinity: a time before the epoch */
	if (d < 0 && q * l->unit_us != d)
		q--;
	return q;
}

/* Unix microseconds at the start of a tick */
int64_t
idgen_tick_start(const IdgenLayout *l, int64_t tick)
{
	return l->epoch_us + tick * l->unit_us;
}

/*
 * Largest usable tick: the ID must stay a positive bigint, and the tick must
 * start before the year 10000, so tick arithmetic never overflows and every
 * decoded time is a valid timestamp.
 */
int64_t
idgen_layout_ts_max(const IdgenLayout *l)
{
	uint64_t	m = idgen_field_max(l->ts.bits);
	uint64_t	cap = ((uint64_t) INT64_MAX) >> l->ts.shift;
	int64_t		whole = (IDGEN_MAX_UNIX_US - l->epoch_us) / l->unit_us;

	/*
	 * Ticks that end before the year 10000, less one; tick 0 at least, as the
	 * epoch itself is before it (parse_custom): an epoch within a tick of
	 * the year 10000 must not wrap this around to a huge count
	 */
	uint64_t	years = whole > 1 ? (uint64_t) (whole - 1) : 0;

	if (cap < m)
		m = cap;
	if (years < m)
		m = years;
	return (int64_t) m;
}

/*
 * ID width of a duration of us microseconds; see layout.h.  Every layout
 * idgen parses puts the timestamp above the node and the sequence (custom
 * specs must start with it), so IDGEN_SPAN_NOT_TS_FIRST guards the arithmetic
 * rather than a layout a user can give.  Constant fields above the
 * timestamp (Vesta's version, type and method) hold one value per layout,
 * so the IDs of a time span are still one integer interval.
 */
IdgenSpanResult
idgen_span_width(const IdgenLayout *l, int64_t us, int64_t *width)
{
	int64_t		ticks;

	if (us <= 0)
		return IDGEN_SPAN_NOT_POSITIVE;
	if ((l->node.bits > 0 && l->node.shift > l->ts.shift) ||
		(l->seq.bits > 0 && l->seq.shift > l->ts.shift))
		return IDGEN_SPAN_NOT_TS_FIRST;
	if (us % l->unit_us != 0)
		return IDGEN_SPAN_NOT_WHOLE_TICKS;
	ticks = us / l->unit_us;
	if ((uint64_t) ticks > idgen_field_max(l->ts.bits) ||
		(uint64_t) ticks > (((uint64_t) INT64_MAX) >> l->ts.shift))
		return IDGEN_SPAN_TOO_LONG;
	*width = (int64_t) ((uint64_t) ticks << l->ts.shift);
	return IDGEN_SPAN_OK;
}
