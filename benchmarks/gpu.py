"""Record a run on a GPU: the CUDA tests and the B7 benchmarks, in ``benchmarks/results/gpu.json``.

    python benchmarks/gpu.py [--workers 16] [--out benchmarks/results/gpu.json]

Runs ``pytest -m gpu`` (every test on ``device="cuda"``), lesson 08 on the GPU, then the B7
benchmarks (vizgrad on CuPy against PyTorch CUDA, medians) and writes what the README quotes:
the GPU's name as the driver reports it, CuPy's version, the tests' counts and B7's ratios.
Needs CuPy and a CUDA device; PyTorch with CUDA for the benchmarks' reference.
"""

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import vizgrad  # noqa: E402
from benchmarks import on_gpu  # noqa: E402,F401  (registers the B7 benches)
from benchmarks.harness import BENCHMARKS, TORCH, VIZGRAD, versions  # noqa: E402

B7 = [key for key in BENCHMARKS if key.startswith("B7")]


def pytest_counts(arguments, junit, log):
    """Run pytest in a subprocess; its counts from the JUnit report."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *arguments]
    print("$", " ".join(command), flush=True)
    with open(log, "a") as output:
        subprocess.run(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
    suites = ElementTree.parse(junit).getroot()
    counts = {"passed": 0, "failed": 0, "skipped": 0, "skip_reasons": {}}
    for suite in suites.iter("testsuite"):
        total, failed = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
        skipped = int(suite.get("skipped"))
        counts["passed"] += total - failed - skipped
        counts["failed"] += failed
        counts["skipped"] += skipped
    for skip in suites.iter("skipped"):      # why, with how many tests each
        reason = skip.get("message", "").removeprefix("Skipped: ")
        counts["skip_reasons"][reason] = counts["skip_reasons"].get(reason, 0) + 1
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers (default: one per core)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gpu.json")
    parser.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "vizgrad-gpu-tests.log")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timing per peer and bench")
    parser.add_argument("--skip-tests", action="store_true", help="benchmarks only")
    args = parser.parse_args(argv)
    if not vizgrad.cuda.is_available():
        parser.exit(1, "gpu.py: no GPU usable here (vizgrad.cuda.is_available() is False)\n")

    record = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "device": vizgrad.cuda.get_device_name(), "cupy": versions().get("cupy")}
    try:
        record["torch"] = metadata.version("torch")
    except metadata.PackageNotFoundError:
        record["torch"] = None
    if not args.skip_tests:
        with tempfile.TemporaryDirectory() as tmp:
            record.update(pytest_counts(["-m", "gpu", "-n", args.workers, "tests"], Path(tmp) / "gpu.xml", args.log))
            # (a test's own skip names its reason: samples without a floating input have no gradient to check)
            lesson = pytest_counts(["tests/test_lessons_run.py", "-k", "runs_top_to_bottom and 08"],
                                   Path(tmp) / "lesson.xml", args.log)
        record["lesson_08"] = "passed" if lesson["passed"] == 1 else "failed" if lesson["failed"] else "skipped"
        print(f"CUDA tests: {record['passed']} passed, {record['failed']} failed, {record['skipped']} skipped; "
              f"lesson 08 {record['lesson_08']} (log: {args.log})", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "b7.json"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--only", ",".join(B7),
                        "--settings", "default", "--budget", str(args.budget), "--out", str(out)], check=True)
        report = json.loads(out.read_text())
    rows = report["settings"]["default"]["benchmarks"]
    record["B7"], record["B7_medians"] = {}, {}
    for key in B7:
        entries = {entry["peer"]: entry for entry in rows[key]}
        name = BENCHMARKS[key].name
        mine, theirs = entries[VIZGRAD], entries[TORCH]
        if "median" in mine and "median" in theirs:
            record["B7"][name] = round(mine["ratios"][TORCH], 3)
            record["B7_medians"][name] = {"vizgrad": round(mine["median"], 4), "torch": round(theirs["median"], 4),
                                          "unit": mine["unit"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
