/*
 * offload-python-tensor.c: what pack learns of a tensor, for the engine.
 *
 * A tensor is a candidate when it is a plain CUDA tensor (or parameter)
 * with a strided layout and bytes.  Its description is the dedupe key
 * (storage address with its allocation generation, the tensor's version
 * counter, offset, dtype, shape, stride), the bytes to copy, and how to
 * rebuild the view when it comes back:
 *
 *  - a view that shows most of its storage (at least a quarter: q, k and v
 *    split from one projection, chunks) copies the whole storage, once for
 *    every view of it: the key is the storage itself;
 *  - a view that shows little of a large storage (span more than twice its
 *    bytes) copies a dense clone, in the same order of dimensions (the
 *    same kernels read it back);
 *  - any other copies the span from its first element.
 *
 * Generations.  For each storage address, gens keeps a StorageWeakRef of
 * the storage seen there (a c10 weak reference, which pins the
 * StorageImpl's own memory, so no other storage can get the same _cdata
 * while it is held), that _cdata and a number.  A storage at a known
 * address with another _cdata is a new allocation and gets a new number.
 *
 * Parameters.  Parameters, leaves that require grad, storages of the
 * model's parameters and tensors reached from a parameter's
 * AccumulateGrad through views alone stay on the GPU.  A view of a cast
 * of a whole parameter (autocast's cached weight casts: views, then one
 * ToCopyBackward0 on the AccumulateGrad) is made again at unpack rather
 * than kept from forward to backward (autocast frees its cache when its
 * region ends, before backward) or copied: the description carries the
 * parameter, its version and the device, and the engine decides
 * (VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE).  Any other cast of a parameter
 * stays.
 */
#include "config.h"

#include <string.h>

#include "offload-python.h"

#define N	offload_python_name

/* Autograd nodes of views. */
static const char *offload_python_view_nodes[] = {
	"TBackward0", "ViewBackward0",
	"TransposeBackward0", "PermuteBackward0", "ExpandBackward0",
	"AliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
	"SqueezeBackward1", "UnsafeViewBackward0", "ReshapeAliasBackward0",
};

/* obj.name, or obj.name() when call is set, as a C integer. */
static int
offload_python_int(PyObject *obj, PyObject *name, int call, long long *out)
{
	PyObject	*o;

	o = call ? PyObject_CallMethodObjArgs(obj, name, NULL) :
	    PyObject_GetAttr(obj, name);
	if (o == NULL)
		return (-1);
	*out = PyLong_AsLongLong(o);
	Py_DECREF(o);
	return (*out == -1 && PyErr_Occurred() ? -1 : 0);
}

/* Whether obj.name is true: 1, 0, or -1 on error. */
static int
offload_python_true(PyObject *obj, PyObject *name)
{
	PyObject	*o = PyObject_GetAttr(obj, name);
	int		 rc;

	if (o == NULL)
		return (-1);
	rc = PyObject_IsTrue(o);
	Py_DECREF(o);
	return (rc);
}

/* Kinds of autograd nodes. */
#define OFFLOAD_PYTHON_OTHER	0
#define OFFLOAD_PYTHON_VIEW	1
#define OFFLOAD_PYTHON_LEAF	2	/* AccumulateGrad */
#define OFFLOAD_PYTHON_CAST	3	/* ToCopyBackward0 */

/* The kind of autograd node fn, cached by type; -1 on error. */
static int
offload_python_node_kind(struct offload_python_hooks *h, PyObject *fn)
{
	PyObject	*type = (PyObject *)Py_TYPE(fn), *o, *name;
	const char	*s;
	size_t		 i;
	int		 kind = 0;

	if ((o = PyDict_GetItemWithError(h->kinds, type)) != NULL)
		return ((int)PyLong_AsLong(o));
	if (PyErr_Occurred() ||
	    (name = PyType_GetName((PyTypeObject *)type)) == NULL)
		return (-1);
	if ((s = PyUnicode_AsUTF8AndSize(name, NULL)) == NULL) {
		Py_DECREF(name);
		return (-1);
	}
	if (strcmp(s, "AccumulateGrad") == 0)
		kind = OFFLOAD_PYTHON_LEAF;
	else if (strcmp(s, "ToCopyBackward0") == 0)
		kind = OFFLOAD_PYTHON_CAST;
	for (i = 0; kind == 0 && i < sizeof offload_python_view_nodes /
	    sizeof offload_python_view_nodes[0]; i++)
		kind = strcmp(s, offload_python_view_nodes[i]) == 0;
	Py_DECREF(name);
	if ((o = PyLong_FromLong(kind)) == NULL)
		return (-1);
	if (PyDict_SetItem(h->kinds, type, o) != 0)
		kind = -1;
	Py_DECREF(o);
	return (kind);
}

/*
 * Whether t is a parameter seen through views and casts: its autograd
 * history reaches an AccumulateGrad through those nodes alone (at most 8).
 * When it is views of one cast made from the parameter itself, *param is
 * set to the parameter (a new reference).
 */
static int
offload_python_of_parameter(struct offload_python_hooks *h, PyObject *t,
    PyObject **param)
{
	PyObject	*fn, *next, *edge;
	int		 i, kind, last = OFFLOAD_PYTHON_OTHER, casts = 0, rc = 0;

	*param = NULL;
	if ((fn = PyObject_GetAttr(t, N.grad_fn)) == NULL)
		return (-1);
	for (i = 0; i < 8 && fn != Py_None; i++) {
		kind = offload_python_node_kind(h, fn);
		if (kind == OFFLOAD_PYTHON_LEAF) {
			/* Without its variable it is kept, as any other. */
			rc = 1;
			if (casts == 1 && last == OFFLOAD_PYTHON_CAST &&
			    (*param = PyObject_GetAttr(fn, N.variable)) == NULL)
				PyErr_Clear();
			break;
		}
		if (kind != OFFLOAD_PYTHON_VIEW && kind != OFFLOAD_PYTHON_CAST) {
			rc = kind;	/* 0, or -1 */
			break;
		}
		casts += kind == OFFLOAD_PYTHON_CAST;
		last = kind;
		if ((next = PyObject_GetAttr(fn, N.next_functions)) == NULL) {
			rc = -1;
			break;
		}
		Py_DECREF(fn);
		fn = NULL;
		if (!PyTuple_Check(next) || PyTuple_Size(next) == 0 ||
		    (edge = PyTuple_GetItem(next, 0)) == NULL ||
		    !PyTuple_Check(edge) || PyTuple_Size(edge) == 0) {
			Py_DECREF(next);
			PyErr_Clear();
			return (0);
		}
		fn = PyTuple_GetItem(edge, 0);
		Py_XINCREF(fn);
		Py_DECREF(next);
		if (fn == NULL)
			return (-1);
	}
	Py_XDECREF(fn);
	return (rc);
}

/* The allocation generation of storage (at address ptr): 0 on error. */
static uint64_t
offload_python_generation(struct offload_python_hooks *h, PyObject *storage,
    uint64_t ptr)
{
	PyObject	*key, *seen, *entry = NULL, *ref = NULL;
	long long	 cdata;
	uint64_t	 gen = 0;

	if (offload_python_int(storage, N.cdata, 0, &cdata) != 0 ||
	    (key = PyLong_FromUnsignedLongLong(ptr)) == NULL)
		return (0);
	seen = PyDict_GetItemWithError(h->gens, key);
	if (seen != NULL && PyLong_AsLongLong(PyTuple_GetItem(seen, 1)) ==
	    cdata) {
		gen = PyLong_AsUnsignedLongLong(PyTuple_GetItem(seen, 2));
		Py_DECREF(key);
		return (PyErr_Occurred() ? 0 : gen);
	}
	if (PyErr_Occurred()) {
		Py_DECREF(key);
		return (0);
	}
	/* Without weak references no generation is ever seen again. */
	gen = ++h->next_gen;
	if (h->weakref != Py_None) {
		if ((ref = PyObject_CallFunctionObjArgs(h->weakref, storage,
		    NULL)) == NULL ||
		    (entry = Py_BuildValue("(OLK)", ref, cdata,
		    (unsigned long long)gen)) == NULL ||
		    PyDict_SetItem(h->gens, key, entry) != 0)
			gen = 0;
		Py_XDECREF(entry);
		Py_XDECREF(ref);
	}
	Py_DECREF(key);
	return (gen);
}

/*
 * Whether the storage seen at ptr with generation gen is still alive:
 * 1, 0, or -1 on error.
 */
int
offload_python_alive(struct offload_python_hooks *h, PyObject *ptr,
    uint64_t gen)
{
	PyObject	*seen, *o;
	int		 rc;

	if ((seen = PyDict_GetItemWithError(h->gens, ptr)) == NULL)
		return (PyErr_Occurred() ? -1 : 0);
	if (PyLong_AsUnsignedLongLong(PyTuple_GetItem(seen, 2)) != gen)
		return (PyErr_Occurred() ? -1 : 0);
	o = PyTuple_GetItem(seen, 0);
	if (o == Py_None)
		return (0);
	if ((o = PyObject_CallMethodObjArgs(o, N.expired, NULL)) == NULL)
		return (-1);
	rc = PyObject_IsTrue(o);
	Py_DECREF(o);
	return (rc < 0 ? -1 : !rc);
}

/* The dtype's code in the dedupe key: -1 on error. */
static int
offload_python_dtype_code(struct offload_python_hooks *h, PyObject *dtype)
{
	PyObject	*o;
	long		 code;

	if ((o = PyDict_GetItemWithError(h->dtypes, dtype)) != NULL)
		return ((int)PyLong_AsLong(o));
	if (PyErr_Occurred())
		return (-1);
	code = (long)PyDict_Size(h->dtypes);
	if ((o = PyLong_FromLong(code)) == NULL)
		return (-1);
	if (PyDict_SetItem(h->dtypes, dtype, o) != 0)
		code = -1;
	Py_DECREF(o);
	return ((int)code);
}

/* Release what a description holds. */
void
offload_python_desc_clear(struct offload_python_desc *d)
{
	Py_CLEAR(d->src);
	Py_CLEAR(d->shape);
	Py_CLEAR(d->stride);
	Py_CLEAR(d->dtype);
	Py_CLEAR(d->param);
	Py_CLEAR(d->version);
	Py_CLEAR(d->device);
	Py_CLEAR(d->tversion);
}

/* Shape and stride of the key, from the view's own tuples. */
static int
offload_python_key_dims(struct offload_python_desc *d, PyObject *stride)
{
	Py_ssize_t	i, n = PyTuple_Size(d->shape);

	d->t.ndim = (int32_t)n;
	for (i = 0; i < n && i < VRAMTRACE_OFFLOAD_MAX_DIMS; i++) {
		d->t.shape[i] = PyLong_AsLongLong(PyTuple_GetItem(d->shape, i));
		d->t.stride[i] = PyLong_AsLongLong(PyTuple_GetItem(stride, i));
	}
	return (PyErr_Occurred() ? -1 : 0);
}

/* The bytes from the first element to the last, in elements. */
static int
offload_python_span(PyObject *shape, PyObject *stride, long long *span)
{
	Py_ssize_t	i, n = PyTuple_Size(shape);
	long long	dim, step;

	*span = 1;
	for (i = 0; i < n; i++) {
		dim = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
		step = PyLong_AsLongLong(PyTuple_GetItem(stride, i));
		*span += (dim - 1) * step;
	}
	return (PyErr_Occurred() ? -1 : 0);
}

/*
 * Copy a dense clone of a view that shows little of its storage; the key
 * keeps the view's own shape and stride.
 */
static int
offload_python_compact(struct offload_python_desc *d, PyObject *t,
    long long nbytes)
{
	PyObject	*clone;
	long long	 ptr;

	if ((clone = PyObject_CallMethodObjArgs(t, N.clone, NULL)) == NULL)
		return (-1);
	Py_CLEAR(d->src);
	d->src = clone;
	Py_CLEAR(d->stride);
	if ((d->stride = PyObject_CallMethodObjArgs(clone, N.stride, NULL)) ==
	    NULL || offload_python_int(clone, N.storage_offset, 1, &d->soff)
	    != 0 || offload_python_int(clone, N.data_ptr, 1, &ptr) != 0)
		return (-1);
	d->t.src = (uint64_t)ptr;
	d->t.bytes = (uint64_t)nbytes;
	return (0);
}

/*
 * Whether t stays on the GPU whatever the engine decides: 1, 0, -1.  For
 * a cast of a parameter that param.to(device, dtype) makes again, bit for
 * bit, of sbytes bytes (a contiguous parameter on the GPU, whole), d gets
 * the parameter, its version and the device.
 */
static int
offload_python_keep(struct offload_python_hooks *h, PyObject *t,
    PyObject *ptr, long long sbytes, long long es,
    struct offload_python_desc *d)
{
	PyObject	*param;
	long long	 numel;
	int		 rc;

	if ((PyObject *)Py_TYPE(t) == h->param_type)
		return (1);
	if ((rc = offload_python_true(t, N.is_leaf)) != 0 &&
	    (rc < 0 || (rc = offload_python_true(t, N.requires_grad)) != 0))
		return (rc);
	if ((rc = PySet_Contains(h->keep, ptr)) != 0)
		return (rc);
	if ((rc = offload_python_of_parameter(h, t, &param)) != 1 ||
	    param == NULL)
		return (rc);
	if ((rc = offload_python_true(param, N.is_cuda)) > 0 &&
	    (rc = offload_python_int(param, N.is_contiguous, 1, &numel)) == 0 &&
	    numel == 1 &&
	    (rc = offload_python_int(param, N.numel, 1, &numel)) == 0 &&
	    numel * es == sbytes) {
		if ((d->version = PyObject_GetAttr(param, N.version)) == NULL ||
		    (d->device = PyObject_GetAttr(t, N.device)) == NULL)
			rc = -1;
		else {
			d->param = param;
			return (1);
		}
	}
	Py_DECREF(param);
	return (rc < 0 ? -1 : 1);
}

/*
 * Describe t for vramtrace_offload_pack into d.  Returns 0 (d filled, the
 * caller clears it), 1 when t is no candidate (d empty), -1 on error with
 * a Python exception set.
 */
int
offload_python_describe(struct offload_python_hooks *h, PyObject *t,
    struct offload_python_desc *d)
{
	PyObject	*o, *storage = NULL, *ostride = NULL, *key = NULL;
	long long	 nbytes, ptr, sbytes, es, off, span;
	int		 rc = -1, keep, code;

	memset(d, 0, sizeof *d);
	if ((PyObject *)Py_TYPE(t) != h->tensor_type &&
	    (PyObject *)Py_TYPE(t) != h->param_type)
		return (1);
	if ((keep = offload_python_true(t, N.is_cuda)) <= 0)
		return (keep < 0 ? -1 : 1);
	if ((o = PyObject_GetAttr(t, N.layout)) == NULL)
		return (-1);
	Py_DECREF(o);
	if (o != h->strided)
		return (1);
	if (offload_python_int(t, N.nbytes, 0, &nbytes) != 0)
		return (-1);
	if (nbytes == 0)
		return (1);
	if ((storage = PyObject_CallMethodObjArgs(t, N.untyped_storage,
	    NULL)) == NULL ||
	    offload_python_int(storage, N.data_ptr, 1, &ptr) != 0 ||
	    offload_python_int(storage, N.nbytes, 1, &sbytes) != 0 ||
	    offload_python_int(t, N.element_size, 1, &es) != 0 ||
	    offload_python_int(t, N.storage_offset, 1, &off) != 0 ||
	    (d->shape = PyObject_GetAttr(t, N.shape)) == NULL ||
	    (ostride = PyObject_CallMethodObjArgs(t, N.stride, NULL)) == NULL ||
	    (d->dtype = PyObject_GetAttr(t, N.dtype)) == NULL ||
	    (key = PyLong_FromLongLong(ptr)) == NULL ||
	    offload_python_span(d->shape, ostride, &span) != 0)
		goto out;
	d->t.storage = (uint64_t)ptr;
	if ((d->t.generation = offload_python_generation(h, storage,
	    (uint64_t)ptr)) == 0 ||
	    (d->tversion = PyObject_GetAttr(t, N.version)) == NULL)
		goto out;
	d->t.version = (uint32_t)PyLong_AsUnsignedLongMask(d->tversion);
	if (PyErr_Occurred())
		goto out;
	Py_INCREF(t);
	d->src = t;
	d->soff = off;
	if (sbytes <= 4 * nbytes) {
		/* Most of the storage: all of it, once for every view. */
		d->t.src = (uint64_t)ptr;
		d->t.bytes = (uint64_t)sbytes;
		d->t.ndim = 1;
		d->t.dtype = -1;
		d->t.shape[0] = sbytes;
		d->t.stride[0] = 1;
		d->boff = off;
		Py_INCREF(ostride);
		d->stride = ostride;
	} else {
		if (offload_python_key_dims(d, ostride) != 0 ||
		    (code = offload_python_dtype_code(h, d->dtype)) < 0)
			goto out;
		d->t.dtype = code;
		d->t.offset = off;
		if (span * es > 2 * nbytes) {
			if (offload_python_compact(d, t, nbytes) != 0)
				goto out;
		} else {
			d->t.src = (uint64_t)(ptr + off * es);
			d->t.bytes = (uint64_t)(span * es);
			Py_INCREF(ostride);
			d->stride = ostride;
		}
	}
	if ((keep = offload_python_keep(h, t, key, sbytes, es, d)) < 0)
		goto out;
	d->t.flags = keep ? VRAMTRACE_OFFLOAD_TENSOR_KEEP : 0;
	if (d->param != NULL) {
		/* Made again whole: the view as t sees the storage. */
		d->t.flags |= VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE;
		d->t.bytes = (uint64_t)sbytes;
		Py_XDECREF(d->stride);
		Py_INCREF(ostride);
		d->stride = ostride;
		d->soff = off;
	}
	rc = 0;
out:
	Py_XDECREF(storage);
	Py_XDECREF(ostride);
	Py_XDECREF(key);
	if (rc != 0)
		offload_python_desc_clear(d);
	return (rc);
}
