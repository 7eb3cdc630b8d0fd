/*
 * tui-curses.h: the one place that picks the curses header.  Only the
 * files that talk to the terminal (tui-screen.c) include it.
 */
#ifndef TUI_CURSES_H
#define TUI_CURSES_H

#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif

#ifdef HAVE_NCURSESW_CURSES_H
#include <ncursesw/curses.h>
#else
#include <curses.h>
#endif

#endif
