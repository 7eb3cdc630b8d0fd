/*
 * log.c: messages to stderr, and the one fatal path.
 *
 * Messages start with the program name.  fatal() is for broken invariants and
 * out-of-memory only; it runs a hook first (the TUI ends curses there) so the
 * message lands on a sane terminal.
 */
#include "config.h"

#include "vramtrace.h"
#include "escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char	*log_program = "vramtrace";
static void	(*log_fatal_hook)(void);

/*
 * Print "vramtrace: MESSAGE" on stderr, one line: what a message quotes
 * from an input file is escaped (escape.c; plain malloc, since the
 * allocator's fatal() is in this file).
 */
void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	char	*msg = NULL, *safe = NULL;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (safe = malloc(4 * (size_t)n + 1)) != NULL)
		escape_copy(safe, msg);
	fprintf(stderr, "%s: %s\n", log_program, safe != NULL ? safe :
	    "(out of memory for a message)");
	if (n >= 0)
		free(msg);
	free(safe);
}

/* Set the function fatal() calls before printing; NULL for none. */
void
log_set_fatal_hook(void (*hook)(void))
{
	log_fatal_hook = hook;
}

/* Run the fatal hook, print "vramtrace: fatal: MESSAGE" and exit
 * EXIT_ERROR. */
void
fatal(const char *fmt, ...)
{
	va_list	ap;

	if (log_fatal_hook != NULL)
		log_fatal_hook();
	va_start(ap, fmt);
	fprintf(stderr, "%s: fatal: ", log_program);
	vfprintf(stderr, fmt, ap);	/* no allocation: out of memory */
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_ERROR);
}
