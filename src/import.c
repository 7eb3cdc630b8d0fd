/*
 * import.c: `vramtrace import`'s engine: a PyTorch memory snapshot pickle
 * into a database, read by the data-only pickle reader in streaming mode.
 *
 * The reader hands over each segment, trace entry and annotation as soon
 * as it is complete; each is checked against PyTorch's format
 * (import-check.c), written and consumed at once, and the top-level keys
 * other than the allocator settings are dropped, so memory stays near the
 * size of the shared strings and stacks.  The database is written under
 * a temporary name and renamed into place on success, so a bad file never
 * leaves a database that looks complete.  The importer writes only through
 * the store (store_*): the segments and the trace in import-trace.c, the
 * annotations and steps in import-steps.c, the settings and totals here.
 * While the pickle is read, the trace's store calls are made by a second
 * thread (import-pipe.c), and once the steps are known the rows are
 * inserted by another (store-queue.c): an import uses two cores.
 */
#include "config.h"

#include "import.h"
#include "unwrap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
on_element(void *arg, enum pickle_list_kind kind, size_t device,
    size_t index, const struct pickle_value *value, char **cause)
{
	struct import_state	*st = arg;
	int			 rc;

	if (kind == PICKLE_SEGMENTS)
		rc = import_trace_segment(st, value, index, cause);
	else if (kind == PICKLE_ANNOTATION)
		rc = import_steps_annotation(st, value, index, cause);
	else if (device >= IMPORT_DEVICE_MAX) {
		xasprintf(cause, "%s: device_traces[%zu]: more than %d devices "
		    "(not a PyTorch memory snapshot)", st->file, device,
		    IMPORT_DEVICE_MAX);
		rc = -1;
	} else
		rc = import_trace_entry(st, (int32_t)device, value, index,
		    cause);
	return (rc != 0 ? -1 : 1);
}

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	(void)arg;
	if (total == 0)
		return;
	fprintf(stderr, "\rimporting: %" PRIu64 " of %" PRIu64 " MB (%d%%)%s",
	    done >> 20, total >> 20, (int)(100.0 * (double)done /
	    (double)total), done >= total ? "\n" : "");
}

/* Write v to f as JSON. */
static void
json_value(FILE *f, const struct pickle_value *v)
{
	int64_t		n;
	uint64_t	u;
	double		d;
	int		b;
	size_t		i;

	switch (pickle_type(v)) {
	case PICKLE_INT:
		pickle_int(v, &n);
		fprintf(f, "%" PRId64, n);
		break;
	case PICKLE_UINT64:
		pickle_uint(v, &u);
		fprintf(f, "%" PRIu64, u);
		break;
	case PICKLE_FLOAT:
		pickle_float(v, &d);
		fprintf(f, "%.17g", d);
		break;
	case PICKLE_BOOL:
		pickle_bool(v, &b);
		fputs(b ? "true" : "false", f);
		break;
	case PICKLE_STR:
		json_string(f, pickle_str(v, NULL));
		break;
	case PICKLE_LIST:
	case PICKLE_TUPLE:
		fputc('[', f);
		for (i = 0; i < pickle_list_len(v); i++) {
			fputs(i > 0 ? ", " : "", f);
			json_value(f, pickle_list_at(v, i));
		}
		fputc(']', f);
		break;
	case PICKLE_DICT:
		fputc('{', f);
		for (i = 0; i < pickle_dict_len(v); i++) {
			fputs(i > 0 ? ", " : "", f);
			json_value(f, pickle_dict_key_at(v, i));
			fputs(": ", f);
			json_value(f, pickle_dict_value_at(v, i));
		}
		fputc('}', f);
		break;
	default:
		fputs("null", f);
		break;
	}
}

/* v as JSON text (allocated). */
static char *
to_json(const struct pickle_value *v)
{
	char	*text;
	size_t	 len;
	FILE	*f;

	if ((f = open_memstream(&text, &len)) == NULL)
		fatal("out of memory");
	json_value(f, v);
	fclose(f);
	return (text);
}

/*
 * Write the allocator settings, values as text (nested ones as JSON).
 * 0, or -1 with *cause.
 */
static int
import_settings(struct import_state *st, const struct pickle_value *root,
    char **cause)
{
	const struct pickle_value	*set, *v;
	const char			*key;
	char				*text;
	size_t				 i;
	int				 rc;

	if ((set = pickle_dict_get(root, "allocator_settings")) == NULL ||
	    pickle_type(set) != PICKLE_DICT)
		return (0);
	for (i = 0; i < pickle_dict_len(set); i++) {
		if ((key = pickle_str(pickle_dict_key_at(set, i), NULL)) ==
		    NULL)
			continue;
		v = pickle_dict_value_at(set, i);
		if (pickle_type(v) == PICKLE_STR)
			text = xstrdup(pickle_str(v, NULL));
		else
			text = to_json(v);
		rc = store_snapshot_setting(st->store, key, text, cause);
		free(text);
		if (rc != 0)
			return (-1);
	}
	return (0);
}

static void
state_free(struct import_state *st)
{
	import_trace_free(st);
	import_site_free(st);
	import_steps_free(st);
}

/*
 * Import the snapshot at path into the database out (a new file, or a new
 * run of an existing one with opt->append).  Fills *sum.  Returns 0, or
 * with *cause (one line naming the file) -1 when the snapshot is at fault
 * and IMPORT_FAIL_OUTPUT when out (or the temporary file a compressed
 * snapshot is unpacked into) could not be written; on error no
 * database is left (and an appended-to database keeps only what it had).
 */
int
import_snapshot(const char *path, const char *out,
    const struct import_options *opt, struct import_summary *sum,
    char **cause)
{
	static const char *const keep[] = { "allocator_settings", NULL };
	struct pickle_callbacks	 cb = { .element = on_element,
	    .annotations = 1, .keep = keep };
	struct store_run_info	 info;
	struct import_state	 st;
	struct pickle_value	*root = NULL;
	struct stat		 sb;
	char			*real = NULL, *name = NULL;
	int			 rc, fd = -1;

	memset(sum, 0, sizeof *sum);
	memset(&st, 0, sizeof st);
	sum->step_source = "none";
	st.file = unwrap_label(path);
	st.summary = sum;
	st.first_ns = EVENT_NONE;
	cb.arg = &st;
	if (opt->progress)
		cb.progress = on_progress;
	if ((rc = unwrap_open(path, &fd, &name, cause)) != 0)
		return (rc == UNWRAP_FAIL_LOCAL ? IMPORT_FAIL_OUTPUT : -1);
	if (import_steps_begin(&st, opt, cause) != 0) {
		close(fd);
		free(name);
		return (-1);
	}
	st.store = store_open(out, (opt->append ? STORE_APPEND : STORE_CREATE) |
	    STORE_ATOMIC | STORE_BULK, cause);
	if (st.store == NULL) {
		close(fd);
		free(name);
		state_free(&st);
		return (IMPORT_FAIL_OUTPUT);
	}
	memset(&info, 0, sizeof info);
	info.source = "import";
	real = realpath(path, NULL);
	info.input = real != NULL ? real : st.file;
	if (store_run_begin(st.store, &info, cause) != 0 ||
	    store_snapshot_begin(st.store, info.input, stat(info.input, &sb) ==
	    0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : -1, cause) != 0)
		goto fail;
	import_pipe_begin(&st);
	root = pickle_parse_fd(fd, name, &cb, cause);
	close(fd);	/* an unpacked pickle's disk is given back now */
	fd = -1;
	if (import_pipe_end(&st, root == NULL, cause) != 0 || root == NULL)
		goto fail;
	if (import_check_root(&st, root, cause) != 0 ||
	    import_trace_reconcile(&st, cause) != 0 ||
	    import_settings(&st, root, cause) != 0 ||
	    import_steps_finish(&st, opt, cause) != 0 ||
	    import_trace_finish(&st, cause) != 0 ||
	    store_snapshot_finish(st.store, sum->trace_entries,
	    sum->annotations, st.first_ns, sum->step_source, cause) != 0)
		goto fail;
	if (store_rows_assign_steps(st.store, cause) != 0 ||
	    store_run_finish(st.store, -1, st.last_ns, 1, cause) != 0)
		goto fail;
	pickle_free(root);
	state_free(&st);
	free(real);
	free(name);
	return (store_close(st.store, cause) == 0 ? 0 : IMPORT_FAIL_OUTPUT);

fail:
	rc = store_failed(st.store) ? IMPORT_FAIL_OUTPUT : -1;
	pickle_free(root);
	state_free(&st);
	store_abort(st.store);
	free(real);
	if (fd != -1)
		close(fd);
	free(name);
	return (rc);
}
