/*
 * ff1_driver.c
 *		src/ff1.c on lines of stdin, for test/ff1_crosscheck.py, which
 *		compares its answers with an FF1 of its own.  Each line is
 *
 *		  str RADIX KEYHEX TWEAKHEX PATH N1,N2,...   numeral string
 *		  int WIDTH KEYHEX TWEAKHEX PATH VALUE       [0, 2^WIDTH), radix 2
 *
 *		TWEAKHEX "-" for the empty tweak; PATH "f" (ff1.c's choice) or "g"
 *		(its general path only).  Each answer line is the encryption (the
 *		numerals comma-separated, or the decimal value), after checking
 *		that it decrypts back ("ROUNDTRIP" if not), or "ERR CODE".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff1.h"

static size_t
unhex(const char *s, uint8_t *out, size_t max)
{
	size_t		n = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	while (s[0] && s[1] && n < max)
	{
		unsigned	byte;

		if (sscanf(s, "%2x", &byte) != 1)
			break;
		out[n++] = (uint8_t) byte;
		s += 2;
	}
	return n;
}

int
main(void)
{
	static char line[4096];

	while (fgets(line, sizeof(line), stdin) != NULL)
	{
		char		kind[8],
					keyhex[80],
					tweakhex[2 * IDGEN_FF1_MAX_TWEAK + 8],
					path[4],
					data[3000];
		unsigned	param;
		uint8_t		key[40],
					tweak[IDGEN_FF1_MAX_TWEAK + 4];
		size_t		keylen,
					tlen;
		IdgenFF1	ctx;
		int			rc;

		if (sscanf(line, "%7s %u %79s %135s %3s %2999s", kind, &param, keyhex,
				   tweakhex, path, data) != 6)
		{
			printf("ERR parse\n");
			continue;
		}
		keylen = unhex(keyhex, key, sizeof(key));
		tlen = unhex(tweakhex, tweak, sizeof(tweak));
		rc = idgen_ff1_init(&ctx, key, keylen, strcmp(kind, "int") == 0 ? 2 : param);
		if (rc != IDGEN_FF1_OK)
		{
			printf("ERR %d\n", rc);
			continue;
		}
		ctx.generic_only = strcmp(path, "g") == 0;
		if (strcmp(kind, "int") == 0)
		{
			uint64_t	x = strtoull(data, NULL, 10),
						c = 0,
						back = 0;

			rc = idgen_ff1_encrypt_u64(&ctx, tweak, tlen, param, x, &c);
			if (rc == IDGEN_FF1_OK)
				rc = idgen_ff1_decrypt_u64(&ctx, tweak, tlen, param, c, &back);
			if (rc != IDGEN_FF1_OK)
				printf("ERR %d\n", rc);
			else if (back != x)
				printf("ROUNDTRIP\n");
			else
				printf("%" PRIu64 "\n", c);
		}
		else
		{
			uint16_t	x[IDGEN_FF1_MAX_LEN + 1],
						c[IDGEN_FF1_MAX_LEN + 1],
						back[IDGEN_FF1_MAX_LEN + 1];
			size_t		n = 0,
						j;
			char	   *p = data;

			while (*p && n <= IDGEN_FF1_MAX_LEN)
			{
				x[n++] = (uint16_t) strtoul(p, &p, 10);
				if (*p == ',')
					p++;
			}
			rc = idgen_ff1_encrypt(&ctx, tweak, tlen, x, c, n);
			if (rc == IDGEN_FF1_OK)
				rc = idgen_ff1_decrypt(&ctx, tweak, tlen, c, back, n);
			if (rc != IDGEN_FF1_OK)
				printf("ERR %d\n", rc);
			else if (memcmp(back, x, n * sizeof(uint16_t)) != 0)
				printf("ROUNDTRIP\n");
			else
				for (j = 0; j < n; j++)
					printf("%u%s", c[j], j + 1 < n ? "," : "\n");
		}
		idgen_ff1_free(&ctx);
		fflush(stdout);
	}
	return 0;
}
