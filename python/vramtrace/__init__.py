"""vramtrace: GPU memory recording and activation offload for PyTorch.

Step markers: vramtrace.step() ends a training step, vramtrace.mark(name)
records a named instant; both do nothing when the process is not recorded.
vramtrace.load_library() loads and checks libvramtrace.so (the one
VRAMTRACE_LIBRARY names, else this package's; see libvramtrace(3)).
The offload binding lives in vramtrace.torch (import it explicitly;
importing this package does not import torch); the pytest plugin in
vramtrace.pytest_plugin.
"""
from vramtrace._library import VERSION as __version__
from vramtrace._library import LibraryError, load_library
from vramtrace._steps import mark, step

__all__ = ["mark", "step", "load_library", "LibraryError", "__version__"]
