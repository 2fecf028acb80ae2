"""The benchmarks' regression guard: each row of a run against the committed baseline
(benchmarks/baseline.py), and how run.py prints and records it. Fake reports only: no timing."""

import json

import pytest

from benchmarks import baseline, run
from benchmarks.harness import BENCHMARKS, NUMPY, TORCH, VIZGRAD, format_table, summarize


def row(peer, median, ratios=None, unit="ms"):
    return {"peer": peer, "unit": unit, "median": median, "reps": 10, "best": median, "value": 1.0,
            "ratios": ratios or {}}


def report(*benches, setting="default"):
    """A report as run.py writes it, with one setting: ``benches`` are (key, rows) pairs."""
    return {"created": "2026-01-02T03:04:05+00:00", "machine": {"platform": "Linux-x86_64", "cpus": 2},
            "settings": {setting: {"benchmarks": dict(benches)}}}


def test_a_row_is_compared_on_its_ratio_to_the_reference_peer():
    assert baseline.change(row(VIZGRAD, 5.0, {TORCH: 1.03}), row(VIZGRAD, 2.0, {TORCH: 1.0})) == pytest.approx(0.03)
    assert baseline.change(row(VIZGRAD, 5.0, {TORCH: 0.9}), row(VIZGRAD, 5.0, {TORCH: 1.2})) == pytest.approx(-0.25)
    # the first reference peer of the bench (B1: the NumPy reference, then PyTorch)
    now, before = row(VIZGRAD, 3.0, {NUMPY: 1.2, TORCH: 0.9}), row(VIZGRAD, 3.0, {NUMPY: 1.0, TORCH: 1.8})
    assert baseline.change(now, before) == pytest.approx(0.2)


def test_a_row_without_ratios_is_compared_on_its_median_as_a_time():
    assert baseline.change(row(TORCH, 4.4), row(TORCH, 4.0)) == pytest.approx(0.1)
    assert baseline.change(row(VIZGRAD, 300.0), row(VIZGRAD, 400.0)) == pytest.approx(-0.25)
    # a rate: 110 steps/s where there were 100 is 9% less time per step
    assert baseline.change(row("trainer alone", 110.0, unit="steps/s"),
                           row("trainer alone", 100.0, unit="steps/s")) == pytest.approx(100 / 110 - 1)


def test_the_change_as_the_table_shows_it():
    old = row(VIZGRAD, 2.0, {TORCH: 1.0})
    assert baseline.change_text(row(VIZGRAD, 2.0, {TORCH: 1.03}), old) == "+3%"
    assert baseline.change_text(row(VIZGRAD, 2.0, {TORCH: 0.88}), old) == "-12%"
    assert baseline.change_text(row(VIZGRAD, 2.0, {TORCH: 1.004}), old) == "±0%"
    assert baseline.change_text(row(VIZGRAD, 2.0, {TORCH: 0.994}), old) == "-1%"
    assert baseline.change_text(row(VIZGRAD, 2.0, {TORCH: 2.5}), old) == "+150%"


def test_rows_the_baseline_lacks_say_so_and_rows_not_measured_now_are_blank():
    now = report(("B2", [row(VIZGRAD, 5.0, {TORCH: 1.1}), row(TORCH, 4.0), row("micrograd", 9.0, {TORCH: 2.0})]),
                 ("B10", [row(VIZGRAD, 30.0, {TORCH: 1.3}), {"peer": TORCH, "unit": "ms", "skipped": "not installed"}]))
    before = report(("B2", [row(VIZGRAD, 5.0, {TORCH: 1.0}), row(TORCH, 5.0),
                            {"peer": "micrograd", "unit": "ms", "error": "RuntimeError: boom"}]))
    assert baseline.changes(now, before) == {"default": {
        "B2": {VIZGRAD: "+10%", TORCH: "-20%", "micrograd": "not in baseline"},   # a row that failed there
        "B10": {VIZGRAD: "not in baseline", TORCH: ""},                            # a bench it does not have
    }}


def test_a_ratio_to_a_reference_the_baseline_did_not_measure_is_not_compared():
    # PyTorch was skipped when the baseline was recorded: the ratio has nothing to be compared with
    assert baseline.change(row(VIZGRAD, 5.0, {TORCH: 1.1}), row(VIZGRAD, 4.0)) is None
    assert baseline.change_text(row(VIZGRAD, 5.0, {TORCH: 1.1}), row(VIZGRAD, 4.0)) == "not in baseline"
    # PyTorch is skipped now: the median is compared with the median
    assert baseline.change(row(VIZGRAD, 5.0), row(VIZGRAD, 4.0, {TORCH: 1.1})) == pytest.approx(0.25)


def test_a_setting_the_baseline_did_not_run_is_not_in_baseline():
    now = report(("B2", [row(VIZGRAD, 5.0, {TORCH: 1.1})]), setting="malloc_tuned")
    before = report(("B2", [row(VIZGRAD, 5.0, {TORCH: 1.0})]), setting="default")
    assert baseline.changes(now, before) == {"malloc_tuned": {"B2": {VIZGRAD: "not in baseline"}}}


def test_loading_a_baseline(tmp_path):
    assert baseline.load(tmp_path / "baseline.json") is None
    saved = report(("B2", [row(VIZGRAD, 5.0)]))
    (tmp_path / "baseline.json").write_text(json.dumps(saved))
    assert baseline.load(tmp_path / "baseline.json") == saved
    (tmp_path / "broken.json").write_text('{"settings": ')
    with pytest.raises(ValueError):
        baseline.load(tmp_path / "broken.json")
    (tmp_path / "other.json").write_text('{"B2": 1}')
    with pytest.raises(ValueError, match="not a report that benchmarks/run.py wrote"):
        baseline.load(tmp_path / "other.json")


def test_the_line_under_the_table_says_what_the_changes_are_against(tmp_path):
    path = tmp_path / "baseline.json"
    missing = baseline.describe(None, path)
    assert missing.startswith(f"no baseline: {path} does not exist") and "--save-baseline" in missing
    line = baseline.describe(report(), path)
    assert line.startswith(f"vs baseline: {path} (2026-01-02T03:04:05+00:00, Linux-x86_64, 2 CPUs)")
    assert "+ is slower" in line


def test_the_table_has_a_baseline_column_per_setting_only_with_a_baseline():
    bench = BENCHMARKS["B2"]

    def measured(vizgrad_seconds):
        rows = [{"peer": VIZGRAD, "times": [vizgrad_seconds] * 5, "value": 1.0, "skipped": None, "error": None},
                {"peer": TORCH, "times": [4e-3] * 5, "value": 1.0, "skipped": None, "error": None}]
        return {"settings": {"default": {"benchmarks": {"B2": summarize(bench, rows)}}}}

    now, before = measured(6e-3), measured(4.8e-3)
    args = type("Args", (), {"only": ["B2"]})
    lines = format_table(now, args, baseline.changes(now, before)).splitlines()
    assert lines[0].endswith("  vs baseline (default)")
    assert lines[2].startswith("B2 small_op_overhead") and lines[2].endswith("+25%")      # 1.5x torch, was 1.2x
    assert lines[3].split()[0] == TORCH and lines[3].endswith("±0%")
    assert "vs baseline" not in format_table(now, args)


def fake_run_setting(seconds):
    """run.py's driver, for one allocator setting, as if every bench's vizgrad row took ``seconds``."""
    def run_setting(setting, args):
        rows = [{"peer": VIZGRAD, "times": [seconds] * 5, "value": None, "skipped": None, "error": None}]
        return {"versions": {"python": "3"}, "load_average": {"before": 0.0, "after": 0.0},
                "benchmarks": {key: rows for key in args.only}}
    return run_setting


def test_run_prints_each_rows_change_and_save_baseline_records_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(baseline, "BASELINE", tmp_path / "baseline.json")
    out = ["--out", str(tmp_path / "latest.json")]
    monkeypatch.setattr(run, "run_setting", fake_run_setting(0.010))
    assert run.main(["--only", "B6", "--settings", "default", *out]) == 0
    printed = capsys.readouterr().out
    assert f"no baseline: {tmp_path / 'baseline.json'} does not exist" in printed and "vs baseline (" not in printed

    assert run.main(["--save-baseline", *out]) == 0
    assert f"wrote the baseline {tmp_path / 'baseline.json'}" in capsys.readouterr().out
    assert (tmp_path / "baseline.json").read_text() == (tmp_path / "latest.json").read_text()

    monkeypatch.setattr(run, "run_setting", fake_run_setting(0.011))
    assert run.main(["--only", "B6,B2", "--settings", "default", *out]) == 0
    printed = capsys.readouterr().out
    assert "vs baseline (default)" in printed and f"vs baseline: {tmp_path / 'baseline.json'} (" in printed
    table = {line.split("  ")[0]: line for line in printed.splitlines() if line.startswith(("B6 ", "B2 "))}
    assert table.keys() == {"B6 report", "B2 small_op_overhead"}
    assert all(line.endswith("+10%") for line in table.values())
    latest = json.loads((tmp_path / "latest.json").read_text())
    assert latest["settings"]["default"]["benchmarks"]["B6"][0]["median"] == pytest.approx(11.0)


def test_save_baseline_wants_a_whole_run_and_a_broken_baseline_stops_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(baseline, "BASELINE", tmp_path / "baseline.json")
    monkeypatch.setattr(run, "run_setting", lambda setting, args: pytest.fail("no bench may run"))
    for partial in (["--only", "B2"], ["--settings", "default"]):
        with pytest.raises(SystemExit) as stopped:
            run.main(["--save-baseline", *partial])
        assert stopped.value.code == 2
        assert "--save-baseline records a whole run: leave out --only and --settings" in capsys.readouterr().err
    (tmp_path / "baseline.json").write_text("not json")
    with pytest.raises(SystemExit):
        run.main(["--only", "B2"])
    assert f"cannot compare with the baseline {tmp_path / 'baseline.json'}" in capsys.readouterr().err
