"""Constraints: the sets a distribution's parameters and values live in, with PyTorch's names
(``torch.distributions.constraints``) and reprs.

A constraint's ``check(value)`` is a bool tensor, True where ``value`` lies in the set (one entry
per event: a constraint over vectors, ``event_dim`` 1, reduces the last dim). ``Distribution``
checks each parameter against ``arg_constraints`` and, when ``validate_args``, each value given
to ``log_prob`` against ``support``.

Example::

    from vizgrad.distributions import constraints
    constraints.positive.check(vizgrad.tensor([1.0, -1.0]))   # tensor([ True, False])
    Gamma(2.0, 3.0).support                                   # GreaterThanEq(lower_bound=0.0)
"""

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..errors import ArgumentError
from ..ops.joins import cat as concatenate, stack as stack_tensors
from ..tensor import Tensor

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "is_dependent", "less_than",
           "lower_cholesky", "multinomial", "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
           "positive_integer", "real", "real_vector", "simplex", "stack", "unit_interval"]


def _show(bound):
    """A bound as PyTorch prints it inside a constraint: a number for a number or a 0-d tensor."""
    if isinstance(bound, Tensor):
        return repr(bound.item()) if bound.ndim == 0 else str(bound.detach())
    return repr(bound)


def _is_integer(value):
    return value == value.floor() if value.is_floating_point() else value == value


class Constraint:
    """A set of values: ``check(value)`` says, per event, whether ``value`` is in it.

    ``is_discrete``: the set is countable (integer values); ``event_dim``: how many trailing dims
    make one event (0 elementwise, 1 for vectors such as the simplex, 2 for matrices).
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        bounds = ", ".join(f"{name}={_show(getattr(self, name))}" for name in ("lower_bound", "upper_bound")
                           if name in vars(self))
        return f"{type(self).__name__.lstrip('_')}({bounds})"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters: never checked."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ArgumentError("Cannot determine validity of dependent constraint")

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)


def is_dependent(constraint):
    """Whether ``constraint`` is a placeholder that depends on other parameters."""
    return isinstance(constraint, _Dependent)


class dependent_property(property):
    """A property whose value is a constraint computed from the instance (``Uniform.support`` is
    ``Interval(low, high)``); read on the class it is a dependent placeholder."""

    def __init__(self, function=None, *, is_discrete=False, event_dim=0):
        super().__init__(function)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, function):
        return dependent_property(function, is_discrete=self.is_discrete, event_dim=self.event_dim)

    def __get__(self, instance, owner=None):
        if instance is None:
            return _Dependent(is_discrete=self.is_discrete, event_dim=self.event_dim)
        return super().__get__(instance, owner)


class _IndependentConstraint(Constraint):
    """``base`` over events of ``reinterpreted_batch_ndims`` more trailing dims: every entry of
    an event must satisfy it."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1) if result.ndim else result
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete, event_dim = True, 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return _is_integer(value) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return _is_integer(value) & (value >= self.lower_bound)


class _Multinomial(Constraint):
    """Vectors of non-negative counts adding up to at most ``upper_bound``."""

    is_discrete, event_dim = True, 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)

    def __repr__(self):
        return "Multinomial()"


class _Real(Constraint):
    def check(self, value):
        return value == value          # False only at NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Non-negative vectors summing to one (to within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: rows of unit length (to within
    10 · n · ε of the dtype)."""

    event_dim = 2

    def check(self, value):
        tolerance = dtypes.finfo(value.dtype).eps * value.shape[-1] * 10
        with no_grad():
            unit_rows = (((value * value).sum(-1).sqrt() - 1).abs() <= tolerance).all(-1)
        return lower_cholesky.check(value) & unit_rows


class _Cat(Constraint):
    """The constraints of ``cseq`` on consecutive slices of ``lengths`` (default 1 each) along ``dim``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ArgumentError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return concatenate(checks, self.dim)


class _Stack(Constraint):
    """The constraints of ``cseq`` on the successive entries of ``dim``."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        return stack_tensors([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


class _PositiveDefinite(Constraint):
    """Symmetric matrices whose eigenvalues are all positive."""

    event_dim = 2

    def check(self, value):
        from .. import linalg
        with no_grad():
            symmetric = ((value - value.mT).abs() <= 1e-6 * value.abs().amax((-2, -1), keepdim=True)).all(-1).all(-1)
            return symmetric & (linalg.cholesky_ex(value).info == 0)


def over_event_dims(constraint, extra):
    """``constraint`` read over ``extra`` more trailing dims: ``independent(constraint, extra)``,
    or the constraint itself where there are none."""
    return _IndependentConstraint(constraint, extra) if extra > 0 else constraint


dependent = _Dependent()
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
multinomial = _Multinomial
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
independent = _IndependentConstraint
cat = _Cat
stack = _Stack
