"""The modules PyTorch programs import: accelerator, backends' flags, jit, onnx, distributed,
nn.parallel, cuda's seeds; each as PyTorch behaves on a machine without a GPU, or refusing
clearly what vizgrad does not have."""

import numpy as np
import pytest

import vizgrad as vg


def test_accelerator_is_truthful():
    assert vg.accelerator.is_available() == vg.cuda.is_available()
    assert vg.accelerator.device_count() == vg.cuda.device_count()
    if vg.cuda.is_available():
        assert vg.accelerator.current_accelerator() == vg.device("cuda")
        assert vg.accelerator.current_device_index() == 0
    else:
        assert vg.accelerator.current_accelerator() is None
        assert vg.accelerator.current_accelerator(check_available=True) is None
        with pytest.raises(RuntimeError, match="no accelerator is available"):
            vg.accelerator.current_device_index()
        with pytest.raises(RuntimeError, match="device index 0 is out of range: this machine has 0"):
            vg.accelerator.set_device_index(0)
        vg.accelerator.synchronize()


def test_backend_flags_can_be_set_and_report_what_is_there():
    import vizgrad.backends.cuda as cuda_flags
    import vizgrad.backends.cudnn as cudnn
    assert cudnn is vg.backends.cudnn and cuda_flags is vg.backends.cuda
    previous = cudnn.benchmark, cudnn.deterministic, cuda_flags.matmul.allow_tf32
    try:
        cudnn.benchmark, cudnn.deterministic, cuda_flags.matmul.allow_tf32 = True, True, True
        assert vg.backends.cudnn.benchmark and vg.backends.cuda.matmul.allow_tf32
    finally:
        cudnn.benchmark, cudnn.deterministic, cuda_flags.matmul.allow_tf32 = previous
    assert cudnn.is_available() is False and cudnn.version() is None
    assert vg.backends.mps.is_available() is False and vg.backends.mps.is_built() is False
    assert vg.backends.cuda.is_built() == ("cuda" in vg.backends.base._by_device_type)


def test_cuda_seeds_leave_the_host_generator_alone():
    vg.manual_seed(5)
    first = vg.randn(3)
    vg.manual_seed(5)
    vg.cuda.manual_seed_all(123)
    vg.cuda.manual_seed(7)
    assert vg.equal(vg.randn(3), first)
    with pytest.raises(ValueError):
        vg.cuda.manual_seed_all(-1)


def test_jit_returns_what_it_is_given_as_pytorch_without_the_jit():
    model = vg.nn.Linear(2, 1)
    assert vg.jit.script(model) is model
    assert vg.jit.trace(model, vg.ones(1, 2)) is model

    @vg.jit.ignore
    def helper(x):
        return x * 2

    @vg.jit.unused()
    def other(x):
        return x + 1
    assert helper(3) == 6 and other(3) == 4
    assert not vg.jit.is_scripting() and not vg.jit.is_tracing()
    with pytest.raises(NotImplementedError, match="jit.save: vizgrad has no TorchScript"):
        vg.jit.save(model, "m.pt")


def test_onnx_and_distributed_refuse_clearly():
    with pytest.raises(vg.errors.UnsupportedError, match="onnx.export: vizgrad cannot export models to ONNX"):
        vg.onnx.export(vg.nn.Linear(2, 1), (vg.ones(1, 2),), "model.onnx")
    assert vg.onnx.is_in_onnx_export() is False
    assert vg.distributed.is_available() is False and vg.distributed.is_initialized() is False
    with pytest.raises(NotImplementedError, match="distributed.init_process_group: vizgrad has no distributed"):
        vg.distributed.init_process_group("gloo")


def test_data_parallel_runs_the_module():
    vg.manual_seed(0)
    inner = vg.nn.Linear(3, 2)
    model = vg.nn.DataParallel(inner)
    assert model is not inner and vg.nn.parallel.DataParallel is vg.nn.DataParallel
    x = vg.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), inner(x).detach().numpy())
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    np.testing.assert_array_equal(vg.nn.parallel.data_parallel(inner, x).detach().numpy(), inner(x).detach().numpy())
    with pytest.raises(NotImplementedError, match="DistributedDataParallel: vizgrad has no distributed training"):
        vg.nn.parallel.DistributedDataParallel(inner)


def test_distributions_export_their_transforms():
    from vizgrad.distributions import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                       SigmoidTransform, TanhTransform, Transform)
    assert all(issubclass(t, Transform) for t in (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                                  SigmoidTransform, TanhTransform))
    flow = vg.distributions.TransformedDistribution(vg.distributions.Normal(0.0, 1.0),
                                                    [AffineTransform(1.0, 2.0), SigmoidTransform()])
    x = vg.tensor([0.7, 0.2])
    z = (vg.log(x / (1 - x)) - 1.0) / 2.0     # the inverse of the flow
    expected = vg.distributions.Normal(0.0, 1.0).log_prob(z) - vg.log(vg.tensor(2.0)) - vg.log(x * (1 - x))
    np.testing.assert_allclose(flow.log_prob(x).numpy(), expected.numpy(), rtol=1e-5)


def test_device_predicates_of_devices_vizgrad_lacks():
    x = vg.ones(2)
    assert (x.is_xpu, x.is_mps, x.is_meta, x.is_cuda) == (False, False, False, False)


def test_reassigned_submodules_and_parameters_keep_their_place():
    torch = pytest.importorskip("torch")

    def names(lib):
        model = lib.nn.Sequential()
        model.first, model.second = lib.nn.Linear(2, 2), lib.nn.Linear(2, 1)
        model.first = lib.nn.Linear(2, 2, bias=False)
        model.second.weight = lib.nn.Parameter(lib.zeros(1, 2))
        return [name for name, _ in model.named_parameters()], [name for name, _ in model.named_children()]

    assert names(vg) == names(torch) == (["first.weight", "second.weight", "second.bias"], ["first", "second"])


def test_the_data_submodule_paths_programs_import():
    from vizgrad.utils.data import DataLoader, TensorDataset
    from vizgrad.utils.data.dataloader import DataLoader as FromDataloader, default_collate
    from vizgrad.utils.data.dataset import Dataset, Subset, random_split
    assert FromDataloader is DataLoader is vg.data.DataLoader and default_collate is vg.data.default_collate
    assert (Dataset, Subset, random_split) == (vg.data.Dataset, vg.data.Subset, vg.data.random_split)
    batches = list(DataLoader(TensorDataset(vg.arange(4.0)), batch_size=2))
    assert [b[0].tolist() for b in batches] == [[0.0, 1.0], [2.0, 3.0]]
