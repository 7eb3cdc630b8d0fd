/*
 * tui-view-blocks.c: view 4, the blocks (allocations) of the run, paged
 * from the database through query_blocks(): sorted by size, age, step,
 * stream or site; filtered by live or all, layer, stream, step range and
 * a site substring.  The layer starts as the analysed one (the leak
 * report's), so that each block shows once, not again as the segment or
 * pool allocation that holds it.  Enter opens the selected block's stack in a pane
 * below the list, which follows the cursor until Enter or Esc closes it.
 */
#include "config.h"

#include "tui.h"
#include "site-origin.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS_FRAMES	32

struct tui_view_blocks {
	struct tui_list	 list;
	struct block_filter filter;
	char		 search[128];
	int		 visible;
	int64_t		 quick;		/* query_blocks_quick; -2: ask */
	int		 layer_auto;	/* the layer is the report's, once
					   there is one */
	int		 stack;		/* the stack pane is open */
	int64_t		 stack_site;	/* the site whose frames we have */
	struct frame_row frames[BLOCKS_FRAMES];
	int		 nframes;
};

static const char *const tui_view_blocks_sorts[] = {
	"size", "age", "step", "stream", "site"
};

static const char *const tui_view_blocks_help[] = {
	"The blocks of the run, a page at a time from the database.",
	"s / S       sort by the next / previous key: size, age, step, stream,",
	"            site;  r reverses the order",
	"/           search: blocks whose site's name or label contains the",
	"            text (empty: all)",
	"a           live blocks only (at the end of the run) or all blocks",
	"l           layer: all, segment, pool, block, host (at first the",
	"            analysed layer, so that each block shows once)",
	"t           stream: all, then each stream of the run",
	"f           steps: a range such as 3-5, 4 or 2- (empty: all)",
	"c           clear every filter",
	"Enter       show the stack of the selected block; Enter or Esc closes",
	"            it.  The program's own frames are bold, the origin (the",
	"            line leaks names a site by), its caller and the library's",
	"            frame within marked",
	NULL
};

static int
tui_view_blocks_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	struct tui_view_blocks	*v = arg;

	v->filter.run_id = t->run.id;
	v->filter.search = v->search[0] != '\0' ? v->search : NULL;
	if (v->quick == -2)
		v->quick = query_blocks_quick(t->q, &v->filter);
	if (v->quick == 0)
		snprintf(t->message, sizeof t->message, "no kept blocks serve"
		    " this order and filter: reading every block of the run");
	else if (v->quick > 0 && offset + max > v->quick)
		snprintf(t->message, sizeof t->message, "past the first %lld"
		    " blocks that match in this order: reading every block of"
		    " the run", (long long)v->quick);
	return (query_blocks(t->q, &v->filter, offset, rows, max, cause));
}

static void *
tui_view_blocks_create(struct tui *t)
{
	struct tui_view_blocks	*v;

	(void)t;
	v = xcalloc(1, sizeof *v);
	v->filter.live_only = 1;
	v->filter.layer = -1;
	v->layer_auto = 1;
	v->filter.sort = SORT_SIZE;
	v->filter.descending = 1;
	v->quick = -2;
	tui_list_init(&v->list, sizeof(struct block_row),
	    tui_view_blocks_fetch, v);
	return (v);
}

static void
tui_view_blocks_destroy(void *state)
{
	struct tui_view_blocks	*v = state;

	tui_list_free(&v->list);
	free(v);
}

static void
tui_view_blocks_reload(struct tui *t, void *state)
{
	struct tui_view_blocks	*v = state;

	(void)t;
	v->list.valid = 0;
	v->list.end = -1;
	v->quick = -2;
}

static void
tui_view_blocks_refilter(struct tui_view_blocks *v)
{
	tui_list_reset(&v->list);
	v->stack_site = -1;
	v->quick = -2;
}

static void
tui_view_blocks_search(struct tui *t, void *arg, const char *text)
{
	struct tui_view_blocks	*v = arg;

	(void)t;
	snprintf(v->search, sizeof v->search, "%s", text);
	tui_view_blocks_refilter(v);
}

static void
tui_view_blocks_steps(struct tui *t, void *arg, const char *text)
{
	struct tui_view_blocks	*v = arg;
	char			*end;
	long long		 lo = 0, hi = 0;

	if (*text != '\0') {
		lo = strtoll(text, &end, 10);
		if (*end == '-')
			hi = end[1] == '\0' ? 0 : strtoll(end + 1, &end, 10);
		else
			hi = lo;
		if (*end != '\0' && *end != '-') {
			snprintf(t->message, sizeof t->message, "steps: want "
			    "A-B, A or A-, not %s", text);
			return;
		}
	}
	v->filter.step_min = lo;
	v->filter.step_max = hi;
	tui_view_blocks_refilter(v);
}

/* The next stream filter: all, then each stream of the report. */
static void
tui_view_blocks_next_stream(struct tui *t, struct tui_view_blocks *v)
{
	const struct leak_report	*r = t->report;
	size_t				 i;

	if (r == NULL || r->nstreams == 0) {
		snprintf(t->message, sizeof t->message,
		    "no streams known yet");
		return;
	}
	if (!v->filter.has_stream) {
		v->filter.has_stream = 1;
		v->filter.stream = r->streams[0].stream;
		return;
	}
	for (i = 0; i < r->nstreams; i++) {
		if (r->streams[i].stream == v->filter.stream)
			break;
	}
	if (i + 1 >= r->nstreams)
		v->filter.has_stream = 0;
	else
		v->filter.stream = r->streams[i + 1].stream;
}

static int
tui_view_blocks_key(struct tui *t, void *state, int key)
{
	struct tui_view_blocks	*v = state;
	char			 range[64];

	switch (key) {
	case TUI_KEY_ENTER:
		v->stack = !v->stack;
		return (1);
	case TUI_KEY_ESC:
		v->stack = 0;
		return (1);
	case 's':
	case 'S':
		v->filter.sort = (enum block_sort)(((int)v->filter.sort +
		    (key == 's' ? 1 : 4)) % 5);
		v->filter.descending = v->filter.sort == SORT_SIZE;
		break;
	case 'r':
		v->filter.descending = !v->filter.descending;
		break;
	case '/':
		tui_frame_prompt(t, "search site:", tui_view_blocks_search, v,
		    v->search);
		return (1);
	case 'f':
		range[0] = '\0';
		if (v->filter.step_min != 0 || v->filter.step_max != 0)
			snprintf(range, sizeof range, "%lld-%lld",
			    (long long)v->filter.step_min,
			    (long long)v->filter.step_max);
		tui_frame_prompt(t, "steps (A-B):", tui_view_blocks_steps, v,
		    range);
		return (1);
	case 'a':
		v->filter.live_only = !v->filter.live_only;
		break;
	case 'l':
		v->filter.layer = v->filter.layer >= EVENT_LAYER_HOST ? -1 :
		    v->filter.layer + 1;
		v->layer_auto = 0;
		break;
	case 't':
		tui_view_blocks_next_stream(t, v);
		break;
	case 'c':
		v->filter.layer = -1;
		v->layer_auto = 1;
		v->filter.has_stream = 0;
		v->filter.step_min = v->filter.step_max = 0;
		v->search[0] = '\0';
		break;
	default:
		return (tui_list_key(t, &v->list, key, v->visible));
	}
	tui_view_blocks_refilter(v);
	return (1);
}

static void
tui_view_blocks_status(struct tui_view_blocks *v, struct tui_canvas *c,
    int y)
{
	const struct block_filter	*f = &v->filter;
	char				 stream[32], steps[48];

	if (f->step_min == 0 && f->step_max == 0)
		snprintf(steps, sizeof steps, "all");
	else if (f->step_max == 0)
		snprintf(steps, sizeof steps, "%lld-", (long long)f->step_min);
	else
		snprintf(steps, sizeof steps, "%lld-%lld",
		    (long long)f->step_min, (long long)f->step_max);
	tui_canvas_printf(c, y, 1, -1, TUI_A_BOLD, "%s blocks  layer %s  "
	    "stream %s  steps %s  site ~ \"%s\"  sort %s %s",
	    f->live_only ? "live" : "all", tui_format_layer(f->layer),
	    f->has_stream ? fmt_stream(f->stream, stream,
	    sizeof stream) : "all", steps, v->search,
	    tui_view_blocks_sorts[f->sort], f->descending ? "↓" : "↑");
}

static void
tui_view_blocks_row(struct tui *t, const struct block_row *b,
    struct tui_canvas *c, int y)
{
	char	size[32], id[32], at[32], step[FMT_LEN];

	tui_canvas_printf(c, y, 0, -1, TUI_A_NORMAL, "%10s %5s %-14s"
	    " %3d %-7s %10s %s", fmt_bytes(b->bytes, size, sizeof size),
	    fmt_int(b->alloc_step, step, sizeof step), fmt_stream(b->stream,
	    id, sizeof id), b->device, tui_format_layer(b->layer),
	    fmt_offset(b->alloc_ns, t->run.start_ns, at, sizeof at),
	    b->site[0] != '\0' ? b->site : "(no stack)");
}

/*
 * The frames of the selected block's stack from row y, at most h: the
 * program's own Python bold, native frames dim, and the frames that name
 * the site (site-origin.c) marked as leaks names them.
 */
static void
tui_view_blocks_frames(const struct tui_view_blocks *v, struct tui_canvas *c,
    int y, int h)
{
	struct site_frame	f[BLOCKS_FRAMES];
	struct site_origin	o;
	const char		*mark;
	int			 i, attr;

	for (i = 0; i < v->nframes; i++) {
		f[i].filename = v->frames[i].filename;
		f[i].line = v->frames[i].line;
		f[i].name = v->frames[i].name;
	}
	site_origin_find(f, (size_t)v->nframes, &o);
	for (i = 0; i < v->nframes && i < h; i++) {
		switch (site_frame_kind(f[i].filename)) {
		case SITE_FRAME_PROGRAM:
			attr = TUI_A_BOLD;
			break;
		case SITE_FRAME_NATIVE:
			attr = TUI_A_DIM;
			break;
		default:
			attr = TUI_A_NORMAL;
		}
		mark = i == o.origin ? "  ◀ origin" : i == o.caller ?
		    "  ◀ caller" : i == o.within ? "  ◀ within" : "";
		tui_canvas_printf(c, y + i, 2, -1, attr, "#%-2d %s:%" PRId64
		    "  %s%s", i, f[i].filename, f[i].line, f[i].name, mark);
	}
}

static void
tui_view_blocks_stack(struct tui *t, struct tui_view_blocks *v,
    struct tui_canvas *c, int y, int h)
{
	const struct block_row	*b = tui_list_selected(t, &v->list);
	char			*cause = NULL;

	tui_canvas_fill(c, y, 0, c->w, 0x2500, TUI_A_DIM);
	if (b == NULL)
		return;
	tui_canvas_printf(c, y, 2, -1, TUI_A_BOLD, " stack of block %" PRId64
	    " ", b->id);
	if (b->site_id < 0) {
		tui_canvas_put(c, y + 1, 2, -1, TUI_A_DIM, "no stack recorded");
		return;
	}
	if (b->site_id != v->stack_site) {
		v->nframes = query_blocks_frames(t->q, b->site_id, v->frames,
		    BLOCKS_FRAMES, &cause);
		if (v->nframes < 0) {
			tui_frame_fail(t, cause);
			v->nframes = 0;
		}
		v->stack_site = b->site_id;
	}
	tui_view_blocks_frames(v, c, y + 1, h - 1);
}

static void
tui_view_blocks_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	struct tui_view_blocks	*v = state;
	const struct block_row	*b;
	int			 k, pane = 0;

	if (t->show_stream) {
		t->show_stream = 0;
		v->filter.has_stream = 1;
		v->filter.stream = t->show_stream_id;
		tui_view_blocks_refilter(v);
	}
	if (v->layer_auto && t->report != NULL &&
	    v->filter.layer != t->report->layer) {
		v->filter.layer = t->report->layer;
		tui_view_blocks_refilter(v);
	}
	if (v->stack)
		pane = h / 2 > 3 ? h / 2 : 3;
	tui_view_blocks_status(v, c, y);
	tui_canvas_printf(c, y + 1, 0, -1, TUI_A_HEADER, "%10s %5s %-14s %3s"
	    " %-7s %10s %s", "SIZE", "STEP", "STREAM", "DEV", "LAYER",
	    "ALLOCATED", "SITE");
	tui_canvas_attr(c, y + 1, 0, c->w, TUI_A_HEADER);
	v->visible = h - 2 - pane;
	tui_list_scroll(&v->list, v->visible);
	for (k = 0; k < v->visible; k++) {
		if ((b = tui_list_row(t, &v->list, v->list.top + k)) == NULL)
			break;
		tui_view_blocks_row(t, b, c, y + 2 + k);
		if (v->list.top + k == v->list.sel)
			tui_canvas_attr(c, y + 2 + k, 0, c->w, TUI_A_SELECTED);
	}
	if (k == 0 && v->list.top == 0)
		tui_canvas_put(c, y + 2, 1, -1, TUI_A_DIM,
		    "no blocks match (c clears the filters)");
	if (pane > 0)
		tui_view_blocks_stack(t, v, c, y + h - pane, pane);
}

const struct tui_view tui_view_blocks = {
	"blocks", "Blocks",
	"s sort|r reverse|/ search|a live/all|l layer|t stream|f steps|"
	"c clear|Enter stack",
	tui_view_blocks_help, tui_view_blocks_create, tui_view_blocks_destroy,
	tui_view_blocks_draw, tui_view_blocks_key, tui_view_blocks_reload
};
