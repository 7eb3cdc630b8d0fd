/*
 * tui-list.c: a list of rows fetched a page at a time, with a cursor.
 *
 * The list keeps one page of TUI_LIST_PAGE rows, aligned on multiples of
 * the page size, and asks fetch() for another only when the cursor or the
 * view leaves it; so moving within a page costs no query, and a list of
 * ten million rows costs what one page costs.  The number of rows is
 * known (end) only once a fetch came back short: the lists never count.
 */
#include "config.h"

#include "tui.h"

#include <stdlib.h>
#include <string.h>

#define TUI_LIST_PAGE	128

/*
 * Make l an empty list of rows of row_size bytes that fetch(tui, arg,
 * offset, rows, max, &cause) fills (it returns how many, or -1).
 */
void
tui_list_init(struct tui_list *l, size_t row_size, tui_list_fetch_fn fetch,
    void *arg)
{
	memset(l, 0, sizeof *l);
	l->row_size = row_size;
	l->fetch = fetch;
	l->arg = arg;
	l->end = -1;
}

/* Free the cached page. */
void
tui_list_free(struct tui_list *l)
{
	free(l->rows);
	l->rows = NULL;
}

/* Forget the rows (their filter or order changed); the cursor goes home. */
void
tui_list_reset(struct tui_list *l)
{
	l->valid = 0;
	l->end = -1;
	l->top = l->sel = 0;
}

/*
 * Row i of the list, fetching its page if needed, or NULL past the end or
 * when the fetch failed (the cause goes to the message line).  The
 * pointer is good until the next call.
 */
const void *
tui_list_row(struct tui *t, struct tui_list *l, int64_t i)
{
	char	*cause = NULL;
	int64_t	 first;
	int	 n;

	if (i < 0 || (l->end >= 0 && i >= l->end))
		return (NULL);
	if (!l->valid || i < l->first || i >= l->first + l->n) {
		first = i - i % TUI_LIST_PAGE;
		if (l->rows == NULL) {
			l->cap = TUI_LIST_PAGE;
			l->rows = xcalloc((size_t)l->cap, l->row_size);
		}
		n = l->fetch(t, l->arg, first, l->rows, l->cap, &cause);
		if (n < 0) {
			tui_frame_fail(t, cause);
			l->valid = 0;
			return (NULL);
		}
		l->valid = 1;
		l->first = first;
		l->n = n;
		if (n < l->cap && (n > 0 || first == 0))
			l->end = first + n;
		if (i >= first + n)
			return (NULL);
	}
	return ((char *)l->rows + (size_t)(i - l->first) * l->row_size);
}

/* The row under the cursor, or NULL when the list is empty. */
const void *
tui_list_selected(struct tui *t, struct tui_list *l)
{
	return (tui_list_row(t, l, l->sel));
}

/* Move top so that the cursor shows in a window of `visible` rows. */
void
tui_list_scroll(struct tui_list *l, int visible)
{
	if (visible < 1)
		visible = 1;
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + visible)
		l->top = l->sel - visible + 1;
	if (l->top < 0)
		l->top = 0;
}

/*
 * Move the cursor to row `to`, or to the last row when there are fewer.
 * An empty page says only that the end is before it: a binary search over
 * pages finds the last page with rows, which knows the end.
 */
static void
tui_list_move(struct tui *t, struct tui_list *l, int64_t to)
{
	int64_t	lo, hi, mid;

	if (to < 0)
		to = 0;
	if (tui_list_row(t, l, to) == NULL && l->end < 0) {
		lo = l->sel - l->sel % TUI_LIST_PAGE;
		hi = to - to % TUI_LIST_PAGE;
		while (l->end < 0 && hi - lo > TUI_LIST_PAGE) {
			mid = lo + (hi - lo) / 2;
			mid -= mid % TUI_LIST_PAGE;
			if (tui_list_row(t, l, mid) != NULL)
				lo = mid;
			else
				hi = mid;
		}
		if (tui_list_row(t, l, lo) != NULL && l->end < 0)
			l->end = hi;	/* lo's page is full, hi's empty */
	}
	if (tui_list_row(t, l, to) == NULL) {
		if (l->end < 0)
			return;
		to = l->end > 0 ? l->end - 1 : 0;
	}
	l->sel = to;
}

/*
 * Handle a cursor key (arrows, j/k, PgUp/PgDn, Home/End, g/G) for a
 * window of `visible` rows.  Returns 1 when the key was one of them.  End
 * goes to the last row when the list knows it, or else a hundred pages
 * on, so that it never counts ten million rows.
 */
int
tui_list_key(struct tui *t, struct tui_list *l, int key, int visible)
{
	switch (key) {
	case TUI_KEY_UP:
	case 'k':
		tui_list_move(t, l, l->sel - 1);
		break;
	case TUI_KEY_DOWN:
	case 'j':
		tui_list_move(t, l, l->sel + 1);
		break;
	case TUI_KEY_PGUP:
		tui_list_move(t, l, l->sel - visible);
		break;
	case TUI_KEY_PGDN:
	case ' ':
		tui_list_move(t, l, l->sel + visible);
		break;
	case TUI_KEY_HOME:
	case 'g':
		l->sel = 0;
		break;
	case TUI_KEY_END:
	case 'G':
		tui_list_move(t, l, l->end >= 0 ? l->end - 1 :
		    l->sel + 100 * TUI_LIST_PAGE);
		break;
	default:
		return (0);
	}
	tui_list_scroll(l, visible);
	return (1);
}
