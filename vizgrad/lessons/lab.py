"""``vizgrad lab``: open JupyterLab on the lessons (``make lab`` installs what it needs first)."""

import importlib.util
import os
import shlex
import sys
from urllib.parse import quote

FIRST_LESSON = "00-welcome.ipynb"
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def lessons_dir():
    """The lessons folder: next to the vizgrad package (a source checkout), else
    ``./lessons``; None when neither exists."""
    for candidate in (os.path.join(_PACKAGE_PARENT, "lessons"), os.path.join(os.getcwd(), "lessons")):
        if os.path.isdir(candidate):
            return candidate
    return None


def find_lesson(folder, name):
    """The notebook in ``folder`` called ``name``, or starting with it (``"03"``)."""
    notebooks = sorted(f for f in os.listdir(folder) if f.endswith(".ipynb"))
    if name in notebooks:
        return name
    matches = [f for f in notebooks if f.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    raise LookupError(f"no single lesson matches {name!r}; the lessons are: {', '.join(notebooks)}")


def missing_packages():
    """What JupyterLab and the widgets need that this Python cannot import."""
    needed = {"jupyterlab": "jupyterlab", "ipykernel": "ipykernel", "anywidget": "anywidget",
              "ipywidgets": "ipywidgets"}
    return [package for module, package in needed.items() if importlib.util.find_spec(module) is None]


def lab_command(lesson=FIRST_LESSON, no_browser=False, port=None, jupyter_args=()):
    """``(argv, working directory)`` that start JupyterLab on ``lesson``: its address is the
    lesson's own (``/lab/tree/lessons/<lesson>``, what JupyterLab prints and opens);
    ``jupyter_args`` (e.g. ``["--ServerApp.token=abc"]``) are passed to JupyterLab as they are."""
    folder = lessons_dir()
    if folder is None:
        raise LookupError("no lessons folder found: run `vizgrad lab` from a vizgrad source checkout "
                          "(the folder that holds lessons/)")
    notebook = find_lesson(folder, lesson)
    root = os.path.dirname(folder)
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
            os.path.join(os.path.basename(folder), notebook),
            f"--LabApp.default_url=/lab/tree/{quote(os.path.basename(folder))}/{quote(notebook)}"]
    if no_browser:
        argv.append("--no-browser")
    if port is not None:
        argv.append(f"--port={int(port)}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")      # containers often run as root; JupyterLab refuses it otherwise
    argv.extend(jupyter_args)
    return argv, root


def bundles_missing():
    """The widgets' and the report's browser bundles, when not built (``make build``)."""
    package = os.path.join(_PACKAGE_PARENT, "vizgrad")
    wanted = [os.path.join(package, "widgets", "static", "graph-widget.js"),
              os.path.join(package, "render", "static", "report.js")]
    return [path for path in wanted if not os.path.exists(path)]


def run(args):
    """The ``vizgrad lab`` command."""
    missing = missing_packages()
    if missing and not args.dry_run:
        print(f"vizgrad lab needs {', '.join(missing)}, which this Python ({sys.executable}) cannot import. In a "
              "vizgrad checkout run `make lab` (it installs them into .venv); otherwise "
              "`pip install 'vizgrad[lab]'`.", file=sys.stderr)
        return 1
    try:
        argv, root = lab_command(args.lesson, args.no_browser, args.port, getattr(args, "jupyter_args", ()))
    except LookupError as error:
        print(f"vizgrad lab: {error}", file=sys.stderr)
        return 1
    for path in bundles_missing():
        print(f"vizgrad lab: warning: {path} is missing, so graphs and widgets cannot draw; run `make build`.",
              file=sys.stderr)
    print(f"vizgrad lab: opening {argv[4]} in JupyterLab (Ctrl+C twice stops it)")
    if args.no_browser:
        print(f"vizgrad lab: open the address JupyterLab prints below, "
              f"http://localhost:<port>{argv[5].split('=', 1)[1]}?token=…, in a browser")
    if args.dry_run:
        print(f"cd {shlex.quote(root)} && {shlex.join(argv)}")
        return 0
    os.chdir(root)
    os.execv(argv[0], argv)     # JupyterLab takes over this process (and its Ctrl+C)


def add_parser(commands):
    """Add ``lab`` to the ``vizgrad`` command's subparsers."""
    parser = commands.add_parser(
        "lab", help="open JupyterLab on the lessons",
        description="Start JupyterLab in the source checkout with the first lesson (lessons/00-welcome.ipynb) "
                    "open. `make lab` installs JupyterLab and the widgets into .venv and runs this. Other "
                    "options go to JupyterLab as they are, written --Name=value (e.g. --ServerApp.ip=0.0.0.0).")
    parser.add_argument("lesson", nargs="?", default=FIRST_LESSON,
                        help=f"the notebook to open, or the start of its name, e.g. 03 (default {FIRST_LESSON})")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser; print the address")
    parser.add_argument("--port", type=int, help="the port JupyterLab listens on")
    parser.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    parser.set_defaults(run=run)
    return parser
