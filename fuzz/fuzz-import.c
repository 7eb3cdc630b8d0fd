/*
 * libFuzzer target from pickle bytes to a leak verdict: each input is
 * written to a file and imported into a database as `vramtrace import`
 * does; an import that fails must leave nothing in the directory but the
 * input, and one that succeeds is analysed as `vramtrace leaks` does, so
 * the reader, the importer, the store, the query layer and the analysis
 * all see what a hostile file makes of them.  Anything left behind is a
 * finding (abort).
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "import.h"
#include "leak.h"
#include "query.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char	fuzz_dir[] = "/tmp/vramtrace-fuzz-import-XXXXXX";
static char	fuzz_in[sizeof fuzz_dir + 16];
static char	fuzz_out[sizeof fuzz_dir + 16];
static char	fuzz_wal[sizeof fuzz_dir + 16];
static char	fuzz_shm[sizeof fuzz_dir + 16];

static void
fuzz_cleanup(void)
{
	unlink(fuzz_in);
	rmdir(fuzz_dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const input[] = { "in.pickle", NULL };
	static const char *const with_db[] = { "in.pickle", "out.db", NULL };
	struct import_options	 opt;
	struct import_summary	 sum;
	struct leak_options	 lo;
	struct leak_report	*r;
	struct query		*q;
	char			*cause = NULL;
	FILE			*f;

	if (fuzz_in[0] == '\0') {
		if (mkdtemp(fuzz_dir) == NULL)
			abort();
		snprintf(fuzz_in, sizeof fuzz_in, "%s/in.pickle", fuzz_dir);
		snprintf(fuzz_out, sizeof fuzz_out, "%s/out.db", fuzz_dir);
		snprintf(fuzz_wal, sizeof fuzz_wal, "%s-wal", fuzz_out);
		snprintf(fuzz_shm, sizeof fuzz_shm, "%s-shm", fuzz_out);
		atexit(fuzz_cleanup);
		fuzz_limit_files(256);
	}
	if ((f = fopen(fuzz_in, "wb")) == NULL ||
	    fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	memset(&opt, 0, sizeof opt);
	if (import_snapshot(fuzz_in, fuzz_out, &opt, &sum, &cause) != 0) {
		free(cause);
		if (!fuzz_holds_only(fuzz_dir, input))
			abort();
		return (0);
	}
	if (!fuzz_holds_only(fuzz_dir, with_db))
		abort();
	leak_options_init(&lo);
	if ((q = query_open(fuzz_out, &cause)) != NULL &&
	    query_leaks(q, &lo, &r, &cause) == 0)
		leak_report_free(r);
	query_close(q);
	free(cause);
	/* What readers leave is not the importer's to check here. */
	unlink(fuzz_out);
	unlink(fuzz_wal);
	unlink(fuzz_shm);
	return (0);
}
