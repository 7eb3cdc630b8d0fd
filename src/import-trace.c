/*
 * import-trace.c: a snapshot's segments, blocks and trace entries into
 * rows.
 *
 * Trace entries become allocation rows through the store's live table:
 * alloc starts a block-layer allocation (of the block's bytes, the size
 * it gives rounded as the allocator rounds; that size is the requested
 * bytes), free_requested notes when the
 * program freed it, free_completed ends it; segment_alloc and segment_map
 * start a segment-layer allocation, segment_free and segment_unmap end
 * one.  A free whose allocation happened before the trace began (the trace
 * is a ring buffer) becomes a row with no alloc time.  The snapshot's own
 * segments and blocks are its state at the end: after the trace, whatever
 * they hold that the trace did not leave live was allocated before the
 * trace began, and becomes a row with no alloc time (import_trace_reconcile).
 */
#include "config.h"

#include "import.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * The bytes of the block that PyTorch's caching allocator gives a request
 * of size bytes, which is what a trace entry of the block layer gives: at
 * least IMPORT_BLOCK_MIN, in multiples of it (round_size() with the default
 * settings).  memory_allocated() and a snapshot's blocks count the block.
 * A block served whole from a larger free one, or rounded up under
 * roundup_power2_divisions, is larger still, which the trace cannot tell.
 */
static uint64_t
block_bytes(int64_t size)
{
	if (size == 0 || size > INT64_MAX - IMPORT_BLOCK_MIN)
		return ((uint64_t)size);
	return ((uint64_t)(size + IMPORT_BLOCK_MIN - 1) / IMPORT_BLOCK_MIN *
	    IMPORT_BLOCK_MIN);
}

/*
 * The largest size a trace entry or segment at address may give: inside
 * the address space, and ALLOCATION_BYTES_MAX at most once block_bytes()
 * rounded it up.
 */
static int64_t
size_max(int64_t address)
{
	int64_t	most = (int64_t)(ALLOCATION_BYTES_MAX &
	    ~(uint64_t)(IMPORT_BLOCK_MIN - 1));

	return (address > INT64_MAX - most ? INT64_MAX - address : most);
}

/* The kind of a trace action, by its name (reference.md, section 6). */
static enum import_action_kind
action_kind(const char *action)
{
	static const struct {
		const char		*name;
		enum import_action_kind	 kind;
	} kinds[] = {
		{ "alloc", IMPORT_ACTION_ALLOC },
		{ "free_requested", IMPORT_ACTION_FREE_REQUESTED },
		{ "free_completed", IMPORT_ACTION_FREE_COMPLETED },
		{ "segment_alloc", IMPORT_ACTION_SEGMENT_ALLOC },
		{ "segment_map", IMPORT_ACTION_SEGMENT_ALLOC },
		{ "segment_free", IMPORT_ACTION_SEGMENT_FREE },
		{ "segment_unmap", IMPORT_ACTION_SEGMENT_FREE },
		{ "oom", IMPORT_ACTION_OOM },
		{ "snapshot", IMPORT_ACTION_NOTE },
		{ "annotate", IMPORT_ACTION_NOTE },
	};
	size_t	i;

	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(kinds[i].name, action) == 0)
			return (kinds[i].kind);
	}
	return (strncmp(action, "free_", 5) == 0 ? IMPORT_ACTION_FREE_OTHER :
	    IMPORT_ACTION_OTHER);
}

/*
 * Count a trace entry of action on device, and set *kind to the action's
 * kind.  At most IMPORT_ACTION_MAX distinct actions (PyTorch writes ten):
 * a bound on memory and on the search.  0, or -1 with *cause.
 */
static int
count_action(struct import_state *st, int32_t device, const char *action,
    enum import_action_kind *kind, char **cause)
{
	struct import_action	*a;
	size_t			 i;

	if (strlen(action) >= sizeof a->name) {
		xasprintf(cause, "%s: %s.action is %zu bytes long, more than "
		    "%zu (not a PyTorch memory snapshot)", st->file,
		    import_check_path(st), strlen(action), sizeof a->name - 1);
		return (-1);
	}
	for (i = 0; i < st->nactions; i++) {
		if (strcmp(st->actions[i].name, action) == 0)
			break;
	}
	if (i == st->nactions) {
		if (st->nactions == IMPORT_ACTION_MAX) {
			xasprintf(cause, "%s: %s.action: more than %d "
			    "different actions (not a PyTorch memory "
			    "snapshot)", st->file, import_check_path(st),
			    IMPORT_ACTION_MAX);
			return (-1);
		}
		a = &st->actions[st->nactions++];
		snprintf(a->name, sizeof a->name, "%s", action);
		a->kind = action_kind(action);
		a->count = xcalloc(IMPORT_DEVICE_MAX, sizeof *a->count);
	}
	st->actions[i].count[device]++;
	*kind = st->actions[i].kind;
	return (0);
}

static uint64_t
stream_hash(int32_t device, uint64_t stream)
{
	uint64_t	h = (stream + 1) * 0x9e3779b97f4a7c15ULL;

	return (h ^ (h >> 29) ^ (uint64_t)(uint32_t)device * 0xff51afd7ed558ccdULL);
}

/* Add (device, stream) to the set of streams seen, once. */
static void
note_stream(struct import_state *st, int32_t device, uint64_t stream)
{
	struct import_streams	*s = &st->streams, old;
	size_t			 j, k;

	if (s->keys != NULL) {
		for (j = stream_hash(device, stream) & s->mask;
		    s->keys[j] != 0; j = (j + 1) & s->mask) {
			if (s->keys[j] == stream + 1 && s->devices[j] == device)
				return;
		}
	}
	if (2 * (s->n + 1) > s->mask + 1 || s->keys == NULL) {
		old = *s;
		s->mask = old.keys == NULL ? 63 : 2 * old.mask + 1;
		s->keys = xcalloc(s->mask + 1, sizeof *s->keys);
		s->devices = xcalloc(s->mask + 1, sizeof *s->devices);
		s->n = 0;
		for (k = 0; old.keys != NULL && k <= old.mask; k++) {
			if (old.keys[k] != 0)
				note_stream(st, old.devices[k],
				    old.keys[k] - 1);
		}
		free(old.keys);
		free(old.devices);
	}
	for (j = stream_hash(device, stream) & s->mask; s->keys[j] != 0;
	    j = (j + 1) & s->mask)
		;
	s->keys[j] = stream + 1;
	s->devices[j] = device;
	s->n++;
}

static void
hold(struct import_state *st, const struct import_held *h)
{
	if (st->nheld == st->held_alloc) {
		st->held_alloc = st->held_alloc == 0 ? 256 :
		    2 * st->held_alloc;
		st->held = xreallocarray(st->held, st->held_alloc,
		    sizeof *st->held);
	}
	st->held[st->nheld++] = *h;
}

/*
 * Write one trace entry of device `device` (element `index` of its list).
 * Unknown actions are counted and otherwise skipped.  0, or -1 with
 * *cause.
 */
int
import_trace_entry(struct import_state *st, int32_t device,
    const struct pickle_value *e, size_t index, char **cause)
{
	struct store_allocation	 a;
	const struct pickle_value *v;
	const char		*action;
	enum import_action_kind	 kind;
	int64_t			 addr = -1, size = 0, stream = 0, time_us = -1;
	uint64_t		 t;

	import_check_at(st, IMPORT_AT_TRACE, (size_t)device, index);
	if (import_check_value(st, e, NULL, PICKLE_DICT, 0, &v, cause) != 0 ||
	    import_check_str(st, e, "action", 0, &action, cause) != 0 ||
	    import_check_int(st, e, "time_us", 0, IMPORT_TIME_US_MAX,
	    IMPORT_OPTIONAL, &time_us, cause) != 0)
		return (-1);
	if (time_us < 0) {
		/* PyTorch 2.2 added the times (pytorch/pytorch#112266). */
		xasprintf(cause, "%s: %s.time_us is missing: the trace has no"
		    " times, as PyTorch before 2.2 wrote it; take the snapshot"
		    " again with PyTorch 2.2 or later", st->file,
		    import_check_path(st));
		return (-1);
	}
	if (count_action(st, device, action, &kind, cause) != 0)
		return (-1);
	st->summary->trace_entries++;
	t = (uint64_t)time_us * 1000;
	/*
	 * A device's entries are in the order the allocator made them, which
	 * the live table follows: an entry timed before the one before it
	 * (clocks read apart from the order, or a file made so) takes that
	 * time, so that nothing is freed before it was allocated.
	 */
	if (index > 0 && device == st->entry_device && t < st->entry_ns) {
		t = st->entry_ns;
		st->summary->retimed++;
	}
	st->entry_device = device;
	st->entry_ns = t;
	if (st->first_ns == EVENT_NONE || t < st->first_ns)
		st->first_ns = t;
	if (t > st->last_ns)
		st->last_ns = t;
	if (kind == IMPORT_ACTION_OOM)
		return (store_rows_mark(st->store, 0, device, t, NULL, "oom",
		    cause));
	if (kind == IMPORT_ACTION_NOTE)
		return (0);
	if (import_check_int(st, e, "addr", 0, INT64_MAX, IMPORT_OPTIONAL,
	    &addr, cause) != 0)
		return (-1);
	if (addr < 0)
		return (0);	/* an action we do not know, without an address */
	if (import_check_int(st, e, "size", 0, size_max(addr), 0,
	    &size, cause) != 0 ||
	    import_check_total(st, "size", size, cause) != 0 ||
	    import_check_int(st, e, "stream", 0, INT64_MAX, 0, &stream,
	    cause) != 0)
		return (-1);
	memset(&a, 0, sizeof a);
	a.device = device;
	a.stream = (uint64_t)stream;
	a.address = (uint64_t)addr;
	a.bytes = (uint64_t)size;
	a.requested = EVENT_NONE;
	if (kind == IMPORT_ACTION_ALLOC || kind == IMPORT_ACTION_FREE_OTHER ||
	    kind == IMPORT_ACTION_FREE_REQUESTED ||
	    kind == IMPORT_ACTION_FREE_COMPLETED) {
		a.bytes = block_bytes(size);
		a.requested = (uint64_t)size;
	}
	a.correlation = EVENT_NONE;
	a.alloc_ns = t;
	a.free_requested_ns = a.free_ns = EVENT_NONE;
	note_stream(st, device, a.stream);
	switch (kind) {
	case IMPORT_ACTION_ALLOC:
	case IMPORT_ACTION_SEGMENT_ALLOC:
		a.layer = kind == IMPORT_ACTION_ALLOC ? EVENT_LAYER_BLOCK :
		    EVENT_LAYER_SEGMENT;
		if (import_site_of(st, e, &a.site_id, cause) != 0)
			return (-1);
		return (import_pipe_alloc(st, IMPORT_PIPE_BEGIN, &a, 0, 0,
		    cause));
	case IMPORT_ACTION_FREE_REQUESTED:
		a.layer = EVENT_LAYER_BLOCK;
		return (import_pipe_alloc(st, IMPORT_PIPE_FREE_REQUESTED, &a,
		    t, 0, cause));
	case IMPORT_ACTION_FREE_COMPLETED:
		a.layer = EVENT_LAYER_BLOCK;
		return (import_pipe_alloc(st, IMPORT_PIPE_END, &a, EVENT_NONE,
		    t, cause));
	case IMPORT_ACTION_SEGMENT_FREE:
		a.layer = EVENT_LAYER_SEGMENT;
		return (import_pipe_alloc(st, IMPORT_PIPE_END, &a, t, t,
		    cause));
	default:
		return (0);
	}
}

/*
 * Write block `index` of segment `seg` (written as segment_id), which
 * lies in the segment's bytes: seg_end is the segment's address plus its
 * total size.  0, or -1 with *cause.
 */
static int
insert_block(struct import_state *st, size_t seg, int64_t segment_id,
    const struct store_segment *g, const struct pickle_value *v,
    size_t index, char **cause)
{
	const struct pickle_value *d;
	struct store_block	 b;
	struct import_held	 h;
	int64_t			 end = g->address + g->total_size;

	memset(&b, 0, sizeof b);
	b.segment_id = segment_id;
	b.requested_size = -1;
	import_check_at(st, IMPORT_AT_BLOCK, seg, index);
	if (import_check_value(st, v, NULL, PICKLE_DICT, 0, &d, cause) != 0 ||
	    import_check_int(st, v, "address", g->address, end, 0,
	    &b.address, cause) != 0 ||
	    import_check_int(st, v, "size", 0, end - b.address, 0, &b.size,
	    cause) != 0 ||
	    import_check_int(st, v, "requested_size", 0, INT64_MAX,
	    IMPORT_OPTIONAL, &b.requested_size, cause) != 0 ||
	    import_check_str(st, v, "state", 0, &b.state, cause) != 0 ||
	    import_site_of(st, v, &b.site_id, cause) != 0 ||
	    store_snapshot_block(st->store, &b, cause) != 0)
		return (-1);
	st->summary->blocks++;
	if (strncmp(b.state, "active_", 7) != 0)
		return (0);
	memset(&h, 0, sizeof h);
	h.device = (int32_t)g->device;
	h.layer = EVENT_LAYER_BLOCK;
	h.address = (uint64_t)b.address;
	h.bytes = (uint64_t)b.size;
	h.requested = b.requested_size >= 0 ? (uint64_t)b.requested_size :
	    EVENT_NONE;
	h.stream = (uint64_t)g->stream;
	h.site_id = b.site_id;
	hold(st, &h);
	return (0);
}

/*
 * The segment_pool_id of segment seg (a pair of ints; (0, 0) when
 * missing) as "A,B" in buf.  0, or -1 with *cause.
 */
static int
pool_of(struct import_state *st, const struct pickle_value *seg, char *buf,
    size_t size, char **cause)
{
	const struct pickle_value	*pool;
	int64_t				 id[2] = { 0, 0 };
	size_t				 i;

	pool = pickle_dict_get(seg, "segment_pool_id");
	if (pool != NULL && pickle_type(pool) != PICKLE_TUPLE &&
	    pickle_type(pool) != PICKLE_LIST)
		return (import_check_value(st, seg, "segment_pool_id",
		    PICKLE_TUPLE, 0, &pool, cause));
	if (pool != NULL && pickle_list_len(pool) != 2) {
		xasprintf(cause, "%s: %s.segment_pool_id has %zu items, not 2 "
		    "(not a PyTorch memory snapshot)", st->file,
		    import_check_path(st), pickle_list_len(pool));
		return (-1);
	}
	for (i = 0; pool != NULL && i < 2; i++) {
		if (pickle_int(pickle_list_at(pool, i), &id[i]) != 0) {
			xasprintf(cause, "%s: %s.segment_pool_id[%zu] is a %s, "
			    "not an int (not a PyTorch memory snapshot)",
			    st->file, import_check_path(st), i,
			    pickle_type_name(pickle_type(pickle_list_at(pool,
			    i))));
			return (-1);
		}
	}
	snprintf(buf, size, "%" PRId64 ",%" PRId64, id[0], id[1]);
	return (0);
}

/*
 * Write one segment of the snapshot (element `index` of "segments") with
 * its blocks, and remember what it holds for import_trace_reconcile().  0,
 * or -1 with *cause.
 */
int
import_trace_segment(struct import_state *st, const struct pickle_value *seg,
    size_t index, char **cause)
{
	static const char		*sizes[] = { "allocated_size",
		"active_size", "requested_size" };
	struct store_segment		 g;
	int64_t				*ints[] = { &g.allocated_size,
		&g.active_size, &g.requested_size }, segment_id;
	const struct pickle_value	*blocks, *v;
	struct import_held		 h;
	size_t				 i;
	char				 pool_id[64];

	memset(&g, 0, sizeof g);
	import_check_at(st, IMPORT_AT_SEGMENT, index, 0);
	if (import_check_value(st, seg, NULL, PICKLE_DICT, 0, &v,
	    cause) != 0 ||
	    import_check_int(st, seg, "device", 0, IMPORT_DEVICE_MAX - 1, 0,
	    &g.device, cause) != 0 ||
	    import_check_int(st, seg, "address", 0, INT64_MAX, 0, &g.address,
	    cause) != 0 ||
	    import_check_int(st, seg, "total_size", 0,
	    size_max(g.address), 0, &g.total_size, cause) != 0 ||
	    import_check_total(st, "total_size", g.total_size, cause) != 0)
		return (-1);
	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		if (import_check_int(st, seg, sizes[i], 0, g.total_size, 0,
		    ints[i], cause) != 0)
			return (-1);
	}
	if (import_check_int(st, seg, "stream", 0, INT64_MAX, 0, &g.stream,
	    cause) != 0 ||
	    import_check_str(st, seg, "segment_type", IMPORT_OPTIONAL,
	    &g.segment_type, cause) != 0 ||
	    import_check_value(st, seg, "is_expandable", PICKLE_BOOL,
	    IMPORT_OPTIONAL, &v, cause) != 0 ||
	    import_check_value(st, seg, "blocks", PICKLE_LIST,
	    IMPORT_OPTIONAL, &blocks, cause) != 0 ||
	    pool_of(st, seg, pool_id, sizeof pool_id, cause) != 0)
		return (-1);
	g.pool_id = pool_id;
	if (v != NULL)
		pickle_bool(v, &g.expandable);
	if (import_site_of(st, seg, &g.site_id, cause) != 0 ||
	    store_snapshot_segment(st->store, &g, &segment_id, cause) != 0)
		return (-1);
	st->summary->segments++;
	note_stream(st, (int32_t)g.device, (uint64_t)g.stream);
	memset(&h, 0, sizeof h);
	h.device = (int32_t)g.device;
	h.layer = EVENT_LAYER_SEGMENT;
	h.address = (uint64_t)g.address;
	h.bytes = (uint64_t)g.total_size;
	h.requested = EVENT_NONE;
	h.stream = (uint64_t)g.stream;
	h.site_id = g.site_id;
	hold(st, &h);
	for (i = 0; blocks != NULL && i < pickle_list_len(blocks); i++) {
		if (insert_block(st, index, segment_id, &g,
		    pickle_list_at(blocks, i), i, cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * After the trace: write what the snapshot holds that the trace did not
 * leave live (allocated before the trace began, no alloc time), and give
 * what it left live the size of its block where that is larger than the
 * trace's rounding made it (a block the allocator served whole from a
 * larger free one).  0, or -1.
 */
int
import_trace_reconcile(struct import_state *st, char **cause)
{
	struct store_allocation	 a;
	struct import_held	*h;
	size_t			 i;

	for (i = 0; i < st->nheld; i++) {
		h = &st->held[i];
		if (store_rows_alloc_live_size(st->store, h->device, h->layer,
		    h->address, h->bytes))
			continue;
		memset(&a, 0, sizeof a);
		a.device = h->device;
		a.layer = h->layer;
		a.stream = h->stream;
		a.address = h->address;
		a.bytes = h->bytes;
		a.requested = h->requested;
		a.site_id = h->site_id;
		a.correlation = EVENT_NONE;
		a.alloc_ns = a.free_requested_ns = a.free_ns = EVENT_NONE;
		if (store_rows_allocation(st->store, &a, cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * The trace's counts per action and its streams, to the store (after the
 * parse).  0, or -1 with *cause.
 */
int
import_trace_finish(struct import_state *st, char **cause)
{
	struct import_streams	*s = &st->streams;
	struct event_stream	 es;
	size_t			 i, k;

	for (i = 0; i < st->nactions; i++) {
		for (k = 0; k < IMPORT_DEVICE_MAX; k++) {
			if (st->actions[i].count[k] > 0 &&
			    store_snapshot_action(st->store, (int32_t)k,
			    st->actions[i].name, st->actions[i].count[k],
			    cause) != 0)
				return (-1);
		}
	}
	for (i = 0; s->keys != NULL && i <= s->mask; i++) {
		if (s->keys[i] == 0)
			continue;
		memset(&es, 0, sizeof es);
		es.device = s->devices[i];
		es.stream = es.handle = s->keys[i] - 1;
		es.context = EVENT_NONE;
		if (store_rows_stream(st->store, 0, &es, 0, EVENT_NONE,
		    cause) != 0)
			return (-1);
	}
	return (0);
}

/* Free what the trace's state holds. */
void
import_trace_free(struct import_state *st)
{
	size_t	i;

	for (i = 0; i < st->nactions; i++)
		free(st->actions[i].count);
	free(st->streams.keys);
	free(st->streams.devices);
	free(st->held);
}
