/*
 * site-origin.c: which frames of a stack name it to people.  Pure: it sees
 * file names, and uses neither SQLite nor curses; tests/t-site-origin.c
 * checks it.
 *
 * A site's label (store-site.c) is its innermost frame that has a file.
 * For memory that a library allocates that is the library's line
 * (torch/nn/functional.py for an activation, PyTorch's C++ in every stack
 * of a snapshot taken with stacks="all"), while what people look for is
 * their own: the origin, the innermost frame of the program's own Python
 * code, and its caller, the next such frame out.  The innermost Python
 * frame beneath the origin, a library's, says where the memory was made.
 *
 * A frame is the program's when its file is Python source (".py", or a
 * pseudo-file such as "<stdin>" or "<ipython-input-3-...>") outside every
 * place Python installs packages (site-packages, dist-packages), its
 * standard library (lib/python3.N, lib/pypy), its frozen modules and the
 * code PyTorch generates (torch.fx's "<eval_with_key>", Inductor's
 * torchinductor_ cache).  A program installed as a package is a library by
 * that rule: its stacks have no origin and are named by their label.
 *
 * A site's name (site_name, written into sites.name) spells those frames:
 * "origin < caller (in within)", the last two shortened.
 */
#include "config.h"

#include "vramtrace.h"
#include "site-origin.h"

#include <stdlib.h>
#include <string.h>

/* Parts of a file name that make a Python frame a library's. */
static const char *const library_parts[] = {
	"site-packages/", "dist-packages/", "/lib/python3", "/lib/pypy",
	"/torchinductor_", "<frozen ", "<eval_with_key>",
};

/* What kind of frame a frame of this file is. */
enum site_frame_kind
site_frame_kind(const char *filename)
{
	size_t	n, i;

	if (filename == NULL)
		return (SITE_FRAME_NATIVE);
	n = strlen(filename);
	if (filename[0] != '<' && (n < 3 || strcmp(filename + n - 3,
	    ".py") != 0))
		return (SITE_FRAME_NATIVE);
	if (strcmp(filename, "<unknown>") == 0)
		return (SITE_FRAME_NATIVE);
	for (i = 0; i < sizeof library_parts / sizeof library_parts[0]; i++)
		if (strstr(filename, library_parts[i]) != NULL)
			return (SITE_FRAME_LIBRARY);
	return (SITE_FRAME_PROGRAM);
}

/*
 * Find the frames that name frames[0..n) (innermost first): its origin,
 * the origin's caller and the innermost Python frame when a library's
 * frame is inside the origin; -1 for each that the stack lacks.
 */
void
site_origin_find(const struct site_frame *frames, size_t n,
    struct site_origin *o)
{
	enum site_frame_kind	k;
	long			python = -1;
	size_t			i;

	o->origin = o->caller = o->within = -1;
	for (i = 0; i < n; i++) {
		k = site_frame_kind(frames[i].filename);
		if (k == SITE_FRAME_NATIVE)
			continue;
		if (python < 0)
			python = (long)i;
		if (k != SITE_FRAME_PROGRAM)
			continue;
		if (o->origin >= 0) {
			o->caller = (long)i;
			break;
		}
		o->origin = (long)i;
		if (python != o->origin)
			o->within = python;
	}
}

/*
 * A frame as a label (the caller frees it): "file:line function", or the
 * function alone for a native frame of a snapshot, whose file is "??".
 * The one spelling of a frame in sites.label and in the suspects' names.
 */
char *
site_frame_label(const char *filename, int64_t line, const char *name)
{
	char	*label;

	if (name == NULL)
		name = "?";
	if (filename == NULL || strcmp(filename, "??") == 0)
		xasprintf(&label, "%s", name);
	else
		xasprintf(&label, "%s:%lld %s", filename, (long long)line,
		    name);
	return (label);
}

/*
 * The end of label that people need to know it by: from the package
 * (after site-packages/ or dist-packages/) or else from the file's base
 * name.  A label with no "file:line " is given whole.
 */
const char *
site_label_short(const char *label)
{
	const char	*colon = NULL, *p, *start;
	size_t		 i;

	/* The file ends at the last ':' followed by digits and a space. */
	for (p = strchr(label, ':'); p != NULL; p = strchr(p + 1, ':')) {
		for (i = 1; p[i] >= '0' && p[i] <= '9'; i++)
			continue;
		if (i > 1 && p[i] == ' ')
			colon = p;
	}
	if (colon == NULL)
		return (label);
	start = label;
	for (p = label; p < colon; p++) {
		if (*p == '/')
			start = p + 1;
		if (strncmp(p, "site-packages/", 14) == 0 ||
		    strncmp(p, "dist-packages/", 14) == 0) {
			start = p + 14;
			break;
		}
	}
	return (start);
}

/*
 * The name people know a site by (the caller frees it): its origin, with
 * " < " and its caller and " (in ...)" and the library's frame within it
 * as far as it has them (labels, as site_frame_label spells them), else
 * its label, else "(no stack)".  Callers and frames within are shortened
 * (site_label_short).
 */
char *
site_origin_name(const char *origin, const char *caller, const char *within,
    const char *label)
{
	char	*name;

	if (origin == NULL)
		return (xstrdup(label != NULL ? label : "(no stack)"));
	xasprintf(&name, "%s%s%s%s%s%s", origin, caller != NULL ? " < " : "",
	    caller != NULL ? site_label_short(caller) : "", within != NULL ?
	    " (in " : "", within != NULL ? site_label_short(within) : "",
	    within != NULL ? ")" : "");
	return (name);
}

/* The frame at index i of frames as a label, or NULL for i < 0. */
char *
site_frame_label_at(const struct site_frame *frames, long i)
{
	return (i >= 0 ? site_frame_label(frames[i].filename, frames[i].line,
	    frames[i].name) : NULL);
}

/*
 * The name people know the stack frames[0..n) (innermost first) by, whose
 * label is label: site_origin_name of the frames site_origin_find picks.
 * The caller frees it.
 */
char *
site_name(const struct site_frame *frames, size_t n, const char *label)
{
	struct site_origin	 o;
	char			*origin, *caller, *within, *name;

	site_origin_find(frames, n, &o);
	origin = site_frame_label_at(frames, o.origin);
	caller = site_frame_label_at(frames, o.caller);
	within = site_frame_label_at(frames, o.within);
	name = site_origin_name(origin, caller, within, label);
	free(origin);
	free(caller);
	free(within);
	return (name);
}
