/*
 * tap.c: print TAP; count failures; give each test a temporary directory
 * that is removed at exit unless the test failed.
 */
#include "config.h"

#include "tap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int	 tap_n;
static int	 tap_failed;
static char	 tap_dir[] = "/tmp/vramtrace-test-XXXXXX";
static int	 tap_have_dir;

static void
tap_cleanup(void)
{
	char	cmd[128];

	if (tap_have_dir && tap_failed == 0) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tap_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", tap_dir);
	} else if (tap_have_dir)
		printf("# kept %s\n", tap_dir);
}

/* Announce n tests. */
void
tap_plan(int n)
{
	printf("1..%d\n", n);
}

/* Report one test; returns cond. */
int
tap_ok(int cond, const char *fmt, ...)
{
	va_list	ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return (cond);
}

/* Report whether got == want, showing both when they differ. */
int
tap_eq(int64_t got, int64_t want, const char *fmt, ...)
{
	va_list	ap;

	printf("%s %d - ", got == want ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (got != want)
		printf(" (got %" PRId64 ", want %" PRId64 ")", got, want);
	putchar('\n');
	fflush(stdout);
	if (got != want)
		tap_failed++;
	return (got == want);
}

/* Report n skipped tests. */
void
tap_skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
}

/* The exit status: 0 if every test passed. */
int
tap_done(void)
{
	return (tap_failed == 0 ? 0 : 1);
}

/* A fresh temporary directory for this test program. */
const char *
tap_tmpdir(void)
{
	if (!tap_have_dir) {
		if (mkdtemp(tap_dir) == NULL) {
			perror("mkdtemp");
			exit(99);
		}
		tap_have_dir = 1;
		atexit(tap_cleanup);
	}
	return (tap_dir);
}
