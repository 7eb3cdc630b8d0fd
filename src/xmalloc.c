/*
 * xmalloc.c: allocation that cannot fail, for the CLI and the TUI.
 *
 * Out of memory there is fatal.  Code that runs inside a traced process (the
 * client, the injection library, the offload engine) never uses these.
 */
#include "config.h"

#include "vramtrace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocate size bytes (at least one); never returns NULL. */
void *
xmalloc(size_t size)
{
	void	*p;

	p = malloc(size == 0 ? 1 : size);
	if (p == NULL)
		fatal("out of memory allocating %zu bytes", size);
	return (p);
}

/* Allocate a zeroed array; never returns NULL. */
void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);
	if (p == NULL)
		fatal("out of memory allocating %zu x %zu bytes", n, size);
	return (p);
}

/* Resize an array of n elements of size bytes, checking for overflow. */
void *
xreallocarray(void *old, size_t n, size_t size)
{
	void	*p;

	if (size != 0 && n > SIZE_MAX / size)
		fatal("array of %zu x %zu bytes is too large", n, size);
	p = realloc(old, n * size == 0 ? 1 : n * size);
	if (p == NULL)
		fatal("out of memory allocating %zu x %zu bytes", n, size);
	return (p);
}

/* Copy a string; never returns NULL. */
char *
xstrdup(const char *s)
{
	return (xstrndup(s, strlen(s)));
}

/* Copy at most n bytes of a string and terminate it. */
char *
xstrndup(const char *s, size_t n)
{
	char	*p;
	size_t	 len;

	len = strnlen(s, n);
	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

/* Format into a new string stored in *ret; returns its length. */
int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return (n);
}

/* The va_list form of xasprintf(). */
int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	n;

	n = vasprintf(ret, fmt, ap);
	if (n < 0 || *ret == NULL)
		fatal("out of memory formatting a string");
	return (n);
}

/*
 * Format a message followed by ": " and strerror(errno) into a new string
 * that the caller frees.  errno is read before anything can change it.
 */
char *
xstrerror_cause(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;
	char	*head, *cause;

	va_start(ap, fmt);
	xvasprintf(&head, fmt, ap);
	va_end(ap);
	xasprintf(&cause, "%s: %s", head, strerror(saved));
	free(head);
	return (cause);
}
