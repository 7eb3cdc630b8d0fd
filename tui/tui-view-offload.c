/*
 * tui-view-offload.c: view 5, the offload engine's decisions per step:
 * packs, tensors and bytes offloaded, stashes and their bytes, reaps,
 * dedupe hits and releases, pinned-pool fallbacks, unpacks, prefetches
 * and exit syncs, with the totals on top.  Says so when the run has no
 * offload events.  Above them, for a run of record --check-offload, the
 * offload check of every saved-tensor-hooks engine (TRL's, save_on_cpu,
 * ours): its summary line, what the engines did, and the first saved
 * tensors that came back different.  The rows are read once per data
 * change (one row per step, grouped by the database).
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tui_view_offload {
	struct tui_list		 list;
	struct query_offload_step	*steps;
	size_t			 n;
	struct query_offload_step	 total;
	struct query_check	 check;
	int			 visible;
};

/* The offload check's differences the view lists. */
#define TUI_OFFLOAD_CHECK_FIRST	3

static const char *const tui_view_offload_help[] = {
	"Per step: PACK saved tensors seen, OFFLOADED bytes copied to the host,",
	"STASH tensors brought back and STASHED their bytes, REAP stashes",
	"emptied, DEDUP+ dedupe hits, DEDUP- dedupe keys released, FALLBK",
	"pinned-pool fallbacks (the slab was full), UNPACK, PREFETCH, SYNC",
	"offload-context exits.  A stash that grows while REAP stays at 0 is",
	"the leak of an engine that forgets to clear its stashes.",
	"Offload check (record --check-offload), on top: how many saved",
	"tensors any saved-tensor-hooks engine gave back different from what",
	"it was given, what the engines did, and the first differences.",
	NULL
};

static int
tui_view_offload_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	struct tui_view_offload	*v = arg;
	struct query_offload_step	*out = rows;
	int			 k = 0;

	(void)t;
	(void)cause;
	while (k < max && (size_t)offset + (size_t)k < v->n) {
		out[k] = v->steps[(size_t)offset + (size_t)k];
		k++;
	}
	return (k);
}

static void
tui_view_offload_reload(struct tui *t, void *state)
{
	struct tui_view_offload	*v = state;
	struct query_offload_step	*s, *sum = &v->total;
	char			*cause = NULL;
	size_t			 i;

	free(v->steps);
	query_check_free(&v->check);
	if (query_offload(t->q, t->run.id, &v->steps, &v->n,
	    &cause) != 0 || query_check(t->q, t->run.id,
	    TUI_OFFLOAD_CHECK_FIRST, &v->check, &cause) != 0) {
		tui_frame_fail(t, cause);
	}
	memset(sum, 0, sizeof *sum);
	for (i = 0; i < v->n; i++) {
		s = &v->steps[i];
		sum->packs += s->packs;
		sum->offloads += s->offloads;
		sum->offload_bytes += s->offload_bytes;
		sum->stashes += s->stashes;
		sum->stash_bytes += s->stash_bytes;
		sum->reaps += s->reaps;
		sum->dedupe_hits += s->dedupe_hits;
		sum->dedupe_releases += s->dedupe_releases;
		sum->fallbacks += s->fallbacks;
		sum->fallback_bytes += s->fallback_bytes;
	}
	v->list.valid = 0;
	v->list.end = -1;
}

static void *
tui_view_offload_create(struct tui *t)
{
	struct tui_view_offload	*v;

	v = xcalloc(1, sizeof *v);
	tui_list_init(&v->list, sizeof(struct query_offload_step),
	    tui_view_offload_fetch, v);
	tui_view_offload_reload(t, v);
	return (v);
}

static void
tui_view_offload_destroy(void *state)
{
	struct tui_view_offload	*v = state;

	tui_list_free(&v->list);
	free(v->steps);
	query_check_free(&v->check);
	free(v);
}

static int
tui_view_offload_key(struct tui *t, void *state, int key)
{
	struct tui_view_offload	*v = state;

	return (tui_list_key(t, &v->list, key, v->visible));
}

static void
tui_view_offload_row(const struct query_offload_step *s, struct tui_canvas *c,
    int y, int wide)
{
	char	off[32], stash[32];
	int	x;

	x = tui_canvas_printf(c, y, 0, -1, TUI_A_NORMAL, "%5" PRId64 " %6"
	    PRId64 " %10s %6" PRId64 " %10s %6" PRId64 " %6" PRId64 " %6"
	    PRId64 " ", s->step, s->packs, fmt_bytes(s->offload_bytes,
	    off, sizeof off), s->stashes, fmt_bytes(s->stash_bytes,
	    stash, sizeof stash), s->reaps, s->dedupe_hits,
	    s->dedupe_releases);
	x = tui_canvas_printf(c, y, x, -1, s->fallbacks > 0 ? TUI_A_WARN :
	    TUI_A_NORMAL, "%6" PRId64, s->fallbacks);
	if (wide)
		tui_canvas_printf(c, y, x, -1, TUI_A_NORMAL, " %6" PRId64 " %8"
		    PRId64 " %5" PRId64, s->unpacks, s->prefetches,
		    s->exit_syncs);
}

/*
 * The offload check on top, from row y: its line, what the engines did,
 * the first differences and a blank row.  Returns the next row (y when
 * the run was not checked).
 */
static int
tui_view_offload_check(const struct query_check *ch, struct tui_canvas *c,
    int y)
{
	const struct query_check_diff	*d;
	char				 a[FMT_LEN], b[FMT_LEN];
	size_t				 i;

	if (!ch->checked_run)
		return (y);
	y = tui_format_check(c, y, 1, ch);
	tui_canvas_printf(c, y++, 1, -1, TUI_A_NORMAL, "%" PRId64 " engine%s,"
	    " %" PRId64 " packs (%s), %" PRId64 " unpacks, %s came back in"
	    " other memory", ch->engines, ch->engines == 1 ? "" : "s",
	    ch->packs, fmt_bytes(ch->packed_bytes, a, sizeof a), ch->unpacks,
	    fmt_bytes(ch->moved_bytes, b, sizeof b));
	for (i = 0; i < ch->nfirst; i++) {
		d = &ch->first[i];
		tui_canvas_printf(c, y++, 3, -1, TUI_A_BAD, "step %" PRId64
		    " #%" PRId64 " %s %s %s: %s", d->step, d->index,
		    fmt_text(d->shape), fmt_text(d->dtype),
		    fmt_text(d->where != NULL ? d->where : d->pack_site),
		    fmt_text(d->detail));
	}
	return (y + 1);
}

static void
tui_view_offload_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	struct tui_view_offload		*v = state;
	const struct query_offload_step	*s;
	char				 a[32], b[32];
	int				 k, top = y, wide = c->w >= 100;

	y = tui_view_offload_check(&v->check, c, y);
	h -= y - top;
	if (v->n == 0) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_NORMAL, "no offload "
		    "events in this run (vramtrace's offload engine was not"
		    " used)");
		return;
	}
	tui_canvas_printf(c, y, 1, -1, TUI_A_BOLD, "offloaded %s, stashed %s,"
	    " %" PRId64 " reaps, %" PRId64 " dedupe hits, %" PRId64
	    " releases, ", fmt_bytes(v->total.offload_bytes, a,
	    sizeof a), fmt_bytes(v->total.stash_bytes, b, sizeof b),
	    v->total.reaps, v->total.dedupe_hits, v->total.dedupe_releases);
	tui_canvas_printf(c, y + 1, 1, -1, v->total.fallbacks > 0 ?
	    TUI_A_WARN : TUI_A_BOLD, "%" PRId64 " pool fallbacks (%s)",
	    v->total.fallbacks, fmt_bytes(v->total.fallback_bytes, a,
	    sizeof a));
	k = tui_canvas_printf(c, y + 2, 0, -1, TUI_A_HEADER, "%5s %6s %10s %6s"
	    " %10s %6s %6s %6s %6s", "STEP", "PACK", "OFFLOADED", "STASH",
	    "STASHED", "REAP", "DEDUP+", "DEDUP-", "FALLBK");
	if (wide)
		tui_canvas_printf(c, y + 2, k, -1, TUI_A_HEADER, " %6s %8s %5s",
		    "UNPACK", "PREFETCH", "SYNC");
	tui_canvas_attr(c, y + 2, 0, c->w, TUI_A_HEADER);
	v->visible = h - 3;
	tui_list_scroll(&v->list, v->visible);
	for (k = 0; k < v->visible; k++) {
		if ((s = tui_list_row(t, &v->list, v->list.top + k)) == NULL)
			break;
		tui_view_offload_row(s, c, y + 3 + k, wide);
		if (v->list.top + k == v->list.sel)
			tui_canvas_attr(c, y + 3 + k, 0, c->w, TUI_A_SELECTED);
	}
}

const struct tui_view tui_view_offload = {
	"offload", "Offload", "", tui_view_offload_help,
	tui_view_offload_create, tui_view_offload_destroy,
	tui_view_offload_draw, tui_view_offload_key, tui_view_offload_reload
};
