"""Small texts shipped with vizgrad, for the language-model lessons: no download.

Each text is a plain UTF-8 file ``vizgrad/data/texts/<name>.txt``; its source and licence
are in ``vizgrad/data/texts/README.md``.

Example::

    from vizgrad.data import load_text
    text = load_text("pride_and_prejudice")
    len(text), text[:19]                 # (278932, 'PRIDE AND PREJUDICE')
"""

from importlib import resources

PACKAGE = "vizgrad.data"
FOLDER = "texts"


def available_texts():
    """The names :func:`load_text` accepts, sorted."""
    folder = resources.files(PACKAGE).joinpath(FOLDER)
    return sorted(entry.name[:-4] for entry in folder.iterdir() if entry.name.endswith(".txt"))


def load_text(name: str) -> str:
    """The packaged text ``name`` (see :func:`available_texts`) as one string.

    Raises:
        ValueError: no text of that name ships with vizgrad.
    """
    if not isinstance(name, str):
        raise TypeError(f"load_text(): name must be a str, got {type(name).__name__}")
    names = available_texts()
    if name not in names:
        raise ValueError(f"load_text(): no packaged text named {name!r}; the texts are "
                                f"{', '.join(repr(n) for n in names)}")
    return resources.files(PACKAGE).joinpath(FOLDER, f"{name}.txt").read_text(encoding="utf-8")
