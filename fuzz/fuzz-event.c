/*
 * libFuzzer target for the event reader (spool files and the collector
 * socket): each input is fed whole and again in small pieces; every event
 * that decodes is read field by field, and both feeds must agree.  The
 * input is also wrapped as the payload of one well-formed frame (header,
 * length, record count from its first byte, a correct CRC-32), so that the
 * record decoder behind the checksum is fuzzed too.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t
decode(const uint8_t *data, size_t size, size_t piece)
{
	struct event_reader	 r;
	struct event		 ev;
	uint64_t		 sum = 0, n = 0;
	size_t			 off, i;
	char			*cause = NULL;
	int			 got = 0;

	event_reader_init(&r, "fuzz");
	for (off = 0; off < size && got >= 0; off += piece) {
		event_reader_feed(&r, data + off,
		    off + piece > size ? size - off : piece);
		while ((got = event_reader_next(&r, &ev, &cause)) == 1) {
			n++;
			sum += ev.type + ev.time_ns;
			if (ev.type == EVENT_STRING)
				for (i = 0; i < ev.u.string.length; i++)
					sum += (unsigned char)ev.u.string.text[i];
		}
	}
	free(cause);
	cause = NULL;
	if (got >= 0 && event_reader_finish(&r, &cause) != 0)
		n |= 1ULL << 63;
	free(cause);
	event_reader_free(&r);
	return (sum ^ (n << 1));
}

static uint32_t
crc32(const uint8_t *p, size_t n)
{
	uint32_t	c = 0xffffffffu;
	int		k;

	while (n-- > 0) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return (~c);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* The input as the payload of one frame after a valid stream header. */
static uint8_t *
framed(const uint8_t *data, size_t size, size_t *len)
{
	uint8_t	*out;

	*len = EVENT_HEADER_SIZE + 16 + (size > 0 ? size - 1 : 0);
	if ((out = malloc(*len)) == NULL)
		abort();
	memcpy(out, EVENT_MAGIC, 7);
	out[7] = EVENT_VERSION;
	put32(out + 8, 0x52465456u);
	put32(out + 12, (uint32_t)(*len - EVENT_HEADER_SIZE - 16));
	put32(out + 16, size > 0 ? data[0] : 0);
	if (size > 1)
		memcpy(out + 24, data + 1, size - 1);
	put32(out + 20, crc32(out + 24, *len - EVENT_HEADER_SIZE - 16));
	return (out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t	*f;
	size_t	 len;

	/* The reader must not depend on how the bytes arrive. */
	if (decode(data, size, size == 0 ? 1 : size) !=
	    decode(data, size, 7))
		abort();
	f = framed(data, size, &len);
	if (decode(f, len, len) != decode(f, len, 5))
		abort();
	free(f);
	return (0);
}
