"""vramtrace: GPU memory recording and activation offload for PyTorch.

Step markers: vramtrace.step() ends a training step, vramtrace.mark(name)
records a named instant; both do nothing when the process is not recorded.
The offload binding lives in vramtrace.torch (import it explicitly;
importing this package does not import torch).
"""
from vramtrace._steps import mark, step

__all__ = ["mark", "step"]
