"""torch.compile without CUDA graphs, in a process that `vramtrace record`
put on PyTorch's cudaMallocAsync backend (VRAMTRACE_TORCH_ASYNC=1).

CUDA graph trees (torch.compile's modes "reduce-overhead" and
"max-autotune", the option "triton.cudagraphs", the backend "cudagraphs")
draw on private pools of PyTorch's caching allocator, which the
cudaMallocAsync backend does not have: PyTorch refuses the first graph
("cudaMallocAsync does not yet support checkPoolLiveAllocations") and the
program ends.  So that the program runs, its torch.compile makes the same
kernels without the graphs: mode "reduce-overhead" becomes "default",
"max-autotune" "max-autotune-no-cudagraphs", the option is turned off (also
when it was set in torch._inductor.config before the call), and the
backend "cudagraphs" becomes "eager"; one line says so, the first time.
The results are the same; the memory the graphs' pools would hold is not
(`vramtrace record --torch-allocator native` keeps the graphs).

Needs no torch to be tested: without_cuda_graphs() works on the call's
keyword arguments alone.
"""
import functools
import sys

__all__ = ["install", "without_cuda_graphs"]

_MODES = {"reduce-overhead": "default",
          "max-autotune": "max-autotune-no-cudagraphs"}
_OPTION = "triton.cudagraphs"
_said = []


def without_cuda_graphs(kwargs, config=None):
    """Change the keyword arguments of a torch.compile call so that it makes
    no CUDA graphs; config is torch._inductor.config where it is imported.
    Returns what was changed, in words (empty: nothing)."""
    changed = []
    mode = kwargs.get("mode")
    if mode in _MODES:
        kwargs["mode"] = _MODES[mode]
        changed.append("mode=%r" % mode)
    options = kwargs.get("options")
    if isinstance(options, dict) and options.get(_OPTION):
        kwargs["options"] = dict(options, **{_OPTION: False})
        changed.append("options %s" % _OPTION)
    elif (mode is None and options is None and config is not None and
          getattr(getattr(config, "triton", None), "cudagraphs", False)):
        kwargs["options"] = {_OPTION: False}
        changed.append("torch._inductor.config.%s" % _OPTION)
    if kwargs.get("backend") == "cudagraphs":
        kwargs["backend"] = "eager"
        changed.append("backend='cudagraphs'")
    return changed


def install(torch):
    """Wrap torch.compile in torch (the module) with without_cuda_graphs."""
    original = torch.compile

    @functools.wraps(original)
    def compile(*args, **kwargs):
        changed = without_cuda_graphs(
            kwargs, sys.modules.get("torch._inductor.config"))
        if changed and not _said:
            _said.append(True)
            sys.stderr.write(
                "vramtrace: torch.compile without CUDA graphs (%s): vramtrace"
                " record put PyTorch on cudaMallocAsync, which cannot serve "
                "them; --torch-allocator native keeps them\n"
                % ", ".join(changed))
        return original(*args, **kwargs)

    torch.compile = compile
