/*
 * fuzz_friendly.c
 *		libFuzzer target for the friendly-form decoder (src/codec.c).
 *
 * The first byte picks a layout (every preset and a few custom specs); the
 * rest is the text.  Decoding must not crash; when it succeeds, encoding the
 * ID must give back the text without its padding (leading zeros, the
 * milliseconds of a second layout), which decodes to the same ID; a decoded
 * ID is never negative.  Bytes 1-8, read as a bigint, must either fail to
 * encode (always, when negative) or encode to text that decodes to the
 * same ID.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const specs[] = {
	"idgen", "twitter", "discord", "sonyflake", "vesta_max_peak",
	"vesta_min_granularity", "uid_generator", "cosid_safe_js_ms",
	"cosid_safe_js_s", "pgedge", "sonyflake_v2", "vesta_max_peak,method=2",
	"ts=39,seq=8,node=16,unit=10ms,epoch=2014-09-01",
	"ts=40,node=10,seq=12,unit=100us,epoch=2024-01-01",
	"ts=50,node=1,seq=12,unit=1s,epoch=1900-01-01",
	"ts=62,node=0,seq=1,unit=86400s,epoch=253402300799000",
	"ts=8,node=0,seq=55,unit=1ms,epoch=1970-01-01",
	"ts=41,node=10,seq=12,unit=1s,epoch=253402300799500",
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

/* One input */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static IdgenLayout layouts[NSPECS];
	static bool parsed = false;
	const IdgenLayout *l;
	const char *text;
	size_t		len;
	int64_t		id;
	IdgenCodecError err;
	char		buf[IDGEN_FRIENDLY_MAXLEN + 1];

	if (!parsed)
	{
		char		msg[256];

		for (size_t i = 0; i < NSPECS; i++)
			if (!idgen_layout_parse(specs[i], &layouts[i], msg, sizeof(msg)))
			{
				fprintf(stderr, "spec \"%s\": %s\n", specs[i], msg);
				abort();
			}
		parsed = true;
	}
	if (size < 1)
		return 0;
	l = &layouts[data[0] % NSPECS];
	text = (const char *) data + 1;
	len = size - 1;

	if (idgen_friendly_decode(l, text, len, &id, &err))
	{
		int64_t		back;

		/* a decoded ID is never negative (Discord's time past 2084) */
		if (id < 0)
			abort();

		/*
		 * The encoder writes the shortest text for the ID: the input may
		 * only be longer (leading zeros, 17 digits of a second layout), and
		 * when it is as long it is the same text
		 */
		if (!idgen_friendly_encode(l, id, buf, sizeof(buf), &err) ||
			strlen(buf) > len ||
			(strlen(buf) == len && memcmp(buf, text, len) != 0) ||
			!idgen_friendly_decode(l, buf, strlen(buf), &back, &err) ||
			back != id)
			abort();
	}
	else if (err.detail[0] == '\0')
		abort();

	if (len >= sizeof(id))
	{
		memcpy(&id, text, sizeof(id));
		if (idgen_friendly_encode(l, id, buf, sizeof(buf), &err))
		{
			if (id < 0)
				abort();
			int64_t		back;

			if (!idgen_friendly_decode(l, buf, strlen(buf), &back, &err) ||
				back != id)
				abort();
		}
	}
	return 0;
}
