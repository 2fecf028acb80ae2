"""No Python file in ``vizgrad/`` or ``benchmarks/`` over 1,000 lines: a module that grows past
it is split along the families it holds (ARCHITECTURE.md), not left to grow."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1000


def test_no_python_file_is_over_the_limit():
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for folder in ("vizgrad", "benchmarks") for path in (ROOT / folder).rglob("*.py")}
    assert len(sizes) > 100                     # the package is there: the check looked at something
    over = {path: lines for path, lines in sizes.items() if lines > LIMIT}
    assert not over, f"over {LIMIT} lines, split along their families: {over}"
