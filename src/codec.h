/*
 * codec.h
 *		Text forms of IDs: fixed-width base62 and the friendly
 *		"yyyyMMddHHmmssSSS-node-sequence" form.
 *
 * Pure C: no PostgreSQL headers, so the unit tests and fuzzers can use it.
 * Every encoder has an exact inverse: decoding the text an encoder wrote
 * gives back the same ID.  The decoders also read CosId's variants of the
 * same text (base62 without leading zeros, friendly parts with leading
 * zeros, 17 digits of time for second layouts); every text that decodes to
 * an ID differs from the encoder's text for that ID by such padding only.
 * No state; no locks.
 */
#ifndef IDGEN_CODEC_H
#define IDGEN_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* Characters of a base62 ID; 62^11 > 2^63, so 11 always suffice */
#define IDGEN_BASE62_LEN 11

/* Longest friendly form written: 17 digits, two dashes, two 20-digit numbers */
#define IDGEN_FRIENDLY_MAXLEN 60

/*
 * Why a decoder or encoder refused its input: malformed text (neither flag),
 * a value out of range (range; time too when that value is a time: the
 * text's, or the ID's), or a layout the form cannot express (layout)
 */
typedef struct IdgenCodecError
{
	bool		range;			/* well-formed, but the value is out of range */
	bool		time;			/* with range: the value is a time */
	bool		layout;			/* the layout has no such form */
	char		detail[256];	/* a full sentence, for errdetail */
} IdgenCodecError;

/*
 * Write the 11-character base62 form of id (digits 0-9A-Za-z, most
 * significant first, zero-padded) and a terminating NUL to out.  Negative
 * IDs have no base62 form: returns false for them.
 */
extern bool idgen_base62_encode(int64_t id, char out[IDGEN_BASE62_LEN + 1]);

/*
 * Write CosId's unpadded form (Radix62IdConverter.INSTANCE): the 11-character
 * form without leading zeros, "0" for zero.  false for negative IDs.
 */
extern bool idgen_base62_encode_unpadded(int64_t id,
										 char out[IDGEN_BASE62_LEN + 1]);

/*
 * Parse 1 to 11 base62 characters (s need not be NUL-terminated): the
 * padded form and CosId's unpadded one alike
 */
extern bool idgen_base62_decode(const char *s, size_t len, int64_t *id,
								IdgenCodecError *err);

/*
 * Write the friendly form of id under layout l to out (outlen bytes, at least
 * IDGEN_FRIENDLY_MAXLEN + 1).  Fails when the layout's ticks are not whole
 * milliseconds, when the ID has bits the layout does not describe (so the
 * text could not give it back), or when its time is outside years 0-9999.
 */
extern bool idgen_friendly_encode(const IdgenLayout *l, int64_t id,
								  char *out, size_t outlen,
								  IdgenCodecError *err);

/*
 * The same, the time shown offset_us from UTC (a zone's offset at the ID's
 * time, found by the caller); offset 0 is idgen_friendly_encode
 */
extern bool idgen_friendly_encode_local(const IdgenLayout *l, int64_t id,
										int64_t offset_us, char *out,
										size_t outlen, IdgenCodecError *err);

/*
 * Whether layout l's ticks start on whole seconds, so its friendly form has
 * 14 digits of time (yyyyMMddHHmmss, as CosId's SecondSnowflakeIdStateParser
 * writes); 17-digit text is read for such layouts too
 */
extern bool idgen_friendly_seconds(const IdgenLayout *l);

/* The parts of a friendly form's text, before the layout is applied */
typedef struct IdgenFriendlyText
{
	int64_t		local_us;		/* the time written, as Unix microseconds if
								 * it were UTC */
	uint64_t	node;
	uint64_t	seq;
	bool		node_big;		/* node does not fit 64 bits */
	bool		seq_big;		/* sequence does not fit 64 bits */
} IdgenFriendlyText;

/*
 * Parse the text of a friendly form: 17 digits of time (14 for layouts whose
 * ticks are whole seconds), a dash, the node, a dash, the sequence; node
 * and sequence may have leading zeros (CosId's padStart).  Checks that the
 * date and time exist on the calendar; the layout's ranges are checked by
 * idgen_friendly_compose.
 */
extern bool idgen_friendly_parse(const IdgenLayout *l, const char *s,
								 size_t len, IdgenFriendlyText *out,
								 IdgenCodecError *err);

/*
 * The ID of parsed text t whose time, converted to UTC by the caller, is
 * unix_us: fails when the time is not the start of a tick of l or outside
 * its range, or node or sequence do not fit
 */
extern bool idgen_friendly_compose(const IdgenLayout *l,
								   const IdgenFriendlyText *t, int64_t unix_us,
								   int64_t *id, IdgenCodecError *err);

/*
 * Parse a friendly form under layout l, time in UTC; inverse of the encoder
 * (which writes no leading zeros, so padded text decodes to the same ID as
 * the text the encoder writes)
 */
extern bool idgen_friendly_decode(const IdgenLayout *l, const char *s,
								  size_t len, int64_t *id,
								  IdgenCodecError *err);

#endif							/* IDGEN_CODEC_H */
