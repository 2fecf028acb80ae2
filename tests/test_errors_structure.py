"""The rule kept by structure: no public vizgrad module raises a bare builtin exception for a
user's mistake; each raise is a ``vizgrad.errors`` class (which also subclasses the builtin).
An op's forward may signal a backend failure with a builtin when the line says
"backend seam: Op.apply rewords it" (``Op.apply`` turns it into the vizgrad error)."""

import ast
import pathlib

import pytest

import vizgrad

ROOT = pathlib.Path(vizgrad.__file__).parent
# the engine and everything a user calls; the visual layers and lessons have their own reports
PUBLIC = sorted([*ROOT.glob("*.py"), *ROOT.glob("ops/*.py"), *ROOT.glob("nn/*.py"), *ROOT.glob("optim/*.py"),
                 *ROOT.glob("data/*.py"), *ROOT.glob("autograd/*.py"), *ROOT.glob("distributions/*.py"),
                 *ROOT.glob("utils/*.py")])
BARE = {"ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "OverflowError",
        "ZeroDivisionError", "OSError", "FileNotFoundError", "IsADirectoryError", "Exception"}
SKIP = {"__main__.py", "cli.py", "events.py", "diagnostics.py", "printing.py"}   # not the tensor API


def _bare_raises(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
            line = path.read_text().splitlines()[node.lineno - 1]
            if node.exc.func.id in BARE and "backend seam: Op.apply rewords it" not in line:
                yield f"{path.relative_to(ROOT.parent)}:{node.lineno}: raise {node.exc.func.id}(...)"


@pytest.mark.parametrize("path", [p for p in PUBLIC if p.name not in SKIP], ids=lambda p: str(p.relative_to(ROOT)))
def test_public_modules_raise_only_vizgrad_errors(path):
    assert list(_bare_raises(path)) == []
