#!/bin/sh
# t-compile.sh: torch.compile without CUDA graphs where `vramtrace record`
# put PyTorch on cudaMallocAsync (vramtrace._compile).  First the change
# each kind of call gets (no torch needed); then the sitecustomize's way
# in: a program run under record with VRAMTRACE_TORCH_ASYNC=1 and, on
# PYTHONPATH after it, a stand-in torch module whose compile() says what
# it was given (the GPU machine runs the real one: tests/gpu/zoo, shape
# cudagraphs).
. "${srcdir:-.}/tests/lib.sh"
plan 9

"$PY" - "$srcdir/python" <<'PY' >"$TMP/unit"
import sys
sys.path.insert(0, sys.argv[1])
from vramtrace._compile import without_cuda_graphs


class Config:
    class triton:
        cudagraphs = True


def case(kwargs, config=None):
    changed = without_cuda_graphs(kwargs, config)
    return "%s %s" % (sorted(kwargs.items()), changed)


print(case({"mode": "reduce-overhead"}))
print(case({"mode": "max-autotune", "fullgraph": True}))
print(case({"options": {"triton.cudagraphs": True, "x": 1}}))
print(case({}, Config))
print(case({"backend": "cudagraphs"}))
print(case({"mode": "max-autotune-no-cudagraphs"}, Config))
PY
# Each line of the cases' output against what it must be, with its name.
i=0
while IFS='|' read -r want what; do
	i=$((i + 1))
	[ "$(sed -n "${i}p" "$TMP/unit")" = "$want" ]
	ok $? "$what"
done <<'EOF'
[('mode', 'default')] ["mode='reduce-overhead'"]|mode reduce-overhead becomes default
[('fullgraph', True), ('mode', 'max-autotune-no-cudagraphs')] ["mode='max-autotune'"]|mode max-autotune becomes max-autotune-no-cudagraphs, the rest stays
[('options', {'triton.cudagraphs': False, 'x': 1})] ['options triton.cudagraphs']|the option triton.cudagraphs is turned off, the others stay
[('options', {'triton.cudagraphs': False})] ['torch._inductor.config.triton.cudagraphs']|torch._inductor.config's cudagraphs, set before the call: off for it
[('backend', 'eager')] ["backend='cudagraphs'"]|the backend cudagraphs becomes eager
[('mode', 'max-autotune-no-cudagraphs')] []|a call that makes no CUDA graphs is left alone
EOF

# The stand-in torch: compile() prints the keyword arguments it got.
mkdir -p "$TMP/fake/torch"
cat >"$TMP/fake/torch/__init__.py" <<'PY'
def compile(model=None, **kwargs):
    print("compile", sorted(kwargs.items()))
    return model
PY
cat >"$TMP/prog.py" <<'PY'
import torch
torch.compile(len, mode="reduce-overhead")
torch.compile(len, options={"triton.cudagraphs": True})
print("ran")
PY
record_prog() {	# record_prog [ENV...]: run prog.py under record
	rm -f "$TMP"/c.db*
	env PYTHONPATH="$TMP/fake" "$@" "$VRAMTRACE" record -o "$TMP/c.db" -- \
	    "$PY" "$TMP/prog.py" >"$TMP/out" 2>"$TMP/err"
}
record_prog
grep -c "^compile \[('mode', 'default')\]$\|^compile \[('options', {'triton.cudagraphs': False})\]$\|^ran$" "$TMP/out" |
    grep -qx 3 &&
    [ "$(grep -c 'torch.compile without CUDA graphs' "$TMP/err")" -eq 1 ]
ok $? "under record's cudaMallocAsync: both calls make no CUDA graphs, said once"
grep -q "torch.compile without CUDA graphs (mode='reduce-overhead'): vramtrace record put PyTorch on cudaMallocAsync, which cannot serve them; --torch-allocator native keeps them" "$TMP/err"
ok $? "the line says what changed, why, and how to keep the graphs"
record_prog PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
grep -q "^compile \[('mode', 'reduce-overhead')\]$" "$TMP/out" &&
    ! grep -q "CUDA graphs" "$TMP/err"
ok $? "cudaMallocAsync the program chose itself: its torch.compile unchanged"
