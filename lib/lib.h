/*
 * lib.h: the rules of lib/ and the helpers its files share.
 *
 * Everything in lib/ is linked into the traced process (libvramtrace.so,
 * libvramtrace-inject.so) and must leave that process as it found it:
 *
 *  - nothing here exits, aborts or calls the program's xmalloc() or
 *    fatal(): an allocation that fails returns an error, and a broken
 *    recording turns itself off with one warning (client_warn());
 *  - no SQLite, no curses, no file of src/ or tui/: a file here includes
 *    only headers of lib/, include/ and the system (and CUPTI, in
 *    inject-*.c alone);
 *  - both libraries are linked with -Wl,-z,defs, so a symbol that only the
 *    program defines fails the build, not a user's dlopen().  The CPython
 *    extension (offload-python*.c) cannot be: its Python symbols come from
 *    the interpreter that loads it; its include path is lib/, include/
 *    and Python's, so the rule still holds by construction.
 *
 * The program links some of these files too (the event encoding, lib.c):
 * what obeys the stricter rule is safe anywhere.
 */
#ifndef LIB_H
#define LIB_H

#include <stdint.h>

#ifdef __GNUC__
#define printflike(a, b) __attribute__((format(printf, a, b)))
#else
#define printflike(a, b)
#endif

/* The kinds of stacks an allocation may get (VRAMTRACE_STACKS). */
#define LIB_STACK_PYTHON	0x1
#define LIB_STACK_NATIVE	0x2
#define LIB_STACK_DEPTH		64	/* frames kept by default */
#define LIB_STACK_DEPTH_MAX	1024

/* lib.c */
int	 lib_parse_stacks(const char *, unsigned *);
int	 lib_parse_uint(const char *, uint64_t *);
int	 lib_parse_bytes(const char *, uint64_t *);
uint64_t lib_now_ns(void);

#endif
