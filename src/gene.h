/*
 * gene.h
 *		Genes: the low bits of a sharding key, for IDs that carry the shard
 *		of a key other than themselves.
 *
 * Pure C: no PostgreSQL headers, so the unit tests and fuzzers can use it.
 * A text key's gene is the low bits of Java's String.hashCode() over the
 * key's UTF-16 code units, so a Java application computes the same gene
 * with "key.hashCode() & mask".  An integer key's gene is its own low bits
 * (Java: "(int) (key & mask)").  No state; no locks.
 */
#ifndef IDGEN_GENE_H
#define IDGEN_GENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Gene widths.  At most 31 bits, so every gene is a non-negative int; a
 * snowflake ID that carries a gene is further limited by its layout's
 * sequence bits (the generator takes 2^bits sequence values at once).
 */
#define IDGEN_GENE_MIN_BITS 1
#define IDGEN_GENE_MAX_BITS 31

/* Mask of the low bits bits (bits within the range above) */
static inline uint32_t
idgen_gene_mask(int bits)
{
	return (uint32_t) ((UINT64_C(1) << bits) - 1);
}

/*
 * Java's String.hashCode() of UTF-8 text of len bytes: h = 31 * h + c over
 * the UTF-16 code units c, characters above U+FFFF counting as their two
 * surrogates, with 32-bit wrap-around.  Returns false if the text is not
 * well-formed UTF-8 (overlong forms, surrogates, values above U+10FFFF and
 * truncated sequences are refused).
 */
extern bool idgen_java_hash(const char *s, size_t len, int32_t *hash);

/* Gene of a text key; false if it is not well-formed UTF-8 */
extern bool idgen_gene_of_text(const char *s, size_t len, int bits,
							   int32_t *gene);

/* Gene of an integer key: its low bits, two's complement for negatives */
static inline int32_t
idgen_gene_of_int(int64_t key, int bits)
{
	return (int32_t) ((uint64_t) key & idgen_gene_mask(bits));
}

#endif							/* IDGEN_GENE_H */
