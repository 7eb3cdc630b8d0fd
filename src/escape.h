/*
 * escape.h: text from an input file made safe for a terminal (escape.c);
 * fmt_safe() and log_warn() are its users.
 */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <stddef.h>

size_t	escape_needed(const char *);
size_t	escape_copy(char *, const char *);

#endif
