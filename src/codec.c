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
	err->range = kind == RANGE;
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

/* Parse exactly 11 base62 digits into a non-negative bigint */
bool
idgen_base62_decode(const char *s, size_t len, int64_t *id,
					IdgenCodecError *err)
{
	uint64_t	v = 0;

	if (len != IDGEN_BASE62_LEN)
		return fail(err, SYNTAX,
					"A base62 ID has exactly %d characters, not %zu.",
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

/* Write the friendly form of id under layout l */
bool
idgen_friendly_encode(const IdgenLayout *l, int64_t id, char *out,
					  size_t outlen, IdgenCodecError *err)
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
	idgen_decompose(l, (uint64_t) id, &p);
	if (idgen_compose(l, p.tick, p.node, p.seq) != (uint64_t) id)
		return fail(err, RANGE,
					"ID %" PRId64 " has bits outside the timestamp, node and sequence of layout \"%s\", which the friendly form would lose.",
					id, l->name);
	if (__builtin_mul_overflow(p.tick, l->unit_us, &us) ||
		__builtin_add_overflow(us, l->epoch_us, &us))
		return fail(err, RANGE,
					"The time of ID %" PRId64 " is outside the years 0000 to 9999.", id);
	ms = us / US_PER_MS;		/* exact: both terms are whole milliseconds */
	days = floor_div(ms, MS_PER_DAY);
	msofday = ms - days * MS_PER_DAY;
	civil_from_days(days, &y, &mo, &d);
	if (y < 0 || y > 9999)
		return fail(err, RANGE,
					"The time of ID %" PRId64 " is outside the years 0000 to 9999.", id);
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
 * Parse a canonical decimal number (no sign, no leading zeros) from s[*pos]
 * up to the next '-' or the end.  Returns 0 on success, 1 on bad syntax,
 * 2 when the number does not fit 64 bits.
 */
static int
parse_number(const char *s, size_t len, size_t *pos, uint64_t *out)
{
	size_t		i = *pos;
	uint64_t	v = 0;

	if (i >= len || s[i] < '0' || s[i] > '9')
		return 1;
	if (s[i] == '0' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9')
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
	"The friendly form is yyyyMMddHHmmssSSS-node-sequence: 17 digits of UTC time, then the node and the sequence as decimal numbers without leading zeros."

/* Parse the friendly form of an ID under layout l */
bool
idgen_friendly_decode(const IdgenLayout *l, const char *s, size_t len,
					  int64_t *id, IdgenCodecError *err)
{
	int			yr,
				mo,
				d,
				h,
				mi,
				se,
				ms;
	size_t		pos = 17;
	uint64_t	node = 0,
				seq = 0;
	int			rc_node,
				rc_seq;
	int64_t		unix_us,
				delta,
				tick;

	for (size_t i = 0; i < 17; i++)
		if (i >= len || s[i] < '0' || s[i] > '9')
			return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	if (pos >= len || s[pos] != '-')
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	pos++;
	rc_node = parse_number(s, len, &pos, &node);
	if (rc_node == 1 || pos >= len || s[pos] != '-')
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);
	pos++;
	rc_seq = parse_number(s, len, &pos, &seq);
	if (rc_seq == 1 || pos != len)
		return fail(err, SYNTAX, FRIENDLY_SYNTAX);

	yr = digits_value(s, 4);
	mo = digits_value(s + 4, 2);
	d = digits_value(s + 6, 2);
	h = digits_value(s + 8, 2);
	mi = digits_value(s + 10, 2);
	se = digits_value(s + 12, 2);
	ms = digits_value(s + 14, 3);
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(yr, mo) ||
		h > 23 || mi > 59 || se > 59)
		return fail(err, SYNTAX,
					"%.4s-%.2s-%.2s %.2s:%.2s:%.2s.%.3s is not a valid UTC time.",
					s, s + 4, s + 6, s + 8, s + 10, s + 12, s + 14);

	if (!friendly_layout_ok(l, err))
		return false;
	unix_us = ((idgen_days_from_civil(yr, mo, d) * 86400 + h * 3600 + mi * 60 + se)
			   * 1000 + ms) * US_PER_MS;
	if (__builtin_sub_overflow(unix_us, l->epoch_us, &delta) || delta < 0)
		return fail(err, RANGE,
					"The time is before the epoch of layout \"%s\".", l->name);
	if (delta % l->unit_us != 0)
		return fail(err, SYNTAX,
					"The time is not the start of a tick of layout \"%s\", whose ticks are %" PRId64 " ms long.",
					l->name, l->unit_us / US_PER_MS);
	tick = delta / l->unit_us;
	if ((uint64_t) tick > idgen_field_max(l->ts.bits))
		return fail(err, RANGE,
					"The time is past the last tick of layout \"%s\".", l->name);
	if (rc_node == 2 || node > idgen_field_max(l->node.bits))
		return fail(err, RANGE,
					"The node is larger than %" PRIu64 ", the largest of layout \"%s\".",
					idgen_field_max(l->node.bits), l->name);
	if (rc_seq == 2 || seq > idgen_field_max(l->seq.bits))
		return fail(err, RANGE,
					"The sequence is larger than %" PRIu64 ", the largest of layout \"%s\".",
					idgen_field_max(l->seq.bits), l->name);
	*id = (int64_t) idgen_compose(l, tick, node, seq);
	return true;
}
