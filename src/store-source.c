/*
 * store-source.c: turning one event stream into rows.
 *
 * A source is one producer of events: a connection to the collector, or a
 * spool file being replayed.  It owns what is scoped to that stream: the
 * string ids the producer defined, the process row its PROCESS_START made,
 * and the stacks (site strings) it resolved.  String ids are small
 * integers; they index a growing array.  A site string holds one frame per
 * line, "name<TAB>filename<TAB>line", innermost first.
 */
#include "config.h"

#include "store-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE_STRINGS_MAX	(1u << 24)

struct store_source {
	struct store	*store;
	char		*name;
	char		**strings;	/* by id; NULL: undefined */
	int64_t		*site_ids;	/* by string id; 0: not resolved */
	size_t		 nstrings;
	int64_t		 process_id;
	int64_t		 step_begin;	/* ns of the last STEP_BEGIN; 0 */
};

/* Make a source for stream `name` (for messages) writing into s. */
struct store_source *
store_source_create(struct store *s, const char *name)
{
	struct store_source	*src;

	src = xcalloc(1, sizeof *src);
	src->store = s;
	src->name = xstrdup(name);
	return (src);
}

/* Free a source.  What it wrote stays in the store. */
void
store_source_free(struct store_source *src)
{
	size_t	i;

	if (src == NULL)
		return;
	for (i = 0; i < src->nstrings; i++)
		free(src->strings[i]);
	free(src->strings);
	free(src->site_ids);
	free(src->name);
	free(src);
}

static int
source_error(struct store_source *src, char **cause, const char *fmt, ...)
    printflike(3, 4);

static int
source_error(struct store_source *src, char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (cause == NULL)
		return (-1);
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(cause, "%s: %s", src->name, msg);
	free(msg);
	return (-1);
}

static const char *
source_string(struct store_source *src, uint32_t id)
{
	if (id == 0 || id >= src->nstrings)
		return (NULL);
	return (src->strings[id]);
}

static int
define_string(struct store_source *src, const struct event_string *es,
    char **cause)
{
	size_t	n;

	if (es->id == 0 || es->id >= SOURCE_STRINGS_MAX)
		return (source_error(src, cause, "string id %" PRIu32
		    " out of range", es->id));
	if (es->id >= src->nstrings) {
		n = src->nstrings == 0 ? 64 : src->nstrings;
		while (n <= es->id)
			n *= 2;
		src->strings = xreallocarray(src->strings, n,
		    sizeof *src->strings);
		src->site_ids = xreallocarray(src->site_ids, n,
		    sizeof *src->site_ids);
		memset(src->strings + src->nstrings, 0,
		    (n - src->nstrings) * sizeof *src->strings);
		memset(src->site_ids + src->nstrings, 0,
		    (n - src->nstrings) * sizeof *src->site_ids);
		src->nstrings = n;
	}
	free(src->strings[es->id]);
	src->strings[es->id] = xstrndup(es->text, es->length);
	src->site_ids[es->id] = 0;
	return (0);
}

/* Resolve a site string id into a sites.id (0 for none); -1 on error. */
static int64_t
source_site(struct store_source *src, uint32_t id)
{
	struct store_frame	*frames = NULL;
	const char		*text;
	char			*copy, *line, *save, *f1, *f2;
	size_t			 n = 0;
	int64_t			 site;

	if ((text = source_string(src, id)) == NULL)
		return (0);
	if (src->site_ids[id] != 0)
		return (src->site_ids[id]);
	copy = xstrdup(text);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		frames = xreallocarray(frames, n + 1, sizeof *frames);
		f1 = strchr(line, '\t');
		f2 = f1 != NULL ? strchr(f1 + 1, '\t') : NULL;
		if (f1 != NULL)
			*f1 = '\0';
		if (f2 != NULL)
			*f2 = '\0';
		frames[n].name = line;
		frames[n].filename = f1 != NULL ? f1 + 1 : "??";
		frames[n].line = f2 != NULL ? strtoll(f2 + 1, NULL, 10) : 0;
		n++;
	}
	site = store_add_site(src->store, frames, n);
	free(frames);
	free(copy);
	if (site > 0)
		src->site_ids[id] = site;
	return (site);
}

/*
 * Add a process row for this source's PROCESS_START; host and command are
 * the resolved strings.  Returns the processes.id, or -1.
 */
int64_t
store_process(struct store *s, const struct event_process *p,
    const char *host, const char *command, uint64_t start_ns)
{
	sqlite3_stmt	*st = s->stmt[STMT_PROCESS];
	const char	*allocator = NULL;

	if (store_begin(s, NULL) != 0)
		return (-1);
	if (p->flags & EVENT_PROCESS_ASYNC_ALLOCATOR)
		allocator = "async";
	else if (p->flags & EVENT_PROCESS_NATIVE_ALLOCATOR)
		allocator = "native";
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int64(st, 2, p->pid);
	if (p->rank >= 0)
		sqlite3_bind_int(st, 3, p->rank);
	if (p->local_rank >= 0)
		sqlite3_bind_int(st, 4, p->local_rank);
	store_bind_text(st, 5, host);
	store_bind_text(st, 6, command);
	store_bind_text(st, 7, allocator);
	store_bind_opt(st, 8, start_ns == 0 ? EVENT_NONE : start_ns);
	if (store_step_stmt(s, st) != 0)
		return (-1);
	return (sqlite3_last_insert_rowid(s->db));
}

static int
source_alloc(struct store_source *src, const struct event *ev)
{
	struct store		*s = src->store;
	struct store_allocation	 a;
	int64_t			 site;
	int			 rc;

	if ((site = source_site(src, ev->u.alloc.site)) < 0)
		return (-1);
	memset(&a, 0, sizeof a);
	a.process_id = src->process_id;
	a.device = ev->u.alloc.device;
	a.layer = ev->u.alloc.layer;
	a.stream = ev->u.alloc.stream;
	a.address = ev->u.alloc.address;
	a.bytes = ev->u.alloc.bytes;
	a.requested = ev->u.alloc.requested;
	a.correlation = ev->u.alloc.correlation;
	a.site_id = site;
	a.free_requested_ns = a.free_ns = EVENT_NONE;
	if (ev->type == EVENT_ALLOC) {
		a.alloc_ns = ev->time_ns;
		return (store_alloc_begin(s, &a));
	}
	rc = store_alloc_end(s, a.device, a.layer, a.address, ev->time_ns,
	    ev->time_ns);
	if (rc <= 0)
		return (rc);
	/* Freed, but allocated before tracing began. */
	a.alloc_ns = EVENT_NONE;
	a.free_requested_ns = a.free_ns = ev->time_ns;
	return (store_add_allocation(s, &a));
}

static int
source_memcpy(struct store_source *src, const struct event *ev)
{
	struct store		*s = src->store;
	sqlite3_stmt		*st = s->stmt[STMT_MEMCPY];
	const struct event_memcpy *m = &ev->u.memcpy;
	int32_t			 device;

	device = m->kind == EVENT_COPY_HTOD ? m->dst_device : m->src_device;
	sqlite3_bind_int64(st, 1, s->run_id);
	store_bind_id(st, 2, src->process_id);
	sqlite3_bind_int(st, 3, device);
	store_bind_opt(st, 4, m->stream);
	sqlite3_bind_int(st, 5, m->kind);
	sqlite3_bind_int64(st, 6, (int64_t)m->bytes);
	sqlite3_bind_int(st, 7, m->src_device);
	sqlite3_bind_int(st, 8, m->dst_device);
	store_bind_opt(st, 9, ev->time_ns == 0 ? EVENT_NONE : ev->time_ns);
	store_bind_opt(st, 10, m->end_ns == 0 ? EVENT_NONE : m->end_ns);
	store_bind_opt(st, 11, m->correlation);
	return (store_step_stmt(s, st));
}

static int
source_stream(struct store_source *src, const struct event *ev)
{
	if (ev->type == EVENT_STREAM_CREATE)
		return (store_add_stream(src->store, src->process_id,
		    &ev->u.stream, 1, ev->time_ns));
	return (store_end_stream(src->store, src->process_id, &ev->u.stream,
	    ev->time_ns));
}

static int
source_offload(struct store_source *src, const struct event *ev)
{
	struct store		*s = src->store;
	sqlite3_stmt		*st = s->stmt[STMT_OFFLOAD];
	const struct event_offload *o = &ev->u.offload;

	sqlite3_bind_int64(st, 1, s->run_id);
	store_bind_id(st, 2, src->process_id);
	sqlite3_bind_int(st, 3, o->device);
	store_bind_opt(st, 4, o->stream);
	sqlite3_bind_int64(st, 5, (int64_t)ev->time_ns);
	if (s->nsteps > 0)
		sqlite3_bind_int64(st, 6, store_step_of(s, ev->time_ns));
	else
		s->unstepped = 1;
	sqlite3_bind_text(st, 7, event_offload_kind_name(o->kind), -1,
	    SQLITE_STATIC);
	store_bind_opt(st, 8, o->tensor);
	store_bind_opt(st, 9, o->storage);
	store_bind_opt(st, 10, o->generation);
	store_bind_opt(st, 11, o->bytes);
	return (store_step_stmt(s, st));
}

static int
source_misc(struct store_source *src, const struct event *ev)
{
	struct store	*s = src->store;
	sqlite3_stmt	*st;

	switch (ev->type) {
	case EVENT_DROPPED:
		st = s->stmt[STMT_DROPPED];
		sqlite3_bind_int64(st, 1, s->run_id);
		store_bind_id(st, 2, src->process_id);
		store_bind_opt(st, 3, ev->time_ns);
		store_bind_text(st, 4, source_string(src,
		    ev->u.dropped.source));
		sqlite3_bind_int64(st, 5, (int64_t)ev->u.dropped.count);
		return (store_step_stmt(s, st));
	case EVENT_DEVICE:
		st = s->stmt[STMT_DEVICE];
		sqlite3_bind_int64(st, 1, s->run_id);
		store_bind_id(st, 2, src->process_id);
		sqlite3_bind_int(st, 3, ev->u.device.device);
		store_bind_text(st, 4, source_string(src,
		    ev->u.device.name));
		store_bind_opt(st, 5, ev->u.device.total_bytes == 0 ?
		    EVENT_NONE : ev->u.device.total_bytes);
		return (store_step_stmt(s, st));
	case EVENT_PROCESS_END:
		if (src->process_id == 0)
			return (0);
		st = s->stmt[STMT_PROCESS_END];
		sqlite3_bind_int64(st, 1, src->process_id);
		store_bind_opt(st, 2, ev->time_ns);
		return (store_step_stmt(s, st));
	case EVENT_STEP_BEGIN:
		src->step_begin = (int64_t)ev->time_ns;
		return (0);
	case EVENT_STEP_END:
		if (store_add_step(s, ev->u.step.step,
		    (uint64_t)src->step_begin, ev->time_ns,
		    source_string(src, ev->u.step.name)) != 0)
			return (-1);
		src->step_begin = 0;
		return (0);
	case EVENT_MARK:
		return (store_add_mark(s, src->process_id, -1, ev->time_ns,
		    NULL, source_string(src, ev->u.step.name) != NULL ?
		    source_string(src, ev->u.step.name) : "mark"));
	}
	return (0);
}

/*
 * Write one event from this source into the store.  The store must have a
 * run (store_run_begin).  Returns 0, or -1 with *cause set ("NAME: what").
 */
int
store_source_event(struct store_source *src, const struct event *ev,
    char **cause)
{
	struct store	*s = src->store;
	int		 rc = 0;

	if (s->run_id == 0)
		return (source_error(src, cause, "no run to write into"));
	if (store_begin(s, cause) != 0)
		return (-1);
	switch (ev->type) {
	case EVENT_STRING:
		return (define_string(src, &ev->u.string, cause));
	case EVENT_PROCESS_START:
		src->process_id = store_process(s, &ev->u.process,
		    source_string(src, ev->u.process.host),
		    source_string(src, ev->u.process.command), ev->time_ns);
		rc = src->process_id < 0 ? -1 : 0;
		break;
	case EVENT_ALLOC:
	case EVENT_FREE:
		rc = source_alloc(src, ev);
		break;
	case EVENT_MEMCPY:
		rc = source_memcpy(src, ev);
		break;
	case EVENT_STREAM_CREATE:
	case EVENT_STREAM_DESTROY:
		rc = source_stream(src, ev);
		break;
	case EVENT_CONTEXT_CREATE:
	case EVENT_CONTEXT_DESTROY:
		break;		/* contexts matter only through their streams */
	case EVENT_OFFLOAD:
		rc = source_offload(src, ev);
		break;
	default:
		rc = source_misc(src, ev);
		break;
	}
	if (rc != 0)
		return (store_error(s, cause, "cannot write a %s event:",
		    event_type_name(ev->type)));
	return (store_maybe_commit(s, cause));
}
