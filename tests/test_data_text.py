"""vizgrad.data.load_text: the texts that ship with the package, read offline."""

import os
from pathlib import Path

import pytest

import vizgrad as vg
from vizgrad.data import load_text, text_names

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT / "vizgrad" / "data" / "texts"
MAX_BYTES = 300_000          # each shipped text stays small


def test_names_are_the_census_first_names():
    text = load_text("names")
    words = text.splitlines()
    assert len(words) == 5163 and len(set(words)) == 5163
    assert words[:3] == ["mary", "patricia", "linda"]          # the female list, most frequent first
    assert "james" in words and "zachary" in words               # the male list follows
    assert set("".join(words)) == set("abcdefghijklmnopqrstuvwxyz")
    assert text.endswith("\n") and "" not in words


def test_pride_and_prejudice_ships_and_loads_whole():
    text = load_text("pride_and_prejudice")
    assert text.startswith("PRIDE AND PREJUDICE\n\nBy Jane Austen")
    assert "It is a truth universally acknowledged" in text and "Chapter 28" in text
    assert text == (TEXTS / "pride_and_prejudice.txt").read_text(encoding="utf-8") and len(set(text)) == 74


def test_text_names_lists_every_shipped_text():
    names = text_names()
    assert "names" in names and names == sorted(names)
    assert names == sorted(p.stem for p in TEXTS.glob("*.txt"))
    for name in names:
        assert isinstance(load_text(name), str) and load_text(name)


def test_shipped_texts_are_small_and_documented():
    readme = (TEXTS / "README.md").read_text(encoding="utf-8")
    for path in TEXTS.glob("*.txt"):
        assert os.path.getsize(path) <= MAX_BYTES, path.name
        assert f"## {path.name}" in readme, f"the README beside the texts must state {path.name}'s source"
        path.read_text(encoding="utf-8")                    # UTF-8


@pytest.mark.parametrize("name", ["shakespeare", "names.txt", "", None, 3])
def test_an_unknown_name_lists_the_known_ones(name):
    with pytest.raises(vg.errors.ArgumentError, match=r"load_text: no text named .*'names'") as caught:
        load_text(name)
    assert isinstance(caught.value, ValueError)


def test_exported_from_vizgrad_data():
    assert vg.data.load_text is load_text and "load_text" in vg.data.__all__


def test_the_texts_ship_in_the_wheel():
    builder = pytest.importorskip("hatchling.builders.wheel").WheelBuilder(str(ROOT))
    shipped = {f.distribution_path.replace(os.sep, "/") for f in builder.recurse_included_files()}
    for path in TEXTS.glob("*"):
        assert f"vizgrad/data/texts/{path.name}" in shipped
