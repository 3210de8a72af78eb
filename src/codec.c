/*
 * codec.c
 *		Fixed-width base62 and the friendly "yyyyMMddHHmmssSSS-node-sequence"
 *		form of IDs, with strict decoders.
 *
 * Pure C (see codec.h).  No state: every function reads only its arguments.
 * The decoders never trust their input: lengths are explicit, every byte is
 * checked, and every sum and product that could overflow is checked first.
 */
#include "codec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Digits in ASCII order, so C-collation text order equals numeric order */
static const char base62_digits[] =
"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

#define US_PER_MS	INT64_C(1000)
#define MS_PER_DAY	INT64_C(86400000)

/* Kinds of failure, see IdgenCodecError */
typedef enum
{
	SYNTAX,
	RANGE,
	TIME_RANGE,					/* RANGE, the value a time */
	LAYOUT
} FailKind;

static bool fail(IdgenCodecError *err, FailKind kind, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Fill in an error */
static bool
fail(IdgenCodecError *err, FailKind kind, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return false;
	err->range = kind == RANGE || kind == TIME_RANGE;
	err->time = kind == TIME_RANGE;
	err->layout = kind == LAYOUT;
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return false;
}

/* Value of a base62 digit, or -1 */
static int
base62_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 36;
	return -1;
}

/* Write the 11-character base62 form of a non-negative id */
bool
idgen_base62_encode(int64_t id, char out[IDGEN_BASE62_LEN + 1])
{
	uint64_t	v;

	if (id < 0)
		return false;
	v = (uint64_t) id;
	for (int i = IDGEN_BASE62_LEN - 1; i >= 0; i--)
	{
		out[i] = base62_digits[v % 62];
		v /= 62;
	}
	out[IDGEN_BASE62_LEN] = '\0';
	return true;
}

/*
 * Write CosId's unpadded base62 form of a non-negative id
 * (Radix62IdConverter.INSTANCE): the padded form without its leading zeros,
 * "0" for zero
 */
bool
idgen_base62_encode_unpadded(int64_t id, char out[IDGEN_BASE62_LEN + 1])
{
	int			skip = 0;

	if (!idgen_base62_encode(id, out))
		return false;
	while (skip < IDGEN_BASE62_LEN - 1 && out[skip] == '0')
		skip++;
	memmove(out, out + skip, IDGEN_BASE62_LEN + 1 - skip);
	return true;
}

/* Parse 1 to 11 base62 digits into a non-negative bigint */
bool
idgen_base62_decode(const char *s, size_t len, int64_t *id,
					IdgenCodecError *err)
{
	uint64_t	v = 0;

	if (len < 1 || len > IDGEN_BASE62_LEN)
		return fail(err, SYNTAX,
					"A base62 ID has 1 to %d characters, not %zu.",
					IDGEN_BASE62_LEN, len);
	for (size_t i = 0; i < len; i++)
	{
		int			d = base62_value((unsigned char) s[i]);

		if (d < 0)
			return fail(err, SYNTAX,
						"Character %zu is not a base62 digit (0-9, A-Z, a-z).",
						i + 1);
		if (v > (UINT64_MAX - (uint64_t) d) / 62)
			return fail(err, RANGE,
						"The value is larger than the largest bigint, whose base62 form is \"AzL8n0Y58m7\".");
		v = v * 62 + (uint64_t) d;
	}
	if (v > (uint64_t) INT64_MAX)
		return fail(err, RANGE,
					"The value is larger than the largest bigint, whose base62 form is \"AzL8n0Y58m7\".");
	*id = (int64_t) v;
	return true;
}

/* Proleptic Gregorian date of a day number since 1970-01-01 (Hinnant) */
static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t		era,
				doe,
				yoe,
				doy,
				mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* Days in a month of the proleptic Gregorian calendar */
static int
days_in_month(int64_t y, int m)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return mdays[m - 1];
}

/* Floor division of a by a positive b */
static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if (a % b != 0 && a < 0)
		q--;
	return q;
}

/* Whether the friendly form can show this layout's tick starts exactly */
static bool
friendly_layout_ok(const IdgenLayout *l, IdgenCodecError *err)
{
	if (l->unit_us <= 0 || l->unit_us % US_PER_MS != 0 ||
		l->epoch_us % US_PER_MS != 0)
		return fail(err, LAYOUT,
					"Layout \"%s\" has ticks that do not start on whole milliseconds, which the friendly form cannot show.",
					l->name);
	return true;
}

/* Whether the layout's ticks start on whole seconds: 14 digits of time */
bool
idgen_friendly_seconds(const IdgenLayout *l)
{
	return l->unit_us > 0 && l->unit_us % (1000 * US_PER_MS) == 0 &&
		l->epoch_us % (1000 * US_PER_MS) == 0;
}

/* Write the friendly form of id under layout l, time in UTC */
bool
idgen_friendly_encode(const IdgenLayout *l, int64_t id, char *out,
					  size_t outlen, IdgenCodecError *err)
{
	return idgen_friendly_encode_local(l, id, 0, out, outlen, err);
}

/* Write the friendly form of id, its time offset_us from UTC */
bool
idgen_friendly_encode_local(const IdgenLayout *l, int64_t id, int64_t offset_us,
							char *out, size_t outlen, IdgenCodecError *err)
{
	IdgenParts	p;
	int64_t		us,
				ms,
				days,
				msofday,
				y;
	int			mo,
				d;
	int			n;

	if (!friendly_layout_ok(l, err))
		return false;
	if (id < 0)
		return fail(err, RANGE,
					"ID %" PRId64 " is negative, and no ID of layout \"%s\" is.",
					id, l->name);
	idgen_decompose(l, (uint64_t) id, &p);
	if (idgen_compose(l, p.tick, p.node, p.seq) != (uint64_t) id)
		return fail(err, RANGE,
					"ID %" PRId64 " has bits outside the timestamp, node and sequence of layout \"%s\", which the friendly form would lose.",
					id, l->name);
	if (offset_us % US_PER_MS != 0)
		return fail(err, LAYOUT,
					"The offset from UTC is not a whole number of milliseconds.");

	/*
	 * A tick past the layout's last one (idgen_layout_ts_max) may still start
	 * before the year 10000, but the friendly form of it could not be read
	 * back: write only what idgen_friendly_compose accepts
	 */
	if (p.tick > idgen_layout_ts_max(l))
		return fail(err, TIME_RANGE,
					"The time of ID %" PRId64 " is past the last tick of layout \"%s\".",
					id, l->name);
	if (__builtin_mul_overflow(p.tick, l->unit_us, &us) ||
		__builtin_add_overflow(us, l->epoch_us, &us) ||
		__builtin_add_overflow(us, offset_us, &us))
		return fail(err, TIME_RANGE,
					"The time of ID %" PRId64 " is outside the years 0000 to 9999.", id);
	ms = us / US_PER_MS;		/* exact: both terms are whole milliseconds */
	days = floor_div(ms, MS_PER_DAY);
	msofday = ms - days * MS_PER_DAY;
	civil_from_days(days, &y, &mo, &d);
	if (y < 0 || y > 9999)
		return fail(err, TIME_RANGE,
					"The time of ID %" PRId64 " is outside the years 0000 to 9999.", id);
	if (idgen_friendly_seconds(l))
		n = snprintf(out, outlen, "%04d%02d%02d%02d%02d%02d-%" PRIu64 "-%" PRIu64,
					 (int) y, mo, d,
					 (int) (msofday / 3600000), (int) (msofday / 60000 % 60),
					 (int) (msofday / 1000 % 60), p.node, p.seq);
	else
		n = snprintf(out, outlen, "%04d%02d%02d%02d%02d%02d%03d-%" PRIu64 "-%" PRIu64,
					 (int) y, mo, d,
					 (int) (msofday / 3600000), (int) (msofday / 60000 % 60),
					 (int) (msofday / 1000 % 60), (int) (msofday % 1000),
					 p.node, p.seq);
	if (n < 0 || (size_t) n >= outlen)
		return fail(err, RANGE, "The output buffer is too small.");
	return true;
}

/* Parse n decimal digits at s into an int (n is small) */
static int
digits_value(const char *s, int n)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/*
 * Parse a decimal number (no sign; leading zeros allowed, as CosId's
 * padStart writes them) from s[*pos] up to the next '-' or the end.
 * Returns 0 on success, 1 on bad syntax, 2 when the number does not fit 64
 * bits.
 */
static int
parse_number(const char *s, size_t len, size_t *pos, uint64_t *out)
{
	size_t		i = *pos;
	uint64_t	v = 0;

	if (i >= len || s[i] < '0' || s[i] > '9')
		return 1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
	{
		unsigned	digit = (unsigned) (s[i] - '0');

		if (v > (UINT64_MAX - digit) / 10)
		{
			/* skip the rest of the digits; the caller reports the range */
			while (i < len && s[i] >= '0' && s[i] <= '9')
				i++;
			*pos = i;
			return 2;
		}
		v = v * 10 + digit;
	}
	*pos = i;
	*out = v;
	return 0;
}

#define FRIENDLY_SYNTAX \
	"The friendly form is yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts whose ticks are whole seconds): the time, then the node and the sequence as decimal numbers."

/* Parse the text of a friendly form; see codec.h */
bool
idgen_friendly_parse(const IdgenLayout *l, const char *s, size_t len,
					 IdgenFriendlyText *out, IdgenCodecError *err)
{
	int			yr,
				mo,
				d,
				h,
				mi,
				se,
				ms = 0;
	size_t		ndigits = 0;
	size_t		pos;
	int			rc_node,
				rc_seq;

	while (ndigits < len && s[ndigits] >= '0' && s[ndigits] <= '9')
		ndigits++;
	if (!(ndigits == 17 || (ndigits == 14 && idgen_friendly_seconds(l))))
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	pos = ndigits;
	if (pos >= len || s[pos] != '-')
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	pos++;
	out->node = 0;
	out->seq = 0;
	rc_node = parse_number(s, len, &pos, &out->node);
	if (rc_node == 1 || pos >= len || s[pos] != '-')
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	pos++;
	rc_seq = parse_number(s, len, &pos, &out->seq);
	if (rc_seq == 1 || pos != len)
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	out->node_big = rc_node == 2;
	out->seq_big = rc_seq == 2;

	yr = digits_value(s, 4);
	mo = digits_value(s + 4, 2);
	d = digits_value(s + 6, 2);
	h = digits_value(s + 8, 2);
	mi = digits_value(s + 10, 2);
	se = digits_value(s + 12, 2);
	if (ndigits == 17)
		ms = digits_value(s + 14, 3);
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(yr, mo) ||
		h > 23 || mi > 59 || se > 59)
		return fail(err, SYNTAX,
					"%.4s-%.2s-%.2s %.2s:%.2s:%.2s%s%.*s is not a valid time.",
					s, s + 4, s + 6, s + 8, s + 10, s + 12,
					ndigits == 17 ? "." : "", ndigits == 17 ? 3 : 0, s + 14);
	out->local_us = ((idgen_days_from_civil(yr, mo, d) * 86400 + h * 3600 + mi * 60 + se)
					 * 1000 + ms) * US_PER_MS;
	return true;
}

/* The ID of a parsed friendly form whose time is unix_us; see codec.h */
bool
idgen_friendly_compose(const IdgenLayout *l, const IdgenFriendlyText *t,
					   int64_t unix_us, int64_t *id, IdgenCodecError *err)
{
	int64_t		delta,
				tick;

	if (!friendly_layout_ok(l, err))
		return false;
	if (__builtin_sub_overflow(unix_us, l->epoch_us, &delta) || delta < 0)
		return fail(err, TIME_RANGE,
					"The time is before the epoch of layout \"%s\".", l->name);
	if (delta % l->unit_us != 0)
		return fail(err, SYNTAX,
					"The time is not the start of a tick of layout \"%s\", whose ticks are %" PRId64 " ms long.",
					l->name, l->unit_us / US_PER_MS);
	tick = delta / l->unit_us;

	/*
	 * The layout's last tick: its field, but also a positive bigint (a
	 * timestamp field reaching bit 63, as Discord's, would make the ID
	 * negative) and a time before the year 10000
	 */
	if (tick > idgen_layout_ts_max(l))
		return fail(err, TIME_RANGE,
					"The time is past the last tick of layout \"%s\".", l->name);
	if (t->node_big || t->node > idgen_field_max(l->node.bits))
		return fail(err, RANGE,
					"The node is larger than %" PRIu64 ", the largest of layout \"%s\".",
					idgen_field_max(l->node.bits), l->name);
	if (t->seq_big || t->seq > idgen_field_max(l->seq.bits))
		return fail(err, RANGE,
					"The sequence is larger than %" PRIu64 ", the largest of layout \"%s\".",
					idgen_field_max(l->seq.bits), l->name);
	*id = (int64_t) idgen_compose(l, tick, t->node, t->seq);
	return true;
}

/* Parse the friendly form of an ID under layout l, time in UTC */
bool
idgen_friendly_decode(const IdgenLayout *l, const char *s, size_t len,
					  int64_t *id, IdgenCodecError *err)
{
	IdgenFriendlyText t = {0};

	if (!idgen_friendly_parse(l, s, len, &t, err))
		return false;
	return idgen_friendly_compose(l, &t, t.local_us, id, err);
}
