"""The argument checks vizgrad's widgets share.

Each takes the name of the constructor or method the user called (``op``) and the
argument's name, raises a :mod:`vizgrad.errors` exception in those words naming the
value, and returns the value normalised, so a widget checks an argument in one line
before it opens anything (see docs/errors.md, "what vizgrad checks"). A widget made
inside another public one (``OptimizerRace`` in ``OptimizerView``) marks both with
:func:`vizgrad.errors.public`, so a message reads the name the user called.
"""

import math

from ..errors import ArgumentError, ArgumentTypeError, _describe, as_int, as_number, check_range


def describe(value):
    """A value as messages name it: its type, and the value when short ("an int (3)", "a str ('x')")."""
    text = _describe(value)
    return "an" + text[1:] if text.startswith("a ") and text[2:3] in ("a", "e", "i", "o", "u") else text


def check_module(op, name, value):
    """``value`` if it is a :class:`vizgrad.nn.Module`, else an :class:`ArgumentTypeError`."""
    from ..nn import Module
    if not isinstance(value, Module):
        raise ArgumentTypeError(f"{op}: {name} must be a vizgrad.nn.Module, got {describe(value)}")
    return value


def parameter_table(op, model):
    """(names, parameters, sizes) of ``model``'s parameters, in module order; a model that is
    not a Module, or has no parameters, is refused in ``op``'s words."""
    from ..nn import Module
    if not isinstance(model, Module):
        raise ArgumentTypeError(f"{op}: model must be a vizgrad.nn.Module with parameters, got {describe(model)}")
    named = list(model.named_parameters())
    if not named:
        raise ArgumentError(f"{op}: model must be a vizgrad.nn.Module with parameters, got a {type(model).__name__}, "
                            "which has no parameters to follow")
    names = [name for name, _ in named]
    params = [param for _, param in named]
    sizes = [param.numel() for param in params]
    return names, params, sizes


def check_optimizer(op, name, optimizer, params):
    """``optimizer`` (None, or a :class:`vizgrad.optim.Optimizer` that updates some of ``params``)."""
    if optimizer is None:
        return None
    from ..optim import Optimizer
    if not isinstance(optimizer, Optimizer):
        raise ArgumentTypeError(f"{op}: {name} must be a vizgrad.optim.Optimizer or None, got {describe(optimizer)}")
    ours = {id(param) for param in params}
    if not any(id(param) in ours for group in optimizer.param_groups for param in group["params"]):
        raise ArgumentError(f"{op}: {name} ({type(optimizer).__name__}) updates none of the model's parameters; "
                            "give the optimizer that trains this model")
    return optimizer


def check_rate(op, name, value, allow_none=False):
    """A number of times per second, > 0 (``inf``: no limit), or None when ``allow_none``."""
    if value is None and allow_none:
        return None
    return check_range(op, name, value, 0, low_open=True)


def check_real(op, name, value, low=None, high=None, *, low_open=False, high_open=False):
    """A finite real number within the bounds (as :func:`vizgrad.errors.check_range`)."""
    value = check_range(op, name, value, low, high, low_open=low_open, high_open=high_open)
    if not math.isfinite(value):
        raise ArgumentError(f"{op}: {name} must be a finite number, got {value!r}")
    return value


def check_count(op, name, value, minimum=1, maximum=None, allow_none=False):
    """An int in [minimum, maximum] (a count, a step, a size), or None when ``allow_none``."""
    if value is None and allow_none:
        return None
    value = as_int(op, name, value)
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"in [{minimum}, {maximum}]" if maximum is not None else f">= {minimum}"
        raise ArgumentError(f"{op}: {name} must be an int {bounds}, got {value}")
    return value


def check_choice(op, name, value, choices):
    """``value`` if it is one of ``choices`` (strings), else an error listing them."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{op}: {name} must be one of {list(choices)}, got {describe(value)}")
    if value not in choices:
        raise ArgumentError(f"{op}: unknown {name} {value!r}; the {name} must be one of {list(choices)}")
    return value


def check_speed(op, value, speeds):
    """A ``speed`` the front end's speed control offers (one of ``speeds``): another would show
    as a blank control and be replaced by its default."""
    value = as_int(op, "speed", value)
    if value not in speeds:
        raise ArgumentError(f"{op}: speed must be one of {list(speeds)}, got {value}")
    return value


def check_bool(op, name, value):
    """``value`` if it is a bool (``True``, ``False``; NumPy's too)."""
    if type(value).__name__ not in ("bool", "bool_"):
        raise ArgumentTypeError(f"{op}: {name} must be a bool, got {describe(value)}")
    return bool(value)


def check_callable(op, name, value):
    """``value`` if it is None or callable."""
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{op}: {name} must be callable or None, got {describe(value)}")
    return value


def check_point(op, name, value):
    """A point ``(x, y)`` of two finite real numbers, as a tuple of floats."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ArgumentTypeError(f"{op}: {name} must be a point (x, y) of two numbers, got {describe(value)}")
    point = tuple(float(as_number(op, name, v)) for v in value)
    if not all(math.isfinite(v) for v in point):
        raise ArgumentError(f"{op}: {name} must be a finite point (x, y), got {tuple(value)!r}")
    return point


def check_widget_options(op, cls, options):
    """``options`` (keyword arguments a widget passes on to its traits) if each names one of
    ``cls``'s traits; a misspelt option is a TypeError, as Python's own for a keyword."""
    traits = cls.class_trait_names()
    unknown = sorted(key for key in options if key not in traits or key.startswith("_"))
    if unknown:
        raise ArgumentTypeError(f"{op}: got an unexpected keyword argument {unknown[0]!r} (not one of its "
                                f"arguments nor a trait of {cls.__name__})")
    return options
