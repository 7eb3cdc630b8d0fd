/*
 * stack-python.c: Python stacks, read through the CPython C API found at
 * run time.
 *
 * Nothing here links with libpython: stack_python_start() looks the
 * functions up in the process (dlsym), and a process without them (a C++
 * program, a CUDA sample) simply has no Python stacks.  Only functions
 * that exist with the same contract in every Python PyTorch supports
 * (3.10 and later) are used, most of them from the stable ABI:
 * PyEval_GetFrame, PyFrame_GetCode, PyFrame_GetLineNumber,
 * PyGILState_GetThisThreadState, PyObject_GetAttr, PyUnicode_AsUTF8AndSize,
 * Py_IncRef, Py_DecRef and PyErr_Fetch/Restore.  PyGILState_Check (3.4) and
 * PyFrame_GetBack (3.9) are public but not in the limited API, and so are
 * PyFrame_GetLasti (3.11) and the unchecked thread state getter, used where
 * present: without them the "f_lasti" attribute and the GIL check alone
 * stand in.
 *
 * Every function but stack_python_start() and stack_python_held() must be
 * called by a thread that holds the GIL; stack_python_held() says whether
 * it does, without touching Python state.  PyGILState_Check() says yes
 * whenever its checking is off (sub-interpreters), so where the unchecked
 * getter exists the current thread state must also be this thread's own.
 *
 * A walk keys the stack by its (code object, instruction offset) pairs,
 * innermost first, and a last word that says whether the depth limit cut
 * it: a stack seen before costs the walk and one lookup.  Line numbers,
 * file and function names are computed only for a new stack.  The code
 * objects of known stacks are kept alive (one reference each), so that a
 * code object's address is never taken by another one; they hold no
 * tensors.  The tables are guarded by py_lock (the GIL serialises walks
 * anyway, except in a free-threaded Python).
 */
#include "config.h"

#include <sys/types.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "stack.h"

typedef struct py_object PyObject;

struct py_api {
	int		 (*is_initialized)(void);
	int		 (*gil_check)(void);
	void		*(*this_thread_state)(void);
	void		*(*unchecked_thread_state)(void);	/* or NULL */
	PyObject	*(*get_frame)(void);
	PyObject	*(*frame_code)(PyObject *);
	int		 (*frame_line)(PyObject *);
	PyObject	*(*frame_back)(PyObject *);
	int		 (*frame_lasti)(PyObject *);		/* or NULL */
	PyObject	*(*getattr)(PyObject *, PyObject *);
	PyObject	*(*intern)(const char *);
	long		 (*as_long)(PyObject *);
	const char	*(*as_utf8)(PyObject *, ssize_t *);
	void		 (*incref)(PyObject *);
	void		 (*decref)(PyObject *);
	PyObject	*(*err_occurred)(void);
	void		 (*err_fetch)(PyObject **, PyObject **, PyObject **);
	void		 (*err_restore)(PyObject *, PyObject *, PyObject *);
	void		 (*err_clear)(void);
};

/* What a known code object is called, in UTF-8 without tabs or newlines. */
struct py_code {
	char		*file;
	char		*name;
};

static struct py_api	 py;
static int		 py_ok;
static pthread_mutex_t	 py_lock = PTHREAD_MUTEX_INITIALIZER;
static PyObject		*py_f_lasti, *py_co_filename, *py_co_name;
static struct stack_table py_stacks;	/* walk key -> string id */
static struct stack_table py_codes;	/* code object -> py_code_list index */
static struct py_code	*py_code_list;
static size_t		 py_ncodes, py_codes_alloc;
static PyObject		**py_frames;	/* scratch of one walk, py_lock */
static uint64_t		*py_words;
static unsigned		 py_depth;

#define PY_SYM(field, name)	py_sym((void **)&py.field, name)

/* Look name up in the process into *slot; 1 if found. */
static int
py_sym(void **slot, const char *name)
{
	return ((*slot = dlsym(RTLD_DEFAULT, name)) != NULL);
}

/*
 * Find the C API in the process.  Returns 0, or -1 when the process is not
 * Python (or lacks a function we need): no Python stacks then.
 */
int
stack_python_start(void)
{
	if (!(PY_SYM(is_initialized, "Py_IsInitialized") &&
	    PY_SYM(gil_check, "PyGILState_Check") &&
	    PY_SYM(this_thread_state, "PyGILState_GetThisThreadState") &&
	    PY_SYM(get_frame, "PyEval_GetFrame") &&
	    PY_SYM(frame_code, "PyFrame_GetCode") &&
	    PY_SYM(frame_line, "PyFrame_GetLineNumber") &&
	    PY_SYM(frame_back, "PyFrame_GetBack") &&
	    PY_SYM(getattr, "PyObject_GetAttr") &&
	    PY_SYM(intern, "PyUnicode_InternFromString") &&
	    PY_SYM(as_long, "PyLong_AsLong") &&
	    PY_SYM(as_utf8, "PyUnicode_AsUTF8AndSize") &&
	    PY_SYM(incref, "Py_IncRef") &&
	    PY_SYM(decref, "Py_DecRef") &&
	    PY_SYM(err_occurred, "PyErr_Occurred") &&
	    PY_SYM(err_fetch, "PyErr_Fetch") &&
	    PY_SYM(err_restore, "PyErr_Restore") &&
	    PY_SYM(err_clear, "PyErr_Clear")))
		return (-1);
	if (!PY_SYM(unchecked_thread_state, "PyThreadState_GetUnchecked"))
		(void)PY_SYM(unchecked_thread_state,
		    "_PyThreadState_UncheckedGet");
	(void)PY_SYM(frame_lasti, "PyFrame_GetLasti");
	py_ok = 1;
	return (0);
}

/*
 * Does this thread hold the GIL?  Safe from any thread: it reads the
 * runtime's thread state bookkeeping, no Python object.
 */
int
stack_python_held(void)
{
	void	*mine;

	if (!py_ok || !py.is_initialized() || !py.gil_check())
		return (0);
	if ((mine = py.this_thread_state()) == NULL)
		return (0);
	return (py.unchecked_thread_state == NULL ||
	    py.unchecked_thread_state() == mine);
}

/* Has this thread Python frames?  The GIL must be held. */
int
stack_python_has_frames(void)
{
	return (py_ok && py.get_frame() != NULL);
}

/* s with tabs and newlines (the site format's separators) made spaces. */
static char *
py_clean(const char *s, ssize_t len)
{
	char	*c;
	ssize_t	 i;

	if (s == NULL || (c = malloc((size_t)len + 1)) == NULL)
		return (NULL);
	for (i = 0; i < len; i++)
		c[i] = s[i] == '\t' || s[i] == '\n' ? ' ' : s[i];
	c[len] = '\0';
	return (c);
}

/* An attribute of code as clean UTF-8 (caller frees), or NULL. */
static char *
py_code_text(PyObject *code, PyObject *attr)
{
	PyObject	*o;
	const char	*s;
	ssize_t		 len = 0;
	char		*c;

	if ((o = py.getattr(code, attr)) == NULL)
		return (NULL);
	s = py.as_utf8(o, &len);
	c = py_clean(s, len);
	py.decref(o);
	return (c);
}

/* The names of code, learning them the first time; NULL on failure. */
static const struct py_code *
py_code(PyObject *code)
{
	struct stack_table_entry	*e;
	struct py_code			*grown, c;
	uint64_t			 w = (uint64_t)(uintptr_t)code, h;
	size_t				 n;

	h = stack_table_hash(&w, 1);
	if ((e = stack_table_find(&py_codes, &w, 1, h)) != NULL)
		return (&py_code_list[e->value]);
	if (py_ncodes == py_codes_alloc) {
		n = py_codes_alloc == 0 ? 256 : 2 * py_codes_alloc;
		if ((grown = realloc(py_code_list, n * sizeof *grown)) == NULL)
			return (NULL);
		py_code_list = grown;
		py_codes_alloc = n;
	}
	c.file = py_code_text(code, py_co_filename);
	c.name = py_code_text(code, py_co_name);
	if (c.file == NULL || c.name == NULL ||
	    stack_table_add(&py_codes, &w, 1, h, py_ncodes) == NULL) {
		free(c.file);
		free(c.name);
		return (NULL);
	}
	py.incref(code);	/* its address now names it for good */
	py_code_list[py_ncodes] = c;
	return (&py_code_list[py_ncodes++]);
}

/* Append to a growing text; -1 when memory ran out. */
static int
py_append(char **text, size_t *len, size_t *alloc, const char *s, size_t n)
{
	char	*grown;
	size_t	 want;

	if (*len + n + 1 > *alloc) {
		want = *alloc == 0 ? 1024 : *alloc;
		while (want < *len + n + 1)
			want *= 2;
		if ((grown = realloc(*text, want)) == NULL)
			return (-1);
		*text = grown;
		*alloc = want;
	}
	memcpy(*text + *len, s, n);
	*len += n;
	(*text)[*len] = '\0';
	return (0);
}

/*
 * The text of a new stack of n frames (py_frames), "!python" and a line
 * per frame, and its string id; 0 on failure.
 */
static uint32_t
py_define(unsigned n, int truncated)
{
	const struct py_code	*c;
	char			*text = NULL, line[32];
	size_t			 len = 0, alloc = 0;
	unsigned		 i;
	uint32_t		 id = 0;
	int			 bad = 0;

	bad = py_append(&text, &len, &alloc, "!python\n", 8);
	for (i = 0; i < n && !bad; i++) {
		if ((c = py_code((PyObject *)(uintptr_t)py_words[2 * i])) ==
		    NULL) {
			bad = 1;
			break;
		}
		snprintf(line, sizeof line, "\t%d\n",
		    py.frame_line(py_frames[i]));
		bad = py_append(&text, &len, &alloc, c->name,
		    strlen(c->name)) != 0 || py_append(&text, &len, &alloc,
		    "\t", 1) != 0 || py_append(&text, &len, &alloc, c->file,
		    strlen(c->file)) != 0 || py_append(&text, &len, &alloc,
		    line, strlen(line)) != 0;
	}
	if (!bad && truncated)
		bad = py_append(&text, &len, &alloc, "...\t??\t0\n", 9);
	if (!bad && len <= EVENT_STRING_MAX)
		id = client_string(text);
	free(text);
	return (id);
}

/* The instruction offset of frame f, or -1 if Python cannot say. */
static int64_t
py_lasti(PyObject *f)
{
	PyObject	*o;
	long		 v;

	if (py.frame_lasti != NULL)
		return (py.frame_lasti(f));
	if ((o = py.getattr(f, py_f_lasti)) == NULL)
		return (-1);
	v = py.as_long(o);
	py.decref(o);
	return (v);
}

/* Walk this thread's frames into py_frames and py_words; py_lock held. */
static unsigned
py_walk(unsigned depth, int *truncated)
{
	PyObject	*f, *code;
	unsigned	 n = 0;

	if ((f = py.get_frame()) == NULL)
		return (0);
	py.incref(f);
	while (f != NULL && n < depth) {
		if ((code = py.frame_code(f)) == NULL) {
			py.decref(f);
			f = NULL;
			break;
		}
		py_words[2 * n] = (uint64_t)(uintptr_t)code;
		py_words[2 * n + 1] = (uint64_t)py_lasti(f);
		py.decref(code);	/* the frame holds it */
		py_frames[n++] = f;
		f = py.frame_back(f);
	}
	*truncated = f != NULL;
	if (f != NULL)
		py.decref(f);
	py_words[2 * n] = (uint64_t)*truncated;
	return (n);
}

static int
py_prepare(unsigned depth)
{
	if (py_f_lasti == NULL &&
	    ((py_f_lasti = py.intern("f_lasti")) == NULL ||
	    (py_co_filename = py.intern("co_filename")) == NULL ||
	    (py_co_name = py.intern("co_name")) == NULL))
		return (-1);
	if (depth <= py_depth)
		return (0);
	free(py_frames);
	free(py_words);
	py_frames = malloc(depth * sizeof *py_frames);
	py_words = malloc((2 * depth + 1) * sizeof *py_words);
	if (py_frames == NULL || py_words == NULL) {
		free(py_frames);
		free(py_words);
		py_frames = NULL;
		py_words = NULL;
		py_depth = 0;
		return (-1);
	}
	py_depth = depth;
	return (0);
}

/*
 * The string id of this thread's Python stack, its depth innermost frames
 * at most; 0 when it has no Python frame (or recording is off).  The
 * caller holds the GIL.  An exception already set stays set.
 */
uint32_t
stack_python_site(unsigned depth)
{
	struct stack_table_entry	*e;
	PyObject			*et = NULL, *ev = NULL, *tb = NULL;
	uint64_t			 h;
	uint32_t			 id = 0;
	unsigned			 n, i;
	int				 had, truncated = 0;

	if (!py_ok || depth == 0)
		return (0);
	pthread_mutex_lock(&py_lock);
	if ((had = py.err_occurred() != NULL))
		py.err_fetch(&et, &ev, &tb);
	if (py_prepare(depth) != 0)
		goto out;
	n = py_walk(depth, &truncated);
	if (n == 0)
		goto out;
	h = stack_table_hash(py_words, 2 * n + 1);
	if ((e = stack_table_find(&py_stacks, py_words, 2 * n + 1, h)) !=
	    NULL)
		id = (uint32_t)e->value;
	else if ((id = py_define(n, truncated)) != 0)
		stack_table_add(&py_stacks, py_words, 2 * n + 1, h, id);
	for (i = 0; i < n; i++)
		py.decref(py_frames[i]);
out:
	py.err_clear();
	if (had)
		py.err_restore(et, ev, tb);
	pthread_mutex_unlock(&py_lock);
	return (id);
}
