"""vramtrace record's sitecustomize: what the recording asks of PyTorch.

vramtrace record puts this directory first on PYTHONPATH and says in the
environment what to do; each switch below is one section:

- VRAMTRACE_TORCH_STEPS=1 (--torch-steps): mark a step after every
  Optimizer.step;
- VRAMTRACE_TORCH_HISTORY=N (PyTorch's caching allocator, Python stacks
  on): record PyTorch's allocation history, folded into the recording at
  exit (vramtrace._history);
- VRAMTRACE_CHECK_OFFLOAD=1: the offload check (vramtrace._check_torch);
- VRAMTRACE_TORCH_ASYNC=1 (record put PyTorch on cudaMallocAsync):
  torch.compile makes no CUDA graphs, which that backend cannot serve
  (vramtrace._compile).

A section imports nothing of PyTorch: a finder (vramtrace._check's
after_import) waits for the module it needs and runs it once that module
is loaded.  Any other sitecustomize further down sys.path still runs.

record puts only this directory on PYTHONPATH: the vramtrace package it
belongs to (its parent directory) is imported from there by its path, so
that the program gets the package of the vramtrace that records it (and
its library), and nothing else of the directory that holds the package (a
whole site-packages, for another Python perhaps) comes before its own.
"""
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _own_package():
    package = os.path.dirname(_HERE)
    spec = importlib.util.spec_from_file_location(
        "vramtrace", os.path.join(package, "__init__.py"),
        submodule_search_locations=[package])
    module = importlib.util.module_from_spec(spec)
    sys.modules["vramtrace"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the program runs as it would without us
        del sys.modules["vramtrace"]
        sys.stderr.write("vramtrace: the package in %s: %s: %s\n"
                         % (package, type(e).__name__, e))


if "vramtrace" not in sys.modules:
    _own_package()


def _chain():
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


# --torch-steps (VRAMTRACE_TORCH_STEPS=1): a step ends after every
# Optimizer.step.

def _install_steps():
    import vramtrace
    module = sys.modules["torch.optim.optimizer"]

    def hook(optimizer, args, kwargs):
        vramtrace.step()

    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(hook)
        return
    original = module.Optimizer.step

    def patched(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        vramtrace.step()
        return result

    module.Optimizer.step = patched
    sys.stderr.write("vramtrace: this torch has no global optimizer step "
                     "hook; only optimizers that call Optimizer.step mark "
                     "steps\n")


if os.environ.get("VRAMTRACE_TORCH_STEPS") == "1":
    from vramtrace._check import after_import
    after_import("torch.optim.optimizer", _install_steps,
                 "steps are not marked")


# PyTorch's caching allocator, Python stacks on (VRAMTRACE_TORCH_HISTORY=N):
# its blocks and their stacks come from PyTorch's allocation history.

def _install_history():
    from vramtrace import _history
    # Still being imported: not yet an attribute of torch.
    _history.install(sys.modules["torch.cuda"])


if os.environ.get("VRAMTRACE_TORCH_HISTORY"):
    from vramtrace._check import after_import
    after_import("torch.cuda", _install_history,
                 "PyTorch's allocation history is off")


# record put PyTorch on cudaMallocAsync (VRAMTRACE_TORCH_ASYNC=1):
# torch.compile without CUDA graphs (vramtrace._compile).
def _install_compile():
    from vramtrace import _compile
    _compile.install(sys.modules["torch"])


if os.environ.get("VRAMTRACE_TORCH_ASYNC") == "1":
    from vramtrace._check import after_import
    after_import("torch", _install_compile,
                 "torch.compile's CUDA graphs are left on")

_chain()


# vramtrace record --check-offload (VRAMTRACE_CHECK_OFFLOAD=1): check every
# saved-tensor-hooks engine once torch is imported (vramtrace._check_torch).
def _check_offload():
    from vramtrace import _check

    def install():
        from vramtrace import _check_torch
        _check_torch.install_for_run()

    _check.after_import("torch", install, "offload check is off")


if os.environ.get("VRAMTRACE_CHECK_OFFLOAD", "0") not in ("", "0"):
    _check_offload()
