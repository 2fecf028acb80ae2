"""Random sampling beyond the factories, as ``torch.random`` and PyTorch's samplers: the
state of the default generator (``seed``, ``initial_seed``, ``get_rng_state``,
``set_rng_state``), ``bernoulli``, ``poisson``, ``binomial``, the in-place samplers of
Tensor (``uniform_``, ``normal_``, ``random_``, ``exponential_``, ``bernoulli_``,
``geometric_``, ``cauchy_``, ``log_normal_``) and the threads of the linear algebra library.

Every draw comes from a :class:`~vizgrad.creation.Generator` (the default one unless
``generator=`` names another) on the host and is moved to the tensor's device, so
:func:`vizgrad.manual_seed` makes them reproducible on every device. The in-place samplers
follow vizgrad's in-place rules (a leaf that requires grad refuses while recording; the
version counter moves); their gradient, as PyTorch's, is zero.
"""


import numpy as np

from . import dtypes
from .creation import Generator, _finish, _into, default_generator, manual_seed
from .errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError, as_int, as_number, check_size, \
    format_shape, not_a_tensor, public_functions_of
from .tensor import Tensor

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]

_STATE_WORDS = 10      # the generator's state as int64 words: 128-bit state and increment in 32-bit pieces, 2 flags


def _rng(op, generator):
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise ArgumentTypeError(f"{op}: generator must be a vizgrad.Generator, got {type(generator).__name__}")
    return generator._rng


def seed():
    """Seed the default generator from fresh entropy and return that seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator started from (the last :func:`manual_seed`)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as an int64 tensor, for :func:`set_rng_state`: drawing
    after restoring it repeats the numbers drawn after it was taken. (PyTorch's is a uint8
    tensor of its own generator's bytes; vizgrad has no uint8.)

    Example::

        state = vizgrad.get_rng_state()
        a = vizgrad.rand(3)
        vizgrad.set_rng_state(state)
        vizgrad.rand(3)           # a again
    """
    state = default_generator.get_state()
    words = []
    for value in (state["state"]["state"], state["state"]["inc"]):
        words += [(value >> shift) & 0xFFFFFFFF for shift in (96, 64, 32, 0)]
    words += [int(state["has_uint32"]), int(state["uinteger"])]
    return Tensor._make(np.array(words, dtype=np.int64))


def set_rng_state(new_state):
    """Restore the default generator to a state :func:`get_rng_state` returned."""
    if not isinstance(new_state, Tensor):
        raise not_a_tensor("set_rng_state", "new_state", new_state)
    if new_state.dtype is not dtypes.int64 or tuple(new_state.shape) != (_STATE_WORDS,):
        raise ArgumentError(f"set_rng_state: new_state must be an int64 tensor of shape ({_STATE_WORDS},) as "
                            f"get_rng_state returns, got {new_state.dtype.name} of shape "
                            f"{format_shape(new_state.shape)}")
    words = [int(w) for w in new_state.tolist()]
    if any(w < 0 or w > 0xFFFFFFFF for w in words[:8]) or words[8] not in (0, 1):
        raise ArgumentError("set_rng_state: new_state does not hold a generator state from get_rng_state")
    joined = [sum(w << shift for w, shift in zip(words[i:i + 4], (96, 64, 32, 0))) for i in (0, 4)]
    if joined[1] % 2 == 0:
        raise ArgumentError("set_rng_state: new_state does not hold a generator state from get_rng_state")
    default_generator.set_state({"bit_generator": "PCG64", "state": {"state": joined[0], "inc": joined[1]},
                                 "has_uint32": words[8], "uinteger": words[9]})


# --- threads ------------------------------------------------------------------------------

def get_num_threads():
    """The number of threads the linear algebra libraries (BLAS, OpenMP) use, read through
    threadpoolctl: the largest among those loaded (1 when none is loaded)."""
    import threadpoolctl
    found = [info["num_threads"] for info in threadpoolctl.threadpool_info()]
    return max(found, default=1)


def set_num_threads(int):      # noqa: A002  (PyTorch's parameter name)
    """Limit the linear algebra libraries (BLAS, OpenMP) to ``int`` threads, through threadpoolctl."""
    import threadpoolctl
    count = check_size("set_num_threads", "int", int, 1)
    threadpoolctl.threadpool_limits(limits=count)


# --- bernoulli, poisson, binomial ---------------------------------------------------------

def _host(tensor):
    return np.asarray(tensor._backend().to_numpy(tensor.detach()._array), dtype=np.float64)


def _like(template, host, dtype=None):
    """A constant tensor holding ``host`` on ``template``'s device, in ``dtype`` (its own by default)."""
    dtype = dtype or template.dtype
    device = template.device
    return _finish(device.backend.asarray(np.asarray(host).astype(dtype.numpy), None, device.index or 0), False)


def _probabilities(op, name, p):
    if p.numel() and not bool(((p.detach() >= 0) & (p.detach() <= 1)).all()):
        raise ArgumentError(f"{op}: expected every value of {name} to be in [0, 1] (probabilities)")


def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (elementwise), else 0, in ``input``'s dtype; with ``p`` a
    number, every element is 1 with probability ``p`` (``input`` gives the shape and dtype).

    Example::

        vizgrad.bernoulli(vizgrad.full((2, 3), 0.5))       # zeros and ones
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("bernoulli", "input", input)
    rng = _rng("bernoulli", generator)
    if p is None:
        if not input.is_floating_point():
            raise DTypeError(f"bernoulli: input must be a floating point tensor of probabilities, got "
                             f"{input.dtype.name}")
        _probabilities("bernoulli", "input", input)
        chance = _host(input)
    else:
        chance = np.full(tuple(input.shape), _probability("bernoulli", p))
    return _into(out, _like(input, rng.random(chance.shape) < chance))


def _probability(op, p, low_open=False, high_open=False):
    p = as_number(op, "p", p)
    if not ((0 < p if low_open else 0 <= p) and (p < 1 if high_open else p <= 1)):
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ArgumentError(f"{op} expects p to be in {interval}, but got p={p}")
    return p


def poisson(input, generator=None):
    """A Poisson count for each rate in ``input`` (floating, non-negative), in its dtype.

    Example::

        vizgrad.poisson(vizgrad.full((3,), 4.0))      # counts with mean 4
    """
    if not isinstance(input, Tensor):
        raise not_a_tensor("poisson", "input", input)
    if not input.is_floating_point():
        raise DTypeError(f"poisson: input must be a floating point tensor of rates, got {input.dtype.name}")
    rates = _host(input)
    if not np.all(rates >= 0):
        raise ArgumentError("poisson: invalid Poisson rate, expected every rate to be non-negative")
    return _like(input, _rng("poisson", generator).poisson(rates))


def binomial(count, prob, generator=None):
    """A binomial draw for each pair of ``count`` (trials) and ``prob`` (success chance),
    tensors of one floating dtype and shape: the number of successes, in that dtype.

    Example::

        vizgrad.binomial(vizgrad.full((3,), 10.0), vizgrad.full((3,), 0.5))
    """
    for name, value in (("count", count), ("prob", prob)):
        if not isinstance(value, Tensor):
            raise not_a_tensor("binomial", name, value)
        if not value.is_floating_point():
            raise DTypeError(f"binomial: {name} must be a floating point tensor, got {value.dtype.name}")
    if count.dtype is not prob.dtype:
        raise DTypeError(f"binomial: count ({count.dtype.name}) and prob ({prob.dtype.name}) must have one dtype")
    if tuple(count.shape) != tuple(prob.shape):
        raise ShapeError(f"binomial: count {format_shape(count.shape)} and prob {format_shape(prob.shape)} must "
                         "have one shape")
    trials, chance = _host(count), _host(prob)
    if not np.all(trials >= 0) or not np.all(np.floor(trials) == trials):
        raise ArgumentError("binomial: count must hold non-negative whole numbers")
    _probabilities("binomial", "prob", prob)
    return _like(count, _rng("binomial", generator).binomial(trials.astype(np.int64), chance))


# --- in-place samplers --------------------------------------------------------------------

def _fill_inplace(target, op, draw, floating_only=True):
    """Write ``draw(shape)`` (host numbers) into ``target`` in place, by vizgrad's in-place rules."""
    from ._tensor_methods import _nowhere
    from .ops.inplace import apply_inplace
    from .ops.binary import where
    if floating_only and not target.is_floating_point():
        raise DTypeError(f"{op}: expects a floating point tensor, got {target.dtype.name}")
    drawn = _like(target, draw(tuple(target.shape)))
    return apply_inplace(target, lambda t: where(_nowhere(t), t, drawn), op, cast=True)


def uniform_(self, a=0.0, b=1.0, *, generator=None, **kwargs):
    """Fill with uniform random values in [``from``, ``to``) (PyTorch's names, also as keywords)."""
    low, high = as_number("uniform_", "from", kwargs.pop("from", a)), as_number("uniform_", "to", kwargs.pop("to", b))
    _no_more("uniform_", kwargs)
    if low > high:
        raise ArgumentError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    rng = _rng("uniform_", generator)
    return _fill_inplace(self, "uniform_", lambda shape: low + (high - low) * rng.random(shape))


def _no_more(op, kwargs):
    if kwargs:
        raise ArgumentTypeError(f"{op}: got an unexpected keyword argument {next(iter(kwargs))!r}")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal random values of ``mean`` and ``std``."""
    mean, std = as_number("normal_", "mean", mean), as_number("normal_", "std", std)
    if std < 0:
        raise ArgumentError(f"normal_ expects std >= 0.0, but found std {std}")
    rng = _rng("normal_", generator)
    return _fill_inplace(self, "normal_", lambda shape: mean + std * rng.standard_normal(shape))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(``mean``, ``std``²)) random values."""
    mean, std = as_number("log_normal_", "mean", mean), as_number("log_normal_", "std", std)
    if not std > 0:
        raise ArgumentError(f"log_normal_ expects std > 0.0, but found std={std}")
    rng = _rng("log_normal_", generator)
    return _fill_inplace(self, "log_normal_", lambda shape: np.exp(mean + std * rng.standard_normal(shape)))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential random values of rate ``lambd`` (mean 1/lambd)."""
    lambd = as_number("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise ArgumentError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    rng = _rng("exponential_", generator)
    return _fill_inplace(self, "exponential_", lambda shape: rng.exponential(1 / lambd, shape))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy random values: ``median + sigma · tan(π (U - ½))``."""
    median, sigma = as_number("cauchy_", "median", median), as_number("cauchy_", "sigma", sigma)
    if not sigma > 0:
        raise ArgumentError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    rng = _rng("cauchy_", generator)
    return _fill_inplace(self, "cauchy_", lambda shape: median + sigma * np.tan(np.pi * (rng.random(shape) - 0.5)))


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    p = _probability("geometric_", p, low_open=True, high_open=True)
    rng = _rng("geometric_", generator)
    return _fill_inplace(self, "geometric_", lambda shape: rng.geometric(p, shape), floating_only=False)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability ``p`` (a number, or a tensor broadcast to this shape), else 0."""
    rng = _rng("bernoulli_", generator)
    if isinstance(p, Tensor):
        _probabilities("bernoulli_", "p", p)
        if p.ndim > self.ndim:
            raise ShapeError(f"bernoulli_: p of shape {format_shape(p.shape)} does not broadcast to the "
                             f"tensor's shape {format_shape(self.shape)}")
        chance = np.broadcast_to(_host(p), tuple(self.shape))
    else:
        chance = _probability("bernoulli_", p)
    return _fill_inplace(self, "bernoulli_", lambda shape: rng.random(shape) < chance, floating_only=False)


def _integer_range(dtype):
    """The integers ``random_`` can write into ``dtype``: [lowest, highest], inclusive (every
    integer a float dtype holds exactly: ±2^digits)."""
    if dtype is dtypes.bool_:
        return 0, 1
    if dtype.is_floating_point:
        digits = int(np.finfo(dtype.numpy).nmant) + 1       # 11, 8 (bfloat16), 24, 53
        return -2 ** digits, 2 ** digits
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def random_(self, *args, generator=None, **kwargs):
    """Fill with random integers: ``random_(to)`` from [0, to), ``random_(from, to)`` from
    [from, to), ``random_(from, None)`` from ``from`` up to the largest value of this dtype and
    ``random_()`` from 0 up to it (2^mantissa digits for floats: 2^24 for float32, as PyTorch)."""
    low, high = 0, None
    if len(args) > 2:
        raise ArgumentTypeError(f"random_: takes at most 2 positional arguments (from, to), got {len(args)}")
    if len(args) == 1 and "to" not in kwargs:
        high = args[0]
    elif args:
        low, high = (args + (kwargs.pop("to", None),))[:2]
    low = kwargs.pop("from", low)
    high = kwargs.pop("to", high)
    _no_more("random_", kwargs)
    low = as_int("random_", "from", low)
    lowest, highest = _integer_range(self.dtype)
    if high is not None:
        high = as_int("random_", "to", high)
        if low >= high:
            raise ArgumentError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if low < lowest or low > highest:
        raise ArgumentError(f"random_: from={low} is out of bounds for {self.dtype.name}")
    if high is not None and (high - 1 > highest or high - 1 < lowest):
        raise ArgumentError(f"random_: to - 1 = {high - 1} is out of bounds for {self.dtype.name}")
    last = highest if high is None else high - 1
    rng = _rng("random_", generator)
    return _fill_inplace(self, "random_", lambda shape: rng.integers(low, last, size=shape, endpoint=True,
                                                                      dtype=np.int64), floating_only=False)


def _bernoulli_method(self, p=None, *, generator=None):
    """:func:`bernoulli` of this tensor: ``x.bernoulli()`` draws with probabilities ``x``."""
    return bernoulli(self, p, generator=generator)


Tensor.uniform_, Tensor.normal_, Tensor.log_normal_ = uniform_, normal_, log_normal_
Tensor.exponential_, Tensor.cauchy_, Tensor.geometric_ = exponential_, cauchy_, geometric_
Tensor.bernoulli_, Tensor.random_, Tensor.bernoulli = bernoulli_, random_, _bernoulli_method

public_functions_of(globals())   # errors beneath these functions name them
