"""A fuzz suite over the public API, generated from the op registry and the nn/optim/data
constructors: wrong dims, argument types and ranges, shapes and devices. Every exception must
be a VizgradError naming the called function with no NumPy text in it, and nothing may return
silently where PyTorch (the oracle, when installed) raises on the same call."""

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vizgrad as vg
from vizgrad import distributions, nn, optim
from vizgrad.backends import base
from vizgrad.data import DataLoader, TensorDataset
from vizgrad.errors import VizgradError
from vizgrad.ops.registry import OPS

try:
    import torch
except ImportError:   # the oracle is optional
    torch = None

LEAKS = ("ufunc", "numpy", "operands could not be broadcast", "ndarray", "did not contain a loop")
FUZZ = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
DEVICES = ["cpu"] + (["strict"] if "strict" in base._by_device_type else [])


def _first_sample(name):
    info = OPS[name]
    return next(iter(info.samples(np.random.default_rng(0))))


def _to_vizgrad(value, device="cpu"):
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return type(value)(vg.tensor(v, device=device) for v in value)
    return vg.tensor(value, device=device) if isinstance(value, np.ndarray) else value


def _to_torch(value):
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
        return type(value)(torch.tensor(v) for v in value)
    return torch.tensor(value) if isinstance(value, np.ndarray) else value


def _check_error(called, error):
    """The rule: a VizgradError (so also the builtin), naming the function, no backend text."""
    assert isinstance(error, VizgradError), f"{called} raised a bare {type(error).__name__}: {error}"
    message = str(error)
    assert called in message, f"{called}'s error does not name it: {message}"
    lowered = message.lower()
    assert not any(leak in lowered for leak in LEAKS), f"{called} leaks backend text: {message}"


def _call_both(name, function, args, kwargs, device="cpu"):
    """Call the op in vizgrad (checking any error) and, where the oracle has the same function,
    in torch: a call torch refuses must not return silently in vizgrad."""
    try:
        function(*[_to_vizgrad(a, device) for a in args], **{k: _to_vizgrad(v, device) for k, v in kwargs.items()})
        raised = False
    except Exception as error:    # noqa: BLE001 - the point is to see what escapes
        _check_error(name, error)
        raised = True
    twin = None if torch is None else _torch_twin(name)
    if twin is not None and not raised:
        try:
            twin(*[_to_torch(a) for a in args], **{k: _to_torch(v) for k, v in kwargs.items()})
        except (RuntimeError, ValueError, TypeError, IndexError, OverflowError) as error:
            text = str(error)
            if ("argument" in text and ("must be" in text or "invalid combination" in text.lower())) or \
                    "required positional" in text or "expected Tensor as element" in text:
                return      # the oracle refused the call's Python form, not the values
            if isinstance(error, OverflowError) or "Overflow when unpacking" in text:
                return      # torch cannot hold a Python int beyond int64 at all; vizgrad compares it exactly
            pytest.fail(f"{name}{tuple(args)} {kwargs} returned in vizgrad but torch raises: {text[:200]}")


def _torch_twin(name):
    """PyTorch's function of the same name: ``torch.nn.functional.<name>`` or ``torch.<name>``,
    and for a dotted name (``linalg.svd``) the function in that namespace (``torch.linalg.svd``)."""
    if "." in name:
        namespace, _, function = name.rpartition(".")
        return getattr(getattr(torch, namespace, None), function, None)
    return getattr(torch.nn.functional, name, None) or getattr(torch, name, None)


def _with_dims(name):
    return [n for n in sorted(OPS) if OPS[n].samples and "dim" in inspect.signature(OPS[n].function).parameters]


@pytest.mark.parametrize("name", _with_dims(None))
@FUZZ
@given(offset=st.integers(0, 5), negative=st.booleans())
def test_out_of_range_dims_in_every_op(name, offset, negative):
    sample = _first_sample(name)
    tensors = [a for a in sample.args if isinstance(a, np.ndarray)] + [
        v for a in sample.args if isinstance(a, (list, tuple)) for v in a if isinstance(v, np.ndarray)]
    ndim = max(max((t.ndim for t in tensors), default=1), 1)
    if name in ("stack", "unsqueeze"):
        ndim += 1           # they insert a dim: one more is valid
    dim = -(ndim + 1 + offset) if negative else ndim + offset
    kwargs = dict(sample.kwargs, dim=dim)
    args = sample.args
    parameters = list(inspect.signature(OPS[name].function).parameters)
    position = parameters.index("dim")
    if position < len(args):      # dim given positionally in the sample
        args = args[:position] + (dim,) + args[position + 1:]
        del kwargs["dim"]
    with pytest.raises(IndexError) as info:
        OPS[name].function(*[_to_vizgrad(a) for a in args], **kwargs)
    _check_error(name, info.value)


WRONG_VALUES = st.sampled_from(["x", 0.5, None, object(), [1, "a"], -1, 10 ** 30, float("nan")])


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].samples))
@FUZZ
@given(data=st.data())
def test_wrong_argument_values_and_types_in_every_op(name, data):
    """Replace one argument of a valid call by a wrong value (a string, a float for an int,
    None, an object, a huge or negative number, NaN), or a tensor by one of another shape."""
    sample = _first_sample(name)
    args, kwargs = list(sample.args), dict(sample.kwargs)
    slots = [("arg", i) for i in range(len(args))] + [("kw", k) for k in kwargs]
    if not slots:
        return
    kind, key = data.draw(st.sampled_from(slots))
    current = args[key] if kind == "arg" else kwargs[key]
    if isinstance(current, np.ndarray) and data.draw(st.booleans()):
        shape = data.draw(st.lists(st.integers(1, 5), min_size=0, max_size=4).map(tuple))
        replacement = np.ones(shape, dtype=current.dtype)
    else:
        replacement = data.draw(WRONG_VALUES)
    if kind == "arg":
        args[key] = replacement
    else:
        kwargs[key] = replacement
    _call_both(name, OPS[name].function, args, kwargs)


@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].samples))
@FUZZ
@given(data=st.data())
def test_tensors_of_another_dtype_in_every_op(name, data):
    """Replace one tensor of a valid call by the same values in another dtype."""
    sample = _first_sample(name)
    args, kwargs = list(sample.args), dict(sample.kwargs)
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if not positions:
        return
    position = data.draw(st.sampled_from(positions))
    args[position] = args[position].astype(data.draw(st.sampled_from(["int64", "bool", "float32", "int32"])))
    _call_both(name, OPS[name].function, args, kwargs)


SHAPE_ONLY = {"expand_as"}   # reads only the other tensor's shape: any device will do, as in PyTorch


@pytest.mark.skipif(len(DEVICES) < 2, reason="one device only")
@pytest.mark.parametrize("name", sorted(n for n in OPS if OPS[n].samples and OPS[n].strict))
def test_tensors_on_two_devices(name):
    """The CPU and the portable Array API backend are two devices: mixing them is a DeviceError."""
    sample = _first_sample(name)
    positions = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray)]
    if len(positions) < 2 or name in SHAPE_ONLY:
        return
    args = [_to_vizgrad(a, "cpu") for a in sample.args]
    args[positions[-1]] = vg.tensor(sample.args[positions[-1]], device="strict")
    with pytest.raises(RuntimeError) as info:
        OPS[name].function(*args, **sample.kwargs)
    _check_error(name, info.value)


# --- the nn, optim and data constructors -------------------------------------------------------
CONSTRUCTORS = {
    "Linear": (nn.Linear, (3, 4), ["in_features", "out_features"]),
    "Conv2d": (nn.Conv2d, (1, 2, 3), ["in_channels", "out_channels", "kernel_size", "stride", "padding", "groups"]),
    "Conv1d": (nn.Conv1d, (1, 2, 3), ["in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation"]),
    "BatchNorm1d": (nn.BatchNorm1d, (4,), ["num_features"]),
    "GroupNorm": (nn.GroupNorm, (2, 4), ["num_groups", "num_channels"]),
    "Embedding": (nn.Embedding, (5, 3), ["num_embeddings", "embedding_dim", "padding_idx"]),
    "Dropout": (nn.Dropout, (), ["p"]),
    "SGD": (lambda **kw: optim.SGD([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "momentum", "weight_decay"]),
    "Adam": (lambda **kw: optim.Adam([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "eps", "weight_decay",
                                                                                    "betas"]),
    "RMSprop": (lambda **kw: optim.RMSprop([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "alpha", "eps"]),
    "AdamW": (lambda **kw: optim.AdamW([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "betas", "eps"]),
    "Adagrad": (lambda **kw: optim.Adagrad([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "lr_decay"]),
    "Adadelta": (lambda **kw: optim.Adadelta([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "rho"]),
    "DataLoader": (lambda **kw: DataLoader(TensorDataset(vg.ones(4, 2)), **kw), (), ["batch_size"]),
    "LayerNorm": (nn.LayerNorm, (4,), ["normalized_shape"]),
    "RMSNorm": (nn.RMSNorm, (4,), ["normalized_shape"]),
    "Dropout2d": (nn.Dropout2d, (), ["p"]),
    "ConvTranspose2d": (nn.ConvTranspose2d, (1, 2, 3), ["in_channels", "out_channels", "kernel_size", "stride",
                                                       "padding", "output_padding"]),
    "RNN": (nn.RNN, (3, 4), ["input_size", "hidden_size", "num_layers", "dropout", "nonlinearity"]),
    "LSTM": (nn.LSTM, (3, 4), ["input_size", "hidden_size", "num_layers", "dropout", "proj_size"]),
    "GRU": (nn.GRU, (3, 4), ["input_size", "hidden_size", "num_layers", "dropout"]),
    "RNNCell": (nn.RNNCell, (3, 4), ["input_size", "hidden_size", "nonlinearity"]),
    "LSTMCell": (nn.LSTMCell, (3, 4), ["input_size", "hidden_size"]),
    "GRUCell": (nn.GRUCell, (3, 4), ["input_size", "hidden_size"]),
    "MultiheadAttention": (nn.MultiheadAttention, (4, 2), ["embed_dim", "num_heads", "dropout", "kdim"]),
    "TransformerEncoderLayer": (nn.TransformerEncoderLayer, (4, 2), ["d_model", "nhead", "dim_feedforward",
                                                                     "dropout", "activation"]),
    "LBFGS": (lambda **kw: optim.LBFGS([vg.ones(2, requires_grad=True)], **kw), (), ["lr", "max_iter",
                                                                                      "history_size"]),
    "Normal": (distributions.Normal, (0.0, 1.0), ["loc", "scale"]),
    "Bernoulli": (distributions.Bernoulli, (0.5,), ["probs"]),
    "Categorical": (distributions.Categorical, (vg.tensor([0.5, 0.5]),), ["probs"]),
    "Gamma": (distributions.Gamma, (1.0, 1.0), ["concentration", "rate"]),
    "Chi2": (distributions.Chi2, (3.0,), ["df"]),
    "Beta": (distributions.Beta, (1.0, 1.0), ["concentration1", "concentration0"]),
    "Dirichlet": (distributions.Dirichlet, (vg.tensor([1.0, 2.0]),), ["concentration"]),
    "Poisson": (distributions.Poisson, (1.0,), ["rate"]),
    "StudentT": (distributions.StudentT, (3.0, 0.0, 1.0), ["df", "loc", "scale"]),
    "Binomial": (distributions.Binomial, (5, 0.5), ["total_count", "probs"]),
    "Geometric": (distributions.Geometric, (0.5,), ["probs"]),
    **{name: (getattr(distributions, name), (0.0, 1.0), ["loc", "scale"]) for name in ("Gumbel", "Cauchy", "LogNormal")},
    "HalfNormal": (distributions.HalfNormal, (1.0,), ["scale"]),
}
TORCH_CONSTRUCTORS = {
    "Linear": lambda **kw: torch.nn.Linear(3, 4, **kw), "Conv2d": lambda **kw: torch.nn.Conv2d(1, 2, 3, **kw),
    "BatchNorm1d": lambda **kw: torch.nn.BatchNorm1d(4, **kw), "Dropout": lambda **kw: torch.nn.Dropout(**kw),
    "Dropout2d": lambda **kw: torch.nn.Dropout2d(**kw),
    "SGD": lambda **kw: torch.optim.SGD([torch.ones(2, requires_grad=True)], **kw),
    "Adam": lambda **kw: torch.optim.Adam([torch.ones(2, requires_grad=True)], **kw),
    **{name: lambda name=name, **kw: getattr(torch.nn, name)(**{"input_size": 3, "hidden_size": 4, **kw})
       for name in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell")},
    "MultiheadAttention": lambda **kw: torch.nn.MultiheadAttention(**{"embed_dim": 4, "num_heads": 2, **kw}),
    "TransformerEncoderLayer": lambda **kw: torch.nn.TransformerEncoderLayer(**{"d_model": 4, "nhead": 2, **kw}),
    "LBFGS": lambda **kw: torch.optim.LBFGS([torch.ones(2, requires_grad=True)], **kw),
    "Normal": lambda **kw: torch.distributions.Normal(**{"loc": 0.0, "scale": 1.0, **kw}),
    "Bernoulli": lambda **kw: torch.distributions.Bernoulli(**{"probs": 0.5, **kw}),
    **{name: lambda name=name, defaults=defaults, **kw: getattr(torch.distributions, name)(**{**defaults, **kw})
       for name, defaults in (("Gamma", {"concentration": 1.0, "rate": 1.0}), ("Chi2", {"df": 3.0}),
                              ("Beta", {"concentration1": 1.0, "concentration0": 1.0}), ("Poisson", {"rate": 1.0}),
                              ("StudentT", {"df": 3.0}), ("Binomial", {"total_count": 5, "probs": 0.5}),
                              ("Geometric", {"probs": 0.5}), ("Gumbel", {"loc": 0.0, "scale": 1.0}),
                              ("Cauchy", {"loc": 0.0, "scale": 1.0}), ("LogNormal", {"loc": 0.0, "scale": 1.0}),
                              ("HalfNormal", {"scale": 1.0}))},
} if torch is not None else {}
BAD_ARGUMENTS = st.sampled_from([-1, 0, -0.5, 1.5, "abc", None, 2.5, (1.5, 0.9), float("nan")])


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
@FUZZ
@given(data=st.data())
def test_constructors_refuse_bad_arguments_in_their_own_words(name, data):
    make, positional, names = CONSTRUCTORS[name]
    argument = data.draw(st.sampled_from(names))
    value = data.draw(BAD_ARGUMENTS)
    signature = inspect.signature(getattr(nn, name, None) or getattr(optim, name, None)
                                  or getattr(distributions, name, None) or DataLoader)
    parameters = [p for p in signature.parameters if p != "self"]
    kwargs = {parameters[i]: v for i, v in enumerate(positional)} if name not in ("SGD", "Adam", "RMSprop",
                                                                                    "DataLoader") else {}
    kwargs[argument] = value
    try:
        make(**kwargs)
    except Exception as error:    # noqa: BLE001
        _check_error(name, error)
        return
    if name in TORCH_CONSTRUCTORS and argument not in ("in_features", "out_features", "in_channels",
                                                       "out_channels", "kernel_size", "num_features"):
        try:
            TORCH_CONSTRUCTORS[name](**{argument: value})
        except (RuntimeError, ValueError, TypeError, IndexError) as error:
            pytest.fail(f"{name}({argument}={value!r}) returned in vizgrad but torch raises: {str(error)[:200]}")


# --- layers called on inputs of the wrong shape or dtype ------------------------------------------
# (layer, the names its errors may use: its class or the functional it calls, the torch twin)
LAYERS = {
    "Linear": (lambda: nn.Linear(3, 4), ("Linear", "linear"), lambda: torch.nn.Linear(3, 4)),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3), ("Conv2d", "conv2d"), lambda: torch.nn.Conv2d(2, 3, 3)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(2), ("BatchNorm2d", "batch_norm"), lambda: torch.nn.BatchNorm2d(2)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(2), ("BatchNorm1d", "batch_norm"), lambda: torch.nn.BatchNorm1d(2)),
    "LayerNorm": (lambda: nn.LayerNorm(3), ("LayerNorm", "layer_norm"), lambda: torch.nn.LayerNorm(3)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), ("GroupNorm", "group_norm"), lambda: torch.nn.GroupNorm(2, 4)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), ("MaxPool2d", "max_pool2d"), lambda: torch.nn.MaxPool2d(2)),
    "AvgPool2d": (lambda: nn.AvgPool2d(2), ("AvgPool2d", "avg_pool2d"), lambda: torch.nn.AvgPool2d(2)),
    "Embedding": (lambda: nn.Embedding(5, 2), ("Embedding", "embedding"), lambda: torch.nn.Embedding(5, 2)),
    "Softmax": (lambda: nn.Softmax(dim=1), ("Softmax", "softmax"), lambda: torch.nn.Softmax(dim=1)),
    "CrossEntropyLoss": (lambda: nn.CrossEntropyLoss(), ("CrossEntropyLoss", "cross_entropy"),
                         lambda: torch.nn.CrossEntropyLoss()),
    "MSELoss": (lambda: nn.MSELoss(), ("MSELoss", "mse_loss"), lambda: torch.nn.MSELoss()),
    **{name: (lambda name=name: getattr(nn, name)(), (name, function), lambda name=name: getattr(torch.nn, name)())
       for name, function in (("SoftMarginLoss", "soft_margin_loss"), ("HingeEmbeddingLoss", "hinge_embedding_loss"),
                              ("PoissonNLLLoss", "poisson_nll_loss"),
                              ("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss"),
                              ("Softmax2d", "softmax"), ("Dropout1d", "dropout1d"))},
    "RMSNorm": (lambda: nn.RMSNorm(3), ("RMSNorm", "rms_norm"), lambda: torch.nn.RMSNorm(3)),
    "ReflectionPad2d": (lambda: nn.ReflectionPad2d(1), ("ReflectionPad2d", "pad"), lambda: torch.nn.ReflectionPad2d(1)),
    "CircularPad1d": (lambda: nn.CircularPad1d(1), ("CircularPad1d", "pad"), lambda: torch.nn.CircularPad1d(1)),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), ("ChannelShuffle", "channel_shuffle"),
                       lambda: torch.nn.ChannelShuffle(2)),
    **{name: (lambda name=name: getattr(nn, name)(3, 4), (name, name.lower()),
              lambda name=name: getattr(torch.nn, name)(3, 4))
       for name in ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell")},
    "MultiheadAttention": (lambda: _self_attention(nn.MultiheadAttention(4, 2)),
                           ("MultiheadAttention", "multi_head_attention_forward"),
                           lambda: _self_attention(torch.nn.MultiheadAttention(4, 2))),
    "TransformerEncoderLayer": (lambda: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8),
                                ("TransformerEncoderLayer",),
                                lambda: torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)),
}


def _self_attention(attention):
    """``attention(x, x, x)``: a MultiheadAttention called on one input, as the other layers are."""
    return lambda x: attention(x, x, x)


SHAPES = st.lists(st.integers(1, 4), min_size=0, max_size=5).map(tuple)
DTYPES = st.sampled_from(["float32", "float64", "int64", "bool"])


def _layer_input(shape, dtype):
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 3
    return values.astype(dtype)


@pytest.mark.parametrize("name", sorted(LAYERS))
@FUZZ
@given(shapes=st.lists(SHAPES, min_size=1, max_size=1), dtype=DTYPES, target_shape=SHAPES)
def test_layers_on_wrong_inputs(name, shapes, dtype, target_shape):
    make, names, twin = LAYERS[name]
    loss = name.endswith("Loss")
    inputs = [_layer_input(shapes[0], dtype)]
    if loss:
        inputs.append(_layer_input(target_shape, "int64" if name == "CrossEntropyLoss" else dtype))
    try:
        make()(*[vg.tensor(a) for a in inputs])
        raised = False
    except Exception as error:    # noqa: BLE001 - the point is to see what escapes
        assert isinstance(error, VizgradError), f"{name} raised a bare {type(error).__name__}: {error}"
        assert any(called in str(error) for called in names), f"{name}'s error names neither of {names}: {error}"
        assert not any(leak in str(error).lower() for leak in LEAKS), f"{name} leaks backend text: {error}"
        raised = True
    if torch is not None and not raised:
        try:
            with torch.no_grad():
                twin()(*[torch.tensor(a) for a in inputs])
        except (RuntimeError, ValueError, TypeError, IndexError) as error:
            pytest.fail(f"{name} on {[a.shape for a in inputs]} {dtype} returned in vizgrad but torch raises: "
                        f"{str(error)[:200]}")
