"""Every Python frame and allocation of one small op, forward and backward: what B2 pays per op
before NumPy works (``make op-profile``).

    python benchmarks/op_profile.py [--op mul|add|tanh]

Frames are counted with ``sys.setprofile`` (each Python function called, and each C function
it calls, in order, with its depth); allocations with ``tracemalloc`` (blocks allocated and
still alive after the op, by the line that allocated them). Counts, not times: they do not change with the machine's load, so two
versions of the engine compare exactly. Times belong to ``make bench``.
"""

import argparse
import linecache
import sys
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vizgrad as vg  # noqa: E402

STEPS = {      # B2's three ops, each applied to h, a non-leaf float32 tensor of 10 numbers
    "mul": lambda h: h * 1.0001,
    "add": lambda h: h + 0.001,
    "tanh": lambda h: vg.tanh(h),
}


def frames(call):
    """``[(depth, 'python'|'c', name)]`` of the calls ``call()`` makes, in order."""
    seen, depth = [], [0]

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            seen.append((depth[0], "python", f"{code.co_qualname} ({Path(code.co_filename).name}:{code.co_firstlineno})"))
            depth[0] += 1
        elif event == "return":
            depth[0] -= 1
        elif event == "c_call":
            seen.append((depth[0], "c", getattr(arg, "__qualname__", repr(arg))))
    sys.setprofile(profile)
    try:
        result = call()
    finally:
        sys.setprofile(None)
    return seen[1:], result     # (the first is the lambda itself)


def allocations(call):
    """``(blocks by 'file:line  source', result)``: the memory blocks ``call()`` allocated and
    kept (the op's node, output tensor, edges, saved values), by the line that allocated them."""
    tracemalloc.start()
    first = tracemalloc.take_snapshot()
    result = call()
    second = tracemalloc.take_snapshot()
    tracemalloc.stop()
    blocks = Counter()
    for stat in second.compare_to(first, "lineno"):
        frame = stat.traceback[0]
        if stat.count_diff > 0 and "tracemalloc" not in frame.filename:
            source = linecache.getline(frame.filename, frame.lineno).strip()
            blocks[f"{Path(frame.filename).name}:{frame.lineno}  {source}"] += stat.count_diff
    return blocks, result


def report(op):
    x = vg.tensor(np.linspace(-1, 1, 10, dtype=np.float32), requires_grad=True)
    step = STEPS[op]
    for _ in range(3):                    # warm: caches (promotion plans, node types) filled
        step(x * 1.0).sum().backward()
    h = x * 1.0                           # a non-leaf, as the input of every op of B2's chain but the first
    lines = [f"# one `{op}` of B2, forward and backward"]
    seen, out = frames(lambda: step(h))
    total = out.sum()
    seen_backward, _ = frames(lambda: total.backward())
    for phase, calls in (("forward", seen), ("backward (of the sum, the op, and h = x * 1.0)", seen_backward)):
        python = sum(kind == "python" for _, kind, _ in calls)
        lines.append(f"\n## {phase}: {python} Python frames, {len(calls) - python} C calls")
        lines += ["  " * depth + ("" if kind == "python" else "[C] ") + name for depth, kind, name in calls]
    h = x * 1.0
    blocks, _ = allocations(lambda: step(h))
    lines.append(f"\n## forward allocations kept: {sum(blocks.values())} blocks")
    lines += [f"{count:4d}  {where}" for where, count in blocks.most_common()]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", choices=sorted(STEPS), action="append",
                        help="the op to profile (repeatable; default: all three)")
    ops = parser.parse_args(argv).op or list(STEPS)
    print("\n\n".join(report(op) for op in ops))


if __name__ == "__main__":
    main()
