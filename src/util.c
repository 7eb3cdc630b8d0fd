/*
 * util.c: small helpers the commands share: sorting, recognising a
 * snapshot pickle by its first bytes, terminals.
 */
#include "config.h"

#include "vramtrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * qsort() that accepts an empty array: qsort(NULL, 0, ...) is undefined
 * behaviour, and growing arrays start as NULL.
 */
void
util_sort(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/*
 * Is path a pickle rather than a database?  Looks at the name first
 * (.pickle, .pkl) and then at the first byte (PROTO opcode 0x80).
 */
int
util_is_pickle(const char *path)
{
	const char	*dot = strrchr(path, '.');
	FILE		*f;
	int		 c;

	if (dot != NULL && (strcmp(dot, ".pickle") == 0 ||
	    strcmp(dot, ".pkl") == 0))
		return (1);
	if ((f = fopen(path, "rb")) == NULL)
		return (0);
	c = fgetc(f);
	fclose(f);
	return (c == 0x80);
}

/* Is standard output a terminal? */
int
util_isatty_out(void)
{
	return (isatty(STDOUT_FILENO));
}

/* Is standard error a terminal? */
int
util_isatty_err(void)
{
	return (isatty(STDERR_FILENO));
}
