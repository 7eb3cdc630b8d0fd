/*
 * TAP tests of the pickle reader.
 *
 * Without arguments: unit tests on the pickles in
 * $srcdir/tests/data/pickle/good (written by make-good.py at protocols 2, 4
 * and 5), then, for every snapshot in $VRAMTRACE_SNAPSHOTS (default
 * $srcdir/../shared/data/snapshots), a streaming parse whose counts of
 * segments, blocks and trace entries per action must match those that
 * python3's pickle module computes.
 *
 * With --check FILE: parse FILE streaming, consuming every element; on
 * failure print the error line to stderr and exit 1 (for
 * t-pickle-hostile.sh).
 *
 * With --view FILE: parse FILE streaming, as the importer does (segments,
 * device traces and annotations streamed, allocator_settings kept, the
 * rest dropped), and print every element and kept value in the canonical
 * form that tests/pickle-view.py prints from Python's pickle.load(), so
 * that t-pickle-shared.sh can compare them.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pickle.h"

static int	 t_count;
static int	 t_failed;
static char	 t_dir[4096];	/* tests/data/pickle/good */

static void
t_ok(int ok, const char *what, const char *file)
{
	t_count++;
	if (!ok)
		t_failed++;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", t_count, what,
	    file != NULL ? ": " : "", file != NULL ? file : "");
}

static void
t_skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++t_count, why);
}

static int
t_int_is(const struct pickle_value *d, const char *key, int64_t want)
{
	int64_t	got;

	return (pickle_int(pickle_dict_get(d, key), &got) == 0 && got == want);
}

static int
t_str_is(const struct pickle_value *v, const char *want, size_t wantlen)
{
	const char	*s;
	size_t		 len;

	s = pickle_str(v, &len);
	return (s != NULL && len == wantlen && memcmp(s, want, len) == 0 &&
	    s[len] == '\0');
}

static struct pickle_value *
t_parse(const char *name, const struct pickle_callbacks *cb)
{
	struct pickle_value	*root;
	char			 path[8192], *cause = NULL;

	snprintf(path, sizeof path, "%s/%s", t_dir, name);
	root = pickle_parse_file(path, cb, &cause);
	if (root == NULL)
		printf("# %s\n", cause != NULL ? cause : "out of memory");
	free(cause);
	return (root);
}

static int
t_ints(const struct pickle_value *d)
{
	return (t_int_is(d, "i0", 0) && t_int_is(d, "i255", 255) &&
	    t_int_is(d, "i256", 256) && t_int_is(d, "i65535", 65535) &&
	    t_int_is(d, "i65536", 65536) && t_int_is(d, "im1", -1) &&
	    t_int_is(d, "imin32", INT32_MIN) &&
	    t_int_is(d, "imax32", INT32_MAX) &&
	    t_int_is(d, "i2_31", INT64_C(2147483648)) &&
	    t_int_is(d, "pos6", (INT64_C(1) << 47) - 5) &&
	    t_int_is(d, "neg6", -(INT64_C(1) << 47) + 5) &&
	    t_int_is(d, "pos7", (INT64_C(1) << 55) + 7) &&
	    t_int_is(d, "neg7", -(INT64_C(1) << 55) - 7) &&
	    t_int_is(d, "max64", INT64_MAX) &&
	    t_int_is(d, "min64", INT64_MIN) &&
	    t_int_is(d, "addr", INT64_C(0x7f6a2c000000)));
}

/*
 * Ints of 2^63 to 2^64 - 1 (LONG1 of 9 bytes): PICKLE_UINT64, read by
 * pickle_uint() and pickle_float(), never by pickle_int(); pickle_uint()
 * takes no negative int.
 */
static int
t_uints(const struct pickle_value *d)
{
	const struct pickle_value	*u63 = pickle_dict_get(d, "u63");
	const struct pickle_value	*max = pickle_dict_get(d, "umax64");
	uint64_t			 u;
	int64_t				 i;
	double				 f;

	return (pickle_type(u63) == PICKLE_UINT64 &&
	    pickle_uint(u63, &u) == 0 && u == UINT64_C(1) << 63 &&
	    pickle_int(u63, &i) == -1 &&
	    pickle_uint(max, &u) == 0 && u == UINT64_MAX &&
	    pickle_float(max, &f) == 0 && f == 18446744073709551616.0 &&
	    strcmp(pickle_type_name(pickle_type(max)), "int") == 0 &&
	    pickle_uint(pickle_dict_get(d, "max64"), &u) == 0 &&
	    u == INT64_MAX &&
	    pickle_uint(pickle_dict_get(d, "im1"), &u) == -1);
}

static int
t_scalars(const struct pickle_value *d)
{
	double	f;
	int	b, t;

	t = pickle_is_none(pickle_dict_get(d, "none")) &&
	    pickle_bool(pickle_dict_get(d, "true"), &b) == 0 && b == 1 &&
	    pickle_bool(pickle_dict_get(d, "false"), &b) == 0 && b == 0;
	t = t && pickle_float(pickle_dict_get(d, "f"), &f) == 0 && f == 1.5;
	t = t && pickle_float(pickle_dict_get(d, "fneg"), &f) == 0 &&
	    f == -2.25e-300;
	t = t && pickle_float(pickle_dict_get(d, "fbig"), &f) == 0 &&
	    f == 1e300;
	t = t && pickle_float(pickle_dict_get(d, "i255"), &f) == 0 &&
	    f == 255.0;
	return (t);
}

static int
t_strings(const struct pickle_value *d)
{
	char	longs[300];

	memset(longs, 'x', sizeof longs);
	return (t_str_is(pickle_dict_get(d, "s"), "", 0) &&
	    t_str_is(pickle_dict_get(d, "short"), "abc", 3) &&
	    t_str_is(pickle_dict_get(d, "nul"), "a\0b", 3) &&
	    t_str_is(pickle_dict_get(d, "utf8"),
	    "caf\xc3\xa9 \xf0\x9f\x98\x80", 10) &&
	    t_str_is(pickle_dict_get(d, "long"), longs, sizeof longs));
}

static int
t_tuples(const struct pickle_value *d)
{
	const struct pickle_value	*t2 = pickle_dict_get(d, "t2");
	size_t				 i;
	char				 key[4];

	for (i = 0; i <= 4; i++) {
		snprintf(key, sizeof key, "t%zu", i);
		if (pickle_type(pickle_dict_get(d, key)) != PICKLE_TUPLE ||
		    pickle_list_len(pickle_dict_get(d, key)) != i)
			return (0);
	}
	return (t_str_is(pickle_list_at(t2, 1), "a", 1));
}

static int
t_shared(const struct pickle_value *d)
{
	const struct pickle_value	*sh = pickle_dict_get(d, "shared");
	const struct pickle_value	*a = pickle_list_at(sh, 0);

	return (pickle_same(a, pickle_list_at(sh, 1)) &&
	    pickle_same(a, pickle_dict_get(pickle_list_at(sh, 2), "again")) &&
	    !pickle_same(a, pickle_dict_get(d, "one")) &&
	    pickle_list_len(a) == 3);
}

static int
t_big(const struct pickle_value *d)
{
	const struct pickle_value	*l = pickle_dict_get(d, "biglist");
	const struct pickle_value	*bd = pickle_dict_get(d, "bigdict");
	int64_t				 i, v;

	if (pickle_list_len(l) != 2500 || pickle_dict_len(bd) != 2100)
		return (0);
	for (i = 0; i < 2500; i++) {
		if (pickle_int(pickle_list_at(l, (size_t)i), &v) != 0 || v != i)
			return (0);
	}
	return (t_int_is(bd, "k2099", 2099) &&
	    t_str_is(pickle_dict_key_at(bd, 0), "k0", 2) &&
	    t_str_is(pickle_dict_key_at(bd, 2099), "k2099", 5));
}

static int
t_nested(const struct pickle_value *d)
{
	const struct pickle_value	*v = pickle_dict_get(d, "nested");
	const struct pickle_value	*k;
	int64_t				 i;
	int				 n;

	for (n = 0; n < 5; n++)
		v = pickle_list_at(v, 0);
	k = pickle_dict_key_at(pickle_dict_get(d, "intkeys"), 1);
	return (t_str_is(v, "deep", 4) &&
	    pickle_int(pickle_dict_key_at(pickle_dict_get(d, "intkeys"), 0),
	    &i) == 0 && i == 1 &&
	    pickle_type(k) == PICKLE_TUPLE && pickle_list_len(k) == 2 &&
	    pickle_is_none(pickle_dict_key_at(pickle_dict_get(d, "intkeys"),
	    2)) && pickle_dict_len(pickle_dict_get(d, "edict")) == 0 &&
	    pickle_type(pickle_dict_get(d, "empty")) == PICKLE_LIST &&
	    pickle_list_len(pickle_dict_get(d, "empty")) == 0);
}

/* Typed getters answer -1/NULL/0 on a mismatch and on NULL. */
static int
t_mismatch(const struct pickle_value *d)
{
	const struct pickle_value	*s = pickle_dict_get(d, "short");
	int64_t				 i;
	double				 f;
	size_t				 len;
	int				 b;

	return (pickle_int(s, &i) == -1 && pickle_float(s, &f) == -1 &&
	    pickle_bool(pickle_dict_get(d, "i0"), &b) == -1 &&
	    pickle_int(pickle_dict_get(d, "true"), &i) == -1 &&
	    pickle_str(pickle_dict_get(d, "i0"), &len) == NULL &&
	    pickle_bytes(s, &len) == NULL && pickle_list_len(d) == 0 &&
	    pickle_list_at(d, 0) == NULL && pickle_dict_len(s) == 0 &&
	    pickle_dict_get(s, "x") == NULL &&
	    pickle_dict_get(d, "missing") == NULL &&
	    pickle_int(NULL, &i) == -1 && pickle_str(NULL, NULL) == NULL &&
	    pickle_list_at(pickle_dict_get(d, "t1"), 1) == NULL &&
	    !pickle_is_none(NULL) && !pickle_same(NULL, NULL) &&
	    strcmp(pickle_type_name(pickle_type(d)), "dict") == 0);
}

static void
t_values(int proto)
{
	struct pickle_value	*d;
	char			 name[64];
	const char		*b;
	size_t			 len;

	snprintf(name, sizeof name, "values-p%d.pickle", proto);
	d = t_parse(name, NULL);
	t_ok(d != NULL && pickle_type(d) == PICKLE_DICT, "parse", name);
	t_ok(t_scalars(d), "none, bools and floats", name);
	t_ok(t_ints(d), "BININT*, LONG1 of 6 to 8 bytes", name);
	t_ok(t_uints(d), "LONG1 of 9 bytes: 2^63 and 2^64 - 1", name);
	t_ok(t_strings(d), "str: empty, NUL, UTF-8, BINUNICODE", name);
	t_ok(t_tuples(d), "EMPTY_TUPLE, TUPLE1-3, TUPLE", name);
	t_ok(t_shared(d), "memoized list shared, not copied", name);
	t_ok(t_big(d), "APPENDS and SETITEMS batches over 1000", name);
	t_ok(t_nested(d), "nesting, non-str keys, empty containers", name);
	t_ok(t_mismatch(d), "typed getters refuse other types", name);
	b = pickle_bytes(pickle_dict_get(d, "bytes"), &len);
	if (proto == 2)
		t_ok(pickle_is_none(pickle_dict_get(d, "bytes")), "none", name);
	else
		t_ok(b != NULL && len == 7 && memcmp(b, "\0\377bytes", 7) == 0,
		    "SHORT_BINBYTES", name);
	pickle_free(d);
}

static void
t_handmade(void)
{
	struct pickle_value	*d;
	const char		*name = "handmade.pickle";
	const char		*b;
	size_t			 len;

	d = t_parse(name, NULL);
	t_ok(d != NULL && t_int_is(d, "big", -(INT64_C(1) << 62)) &&
	    t_int_is(d, "zero", 0) && t_int_is(d, "long1zero", 0),
	    "BINUNICODE8, LONG4, LONG1 of 0 bytes", name);
	t_ok(t_int_is(d, "long1-9", 5) && t_int_is(d, "long1-9neg", -1),
	    "LONG1 of 9 bytes that fit in int64_t", name);
	t_ok(pickle_list_len(pickle_dict_get(d, "tup")) == 4 &&
	    pickle_dict_len(d) == 13, "TUPLE, POP, POP_MARK, SETITEM", name);
	b = pickle_bytes(pickle_dict_get(d, "bytes"), &len);
	t_ok(b != NULL && len == 3 && memcmp(b, "a\0b", 3) == 0 &&
	    pickle_same(pickle_dict_get(d, "get"),
	    pickle_dict_get(d, "put2")) &&
	    pickle_same(pickle_dict_get(d, "get0"),
	    pickle_dict_get(d, "put")) &&
	    pickle_same(pickle_dict_get(d, "bin"), pickle_dict_get(d, "bin2")),
	    "BINBYTES8, BINPUT, LONG_BINPUT, BINGET, LONG_BINGET", name);
	pickle_free(d);
}

/* Streaming state: counts, and what to answer. */
struct t_stream {
	int	 answer;
	size_t	 segments;
	size_t	 traces[2];
	size_t	 bad_index;
	size_t	 progress_calls;
	uint64_t done;
	uint64_t total;
};

static int
t_element(void *arg, enum pickle_list_kind kind, size_t device, size_t index,
    const struct pickle_value *v, char **cause)
{
	struct t_stream	*st = arg;
	size_t		*n;

	if (st->answer < 0) {
		*cause = strdup("stopped by the callback");
		return (-1);
	}
	if (kind == PICKLE_SEGMENTS)
		n = &st->segments;
	else if (device < 2)
		n = &st->traces[device];
	else
		return (st->answer);
	if (index != (*n)++ || pickle_type(v) != PICKLE_DICT)
		st->bad_index++;
	return (st->answer);
}

static void
t_progress(void *arg, uint64_t done, uint64_t total)
{
	struct t_stream	*st = arg;

	st->progress_calls++;
	st->done = done;
	st->total = total;
}

static void
t_snapshot(int proto)
{
	struct t_stream		 st;
	struct pickle_callbacks	 cb = { .element = t_element, .progress = t_progress, .arg = &st };
	struct pickle_value	*d;
	const struct pickle_value *as;
	char			 name[64], path[8192], *cause = NULL;
	double			 f;

	snprintf(name, sizeof name, "snapshot-p%d.pickle", proto);
	memset(&st, 0, sizeof st);
	st.answer = 1;
	d = t_parse(name, &cb);
	as = pickle_dict_get(d, "allocator_settings");
	t_ok(d != NULL && st.segments == 2 && st.traces[0] == 7 &&
	    st.traces[1] == 1200 && st.bad_index == 0,
	    "streamed 2 segments, 7 + 1200 trace entries in order", name);
	t_ok(pickle_list_len(pickle_dict_get(d, "segments")) == 0 &&
	    pickle_list_len(pickle_list_at(pickle_dict_get(d, "device_traces"),
	    1)) == 0, "consumed elements are not kept", name);
	t_ok(pickle_float(pickle_dict_get(as, "garbage_collection_threshold"),
	    &f) == 0 && f == 0.5 && t_int_is(as, "max_split_size", -1) &&
	    pickle_list_len(pickle_dict_get(d, "external_annotations")) == 2 &&
	    pickle_dict_get(d, "future_key") != NULL,
	    "rest of the top-level dict kept, unknown keys too", name);
	t_ok(st.progress_calls >= 1 && st.done == st.total && st.total > 0,
	    "progress reported", name);
	pickle_free(d);

	memset(&st, 0, sizeof st);
	d = t_parse(name, &cb);
	t_ok(d != NULL && st.segments == 2 &&
	    pickle_list_len(pickle_dict_get(d, "segments")) == 2 &&
	    pickle_list_len(pickle_list_at(pickle_dict_get(d, "device_traces"),
	    1)) == 1200, "elements kept when not consumed", name);
	pickle_free(d);

	memset(&st, 0, sizeof st);
	st.answer = -1;
	snprintf(path, sizeof path, "%s/%s", t_dir, name);
	d = pickle_parse_file(path, &cb, &cause);
	t_ok(d == NULL && cause != NULL &&
	    strcmp(cause, "stopped by the callback") == 0,
	    "callback error returned unchanged", name);
	free(cause);
}

static void
t_buffer(void)
{
	static const char	 dict[] =
	    "\x80\x04}\x94(\x8c\x01" "a\x94K\x01u.";
	static const char	 list[] = "\x80\x04]\x94.";
	struct pickle_value	*d;
	char			*cause = NULL;

	d = pickle_parse_buffer(dict, sizeof dict - 1, "mem", NULL, &cause);
	t_ok(d != NULL && t_int_is(d, "a", 1), "parse from a buffer", NULL);
	pickle_free(d);
	d = pickle_parse_buffer(list, sizeof list - 1, "mem", NULL, &cause);
	t_ok(d == NULL && cause != NULL && strcmp(cause, "mem: top-level value"
	    " is a list, not a dict (not a PyTorch memory snapshot)") == 0,
	    "error line names the input", NULL);
	free(cause);
	d = pickle_parse_file("/nonexistent/x.pickle", NULL, &cause);
	t_ok(d == NULL && cause != NULL &&
	    strncmp(cause, "/nonexistent/x.pickle: ", 23) == 0,
	    "missing file", NULL);
	free(cause);
}

/* A file that is not a regular file: one line, at once (a FIFO too). */
static void
t_special(void)
{
	static const struct {
		const char	*path;
		const char	*want;
	} cases[] = {
		{ NULL, "a FIFO, not a regular file" },
		{ "/", "/: a directory, not a regular file" },
		{ "/dev/null", "/dev/null: a character device, not a regular "
		    "file" }
	};
	struct pickle_value	*d;
	char			 fifo[] = "/tmp/vramtrace-t-pickle-XXXXXX";
	char			 path[64], *cause;
	size_t			 i;
	int			 fd;

	if ((fd = mkstemp(fifo)) == -1) {
		t_skip("no temporary file");
		return;
	}
	close(fd);
	unlink(fifo);
	snprintf(path, sizeof path, "%s.fifo", fifo);
	if (mkfifo(path, 0600) != 0) {
		t_skip("no FIFO");
		return;
	}
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cause = NULL;
		d = pickle_parse_file(cases[i].path != NULL ? cases[i].path :
		    path, NULL, &cause);
		t_ok(d == NULL && cause != NULL &&
		    strstr(cause, cases[i].want) != NULL, cases[i].want, NULL);
		if (cause != NULL && strstr(cause, cases[i].want) == NULL)
			printf("# %s\n", cause);
		free(cause);
	}
	unlink(path);
}

/* Counts of one snapshot, as text that python3 prints the same way. */
struct t_counts {
	size_t	 segments;
	size_t	 blocks;
	char	*keys[256];	/* "DEVICE ACTION" */
	size_t	 counts[256];
	size_t	 nkeys;
	int	 bad;
};

static int
t_count_element(void *arg, enum pickle_list_kind kind, size_t device,
    size_t index, const struct pickle_value *v, char **cause)
{
	struct t_counts	*c = arg;
	const char	*action;
	char		 key[128];
	size_t		 i;

	(void)index;
	(void)cause;
	if (kind == PICKLE_SEGMENTS) {
		c->segments++;
		c->blocks += pickle_list_len(pickle_dict_get(v, "blocks"));
		return (1);
	}
	action = pickle_str(pickle_dict_get(v, "action"), NULL);
	if (action == NULL) {
		c->bad++;
		return (1);
	}
	snprintf(key, sizeof key, "%zu %s", device, action);
	for (i = 0; i < c->nkeys; i++) {
		if (strcmp(c->keys[i], key) == 0)
			break;
	}
	if (i == c->nkeys) {
		if (c->nkeys == 256) {
			c->bad++;
			return (1);
		}
		c->keys[c->nkeys++] = strdup(key);
	}
	c->counts[i]++;
	return (1);
}

static int
t_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* Parse path streaming and print the counts into out. */
static int
t_tally(const char *path, char *out, size_t size)
{
	struct t_counts		 c;
	struct pickle_callbacks	 cb = { .element = t_count_element, .progress = NULL, .arg = &c };
	struct pickle_value	*root;
	char			*cause = NULL, *sorted[256];
	size_t			 i, j, off;

	memset(&c, 0, sizeof c);
	root = pickle_parse_file(path, &cb, &cause);
	if (root == NULL) {
		printf("# %s\n", cause != NULL ? cause : "out of memory");
		free(cause);
	}
	pickle_free(root);
	memcpy(sorted, c.keys, sizeof sorted);
	qsort(sorted, c.nkeys, sizeof sorted[0], t_cmp);
	off = (size_t)snprintf(out, size, "segments %zu\nblocks %zu\n",
	    c.segments, c.blocks);
	for (i = 0; i < c.nkeys && off < size; i++) {
		for (j = 0; c.keys[j] != sorted[i]; j++)
			/* nothing */;
		off += (size_t)snprintf(out + off, size - off, "trace %s %zu\n",
		    sorted[i], c.counts[j]);
	}
	for (i = 0; i < c.nkeys; i++)
		free(c.keys[i]);
	return (root != NULL && c.bad == 0 && off < size ? 0 : -1);
}

/* What python3's pickle module counts in path, in t_tally()'s format. */
static int
t_oracle(const char *path, char *out, size_t size)
{
	static const char script[] =
	    "import collections, pickle, sys\n"
	    "d = pickle.load(open(sys.argv[1], \"rb\"))\n"
	    "print(\"segments\", len(d[\"segments\"]))\n"
	    "print(\"blocks\",\n"
	    "      sum(len(s[\"blocks\"]) for s in d[\"segments\"]))\n"
	    "c = collections.Counter()\n"
	    "for dev, t in enumerate(d[\"device_traces\"]):\n"
	    "    for e in t:\n"
	    "        c[\"%d %s\" % (dev, e[\"action\"])] += 1\n"
	    "for k in sorted(c):\n"
	    "    print(\"trace\", k, c[k])\n";
	FILE	*f;
	char	 cmd[16384];
	size_t	 n;

	if ((size_t)snprintf(cmd, sizeof cmd, "python3 -c '%s' '%s'", script,
	    path) >= sizeof cmd || (f = popen(cmd, "r")) == NULL)
		return (-1);
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	return (pclose(f) == 0 && n < size - 1 ? 0 : -1);
}

static void
t_snapshots(const char *srcdir)
{
	const char	*dir = getenv("VRAMTRACE_SNAPSHOTS");
	char		 def[4096], path[8192], got[16384], want[16384];
	struct dirent	*de;
	DIR		*d;
	size_t		 len;

	if (dir == NULL) {
		snprintf(def, sizeof def, "%s/../shared/data/snapshots",
		    srcdir);
		dir = def;
	}
	if ((d = opendir(dir)) == NULL) {
		t_skip("no snapshot directory");
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 7, ".pickle") != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (t_oracle(path, want, sizeof want) != 0) {
			printf("ok %d # SKIP python3 cannot read %s\n",
			    ++t_count, path);
			continue;
		}
		t_ok(t_tally(path, got, sizeof got) == 0 &&
		    strcmp(got, want) == 0,
		    "segments, blocks, trace entries per action as python3",
		    de->d_name);
		if (strcmp(got, want) != 0)
			printf("# got:\n%s# want:\n%s", got, want);
	}
	closedir(d);
}

static int
t_consume(void *arg, enum pickle_list_kind kind, size_t device, size_t index,
    const struct pickle_value *v, char **cause)
{
	(void)arg;
	(void)kind;
	(void)device;
	(void)index;
	(void)v;
	(void)cause;
	return (1);
}

/* Parse path with cb; NULL, with the error on stderr, when it fails. */
static struct pickle_value *
t_parse_cli(const char *path, const struct pickle_callbacks *cb)
{
	struct pickle_value	*root;
	char			*cause = NULL;

	if ((root = pickle_parse_file(path, cb, &cause)) == NULL) {
		fprintf(stderr, "%s\n",
		    cause != NULL ? cause : "out of memory");
		free(cause);
	}
	return (root);
}

/* --check FILE: 0 if FILE parses, else 1 with the error on stderr. */
static int
t_check(const char *path)
{
	struct pickle_callbacks	 cb = { .element = t_consume, .progress = NULL, .arg = NULL };
	struct pickle_value	*root;

	if ((root = t_parse_cli(path, &cb)) == NULL)
		return (1);
	pickle_free(root);
	return (0);
}

/* Print v as tests/pickle-view.py does. */
static void
t_print(FILE *f, const struct pickle_value *v)
{
	const unsigned char	*b;
	const char		*open = "[", *close = "]";
	size_t			 i, len;
	int64_t			 n;
	uint64_t		 u;
	double			 d;
	int			 t;

	switch (pickle_type(v)) {
	case PICKLE_NONE:
		fputs("None", f);
		break;
	case PICKLE_BOOL:
		pickle_bool(v, &t);
		fputs(t ? "True" : "False", f);
		break;
	case PICKLE_INT:
		pickle_int(v, &n);
		fprintf(f, "%lld", (long long)n);
		break;
	case PICKLE_UINT64:
		pickle_uint(v, &u);
		fprintf(f, "%llu", (unsigned long long)u);
		break;
	case PICKLE_FLOAT:
		pickle_float(v, &d);
		fprintf(f, "%.17g", d);
		break;
	case PICKLE_STR:
	case PICKLE_BYTES:
		if (pickle_type(v) == PICKLE_STR)
			b = (const unsigned char *)pickle_str(v, &len);
		else {
			b = pickle_bytes(v, &len);
			fputc('b', f);
		}
		fputc('"', f);
		for (i = 0; i < len; i++) {
			if (b[i] < 0x20 || b[i] > 0x7e || b[i] == '"' ||
			    b[i] == '\\')
				fprintf(f, "\\x%02x", b[i]);
			else
				fputc(b[i], f);
		}
		fputc('"', f);
		break;
	case PICKLE_TUPLE:
		open = "(";
		close = ")";
		/* FALLTHROUGH */
	case PICKLE_LIST:
		fputs(open, f);
		for (i = 0; i < pickle_list_len(v); i++) {
			fputs(i > 0 ? ", " : "", f);
			t_print(f, pickle_list_at(v, i));
		}
		fputs(close, f);
		break;
	case PICKLE_DICT:
		fputc('{', f);
		for (i = 0; i < pickle_dict_len(v); i++) {
			fputs(i > 0 ? ", " : "", f);
			t_print(f, pickle_dict_key_at(v, i));
			fputs(": ", f);
			t_print(f, pickle_dict_value_at(v, i));
		}
		fputc('}', f);
		break;
	}
}

static int
t_view_element(void *arg, enum pickle_list_kind kind, size_t device,
    size_t index, const struct pickle_value *v, char **cause)
{
	static const char	*kinds[] = { "segment", "trace", "annotation" };

	(void)arg;
	(void)cause;
	if (kind == PICKLE_TRACE)
		printf("%s %zu %zu ", kinds[kind], device, index);
	else
		printf("%s %zu ", kinds[kind], index);
	t_print(stdout, v);
	putchar('\n');
	return (1);
}

/* --view FILE: what the importer is given, printed; 1 with the error. */
static int
t_view(const char *path)
{
	static const char *const keep[] = { "allocator_settings", NULL };
	struct pickle_stats	 st;
	struct pickle_callbacks	 cb = { .element = t_view_element,
	    .annotations = 1, .keep = keep, .stats = &st };
	struct pickle_value	*root;
	size_t			 i;

	if ((root = t_parse_cli(path, &cb)) == NULL)
		return (1);
	for (i = 0; i < pickle_dict_len(root); i++) {
		if (pickle_str(pickle_dict_key_at(root, i), NULL) == NULL ||
		    strcmp(pickle_str(pickle_dict_key_at(root, i), NULL),
		    keep[0]) != 0)
			continue;
		printf("key %s ", keep[0]);
		t_print(stdout, pickle_dict_value_at(root, i));
		putchar('\n');
	}
	pickle_free(root);
	fprintf(stderr, "peak %llu reread %llu\n",
	    (unsigned long long)st.peak_bytes,
	    (unsigned long long)st.reread_bytes);
	return (0);
}

int
main(int argc, char **argv)
{
	const char	*srcdir = getenv("srcdir");

	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return (t_check(argv[2]));
	if (argc == 3 && strcmp(argv[1], "--view") == 0)
		return (t_view(argv[2]));
	if (srcdir == NULL)
		srcdir = ".";
	snprintf(t_dir, sizeof t_dir, "%s/tests/data/pickle/good", srcdir);

	t_values(2);
	t_values(4);
	t_values(5);
	t_handmade();
	t_snapshot(2);
	t_snapshot(4);
	t_snapshot(5);
	t_buffer();
	t_special();
	t_snapshots(srcdir);
	printf("1..%d\n", t_count);
	return (t_failed == 0 ? 0 : 1);
}
