/*
 * fuzz_layout.c
 *		libFuzzer target for the layout spec parser (src/layout.c).
 *
 * The input, up to its first NUL, is a preset name or custom spec.  Parsing
 * must not crash; a layout it accepts must be sound: fields that do not
 * overlap and fit the word with the timestamp on top, a positive unit, and
 * compose/decompose and the friendly form as exact inverses on IDs built
 * from the remaining input bytes.
 *
 * Epochs are checked against a calendar computed here, independently of
 * layout.c: an accepted spec's epoch must be a real date and time at the
 * instant it names, and a spec refused as an impossible date or time must
 * have a well-formed epoch that really is impossible.  Every 8 bytes of the
 * input are also an ID under every preset: the constant-field check must
 * accept what idgen_compose builds and agree with Vesta's rules (method 0 to
 * 2, the preset's type, version 0) spelled out here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "layout.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless field f lies within the word and off the bits in *used */
static void
check_field(const IdgenField *f, uint64_t *used)
{
	uint64_t	m;

	if (f->bits < 0 || f->shift < 0 || f->bits + f->shift > 64)
		abort();
	m = idgen_field_max(f->bits) << (f->bits ? f->shift : 0);
	if (*used & m)
		abort();
	*used |= m;
}

/*
 * Match an epoch's shape: "dddd-dd-dd", then optionally "Tdd:dd:dd" (T or a
 * space) with optional ".ddd", then an optional "Z".  On a match sets the
 * numbers (time ones 0 when absent) and returns true.
 */
static bool
epoch_shape(const char *v, int f[7])
{
	static const char *const shapes[] = {
		"dddd-dd-dd", "dddd-dd-ddZ",
		"dddd-dd-ddTdd:dd:dd", "dddd-dd-ddTdd:dd:ddZ",
		"dddd-dd-ddTdd:dd:dd.ddd", "dddd-dd-ddTdd:dd:dd.dddZ",
	};
	/* start and length of year, month, day, hour, minute, second, ms */
	static const int pos[7][2] = {{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}, {20, 3}};

	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
	{
		const char *t = shapes[k];
		size_t		n = strlen(t);
		bool		ok = strlen(v) == n;

		for (size_t i = 0; ok && i < n; i++)
		{
			if (t[i] == 'd')
				ok = v[i] >= '0' && v[i] <= '9';
			else if (t[i] == 'T')
				ok = v[i] == 'T' || v[i] == ' ';
			else
				ok = v[i] == t[i];
		}
		if (!ok)
			continue;
		/* date only (10 or 11 characters), with a time (19+), with ms (23+) */
		for (int j = 0; j < 7; j++)
		{
			int			parts = n >= 23 ? 7 : n >= 19 ? 6 : 3;

			f[j] = 0;
			for (int i = 0; j < parts && i < pos[j][1]; i++)
				f[j] = f[j] * 10 + (v[pos[j][0] + i] - '0');
		}
		return true;
	}
	return false;
}

/* Whether y is a Gregorian leap year */
static bool
leap(int y)
{
	return y % 400 == 0 || (y % 4 == 0 && y % 100 != 0);
}

/* Days in a month, by cases rather than a table */
static int
month_days(int y, int m)
{
	if (m == 2)
		return leap(y) ? 29 : 28;
	if (m == 4 || m == 6 || m == 9 || m == 11)
		return 30;
	return 31;
}

/* Whether the fields of epoch_shape name a real date and time */
static bool
real_datetime(const int f[7])
{
	return f[1] >= 1 && f[1] <= 12 && f[2] >= 1 && f[2] <= month_days(f[0], f[1]) &&
		f[3] <= 23 && f[4] <= 59 && f[5] <= 59;
}

/* Unix microseconds of a real date and time, by counting leap years */
static int64_t
unix_us(const int f[7])
{
	int64_t		y = f[0];
	int64_t		days = 365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400;

	for (int m = 1; m < f[1]; m++)
		days += month_days(f[0], m);
	days += f[2] - 1 - INT64_C(719528);	/* 0000-01-01 to 1970-01-01 */
	return (((days * 24 + f[3]) * 60 + f[4]) * 60 + f[5]) * INT64_C(1000000) +
		f[6] * INT64_C(1000);
}

/*
 * The value of the first "epoch" item of spec, split as the parser does
 * (items at commas, key before the first '=', leading blanks skipped), into
 * buf; NULL if there is none
 */
static const char *
first_epoch(const char *spec, char *buf, size_t buflen)
{
	const char *item = spec;

	while (item != NULL)
	{
		const char *end = strchr(item, ',');
		size_t		len = end ? (size_t) (end - item) : strlen(item);
		const char *eq = memchr(item, '=', len);
		const char *key = item;

		while (key < item + len && isspace((unsigned char) *key))
			key++;
		if (eq != NULL && eq - key == 5 && memcmp(key, "epoch", 5) == 0)
		{
			size_t		vlen = len - (size_t) (eq + 1 - item);

			if (vlen >= buflen)
				abort();		/* specs are shorter than the buffer */
			memcpy(buf, eq + 1, vlen);
			buf[vlen] = '\0';
			return buf;
		}
		item = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Check the epoch of a spec against the parser's verdict */
static void
check_epoch(const char *spec, bool accepted, const IdgenLayout *l,
			IdgenLayoutError why, const char *err)
{
	char		buf[512];
	const char *v = first_epoch(spec, buf, sizeof(buf));
	int			f[7];

	if (idgen_layout_preset(spec) != NULL)
		return;
	if (accepted)
	{
		/* an accepted custom spec has one epoch: digits or a real date */
		if (v == NULL)
			abort();
		if (v[0] != '\0' && strspn(v, "0123456789") == strlen(v))
		{
			if (strtoll(v, NULL, 10) * INT64_C(1000) != l->epoch_us)
				abort();
			return;
		}
		if (!epoch_shape(v, f) || !real_datetime(f) || unix_us(f) != l->epoch_us)
			abort();
		return;
	}
	if (why == IDGEN_LAYOUT_BAD_DATETIME)
	{
		char		quoted[64];

		/* refused as impossible: a well-formed epoch that is not real */
		if (v == NULL || !epoch_shape(v, f) || real_datetime(f))
			abort();
		snprintf(quoted, sizeof(quoted), "\"%s\"", v);
		if (strstr(err, quoted) == NULL)
			abort();
	}
	else if (why != IDGEN_LAYOUT_INVALID)
		abort();
	else if (strncmp(err, "layout epoch \"", 14) == 0 &&
			 v != NULL && epoch_shape(v, f))
		abort();				/* a well-formed epoch called malformed */
}

/*
 * Vesta's rules for the constant fields, independently of the preset table:
 * the index of the first field (method, type, version) holding a value
 * Vesta cannot write under the preset, or -1
 */
static int
vesta_bad_field(const char *preset, uint64_t id)
{
	int			type;

	if (strcmp(preset, "vesta_max_peak") == 0)
		type = 0;
	else if (strcmp(preset, "vesta_min_granularity") == 0)
		type = 1;
	else
		return -1;				/* no constant fields */
	if (((id >> 60) & 3) == 3)
		return 0;
	if ((int) ((id >> 62) & 1) != type)
		return 1;
	if ((id >> 63) != 0)
		return 2;
	return -1;
}

/* The constant-field check on IDs from the input, under every preset */
static void
check_consts(const uint8_t *data, size_t size)
{
	for (size_t off = 0; off + 8 <= size; off += 8)
	{
		uint64_t	w;

		memcpy(&w, data + off, 8);
		for (const char *const *name = idgen_layout_preset_names; *name; name++)
		{
			const IdgenLayout *l = idgen_layout_preset(*name);
			int64_t		tick = (int64_t) (w & idgen_field_max(l->ts.bits) & (uint64_t) INT64_MAX);
			uint64_t	id = idgen_compose(l, tick,
										   (w >> 7) & idgen_field_max(l->node.bits),
										   (w >> 3) & idgen_field_max(l->seq.bits));
			int			bad = -1;
			int			want = vesta_bad_field(*name, w);

			/* what compose builds with valid parts always passes */
			if (!idgen_layout_consts_ok(l, id, NULL) || vesta_bad_field(*name, id) != -1)
				abort();
			/* any word: the same verdict, and the same field, as Vesta's rules */
			if (idgen_layout_consts_ok(l, w, &bad) != (want == -1))
				abort();
			if (want != -1 && bad != want)
				abort();
		}
	}
}

/* One input */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		spec[512];
	char		err[256];
	size_t		len = 0;
	IdgenLayout l;
	IdgenLayoutError why = IDGEN_LAYOUT_INVALID;
	bool		accepted;
	uint64_t	used = 0;
	const uint8_t *rest;
	size_t		nrest;

	while (len < size && len < sizeof(spec) - 1 && data[len] != 0)
		len++;
	memcpy(spec, data, len);
	spec[len] = '\0';
	rest = data + len;
	nrest = size - len;

	check_consts(data, size);

	err[0] = '\0';
	accepted = idgen_layout_parse_why(spec, &l, err, sizeof(err), &why);
	check_epoch(spec, accepted, &l, why, err);
	if (!accepted)
	{
		if (err[0] == '\0' || strlen(err) >= sizeof(err))
			abort();
		return 0;
	}

	check_field(&l.ts, &used);
	check_field(&l.node, &used);
	check_field(&l.seq, &used);
	for (int i = 0; i < l.nconsts; i++)
		check_field(&l.consts[i], &used);
	if (l.ts.bits < 1 || l.seq.bits < 1 || l.unit_us <= 0 ||
		l.ts.shift < l.node.shift || l.ts.shift < l.seq.shift)
		abort();
	if (idgen_layout_preset(spec) == NULL &&
		(strcmp(l.name, "custom") != 0 ||
		 l.ts.bits + l.node.bits + l.seq.bits > 63))
		abort();
	if (idgen_tick_of(&l, l.epoch_us) != 0)
		abort();

	/*
	 * The last tick: never negative or wrapped around, a positive bigint,
	 * and it starts before the year 10000 (an epoch within a tick of it
	 * once made it huge)
	 */
	{
		int64_t		tmax = idgen_layout_ts_max(&l);

		if (tmax < 0 || (uint64_t) tmax > idgen_field_max(l.ts.bits) ||
			(uint64_t) tmax > ((uint64_t) INT64_MAX >> l.ts.shift) ||
			idgen_tick_start(&l, tmax) >= IDGEN_MAX_UNIX_US)
			abort();
	}

	/* IDs from the rest of the input */
	while (nrest >= 8)
	{
		uint64_t	w;
		int64_t		tick;
		IdgenParts	p;
		uint64_t	id;
		char		buf[IDGEN_FRIENDLY_MAXLEN + 1];
		IdgenCodecError cerr;

		memcpy(&w, rest, 8);
		rest += 8;
		nrest -= 8;
		tick = (int64_t) (w & idgen_field_max(l.ts.bits) & (uint64_t) INT64_MAX);
		id = idgen_compose(&l, tick, (w >> 7) & idgen_field_max(l.node.bits),
						   (w >> 3) & idgen_field_max(l.seq.bits));
		idgen_decompose(&l, id, &p);
		if (idgen_compose(&l, p.tick, p.node, p.seq) != id)
			abort();
		if (!idgen_layout_consts_ok(&l, id, NULL))
			abort();
		if (idgen_friendly_encode(&l, (int64_t) id, buf, sizeof(buf), &cerr))
		{
			int64_t		back;

			if (!idgen_friendly_decode(&l, buf, strlen(buf), &back, &cerr) ||
				(uint64_t) back != id)
				abort();
		}
	}
	return 0;
}
