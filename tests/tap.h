/*
 * tap.h: a tiny Test Anything Protocol helper for the C tests.
 */
#ifndef TAP_H
#define TAP_H

#include <stdint.h>

void	 tap_plan(int);
int	 tap_ok(int, const char *, ...) __attribute__((format(printf, 2, 3)));
int	 tap_eq(int64_t, int64_t, const char *, ...)
	     __attribute__((format(printf, 3, 4)));
void	 tap_skip(int, const char *);
int	 tap_done(void);
const char *tap_tmpdir(void);

#endif
