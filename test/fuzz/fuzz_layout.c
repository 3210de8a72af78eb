/*
 * fuzz_layout.c
 *		libFuzzer target for the layout spec parser (src/layout.c).
 *
 * The input, up to its first NUL, is a preset name or custom spec.  Parsing
 * must not crash; a layout it accepts must be sound: fields that do not
 * overlap and fit the word with the timestamp on top, a positive unit, and
 * compose/decompose and the friendly form as exact inverses on IDs built
 * from the remaining input bytes.
 */
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

/* One input */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		spec[512];
	char		err[256];
	size_t		len = 0;
	IdgenLayout l;
	uint64_t	used = 0;
	const uint8_t *rest;
	size_t		nrest;

	while (len < size && len < sizeof(spec) - 1 && data[len] != 0)
		len++;
	memcpy(spec, data, len);
	spec[len] = '\0';
	rest = data + len;
	nrest = size - len;

	err[0] = '\0';
	if (!idgen_layout_parse(spec, &l, err, sizeof(err)))
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
