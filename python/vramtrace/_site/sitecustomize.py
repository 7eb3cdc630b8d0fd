"""vramtrace record --torch-steps: mark a step after every Optimizer.step.

vramtrace record puts this directory first on PYTHONPATH.  Nothing is
imported eagerly: a finder waits for torch.optim.optimizer and, once it is
loaded, registers a global optimizer step post hook that calls
vramtrace.step().  Any other sitecustomize further down sys.path still runs.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_TARGET = "torch.optim.optimizer"


def _chain():
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _install(module):
    import vramtrace

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


class _Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _install(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Watch())
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
