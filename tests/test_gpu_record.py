"""The GPU's side of the benchmarks and its committed record: B7 skips cleanly where no GPU
is usable, and benchmarks/results/gpu.json holds what the README quotes."""

import json
import re
from pathlib import Path

import pytest

import vizgrad as vg
from benchmarks import harness as bench, on_gpu

ROOT = Path(__file__).resolve().parent.parent
B7 = [key for key in bench.BENCHMARKS if key.startswith("B7")]


def test_b7_covers_the_mlp_the_wide_mlp_the_cnn_the_transformer_and_small_ops():
    names = {bench.BENCHMARKS[key].name for key in B7}
    assert names == {"gpu_mlp_step", "gpu_wide_mlp_step", "gpu_conv_step", "gpu_transformer_step",
                     "gpu_small_op_overhead"}
    assert all(bench.BENCHMARKS[key].references == (bench.TORCH,) for key in B7)
    assert bench.TARGETS[("B7-conv", bench.VIZGRAD)] == (1.5, bench.TORCH)
    assert bench.TARGETS[("B7-transformer", bench.VIZGRAD)] == (1.3, bench.TORCH)


@pytest.mark.skipif(vg.cuda.is_available(), reason="a GPU is usable here")
def test_without_a_gpu_every_b7_peer_is_skipped_with_the_reason():
    logged = []
    for key in B7:
        results = bench.measure(bench.BENCHMARKS[key], min_reps=1, budget=0.01, warmup=1, log=logged.append)
        assert [(r.peer, r.skipped, r.error, r.times) for r in results] == [
            (bench.VIZGRAD, "no GPU here", None, []), (bench.TORCH, "no GPU here", None, [])]
    assert logged == []


def test_the_committed_gpu_record_holds_what_the_readme_quotes():
    record = json.loads((ROOT / "benchmarks" / "results" / "gpu.json").read_text())
    assert record["device"].startswith("NVIDIA") and re.fullmatch(r"\d+\.\d+\.\d+", record["cupy"])
    assert record["passed"] > 3000 and record["failed"] == 0 and record["lesson_08"] == "passed"
    assert set(record["B7"]) == {bench.BENCHMARKS[key].name for key in B7}
    readme = (ROOT / "README.md").read_text()
    assert f"{record['passed']:,} CUDA tests passed" in readme and record["device"] in readme
    for name, ratio in record["B7"].items():
        medians = record["B7_medians"][name]
        assert ratio == pytest.approx(medians["vizgrad"] / medians["torch"], rel=1e-2)
        assert f"| {ratio:.2f}x |" in readme


@pytest.mark.skipif(vg.cuda.is_available(), reason="a GPU is usable here")
def test_cuda_synchronize_and_device_name_without_a_gpu_say_so():
    for call in (vg.cuda.synchronize, vg.cuda.get_device_name):
        with pytest.raises(vg.DeviceError, match="cuda"):
            call()
    with pytest.raises(vg.DeviceError, match="CUDA devices, not 'cpu'"):
        vg.cuda.synchronize("cpu")


@pytest.mark.skipif(vg.cuda.is_available(), reason="a GPU is usable here")
def test_an_installed_but_unloadable_cupy_backend_says_why_on_device_cuda(monkeypatch):
    from vizgrad.backends import base
    monkeypatch.setitem(base.unusable, "cuda", ModuleNotFoundError("No module named 'array_api_compat'"))
    monkeypatch.delitem(base._by_device_type, "cuda", raising=False)
    with pytest.raises(vg.DeviceError, match=r"CuPy is installed but vizgrad's CuPy backend could not be loaded "
                                             r"\(No module named 'array_api_compat'\); pip install 'vizgrad\[cuda12\]'"):
        vg.zeros(2, device="cuda")


class _OnTheCpu:
    """vizgrad or PyTorch as B7 sees it, with a no-op ``cuda.synchronize``: B7's workloads on the CPU."""

    def __init__(self, module):
        self._module = module
        self.cuda = type("cuda", (), {"synchronize": staticmethod(lambda: None)})

    def __getattr__(self, name):
        return getattr(self._module, name)


def test_b7_workloads_run_for_both_peers_and_agree(monkeypatch):
    """Every B7 workload, run on the CPU: both peers step without error and start from the same loss."""
    pytest.importorskip("torch")
    monkeypatch.setattr(on_gpu, "GPU", "cpu")
    monkeypatch.setattr(on_gpu, "_gpu_library",
                        lambda name: _OnTheCpu(bench.cpu_torch() if name == bench.TORCH else vg))
    for key in [key for key in B7 if key != "B7-mlp4096"]:    # (B7-mlp's code at 8x the width: seconds on a CPU)
        logged = []
        results = bench.measure(bench.BENCHMARKS[key], min_reps=1, budget=0.001, warmup=1, log=logged.append)
        assert all(r.error is None and r.skipped is None and r.times for r in results), (key, logged)
        losses = [r.value for r in results]
        assert losses[0] == pytest.approx(losses[1], rel=1e-4), key


def test_the_record_counts_tests_and_says_why_some_were_skipped(tmp_path):
    import conftest
    from benchmarks import gpu
    counts = gpu.pytest_counts(["tests/test_ops.py::test_value", "-k", "relu and (cpu or cuda)", "-p", "no:xdist"],
                               tmp_path / "run.xml", tmp_path / "log.txt")
    assert counts["failed"] == 0 and counts["passed"] >= 1
    assert sum(counts["skip_reasons"].values()) == counts["skipped"]
    reason = conftest._cuda_unavailable_reason()
    if reason is not None:
        assert counts["skip_reasons"] == {reason: counts["passed"]}    # one cuda case per cpu case
