/*
 * offload-python.c: the CPython extension vramtrace._offload and its Hooks
 * type (see offload-python.h for what it is and why).
 *
 * Hooks.pack(t) and Hooks.unpack(handle) are the saved-tensor hooks: pack
 * describes the tensor (offload-python-tensor.c), asks the engine, holds
 * what the engine asks it to hold and returns either the tensor itself
 * (no candidate), the pair (t, its version) (kept), a handle, the tuple
 * (id, dtype, shape, stride, source offset, buffer offset), or for a cast
 * of a parameter made again at unpack the tuple (parameter, its version,
 * device, dtype, shape, stride, offset); a tensor written in place since
 * pack is refused at unpack (offload-python-version.c);
 * unpack gives the handle back to the engine, allocates the buffer it may
 * ask for, lets the engine bring the next tensors back ahead and rebuilds
 * the view.  What is saved while a backward runs (a reentrant checkpoint
 * recomputing its layer, for the backward at hand) is kept, without the
 * engine.  After every engine call the queued
 * requests are served: DROP lets a held tensor go, ALLOC allocates a GPU
 * buffer on the compute stream and restores into it.
 *
 * When backward begins (the first unpack of the step) the offloaded
 * tensors whose storages are still alive, though the sources were let go,
 * are reported to the engine (vramtrace_offload_alive); a backward that
 * begins after the context ended calls on_backward, which the binding uses
 * to end that backward cleanly.  While the engine learns a step, every
 * unpack passes the memory allocated (memory()) to the engine.
 */
#include "config.h"

#include <string.h>

#include "offload-python.h"

#define N	offload_python_name

struct offload_python_names	offload_python_name;

/* Raise the engine's last error; returns NULL. */
static PyObject *
offload_python_fail(struct offload_python_hooks *h)
{
	PyErr_Format(PyExc_RuntimeError, "vramtrace offload: %s",
	    h->api.error(h->engine));
	return (NULL);
}

/* The compute stream: the current stream of the engine's device. */
static int
offload_python_stream(struct offload_python_hooks *h, uint64_t *stream)
{
	PyObject	*o;

	o = PyObject_CallFunctionObjArgs(h->raw_stream, h->index, NULL);
	if (o == NULL)
		return (-1);
	*stream = PyLong_AsUnsignedLongLong(o);
	Py_DECREF(o);
	return (PyErr_Occurred() ? -1 : 0);
}

/* A new GPU buffer of n bytes (rounded up so that any dtype views it). */
static PyObject *
offload_python_buffer(struct offload_python_hooks *h, uint64_t n)
{
	PyObject	*args, *buf;

	if ((args = Py_BuildValue("(K)", (unsigned long long)((n + 15) &
	    ~(uint64_t)15))) == NULL)
		return (NULL);
	buf = PyObject_Call(h->empty, args, h->empty_kw);
	Py_DECREF(args);
	return (buf);
}

/* Hold tensor t under engine id. */
static int
offload_python_hold(struct offload_python_hooks *h, uint64_t id, PyObject *t)
{
	PyObject	*key = PyLong_FromUnsignedLongLong(id);
	int		 rc;

	if (key == NULL)
		return (-1);
	rc = PyDict_SetItem(h->held, key, t);
	Py_DECREF(key);
	return (rc);
}

/* Allocate a buffer for id, hold it and restore id's bytes into it. */
static int
offload_python_restore(struct offload_python_hooks *h, uint64_t id,
    uint64_t n, uint64_t stream)
{
	PyObject		*buf, *o;
	unsigned long long	 ptr;
	int			 rc = -1;

	if ((buf = offload_python_buffer(h, n)) == NULL)
		return (-1);
	if (offload_python_hold(h, id, buf) != 0 ||
	    (o = PyObject_CallMethodObjArgs(buf, N.data_ptr, NULL)) == NULL)
		goto out;
	ptr = PyLong_AsUnsignedLongLong(o);
	Py_DECREF(o);
	if (PyErr_Occurred())
		goto out;
	if (h->api.restore(h->engine, id, ptr, stream) != 0) {
		offload_python_fail(h);
		goto out;
	}
	rc = 0;
out:
	Py_DECREF(buf);
	return (rc);
}

/* Serve the engine's requests (see the top of the file). */
static int
offload_python_service(struct offload_python_hooks *h, uint64_t stream)
{
	struct vramtrace_offload_request	 r;
	PyObject				*key;

	while (h->api.next(h->engine, &r)) {
		if (r.kind == VRAMTRACE_OFFLOAD_REQ_ALLOC) {
			if (offload_python_restore(h, r.id, r.bytes, stream)
			    != 0)
				return (-1);
			continue;
		}
		if ((key = PyLong_FromUnsignedLongLong(r.id)) == NULL)
			return (-1);
		if (offload_python_version_drop(h, key) != 0) {
			Py_DECREF(key);
			return (-1);
		}
		if (PyDict_DelItem(h->held, key) != 0)
			PyErr_Clear();
		Py_DECREF(key);
	}
	return (0);
}

/*
 * Let the engine bring back what backward needs next (measuring memory
 * while it learns), then serve its requests.
 */
static int
offload_python_reached(struct offload_python_hooks *h, uint64_t stream)
{
	PyObject	*o;
	long long	 allocated = -1;

	if (h->learning) {
		if ((o = PyObject_CallNoArgs(h->memory)) == NULL)
			return (-1);
		allocated = PyLong_AsLongLong(o);
		Py_DECREF(o);
		if (PyErr_Occurred())
			return (-1);
	}
	if (h->api.reached(h->engine, allocated, stream) != 0) {
		offload_python_fail(h);
		return (-1);
	}
	return (offload_python_service(h, stream));
}

/*
 * Backward begins: report the offloaded tensors whose storages something
 * else kept alive (their sources were let go), and say when it began
 * outside the context.
 */
static int
offload_python_backward(struct offload_python_hooks *h)
{
	PyObject	*item, *o;
	Py_ssize_t	 i, n = PyList_Size(h->watch);
	uint64_t	 id, gen;
	int		 rc;

	h->backward = 1;
	for (i = 0; i < n; i++) {
		item = PyList_GetItem(h->watch, i);
		if ((rc = PyDict_Contains(h->held, PyTuple_GetItem(item, 0)))
		    != 0) {
			if (rc < 0)
				return (-1);
			continue;
		}
		gen = PyLong_AsUnsignedLongLong(PyTuple_GetItem(item, 2));
		if ((rc = offload_python_alive(h, PyTuple_GetItem(item, 1),
		    gen)) < 0)
			return (-1);
		id = PyLong_AsUnsignedLongLong(PyTuple_GetItem(item, 0));
		if (rc && h->api.alive(h->engine, id) != 0) {
			offload_python_fail(h);
			return (-1);
		}
	}
	if (PyList_SetSlice(h->watch, 0, n, NULL) != 0)
		return (-1);
	if (!h->inside) {
		if ((o = PyObject_CallNoArgs(h->on_backward)) == NULL)
			return (-1);
		Py_DECREF(o);
	}
	return (0);
}

/* Remember an offloaded tensor to check when backward begins. */
static int
offload_python_watch(struct offload_python_hooks *h, uint64_t id,
    const struct offload_python_desc *d)
{
	PyObject	*item;
	int		 rc;

	if ((item = Py_BuildValue("(KKK)", (unsigned long long)id,
	    (unsigned long long)d->t.storage,
	    (unsigned long long)d->t.generation)) == NULL)
		return (-1);
	rc = PyList_Append(h->watch, item);
	Py_DECREF(item);
	return (rc);
}

/*
 * Whether a backward is running (autograd's current graph task id is not
 * -1): 1, 0, or -1 on error.  What is saved then is saved by a recompute
 * inside backward (a reentrant checkpoint's), to be used at once.
 */
static int
offload_python_in_backward(struct offload_python_hooks *h)
{
	PyObject	*o;
	long long	 id;

	if (h->graph_task == Py_None)
		return (0);
	if ((o = PyObject_CallNoArgs(h->graph_task)) == NULL)
		return (-1);
	id = PyLong_AsLongLong(o);
	Py_DECREF(o);
	if (id == -1 && PyErr_Occurred())
		return (-1);
	return (id != -1);
}

PyDoc_STRVAR(offload_python_pack_doc,
"pack(t): the saved-tensor pack hook; returns t, (t, its version) or a\n"
"handle.");

static PyObject *
offload_python_pack(PyObject *self, PyObject *t)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;
	struct offload_python_desc	 d;
	PyObject			*out = NULL;
	uint64_t			 stream, id = 0;
	int				 rc;

	if ((rc = offload_python_in_backward(h)) != 0 ||
	    (rc = offload_python_describe(h, t, &d)) != 0) {
		if (rc < 0)
			return (NULL);
		Py_INCREF(t);
		return (t);
	}
	if (offload_python_stream(h, &stream) != 0)
		goto out;
	if ((rc = h->api.pack(h->engine, &d.t, stream, &id)) < 0) {
		offload_python_fail(h);
		goto out;
	}
	if (rc == VRAMTRACE_OFFLOAD_KEPT) {
		if (offload_python_service(h, stream) == 0)
			out = PyTuple_Pack(2, t, d.tversion);
		goto out;
	}
	if (rc == VRAMTRACE_OFFLOAD_RECOMPUTE) {
		if (offload_python_service(h, stream) == 0)
			out = Py_BuildValue("(OOOOOOL)", d.param, d.version,
			    d.device, d.dtype, d.shape, d.stride, d.soff);
		goto out;
	}
	if ((rc == VRAMTRACE_OFFLOAD_STASHED &&
	    (offload_python_hold(h, id, d.src) != 0 ||
	    offload_python_version_hold(h, id, d.src) != 0)) ||
	    (rc != VRAMTRACE_OFFLOAD_DEDUPED &&
	    offload_python_watch(h, id, &d) != 0) ||
	    offload_python_service(h, stream) != 0)
		goto out;
	out = Py_BuildValue("(KOOOLL)", (unsigned long long)id, d.dtype,
	    d.shape, d.stride, d.soff, d.boff);
out:
	offload_python_desc_clear(&d);
	return (out);
}

/* The view autograd gets back, of the held tensor t. */
static PyObject *
offload_python_view(PyObject *t, int from_buffer, PyObject *dtype,
    PyObject *shape, PyObject *stride, PyObject *soff, PyObject *boff)
{
	PyObject	*base, *out;

	base = from_buffer ? PyObject_CallMethodObjArgs(t, N.view, dtype,
	    NULL) : PyObject_CallMethodObjArgs(t, N.detach, NULL);
	if (base == NULL)
		return (NULL);
	out = PyObject_CallMethodObjArgs(base, N.as_strided, shape, stride,
	    from_buffer ? boff : soff, NULL);
	Py_DECREF(base);
	return (out);
}

/*
 * A tensor comes back as it was saved, t or the pair (t, its version) of a
 * kept one, unless written in place since: a point backward has come to,
 * on the GPU.
 */
static PyObject *
offload_python_unpack_kept(struct offload_python_hooks *h, PyObject *t)
{
	PyObject	*o;
	uint64_t	 stream;
	int		 cuda;

	if (PyTuple_Check(t)) {
		if (offload_python_version_check(PyTuple_GetItem(t, 0),
		    PyTuple_GetItem(t, 1)) != 0)
			return (NULL);
		t = PyTuple_GetItem(t, 0);
	}
	if ((o = PyObject_GetAttr(t, N.is_cuda)) == NULL)
		return (NULL);
	cuda = PyObject_IsTrue(o);
	Py_DECREF(o);
	if (cuda < 0 || (cuda && (offload_python_stream(h, &stream) != 0 ||
	    offload_python_reached(h, stream) != 0)))
		return (NULL);
	Py_INCREF(t);
	return (t);
}

/*
 * A cast of a parameter comes back: made again from the parameter, which
 * must not have changed since pack, and viewed as it was; then a point
 * backward has come to.
 */
static PyObject *
offload_python_unpack_cast(struct offload_python_hooks *h, PyObject *handle)
{
	PyObject	*param = PyTuple_GetItem(handle, 0), *o, *cast, *out;
	uint64_t	 stream;
	int		 same;

	if ((o = PyObject_GetAttr(param, N.version)) == NULL)
		return (NULL);
	same = PyObject_RichCompareBool(o, PyTuple_GetItem(handle, 1), Py_EQ);
	Py_DECREF(o);
	if (same <= 0) {
		if (same == 0)
			PyErr_SetString(PyExc_RuntimeError, "vramtrace offload: "
			    "a parameter whose cast autograd saved was modified "
			    "in place before backward: the cast cannot be made "
			    "again");
		return (NULL);
	}
	if ((cast = PyObject_CallMethodObjArgs(param, N.to,
	    PyTuple_GetItem(handle, 2), PyTuple_GetItem(handle, 3), NULL)) ==
	    NULL)
		return (NULL);
	out = PyObject_CallMethodObjArgs(cast, N.as_strided,
	    PyTuple_GetItem(handle, 4), PyTuple_GetItem(handle, 5),
	    PyTuple_GetItem(handle, 6), NULL);
	Py_DECREF(cast);
	if (out != NULL && (offload_python_stream(h, &stream) != 0 ||
	    offload_python_reached(h, stream) != 0))
		Py_CLEAR(out);
	return (out);
}

PyDoc_STRVAR(offload_python_unpack_doc,
"unpack(handle): the saved-tensor unpack hook; returns the tensor.");

static PyObject *
offload_python_unpack(PyObject *self, PyObject *handle)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;
	PyObject			*t, *key;
	uint64_t			 id, stream, n;
	int				 rc;

	if (!h->backward && offload_python_backward(h) != 0)
		return (NULL);
	if (!PyTuple_Check(handle) || PyTuple_Size(handle) == 2)
		return (offload_python_unpack_kept(h, handle));
	if (PyTuple_Size(handle) == 7)
		return (offload_python_unpack_cast(h, handle));
	if (PyTuple_Size(handle) != 6) {
		PyErr_SetString(PyExc_ValueError,
		    "vramtrace offload: not a handle");
		return (NULL);
	}
	key = PyTuple_GetItem(handle, 0);
	id = PyLong_AsUnsignedLongLong(key);
	if (PyErr_Occurred() || offload_python_stream(h, &stream) != 0)
		return (NULL);
	rc = h->api.unpack(h->engine, id, stream, &n);
	if (rc == VRAMTRACE_OFFLOAD_NEED_BUFFER) {
		if (offload_python_restore(h, id, n, stream) != 0)
			return (NULL);
		rc = h->api.unpack(h->engine, id, stream, &n);
	}
	if (rc < 0)
		return (offload_python_fail(h));
	if ((t = PyDict_GetItemWithError(h->held, key)) == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_RuntimeError,
			    "vramtrace offload: a tensor it held is gone");
		return (NULL);
	}
	if (offload_python_version_unpack(h, key, t,
	    rc == VRAMTRACE_OFFLOAD_FROM_STASH) != 0)
		return (NULL);
	Py_INCREF(t);
	if (offload_python_service(h, stream) != 0 ||
	    offload_python_reached(h, stream) != 0) {
		Py_DECREF(t);
		return (NULL);
	}
	handle = offload_python_view(t, rc == VRAMTRACE_OFFLOAD_FROM_BUFFER,
	    PyTuple_GetItem(handle, 1), PyTuple_GetItem(handle, 2),
	    PyTuple_GetItem(handle, 3), PyTuple_GetItem(handle, 4),
	    PyTuple_GetItem(handle, 5));
	Py_DECREF(t);
	return (handle);
}

PyDoc_STRVAR(offload_python_serve_doc,
"service(): serve the engine's queued requests on the current stream.");

static PyObject *
offload_python_serve(PyObject *self, PyObject *unused)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;
	uint64_t			 stream;

	(void)unused;
	if (offload_python_stream(h, &stream) != 0 ||
	    offload_python_service(h, stream) != 0)
		return (NULL);
	Py_RETURN_NONE;
}

PyDoc_STRVAR(offload_python_begin_doc,
"begin(learning): a step begins (inside the context); learning: the\n"
"engine learns this step, pass it the memory at every unpack.");

static PyObject *
offload_python_begin(PyObject *self, PyObject *learning)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;

	if ((h->learning = PyObject_IsTrue(learning)) < 0)
		return (NULL);
	PyDict_Clear(h->gens);
	PyDict_Clear(h->versions);
	PyDict_Clear(h->changed);
	if (PyList_SetSlice(h->watch, 0, PyList_Size(h->watch), NULL) != 0)
		return (NULL);
	h->inside = 1;
	h->backward = 0;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(offload_python_leave_doc,
"leave(): the context ended (backward may still come).");

static PyObject *
offload_python_leave(PyObject *self, PyObject *unused)
{
	(void)unused;
	((struct offload_python_hooks *)self)->inside = 0;
	Py_RETURN_NONE;
}

PyDoc_STRVAR(offload_python_held_doc,
"held(): the dict of GPU tensors held for the engine, by id.");

static PyObject *
offload_python_held(PyObject *self, PyObject *unused)
{
	PyObject	*held = ((struct offload_python_hooks *)self)->held;

	(void)unused;
	Py_INCREF(held);
	return (held);
}

static PyMethodDef offload_python_methods[] = {
	{ "pack", offload_python_pack, METH_O, offload_python_pack_doc },
	{ "unpack", offload_python_unpack, METH_O, offload_python_unpack_doc },
	{ "service", offload_python_serve, METH_NOARGS,
	  offload_python_serve_doc },
	{ "begin", offload_python_begin, METH_O, offload_python_begin_doc },
	{ "leave", offload_python_leave, METH_NOARGS,
	  offload_python_leave_doc },
	{ "held", offload_python_held, METH_NOARGS, offload_python_held_doc },
	{ NULL, NULL, 0, NULL }
};

/* Every object reference of a Hooks, for the three functions below. */
#define OFFLOAD_PYTHON_REFS(h, X) do {					\
	X((h)->device); X((h)->index); X((h)->held); X((h)->gens);	\
	X((h)->versions); X((h)->changed);				\
	X((h)->watch); X((h)->kinds); X((h)->dtypes); X((h)->keep);	\
	X((h)->tensor_type); X((h)->param_type); X((h)->strided);	\
	X((h)->empty); X((h)->empty_kw); X((h)->raw_stream);		\
	X((h)->weakref); X((h)->graph_task); X((h)->memory);		\
	X((h)->on_backward);						\
} while (0)

static int
offload_python_traverse(PyObject *self, visitproc visit, void *arg)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;

	Py_VISIT(Py_TYPE(self));
	OFFLOAD_PYTHON_REFS(h, Py_VISIT);
	return (0);
}

static int
offload_python_clear(PyObject *self)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;

	OFFLOAD_PYTHON_REFS(h, Py_CLEAR);
	return (0);
}

static void
offload_python_dealloc(PyObject *self)
{
	PyTypeObject	*type = Py_TYPE(self);
	freefunc	 tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);

	PyObject_GC_UnTrack(self);
	offload_python_clear(self);
	tp_free(self);
	Py_DECREF(type);
}

/* The engine's function i of the api tuple, an address. */
static void *
offload_python_fn(PyObject *api, Py_ssize_t i)
{
	PyObject	*o = PyTuple_GetItem(api, i);
	void		*fn;

	if (o == NULL)
		return (NULL);
	fn = PyLong_AsVoidPtr(o);
	if (fn == NULL && !PyErr_Occurred())
		PyErr_SetString(PyExc_ValueError,
		    "vramtrace offload: a null function");
	return (fn);
}

/*
 * Hooks(api, engine, device, index, keep, torch, memory, on_backward):
 * api is the tuple of the addresses of vramtrace_offload_pack, _unpack,
 * _restore, _reached, _next, _alive and _error; engine the address of the
 * engine; device its torch.device and index its ordinal; keep the set of
 * storage addresses that stay on the GPU (shared with the caller, who may
 * update it); torch the tuple (torch.Tensor, torch.nn.Parameter,
 * torch.strided, torch.empty, torch.uint8, a function from a device index
 * to its current stream's handle, StorageWeakRef or None, autograd's
 * current graph task id function or None); memory() the
 * bytes allocated on the device; on_backward() is called when a backward
 * begins after the context ended.
 */
static int
offload_python_init(PyObject *self, PyObject *args, PyObject *kwds)
{
	struct offload_python_hooks	*h = (struct offload_python_hooks *)self;
	PyObject			*api, *engine, *torch, *uint8;
	PyObject			*device, *index, *keep, *memory, *back;
	void				*fn[7];
	Py_ssize_t			 i;

	(void)kwds;
	offload_python_clear(self);
	if (!PyArg_ParseTuple(args, "O!OOOO!O!OO", &PyTuple_Type, &api, &engine,
	    &device, &index, &PySet_Type, &keep, &PyTuple_Type, &torch,
	    &memory, &back))
		return (-1);
	Py_INCREF(device);
	h->device = device;
	Py_INCREF(index);
	h->index = index;
	Py_INCREF(keep);
	h->keep = keep;
	Py_INCREF(memory);
	h->memory = memory;
	Py_INCREF(back);
	h->on_backward = back;
	if (PyTuple_Size(api) != 7 || PyTuple_Size(torch) != 8) {
		PyErr_SetString(PyExc_ValueError,
		    "vramtrace offload: api of 7 functions, torch of 8 objects");
		return (-1);
	}
	for (i = 0; i < 7; i++)
		if ((fn[i] = offload_python_fn(api, i)) == NULL)
			return (-1);
	memcpy(&h->api.pack, &fn[0], sizeof fn[0]);
	memcpy(&h->api.unpack, &fn[1], sizeof fn[0]);
	memcpy(&h->api.restore, &fn[2], sizeof fn[0]);
	memcpy(&h->api.reached, &fn[3], sizeof fn[0]);
	memcpy(&h->api.next, &fn[4], sizeof fn[0]);
	memcpy(&h->api.alive, &fn[5], sizeof fn[0]);
	memcpy(&h->api.error, &fn[6], sizeof fn[0]);
	if ((h->engine = PyLong_AsVoidPtr(engine)) == NULL) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError,
			    "vramtrace offload: no engine");
		return (-1);
	}
	h->tensor_type = PyTuple_GetItem(torch, 0);
	h->param_type = PyTuple_GetItem(torch, 1);
	h->strided = PyTuple_GetItem(torch, 2);
	h->empty = PyTuple_GetItem(torch, 3);
	uint8 = PyTuple_GetItem(torch, 4);
	h->raw_stream = PyTuple_GetItem(torch, 5);
	h->weakref = PyTuple_GetItem(torch, 6);
	h->graph_task = PyTuple_GetItem(torch, 7);
	Py_INCREF(h->tensor_type);
	Py_INCREF(h->param_type);
	Py_INCREF(h->strided);
	Py_INCREF(h->empty);
	Py_INCREF(h->raw_stream);
	Py_INCREF(h->weakref);
	Py_INCREF(h->graph_task);
	if ((h->held = PyDict_New()) == NULL ||
	    (h->versions = PyDict_New()) == NULL ||
	    (h->changed = PyDict_New()) == NULL ||
	    (h->gens = PyDict_New()) == NULL ||
	    (h->watch = PyList_New(0)) == NULL ||
	    (h->kinds = PyDict_New()) == NULL ||
	    (h->dtypes = PyDict_New()) == NULL ||
	    (h->empty_kw = Py_BuildValue("{sOsO}", "dtype", uint8, "device",
	    h->device)) == NULL)
		return (-1);
	h->next_gen = 0;
	h->learning = h->inside = h->backward = 0;
	return (0);
}

static PyType_Slot offload_python_slots[] = {
	{ Py_tp_doc, (void *)"The offload engine's saved-tensor hooks." },
	{ Py_tp_init, (void *)offload_python_init },
	{ Py_tp_new, (void *)PyType_GenericNew },
	{ Py_tp_dealloc, (void *)offload_python_dealloc },
	{ Py_tp_traverse, (void *)offload_python_traverse },
	{ Py_tp_clear, (void *)offload_python_clear },
	{ Py_tp_methods, offload_python_methods },
	{ 0, NULL }
};

static PyType_Spec offload_python_spec = {
	"vramtrace._offload.Hooks",
	sizeof(struct offload_python_hooks),
	0,
	Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	offload_python_slots
};

static struct PyModuleDef offload_python_module = {
	PyModuleDef_HEAD_INIT,
	"_offload",
	"The offload engine's hot path for PyTorch (see vramtrace.torch).",
	-1,
	NULL, NULL, NULL, NULL, NULL
};

/* Intern the names the hooks look up; -1 on failure. */
static int
offload_python_intern(void)
{
	static const struct {
		PyObject	**slot;
		const char	 *name;
	} names[] = {
		{ &N.is_cuda, "is_cuda" }, { &N.layout, "layout" },
		{ &N.nbytes, "nbytes" },
		{ &N.untyped_storage, "untyped_storage" },
		{ &N.data_ptr, "data_ptr" }, { &N.cdata, "_cdata" },
		{ &N.element_size, "element_size" }, { &N.shape, "shape" },
		{ &N.stride, "stride" }, { &N.storage_offset, "storage_offset" },
		{ &N.clone, "clone" }, { &N.is_leaf, "is_leaf" },
		{ &N.requires_grad, "requires_grad" }, { &N.grad_fn, "grad_fn" },
		{ &N.next_functions, "next_functions" }, { &N.dtype, "dtype" },
		{ &N.expired, "expired" }, { &N.detach, "detach" },
		{ &N.as_strided, "as_strided" }, { &N.view, "view" },
		{ &N.variable, "variable" }, { &N.version, "_version" },
		{ &N.is_contiguous, "is_contiguous" }, { &N.numel, "numel" },
		{ &N.to, "to" }, { &N.device, "device" },
	};
	size_t	i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (*names[i].slot == NULL &&
		    (*names[i].slot = PyUnicode_InternFromString(
		    names[i].name)) == NULL)
			return (-1);
	return (0);
}

PyMODINIT_FUNC PyInit__offload(void);

PyMODINIT_FUNC
PyInit__offload(void)
{
	PyObject	*m, *type;

	if (offload_python_intern() != 0 ||
	    (m = PyModule_Create(&offload_python_module)) == NULL)
		return (NULL);
	if ((type = PyType_FromSpec(&offload_python_spec)) == NULL ||
	    PyModule_AddObject(m, "Hooks", type) != 0) {
		Py_XDECREF(type);
		Py_DECREF(m);
		return (NULL);
	}
	return (m);
}
