/*
 * tui-canvas.c: a grid of cells that the views draw into.
 *
 * A canvas is w x h cells, each a code point one column wide and an
 * attribute (enum tui_attr).  Drawing clips at the edges, so a view never
 * checks the width itself.  Text arrives as UTF-8 and is decoded here, not
 * by the C library, so --dump works whatever the locale; the screen maps
 * what the terminal cannot show (tui-screen.c).
 */
#include "config.h"

#include "tui.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Create a blank canvas of w x h cells; the caller frees it. */
struct tui_canvas *
tui_canvas_create(int w, int h)
{
	struct tui_canvas	*c;

	c = xcalloc(1, sizeof *c);
	tui_canvas_resize(c, w, h);
	return (c);
}

/* Free a canvas; NULL is fine. */
void
tui_canvas_free(struct tui_canvas *c)
{
	if (c == NULL)
		return;
	free(c->cells);
	free(c);
}

/* Make the canvas w x h (at least 1 x 1) and blank. */
void
tui_canvas_resize(struct tui_canvas *c, int w, int h)
{
	c->w = w > 0 ? w : 1;
	c->h = h > 0 ? h : 1;
	free(c->cells);
	c->cells = xcalloc((size_t)c->w * (size_t)c->h, sizeof *c->cells);
	tui_canvas_clear(c);
}

/* Blank every cell. */
void
tui_canvas_clear(struct tui_canvas *c)
{
	tui_canvas_fill(c, 0, 0, c->w * c->h, ' ', TUI_A_NORMAL);
}

static struct tui_cell *
tui_canvas_cell(struct tui_canvas *c, int y, int x)
{
	if (y < 0 || y >= c->h || x < 0 || x >= c->w)
		return (NULL);
	return (&c->cells[(size_t)y * (size_t)c->w + (size_t)x]);
}

/* Decode one UTF-8 sequence at *s; a bad byte becomes '?'. */
static uint32_t
tui_canvas_decode(const unsigned char **s)
{
	const unsigned char	*p = *s;
	uint32_t		 cp;
	int			 n, i;

	if (p[0] < 0x80)
		n = 0, cp = p[0];
	else if ((p[0] & 0xe0) == 0xc0)
		n = 1, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 2, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 3, cp = p[0] & 0x07;
	else {
		*s = p + 1;
		return ('?');
	}
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*s = p + i;
			return ('?');
		}
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	*s = p + n + 1;
	return (cp < 0x20 ? '?' : cp);
}

/*
 * Write UTF-8 text at row y, column x, at most max columns (-1: to the
 * edge), with attribute attr; what would not print as itself is escaped
 * first (fmt_safe), as the commands' text is.  Returns the column after
 * the text.
 */
int
tui_canvas_put(struct tui_canvas *c, int y, int x, int max, int attr,
    const char *text)
{
	const unsigned char	*s = (const unsigned char *)fmt_safe(text);
	struct tui_cell		*cell;
	int			 end = max < 0 ? c->w : x + max;

	while (*s != '\0' && x < end && x < c->w) {
		if ((cell = tui_canvas_cell(c, y, x)) != NULL) {
			cell->ch = tui_canvas_decode(&s);
			cell->attr = (uint8_t)attr;
		} else
			tui_canvas_decode(&s);
		x++;
	}
	return (x);
}

/* tui_canvas_put() with printf formatting. */
int
tui_canvas_printf(struct tui_canvas *c, int y, int x, int max, int attr,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	x = tui_canvas_put(c, y, x, max, attr, text);
	free(text);
	return (x);
}

/* Set n cells from (y, x) on, running over row ends, to ch and attr. */
void
tui_canvas_fill(struct tui_canvas *c, int y, int x, int n, uint32_t ch,
    int attr)
{
	int	i, at = y * c->w + x;

	for (i = 0; i < n; i++, at++) {
		if (at < 0 || at >= c->w * c->h)
			continue;
		c->cells[at].ch = ch;
		c->cells[at].attr = (uint8_t)attr;
	}
}

/* Give n cells of row y from column x on the attribute attr. */
void
tui_canvas_attr(struct tui_canvas *c, int y, int x, int n, int attr)
{
	struct tui_cell	*cell;
	int		 i;

	for (i = 0; i < n; i++) {
		if ((cell = tui_canvas_cell(c, y, x + i)) != NULL)
			cell->attr = (uint8_t)attr;
	}
}

/* The largest of the last `width` of the n values v; 0 when none. */
int64_t
tui_canvas_spark_top(const int64_t *v, size_t n, int width)
{
	size_t	i = width > 0 && n > (size_t)width ? n - (size_t)width : 0;
	int64_t	top = 0;

	for (; i < n; i++)
		top = v[i] > top ? v[i] : top;
	return (top);
}

/*
 * Draw the last `width` of the n values v (bytes, never negative) as a
 * sparkline at (y, x), each value one of ▁▂▃▄▅▆▇█ in proportion from 0 to
 * top (top <= 0: the largest shown), so that heights compare: a flat
 * 0 B is a line of ▁, a flat top a line of █.
 */
void
tui_canvas_spark(struct tui_canvas *c, int y, int x, int width,
    const int64_t *v, size_t n, int64_t top, int attr)
{
	static const uint32_t	 ticks[] = { 0x2581, 0x2582, 0x2583, 0x2584,
	    0x2585, 0x2586, 0x2587, 0x2588 };
	struct tui_cell		*cell;
	size_t			 first, i;
	int64_t			 hi;
	int			 k;

	if (n == 0 || width <= 0)
		return;
	first = n > (size_t)width ? n - (size_t)width : 0;
	hi = tui_canvas_spark_top(v, n, width);
	hi = top > hi ? top : hi;
	for (i = first; i < n; i++) {
		k = hi <= 0 || v[i] <= 0 ? 0 : (int)((double)v[i] * 7.0 /
		    (double)hi + 0.5);
		if ((cell = tui_canvas_cell(c, y, x + (int)(i - first))) !=
		    NULL) {
			cell->ch = ticks[k];
			cell->attr = (uint8_t)attr;
		}
	}
}

/*
 * Draw a horizontal bar of frac (0 to 1) of width columns at (y, x), in
 * eighths of a cell.
 */
void
tui_canvas_bar(struct tui_canvas *c, int y, int x, int width, double frac,
    int attr)
{
	static const uint32_t	 eighths[] = { 0x258f, 0x258e, 0x258d,
	    0x258c, 0x258b, 0x258a, 0x2589 };
	struct tui_cell		*cell;
	int			 e, i;

	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	e = (int)(frac * width * 8 + 0.5);
	for (i = 0; i < width && e > 0; i++, e -= 8) {
		if ((cell = tui_canvas_cell(c, y, x + i)) == NULL)
			break;
		cell->ch = e >= 8 ? 0x2588 : eighths[e - 1];
		cell->attr = (uint8_t)attr;
	}
}

static void
tui_canvas_encode(uint32_t cp, FILE *f)
{
	if (cp < 0x80)
		fputc((int)cp, f);
	else if (cp < 0x800) {
		fputc((int)(0xc0 | (cp >> 6)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	} else if (cp < 0x10000) {
		fputc((int)(0xe0 | (cp >> 12)), f);
		fputc((int)(0x80 | ((cp >> 6) & 0x3f)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	} else {
		fputc((int)(0xf0 | (cp >> 18)), f);
		fputc((int)(0x80 | ((cp >> 12) & 0x3f)), f);
		fputc((int)(0x80 | ((cp >> 6) & 0x3f)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	}
}

/*
 * Print the canvas to f as UTF-8 lines without attributes, trailing
 * blanks and trailing blank lines.
 */
void
tui_canvas_write(const struct tui_canvas *c, FILE *f)
{
	const struct tui_cell	*row;
	int			 y, x, w, last = -1;

	for (y = 0; y < c->h; y++) {
		row = &c->cells[(size_t)y * (size_t)c->w];
		for (x = 0; x < c->w; x++) {
			if (row[x].ch != ' ')
				last = y;
		}
	}
	for (y = 0; y <= last; y++) {
		row = &c->cells[(size_t)y * (size_t)c->w];
		for (w = c->w; w > 0 && row[w - 1].ch == ' '; w--)
			;
		for (x = 0; x < w; x++)
			tui_canvas_encode(row[x].ch, f);
		fputc('\n', f);
	}
}
