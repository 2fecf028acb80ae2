"""The harness every bench runs in: the registry, timing, the worker and driver processes, the
targets and the table.

Each benchmark is a function registered with :func:`benchmark`. It returns, for each
peer, a *setup* function; a setup builds the peer's inputs and returns a ``step()``
that runs one repetition and returns the loss (used only to check that the peers
computed the same thing). A setup raises :class:`Skipped` when its peer is not
installed. To add a benchmark, write one more such function in the module of its family
(``small_ops``, ``training``, ``watching``, ``html_report``, ``display``, ``transformer``,
``on_gpu``) and list it in :data:`TARGETS` if it has a target.

Timing: every step is warmed up, then the peers are timed in interleaved rounds (so a
slow phase of the machine hits them all) for at least ``--min-reps`` repetitions each;
the table shows medians and their ratios to the bench's reference peers.

The allocator changes NumPy-based results a lot, so the whole table runs twice, each
time in a fresh subprocess (``run.py`` again, as its worker): once with glibc's default
malloc and once with ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` raised, which
keeps large temporaries mapped between steps. Compare figures only within one setting.

Benchmarks are not tests: nothing here fails because a machine is slow.
"""

import gc
from importlib import metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
COMMAND_LINE = HERE / "run.py"      # what the driver starts as its worker, once per allocator setting

SETTINGS = {
    "default": ("glibc malloc as vizgrad leaves it (its thresholds raised at import)", {}),
    "malloc_tuned": ("MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=64 MiB",
                     {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "67108864"}),
}

# The peers, named as the table shows them; the watching benches' (B5, B5s) are settings of one
# vizgrad training step, named here because the targets name them.
VIZGRAD, TORCH, AUTOGRAD, NUMPY = "vizgrad", "PyTorch", "HIPS autograd", "hand-written NumPy"
BARE, NOOP, RECORDER, FOLLOWING, DASHBOARD = ("bare", "no-op listener", "trace Recorder", "GraphView of the trace",
                                              "dashboard (headless)")


class Skipped(Exception):
    """A peer that cannot run here (not installed); the reason goes in the table."""


class Elapsed(float):
    """What a step returns when it times itself (seconds): measured where the work happens,
    e.g. a browser's frames, not by the harness around the call."""


@dataclass
class Benchmark:
    key: str                 # "B2"
    name: str                # "small_op_overhead"
    unit: str                # what the table shows: "us/op", "ms", "steps/s"
    scale: float             # seconds per step -> unit (None: the unit is steps per second)
    references: tuple        # the peers the ratios are relative to
    setups: callable         # () -> {peer: setup}
    description: str = ""
    teardown: callable = None  # run after the bench (e.g. to detach listeners its steps attached)
    target: float = None       # a bench without peers: its target in its unit (prefer the TARGETS table)


BENCHMARKS = {}


def benchmark(key, name, unit, scale, references, teardown=None, target=None):
    """Register a benchmark: ``function()`` returns ``{peer: setup}``, setup() returns step()."""
    def register(function):
        BENCHMARKS[key] = Benchmark(key, name, unit, scale, tuple(references), function,
                                    (function.__doc__ or "").strip().splitlines()[0], teardown, target)
        return function
    return register


def require(module):
    """Import ``module``, or skip the peer that needs it."""
    try:
        return __import__(module)
    except ImportError:
        raise Skipped("not installed") from None


def cpu_torch():
    """PyTorch as every CPU bench runs it: two threads."""
    torch = require("torch")
    torch.set_num_threads(2)
    return torch


def vizgrad_and_torch(library_step):
    """The setups of vizgrad and PyTorch CPU for a step written once: ``library_step(library,
    tensor)`` builds it with ``library``'s names, ``tensor`` making its tensors from NumPy
    arrays (PyTorch's ``from_numpy`` shares their memory)."""
    def vizgrad_setup():
        import vizgrad as vg
        return library_step(vg, vg.tensor)

    def torch_setup():
        torch = cpu_torch()
        return library_step(torch, torch.from_numpy)
    return {VIZGRAD: vizgrad_setup, TORCH: torch_setup}


def training_step(optimizer, loss_of):
    """One step of a training loop: zero the gradients, ``loss_of()``, backward, the optimizer's
    step; returns the loss."""
    def step():
        optimizer.zero_grad()
        loss = loss_of()
        loss.backward()
        optimizer.step()
        return loss
    return step


# --- measuring (in the worker process) -----------------------------------------
@dataclass
class Result:
    peer: str
    times: list = field(default_factory=list)   # seconds per step
    value: float = None                          # the loss, to check that peers agree
    skipped: str = None
    error: str = None


def _value(loss):
    """A step's result as a number to cross-check between peers (None: nothing to compare)."""
    return None if loss is None else float(loss.item() if hasattr(loss, "item") else loss)


def measure(bench, min_reps, budget, warmup, log):
    """Warm every peer up, then time them in interleaved rounds; return one Result per peer."""
    results, steps = [], {}
    for peer, setup in bench.setups().items():
        result = Result(peer)
        results.append(result)
        try:
            step = setup()
            estimate = float("inf")          # the fastest warm-up step (the first ones import, attach)
            for _ in range(warmup):
                start = time.perf_counter()
                result.value = _value(step())
                estimate = min(estimate, time.perf_counter() - start)
            steps[peer] = (step, estimate)
        except Skipped as reason:
            result.skipped = str(reason)
        except Exception as error:  # a bug in a peer's code: report it, measure the others
            result.error = f"{type(error).__name__}: {error}"
            log(f"  {bench.key} {peer}: {result.error}")

    rounds = max(1, min(5, min_reps))
    by_peer = {r.peer: r for r in results}
    for _ in range(rounds):
        for peer, (step, estimate) in steps.items():
            reps = max(-(-min_reps // rounds), int(budget / rounds / max(estimate, 1e-9)))
            result = by_peer[peer]
            if result.error:
                continue
            gc.collect()
            try:
                step()        # untimed: a round's first step may switch listeners (B5)
                for _ in range(min(reps, 1000)):
                    start = time.perf_counter()
                    out = step()
                    seconds = time.perf_counter() - start
                    result.times.append(out if isinstance(out, Elapsed) else seconds)
            except Exception as error:
                result.error, result.times = f"{type(error).__name__}: {error}", []
                log(f"  {bench.key} {peer}: {result.error}")
    for result in results:
        if result.times:
            log(f"  {bench.key} {result.peer}: {_shown(bench, statistics.median(result.times)):.2f} {bench.unit}"
                f" ({len(result.times)} reps)")
    return results


def versions():
    """The versions of Python and of every peer's package (and the GPU's, where one is usable)."""
    found = {"python": platform.python_version()}
    for package in ("numpy", "vizgrad", "torch", "autograd"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    try:
        found["blas"] = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:
        pass
    import vizgrad
    if vizgrad.cuda.is_available():
        found["gpu"] = vizgrad.cuda.get_device_name()
        found["cupy"] = metadata.version(next(d for d in ("cupy-cuda13x", "cupy-cuda12x", "cupy")
                                              if _installed(d)))
    return found


def _installed(distribution):
    try:
        metadata.version(distribution)
        return True
    except metadata.PackageNotFoundError:
        return False


def worker(args):
    """Run the benchmarks in this process (under whatever allocator settings it got)."""
    def log(line):
        print(line, file=sys.stderr, flush=True)

    output = {"versions": versions(), "benchmarks": {}}
    for key in args.only:
        bench = BENCHMARKS[key]
        results = measure(bench, args.min_reps, args.budget, args.warmup, log)
        if bench.teardown is not None:
            bench.teardown()
        output["benchmarks"][key] = [vars(r) for r in results]
    Path(args.worker_out).write_text(json.dumps(output))


# --- the driver: one subprocess per allocator setting, then the table ----------
def run_setting(setting, args):
    label, extra = SETTINGS[setting]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(extra)
    print(f"[{setting}] {label}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "worker.json"
        command = [sys.executable, str(COMMAND_LINE), "--worker-out", str(out), "--only", ",".join(args.only),
                   "--min-reps", str(args.min_reps), "--budget", str(args.budget), "--warmup", str(args.warmup)]
        load_before = os.getloadavg()[0]
        subprocess.run(command, env=env, check=True)
        measured = json.loads(out.read_text())
    # Other processes on the machine skew every figure; the load average tells afterwards.
    measured["load_average"] = {"before": load_before, "after": os.getloadavg()[0]}
    if max(measured["load_average"].values()) > 0.5 * (os.cpu_count() or 1):
        print(f"  note: load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after: "
              "other processes were busy, figures are noisy", flush=True)
    return measured


def summarize(bench, rows):
    """Median, reps and ratios to the reference peers for each peer of one bench."""
    medians = {r["peer"]: statistics.median(r["times"]) for r in rows if r["times"]}
    check = next((r["value"] for r in rows if r["value"] is not None), None)
    summary = []
    for r in rows:
        entry = {"peer": r["peer"], "unit": bench.unit}
        if r["times"]:
            # ratios are of times (how many times slower than the reference), whatever the unit
            entry.update(median=_shown(bench, medians[r["peer"]]), reps=len(r["times"]),
                         best=_shown(bench, min(r["times"])), value=r["value"],
                         ratios={ref: medians[r["peer"]] / medians[ref] for ref in bench.references
                                 if ref in medians and ref != r["peer"]})
            if check is not None and r["value"] is not None and abs(r["value"] - check) > 1e-3 * max(1.0, abs(check)):
                entry["warning"] = f"loss {r['value']:.6g} differs from {check:.6g}"
            target = check_target(bench, entry)
            if target is not None:
                entry["target"] = target
        else:
            entry["skipped" if r["skipped"] else "error"] = r["skipped"] or r["error"]
        summary.append(entry)
    return summary


def format_table(report, args, changes=None):
    """The table of medians and ratios, one column pair per setting; with ``changes`` (from
    :func:`benchmarks.baseline.changes`), a column per setting of each row's change against the baseline."""
    settings = list(report["settings"])
    header = ["bench", "peer"]
    for setting in settings:
        header += [f"median ({setting})", f"ratio ({setting})"]
        if changes is not None:
            header.append(f"vs baseline ({setting})")
    lines = [header]
    for key in args.only:
        bench = BENCHMARKS[key]
        peers = [e["peer"] for e in report["settings"][settings[0]]["benchmarks"][key]]
        for i, peer in enumerate(peers):
            line = [f"{bench.key} {bench.name}" if i == 0 else "", peer]
            for setting in settings:
                entry = report["settings"][setting]["benchmarks"][key][i]
                if "median" in entry:
                    ratios = ", ".join(f"{v:.2f}x {_short(ref)}" for ref, v in entry["ratios"].items())
                    line += [f"{entry['median']:.2f} {bench.unit}", ratios or ("(reference)" if bench.references else "")]
                    if "target" in entry:
                        line[-1] = f"{line[-1]}  {_target_text(bench, entry['target'])}".lstrip()
                    if "warning" in entry:
                        line[-1] += f"  [{entry['warning']}]"
                else:
                    line += [entry.get("skipped") or "error (see above)", ""]
                if changes is not None:
                    line.append(changes[setting][key][peer])
            lines.append(line)
    widths = [max(len(row[c]) for row in lines) for c in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(text)


def _shown(bench, seconds):
    """A time per step in the bench's unit (a rate for steps/s)."""
    return 1.0 / seconds if bench.scale is None else seconds * bench.scale


def _short(peer):
    return {NUMPY: "NumPy", TORCH: "torch", AUTOGRAD: "autograd"}.get(peer, peer)


# --- targets ---------------------------------------------------------------------
# From /work/shared/BENCHMARKS.md, in one place: (bench, peer) -> (limit, reference). With a
# reference peer the limit is the ratio of the medians of time to that peer's; without
# one, the median itself in the bench's unit. The table marks every row above its target.
TARGETS = {
    ("B1", VIZGRAD): (1.1, NUMPY),
    ("B2", VIZGRAD): (1.5, TORCH),
    ("B3", VIZGRAD): (1.5, TORCH),
    ("B4", VIZGRAD): (1.5, TORCH),
    ("B5", NOOP): (1.1, BARE),
    ("B5", RECORDER): (1.3, BARE),
    ("B5", FOLLOWING): (1.3, BARE),
    ("B5", DASHBOARD): (1.2, BARE),
    ("B5s", RECORDER): (1.5, BARE),
    ("B5s", FOLLOWING): (1.5, BARE),
    ("B5s", DASHBOARD): (1.5, BARE),
    ("B6", VIZGRAD): (500.0, None),
    ("B10", VIZGRAD): (1.2, TORCH),
    ("B7-mlp", VIZGRAD): (1.3, TORCH),
    ("B7-mlp4096", VIZGRAD): (1.3, TORCH),
    ("B7-conv", VIZGRAD): (1.5, TORCH),
    ("B7-transformer", VIZGRAD): (1.3, TORCH),
}


def target_of(bench, peer):
    """``(limit, reference)`` of a row, or None when it has no target."""
    found = TARGETS.get((bench.key, peer))
    if found is None and bench.target is not None and not bench.references:
        found = (bench.target, None)
    return found


def check_target(bench, entry):
    """``{"limit", "reference", "value", "met"}`` for a measured row with a target, else None."""
    found = target_of(bench, entry["peer"])
    if found is None or "median" not in entry:
        return None
    limit, reference = found
    value = entry["median"] if reference is None else entry["ratios"].get(reference)
    if value is None:
        return None
    return {"limit": limit, "reference": reference, "value": value, "met": value <= limit}


def _target_text(bench, target):
    if target["reference"] is None:
        wanted = f"under {target['limit']:g} {bench.unit}"
    else:
        wanted = f"at most {target['limit']:g}x {_short(target['reference'])}"
    return f"target {wanted}" if target["met"] else f"ABOVE TARGET ({wanted})"
