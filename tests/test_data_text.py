"""vizgrad.data.load_text: the texts that ship with the package (no download), their
size, their README (source and licence), and the errors for a wrong name."""

from pathlib import Path

import pytest

import vizgrad
from vizgrad.data import available_texts, load_text

TEXTS = Path(vizgrad.__file__).resolve().parent / "data" / "texts"


def test_pride_and_prejudice_ships_and_loads_whole():
    text = load_text("pride_and_prejudice")
    assert isinstance(text, str) and text.startswith("PRIDE AND PREJUDICE\n\nBy Jane Austen")
    assert "It is a truth universally acknowledged" in text and "Chapter 28" in text
    assert text == (TEXTS / "pride_and_prejudice.txt").read_text(encoding="utf-8")
    assert 74 == len(set(text))


@pytest.mark.parametrize("name", available_texts())
def test_every_text_is_small_and_has_its_source_and_licence_stated(name):
    assert (TEXTS / f"{name}.txt").stat().st_size < 300_000
    readme = (TEXTS / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
    assert "public domain" in row or "licence" in row.lower()


def test_an_unknown_name_lists_the_texts():
    with pytest.raises(ValueError, match=r"load_text\(\): no packaged text named 'shakespeare'; the texts are "
                                         r".*'pride_and_prejudice'"):
        load_text("shakespeare")


def test_a_name_that_is_not_a_string_is_refused():
    with pytest.raises(TypeError, match="name must be a str, got int"):
        load_text(3)
