"""Texts that ship with vizgrad, for the language-model lessons: ``load_text(name)``.

The files live in ``vizgrad/data/texts/`` (``<name>.txt``, UTF-8); their sources and
licences are in the README beside them. Nothing is downloaded.
"""

from importlib import resources

from ..errors import ArgumentError

_FOLDER = "texts"


def text_names():
    """The names :func:`load_text` accepts, sorted: ``["names", ...]``."""
    folder = resources.files(__package__).joinpath(_FOLDER)
    return sorted(entry.name[:-len(".txt")] for entry in folder.iterdir() if entry.name.endswith(".txt"))


def load_text(name):
    """The whole text ``name`` as one string, read from the package's data (no download).

    ``"pride_and_prejudice"``: Jane Austen's novel (1813, public domain), title and chapters 1-28.

    ``"names"``: 5,163 first names of the 1990 U.S. Census (public domain), lowercase,
    one per line.

    Example::

        >>> words = vizgrad.data.load_text("names").splitlines()
        >>> words[:3], len(words)
        (['mary', 'patricia', 'linda'], 5163)
    """
    known = text_names()
    if not isinstance(name, str) or name not in known:
        raise ArgumentError(f"load_text: no text named {name!r}; the texts shipped with vizgrad are "
                            f"{', '.join(repr(n) for n in known)}")
    return resources.files(__package__).joinpath(_FOLDER, f"{name}.txt").read_text(encoding="utf-8")
