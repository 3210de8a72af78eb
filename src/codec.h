/*
 * codec.h
 *		Text forms of IDs: fixed-width base62 and the friendly
 *		"yyyyMMddHHmmssSSS-node-sequence" form.
 *
 * Pure C: no PostgreSQL headers, so the unit tests and fuzzers can use it.
 * Every encoder has an exact inverse: decoding the text an encoder wrote
 * gives back the same ID, and the decoders accept only text an encoder could
 * have written, so no other text decodes to a number.  No state; no locks.
 */
#ifndef IDGEN_CODEC_H
#define IDGEN_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* Characters of a base62 ID; 62^11 > 2^63, so 11 always suffice */
#define IDGEN_BASE62_LEN 11

/* Longest friendly form: 17 digits, two dashes, two 20-digit numbers */
#define IDGEN_FRIENDLY_MAXLEN 60

/*
 * Why a decoder or encoder refused its input: malformed text (neither flag),
 * a value out of range (range), or a layout the form cannot express (layout)
 */
typedef struct IdgenCodecError
{
	bool		range;			/* well-formed, but the value is out of range */
	bool		layout;			/* the layout has no such form */
	char		detail[160];	/* a full sentence, for errdetail */
} IdgenCodecError;

/*
 * Write the 11-character base62 form of id (digits 0-9A-Za-z, most
 * significant first, zero-padded) and a terminating NUL to out.  Negative
 * IDs have no base62 form: returns false for them.
 */
extern bool idgen_base62_encode(int64_t id, char out[IDGEN_BASE62_LEN + 1]);

/* Parse exactly 11 base62 characters (s need not be NUL-terminated) */
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

/* Parse a friendly form under layout l; exact inverse of the encoder */
extern bool idgen_friendly_decode(const IdgenLayout *l, const char *s,
								  size_t len, int64_t *id,
								  IdgenCodecError *err);

#endif							/* IDGEN_CODEC_H */
