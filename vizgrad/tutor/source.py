"""Reading the learner's own code: how each variable was last assigned, before the line
that asked. Whether a tensor was made under ``no_grad`` or by ``.detach()`` leaves no trace
on the tensor itself; the code that made it says so. In a notebook the code is the cells
run so far (IPython's ``In``); elsewhere the function (or module) the caller is in."""

import ast
import linecache
from dataclasses import dataclass, field

_NO_GRAD = ("no_grad", "inference_mode")


@dataclass
class Assignment:
    """The last ``name = value`` seen: ``code`` (the statement), ``cut`` (``"detach"``,
    ``"data"`` or ``"no_grad"`` when the value was cut from the graph, else None), ``detached``
    (the expression ``.detach()`` was called on) and ``uses`` (the names the value reads)."""

    name: str
    code: str
    cut: str = None
    detached: str = None
    uses: set = field(default_factory=set)


def assignments(frame):
    """``{name: Assignment}``: each variable's last assignment in the code that ran up to
    ``frame``'s current line (empty when the code cannot be read)."""
    found = {}
    for tree, last_line in _trees(frame):
        _walk(tree.body, False, last_line, found)
    return found


def _trees(frame):
    """``(module AST, last line to read or None)`` for each piece of code, oldest first."""
    cells = _notebook_cells(frame)
    if cells is not None:
        return [(tree, None) for tree in map(_parse, cells) if tree is not None]
    text = "".join(linecache.getlines(frame.f_code.co_filename))
    tree = _parse(text)
    if tree is None:
        return []
    scope = _scope_of(tree, frame.f_code.co_firstlineno if frame.f_code.co_name != "<module>" else None)
    return [(scope, frame.f_lineno)]


def _notebook_cells(frame):
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or frame.f_globals is not shell.user_ns:
        return None
    return [cell for cell in shell.user_ns.get("In", []) if isinstance(cell, str)]


def _parse(text):
    try:
        return ast.parse(text)
    except SyntaxError:        # a cell with IPython magics, or code that does not parse
        return None


def _scope_of(tree, first_line):
    """The function defined at ``first_line`` (its body is what ran), else the module."""
    if first_line is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if start == first_line or node.lineno == first_line:
                    return node
    return tree


def _walk(statements, no_grad, last_line, found):
    for statement in statements:
        if last_line is not None and statement.lineno > last_line:
            return
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            inner = no_grad or any(_turns_grad_off(item.context_expr) for item in statement.items)
            _walk(statement.body, inner, last_line, found)
            continue
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = _assignment(target.id, statement, no_grad)
        for block in ("body", "orelse", "finalbody"):        # if, for, while, try
            inner = getattr(statement, block, None)
            if isinstance(inner, list):
                _walk(inner, no_grad, last_line, found)
        for handler in getattr(statement, "handlers", ()):
            _walk(handler.body, no_grad, last_line, found)


def _turns_grad_off(expression):
    if not isinstance(expression, ast.Call):
        return False
    called = expression.func.attr if isinstance(expression.func, ast.Attribute) else getattr(expression.func, "id", "")
    if called in _NO_GRAD:
        return True
    return (called == "set_grad_enabled" and expression.args and isinstance(expression.args[0], ast.Constant)
            and expression.args[0].value is False)


def _assignment(name, statement, no_grad):
    value = statement.value
    uses = {node.id for node in ast.walk(value) if isinstance(node, ast.Name)}
    if isinstance(statement, ast.AugAssign):
        uses.add(name)
    found = Assignment(name, ast.unparse(statement), "no_grad" if no_grad else None, uses=uses)
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
            found.cut, found.detached = "detach", ast.unparse(node.func.value)
            break
        if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
            found.cut, found.detached = "data", ast.unparse(node.value)
            break
    return found


def depends_on(assigned, name, target, depth=6):
    """Whether the code that assigned ``name`` read ``target``, directly or through the
    variables it read (at most ``depth`` assignments back)."""
    seen, frontier = set(), {name}
    for _ in range(depth):
        reads = set()
        for current in frontier - seen:
            seen.add(current)
            assignment = assigned.get(current)
            if assignment is not None:
                reads |= assignment.uses
        if target in reads:
            return True
        frontier = reads - seen
        if not frontier:
            return False
    return False
