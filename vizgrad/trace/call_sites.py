"""Where a recorded op comes from: the user's line (file, line, code) and the op functions on
the stack that applied it (a composite such as ``cross_entropy`` applies several ops from one
call). The walk classifies each frame's file once (:func:`_role`); ``_call_key`` says whether
an op is applied from the same place as in the previous iteration (see :mod:`.replay`).
"""

import os

from ..tensor import Tensor


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXAMPLE_FILES = frozenset({"cli.py"})     # vizgrad's own programs (the demo): their lines are the user's code
_FUNCTIONAL = os.path.join("nn", "functional.py")
_METHOD_FILES = frozenset({"_tensor_methods.py", "tensor.py"})


_ROLES = {}     # filename -> _role(filename), for the walk every recorded op takes


def _role(filename):
    """What a frame's file is to the recorder: ``"user"`` (the user's code, and vizgrad's
    demo), ``"op"`` (vizgrad's op functions), ``"method"`` (the Tensor methods and operators
    that call them) or ``"library"`` (the rest of vizgrad, and Python's frozen modules such
    as runpy)."""
    role = _ROLES.get(filename)
    if role is None:
        role = _ROLES[filename] = _classify(filename)
    return role


def _classify(filename):
    if filename.startswith("<frozen"):
        return "library"
    path = os.path.abspath(filename)
    if not path.startswith(_PACKAGE_DIR + os.sep):
        return "user"
    relative = path[len(_PACKAGE_DIR) + 1:]
    if relative in _EXAMPLE_FILES:
        return "user"
    if relative.startswith("ops" + os.sep) or relative == _FUNCTIONAL:
        return "op"
    return "method" if relative in _METHOD_FILES else "library"


def _call_site(frame, source):
    """Where the op being recorded comes from, walking out from ``frame``: the user's line
    (``{"file", "line", "code"}``, when ``source``), and the op functions that applied it:
    ``(outermost frame, positions, nested)``, or None. A composite function such as
    ``cross_entropy`` applies several ops from one call; ``nested`` says the op was applied
    by an op function that another one called (a composite's own work)."""
    outer, positions, functions, closed = None, [], 0, False
    roles = _ROLES
    while frame is not None:
        filename = frame.f_code.co_filename
        role = roles.get(filename) or _role(filename)
        if role == "user":
            break
        if role in ("op", "method") and not closed:
            outer = frame
            positions.append(frame.f_lasti)
            functions += role == "op"
        elif outer is not None:
            if not source:
                break        # the op functions are known, and no line is asked for
            closed = True
        frame = frame.f_back
    line = None
    if source and frame is not None:
        import linecache
        filename = frame.f_code.co_filename
        line = {"file": filename, "line": frame.f_lineno, "code": linecache.getline(filename, frame.f_lineno).strip()}
    return line, (None if outer is None else (outer, tuple(reversed(positions)), functions > 1))


def _argument_kind(value):
    """0: a tensor, 1: an int, 2: a float (each drawn as a node), 3: anything else."""
    if isinstance(value, Tensor):
        return 0
    kind = type(value)
    return 1 if kind is int else 2 if kind is float else 3


def _call_key(call):
    """What tells one composite call site from another: the op function's code, the
    positions inside it and where it was called from."""
    if call is None:
        return None
    outer, positions, _ = call
    caller = outer.f_back
    return (outer.f_code, positions, caller.f_code if caller is not None else None,
            caller.f_lasti if caller is not None else -1)


def _call_key_at(frame):
    """``_call_key(_call_site(frame, False)[1])`` in one walk, without the intermediate
    tuples: what a replayed op compares with its recorded call site."""
    roles = _ROLES
    outer, positions = None, []
    while frame is not None:
        filename = frame.f_code.co_filename
        role = roles.get(filename) or _role(filename)
        if role == "op" or role == "method":
            outer = frame
            positions.append(frame.f_lasti)
        elif role == "user" or outer is not None:
            break
        frame = frame.f_back
    if outer is None:
        return None
    positions.reverse()
    caller = outer.f_back
    if caller is None:
        return outer.f_code, tuple(positions), None, -1
    return outer.f_code, tuple(positions), caller.f_code, caller.f_lasti
