/*
 * tui-screen.c: the terminal, through curses: start and end, colours,
 * painting a canvas, reading keys.  The only file under tui/ that calls
 * curses.
 *
 * Attributes become colour pairs when the terminal has colours and
 * bold/reverse/dim otherwise.  When the locale cannot show the block and
 * box characters the canvas uses, they are painted as ASCII.
 *
 * Resizes: curses notes a SIGWINCH in a flag and looks at it only before it
 * reads.  One that lands between that look and a read() that blocks is
 * seen only at the next key, and the screen stays drawn for the old size.
 * So SIGWINCH is blocked from the start (before any worker thread, which
 * inherits the mask and so never takes it), keys are read without waiting,
 * and the wait is a pselect() that unblocks SIGWINCH only while it sleeps:
 * a resize at any moment ends the wait, and the next read returns
 * KEY_RESIZE.
 */
#include "config.h"

#include "tui.h"

#include <sys/select.h>

#include <errno.h>
#include <langinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui-curses.h"

static SCREEN	*tui_screen;
static int	tui_screen_utf8;
static attr_t	tui_screen_attrs[TUI_A_MAX];
static short	tui_screen_pairs[TUI_A_MAX];
static sigset_t	tui_screen_mask;	/* the signal mask before start */
static sigset_t	tui_screen_wait_mask;	/* it with SIGWINCH open */

static void
tui_screen_colours(void)
{
	static const struct {
		int	 attr;
		short	 fg;
		short	 bg;
		attr_t	 extra;
	} map[] = {
		{ TUI_A_TITLE, COLOR_BLACK, COLOR_CYAN, 0 },
		{ TUI_A_TAB, COLOR_BLACK, COLOR_WHITE, A_BOLD },
		{ TUI_A_HEADER, COLOR_BLACK, COLOR_GREEN, 0 },
		{ TUI_A_SELECTED, COLOR_BLACK, COLOR_CYAN, 0 },
		{ TUI_A_GOOD, COLOR_GREEN, -1, A_BOLD },
		{ TUI_A_BAD, COLOR_RED, -1, A_BOLD },
		{ TUI_A_WARN, COLOR_YELLOW, -1, A_BOLD },
		{ TUI_A_BAR, COLOR_CYAN, -1, 0 },
		{ TUI_A_KEY, COLOR_BLACK, COLOR_CYAN, 0 },
	};
	size_t	i;

	tui_screen_attrs[TUI_A_DIM] = A_DIM;
	tui_screen_attrs[TUI_A_BOLD] = A_BOLD;
	if (!has_colors() || start_color() == ERR) {
		tui_screen_attrs[TUI_A_TITLE] = A_REVERSE;
		tui_screen_attrs[TUI_A_TAB] = A_BOLD;
		tui_screen_attrs[TUI_A_HEADER] = A_REVERSE;
		tui_screen_attrs[TUI_A_SELECTED] = A_REVERSE;
		tui_screen_attrs[TUI_A_GOOD] = A_BOLD;
		tui_screen_attrs[TUI_A_BAD] = A_BOLD | A_UNDERLINE;
		tui_screen_attrs[TUI_A_WARN] = A_BOLD;
		tui_screen_attrs[TUI_A_KEY] = A_REVERSE;
		return;
	}
	use_default_colors();
	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		init_pair((short)(i + 1), map[i].fg, map[i].bg);
		tui_screen_pairs[map[i].attr] = (short)(i + 1);
		tui_screen_attrs[map[i].attr] = map[i].extra;
	}
}

/* Block SIGWINCH, keeping the mask it had in tui_screen_mask. */
static void
tui_screen_block_winch(void)
{
	sigset_t	winch;

	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &winch, &tui_screen_mask);
	tui_screen_wait_mask = tui_screen_mask;
	sigdelset(&tui_screen_wait_mask, SIGWINCH);
}

/*
 * Start curses: raw keys, no echo, keypad, hidden cursor, colours, and
 * SIGWINCH blocked but while tui_screen_key() waits.  Call it before
 * starting any thread.  Calls fatal() when the terminal cannot be used.
 */
void
tui_screen_start(void)
{
	const char	*codeset = nl_langinfo(CODESET);

	tui_screen_utf8 = codeset != NULL && strcmp(codeset, "UTF-8") == 0;
	if ((tui_screen = newterm(NULL, stdout, stdin)) == NULL)
		fatal("cannot use the terminal (TERM=%s)",
		    getenv("TERM") != NULL ? getenv("TERM") : "unset");
	log_set_fatal_hook(tui_screen_end);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	tui_screen_colours();
	tui_screen_block_winch();
}

/* End curses, if it is on; safe to call twice (it is the fatal hook). */
void
tui_screen_end(void)
{
	if (tui_screen == NULL)
		return;
	endwin();
	delscreen(tui_screen);
	pthread_sigmask(SIG_SETMASK, &tui_screen_mask, NULL);
	tui_screen = NULL;
	log_set_fatal_hook(NULL);
}

/* The size of the terminal. */
void
tui_screen_size(int *w, int *h)
{
	getmaxyx(stdscr, *h, *w);
}

/* What to show for a code point the terminal's locale cannot. */
static wchar_t
tui_screen_ascii(uint32_t ch)
{
	if (ch < 0x80)
		return ((wchar_t)ch);
	if (ch >= 0x2581 && ch <= 0x2588)	/* ▁ to █ */
		return (ch >= 0x2585 ? '#' : ch >= 0x2583 ? '=' : '_');
	if (ch >= 0x2589 && ch <= 0x258f)	/* partial bars */
		return ('|');
	if (ch == 0x2500)
		return ('-');
	if (ch == 0x2502)
		return ('|');
	return ('?');
}

/* Paint the canvas on the terminal and refresh it. */
void
tui_screen_paint(const struct tui_canvas *c)
{
	const struct tui_cell	*cell;
	cchar_t			 cc;
	wchar_t			 wc[2];
	int			 y, x, w, h;

	tui_screen_size(&w, &h);
	for (y = 0; y < c->h && y < h; y++) {
		for (x = 0; x < c->w && x < w; x++) {
			cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
			wc[0] = tui_screen_utf8 ? (wchar_t)cell->ch :
			    tui_screen_ascii(cell->ch);
			wc[1] = L'\0';
			setcchar(&cc, wc, tui_screen_attrs[cell->attr],
			    tui_screen_pairs[cell->attr], NULL);
			mvadd_wch(y, x, &cc);
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/*
 * Sleep until the terminal has input, a signal came (SIGWINCH among them:
 * only here is it let in) or timeout_ms passed (-1: no limit).
 */
static void
tui_screen_wait(int timeout_ms)
{
	struct timespec	 ts, *limit = NULL;
	fd_set		 in;
	int		 fd = fileno(stdin);

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		limit = &ts;
	}
	FD_ZERO(&in);
	FD_SET(fd, &in);
	if (pselect(fd + 1, &in, NULL, NULL, limit, &tui_screen_wait_mask) ==
	    -1 && errno != EINTR)
		fatal("waiting for the terminal: %s", strerror(errno));
}

/*
 * Wait up to timeout_ms (-1: forever) for a key or a resize and return it
 * as a TUI_KEY or a code point; TUI_KEY_NONE when none came (or another
 * signal ended the wait).
 */
int
tui_screen_key(int timeout_ms)
{
	wint_t	ch;
	int	rc;

	timeout(0);
	if ((rc = get_wch(&ch)) == ERR) {
		tui_screen_wait(timeout_ms);
		rc = get_wch(&ch);
	}
	if (rc == ERR)
		return (TUI_KEY_NONE);
	if (rc == KEY_CODE_YES) {
		switch (ch) {
		case KEY_UP:		return (TUI_KEY_UP);
		case KEY_DOWN:		return (TUI_KEY_DOWN);
		case KEY_LEFT:		return (TUI_KEY_LEFT);
		case KEY_RIGHT:		return (TUI_KEY_RIGHT);
		case KEY_PPAGE:		return (TUI_KEY_PGUP);
		case KEY_NPAGE:		return (TUI_KEY_PGDN);
		case KEY_HOME:		return (TUI_KEY_HOME);
		case KEY_END:		return (TUI_KEY_END);
		case KEY_ENTER:		return (TUI_KEY_ENTER);
		case KEY_BACKSPACE:	return (TUI_KEY_BACKSPACE);
		case KEY_RESIZE:	return (TUI_KEY_RESIZE);
		default:		return (TUI_KEY_NONE);
		}
	}
	switch (ch) {
	case '\r':
	case '\n':
		return (TUI_KEY_ENTER);
	case 27:
		return (TUI_KEY_ESC);
	case 127:
	case 8:
		return (TUI_KEY_BACKSPACE);
	}
	return ((int)ch);
}
