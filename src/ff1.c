/*
 * ff1.c
 *		NIST SP 800-38G FF1 on AES (OpenSSL's EVP interface); see ff1.h.
 *
 * Pure C, no PostgreSQL headers.  The steps of the spec's algorithms 6
 * (PRF), 7 (FF1.Encrypt) and 8 (FF1.Decrypt) are numbered in the comments
 * as the spec numbers them.  Two paths compute them:
 *
 * - the general one, ff1_general(), as the spec writes it: A and B are
 *   numeral strings, NUM_radix() goes through a small fixed-width integer
 *   (Bn, enough for radix^32 with radix 65536, i.e. 2^512, and for the d
 *   bytes of S); step 6.vi's sum modulo radix^m is done on the m lowest
 *   radix-digits of y, numeral by numeral, which is the same number;
 * - the fast one, ff1_rounds64(), for every radix and length whose halves
 *   fit in 64 bits (radix^v < 2^64: the radix-2 domains of idgen's public
 *   IDs, the NIST samples): A and B are kept as the integers NUM_radix(A)
 *   and NUM_radix(B) (step 6.vii's C = STR^m_radix(c) is read again only
 *   through NUM_radix, which gives back c), so no numeral string is written
 *   until step 7.  Then b <= 8 and d <= 12: every round's Q ends in one AES
 *   block whose other bytes, and every block of P || Q before it, are the
 *   same in all ten rounds, so the CBC-MAC over them is computed once per
 *   call (P's once per (n, tweak length), cached in the context) and each
 *   round costs one AES block.
 *
 * The unit tests run NIST's samples through both paths (generic_only) and
 * test/ff1_crosscheck.py compares both with an independent implementation.
 */
#include "ff1.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#define BLOCK 16
#define FF1_ROUNDS 10
#define HALF_MAX ((IDGEN_FF1_MAX_LEN + 1) / 2)
/* b: bytes of radix^v - 1 < 2^(16 * HALF_MAX) */
#define B_MAX (2 * HALF_MAX)
/* d = 4 * ceil(b / 4) + 4 */
#define D_MAX (4 * ((B_MAX + 3) / 4) + 4)
/* Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM_radix(B)]^b */
#define Q_MAX (IDGEN_FF1_MAX_TWEAK + 15 + 1 + B_MAX)

/*
 * Unsigned integers of up to BN_LIMBS 32-bit words, least significant
 * first; len words are in use (the others are zero)
 */
#define BN_LIMBS ((8 * D_MAX + 31) / 32 + 1)
typedef struct Bn
{
	uint32_t	w[BN_LIMBS];
	int			len;
} Bn;

static void
bn_set(Bn *x, uint32_t value)
{
	memset(x, 0, sizeof(*x));
	x->w[0] = value;
	x->len = value != 0;
}

/* x = x * m + a */
static void
bn_mul_add(Bn *x, uint32_t m, uint32_t a)
{
	uint64_t	carry = a;
	int			i;

	for (i = 0; i < x->len; i++)
	{
		uint64_t	t = (uint64_t) x->w[i] * m + carry;

		x->w[i] = (uint32_t) t;
		carry = t >> 32;
	}
	if (carry != 0 && x->len < BN_LIMBS)
		x->w[x->len++] = (uint32_t) carry;
}

/* x = x / d, returning x mod d (d > 0) */
static uint32_t
bn_divmod(Bn *x, uint32_t d)
{
	uint64_t	rem = 0;
	int			i;

	for (i = x->len - 1; i >= 0; i--)
	{
		uint64_t	cur = (rem << 32) | x->w[i];

		x->w[i] = (uint32_t) (cur / d);
		rem = cur % d;
	}
	while (x->len > 0 && x->w[x->len - 1] == 0)
		x->len--;
	return (uint32_t) rem;
}

/* x = x - 1 (x > 0) */
static void
bn_dec(Bn *x)
{
	int			i;

	for (i = 0; i < x->len; i++)
		if (x->w[i]-- != 0)
			break;
	while (x->len > 0 && x->w[x->len - 1] == 0)
		x->len--;
}

static unsigned
bn_bitlen(const Bn *x)
{
	unsigned	bits;
	uint32_t	top;

	if (x->len == 0)
		return 0;
	top = x->w[x->len - 1];
	bits = 32 * (unsigned) (x->len - 1);
	while (top != 0)
	{
		bits++;
		top >>= 1;
	}
	return bits;
}

/* NUM(s): the big-endian bytes s[0..len) as an integer */
static void
bn_from_bytes(Bn *x, const uint8_t *s, size_t len)
{
	size_t		j;

	bn_set(x, 0);
	for (j = 0; j < len; j++)
		bn_mul_add(x, 256, s[j]);
}

/* [x]^len: x as len big-endian bytes (x < 256^len) */
static void
bn_to_bytes(const Bn *x, uint8_t *out, size_t len)
{
	size_t		j;

	for (j = 0; j < len; j++)
	{
		size_t		w = j / 4;

		out[len - 1 - j] = w < (size_t) x->len ?
			(uint8_t) (x->w[w] >> (8 * (j % 4))) : 0;
	}
}

/* NUM_radix(X[0..len)) */
static void
bn_num_radix(Bn *x, const uint16_t *X, unsigned len, unsigned radix)
{
	unsigned	j;

	bn_set(x, 0);
	for (j = 0; j < len; j++)
		bn_mul_add(x, radix, X[j]);
}

/* One AES block: out = CIPH_K(in) */
static int
aes_block(IdgenFF1 *ctx, const uint8_t *in, uint8_t *out)
{
	int			outl = 0;

	if (EVP_EncryptUpdate(ctx->evp, out, &outl, in, BLOCK) != 1 || outl != BLOCK)
	{
		/* leave no error in the thread's queue for the server's TLS code */
		ERR_clear_error();
		return IDGEN_FF1_ECRYPTO;
	}
	return IDGEN_FF1_OK;
}

/*
 * Algorithm 6, PRF(X) (CBC-MAC), continued from the chaining value
 * y[0..16) over the len bytes of x (len a multiple of 16): for j = 1..m,
 * Y_j = CIPH_K(Y_{j-1} xor X_j); y becomes Y_m
 */
static int
cbc_mac(IdgenFF1 *ctx, uint8_t *y, const uint8_t *x, size_t len)
{
	uint8_t		blk[BLOCK];
	size_t		off;
	int			j,
				rc;

	for (off = 0; off < len; off += BLOCK)
	{
		for (j = 0; j < BLOCK; j++)
			blk[j] = y[j] ^ x[off + j];
		if ((rc = aes_block(ctx, blk, y)) != IDGEN_FF1_OK)
			return rc;
	}
	return IDGEN_FF1_OK;
}

/*
 * Step 5, P = [1]^1 || [2]^1 || [1]^1 || [radix]^3 || [10]^1 ||
 * [u mod 256]^1 || [n]^4 || [t]^4, and its CBC-MAC (Y_1 of PRF(P || Q),
 * algorithm 6 step 2 with Y_0 = 0^128), into mac; cached in the context
 * for the last (n, t), as nothing else (radix is the context's) goes in
 */
static int
p_block_mac(IdgenFF1 *ctx, unsigned n, size_t t, uint8_t *mac)
{
	uint8_t		P[BLOCK];
	unsigned	u = n / 2;
	int			rc;

	if (!(ctx->p_valid && ctx->p_n == n && ctx->p_t == t))
	{
		ctx->p_valid = false;
		P[0] = 1;
		P[1] = 2;
		P[2] = 1;
		P[3] = (uint8_t) (ctx->radix >> 16);
		P[4] = (uint8_t) (ctx->radix >> 8);
		P[5] = (uint8_t) ctx->radix;
		P[6] = 10;
		P[7] = (uint8_t) (u % 256);
		P[8] = (uint8_t) (n >> 24);
		P[9] = (uint8_t) (n >> 16);
		P[10] = (uint8_t) (n >> 8);
		P[11] = (uint8_t) n;
		P[12] = (uint8_t) (t >> 24);
		P[13] = (uint8_t) (t >> 16);
		P[14] = (uint8_t) (t >> 8);
		P[15] = (uint8_t) t;
		if ((rc = aes_block(ctx, P, ctx->p_mac)) != IDGEN_FF1_OK)
			return rc;
		ctx->p_n = n;
		ctx->p_t = t;
		ctx->p_valid = true;
	}
	memcpy(mac, ctx->p_mac, BLOCK);
	return IDGEN_FF1_OK;
}

/* (-t-b-1) mod 16, the zero bytes of step 6.i's Q */
static size_t
q_pad(size_t t, unsigned b)
{
	return (BLOCK - (t + b + 1) % BLOCK) % BLOCK;
}

/*
 * Step 3: b = ceil(ceil(v * LOG(radix)) / 8), the bytes of radix^v - 1,
 * exactly (ceil(v * log2(radix)) is the bit length of radix^v - 1)
 */
static unsigned
step3_bytes(unsigned radix, unsigned v)
{
	Bn			num;

	bn_set(&num, 1);
	for (unsigned j = 0; j < v; j++)
		bn_mul_add(&num, radix, 0);
	bn_dec(&num);
	return (bn_bitlen(&num) + 7) / 8;
}

/*
 * Steps 6.ii and 6.iii of a round: R = PRF(P || Q), P's block of the
 * CBC-MAC being pmac; S = the first d bytes of R || CIPH_K(R xor [1]^16)
 * || ... || CIPH_K(R xor [ceil(d/16) - 1]^16), into S
 */
static int
round_s(IdgenFF1 *ctx, const uint8_t *pmac, const uint8_t *Q, size_t qlen,
		unsigned d, uint8_t *S)
{
	uint8_t		blk[BLOCK];
	int			rc;

	memcpy(S, pmac, BLOCK);
	if ((rc = cbc_mac(ctx, S, Q, qlen)) != IDGEN_FF1_OK)
		return rc;
	for (unsigned j = 1; j < (d + BLOCK - 1) / BLOCK; j++)
	{
		memcpy(blk, S, BLOCK);
		blk[BLOCK - 1] ^= (uint8_t) j;
		if ((rc = aes_block(ctx, blk, S + BLOCK * j)) != IDGEN_FF1_OK)
			return rc;
	}
	return IDGEN_FF1_OK;
}

/*
 * Steps 6.vi and 6.vii on numerals: C = X + Yd (encryption) or X - Yd
 * (decryption), m numerals each, numeral by numeral, the carry (borrow)
 * out of the most significant numeral dropped, which is mod radix^m
 */
static void
combine(const uint16_t *X, const uint16_t *Yd, uint16_t *C, unsigned m,
		unsigned radix, bool encrypt)
{
	unsigned	carry = 0;

	for (unsigned j = m; j-- > 0;)
	{
		if (encrypt)
		{
			unsigned	s = (unsigned) X[j] + Yd[j] + carry;

			carry = s >= radix;
			C[j] = (uint16_t) (carry ? s - radix : s);
		}
		else
		{
			unsigned	sub = (unsigned) Yd[j] + carry;

			carry = X[j] < sub;
			C[j] = (uint16_t) (carry ? X[j] + radix - sub : X[j] - sub);
		}
	}
}

/*
 * Algorithms 7 and 8 as the spec writes them, on numeral strings, for any
 * radix and length within the limits (arguments checked by the caller)
 */
static int
ff1_general(IdgenFF1 *ctx, const uint8_t *T, size_t t,
			const uint16_t *X, uint16_t *out, unsigned n, bool encrypt)
{
	const unsigned radix = ctx->radix;
	uint16_t	A[HALF_MAX],
				B[HALF_MAX],
				C[HALF_MAX],
				Yd[HALF_MAX];
	unsigned	lenA,
				lenB;
	uint8_t		Q[Q_MAX];
	uint8_t		S[(D_MAX + BLOCK - 1) / BLOCK * BLOCK];
	uint8_t		pmac[BLOCK];
	Bn			num;
	unsigned	u,
				v,
				b,
				d,
				m,
				k,
				j;
	size_t		pad,
				qlen;
	int			rc;

	/* 1. u = floor(n/2); v = n - u */
	u = n / 2;
	v = n - u;
	/* 2. A = X[1..u]; B = X[u + 1..n] */
	memcpy(A, X, u * sizeof(uint16_t));
	lenA = u;
	memcpy(B, X + u, v * sizeof(uint16_t));
	lenB = v;
	/* 3. b = ceil(ceil(v * LOG(radix)) / 8) */
	b = step3_bytes(radix, v);
	/* 4. d = 4 * ceil(b / 4) + 4 */
	d = 4 * ((b + 3) / 4) + 4;
	/* 5. P (and its block of the CBC-MAC) */
	if ((rc = p_block_mac(ctx, n, t, pmac)) != IDGEN_FF1_OK)
		return rc;

	/* Algorithm 7: 6. for i from 0 to 9; algorithm 8: for i from 9 to 0 */
	pad = q_pad(t, b);
	qlen = t + pad + 1 + b;
	for (k = 0; k < FF1_ROUNDS; k++)
	{
		unsigned	i = encrypt ? k : FF1_ROUNDS - 1 - k;

		/*
		 * 6.i. Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM_radix(B)]^b
		 * (decryption: NUM_radix(A))
		 */
		if (t > 0)
			memcpy(Q, T, t);
		memset(Q + t, 0, pad);
		Q[t + pad] = (uint8_t) i;
		if (encrypt)
			bn_num_radix(&num, B, lenB, radix);
		else
			bn_num_radix(&num, A, lenA, radix);
		bn_to_bytes(&num, Q + t + pad + 1, b);
		/* 6.ii. R = PRF(P || Q); 6.iii. S */
		if ((rc = round_s(ctx, pmac, Q, qlen, d, S)) != IDGEN_FF1_OK)
			return rc;
		/* 6.iv. y = NUM(S) */
		bn_from_bytes(&num, S, d);
		/* 6.v. m = u if i is even, else v */
		m = i % 2 == 0 ? u : v;
		/*
		 * 6.vi. c = (NUM_radix(A) + y) mod radix^m (decryption:
		 * (NUM_radix(B) - y) mod radix^m), and 6.vii. C = STR^m_radix(c):
		 * Yd = STR^m_radix(y mod radix^m), the m lowest digits of y; then
		 * C = A + Yd (B - Yd), mod radix^m.  A (decryption: B) has m
		 * numerals here.
		 */
		for (j = m; j-- > 0;)
			Yd[j] = (uint16_t) bn_divmod(&num, radix);
		combine(encrypt ? A : B, Yd, C, m, radix, encrypt);
		if (encrypt)
		{
			/* 6.viii. A = B; 6.ix. B = C */
			memcpy(A, B, lenB * sizeof(uint16_t));
			lenA = lenB;
			memcpy(B, C, m * sizeof(uint16_t));
			lenB = m;
		}
		else
		{
			/* 6.viii. B = A; 6.ix. A = C */
			memcpy(B, A, lenA * sizeof(uint16_t));
			lenB = lenA;
			memcpy(A, C, m * sizeof(uint16_t));
			lenA = m;
		}
	}
	/* 7. X = A || B */
	memcpy(out, A, lenA * sizeof(uint16_t));
	memcpy(out + lenA, B, lenB * sizeof(uint16_t));
	return IDGEN_FF1_OK;
}

/* Big-endian loads and stores (GCC and Clang: one load and a byte swap) */
static inline uint64_t
load_be64(const uint8_t *p)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t	x;

	memcpy(&x, p, 8);
	return __builtin_bswap64(x);
#else
	return (uint64_t) p[0] << 56 | (uint64_t) p[1] << 48 |
		(uint64_t) p[2] << 40 | (uint64_t) p[3] << 32 |
		(uint64_t) p[4] << 24 | (uint64_t) p[5] << 16 |
		(uint64_t) p[6] << 8 | (uint64_t) p[7];
#endif
}

static inline void
store_be64(uint8_t *p, uint64_t x)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
	memcpy(p, &x, 8);
#else
	int			j;

	for (j = 7; j >= 0; j--)
	{
		p[j] = (uint8_t) x;
		x >>= 8;
	}
#endif
}

/*
 * Steps 6.iii and 6.iv to 6.vi's y mod radix^m on the 64-bit path: S = the
 * first d bytes of R (d is 8 or 12), y = NUM(S), then y mod M (M =
 * radix^m; mpow2: a power of 2)
 */
static inline uint64_t
y_mod(const uint8_t *R, unsigned d, uint64_t M, bool mpow2)
{
	if (d == 8)
	{
		uint64_t	y = load_be64(R);

		return mpow2 ? y & (M - 1) : y % M;
	}
	else
	{
		unsigned __int128 y = ((unsigned __int128) load_be64(R) << 32) |
			(load_be64(R + 4) & 0xFFFFFFFFu);

		return mpow2 ? (uint64_t) y & (M - 1) : (uint64_t) (y % M);
	}
}

/*
 * Algorithms 7 and 8 on *a = NUM_radix(A) and *b = NUM_radix(B), for
 * n = u + v numerals with mu = radix^u <= mv = radix^v < 2^64 (so that
 * bytes, step 3's b, is at most 8); mpow2: the radix is a power of 2
 */
static int
ff1_rounds64(IdgenFF1 *ctx, const uint8_t *T, size_t t, unsigned n,
			 uint64_t mu, uint64_t mv, unsigned bytes, bool mpow2,
			 uint64_t *a, uint64_t *b, bool encrypt)
{
	uint8_t		Q[Q_MAX];
	uint8_t		state[BLOCK],
				blk[BLOCK],
				R[BLOCK];
	uint64_t	A = *a,
				B = *b,
				base_hi,
				base_lo;
	unsigned	d,
				k;
	size_t		pad,
				qlen;
	int			rc;

	/* 4. d = 4 * ceil(b / 4) + 4 (8 or 12: S is R's first d bytes) */
	d = 4 * ((bytes + 3) / 4) + 4;
	/* 5. P, and its block of the CBC-MAC */
	if ((rc = p_block_mac(ctx, n, t, state)) != IDGEN_FF1_OK)
		return rc;
	/*
	 * 6.i's Q without its round's bytes: T || [0]^((-t-b-1) mod 16), then
	 * [i]^1 || [NUM_radix(B)]^b, which lie in Q's last block (1 + b <= 9).
	 * Every block before that one is the same in all rounds: the CBC-MAC
	 * of P || Q goes through them once, here.  base: the chaining value
	 * xor that last block with zeros for the round's bytes, as two
	 * big-endian words.
	 */
	pad = q_pad(t, bytes);
	qlen = t + pad + 1 + bytes;
	if (t > 0)
		memcpy(Q, T, t);
	memset(Q + t, 0, pad + 1 + bytes);
	if ((rc = cbc_mac(ctx, state, Q, qlen - BLOCK)) != IDGEN_FF1_OK)
		return rc;
	base_hi = load_be64(state) ^ load_be64(Q + qlen - BLOCK);
	base_lo = load_be64(state + 8) ^ load_be64(Q + qlen - 8);

	for (k = 0; k < FF1_ROUNDS; k++)
	{
		unsigned	i = encrypt ? k : FF1_ROUNDS - 1 - k;
		uint64_t	M,
					ym,
					c,
					hi = base_hi,
					lo = base_lo;

		/*
		 * 6.i. Q's last block: [i]^1 || [NUM_radix(B)]^b (decryption:
		 * NUM_radix(A)); either is below radix^v <= 256^b
		 */
		lo ^= encrypt ? B : A;
		if (bytes < 8)
			lo ^= (uint64_t) i << (8 * bytes);
		else
			hi ^= i;
		/* 6.ii. R = PRF(P || Q) */
		store_be64(blk, hi);
		store_be64(blk + 8, lo);
		if ((rc = aes_block(ctx, blk, R)) != IDGEN_FF1_OK)
			return rc;
		/* 6.v. m = u if i is even, else v */
		M = i % 2 == 0 ? mu : mv;
		/*
		 * 6.iii. S = the first d bytes of R (d <= 16); 6.iv. y = NUM(S);
		 * 6.vi. c = (NUM_radix(A) + y) mod radix^m (decryption:
		 * (NUM_radix(B) - y) mod radix^m), through y mod radix^m
		 */
		ym = y_mod(R, d, M, mpow2);
		if (encrypt)
		{
			c = A + ym;			/* A, ym < M: the sum is below 2M */
			if (c < A || c >= M)
				c -= M;
			/* 6.vii. C = STR^m_radix(c); 6.viii. A = B; 6.ix. B = C */
			A = B;
			B = c;
		}
		else
		{
			c = B >= ym ? B - ym : B + (M - ym);
			/* 6.vii. C = STR^m_radix(c); 6.viii. B = A; 6.ix. A = C */
			B = A;
			A = c;
		}
	}
	/* 7. X = A || B (as the two integers; the caller writes the numerals) */
	*a = A;
	*b = B;
	return IDGEN_FF1_OK;
}

/* Arguments common to every call */
static int
check_call(const IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen, size_t n)
{
	uint64_t	domain = 1;
	size_t		j;

	if (ctx == NULL || ctx->evp == NULL)
		return IDGEN_FF1_ECRYPTO;
	if (tlen > IDGEN_FF1_MAX_TWEAK || (tlen > 0 && tweak == NULL))
		return IDGEN_FF1_ETWEAK;
	if (n < 2 || n > IDGEN_FF1_MAX_LEN)
		return IDGEN_FF1_ELEN;
	for (j = 0; j < n && domain < IDGEN_FF1_MIN_DOMAIN; j++)
		domain *= ctx->radix;
	if (domain < IDGEN_FF1_MIN_DOMAIN)
		return IDGEN_FF1_ELEN;
	return IDGEN_FF1_OK;
}

/* radix^len if below 2^64, else 0 */
static uint64_t
pow64(unsigned radix, unsigned len)
{
	uint64_t	p = 1;
	unsigned	j;

	for (j = 0; j < len; j++)
	{
		if (p > UINT64_MAX / radix)
			return 0;
		p *= radix;
	}
	return p;
}

/* Bit length of x */
static unsigned
bitlen64(uint64_t x)
{
	unsigned	bits = 0;

	while (x != 0)
	{
		bits++;
		x >>= 1;
	}
	return bits;
}

static int
ff1_numerals(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
			 const uint16_t *in, uint16_t *out, size_t n, bool encrypt)
{
	const unsigned radix = ctx != NULL ? ctx->radix : 0;
	unsigned	u,
				v;
	uint64_t	mu,
				mv,
				a = 0,
				b = 0;
	size_t		j;
	int			rc;

	if ((rc = check_call(ctx, tweak, tlen, n)) != IDGEN_FF1_OK)
		return rc;
	for (j = 0; j < n; j++)
		if (in[j] >= radix)
			return IDGEN_FF1_ENUMERAL;
	u = (unsigned) n / 2;
	v = (unsigned) n - u;
	mv = pow64(radix, v);
	if (ctx->generic_only || mv == 0)
		return ff1_general(ctx, tweak, tlen, in, out, (unsigned) n, encrypt);

	mu = pow64(radix, u);
	for (j = 0; j < u; j++)
		a = a * radix + in[j];
	for (j = u; j < n; j++)
		b = b * radix + in[j];
	rc = ff1_rounds64(ctx, tweak, tlen, (unsigned) n, mu, mv,
					  (bitlen64(mv - 1) + 7) / 8, (radix & (radix - 1)) == 0,
					  &a, &b, encrypt);
	if (rc != IDGEN_FF1_OK)
		return rc;
	/* 7. X = A || B: STR^u_radix(NUM_radix(A)) || STR^v_radix(NUM_radix(B)) */
	for (j = u; j-- > 0;)
	{
		out[j] = (uint16_t) (a % radix);
		a /= radix;
	}
	for (j = n; j-- > u;)
	{
		out[j] = (uint16_t) (b % radix);
		b /= radix;
	}
	return IDGEN_FF1_OK;
}

int
idgen_ff1_encrypt(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
				  const uint16_t *in, uint16_t *out, size_t n)
{
	return ff1_numerals(ctx, tweak, tlen, in, out, n, true);
}

int
idgen_ff1_decrypt(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
				  const uint16_t *in, uint16_t *out, size_t n)
{
	return ff1_numerals(ctx, tweak, tlen, in, out, n, false);
}

static int
ff1_u64(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen, unsigned width,
		uint64_t in, uint64_t *out, bool encrypt)
{
	unsigned	u,
				v;
	uint64_t	a,
				b;
	int			rc;

	if (ctx == NULL || ctx->evp == NULL)
		return IDGEN_FF1_ECRYPTO;
	if (ctx->radix != 2)
		return IDGEN_FF1_ERADIX;
	if (width < IDGEN_FF1_MIN_WIDTH || width > IDGEN_FF1_MAX_WIDTH)
		return IDGEN_FF1_EWIDTH;
	if (in >> width != 0)
		return IDGEN_FF1_ERANGE;
	/* check_call's other checks: 2^width >= 1,000,000 already */
	if (tlen > IDGEN_FF1_MAX_TWEAK || (tlen > 0 && tweak == NULL))
		return IDGEN_FF1_ETWEAK;

	if (ctx->generic_only)
	{
		uint16_t	x[IDGEN_FF1_MAX_WIDTH] = {0};	/* all set below; cppcheck cannot tell */
		unsigned	j;

		for (j = 0; j < width; j++)
			x[j] = (uint16_t) ((in >> (width - 1 - j)) & 1);
		rc = ff1_general(ctx, tweak, tlen, x, x, width, encrypt);
		if (rc != IDGEN_FF1_OK)
			return rc;
		a = 0;
		for (j = 0; j < width; j++)
			a = (a << 1) | x[j];
		*out = a;
		return IDGEN_FF1_OK;
	}

	/*
	 * 1.-2. with the numeral string STR^width_2(in): A is its u high bits,
	 * B its v low bits
	 */
	u = width / 2;
	v = width - u;
	a = in >> v;
	b = in & ((UINT64_C(1) << v) - 1);
	/* 3. b = ceil(v / 8) in radix 2 */
	rc = ff1_rounds64(ctx, tweak, tlen, width, UINT64_C(1) << u,
					  UINT64_C(1) << v, (v + 7) / 8, true, &a, &b, encrypt);
	if (rc != IDGEN_FF1_OK)
		return rc;
	/* 7. X = A || B, read as an integer */
	*out = (a << v) | b;
	return IDGEN_FF1_OK;
}

int
idgen_ff1_encrypt_u64(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
					  unsigned width, uint64_t in, uint64_t *out)
{
	return ff1_u64(ctx, tweak, tlen, width, in, out, true);
}

int
idgen_ff1_decrypt_u64(IdgenFF1 *ctx, const uint8_t *tweak, size_t tlen,
					  unsigned width, uint64_t in, uint64_t *out)
{
	return ff1_u64(ctx, tweak, tlen, width, in, out, false);
}

int
idgen_ff1_init(IdgenFF1 *ctx, const uint8_t *key, size_t keylen,
			   unsigned radix)
{
	const EVP_CIPHER *cipher;
	EVP_CIPHER_CTX *evp;

	memset(ctx, 0, sizeof(*ctx));
	switch (keylen)
	{
		case 16:
			cipher = EVP_aes_128_ecb();
			break;
		case 24:
			cipher = EVP_aes_192_ecb();
			break;
		case 32:
			cipher = EVP_aes_256_ecb();
			break;
		default:
			return IDGEN_FF1_EKEYLEN;
	}
	if (key == NULL)
		return IDGEN_FF1_EKEYLEN;
	if (radix < IDGEN_FF1_MIN_RADIX || radix > IDGEN_FF1_MAX_RADIX)
		return IDGEN_FF1_ERADIX;
	if (cipher == NULL || (evp = EVP_CIPHER_CTX_new()) == NULL)
		return IDGEN_FF1_ECRYPTO;
	if (EVP_EncryptInit_ex(evp, cipher, NULL, key, NULL) != 1 ||
		EVP_CIPHER_CTX_set_padding(evp, 0) != 1)
	{
		EVP_CIPHER_CTX_free(evp);
		ERR_clear_error();
		return IDGEN_FF1_ECRYPTO;
	}
	ctx->evp = evp;
	ctx->radix = radix;
	return IDGEN_FF1_OK;
}

void
idgen_ff1_free(IdgenFF1 *ctx)
{
	if (ctx == NULL)
		return;
	/* EVP_CIPHER_CTX_free wipes the key schedule */
	if (ctx->evp != NULL)
		EVP_CIPHER_CTX_free(ctx->evp);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
	memset(ctx, 0, sizeof(*ctx));
}

const char *
idgen_ff1_strerror(int code)
{
	switch (code)
	{
		case IDGEN_FF1_OK:
			return "no error";
		case IDGEN_FF1_EKEYLEN:
			return "an FF1 key is 16, 24 or 32 bytes (AES-128, AES-192, AES-256)";
		case IDGEN_FF1_ERADIX:
			return "the radix is outside what FF1 allows here";
		case IDGEN_FF1_ELEN:
			return "the numeral string's length is outside what FF1 allows here (2 to 64 numerals, a domain of at least 1,000,000 values)";
		case IDGEN_FF1_ETWEAK:
			return "the tweak is longer than 64 bytes";
		case IDGEN_FF1_ENUMERAL:
			return "a numeral is not below the radix";
		case IDGEN_FF1_EWIDTH:
			return "the width of the domain is outside 20 to 63 bits";
		case IDGEN_FF1_ERANGE:
			return "the value is outside the domain [0, 2^width)";
		case IDGEN_FF1_ECRYPTO:
			return "the AES cipher of libcrypto failed or is not set up";
	}
	return "unknown FF1 error";
}
