/*
 * offload-python.h: the CPython extension vramtrace._offload, shared by
 * lib/offload-python*.c.
 *
 * The extension is the offload engine's hot path for PyTorch: its Hooks
 * object is what saved_tensors_hooks calls for every tensor autograd saves
 * (pack) and takes back (unpack), with no Python frame and no ctypes call
 * in between.  It is built against the stable ABI (Py_LIMITED_API, 3.11),
 * so one build serves every CPython from 3.11 on, and it does not link
 * against libvramtrace.so: the Python package loads the library as before
 * (vramtrace.torch.load_library) and hands the Hooks the addresses of the
 * engine's functions and the engine itself.  It never imports torch
 * either: the binding passes the few torch objects it needs.
 *
 * It lives in the traced process and obeys lib.h's rules but one: a
 * CPython extension takes its Python symbols from the interpreter that
 * loads it, so it cannot be linked with -z defs.
 */
#ifndef OFFLOAD_PYTHON_H
#define OFFLOAD_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "libvramtrace.h"

/* The engine's functions, from libvramtrace.so. */
struct offload_python_api {
	int	(*pack)(struct vramtrace_offload *,
		    const struct vramtrace_offload_tensor *, uint64_t,
		    uint64_t *);
	int	(*unpack)(struct vramtrace_offload *, uint64_t, uint64_t,
		    uint64_t *);
	int	(*restore)(struct vramtrace_offload *, uint64_t, uint64_t,
		    uint64_t);
	int	(*reached)(struct vramtrace_offload *, int64_t, uint64_t);
	int	(*next)(struct vramtrace_offload *,
		    struct vramtrace_offload_request *);
	int	(*alive)(struct vramtrace_offload *, uint64_t);
	const char *(*error)(struct vramtrace_offload *);
};

/*
 * One engine's hooks.  held maps an engine id to the GPU tensor the
 * engine asked to hold (a source, or a buffer brought back) until a DROP;
 * versions and changed are the version counters of the sources held and
 * of those written in place before their DROP (offload-python-version.c);
 * gens maps a storage address to (weak reference, _cdata, generation) for
 * the dedupe keys; watch lists (id, address, generation) of this step's
 * offloaded tensors, checked once backward begins; kinds caches, per
 * autograd node type, whether it is AccumulateGrad (2), a view or a cast
 * (1) or anything else (0).
 */
struct offload_python_hooks {
	PyObject_HEAD
	struct offload_python_api	 api;
	struct vramtrace_offload	*engine;
	PyObject	*device;	/* torch.device of the engine */
	PyObject	*index;		/* its ordinal, an int */
	PyObject	*held;
	PyObject	*versions;	/* id -> held source's version */
	PyObject	*changed;	/* id -> (saved, then) versions */
	PyObject	*gens;
	PyObject	*watch;
	PyObject	*kinds;
	PyObject	*dtypes;	/* dtype -> its code for the key */
	PyObject	*keep;		/* set of parameter storage addresses */
	PyObject	*tensor_type;
	PyObject	*param_type;
	PyObject	*strided;
	PyObject	*empty;		/* torch.empty */
	PyObject	*empty_kw;	/* dtype=uint8, device= */
	PyObject	*raw_stream;	/* current stream of a device index */
	PyObject	*weakref;	/* StorageWeakRef, or None */
	PyObject	*graph_task;	/* autograd's running backward, or None */
	PyObject	*memory;	/* bytes allocated on the device */
	PyObject	*on_backward;	/* a backward began after exit */
	uint64_t	 next_gen;
	int		 learning;	/* measure memory at every unpack */
	int		 inside;	/* within the context */
	int		 backward;	/* backward of this step began */
};

/* Interned attribute and method names (offload-python.c). */
struct offload_python_names {
	PyObject	*is_cuda, *layout, *nbytes, *untyped_storage, *data_ptr,
			*cdata, *element_size, *shape, *stride, *storage_offset,
			*clone, *is_leaf, *requires_grad, *grad_fn,
			*next_functions, *dtype, *expired, *detach, *as_strided,
			*view, *variable, *version, *is_contiguous, *numel,
			*to, *device;
};
extern struct offload_python_names offload_python_name;

/*
 * What pack learns of a tensor it may offload.  A cast of a parameter
 * (autocast's) has param set: the engine may answer RECOMPUTE, and unpack
 * then makes param.to(device, dtype) again and views it as t was.
 */
struct offload_python_desc {
	struct vramtrace_offload_tensor	 t;
	PyObject	*src;		/* the tensor to hold: t or a copy */
	PyObject	*shape;		/* to rebuild the view */
	PyObject	*stride;
	PyObject	*dtype;
	PyObject	*param;		/* a cast of it; or NULL */
	PyObject	*version;	/* param._version at pack */
	PyObject	*device;	/* t.device, for a cast */
	PyObject	*tversion;	/* t._version at pack */
	long long	 soff;		/* storage offset in src's storage */
	long long	 boff;		/* offset in a buffer brought back */
};

/* offload-python-tensor.c */
int	 offload_python_describe(struct offload_python_hooks *, PyObject *,
	     struct offload_python_desc *);
void	 offload_python_desc_clear(struct offload_python_desc *);
int	 offload_python_alive(struct offload_python_hooks *, PyObject *,
	     uint64_t);

/* offload-python-version.c */
int	 offload_python_version_check(PyObject *, PyObject *);
int	 offload_python_version_hold(struct offload_python_hooks *, uint64_t,
	     PyObject *);
int	 offload_python_version_drop(struct offload_python_hooks *,
	     PyObject *);
int	 offload_python_version_unpack(struct offload_python_hooks *,
	     PyObject *, PyObject *, int);

#endif
