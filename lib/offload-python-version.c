/*
 * offload-python-version.c: a saved tensor written in place before
 * backward used it.
 *
 * Without saved-tensor hooks, autograd compares each saved tensor's
 * version counter (bumped by every write in place, through any view) with
 * the one it saved, and refuses to unpack a tensor written since.  With
 * hooks it skips that check (saved_variable.cpp: the hooks own the data),
 * so a write in place would go unseen and backward would compute
 * gradients from other values than forward's.  The hooks check the
 * counter themselves, wherever what they give back could differ from what
 * was saved:
 *
 *  - a tensor kept on the GPU: pack returns (t, version) and unpack checks
 *    t itself;
 *  - an offloaded tensor whose source the hooks hold: versions keeps the
 *    source's counter at pack, by engine id.  A source written before it
 *    was let go (its copy may have read the write) goes to changed with
 *    both versions, and unpack refuses it; one given back from the source itself is checked
 *    at unpack;
 *  - a dedupe hit: the engine matches a key only at the same version.
 *
 * A copy that was done before the write (the source let go first) holds
 * the bytes forward saved and comes back without error, where autograd
 * without hooks would refuse it.  Writes through .data escape the counter,
 * as they escape autograd's own check.
 */
#include "config.h"

#include "offload-python.h"

#define N	offload_python_name

/* Raise the error of a saved tensor written in place; returns -1. */
static int
offload_python_written(PyObject *saved, PyObject *now)
{
	PyErr_Format(PyExc_RuntimeError, "vramtrace offload: a tensor saved "
	    "for backward was written in place before backward used it (at "
	    "version %S, saved at version %S): its gradient would be wrong; "
	    "PyTorch refuses it the same way without saved-tensor hooks",
	    now, saved);
	return (-1);
}

/*
 * Whether t's version is still saved: 0, or -1 with the error raised when
 * t was written in place (or on another error).
 */
int
offload_python_version_check(PyObject *t, PyObject *saved)
{
	PyObject	*now;
	int		 same;

	if ((now = PyObject_GetAttr(t, N.version)) == NULL)
		return (-1);
	if ((same = PyObject_RichCompareBool(now, saved, Py_EQ)) == 0)
		offload_python_written(saved, now);
	Py_DECREF(now);
	return (same == 1 ? 0 : -1);
}

/* Remember the version of src, held for engine id; 0 or -1. */
int
offload_python_version_hold(struct offload_python_hooks *h, uint64_t id,
    PyObject *src)
{
	PyObject	*key, *v;
	int		 rc = -1;

	if ((key = PyLong_FromUnsignedLongLong(id)) == NULL)
		return (-1);
	if ((v = PyObject_GetAttr(src, N.version)) != NULL) {
		rc = PyDict_SetItem(h->versions, key, v);
		Py_DECREF(v);
	}
	Py_DECREF(key);
	return (rc);
}

/*
 * The engine lets go of what the hooks hold for key: a source written in
 * place since pack is noted in changed.  0, or -1 on error.
 */
int
offload_python_version_drop(struct offload_python_hooks *h, PyObject *key)
{
	PyObject	*saved, *src, *now, *pair;
	int		 same, rc = -1;

	if ((saved = PyDict_GetItemWithError(h->versions, key)) == NULL)
		return (PyErr_Occurred() ? -1 : 0);
	Py_INCREF(saved);
	if (PyDict_DelItem(h->versions, key) != 0 ||
	    (src = PyDict_GetItemWithError(h->held, key)) == NULL) {
		Py_DECREF(saved);
		return (PyErr_Occurred() ? -1 : 0);
	}
	if ((now = PyObject_GetAttr(src, N.version)) != NULL) {
		same = PyObject_RichCompareBool(now, saved, Py_EQ);
		if (same == 1)
			rc = 0;
		else if (same == 0 &&
		    (pair = PyTuple_Pack(2, saved, now)) != NULL) {
			rc = PyDict_SetItem(h->changed, key, pair);
			Py_DECREF(pair);
		}
		Py_DECREF(now);
	}
	Py_DECREF(saved);
	return (rc);
}

/*
 * Before an offloaded tensor comes back as the engine's id key, from t (a
 * held source when from_source is set, else a buffer): 0, or -1 with the
 * error raised when its source was written in place since pack.
 */
int
offload_python_version_unpack(struct offload_python_hooks *h, PyObject *key,
    PyObject *t, int from_source)
{
	PyObject	*saved, *pair;

	if ((pair = PyDict_GetItemWithError(h->changed, key)) != NULL)
		return (offload_python_written(PyTuple_GetItem(pair, 0),
		    PyTuple_GetItem(pair, 1)));
	if (PyErr_Occurred())
		return (-1);
	if (!from_source)
		return (0);
	if ((saved = PyDict_GetItemWithError(h->versions, key)) == NULL)
		return (PyErr_Occurred() ? -1 : 0);
	return (offload_python_version_check(t, saved));
}
