/*
 * libFuzzer target for the event reader (spool files and the collector
 * socket): each input is fed whole and again in small pieces; every event
 * that decodes is read field by field, and both feeds must agree.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (decode(data, size, size == 0 ? 1 : size) !=
	    decode(data, size, 7))
		abort();	/* the reader must not depend on how bytes arrive */
	return (0);
}
