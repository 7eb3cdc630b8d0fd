/*
 * cmd-info.c: vramtrace info DB: what a database holds, or one of its runs
 * (--run).
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>

#include "query.h"
#include "cmd.h"

static int	cmd_info_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON };
static const char *const formats[] = { "text", "json", NULL };

static const struct cmd_option cmd_info_options[] = {
	CMD_OPTION_RUN("count only what run ID holds (default: the whole"
	    " database)"),
	CMD_OPTION_FORMAT(formats, "text (default) or json"),
	CMD_OPTION_END
};

const struct cmd_entry cmd_info_entry = {
	.name = "info",
	CMD_ARGS_DB,
	.options = cmd_info_options,
	.summary = "show the schema version and what a database holds",
	.exec = cmd_info_exec
};

static void
print_json(int64_t run_id, int version, const struct query_counts *in)
{
	printf("{\"run_id\": ");
	json_int_or_null(stdout, run_id, run_id != 0);
	printf(", \"schema_version\": %d, \"runs\": %" PRId64
	    ", \"incomplete_runs\": %" PRId64 ", \"processes\": %" PRId64
	    ", \"devices\": %" PRId64 ", \"streams\": %" PRId64
	    ", \"steps\": %" PRId64 ", \"allocations\": %" PRId64
	    ", \"memcpys\": %" PRId64 ", \"offload_events\": %" PRId64
	    ", \"marks\": %" PRId64 ", \"sites\": %" PRId64
	    ", \"snapshots\": %" PRId64 ", \"segments\": %" PRId64
	    ", \"blocks\": %" PRId64 ", \"trace_entries\": %" PRId64
	    ", \"dropped_records\": %" PRId64 "}\n",
	    version, in->runs, in->incomplete_runs, in->processes,
	    in->devices, in->streams, in->steps, in->allocations, in->memcpys,
	    in->offload_events, in->marks, in->sites, in->snapshots,
	    in->segments, in->blocks, in->trace_entries,
	    in->dropped_records);
}

static void
print_text(const char *path, int64_t run_id, int version,
    const struct query_counts *in)
{
	printf("%s: vramtrace database, schema version %d\n", path, version);
	if (run_id != 0)
		printf("  counts of run   %" PRId64 "\n", run_id);
	printf("  runs            %" PRId64, in->runs);
	if (in->incomplete_runs > 0)
		printf(" (%" PRId64 " not finished)", in->incomplete_runs);
	printf("\n");
	printf("  processes       %" PRId64 "\n", in->processes);
	printf("  devices         %" PRId64 "\n", in->devices);
	printf("  streams         %" PRId64 "\n", in->streams);
	printf("  steps           %" PRId64 "\n", in->steps);
	printf("  allocations     %" PRId64 "\n", in->allocations);
	printf("  memcpys         %" PRId64 "\n", in->memcpys);
	printf("  offload events  %" PRId64 "\n", in->offload_events);
	printf("  marks           %" PRId64 "\n", in->marks);
	printf("  sites           %" PRId64 "\n", in->sites);
	printf("  snapshots       %" PRId64 "\n", in->snapshots);
	printf("  segments        %" PRId64 "\n", in->segments);
	printf("  blocks          %" PRId64 "\n", in->blocks);
	printf("  trace entries   %" PRId64 "\n", in->trace_entries);
	printf("  dropped records %" PRId64 "\n", in->dropped_records);
}

static int
cmd_info_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct query_counts	 info;
	struct query		*q;
	const char		*path = args->argv[0];
	char			*cause = NULL;
	int64_t			 run_id;

	(void)self;
	run_id = (int64_t)cmd_args_number(args, 'r', 0);
	if ((q = input_open(path, &cause)) == NULL)
		return (cmd_fail(EXIT_INPUT, cause));
	if (query_run_counts(q, run_id, QUERY_COUNT_ALL, &info, &cause) == 0 &&
	    run_id != 0 && info.runs == 0)
		xasprintf(&cause, "%s: no run %" PRId64, path, run_id);
	if (cause != NULL) {
		query_close(q);
		return (cmd_fail(EXIT_INPUT, cause));
	}
	if (cmd_args_number(args, 'f', FORMAT_TEXT) == FORMAT_JSON)
		print_json(run_id, query_schema_version(q), &info);
	else
		print_text(path, run_id, query_schema_version(q), &info);
	query_close(q);
	return (EXIT_OK);
}
