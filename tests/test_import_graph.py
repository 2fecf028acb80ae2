"""No import circles in ``vizgrad/``: every module's imports, read with ``ast``, form a graph
without a cycle.

The graph, one node per module (``vizgrad.ops.shape``; a package is its ``__init__``):

- ``import a.b`` and ``from a import b`` give an edge to module ``a.b`` where ``a/b.py`` or
  ``a/b/__init__.py`` exists; ``from a import name`` for a name that is not a module gives an
  edge to ``a`` (its ``__init__``, where the name is found). Relative imports are resolved
  against the importing module's package. Only imports of ``vizgrad`` count.
- The parents Python runs first (``vizgrad/__init__`` and ``vizgrad/ops/__init__`` before
  ``vizgrad.ops.shape``) are not edges: a package's ``__init__`` importing its own submodules
  is the package's structure. A module that imports a package's ``__init__`` (a name
  defined or gathered there, ``import vizgrad as vg``) has an edge to it, so a submodule
  that takes a name from its own package's ``__init__`` closes a circle through it. (Python
  still runs the parents first: an import that would run one before its time waits in a
  function, marked lazy.)
- Imports that run when the module is imported count: at module level, in class bodies, under
  ``if`` and ``try``; not under ``if TYPE_CHECKING:``, which never runs. ``importlib`` calls
  are not read.
- An import inside a function or method counts too, unless it is marked lazy: a comment
  ``# lazy: <reason>`` on one of the import statement's lines, the reason at least three
  words saying why the import waits, usually the layer above that imports this module
  (``from ..creation import zeros  # lazy: creation and the ops import Tensor``). A marked
  import is left out of the graph.

The test fails naming each circle as a path ``a → b → … → a``, enough paths to cover every
module of each strongly connected component.
"""

import ast
import io
import re
import tokenize
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "vizgrad"
PACKAGE = ROOT.name
LAZY = re.compile(r"#\s*lazy:\s*(?P<reason>.*)$")


def module_name(path):
    """``vizgrad/ops/shape.py`` → ``vizgrad.ops.shape``; ``vizgrad/ops/__init__.py`` → ``vizgrad.ops``."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def lazy_lines(source):
    """The line numbers that carry a ``# lazy: <reason>`` comment with a reason of three words or more."""
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            match = LAZY.search(token.string)
            if match and len(match["reason"].split()) >= 3:
                lines.add(token.start[0])
    return lines


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(tree):
    """``(node, in_function)`` for every import statement that runs (not under ``if TYPE_CHECKING:``),
    in the order of the source."""
    stack, found = [(tree, False)], []
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, in_function))
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, in_function) for child in node.orelse)
            continue
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def targets(node, name, is_package, modules):
    """The modules of ``vizgrad`` the import statement ``node`` in module ``name`` imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if node.level:
        package = name if is_package else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module
    if base not in modules:
        return []
    found = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        found.append(submodule if submodule in modules else base)
    return found


def import_graph():
    """module → {imported module: the line of its first import}, marked lazy imports left out."""
    files = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
    edges = {}
    for name, path in files.items():
        source = path.read_text(encoding="utf-8")
        marked = lazy_lines(source)
        edges[name] = out = {}
        for node, in_function in imports(ast.parse(source, filename=str(path))):
            found = targets(node, name, path.name == "__init__.py", files)
            if not found:
                continue
            if in_function and marked & set(range(node.lineno, node.end_lineno + 1)):
                continue
            for target in found:
                if target != name:
                    out.setdefault(target, node.lineno)
    return edges


def strongly_connected(edges):
    """Tarjan's strongly connected components, iterative; each component sorted, in a stable order."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def shortest_cycle(edges, start, members):
    """The shortest path ``start → … → start`` inside ``members`` (breadth first)."""
    parent, queue = {start: None}, deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node]):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is on no cycle of its component")


def circles(edges):
    """For each circle (a component of more than one module): cycles that together pass every member."""
    found = []
    for component in strongly_connected(edges):
        if len(component) < 2:
            continue
        members, covered, paths = set(component), set(), []
        for start in component:
            if start not in covered:
                path = shortest_cycle(edges, start, members)
                covered.update(path)
                paths.append(path)
        found.append((component, paths))
    return found


def describe(edges, found):
    """Each circle's members, then its paths with the line of each import."""
    short = lambda name: name.removeprefix(PACKAGE + ".")
    lines = []
    for component, paths in found:
        lines.append(f"a circle of {len(component)} modules: {', '.join(map(short, component))}")
        for path in paths:
            steps = [f"{short(a)} (line {edges[a][b]})" for a, b in zip(path, path[1:])]
            lines.append("    " + " → ".join(steps + [short(path[-1])]))
    return "\n".join(lines)


def test_tarjan_finds_circles_and_names_them():
    edges = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {"e": 5}, "e": {"d": 6}, "f": {"a": 7}}
    found = circles(edges)
    assert [component for component, _ in found] == [["d", "e"], ["a", "b", "c"]]
    assert [paths for _, paths in found] == [[["d", "e", "d"]], [["a", "b", "c", "a"]]]
    assert describe(edges, found).splitlines()[1] == "    d (line 5) → e (line 6) → d"
    assert circles({"a": {"b": 1}, "b": {}}) == []
    deep = {str(i): {str(i + 1): 1} for i in range(5000)} | {"5000": {"0": 1}}
    assert len(circles(deep)[0][0]) == 5001


def test_imports_are_resolved_as_python_does():
    modules = {"vizgrad", "vizgrad.ops", "vizgrad.ops.shape", "vizgrad.tensor", "vizgrad.nn", "vizgrad.nn.linear"}
    tree = ast.parse("from . import shape, reshape\nfrom .. import tensor, zeros\nfrom ..nn.linear import Linear\n"
                     "import vizgrad.nn\nimport numpy\nfrom ..missing import x\n")
    found = [targets(node, "vizgrad.ops.shape", False, modules) for node, _ in imports(tree)]
    assert found == [["vizgrad.ops.shape", "vizgrad.ops"], ["vizgrad.tensor", "vizgrad"], ["vizgrad.nn.linear"],
                     ["vizgrad.nn"], [], []]
    package = ast.parse("from .shape import view\nfrom . import shape\n").body
    assert [targets(node, "vizgrad.ops", True, modules) for node in package] == [["vizgrad.ops.shape"]] * 2


def test_lazy_imports_need_a_reason_and_type_checking_never_runs():
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
              "def f():\n    import b  # lazy: b imports this module back\n    import c  # lazy:\n"
              "    import d  # lazy: later\n    s = '# lazy: not a comment at all'; import e\n"
              "class K:\n    import g\n")
    found = [(node.names[0].name, in_function) for node, in_function in imports(ast.parse(source))]
    assert found == [("TYPE_CHECKING", False), ("b", True), ("c", True), ("d", True), ("e", True), ("g", False)]
    assert lazy_lines(source) == {5}


def test_vizgrad_has_no_import_circles():
    edges = import_graph()
    assert len(edges) > 100 and "vizgrad.ops.shape" in edges["vizgrad.ops"]
    found = circles(edges)
    assert not found, "import circles (break each by moving what is shared down a layer, importing the " \
        "submodule instead of the package, or a lazy import marked '# lazy: <why>'):\n" + describe(edges, found)
