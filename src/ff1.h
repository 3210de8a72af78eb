/*
 * ff1.h
 *		NIST SP 800-38G FF1 format-preserving encryption on AES (OpenSSL's
 *		libcrypto), over a radix from 2 to 65536 and numeral strings of up to
 *		IDGEN_FF1_MAX_LEN numerals; and, on top of it, a keyed permutation of
 *		the integers [0, 2^width) (radix 2, n = width numerals), the cipher
 *		of idgen's public IDs.
 *
 * Pure C: no PostgreSQL headers, so the unit tests can use it.  No
 * ereport: every function returns IDGEN_FF1_OK or one of the negative
 * codes below, which the SQL layer maps to SQLSTATEs; idgen_ff1_strerror()
 * names a code in a sentence (it never shows a key byte, nor do any of
 * these functions print anything).
 *
 * A context holds the AES key schedule in an EVP_CIPHER_CTX made once by
 * idgen_ff1_init() and reused by every call; the context does not keep the
 * key bytes themselves.  Encryption and decryption allocate nothing (fixed
 * buffers on the stack, sized for the limits below) and cost a constant
 * amount of work for a given radix, length and tweak length.  A context is
 * not safe to use from two threads at once (a PostgreSQL backend has one).
 *
 * Follows the domain size of SP 800-38G Rev. 1: radix^n must be
 * at least 1,000,000 (so width >= 20 in radix 2), and 2 <= n.
 */
#ifndef IDGEN_FF1_H
#define IDGEN_FF1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits of this implementation (the spec allows more) */
#define IDGEN_FF1_MIN_RADIX 2
#define IDGEN_FF1_MAX_RADIX 65536
#define IDGEN_FF1_MAX_LEN 64		/* numerals of a string */
#define IDGEN_FF1_MAX_TWEAK 64		/* bytes of a tweak */
#define IDGEN_FF1_MIN_DOMAIN 1000000	/* radix^n at least this */

/* Widths of the integer domain [0, 2^width) */
#define IDGEN_FF1_MIN_WIDTH 20
#define IDGEN_FF1_MAX_WIDTH 63

/* Return codes */
#define IDGEN_FF1_OK		0
#define IDGEN_FF1_EKEYLEN	(-1)	/* key not 16, 24 or 32 bytes */
#define IDGEN_FF1_ERADIX	(-2)	/* radix outside 2..65536 (or not 2 for
									 * the integer domain) */
#define IDGEN_FF1_ELEN		(-3)	/* n outside 2..IDGEN_FF1_MAX_LEN, or
									 * radix^n below 1,000,000 */
#define IDGEN_FF1_ETWEAK	(-4)	/* tweak longer than IDGEN_FF1_MAX_TWEAK */
#define IDGEN_FF1_ENUMERAL	(-5)	/* a numeral not below the radix */
#define IDGEN_FF1_EWIDTH	(-6)	/* width outside 20..63 */
#define IDGEN_FF1_ERANGE	(-7)	/* integer outside [0, 2^width) */
#define IDGEN_FF1_ECRYPTO	(-8)	/* libcrypto failed (out of memory, or
									 * no AES), or the context is not
									 * initialized */

struct evp_cipher_ctx_st;		/* OpenSSL's EVP_CIPHER_CTX */

typedef struct IdgenFF1
{
	struct evp_cipher_ctx_st *evp;	/* AES-ECB, key set; NULL: none */
	unsigned	radix;
	/*
	 * Cache of step 5's block through AES (P's CBC-MAC) for the last
	 * (n, tweak length) seen: P depends on nothing else
	 */
	bool		p_valid;
	unsigned	p_n;
	size_t		p_t;
	uint8_t		p_mac[16];
	/*
	 * For tests: always take the general path (numeral strings and
	 * multi-word integers, as the spec writes it), never the one for
	 * domains whose halves fit in 64 bits.  Both give the same results.
	 */
	bool		generic_only;
} IdgenFF1;

/*
 * Prepare ctx for key (keylen 16, 24 or 32 bytes: AES-128, -192, -256) and
 * radix.  On failure ctx holds nothing to free (idgen_ff1_free is harmless
 * on it).  The caller may wipe its copy of the key afterwards.
 */
extern int	idgen_ff1_init(IdgenFF1 *ctx, const uint8_t *key, size_t keylen,
						   unsigned radix);

/*
 * FF1.Encrypt (algorithm 7) and FF1.Decrypt (algorithm 8) of the numeral
 * string in[0..n) (each numeral below the radix; in[0] is the most
 * significant, NUM_radix's order) under tweak[0..tlen) into out[0..n).
 * in and out may be the same array.  On failure out is left unchanged.
 */
extern int	idgen_ff1_encrypt(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
							  const uint16_t *in, uint16_t *out, size_t n);
extern int	idgen_ff1_decrypt(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
							  const uint16_t *in, uint16_t *out, size_t n);

/*
 * The permutation of [0, 2^width) (width 20..63) under a radix-2 context:
 * FF1 of the width-bit binary numeral string of in (most significant bit
 * first), read back as an integer.  in outside [0, 2^width) is
 * IDGEN_FF1_ERANGE, never a silent wrap; *out is set only on success.
 */
extern int	idgen_ff1_encrypt_u64(IdgenFF1 *ctx, const uint8_t *tweak,
								  size_t tlen, unsigned width,
								  uint64_t in, uint64_t *out);
extern int	idgen_ff1_decrypt_u64(IdgenFF1 *ctx, const uint8_t *tweak,
								  size_t tlen, unsigned width,
								  uint64_t in, uint64_t *out);

/* Free what idgen_ff1_init made (the key schedule is wiped); ctx is reset */
extern void idgen_ff1_free(IdgenFF1 *ctx);

/* A sentence naming a return code (static text, no key material) */
extern const char *idgen_ff1_strerror(int code);

#endif							/* IDGEN_FF1_H */
