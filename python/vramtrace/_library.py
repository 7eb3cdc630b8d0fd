"""vramtrace._library: libvramtrace.so, found, checked and bound once, and
the ctypes mirror of its header (include/libvramtrace.h).

Every part of the package reaches the library through load_library().  The
file is VRAMTRACE_LIBRARY when it is set (`vramtrace record` sets it), else
the first of: the libvramtrace.so next to this package (pip install puts
the library there, make install a link to the one in libdir), the build
tree's (the package run from a source tree), and the linker's
libvramtrace.so.0.

At load the library's version and the size of each struct below must be
this package's (vramtrace_version, vramtrace_struct_size): a package and a
library from different builds raise LibraryError, one line that names the
file and what differs, instead of handing C a struct of another shape.
"""

import ctypes
import os
import sys

VERSION = "0.1.0"               # configure.ac's; tests/t-library.sh checks
VARIABLE = "VRAMTRACE_LIBRARY"
SONAME = "libvramtrace.so.0"
MAX_DIMS = 8


class LibraryError(OSError):
    """libvramtrace.so is missing, or is not this package's."""


# The structs of libvramtrace.h, field for field.

class Config(ctypes.Structure):
    _fields_ = [("slab_bytes", ctypes.c_uint64),
                ("min_offload_size", ctypes.c_uint64),
                ("budget", ctypes.c_int64),
                ("prefetch", ctypes.c_uint64),
                ("max_memory", ctypes.c_uint64),
                ("max_memory_fraction", ctypes.c_double),
                ("max_fwd_stash", ctypes.c_uint32),
                ("breaks", ctypes.c_uint32),
                ("use_streams", ctypes.c_int32),
                ("use_pin_memory", ctypes.c_int32),
                ("device", ctypes.c_int32)]


class Tensor(ctypes.Structure):
    _fields_ = [("storage", ctypes.c_uint64),
                ("generation", ctypes.c_uint64),
                ("src", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64),
                ("offset", ctypes.c_int64),
                ("shape", ctypes.c_int64 * MAX_DIMS),
                ("stride", ctypes.c_int64 * MAX_DIMS),
                ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_int32),
                ("flags", ctypes.c_uint32),
                ("version", ctypes.c_uint32)]


class Request(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64),
                ("kind", ctypes.c_uint32),
                ("pad", ctypes.c_uint32)]


STAT_NAMES = ("step packs offloads offloaded_bytes kept kept_bytes "
              "dedupe_hits dedupe_releases reaps unpacks prefetches "
              "pool_fallbacks host_allocs self_waits exit_syncs "
              "dropped_entries live_entries fwd_stash bwd_stash slab_bytes "
              "slab_used dedupe_keys events budget_cutoff restored_bytes "
              "fwd_waits bwd_waits learning_steps profile_hooks "
              "predicted_peak max_memory hooks recomputed "
              "recomputed_bytes idle_steps").split()


class Stats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in STAT_NAMES]


class CheckStep(ctypes.Structure):
    _fields_ = [("step", ctypes.c_int64), ("packs", ctypes.c_uint64),
                ("unpacks", ctypes.c_uint64), ("checked", ctypes.c_uint64),
                ("differ", ctypes.c_uint64),
                ("packed_bytes", ctypes.c_uint64),
                ("moved_bytes", ctypes.c_uint64), ("device", ctypes.c_int32),
                ("pad", ctypes.c_uint32), ("engine", ctypes.c_char_p)]


class CheckDiff(ctypes.Structure):
    _fields_ = [("step", ctypes.c_int64), ("pack_ns", ctypes.c_uint64),
                ("unpack_ns", ctypes.c_uint64), ("index", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("differs", ctypes.c_uint32),
                ("device", ctypes.c_int32), ("engine", ctypes.c_char_p),
                ("pack_site", ctypes.c_char_p),
                ("unpack_site", ctypes.c_char_p), ("where", ctypes.c_char_p),
                ("shape", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("detail", ctypes.c_char_p)]


# Each mirror under its name in the header: what the check compares.
STRUCTS = {"vramtrace_offload_config": Config,
           "vramtrace_offload_tensor": Tensor,
           "vramtrace_offload_request": Request,
           "vramtrace_offload_stats": Stats,
           "vramtrace_check_step": CheckStep,
           "vramtrace_check_diff": CheckDiff}


def _signatures():
    P, U64, I64, I = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64,
                      ctypes.c_int)
    S = ctypes.c_char_p
    return {
        "vramtrace_step": (None, []),
        "vramtrace_mark": (None, [S]),
        "vramtrace_check_step": (None, [ctypes.POINTER(CheckStep)]),
        "vramtrace_check_diff": (I, [ctypes.POINTER(CheckDiff)]),
        "vramtrace_offload_config_init": (I, [ctypes.POINTER(Config)]),
        "vramtrace_offload_create": (P, [ctypes.POINTER(Config), S,
                                         ctypes.c_size_t]),
        "vramtrace_offload_free": (None, [P]),
        "vramtrace_offload_error": (S, [P]),
        "vramtrace_offload_enter": (I, [P, I64]),
        "vramtrace_offload_sample": (None, [P, I64]),
        "vramtrace_offload_peak": (None, [P, I64]),
        "vramtrace_offload_idle": (I, [P]),
        "vramtrace_offload_exit": (I, [P]),
        "vramtrace_offload_backward_done": (I, [P]),
        "vramtrace_offload_pack": (I, [P, ctypes.POINTER(Tensor), U64,
                                       ctypes.POINTER(U64)]),
        "vramtrace_offload_reached": (I, [P, I64, U64]),
        "vramtrace_offload_alive": (I, [P, U64]),
        "vramtrace_offload_unpack": (I, [P, U64, U64, ctypes.POINTER(U64)]),
        "vramtrace_offload_restore": (I, [P, U64, U64, U64]),
        "vramtrace_offload_next": (I, [P, ctypes.POINTER(Request)]),
        "vramtrace_offload_stats": (None, [P, ctypes.POINTER(Stats)]),
    }


_lib = None
_warned = set()


def _here():
    return os.path.dirname(os.path.abspath(__file__))


def candidates():
    """Where the library is looked for, in order, as (path, why) pairs;
    only VRAMTRACE_LIBRARY's when it is set."""
    named = os.environ.get(VARIABLE)
    if named:
        return [(named, VARIABLE)]
    here = _here()
    top = os.path.dirname(os.path.dirname(here))
    return [(os.path.join(here, "libvramtrace.so"), "next to the package"),
            (os.path.join(top, "libvramtrace.so"), "the build tree"),
            (SONAME, "the linker's path")]


def _open():
    for path, why in candidates():
        if os.path.sep in path and not os.path.exists(path):
            if why == VARIABLE:
                raise LibraryError("vramtrace: %s=%s: no such file"
                                   % (VARIABLE, path))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            if os.path.sep in path:
                raise LibraryError("vramtrace: cannot load %s (%s): %s"
                                   % (path, why, e)) from None
    raise LibraryError("vramtrace: libvramtrace.so not found next to the "
                       "package (%s), in the build tree or as %s; set %s"
                       % (_here(), SONAME, VARIABLE))


def check(lib, path):
    """Raise LibraryError unless lib (loaded from path) is this package's
    version with the structs of this package's shape."""
    try:
        version, size = lib.vramtrace_version, lib.vramtrace_struct_size
    except AttributeError:
        raise LibraryError(
            "vramtrace: %s has no vramtrace_version(): not a libvramtrace.so "
            "of version %s (this package's)" % (path, VERSION)) from None
    version.restype, version.argtypes = ctypes.c_char_p, []
    size.restype, size.argtypes = ctypes.c_size_t, [ctypes.c_char_p]
    theirs = (version() or b"?").decode("utf-8", "replace")
    if theirs != VERSION:
        raise LibraryError(
            "vramtrace: %s is libvramtrace %s but the Python package in %s "
            "is %s: install both from one build (pip install ., or make "
            "install), or point %s at this package's library"
            % (path, theirs, _here(), VERSION, VARIABLE))
    for name, mirror in STRUCTS.items():
        n, ours = size(name.encode()), ctypes.sizeof(mirror)
        if n != ours:
            raise LibraryError(
                "vramtrace: struct %s is %d bytes in %s but %d in the Python "
                "package (vramtrace/_library.py): the package and the library "
                "were built from different sources; rebuild and reinstall both"
                % (name, n, path, ours))


def load_library():
    """libvramtrace.so as a ctypes.CDLL with every function's signature
    set, loaded once; LibraryError (an OSError) when it is missing or not
    this package's (see the module's docstring)."""
    global _lib
    if _lib is not None:
        return _lib
    lib, path = _open()
    check(lib, path)
    for fn, (res, args) in _signatures().items():
        try:
            f = getattr(lib, fn)
        except AttributeError:
            raise LibraryError("vramtrace: %s has no %s()" % (path, fn)) \
                from None
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def load_or_warn(what):
    """load_library(), or None after saying once on stderr, in one line,
    that WHAT is off and why (for code inside a user's program, which must
    run on)."""
    try:
        return load_library()
    except LibraryError as e:
        if what not in _warned:
            _warned.add(what)
            sys.stderr.write("%s; %s\n" % (e, what))
        return None
