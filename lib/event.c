/*
 * event.c: the binary encoding of events, for the collector socket and for
 * spool files (.vtr).
 *
 * Layout, all integers little-endian:
 *
 *	header	"VRAMTRC" + version byte (EVENT_VERSION)
 *	frame	u32 magic "VTFR", u32 payload bytes, u32 records, u32 CRC-32
 *		of the payload, then the payload: the records back to back
 *	record	u8 type, u8 zero, u16 body bytes, then the body: u64 time_ns
 *		and the type's fields in the order of event.h
 *
 * Every type but EVENT_STRING has one fixed body size (body_size[]); a
 * string's body is the time, a u32 id and the text.  A process record
 * written before it carried the job (PROCESS_BODY_OLD bytes) is still
 * read, with no job.  A frame is written whole or not at all by the
 * writers, so a torn frame at the end of a file means the writer died: the
 * reader reports it as truncation with its offset, and reports anything
 * else that does not add up as corruption.
 *
 * This file is linked into the traced process too (client.c), so nothing
 * here exits or prints: allocation failures return -1.
 */
#include "config.h"

#include "event.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_MAGIC	0x52465456u	/* "VTFR" little-endian */
#define FRAME_HEAD	16
#define RECORD_HEAD	4
#define PROCESS_BODY_OLD (8 + 24)	/* a process record without its job */

/* Body bytes per type; 0 for variable (EVENT_STRING) or invalid. */
static const uint16_t body_size[EVENT_TYPE_MAX] = {
	[EVENT_PROCESS_START] = 8 + 28,
	[EVENT_PROCESS_END] = 8 + 28,
	[EVENT_ALLOC] = 8 + 40 + 9,
	[EVENT_FREE] = 8 + 40 + 9,
	[EVENT_MEMCPY] = 8 + 32 + 9,
	[EVENT_STREAM_CREATE] = 8 + 24 + 12,
	[EVENT_STREAM_DESTROY] = 8 + 24 + 12,
	[EVENT_CONTEXT_CREATE] = 8 + 24 + 12,
	[EVENT_CONTEXT_DESTROY] = 8 + 24 + 12,
	[EVENT_STEP_BEGIN] = 8 + 12,
	[EVENT_STEP_END] = 8 + 12,
	[EVENT_MARK] = 8 + 12,
	[EVENT_OFFLOAD] = 8 + 40 + 5,
	[EVENT_DROPPED] = 8 + 12,
	[EVENT_DEVICE] = 8 + 16,
	[EVENT_CHECK_STEP] = 8 + 56 + 8,
	[EVENT_CHECK_DIFF] = 8 + 32 + 36,
};

static const char *type_names[EVENT_TYPE_MAX] = {
	[EVENT_PROCESS_START] = "process-start",
	[EVENT_PROCESS_END] = "process-end",
	[EVENT_STRING] = "string",
	[EVENT_ALLOC] = "alloc",
	[EVENT_FREE] = "free",
	[EVENT_MEMCPY] = "memcpy",
	[EVENT_STREAM_CREATE] = "stream-create",
	[EVENT_STREAM_DESTROY] = "stream-destroy",
	[EVENT_CONTEXT_CREATE] = "context-create",
	[EVENT_CONTEXT_DESTROY] = "context-destroy",
	[EVENT_STEP_BEGIN] = "step-begin",
	[EVENT_STEP_END] = "step-end",
	[EVENT_MARK] = "mark",
	[EVENT_OFFLOAD] = "offload",
	[EVENT_DROPPED] = "dropped",
	[EVENT_DEVICE] = "device",
	[EVENT_CHECK_STEP] = "check-step",
	[EVENT_CHECK_DIFF] = "check-diff",
};

static const char *layer_names[EVENT_LAYER_MAX] = {
	[EVENT_LAYER_SEGMENT] = "segment",
	[EVENT_LAYER_POOL] = "pool",
	[EVENT_LAYER_BLOCK] = "block",
	[EVENT_LAYER_HOST] = "host",
};

static const char *offload_names[EVENT_OFFLOAD_KIND_MAX] = {
	[EVENT_OFFLOAD_PACK] = "pack",
	[EVENT_OFFLOAD_COPY] = "offload",
	[EVENT_OFFLOAD_STASH] = "stash",
	[EVENT_OFFLOAD_REAP] = "reap",
	[EVENT_OFFLOAD_DEDUPE_HIT] = "dedupe_hit",
	[EVENT_OFFLOAD_DEDUPE_RELEASE] = "dedupe_release",
	[EVENT_OFFLOAD_UNPACK] = "unpack",
	[EVENT_OFFLOAD_PREFETCH] = "prefetch",
	[EVENT_OFFLOAD_POOL_FALLBACK] = "pool_fallback",
	[EVENT_OFFLOAD_EXIT_SYNC] = "exit_sync",
};

/* The name of an event type, or NULL if t is not one. */
const char *
event_type_name(unsigned int t)
{
	return (t < EVENT_TYPE_MAX ? type_names[t] : NULL);
}

/* The name of a memory layer ("segment", "pool", ...), or NULL. */
const char *
event_layer_name(unsigned int l)
{
	return (l < EVENT_LAYER_MAX ? layer_names[l] : NULL);
}

/* The name of an offload decision ("pack", "reap", ...), or NULL. */
const char *
event_offload_kind_name(unsigned int k)
{
	return (k < EVENT_OFFLOAD_KIND_MAX ? offload_names[k] : NULL);
}

/* The little-endian integer at p (one load where the machine is one). */
static uint32_t
le32(const unsigned char *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

/*
 * CRC-32 (the zlib polynomial), eight bytes a round ("slicing by 8": t[k]
 * is the CRC of a byte followed by k zero bytes), a byte a round for the
 * rest: about a third of the instructions of a byte a round, for the same
 * value.  Every frame is summed by the client's thread and again by the
 * collector.
 */
static uint32_t
crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	static uint32_t	t[8][256];
	static int	ready;
	uint32_t	c, lo, hi;
	unsigned int	i, k;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < 256; i++) {
			c = i;
			for (k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
			t[0][i] = c;
		}
		for (i = 0; i < 256; i++) {
			for (k = 1; k < 8; k++)
				t[k][i] = t[0][t[k - 1][i] & 0xff] ^
				    (t[k - 1][i] >> 8);
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	for (; n >= 8; n -= 8, p += 8) {
		lo = crc ^ le32(p);
		hi = le32(p + 4);
		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		    t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		    t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		    t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
	}
	while (n-- > 0)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return (~crc);
}

static void
put8(unsigned char **p, uint8_t v)
{
	*(*p)++ = v;
}

/*
 * The integers go through a local pointer, byte by byte at constant
 * offsets, so that the compiler merges them into one store or load where
 * the machine is little-endian (through **p it cannot: a byte stored might
 * be *p itself).  The encoding costs the client's thread about half the
 * instructions it did (bench/record/client-cost).
 */
static void
put32(unsigned char **pp, uint32_t v)
{
	unsigned char	*p = *pp;

	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
	*pp = p + 4;
}

static void
put64(unsigned char **pp, uint64_t v)
{
	put32(pp, (uint32_t)v);
	put32(pp, (uint32_t)(v >> 32));
}

static uint32_t
get32(const unsigned char **pp)
{
	const unsigned char	*p = *pp;

	*pp = p + 4;
	return (le32(p));
}

static uint64_t
get64(const unsigned char **pp)
{
	const unsigned char	*p = *pp;

	*pp = p + 8;
	return (le32(p) | (uint64_t)le32(p + 4) << 32);
}

static uint8_t
get8(const unsigned char **p)
{
	return (*(*p)++);
}

/* The bytes ev takes when encoded (record header included). */
size_t
event_encoded_size(const struct event *ev)
{
	if (ev->type == EVENT_STRING)
		return (RECORD_HEAD + 8 + 4 + ev->u.string.length);
	if (ev->type >= EVENT_TYPE_MAX || body_size[ev->type] == 0)
		return (0);
	return (RECORD_HEAD + body_size[ev->type]);
}

static void
encode_check(unsigned char *p, const struct event *ev)
{
	const struct event_check_step	*cs = &ev->u.check_step;
	const struct event_check_diff	*cd = &ev->u.check_diff;

	if (ev->type == EVENT_CHECK_STEP) {
		put64(&p, (uint64_t)cs->step);
		put64(&p, cs->packs);
		put64(&p, cs->unpacks);
		put64(&p, cs->checked);
		put64(&p, cs->differ);
		put64(&p, cs->packed_bytes);
		put64(&p, cs->moved_bytes);
		put32(&p, cs->engine);
		put32(&p, (uint32_t)cs->device);
		return;
	}
	put64(&p, (uint64_t)cd->step);
	put64(&p, cd->unpack_ns);
	put64(&p, cd->index);
	put64(&p, cd->bytes);
	put32(&p, cd->engine);
	put32(&p, cd->pack_site);
	put32(&p, cd->where);
	put32(&p, cd->unpack_site);
	put32(&p, cd->shape);
	put32(&p, cd->dtype);
	put32(&p, cd->detail);
	put32(&p, cd->differs);
	put32(&p, (uint32_t)cd->device);
}

static void
encode_body(unsigned char *p, const struct event *ev)
{
	const struct event_alloc	*a = &ev->u.alloc;
	const struct event_memcpy	*m = &ev->u.memcpy;
	const struct event_stream	*s = &ev->u.stream;
	const struct event_offload	*o = &ev->u.offload;
	const struct event_process	*pr = &ev->u.process;

	put64(&p, ev->time_ns);
	switch (ev->type) {
	case EVENT_PROCESS_START:
	case EVENT_PROCESS_END:
		put32(&p, pr->pid);
		put32(&p, (uint32_t)pr->rank);
		put32(&p, (uint32_t)pr->local_rank);
		put32(&p, pr->host);
		put32(&p, pr->command);
		put32(&p, pr->flags);
		put32(&p, pr->job);
		break;
	case EVENT_STRING:
		put32(&p, ev->u.string.id);
		memcpy(p, ev->u.string.text, ev->u.string.length);
		break;
	case EVENT_ALLOC:
	case EVENT_FREE:
		put64(&p, a->address);
		put64(&p, a->bytes);
		put64(&p, a->requested);
		put64(&p, a->stream);
		put64(&p, a->correlation);
		put32(&p, a->site);
		put32(&p, (uint32_t)a->device);
		put8(&p, a->layer);
		break;
	case EVENT_MEMCPY:
		put64(&p, m->bytes);
		put64(&p, m->stream);
		put64(&p, m->end_ns);
		put64(&p, m->correlation);
		put32(&p, (uint32_t)m->src_device);
		put32(&p, (uint32_t)m->dst_device);
		put8(&p, m->kind);
		break;
	case EVENT_STREAM_CREATE:
	case EVENT_STREAM_DESTROY:
	case EVENT_CONTEXT_CREATE:
	case EVENT_CONTEXT_DESTROY:
		put64(&p, s->stream);
		put64(&p, s->handle);
		put64(&p, s->context);
		put32(&p, (uint32_t)s->device);
		put32(&p, (uint32_t)s->priority);
		put32(&p, s->flags);
		break;
	case EVENT_STEP_BEGIN:
	case EVENT_STEP_END:
	case EVENT_MARK:
		put64(&p, (uint64_t)ev->u.step.step);
		put32(&p, ev->u.step.name);
		break;
	case EVENT_OFFLOAD:
		put64(&p, o->tensor);
		put64(&p, o->storage);
		put64(&p, o->generation);
		put64(&p, o->bytes);
		put64(&p, o->stream);
		put32(&p, (uint32_t)o->device);
		put8(&p, o->kind);
		break;
	case EVENT_DROPPED:
		put64(&p, ev->u.dropped.count);
		put32(&p, ev->u.dropped.source);
		break;
	case EVENT_DEVICE:
		put64(&p, ev->u.device.total_bytes);
		put32(&p, (uint32_t)ev->u.device.device);
		put32(&p, ev->u.device.name);
		break;
	case EVENT_CHECK_STEP:
	case EVENT_CHECK_DIFF:
		encode_check(p, ev);
		break;
	}
}

/* Set up an empty buffer. */
void
event_buffer_init(struct event_buffer *b)
{
	memset(b, 0, sizeof *b);
	b->frame = SIZE_MAX;
}

/* Release a buffer's memory; it may be initialised again. */
void
event_buffer_free(struct event_buffer *b)
{
	free(b->data);
	event_buffer_init(b);
}

static int
buffer_reserve(struct event_buffer *b, size_t more)
{
	unsigned char	*p;
	size_t		 want;

	if (b->size + more <= b->alloc)
		return (0);
	want = b->alloc == 0 ? 65536 : b->alloc;
	while (want < b->size + more)
		want *= 2;
	if ((p = realloc(b->data, want)) == NULL)
		return (-1);
	b->data = p;
	b->alloc = want;
	return (0);
}

/* Append the stream header (magic and version).  0, or -1 out of memory. */
int
event_buffer_header(struct event_buffer *b)
{
	if (buffer_reserve(b, EVENT_HEADER_SIZE) != 0)
		return (-1);
	memcpy(b->data + b->size, EVENT_MAGIC, 7);
	b->data[b->size + 7] = EVENT_VERSION;
	b->size += EVENT_HEADER_SIZE;
	return (0);
}

/*
 * Finish the open frame, if any: fill in its length, count and CRC.  After
 * this the buffer's bytes can be written out whole.  0, or -1.
 */
int
event_buffer_close_frame(struct event_buffer *b)
{
	unsigned char	*p;
	size_t		 payload;

	if (b->frame == SIZE_MAX)
		return (0);
	payload = b->size - b->frame - FRAME_HEAD;
	p = b->data + b->frame;
	put32(&p, FRAME_MAGIC);
	put32(&p, (uint32_t)payload);
	put32(&p, b->count);
	put32(&p, crc32_update(0, b->data + b->frame + FRAME_HEAD, payload));
	b->frame = SIZE_MAX;
	b->count = 0;
	return (0);
}

/*
 * Append one record, opening a frame if none is open and closing the open
 * one first when the record would not fit in it.  Returns 0; -1 if the
 * event is invalid (unknown type, string too long) or memory ran out.
 */
int
event_buffer_add(struct event_buffer *b, const struct event *ev)
{
	unsigned char	*p;
	size_t		 n;

	if ((n = event_encoded_size(ev)) == 0)
		return (-1);
	if (ev->type == EVENT_STRING && ev->u.string.length > EVENT_STRING_MAX)
		return (-1);
	if (b->frame != SIZE_MAX &&
	    b->size - b->frame - FRAME_HEAD + n > EVENT_FRAME_MAX)
		event_buffer_close_frame(b);
	if (buffer_reserve(b, n + FRAME_HEAD) != 0)
		return (-1);
	if (b->frame == SIZE_MAX) {
		b->frame = b->size;
		b->size += FRAME_HEAD;
	}
	p = b->data + b->size;
	put8(&p, ev->type);
	put8(&p, 0);
	p[0] = (unsigned char)((n - RECORD_HEAD) & 0xff);
	p[1] = (unsigned char)((n - RECORD_HEAD) >> 8);
	encode_body(p + 2, ev);
	b->size += n;
	b->count++;
	return (0);
}

/* Forget the bytes written (after they were sent); keeps the memory. */
void
event_buffer_reset(struct event_buffer *b)
{
	b->size = 0;
	b->frame = SIZE_MAX;
	b->count = 0;
}

/* Set up a reader; name is used in messages and must outlive the reader. */
void
event_reader_init(struct event_reader *r, const char *name)
{
	memset(r, 0, sizeof *r);
	r->name = name;
}

/* Release a reader's memory. */
void
event_reader_free(struct event_reader *r)
{
	free(r->data);
	r->data = NULL;
	r->size = r->alloc = r->pos = 0;
}

/*
 * Give the reader more bytes.  It keeps a copy, so buf may be reused at
 * once.  Returns 0, or -1 out of memory.
 */
int
event_reader_feed(struct event_reader *r, const void *buf, size_t len)
{
	unsigned char	*p;
	size_t		 want;

	if (r->pos > 0 && r->pos == r->size) {
		r->offset += r->pos;
		r->frame_end = 0;
		r->size = r->pos = 0;
	} else if (r->pos > 65536 && r->frame_left == 0) {
		memmove(r->data, r->data + r->pos, r->size - r->pos);
		if (r->frame_end != 0)
			r->frame_end -= r->pos;
		r->offset += r->pos;
		r->size -= r->pos;
		r->pos = 0;
	}
	if (r->size + len > r->alloc) {
		want = r->alloc == 0 ? 65536 : r->alloc;
		while (want < r->size + len)
			want *= 2;
		if ((p = realloc(r->data, want)) == NULL)
			return (-1);
		r->data = p;
		r->alloc = want;
	}
	memcpy(r->data + r->size, buf, len);
	r->size += len;
	return (0);
}

static int
reader_error(struct event_reader *r, char **cause, uint64_t at,
    const char *fmt, ...) printflike(4, 5);

static int
reader_error(struct event_reader *r, char **cause, uint64_t at,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*what = NULL;

	if (cause != NULL) {
		va_start(ap, fmt);
		if (vasprintf(&what, fmt, ap) < 0)
			what = NULL;
		va_end(ap);
		if (asprintf(cause, "%s: %s at offset %" PRIu64, r->name,
		    what != NULL ? what : "corrupt input", at) < 0)
			*cause = NULL;
		free(what);
	}
	return (-1);
}

/*
 * The offload check's records.  A difference names at least one thing
 * other than the layout (EVENT_CHECK_STRIDES alone is no difference).
 */
static int
decode_check(struct event *ev, const unsigned char *p)
{
	struct event_check_step	*cs = &ev->u.check_step;
	struct event_check_diff	*cd = &ev->u.check_diff;

	if (ev->type == EVENT_CHECK_STEP) {
		cs->step = (int64_t)get64(&p);
		cs->packs = get64(&p);
		cs->unpacks = get64(&p);
		cs->checked = get64(&p);
		cs->differ = get64(&p);
		cs->packed_bytes = get64(&p);
		cs->moved_bytes = get64(&p);
		cs->engine = get32(&p);
		cs->device = (int32_t)get32(&p);
		return (cs->differ <= cs->checked ? 0 : -1);
	}
	cd->step = (int64_t)get64(&p);
	cd->unpack_ns = get64(&p);
	cd->index = get64(&p);
	cd->bytes = get64(&p);
	cd->engine = get32(&p);
	cd->pack_site = get32(&p);
	cd->where = get32(&p);
	cd->unpack_site = get32(&p);
	cd->shape = get32(&p);
	cd->dtype = get32(&p);
	cd->detail = get32(&p);
	cd->differs = get32(&p);
	cd->device = (int32_t)get32(&p);
	if ((cd->differs & ~(uint32_t)EVENT_CHECK_ALL) != 0 ||
	    (cd->differs & ~(uint32_t)EVENT_CHECK_STRIDES) == 0)
		return (-1);
	return (0);
}

static int
decode_body(struct event *ev, const unsigned char *p, uint16_t len)
{
	struct event_alloc	*a = &ev->u.alloc;
	struct event_memcpy	*m = &ev->u.memcpy;
	struct event_stream	*s = &ev->u.stream;
	struct event_offload	*o = &ev->u.offload;
	struct event_process	*pr = &ev->u.process;

	ev->time_ns = get64(&p);
	switch (ev->type) {
	case EVENT_PROCESS_START:
	case EVENT_PROCESS_END:
		pr->pid = get32(&p);
		pr->rank = (int32_t)get32(&p);
		pr->local_rank = (int32_t)get32(&p);
		pr->host = get32(&p);
		pr->command = get32(&p);
		pr->flags = get32(&p);
		pr->job = len > PROCESS_BODY_OLD ? get32(&p) : 0;
		break;
	case EVENT_STRING:
		ev->u.string.id = get32(&p);
		ev->u.string.length = len - 12u;
		ev->u.string.text = (const char *)p;
		break;
	case EVENT_ALLOC:
	case EVENT_FREE:
		a->address = get64(&p);
		a->bytes = get64(&p);
		a->requested = get64(&p);
		a->stream = get64(&p);
		a->correlation = get64(&p);
		a->site = get32(&p);
		a->device = (int32_t)get32(&p);
		a->layer = get8(&p);
		if (a->layer >= EVENT_LAYER_MAX)
			return (-1);
		break;
	case EVENT_MEMCPY:
		m->bytes = get64(&p);
		m->stream = get64(&p);
		m->end_ns = get64(&p);
		m->correlation = get64(&p);
		m->src_device = (int32_t)get32(&p);
		m->dst_device = (int32_t)get32(&p);
		m->kind = get8(&p);
		break;
	case EVENT_STREAM_CREATE:
	case EVENT_STREAM_DESTROY:
	case EVENT_CONTEXT_CREATE:
	case EVENT_CONTEXT_DESTROY:
		s->stream = get64(&p);
		s->handle = get64(&p);
		s->context = get64(&p);
		s->device = (int32_t)get32(&p);
		s->priority = (int32_t)get32(&p);
		s->flags = get32(&p);
		break;
	case EVENT_STEP_BEGIN:
	case EVENT_STEP_END:
	case EVENT_MARK:
		ev->u.step.step = (int64_t)get64(&p);
		ev->u.step.name = get32(&p);
		break;
	case EVENT_OFFLOAD:
		o->tensor = get64(&p);
		o->storage = get64(&p);
		o->generation = get64(&p);
		o->bytes = get64(&p);
		o->stream = get64(&p);
		o->device = (int32_t)get32(&p);
		o->kind = get8(&p);
		if (o->kind == 0 || o->kind >= EVENT_OFFLOAD_KIND_MAX)
			return (-1);
		break;
	case EVENT_DROPPED:
		ev->u.dropped.count = get64(&p);
		ev->u.dropped.source = get32(&p);
		break;
	case EVENT_DEVICE:
		ev->u.device.total_bytes = get64(&p);
		ev->u.device.device = (int32_t)get32(&p);
		ev->u.device.name = get32(&p);
		break;
	case EVENT_CHECK_STEP:
	case EVENT_CHECK_DIFF:
		return (decode_check(ev, p));
	}
	return (0);
}

static int
reader_frame(struct event_reader *r, char **cause)
{
	const unsigned char	*p = r->data + r->pos;
	uint64_t		 at = r->offset + r->pos;
	uint32_t		 magic, len, count, crc;

	magic = get32(&p);
	len = get32(&p);
	count = get32(&p);
	crc = get32(&p);
	if (magic != FRAME_MAGIC)
		return (reader_error(r, cause, at, "bad frame magic"));
	if (len > EVENT_FRAME_MAX)
		return (reader_error(r, cause, at,
		    "frame of %" PRIu32 " bytes is too large", len));
	if (count == 0 || (uint64_t)count * RECORD_HEAD > len)
		return (reader_error(r, cause, at,
		    "frame claims %" PRIu32 " records in %" PRIu32 " bytes",
		    count, len));
	if (r->size - r->pos - FRAME_HEAD < len)
		return (0);
	if (crc32_update(0, p, len) != crc)
		return (reader_error(r, cause, at, "frame checksum mismatch"));
	r->pos += FRAME_HEAD;
	r->frame_end = r->pos + len;
	r->frame_left = count;
	return (1);
}

/*
 * Decode the next event into *ev.  Returns 1 with an event (strings in it
 * point into the reader's buffer and stay valid until the next feed or
 * next call), 0 when more bytes are needed, -1 on corrupt input with
 * *cause set to "NAME: what at offset N" (caller frees).
 */
int
event_reader_next(struct event_reader *r, struct event *ev, char **cause)
{
	const unsigned char	*p;
	uint64_t		 at;
	uint16_t		 len;
	int			 n;

	if (!r->header_done) {
		if (r->size < EVENT_HEADER_SIZE)
			return (0);
		if (memcmp(r->data, EVENT_MAGIC, 7) != 0)
			return (reader_error(r, cause, 0,
			    "not a vramtrace event stream (bad magic)"));
		if (r->data[7] != EVENT_VERSION)
			return (reader_error(r, cause, 7,
			    "event stream version %u is not supported "
			    "(this vramtrace reads version %u)",
			    r->data[7], EVENT_VERSION));
		r->pos = EVENT_HEADER_SIZE;
		r->header_done = 1;
	}
	if (r->frame_left == 0) {
		if (r->frame_end != 0 && r->pos != r->frame_end)
			return (reader_error(r, cause, r->offset + r->pos,
			    "frame has bytes after its last record"));
		r->frame_end = 0;
		if (r->size - r->pos < FRAME_HEAD)
			return (0);
		if ((n = reader_frame(r, cause)) <= 0)
			return (n);
	}
	at = r->offset + r->pos;
	if (r->frame_end - r->pos < RECORD_HEAD)
		return (reader_error(r, cause, at, "record header past frame"));
	p = r->data + r->pos;
	memset(ev, 0, sizeof *ev);
	ev->type = p[0];
	len = (uint16_t)(p[2] | p[3] << 8);
	if (ev->type == 0 || ev->type >= EVENT_TYPE_MAX)
		return (reader_error(r, cause, at, "unknown record type %u",
		    ev->type));
	if (p[1] != 0)
		return (reader_error(r, cause, at, "bad record flags"));
	if (ev->type == EVENT_STRING ? len < 12 : len != body_size[ev->type] &&
	    !(len == PROCESS_BODY_OLD && (ev->type == EVENT_PROCESS_START ||
	    ev->type == EVENT_PROCESS_END)))
		return (reader_error(r, cause, at,
		    "%s record has %u bytes", type_names[ev->type], len));
	if (r->frame_end - r->pos - RECORD_HEAD < len)
		return (reader_error(r, cause, at, "record runs past its frame"));
	if (decode_body(ev, p + RECORD_HEAD, len) != 0)
		return (reader_error(r, cause, at, "bad %s record",
		    type_names[ev->type]));
	r->pos += RECORD_HEAD + len;
	r->frame_left--;
	return (1);
}

/*
 * Say whether the input ended cleanly: 0 if everything fed was decoded, -1
 * with *cause naming the offset of the torn header, frame or record.
 */
int
event_reader_finish(struct event_reader *r, char **cause)
{
	if (!r->header_done)
		return (reader_error(r, cause, r->offset + r->size,
		    r->size == 0 ? "empty input (no header)" :
		    "truncated header"));
	if (r->frame_left != 0 || r->pos != r->size)
		return (reader_error(r, cause, r->offset + r->pos,
		    "truncated frame"));
	return (0);
}
