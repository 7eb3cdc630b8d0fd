/*
 * mkspool.c: write a spool file (.vtr) from a text scenario, so that tests
 * can describe a recorded run in a few readable lines and feed it through
 * the real writer with `vramtrace replay`.
 *
 * usage: mkspool IN.txt OUT.vtr [--truncate N] [--corrupt N]
 *
 * One event per line: TYPE TIME_NS key=value ...  with TYPE one of the
 * names of event_type_name() ("alloc", "free", "memcpy", "stream-create",
 * "step-end", "offload", ...).  Keys are the field names of event.h; the
 * values of name, host, command, source and site are strings (double quotes
 * allowed) that become EVENT_STRING records; a site is frames separated by
 * '|', each "function@file:line", innermost first.  layer= takes a layer
 * name, kind= an offload kind name or a copy kind number; set_check() has
 * the offload check's keys.  '#' starts a comment.  "string TIME id=N
 * text=TEXT" defines string id N itself, as a hostile producer could.
 * --truncate N cuts the output after N bytes; --corrupt N flips a bit of
 * byte N.
 */
#include "config.h"

#include "vramtrace.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct strings {
	char		**text;
	uint32_t	  n;
};

static uint32_t
intern(struct strings *st, struct event_buffer *b, const char *text)
{
	struct event	ev;
	uint32_t	i;

	for (i = 1; i <= st->n; i++) {
		if (strcmp(st->text[i - 1], text) == 0)
			return (i);
	}
	st->text = xreallocarray(st->text, st->n + 1, sizeof *st->text);
	st->text[st->n++] = xstrdup(text);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STRING;
	ev.u.string.id = st->n;
	ev.u.string.length = (uint32_t)strlen(text);
	ev.u.string.text = text;
	if (event_buffer_add(b, &ev) != 0)
		fatal("cannot encode a string");
	return (st->n);
}

static char *
site_text(const char *spec)
{
	char	*out = xstrdup(""), *copy, *frame, *save, *at, *colon, *next;

	copy = xstrdup(spec);
	for (frame = strtok_r(copy, "|", &save); frame != NULL;
	    frame = strtok_r(NULL, "|", &save)) {
		at = strchr(frame, '@');
		colon = at != NULL ? strrchr(at, ':') : NULL;
		if (at == NULL || colon == NULL)
			fatal("bad frame %s (want function@file:line)", frame);
		*at = *colon = '\0';
		xasprintf(&next, "%s%s\t%s\t%s\n", out, frame, at + 1,
		    colon + 1);
		free(out);
		out = next;
	}
	free(copy);
	return (out);
}

static uint64_t
number(const char *key, const char *v)
{
	char		*end;
	unsigned long long n;

	if (strcmp(v, "none") == 0)
		return (EVENT_NONE);
	n = strtoull(v, &end, 0);
	if (*end != '\0' && !(v[0] == '-' && *end == '\0'))
		fatal("%s=%s is not a number", key, v);
	if (v[0] == '-')
		return ((uint64_t)strtoll(v, NULL, 0));
	return (n);
}

static int
named(const char *v, const char *(*name)(unsigned int), unsigned int max)
{
	unsigned int	i;

	for (i = 0; i < max; i++) {
		if (name(i) != NULL && strcmp(name(i), v) == 0)
			return ((int)i);
	}
	return ((int)number("kind", v));
}

/*
 * The offload check's keys: check-step step, packs, unpacks, checked,
 * differ, packed, moved, engine, device; check-diff step, index, bytes,
 * unpack (ns), differs, device and the strings engine, where, shape,
 * dtype, detail, pack_site and unpack_site (in site= syntax).
 */
static void
set_check(struct event *ev, const char *key, const char *v,
    struct strings *st, struct event_buffer *b)
{
	struct event_check_step	*cs = &ev->u.check_step;
	struct event_check_diff	*cd = &ev->u.check_diff;
	char			*site;

#define IS(k) (strcmp(key, k) == 0)
	if (IS("pack_site") || IS("unpack_site")) {
		site = site_text(v);
		*(IS("pack_site") ? &cd->pack_site : &cd->unpack_site) =
		    intern(st, b, site);
		free(site);
	} else if (IS("engine") && ev->type == EVENT_CHECK_STEP)
		cs->engine = intern(st, b, v);
	else if (IS("device") && ev->type == EVENT_CHECK_STEP)
		cs->device = (int32_t)number(key, v);
	else if (IS("step") && ev->type == EVENT_CHECK_STEP)
		cs->step = (int64_t)number(key, v);
	else if (ev->type == EVENT_CHECK_STEP) {
		if (IS("packs")) cs->packs = number(key, v);
		else if (IS("unpacks")) cs->unpacks = number(key, v);
		else if (IS("checked")) cs->checked = number(key, v);
		else if (IS("differ")) cs->differ = number(key, v);
		else if (IS("packed")) cs->packed_bytes = number(key, v);
		else if (IS("moved")) cs->moved_bytes = number(key, v);
		else fatal("unknown key %s", key);
	} else if (IS("engine")) cd->engine = intern(st, b, v);
	else if (IS("where")) cd->where = intern(st, b, v);
	else if (IS("shape")) cd->shape = intern(st, b, v);
	else if (IS("dtype")) cd->dtype = intern(st, b, v);
	else if (IS("detail")) cd->detail = intern(st, b, v);
	else if (IS("step")) cd->step = (int64_t)number(key, v);
	else if (IS("index")) cd->index = number(key, v);
	else if (IS("bytes")) cd->bytes = number(key, v);
	else if (IS("unpack")) cd->unpack_ns = number(key, v);
	else if (IS("differs")) cd->differs = (uint32_t)number(key, v);
	else if (IS("device")) cd->device = (int32_t)number(key, v);
	else fatal("unknown key %s", key);
#undef IS
}

static void
set_field(struct event *ev, const char *key, const char *v,
    struct strings *st, struct event_buffer *b)
{
	char	*site;

#define IS(k) (strcmp(key, k) == 0)
	if (IS("name") || IS("host") || IS("command") || IS("source") ||
	    IS("job")) {
		uint32_t id = intern(st, b, v);
		if (IS("name") && ev->type == EVENT_DEVICE)
			ev->u.device.name = id;
		else if (IS("name"))
			ev->u.step.name = id;
		else if (IS("host"))
			ev->u.process.host = id;
		else if (IS("command"))
			ev->u.process.command = id;
		else if (IS("job"))
			ev->u.process.job = id;
		else
			ev->u.dropped.source = id;
	} else if (IS("site")) {
		site = site_text(v);
		ev->u.alloc.site = intern(st, b, site);
		free(site);
	} else if (IS("layer"))
		ev->u.alloc.layer = (uint8_t)named(v, event_layer_name,
		    EVENT_LAYER_MAX);
	else if (IS("kind") && ev->type == EVENT_OFFLOAD)
		ev->u.offload.kind = (uint8_t)named(v,
		    event_offload_kind_name, EVENT_OFFLOAD_KIND_MAX);
	else if (IS("kind"))
		ev->u.memcpy.kind = (uint8_t)number(key, v);
	else if (ev->type == EVENT_ALLOC || ev->type == EVENT_FREE) {
		if (IS("address")) ev->u.alloc.address = number(key, v);
		else if (IS("bytes")) ev->u.alloc.bytes = number(key, v);
		else if (IS("requested")) ev->u.alloc.requested = number(key, v);
		else if (IS("stream")) ev->u.alloc.stream = number(key, v);
		else if (IS("correlation"))
			ev->u.alloc.correlation = number(key, v);
		else if (IS("device"))
			ev->u.alloc.device = (int32_t)number(key, v);
		else fatal("unknown key %s", key);
	} else if (ev->type == EVENT_MEMCPY) {
		if (IS("bytes")) ev->u.memcpy.bytes = number(key, v);
		else if (IS("stream")) ev->u.memcpy.stream = number(key, v);
		else if (IS("end")) ev->u.memcpy.end_ns = number(key, v);
		else if (IS("src")) ev->u.memcpy.src_device =
		    (int32_t)number(key, v);
		else if (IS("dst")) ev->u.memcpy.dst_device =
		    (int32_t)number(key, v);
		else fatal("unknown key %s", key);
	} else if (ev->type >= EVENT_STREAM_CREATE &&
	    ev->type <= EVENT_CONTEXT_DESTROY) {
		if (IS("stream")) ev->u.stream.stream = number(key, v);
		else if (IS("handle")) ev->u.stream.handle = number(key, v);
		else if (IS("context")) ev->u.stream.context = number(key, v);
		else if (IS("device")) ev->u.stream.device =
		    (int32_t)number(key, v);
		else if (IS("priority")) ev->u.stream.priority =
		    (int32_t)number(key, v);
		else if (IS("flags")) ev->u.stream.flags =
		    (uint32_t)number(key, v);
		else fatal("unknown key %s", key);
	} else if (ev->type == EVENT_OFFLOAD) {
		if (IS("tensor")) ev->u.offload.tensor = number(key, v);
		else if (IS("storage")) ev->u.offload.storage = number(key, v);
		else if (IS("generation"))
			ev->u.offload.generation = number(key, v);
		else if (IS("bytes")) ev->u.offload.bytes = number(key, v);
		else if (IS("stream")) ev->u.offload.stream = number(key, v);
		else if (IS("device")) ev->u.offload.device =
		    (int32_t)number(key, v);
		else fatal("unknown key %s", key);
	} else if (ev->type == EVENT_CHECK_STEP || ev->type == EVENT_CHECK_DIFF)
		set_check(ev, key, v, st, b);
	else if (IS("step"))
		ev->u.step.step = (int64_t)number(key, v);
	else if (IS("pid"))
		ev->u.process.pid = (uint32_t)number(key, v);
	else if (IS("rank"))
		ev->u.process.rank = (int32_t)number(key, v);
	else if (IS("local_rank"))
		ev->u.process.local_rank = (int32_t)number(key, v);
	else if (IS("count"))
		ev->u.dropped.count = number(key, v);
	else if (IS("device"))
		ev->u.device.device = (int32_t)number(key, v);
	else if (IS("total"))
		ev->u.device.total_bytes = number(key, v);
	else
		fatal("unknown key %s", key);
#undef IS
}

static void
defaults(struct event *ev)
{
	switch (ev->type) {
	case EVENT_ALLOC:
	case EVENT_FREE:
		ev->u.alloc.requested = ev->u.alloc.stream = EVENT_NONE;
		ev->u.alloc.correlation = EVENT_NONE;
		ev->u.alloc.layer = EVENT_LAYER_POOL;
		break;
	case EVENT_MEMCPY:
		ev->u.memcpy.stream = ev->u.memcpy.correlation = EVENT_NONE;
		break;
	case EVENT_STREAM_CREATE:
	case EVENT_STREAM_DESTROY:
	case EVENT_CONTEXT_CREATE:
	case EVENT_CONTEXT_DESTROY:
		ev->u.stream.handle = ev->u.stream.context = EVENT_NONE;
		break;
	case EVENT_OFFLOAD:
		ev->u.offload.stream = EVENT_NONE;
		break;
	case EVENT_STEP_BEGIN:
	case EVENT_STEP_END:
	case EVENT_MARK:
		ev->u.step.step = -1;
		break;
	case EVENT_PROCESS_START:
	case EVENT_PROCESS_END:
		ev->u.process.rank = ev->u.process.local_rank = -1;
		break;
	}
}

/* Split the next token (double quotes group) off *p; NULL at the end. */
static char *
token(char **p)
{
	char	*s = *p, *t, *out;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0' || *s == '#')
		return (NULL);
	out = t = s;
	while (*s != '\0' && !isspace((unsigned char)*s)) {
		if (*s == '"') {
			for (s++; *s != '\0' && *s != '"'; s++)
				*t++ = *s;
			if (*s == '"')
				s++;
		} else
			*t++ = *s++;
	}
	if (*s != '\0')
		s++;
	*t = '\0';
	*p = s;
	return (out);
}

int
main(int argc, char **argv)
{
	struct event_buffer	 b;
	struct strings		 st = { NULL, 0 };
	struct event		 ev;
	FILE			*in, *out;
	char			 line[4096], *p, *tok, *eq;
	long			 truncate_at = -1, corrupt_at = -1;
	unsigned int		 t;
	int			 i, lineno = 0;

	if (argc < 3)
		fatal("usage: mkspool IN.txt OUT.vtr [--truncate N] "
		    "[--corrupt N]");
	for (i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--truncate") == 0)
			truncate_at = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--corrupt") == 0)
			corrupt_at = atol(argv[i + 1]);
	}
	if ((in = fopen(argv[1], "r")) == NULL)
		fatal("%s: cannot open", argv[1]);
	event_buffer_init(&b);
	event_buffer_header(&b);
	while (fgets(line, sizeof line, in) != NULL) {
		lineno++;
		p = line;
		if ((tok = token(&p)) == NULL)
			continue;
		memset(&ev, 0, sizeof ev);
		for (t = 1; t < EVENT_TYPE_MAX; t++) {
			if (strcmp(event_type_name(t), tok) == 0)
				break;
		}
		if (t == EVENT_TYPE_MAX)
			fatal("%s:%d: unknown event %s", argv[1], lineno, tok);
		ev.type = (uint8_t)t;
		defaults(&ev);
		if ((tok = token(&p)) == NULL)
			fatal("%s:%d: missing time", argv[1], lineno);
		ev.time_ns = number("time", tok);
		while ((tok = token(&p)) != NULL) {
			if ((eq = strchr(tok, '=')) == NULL)
				fatal("%s:%d: %s is not key=value", argv[1],
				    lineno, tok);
			*eq = '\0';
			if (t != EVENT_STRING)
				set_field(&ev, tok, eq + 1, &st, &b);
			else if (strcmp(tok, "id") == 0)
				ev.u.string.id = (uint32_t)number(tok, eq + 1);
			else if (strcmp(tok, "text") == 0) {
				ev.u.string.text = eq + 1;
				ev.u.string.length = (uint32_t)strlen(eq + 1);
			} else
				fatal("%s:%d: a string has id and text",
				    argv[1], lineno);
		}
		if (event_buffer_add(&b, &ev) != 0)
			fatal("%s:%d: cannot encode", argv[1], lineno);
		if (b.count >= 100)
			event_buffer_close_frame(&b);
	}
	fclose(in);
	event_buffer_close_frame(&b);
	if (truncate_at >= 0 && (size_t)truncate_at < b.size)
		b.size = (size_t)truncate_at;
	if (corrupt_at >= 0 && (size_t)corrupt_at < b.size)
		b.data[corrupt_at] ^= 0x10;
	if ((out = fopen(argv[2], "wb")) == NULL)
		fatal("%s: cannot create", argv[2]);
	if (fwrite(b.data, 1, b.size, out) != b.size || fclose(out) != 0)
		fatal("%s: cannot write", argv[2]);
	event_buffer_free(&b);
	for (i = 0; (uint32_t)i < st.n; i++)
		free(st.text[i]);
	free(st.text);
	return (0);
}
