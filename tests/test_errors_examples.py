"""Issue 15's examples, each a test: every user mistake raises a vizgrad error that also
subclasses the builtin PyTorch users catch, names the function called and the argument,
and chains no NumPy traceback; the silently wrong cases raise or work as in PyTorch."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn, optim
from vizgrad.data import DataLoader, TensorDataset
from vizgrad.backends import base
from vizgrad.errors import (ArgumentError, ArgumentTypeError, DeviceError, DTypeError, IndexingError, ShapeError,
                            StateDictError, VizgradError)
from vizgrad.serialization import CheckpointError, CheckpointNotFoundError, CheckpointPathError


def _linear_params():
    return list(nn.Linear(2, 3).parameters())


def _dataset():
    return TensorDataset(vg.randn(4, 2))


# (expected class, builtin, the text the message must hold, the mistake)
EXAMPLES = {
    # dims out of range, in every op family
    "sum dim": (IndexingError, IndexError, "sum: dim 2 is out of range", lambda: vg.ones(2, 3).sum(dim=2)),
    "softmax dim": (IndexingError, IndexError, "softmax: dim 2", lambda: vg.ones(2, 3).softmax(dim=2)),
    "transpose dim": (IndexingError, IndexError, "transpose: dim 2", lambda: vg.ones(2, 3).transpose(0, 2)),
    "squeeze dim": (IndexingError, IndexError, "squeeze: dim 2", lambda: vg.ones(2, 3).squeeze(2)),
    "cat dim": (IndexingError, IndexError, "cat: dim 2", lambda: vg.cat([vg.ones(2, 3)] * 2, dim=2)),
    "stack dim": (IndexingError, IndexError, "stack: dim 3", lambda: vg.stack([vg.ones(2, 3)] * 2, dim=3)),
    "argmax dim": (IndexingError, IndexError, "argmax: dim 2", lambda: vg.ones(2, 3).argmax(dim=2)),
    "cumsum dim": (IndexingError, IndexError, "cumsum: dim 2", lambda: vg.ones(2, 3).cumsum(dim=2)),
    "size dim": (IndexingError, IndexError, "size: dim 2", lambda: vg.ones(2, 3).size(2)),
    "dim not an int": (ArgumentTypeError, TypeError, "index_select: dim must be an int, got a float (0.5)",
                       lambda: vg.ones(3, 4).index_select(0.5, vg.tensor([0]))),
    # indices out of range
    "getitem": (IndexingError, IndexError, "getitem: index 5 is out of range for dim 0 of size 3",
                lambda: vg.ones(3)[5]),
    "gather": (IndexingError, IndexError, "gather: index 5", lambda: vg.ones(3).gather(0, vg.tensor([5]))),
    "index_select": (IndexingError, IndexError, "index_select: index 5",
                     lambda: vg.ones(3).index_select(0, vg.tensor([5]))),
    "scatter": (IndexingError, IndexError, "scatter: index 5",
                lambda: vg.zeros(3).scatter(0, vg.tensor([5]), vg.ones(1))),
    "Embedding ids": (IndexingError, IndexError, "embedding: index out of range",
                      lambda: nn.Embedding(3, 2)(vg.tensor([5]))),
    "cross_entropy target": (IndexingError, IndexError, "cross_entropy: target 5 is out of bounds",
                             lambda: F.cross_entropy(vg.randn(2, 3), vg.tensor([0, 5]))),
    # argument ranges
    "Conv2d stride 0": (ArgumentError, ValueError, "Conv2d: stride must be positive, got 0",
                        lambda: nn.Conv2d(1, 1, 3, stride=0)),
    "Conv2d negative padding": (ArgumentError, ValueError, "Conv2d: padding must be non-negative, got -1",
                                lambda: nn.Conv2d(1, 1, 3, padding=-1)),
    "conv2d stride 0": (ArgumentError, ValueError, "conv2d: stride must be positive",
                        lambda: F.conv2d(vg.ones(1, 1, 4, 4), vg.ones(1, 1, 3, 3), stride=0)),
    "max_pool2d stride 0": (ArgumentError, ValueError, "max_pool2d: stride must be positive",
                            lambda: F.max_pool2d(vg.ones(1, 1, 4, 4), 2, stride=0)),
    "max_pool2d negative padding": (ArgumentError, ValueError, "max_pool2d: padding must be non-negative",
                                    lambda: F.max_pool2d(vg.ones(1, 1, 4, 4), 2, padding=-1)),
    "SGD lr": (ArgumentError, ValueError, "SGD: lr must be >= 0.0, got -1",
               lambda: optim.SGD(_linear_params(), lr=-1)),
    "SGD momentum": (ArgumentError, ValueError, "SGD: momentum must be >= 0.0, got -1",
                     lambda: optim.SGD(_linear_params(), lr=0.1, momentum=-1)),
    "SGD weight_decay": (ArgumentError, ValueError, "SGD: weight_decay must be >= 0.0, got -1",
                         lambda: optim.SGD(_linear_params(), lr=0.1, weight_decay=-1)),
    "Adam betas": (ArgumentError, ValueError, "Adam: betas[0] must be in [0.0, 1.0), got 1.5",
                   lambda: optim.Adam(_linear_params(), betas=(1.5, 0.9))),
    "Adam eps": (ArgumentError, ValueError, "Adam: eps must be >= 0.0, got -1",
                 lambda: optim.Adam(_linear_params(), eps=-1)),
    "DataLoader batch_size 0": (ArgumentError, ValueError, "DataLoader: batch_size must be positive, got 0",
                                lambda: DataLoader(_dataset(), batch_size=0)),
    "Dropout p": (ArgumentError, ValueError, "Dropout: dropout probability has to be between 0 and 1, but got 1.5",
                  lambda: nn.Dropout(1.5)),
    "dropout p": (ArgumentError, ValueError, "dropout: dropout probability", lambda: F.dropout(vg.ones(2), 1.5)),
    "arange step 0": (ArgumentError, ValueError, "arange: step must be nonzero", lambda: vg.arange(0, 10, 0)),
    # raw NumPy or Python text before
    "tensor + str": (DTypeError, TypeError, "add: expected a tensor or a number, got str 'a'",
                     lambda: vg.ones(2) + "a"),
    "negating bools": (DTypeError, TypeError, "neg: negation, the `-` operator, on a bool tensor is not "
                       "supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator "
                       "instead.", lambda: -vg.tensor([True])),
    "integer negative power": (ArgumentError, ValueError, "pow: integers to negative integer powers are not "
                               "allowed (input of dtype int64, exponent -1)", lambda: vg.tensor([1, 2]).pow(-1)),
    "eye(-1)": (ArgumentError, ValueError, "eye: n must be non-negative, got -1", lambda: vg.eye(-1)),
    "linspace steps -1": (ArgumentError, ValueError, "linspace: steps must be non-negative, got -1",
                          lambda: vg.linspace(0, 1, -1)),
    "full with a string": (ArgumentTypeError, TypeError, "full: fill_value must be a number, got a str ('x')",
                           lambda: vg.full((2,), "x")),
    "SGD lr string": (ArgumentTypeError, TypeError, "SGD: lr must be a number, got a str ('abc')",
                      lambda: optim.SGD(_linear_params(), lr="abc")),
    "DataLoader batch_size float": (ArgumentTypeError, TypeError, "DataLoader: batch_size must be an int, got a "
                                    "float (1.5)", lambda: DataLoader(_dataset(), batch_size=1.5)),
    # messages that named an internal op
    "mse_loss shapes": (ShapeError, ValueError, "mse_loss: shapes (2, 3) and (3, 3) cannot be broadcast together",
                        lambda: F.mse_loss(vg.ones(2, 3), vg.ones(3, 3))),
    "kl_div shapes": (ShapeError, ValueError, "kl_div: shapes", lambda: F.kl_div(vg.ones(2, 3), vg.ones(3, 3),
                                                                               reduction="batchmean")),
    "cosine_similarity shapes": (ShapeError, ValueError, "cosine_similarity: shapes",
                                 lambda: F.cosine_similarity(vg.ones(2, 3), vg.ones(3, 3))),
    "copy_ shapes": (ShapeError, ValueError, "copy_: shapes (2, 3) and (4, 3)",
                     lambda: vg.ones(2, 3).copy_(vg.ones(4, 3))),
    "Linear(-1, 3)": (ArgumentError, ValueError, "Linear: in_features must be non-negative, got -1",
                      lambda: nn.Linear(-1, 3)),
    "BatchNorm1d channels": (ShapeError, ValueError, "BatchNorm1d: expected 4 channels, got 5 (dim 1 of the input "
                             "of shape (3, 5))", lambda: nn.BatchNorm1d(4)(vg.ones(3, 5))),
    "tensor overflow": (ArgumentError, ValueError, "tensor: overflow: the integer 1180591620717411303424 does not "
                        "fit in int64", lambda: vg.tensor([2 ** 70])),
    "GroupNorm(3, 4)": (ArgumentError, ValueError, "GroupNorm: num_channels (4) must be divisible by num_groups (3)",
                        lambda: nn.GroupNorm(3, 4)),
    # silently wrong before
    "where float condition": (DTypeError, TypeError, "where: expected condition to be a boolean tensor, but got "
                              "a tensor with dtype float32", lambda: vg.where(vg.ones(2), vg.ones(2), vg.zeros(2))),
    "randperm(-1)": (ArgumentError, ValueError, "randperm: n must be non-negative, got -1", lambda: vg.randperm(-1)),
    "arange wrong-sign step": (ArgumentError, ValueError, "arange: upper bound and larger bound inconsistent with "
                               "step sign: start=0, end=10, step=-1", lambda: vg.arange(0, 10, -1)),
    "negative size": (ShapeError, ValueError, "zeros: sizes must be non-negative integers, got (-1,)",
                      lambda: vg.zeros(-1)),
    "view of a transpose": (ShapeError, ValueError, "view: view size is not compatible with input tensor's size "
                            "and stride", lambda: vg.ones(2, 3).transpose(0, 1).view(6)),
    # found by the fuzz suite and the probes around it
    "inner op's dtype error": (DTypeError, TypeError, "cross_entropy: expected a floating-point input, got int64",
                               lambda: F.cross_entropy(vg.tensor([[1, 2]]), vg.tensor([0]))),
    "inner op's dim error": (IndexingError, IndexError, "normalize: dim 4 is out of range",
                             lambda: F.normalize(vg.ones(2, 3), dim=4)),
    "dtype helper's error": (DTypeError, TypeError, "zeros: unsupported dtype 'foo'",
                             lambda: vg.zeros(2, dtype="foo")),
    "device helper's error": (DeviceError, RuntimeError, "to: unknown device type 'tpu'", lambda: vg.ones(2).to("tpu")),
    "requires_grad_ of ints": (DTypeError, TypeError, "requires_grad_: only floating-point tensors can require "
                               "gradients, got dtype int64", lambda: vg.tensor([1, 2]).requires_grad_()),
    "a non-Tensor input": (ArgumentTypeError, TypeError, "reshape: input must be a Tensor, got a str ('abc')",
                           lambda: vg.reshape("abc", (3,))),
    "masked_fill overflow": (ArgumentError, ValueError, "masked_fill: value 1e+300 cannot be converted to float32 "
                             "without overflow", lambda: vg.ones(2).masked_fill(vg.ones(2) > 0, 1e300)),
    "StepLR step_size": (ArgumentTypeError, TypeError, "StepLR: step_size must be an int, got a str ('a')",
                         lambda: optim.lr_scheduler.StepLR(optim.SGD(_linear_params(), lr=0.1), step_size="a")),
    "manual_seed": (ArgumentTypeError, TypeError, "manual_seed: seed must be an int", lambda: vg.manual_seed("a")),
    "LayerNorm shape": (ArgumentError, ValueError, "LayerNorm: normalized_shape must be non-negative, got (-1,)",
                        lambda: nn.LayerNorm(-1)),
}


@pytest.mark.filterwarnings("ignore::UserWarning")     # mse_loss warns of the size mismatch first, as PyTorch
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_mistake_raises_a_vizgrad_error_in_the_callers_words(name):
    expected, builtin, text, mistake = EXAMPLES[name]
    with pytest.raises(builtin) as info:
        mistake()
    error = info.value
    assert type(error) is expected and isinstance(error, VizgradError)
    assert text in str(error)
    assert error.__cause__ is None                       # never NumPy's traceback chained beneath
    message = str(error).lower()
    assert "ufunc" not in message and "numpy" not in message and "operands could not" not in message


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("make", [lambda: vg.ones(2, 3) + vg.ones(4, 3),
                                  lambda: vg.where(vg.ones(2, 3) > 0, vg.ones(4, 3), 0.0),
                                  lambda: F.mse_loss(vg.ones(2, 3), vg.ones(3, 3)),
                                  lambda: vg.ones(2, 3).copy_(vg.ones(4, 3))],
                         ids=["add", "where", "mse_loss", "copy_"])
def test_broadcast_errors_chain_no_backend_traceback(make):
    with pytest.raises(ShapeError) as info:
        make()
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_the_torch_oracle_raises_on_the_same_examples():
    """The examples mirror PyTorch: each is an error there too (vizgrad raises where torch raises)."""
    torch = pytest.importorskip("torch")
    for mistake in (lambda: torch.ones(2, 3).sum(dim=2), lambda: torch.ones(3)[5], lambda: torch.eye(-1),
                    lambda: torch.arange(0, 10, -1), lambda: torch.randperm(-1), lambda: torch.nn.GroupNorm(3, 4),
                    lambda: torch.where(torch.ones(2), torch.ones(2), torch.zeros(2)),
                    lambda: torch.ones(2, 3).t().view(6), lambda: -torch.tensor([True]),
                    lambda: torch.tensor([1, 2]).pow(-1), lambda: torch.tensor([2 ** 70])):
        with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)):
            mistake()


# --- dtypes PyTorch refuses, each call written once for both libraries (vizgrad and torch as L) ---
def _f64(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


# (the function named in the message, the call given a library: vizgrad or torch)
DTYPE_REFUSALS = {
    "abs bool": ("abs", lambda L: L.abs(L.tensor([True, False]))),
    "abs_ bool": ("abs_", lambda L: L.tensor([True, False]).abs_()),
    "ceil bool": ("ceil", lambda L: L.tensor([True]).ceil()),
    "floor bool": ("floor", lambda L: L.floor(L.tensor([True]))),
    "round bool": ("round", lambda L: L.round(L.tensor([True]))),
    "trunc bool": ("trunc", lambda L: L.trunc(L.tensor([True]))),
    "relu bool": ("relu", lambda L: L.nn.functional.relu(L.tensor([True]))),
    "ReLU bool": ("relu", lambda L: L.nn.ReLU()(L.tensor([True]))),
    "bilinear bias": ("bilinear", lambda L: L.nn.functional.bilinear(
        _f64(L, 3, 4), _f64(L, 3, 2), _f64(L, 5, 4, 2), L.ones(5, dtype=L.float32))),
    "binary_cross_entropy target": ("binary_cross_entropy", lambda L: L.nn.functional.binary_cross_entropy(
        L.full((3,), 0.5), L.ones(3, dtype=L.float64))),
    "binary_cross_entropy int target": ("binary_cross_entropy", lambda L: L.nn.functional.binary_cross_entropy(
        L.full((3,), 0.5), L.ones(3, dtype=L.int64))),
    "bce_with_logits int input": ("binary_cross_entropy_with_logits",
                                  lambda L: L.nn.functional.binary_cross_entropy_with_logits(
                                      L.ones(3, dtype=L.int64), L.ones(3))),
    "bce_with_logits bool target": ("binary_cross_entropy_with_logits",
                                    lambda L: L.nn.functional.binary_cross_entropy_with_logits(
                                        L.ones(3), L.ones(3, dtype=L.bool))),
    "bce_with_logits bool pos_weight": ("binary_cross_entropy_with_logits",
                                        lambda L: L.nn.functional.binary_cross_entropy_with_logits(
                                            L.ones(3), L.ones(3), pos_weight=L.ones(3, dtype=L.bool))),
    "cross_entropy int32 target": ("cross_entropy", lambda L: L.nn.functional.cross_entropy(
        L.ones(3, 4), L.tensor([0, 1, 3], dtype=L.int32))),
    "cross_entropy weight": ("cross_entropy", lambda L: L.nn.functional.cross_entropy(
        L.ones(3, 4), L.tensor([0, 1, 3]), weight=_f64(L, 4))),
    "nll_loss int32 target": ("nll_loss", lambda L: L.nn.functional.nll_loss(
        L.ones(3, 4), L.tensor([0, 1, 3], dtype=L.int32))),
    "nll_loss weight": ("nll_loss", lambda L: L.nn.functional.nll_loss(
        L.ones(3, 4), L.tensor([0, 1, 3]), weight=L.ones(4, dtype=L.int64))),
    "huber_loss int input": ("huber_loss", lambda L: L.nn.functional.huber_loss(
        L.ones(3, dtype=L.int64), L.ones(3))),
    "mse_loss int pair": ("mse_loss", lambda L: L.nn.functional.mse_loss(
        L.ones(3, dtype=L.int64), L.ones(3, dtype=L.int32))),
    "smooth_l1_loss bool int": ("smooth_l1_loss", lambda L: L.nn.functional.smooth_l1_loss(
        L.ones(3, dtype=L.bool), L.ones(3, dtype=L.int64))),
    "kl_div int target": ("kl_div", lambda L: L.nn.functional.kl_div(
        L.ones(2, 3), L.ones(2, 3, dtype=L.int64), reduction="batchmean")),
    "kl_div bool input": ("kl_div", lambda L: L.nn.functional.kl_div(
        L.ones(2, 3, dtype=L.bool), L.ones(2, 3), reduction="batchmean")),
    "index_add source": ("index_add", lambda L: L.index_add(L.ones(4, 3), 0, L.tensor([0, 2]), _f64(L, 2, 3))),
    "index_add_ source": ("index_add_", lambda L: L.ones(4, 3).index_add_(0, L.tensor([0, 2]),
                                                                       L.ones(2, 3, dtype=L.int64))),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(DTYPE_REFUSALS))
def test_dtypes_pytorch_refuses_are_a_dtype_error_naming_the_function(name):
    called, call = DTYPE_REFUSALS[name]
    with pytest.raises(DTypeError) as info:
        call(vg)
    assert str(info.value).startswith(f"{called}: ")
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, TypeError)):
        call(torch)


# what PyTorch accepts keeps working, with PyTorch's result dtype
DTYPE_ACCEPTED = {
    "abs int": lambda L: L.abs(L.tensor([-3, 2])),
    "ceil int32": lambda L: L.ceil(L.tensor([-3, 2], dtype=L.int32)),
    "round int": lambda L: L.round(L.tensor([-3, 2])),
    "trunc int": lambda L: L.trunc(L.tensor([-3, 2])),
    "relu int": lambda L: L.relu(L.tensor([-3, 2])),
    "abs_ int": lambda L: L.tensor([-3, 2]).abs_(),
    "huber_loss int target": lambda L: L.nn.functional.huber_loss(L.ones(3), L.ones(3, dtype=L.int64)),
    "mse_loss int input": lambda L: L.nn.functional.mse_loss(L.ones(3, dtype=L.int64), L.ones(3)),
    "cross_entropy probabilities": lambda L: L.nn.functional.cross_entropy(L.ones(3, 4), L.full((3, 4), 0.25)),
    "bce_with_logits int pos_weight": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.ones(3), L.ones(3), pos_weight=L.ones(3, dtype=L.int64)),
    "bce_with_logits float64 weight": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.ones(3), L.ones(3), weight=_f64(L, 3)),
    "binary_cross_entropy float64 weight": lambda L: L.nn.functional.binary_cross_entropy(
        L.full((3,), 0.5), L.ones(3), weight=_f64(L, 3)),
    "index_add int64": lambda L: L.index_add(L.ones(4, 3, dtype=L.int64), 0, L.tensor([0, 2], dtype=L.int32),
                                             L.ones(2, 3, dtype=L.int64)),
    "bilinear float64": lambda L: L.nn.functional.bilinear(_f64(L, 3, 4), _f64(L, 3, 2), _f64(L, 5, 4, 2),
                                                           _f64(L, 5)),
}


@pytest.mark.parametrize("name", sorted(DTYPE_ACCEPTED))
def test_dtypes_pytorch_accepts_still_work(name):
    result = DTYPE_ACCEPTED[name](vg)
    torch = pytest.importorskip("torch")
    expected = DTYPE_ACCEPTED[name](torch)
    assert result.dtype.name == str(expected.dtype).removeprefix("torch.").replace("long", "int64")
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)


# --- load_state_dict: PyTorch's RuntimeError and wording ------------------------------------------
def test_load_state_dict_missing_and_unexpected_keys():
    layer = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as info:
        layer.load_state_dict({"weight": vg.zeros(3, 2), "extra": vg.zeros(1)})
    assert isinstance(info.value, StateDictError) and not isinstance(info.value, KeyError)
    assert str(info.value) == ('load_state_dict: Error(s) in loading state_dict for Linear:\n\t'
                               'Missing key(s) in state_dict: "bias". \n\t'
                               'Unexpected key(s) in state_dict: "extra". ')
    result = layer.load_state_dict({"weight": vg.zeros(3, 2), "extra": vg.zeros(1)}, strict=False)
    assert result == (["bias"], ["extra"]) and result.missing_keys == ["bias"]
    assert not layer.weight.detach().numpy().any()


def test_torch_words_load_state_dict_errors_the_same_way():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as info:
        torch.nn.Linear(2, 3).load_state_dict({"weight": torch.zeros(3, 2), "extra": torch.zeros(1)})
    theirs = str(info.value)
    ours = None
    try:
        nn.Linear(2, 3).load_state_dict({"weight": vg.zeros(3, 2), "extra": vg.zeros(1)})
    except StateDictError as error:
        ours = str(error)
    assert ours == "load_state_dict: " + theirs


# --- view keeps the views PyTorch allows -------------------------------------------------------
def test_view_shares_memory_where_pytorch_allows_it():
    x = vg.arange(6.0).reshape(2, 3)
    flat = x.view(6)
    flat.add_(1.0)
    np.testing.assert_array_equal(x.numpy(), [[1, 2, 3], [4, 5, 6]])
    strided = vg.arange(24.0).reshape(4, 6)[::2]                # rows 0 and 2: strides fit (2, 3, 2)
    assert strided.view(2, 3, 2).tolist() == strided.reshape(2, 3, 2).tolist()
    assert vg.ones(2, 3).transpose(0, 1).reshape(6).shape == (6,)   # reshape copies when it must
    assert vg.ones(2, 3).transpose(0, 1).contiguous().view(6).shape == (6,)


def test_view_compatibility_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [((2, 3), (1, 0), (6,)), ((2, 3, 4), (1, 0, 2), (3, 2, 4)), ((2, 3, 4), (1, 0, 2), (3, 8)),
             ((4, 6), None, (2, 2, 6))]
    for shape, order, target in cases:
        ours = vg.ones(*shape) if order is None else vg.ones(*shape).permute(*order)
        theirs = torch.ones(*shape) if order is None else torch.ones(*shape).permute(*order)
        try:
            theirs.view(*target)
            torch_ok = True
        except RuntimeError:
            torch_ok = False
        if torch_ok:
            assert ours.view(*target).shape == target
        else:
            with pytest.raises(ShapeError, match="Use .reshape"):
                ours.view(*target)


# --- checkpoints -------------------------------------------------------------------------------
def test_saving_into_a_missing_folder_names_the_target(tmp_path):
    target = tmp_path / "nowhere" / "ckpt.vzg"
    with pytest.raises(OSError) as info:
        vg.save({"a": 1}, target)
    assert isinstance(info.value, CheckpointPathError) and str(target) in str(info.value)
    assert ".vizgrad-save" not in str(info.value)


def test_loading_a_missing_file_or_a_directory_names_the_path(tmp_path):
    missing = tmp_path / "nothing.vzg"
    with pytest.raises(FileNotFoundError, match=re.escape(f"load: {str(missing)!r} does not exist")) as info:
        vg.load(missing)
    assert isinstance(info.value, CheckpointNotFoundError)
    with pytest.raises(CheckpointPathError, match=re.escape(f"load: {str(tmp_path)!r} is a directory")):
        vg.load(tmp_path)


def test_an_index_on_another_device_is_refused_by_gather_but_not_by_indexing():
    if "strict" not in base._by_device_type:
        pytest.skip("one device only")
    x = vg.arange(6.0).reshape(2, 3)
    index = vg.tensor([[0, 2]], device="strict")
    with pytest.raises(DeviceError, match=r"gather: index is on strict but input is on cpu"):
        x.gather(1, index)
    assert x[vg.tensor([1], device="strict")].tolist() == [[3.0, 4.0, 5.0]]


def test_saving_onto_a_directory_names_the_target(tmp_path):
    expected = f"save: cannot write {str(tmp_path)!r}: it is a directory"
    with pytest.raises(CheckpointPathError, match=re.escape(expected)):
        vg.save({"a": 1}, tmp_path)


def test_a_self_referential_object_round_trips_as_in_pytorch(tmp_path):
    loop = [1]
    loop.append(loop)
    target = tmp_path / "loop.vzg"
    vg.save({"loop": loop}, target)
    loaded = vg.load(target)["loop"]
    assert loaded[0] == 1 and loaded[1] is loaded             # the cycle comes back, as torch.load gives it
    shared = vg.ones(2)
    vg.save({"a": [shared], "b": [shared]}, target)          # shared, not cyclic: fine
    assert os.listdir(tmp_path) == ["loop.vzg"]


def test_saving_an_unpicklable_object_names_the_target_and_leaves_nothing(tmp_path):
    target = tmp_path / "bad.vzg"
    with pytest.raises(CheckpointError, match="cannot store a generator at model") as info:
        vg.save({"model": (x for x in [1])}, target)
    assert str(target) in str(info.value) and not os.listdir(tmp_path)


def test_an_arbitrary_object_is_saved_but_loaded_only_when_the_user_opts_in(tmp_path):
    target = tmp_path / "object.vzg"
    vg.save({"model": object()}, target)
    with pytest.raises(vg.serialization.WeightsOnlyError, match="builtins.object") as info:
        vg.load(target)
    assert "weights_only=False" in str(info.value)
    assert type(vg.load(target, weights_only=False)["model"]) is object


_KILLED_SAVE = """
import sys
import numpy as np
import vizgrad as vg

def hang(*args, **kwargs):
    print("writing", flush=True)
    sys.stdin.readline()           # blocks until the test kills this process

np.lib.format.write_array = hang
vg.save({"w": vg.ones(1000)}, sys.argv[1])
"""


def test_a_killed_save_leaves_a_temporary_that_the_next_save_of_the_target_removes(tmp_path):
    target = tmp_path / "ckpt.vzg"
    vg.save({"epoch": 1}, target)
    other = tmp_path / ".vizgrad-save-other.vzg.1.abcdefgh"     # another target's temporary
    other.write_bytes(b"x")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen([sys.executable, "-c", _KILLED_SAVE, str(target)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env, text=True)
    assert process.stdout.readline().strip() == "writing"
    process.kill()
    process.wait()
    process.stdin.close()
    process.stdout.close()
    stale = [name for name in os.listdir(tmp_path) if name.startswith(".vizgrad-save-ckpt.vzg.")]
    assert len(stale) == 1 and stale[0].startswith(f".vizgrad-save-ckpt.vzg.{process.pid}.")
    assert vg.load(target) == {"epoch": 1}                       # the checkpoint survived the kill
    vg.save({"epoch": 2}, target)
    assert sorted(os.listdir(tmp_path)) == [other.name, "ckpt.vzg"]
    assert vg.load(target) == {"epoch": 2}
