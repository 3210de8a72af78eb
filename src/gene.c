/*
 * gene.c
 *		Java String.hashCode() over UTF-16 code units of UTF-8 text, and the
 *		genes taken from it.
 *
 * Pure C (see gene.h).  No state.  Java's int arithmetic wraps at 32 bits;
 * here it is done in uint32_t, where wrap-around is defined, and converted
 * to a signed value only at the end.
 */
#include "gene.h"

/* Add one UTF-16 code unit to a running hash */
static inline uint32_t
hash_unit(uint32_t h, uint32_t unit)
{
	return h * 31u + unit;
}

/* Java's String.hashCode() of UTF-8 text; see gene.h */
bool
idgen_java_hash(const char *s, size_t len, int32_t *hash)
{
	const unsigned char *p = (const unsigned char *) s;
	uint32_t	h = 0;
	size_t		i = 0;

	while (i < len)
	{
		uint32_t	c = p[i];
		uint32_t	cp;
		int			n;
		uint32_t	min;

		if (c < 0x80)
		{
			h = hash_unit(h, c);
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
		{
			n = 1;
			cp = c & 0x1F;
			min = 0x80;
		}
		else if (c >= 0xE0 && c <= 0xEF)
		{
			n = 2;
			cp = c & 0x0F;
			min = 0x800;
		}
		else if (c >= 0xF0 && c <= 0xF4)
		{
			n = 3;
			cp = c & 0x07;
			min = 0x10000;
		}
		else
			return false;		/* continuation byte, 0xC0/0xC1 or 0xF5+ */
		if (len - i <= (size_t) n)
			return false;		/* truncated */
		for (int k = 1; k <= n; k++)
		{
			uint32_t	b = p[i + k];

			if ((b & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (b & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;		/* overlong, too large, or a surrogate */
		if (cp < 0x10000)
			h = hash_unit(h, cp);
		else
		{
			cp -= 0x10000;
			h = hash_unit(h, 0xD800 + (cp >> 10));
			h = hash_unit(h, 0xDC00 + (cp & 0x3FF));
		}
		i += (size_t) n + 1;
	}
	/* two's complement reinterpretation, as Java's int */
	*hash = (int32_t) (h <= INT32_MAX ? (int64_t) h : (int64_t) h - (INT64_C(1) << 32));
	return true;
}

/* Gene of a text key: the low bits of its Java hash */
bool
idgen_gene_of_text(const char *s, size_t len, int bits, int32_t *gene)
{
	int32_t		h;

	if (!idgen_java_hash(s, len, &h))
		return false;
	*gene = (int32_t) ((uint32_t) h & idgen_gene_mask(bits));
	return true;
}
