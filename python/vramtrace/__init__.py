"""vramtrace: GPU memory profiler and activation offload.

The PyTorch offload binding lives in vramtrace.torch (import it explicitly;
importing this package does not import torch).
"""
