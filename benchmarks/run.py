"""vizgrad against its peers, side by side in one run: ``make bench``.

    python benchmarks/run.py [--only B5s,PG] [--settings default] [--save-baseline] ...

This is the command line. The benches live in one module per family: ``small_ops`` (B2),
``training`` (B1f, B1, B3, B4), ``watching`` (B5, B5s, PG), ``html_report`` (B6),
``display`` (B8, B9, B9L, B9F), ``transformer`` (B10) and ``on_gpu`` (B7); the registry,
timing, worker processes, targets and table in ``harness``, whose docstring says how a
bench is written and timed; the comparison with the committed baseline in ``baseline``.

It prints the table of medians and ratios, each row's change against
``benchmarks/results/baseline.json`` (``--save-baseline`` records this run there), and
writes the JSON to ``benchmarks/results/latest.json``.

Benchmarks are not tests: nothing here fails because a machine is slow. The exit
status is 1 only when a peer raised an error (a bug, not a slow machine).
"""

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))       # run as a script, the benches import each other as benchmarks.*

from benchmarks import baseline  # noqa: E402
from benchmarks.harness import BENCHMARKS, HERE, SETTINGS, format_table, run_setting, summarize, worker  # noqa: E402
# Each family registers its benches as it is imported: this order is the table's.
from benchmarks import small_ops, training, watching, html_report, display, transformer, on_gpu  # noqa: E402,F401

RESULTS = HERE / "results" / "latest.json"


def main(argv=None):
    parser = argparse.ArgumentParser(description="vizgrad benchmarks against its peers.")
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(BENCHMARKS),
                        help=f"comma-separated keys (default: all of {','.join(BENCHMARKS)})")
    parser.add_argument("--settings", type=lambda s: s.split(","), default=list(SETTINGS),
                        help=f"allocator settings (default: {','.join(SETTINGS)})")
    parser.add_argument("--min-reps", type=int, default=10, help="timed repetitions per peer, at least (default 10)")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timing per peer (default 2)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON output (default {RESULTS.relative_to(ROOT)})")
    parser.add_argument("--save-baseline", action="store_true",
                        help="also write this run's JSON to benchmarks/results/baseline.json, the baseline "
                             "that later runs are compared with (a whole run: no --only or --settings)")
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.min_reps = max(args.min_reps, 5)
    args.warmup = max(args.warmup, 1)
    unknown = [k for k in args.only if k not in BENCHMARKS] + [s for s in args.settings if s not in SETTINGS]
    if unknown:
        parser.error(f"unknown benchmark or setting: {', '.join(unknown)}")
    if args.worker_out:
        worker(args)
        return 0
    if args.save_baseline and (set(args.only) != set(BENCHMARKS) or set(args.settings) != set(SETTINGS)):
        parser.error("--save-baseline records a whole run: leave out --only and --settings")
    try:
        previous = baseline.load(baseline.BASELINE)
    except ValueError as error:
        parser.error(f"cannot compare with the baseline {baseline.BASELINE}: {error}")

    report = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "timing": {"statistic": "median", "min_reps": args.min_reps, "budget_s": args.budget,
                         "warmup": args.warmup},
              "definitions": {k: {"name": BENCHMARKS[k].name, "unit": BENCHMARKS[k].unit,
                                  "description": BENCHMARKS[k].description,
                                  "references": list(BENCHMARKS[k].references),
                                  "target": BENCHMARKS[k].target} for k in args.only},
              "settings": {}}
    for setting in args.settings:
        measured = run_setting(setting, args)
        report["versions"] = measured["versions"]
        report["settings"][setting] = {
            "label": SETTINGS[setting][0], "env": SETTINGS[setting][1],
            "load_average": measured["load_average"],
            "benchmarks": {k: summarize(BENCHMARKS[k], rows) for k, rows in measured["benchmarks"].items()}}

    print()
    print(format_table(report, args, None if previous is None else baseline.changes(report, previous)))
    print()
    print(baseline.describe(previous, baseline.BASELINE))
    print("settings: " + "; ".join(f"{s} = {SETTINGS[s][0]}" for s in args.settings))
    print("versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v))
    text = json.dumps(report, indent=2) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    errors = any("error" in e for s in report["settings"].values() for rows in s["benchmarks"].values() for e in rows)
    if args.save_baseline:
        if errors:
            print("the baseline is left as it was: a peer raised an error (see above)")
        else:
            baseline.BASELINE.write_text(text)
            print(f"wrote the baseline {baseline.BASELINE}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
