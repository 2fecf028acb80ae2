"""The regression guard: each row of a run against the same row of the baseline, the report
of an earlier run committed as ``benchmarks/results/baseline.json`` (``run.py
--save-baseline`` records the run it makes there).

A row is compared on its ratio to the first of its bench's reference peers, which a faster
or slower machine changes less than the times themselves; a row without a ratio (a
reference peer, a bench without peers) on its median. Changes are of time: ``+3%`` is
3% slower than the baseline, whatever the bench's unit (a rate's steps/s included).
"""

import json
from pathlib import Path

BASELINE = Path(__file__).resolve().parent / "results" / "baseline.json"
NOT_IN_BASELINE = "not in baseline"


def load(path):
    """The report saved at ``path``, or None where there is no file; ValueError where it is
    not a benchmark report."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return None
    report = json.loads(text)
    if not isinstance(report, dict) or not isinstance(report.get("settings"), dict):
        raise ValueError("no 'settings' in it: not a report that benchmarks/run.py wrote")
    return report


def _time(entry):
    """A row's median as a time (larger is slower): a rate (a unit per second) inverted."""
    return 1 / entry["median"] if entry["unit"].endswith("/s") else entry["median"]


def change(entry, old):
    """How much slower ``entry`` is than ``old``, the same row in the baseline, as a fraction
    (0.03: 3% slower; negative: faster); None where either has no figure to compare."""
    if old is None or "median" not in entry or "median" not in old:
        return None
    ratios = entry["ratios"]
    if not ratios:
        return _time(entry) / _time(old) - 1
    reference = next(iter(ratios))                   # the bench's first reference peer this run measured
    before = old.get("ratios", {}).get(reference)
    return None if before is None else ratios[reference] / before - 1


def change_text(entry, old):
    """A row's change as the table shows it: "+3%", "-12%", "±0%"; "not in baseline" where the
    baseline has no figure for it; "" where this run has none (skipped, failed)."""
    if "median" not in entry:
        return ""
    fraction = change(entry, old)
    if fraction is None:
        return NOT_IN_BASELINE
    percent = 100 * fraction
    return "±0%" if abs(percent) < 0.5 else f"{percent:+.0f}%"


def changes(report, baseline):
    """``{setting: {bench: {peer: text}}}``: :func:`change_text` of every row of ``report``
    against the same setting, bench and peer in ``baseline``."""
    table = {}
    for setting, measured in report["settings"].items():
        before = baseline["settings"].get(setting, {}).get("benchmarks", {})
        table[setting] = {}
        for key, rows in measured["benchmarks"].items():
            old_rows = {row["peer"]: row for row in before.get(key, [])}
            table[setting][key] = {row["peer"]: change_text(row, old_rows.get(row["peer"])) for row in rows}
    return table


def describe(baseline, path):
    """The line under the table that says what the changes are against, or that there is no baseline."""
    if baseline is None:
        return (f"no baseline: {path} does not exist, so no row is compared "
                "(make bench BENCH_ARGS=--save-baseline records one)")
    machine = baseline.get("machine", {})
    recorded = ", ".join(str(part) for part in (baseline.get("created"), machine.get("platform"),
                                                machine.get("cpus") and f"{machine['cpus']} CPUs") if part)
    return (f"vs baseline: {path} ({recorded}); each row's ratio to its first reference peer, its median where "
            "it has none; + is slower")
