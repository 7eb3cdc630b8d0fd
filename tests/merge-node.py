"""merge-node.py: one node of a made-up multi-node job, for t-merge.sh.

    python3 merge-node.py PROBE DIR NODE [--node_rank=N ...]

Loads tests/libstack-probe.so (the injection library's client and stack
capture without CUDA), starts it with Python stacks, waits until every
node named in DIR/nodes has started (so that their processes overlap in
time, as the nodes of one job do), allocates twice with the GIL held and
frees once.  Its rank and the job it belongs to come from the environment,
as in a traced process (RANK; TORCHELASTIC_RUN_ID, MASTER_ADDR and
MASTER_PORT).  Extra arguments only change the command line, as
--node_rank does on each node.
"""
import ctypes
import os
import sys
import time


def alloc_weights(lib, rank):
    lib.probe_alloc(0x1000 + rank, 1 << 20)


def alloc_grads(lib, rank):
    lib.probe_alloc(0x2000 + rank, 2 << 20)


def main():
    probe, where, node = sys.argv[1], sys.argv[2], sys.argv[3]
    rank = int(os.environ.get("RANK", "0"))
    lib = ctypes.PyDLL(probe)
    lib.probe_start.argtypes = [ctypes.c_char_p, ctypes.c_uint]
    lib.probe_alloc.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
    lib.probe_free.argtypes = [ctypes.c_uint64]
    if lib.probe_start(b"python", 16) != 0:
        sys.exit("probe_start failed")
    open(os.path.join(where, "started-" + node), "w").close()
    nodes = open(os.path.join(where, "nodes")).read().split()
    deadline = time.time() + 20
    while not all(os.path.exists(os.path.join(where, "started-" + n))
                  for n in nodes):
        if time.time() > deadline:
            sys.exit("the other nodes never started")
        time.sleep(0.01)
    alloc_weights(lib, rank)
    alloc_grads(lib, rank)
    lib.probe_free(0x2000 + rank)


if __name__ == "__main__":
    main()
