/*
 * fuzz_base62.c
 *		libFuzzer target for the base62 decoder (src/codec.c).
 *
 * Whatever the input, decoding must not crash; when it succeeds, the value
 * is a non-negative bigint whose 11-character encoding is the input with
 * leading zeros (CosId's unpadded form).  The first
 * 8 bytes, read as a bigint, must also encode and decode back to themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t		id;
	IdgenCodecError err;
	char		buf[IDGEN_BASE62_LEN + 1];

	if (idgen_base62_decode((const char *) data, size, &id, &err))
	{
		/* the padded encoding is the input with leading zeros */
		if (id < 0 || !idgen_base62_encode(id, buf) ||
			size < 1 || size > IDGEN_BASE62_LEN ||
			memcmp(buf + IDGEN_BASE62_LEN - size, data, size) != 0 ||
			strspn(buf, "0") < IDGEN_BASE62_LEN - size)
			abort();
	}
	else if (err.detail[0] == '\0')
		abort();

	if (size >= sizeof(id))
	{
		memcpy(&id, data, sizeof(id));
		if (idgen_base62_encode(id, buf))
		{
			int64_t		back;

			if (id < 0 || strlen(buf) != IDGEN_BASE62_LEN ||
				!idgen_base62_decode(buf, IDGEN_BASE62_LEN, &back, &err) ||
				back != id)
				abort();
			/* CosId's unpadded form decodes to the same ID */
			if (!idgen_base62_encode_unpadded(id, buf) ||
				!idgen_base62_decode(buf, strlen(buf), &back, &err) ||
				back != id)
				abort();
		}
		else if (id >= 0)
			abort();
	}
	return 0;
}
