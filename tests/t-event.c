/*
 * t-event.c: the event encoding round trip, and what the reader says about
 * truncated and corrupt input.
 */
#include "config.h"

#include "vramtrace.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define NEVENTS 18

static void
sample(struct event *evs)
{
	static const char	*host = "node-7";
	struct event		*e;
	int			 i;

	memset(evs, 0, NEVENTS * sizeof *evs);
	for (i = 0; i < NEVENTS; i++)
		evs[i].time_ns = 1700000000000000000ULL + (uint64_t)i * 1000;
	e = &evs[0];
	e->type = EVENT_STRING;
	e->u.string.id = 1;
	e->u.string.length = (uint32_t)strlen(host);
	e->u.string.text = host;
	e = &evs[1];
	e->type = EVENT_PROCESS_START;
	e->u.process.pid = 4242;
	e->u.process.rank = 1;
	e->u.process.local_rank = -1;
	e->u.process.host = 1;
	e->u.process.flags = EVENT_PROCESS_ASYNC_ALLOCATOR;
	e = &evs[2];
	e->type = EVENT_ALLOC;
	e->u.alloc.address = 0x7f0000001000ULL;
	e->u.alloc.bytes = 3ULL << 30;
	e->u.alloc.requested = EVENT_NONE;
	e->u.alloc.stream = 13;
	e->u.alloc.correlation = 99;
	e->u.alloc.device = 3;
	e->u.alloc.layer = EVENT_LAYER_POOL;
	evs[3] = evs[2];
	evs[3].type = EVENT_FREE;
	e = &evs[4];
	e->type = EVENT_MEMCPY;
	e->u.memcpy.bytes = 1 << 20;
	e->u.memcpy.stream = 14;
	e->u.memcpy.end_ns = evs[4].time_ns + 500;
	e->u.memcpy.src_device = 0;
	e->u.memcpy.dst_device = -1;
	e->u.memcpy.kind = EVENT_COPY_DTOH;
	for (i = 5; i < 9; i++) {
		e = &evs[i];
		e->type = (uint8_t)(EVENT_STREAM_CREATE + (i - 5));
		e->u.stream.stream = 13;
		e->u.stream.handle = 0x55668fa023d0ULL;
		e->u.stream.context = 1;
		e->u.stream.priority = -2;
		e->u.stream.flags = 2;
	}
	evs[9].type = EVENT_STEP_BEGIN;
	evs[9].u.step.step = 4;
	evs[10].type = EVENT_STEP_END;
	evs[10].u.step.step = -1;
	evs[11].type = EVENT_MARK;
	evs[11].u.step.name = 1;
	e = &evs[12];
	e->type = EVENT_OFFLOAD;
	e->u.offload.tensor = 7;
	e->u.offload.storage = 0x7f0000002000ULL;
	e->u.offload.generation = 3;
	e->u.offload.bytes = 4096;
	e->u.offload.stream = EVENT_NONE;
	e->u.offload.kind = EVENT_OFFLOAD_DEDUPE_RELEASE;
	evs[13].type = EVENT_DROPPED;
	evs[13].u.dropped.count = 12;
	evs[14].type = EVENT_DEVICE;
	evs[14].u.device.device = 0;
	evs[14].u.device.total_bytes = 150ULL << 30;
	evs[15].type = EVENT_PROCESS_END;
	evs[15].u.process.pid = 4242;
	e = &evs[16];
	e->type = EVENT_CHECK_STEP;
	e->u.check_step.step = 3;
	e->u.check_step.packs = 180;
	e->u.check_step.unpacks = 179;
	e->u.check_step.checked = 179;
	e->u.check_step.differ = 2;
	e->u.check_step.packed_bytes = 5ULL << 30;
	e->u.check_step.moved_bytes = 4ULL << 30;
	e->u.check_step.engine = 1;
	e->u.check_step.device = 0;
	e = &evs[17];
	e->type = EVENT_CHECK_DIFF;
	e->u.check_diff.step = 3;
	e->u.check_diff.unpack_ns = evs[17].time_ns + 90000000;
	e->u.check_diff.index = 41;
	e->u.check_diff.bytes = 32 << 20;
	e->u.check_diff.engine = 1;
	e->u.check_diff.pack_site = 1;
	e->u.check_diff.where = 1;
	e->u.check_diff.unpack_site = 0;
	e->u.check_diff.shape = 1;
	e->u.check_diff.dtype = 1;
	e->u.check_diff.detail = 1;
	e->u.check_diff.differs = EVENT_CHECK_CONTENTS | EVENT_CHECK_STRIDES;
	e->u.check_diff.device = -1;
}


static int
same(const struct event *a, const struct event *b)
{
	if (a->type != b->type || a->time_ns != b->time_ns)
		return (0);
	if (a->type == EVENT_STRING)
		return (a->u.string.id == b->u.string.id &&
		    a->u.string.length == b->u.string.length &&
		    memcmp(a->u.string.text, b->u.string.text,
		    a->u.string.length) == 0);
	/* Compare the union field by field through a re-encoding. */
	return (memcmp(&a->u, &b->u, sizeof a->u) == 0);
}

static void
free_strings(struct event *evs, int n)
{
	int	k;

	for (k = 0; k < n; k++) {
		if (evs[k].type == EVENT_STRING)
			free((char *)evs[k].u.string.text);
	}
}

/* Decode everything in buf fed in pieces of `chunk` bytes. */
static int
decode(const unsigned char *buf, size_t len, size_t chunk, struct event *out,
    int max, char **cause)
{
	struct event_reader	r;
	struct event		ev;
	size_t			off;
	int			n = 0, got = 0;

	*cause = NULL;
	event_reader_init(&r, "test.vtr");
	/* On failure the strings copied so far are freed here. */
	for (off = 0; off < len; off += chunk) {
		event_reader_feed(&r, buf + off,
		    off + chunk > len ? len - off : chunk);
		while ((got = event_reader_next(&r, &ev, cause)) == 1) {
			if (n < max) {
				out[n] = ev;
				if (ev.type == EVENT_STRING) {
					/* Copy: the text lives in the reader. */
					char *t = xstrndup(ev.u.string.text,
					    ev.u.string.length);
					out[n].u.string.text = t;
				}
			}
			n++;
		}
		if (got < 0)
			break;
	}
	if (got >= 0 && event_reader_finish(&r, cause) == 0) {
		event_reader_free(&r);
		return (n);
	}
	event_reader_free(&r);
	free_strings(out, n < max ? n : max);
	return (-1);
}

/* Encode ev alone and say whether the reader refuses it, saying why. */
static int
refused(const struct event *ev, const char *why)
{
	struct event_buffer	 b;
	struct event		 got[2];
	char			*cause;
	int			 n, ok;

	event_buffer_init(&b);
	event_buffer_header(&b);
	event_buffer_add(&b, ev);
	event_buffer_close_frame(&b);
	n = decode(b.data, b.size, 4096, got, 2, &cause);
	ok = n < 0 && cause != NULL && strstr(cause, why) != NULL;
	free(cause);
	event_buffer_free(&b);
	return (ok);
}

int
main(void)
{
	struct event		evs[NEVENTS], got[NEVENTS * 2];
	struct event_buffer	b;
	char			*cause;
	size_t			 cut, chunks[] = { 1, 7, 4096 }, i;
	size_t			 boundary = 0;
	int			 n, k, all_same, bad_cuts, named, caught;

	tap_plan(12);
	sample(evs);
	event_buffer_init(&b);
	event_buffer_header(&b);
	for (k = 0; k < NEVENTS; k++) {
		if (k == 8) {
			event_buffer_close_frame(&b);
			boundary = b.size;
		}
		event_buffer_add(&b, &evs[k]);
	}
	event_buffer_close_frame(&b);

	for (i = 0; i < 3; i++) {
		n = decode(b.data, b.size, chunks[i], got, NEVENTS * 2,
		    &cause);
		all_same = n == NEVENTS;
		for (k = 0; all_same && k < NEVENTS; k++)
			all_same = same(&evs[k], &got[k]);
		tap_ok(all_same, "round trip of every event type, fed %zu "
		    "bytes at a time", chunks[i]);
		if (n > 0)
			free_strings(got, n < NEVENTS * 2 ? n : NEVENTS * 2);
		free(cause);
	}

	/*
	 * Every truncation is an error that names an offset, except at a
	 * frame boundary, where the input is a shorter but whole stream.
	 */
	bad_cuts = named = 0;
	for (cut = 0; cut < b.size; cut++) {
		if (cut == EVENT_HEADER_SIZE || cut == boundary)
			continue;
		n = decode(b.data, cut, 4096, got, NEVENTS * 2, &cause);
		if (n > 0)
			free_strings(got, n < NEVENTS * 2 ? n : NEVENTS * 2);
		if (n >= 0)
			bad_cuts++;
		else if (cause != NULL && strstr(cause, "test.vtr: ") ==
		    cause && strstr(cause, "at offset ") != NULL)
			named++;
		free(cause);
	}
	tap_eq(bad_cuts, 0, "no truncation inside a frame of %zu bytes "
	    "decodes cleanly", b.size);
	tap_eq(named, (int64_t)b.size - 2, "each truncation names the file "
	    "and an offset");

	/* Flipping any bit of any byte is caught. */
	caught = 0;
	for (cut = 0; cut < b.size; cut++) {
		b.data[cut] ^= 0x04;
		n = decode(b.data, b.size, 4096, got, NEVENTS * 2, &cause);
		if (n > 0)
			free_strings(got, n < NEVENTS * 2 ? n : NEVENTS * 2);
		b.data[cut] ^= 0x04;
		if (n < 0)
			caught++;
		free(cause);
	}
	tap_eq(caught, (int64_t)b.size, "every flipped byte is reported as "
	    "corrupt");

	b.data[7] = 9;
	n = decode(b.data, b.size, 4096, got, NEVENTS, &cause);
	tap_ok(n < 0 && cause != NULL && strstr(cause, "version 9") != NULL,
	    "a newer encoding version is refused: %s", cause ? cause : "");
	free(cause);
	b.data[7] = EVENT_VERSION;

	n = decode((const unsigned char *)"SQLite format 3", 15, 4096, got,
	    NEVENTS, &cause);
	tap_ok(n < 0 && cause != NULL && strstr(cause, "bad magic") != NULL,
	    "another file type is refused: %s", cause ? cause : "");
	free(cause);
	n = decode(b.data, 0, 4096, got, NEVENTS, &cause);
	tap_ok(n < 0 && cause != NULL && strstr(cause, "empty") != NULL,
	    "empty input is refused: %s", cause ? cause : "");
	free(cause);

	got[0] = evs[17];
	got[0].u.check_diff.differs = EVENT_CHECK_STRIDES;
	got[1] = evs[16];
	got[1].u.check_step.differ = got[1].u.check_step.checked + 1;
	tap_ok(refused(&got[0], "bad check-diff record") &&
	    refused(&got[1], "bad check-step record"),
	    "a check difference of strides alone, a step with more "
	    "differences than checks, are refused");

	memset(&got[0], 0, sizeof got[0]);
	got[0].type = EVENT_TYPE_MAX;
	tap_ok(event_buffer_add(&b, &got[0]) == -1,
	    "an unknown type cannot be encoded");
	tap_ok(strcmp(event_layer_name(EVENT_LAYER_HOST), "host") == 0 &&
	    strcmp(event_offload_kind_name(EVENT_OFFLOAD_COPY), "offload") == 0,
	    "layer and offload kind names");
	event_buffer_free(&b);
	return (tap_done());
}
