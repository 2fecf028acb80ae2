"""Every relative link in the READMEs and the lessons resolves: a link to another
lesson, a solution, a source file or a heading of a Markdown file points at something
that exists. Web links are not fetched (the tests run offline)."""

import glob
import json
import os
import re
from urllib.parse import unquote, urlsplit

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIPPED_DIRS = {".git", ".venv", "node_modules", "build", "dist", ".pytest_cache", "test-artifacts"}

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
_HTML_LINK = re.compile(r"""<(?:a|img)\s[^>]*?(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)


def markdown_files():
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found += [os.path.join(folder, f) for f in files if f.lower().endswith(".md")]
    return sorted(found)


def notebooks():
    return sorted(glob.glob(os.path.join(ROOT, "lessons", "*.ipynb")))


def markdown_of(path):
    """The Markdown text of a .md file, or of a notebook's Markdown cells."""
    with open(path, encoding="utf-8") as handle:
        if not path.endswith(".ipynb"):
            return handle.read()
        cells = json.load(handle)["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def links_in(text):
    text = _INLINE_CODE.sub("", _FENCE.sub("", text))
    return _INLINE_LINK.findall(text) + _REFERENCE.findall(text) + _HTML_LINK.findall(text)


def anchors_of(path):
    """GitHub-style anchors of a Markdown file's (or notebook's) headings."""
    anchors = set()
    for line in _FENCE.sub("", markdown_of(path)).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).lower().replace("`", ""))
            anchors.add(text.strip().replace(" ", "-"))
    return anchors


def problems(path):
    """Each link of ``path`` that does not resolve, with why."""
    found = []
    base = os.path.dirname(path)
    for target in links_in(markdown_of(path)):
        parts = urlsplit(target)
        if parts.scheme or target.startswith("//"):
            continue                         # http(s), mailto, ...: not fetched
        if not parts.path:                   # "#anchor" within the file
            if parts.fragment and parts.fragment.lower() not in anchors_of(path):
                found.append(f"{target}: no heading with that anchor in this file")
            continue
        resolved = os.path.normpath(os.path.join(base, unquote(parts.path)))
        if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
            found.append(f"{target}: points outside the repository")
        elif not os.path.exists(resolved):
            found.append(f"{target}: {os.path.relpath(resolved, ROOT)} does not exist")
        elif parts.fragment and resolved.endswith((".md", ".ipynb")):
            if parts.fragment.lower() not in anchors_of(resolved):
                found.append(f"{target}: no heading '#{parts.fragment}' in {os.path.relpath(resolved, ROOT)}")
    return found


SOURCES = markdown_files() + notebooks()


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: os.path.relpath(p, ROOT))
def test_links_resolve(path):
    assert problems(path) == []


def test_the_readme_and_the_lessons_are_checked():
    names = {os.path.relpath(p, ROOT) for p in SOURCES}
    assert "README.md" in names and os.path.join("lessons", "00-welcome.ipynb") in names


def test_each_of_the_first_lessons_links_to_the_next_one():
    lessons = [os.path.basename(p) for p in notebooks()]
    for current, following in zip(lessons, lessons[1:]):
        if current[:2] > "04":
            break                             # lessons 05 and later: their author's call
        targets = [urlsplit(t).path for t in links_in(markdown_of(os.path.join(ROOT, "lessons", current)))]
        assert following in targets, f"{current} does not link to the next lesson, {following}"


def test_the_link_checker_catches_broken_links(tmp_path, monkeypatch):
    monkeypatch.setitem(globals(), "ROOT", str(tmp_path))
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text("[ok](there.md) [ok too](there.md#a-heading) [web](https://example.invalid/x)\n"
                    "[gone](missing.ipynb) [bad anchor](there.md#nope) `[code](not-a-link.md)`\n"
                    "```\n[fenced](also-not-a-link.md)\n```\n")
    found = problems(str(page))
    assert len(found) == 2 and "missing.ipynb" in found[0] and "#nope" in found[1]
