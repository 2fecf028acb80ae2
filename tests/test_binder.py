"""binder/ builds a working environment: the repository rebuilt the way mybinder.org
(repo2docker) would, from binder/ alone, without Docker.

1. The repository's files (what a clone has: git's tracked and not-ignored files) are
   copied to a temporary folder; nothing built here (bundles, node_modules, .venv) goes
   with them.
2. A fresh virtual environment gets ``pip install -r binder/requirements.txt``, run from
   the copy's root as repo2docker runs it. pip's cache is reused, pip asks only the
   package indexes it is configured for, and it skips byte-compiling (``--no-compile``,
   half the install time; Python compiles on first import instead).
3. ``binder/postBuild`` runs from the copy's root with that environment first on PATH
   (npm is asked to prefer its cache).
4. Checks: ``jupyter labextension list`` in the environment shows vizgrad's extension
   (built by the package build from widgets/ during the pip install) and the widget front
   ends (anywidget, @jupyter-widgets/jupyterlab-manager) enabled; vizgrad imported there is
   the copy, with its built bundles; JupyterLab started from the environment redirects
   ``/`` to the welcome lesson and its page lists those extensions, whose code it
   serves; every module the lessons import is installed there (with scikit-learn's
   digits); the welcome lesson executes top to bottom on that environment's kernel.

Slow by nature (it installs JupyterLab into an empty environment and builds widgets/):
about two minutes with warm pip and npm caches, most of it the install. It needs ``python -m venv`` and Node.js with npm; without npm it is
skipped, except under CI (``CI=true``), where it fails.
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lab_server import REPOSITORY, JupyterLab, free_port, stop, wait_until_ready

# One worker builds the environment once for all the tests here (make test runs xdist's loadgroup).
pytestmark = pytest.mark.xdist_group("binder")

WELCOME = "lessons/00-welcome.ipynb"
# JupyterLab extensions the environment must have: vizgrad's own (graph outputs, the side panel)
# and the widgets' front ends.
EXTENSIONS = ("vizgrad", "anywidget", "@jupyter-widgets/jupyterlab-manager")
# Files the copy must not take from this checkout: built or installed here, absent from a clone.
NOT_IN_A_CLONE = shutil.ignore_patterns(".git", ".venv", "node_modules", "__pycache__", "*.egg-info", ".pytest_cache",
                                        ".hypothesis", "test-artifacts", "static", "labextension", "build", "dist")


def _in_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _run(command, cwd, env, timeout, what):
    """Run ``command``; on failure, fail the test with its output."""
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{what} failed (exit status {result.returncode}):\n{result.stdout[-6000:]}")
    return result.stdout, time.perf_counter() - started


def _copy_repository(destination):
    """The files a clone of this repository has, copied to ``destination``."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=REPOSITORY, capture_output=True, check=True, timeout=60).stdout
        names = [name for name in listed.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = None
    if not names:                        # not a git checkout (an unpacked sdist): copy, leaving build output
        shutil.copytree(REPOSITORY, destination, ignore=NOT_IN_A_CLONE)
        return
    for name in names:
        source = REPOSITORY / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _environment(venv, home):
    """The environment of every command: the new virtual environment first on PATH (as
    repo2docker's notebook environment is), Jupyter's user folders moved into ``home`` so
    nothing from this machine's Jupyter set-up (kernels, settings) leaks in."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    for name, folder in {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "runtime",
                         "JUPYTERLAB_SETTINGS_DIR": "lab-settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
                         "IPYTHONDIR": "ipython", "MPLCONFIGDIR": "matplotlib"}.items():
        (home / folder).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / folder)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["npm_config_prefer_offline"] = "true"           # reuse npm's cache; fetch only what is missing
    env["npm_config_update_notifier"] = "false"
    return env


def _get(url, token, timeout=10):
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.geturl(), response.read().decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def binder_build(tmp_path_factory):
    """The copy, its virtual environment (built from binder/ alone) and the phases' timings."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        if _in_ci():
            pytest.fail("binder/postBuild needs Node.js and npm, which CI must have")
        pytest.skip("binder/postBuild needs Node.js and npm (apt-get install nodejs npm)")
    root = tmp_path_factory.mktemp("binder")
    repo, venv, home = root / "repo", root / "venv", root / "home"
    timings = {}
    started = time.perf_counter()
    _copy_repository(repo)
    assert (repo / "binder" / "requirements.txt").is_file() and (repo / "binder" / "postBuild").is_file()
    assert not (repo / "vizgrad" / "widgets" / "static").exists(), "the copy must start without built bundles"
    assert not (repo / "vizgrad" / "labextension").exists(), "the copy must start without the built extension"
    timings["copy"] = time.perf_counter() - started
    env = _environment(venv, home)

    _, timings["venv"] = _run([sys.executable, "-m", "venv", str(venv)], root, env, 300, "python -m venv")
    python = venv / "bin" / "python"
    pip_install = [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "-r", "binder/requirements.txt"]
    _, timings["pip install -r binder/requirements.txt"] = _run(pip_install, repo, env, 1500,
                                                                "pip install -r binder/requirements.txt")
    _, timings["binder/postBuild"] = _run(["bash", "binder/postBuild"], repo, env, 900, "binder/postBuild")
    build = {"repo": repo, "venv": venv, "python": python, "env": env, "home": home, "timings": timings}
    yield build
    total = sum(timings.values())
    print("\nbinder environment rebuilt in " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
          + f" (total {total:.1f} s)")


def test_vizgrad_and_widget_front_ends_are_installed_and_enabled(binder_build):
    output, binder_build["timings"]["labextension list"] = _run(
        [str(binder_build["venv"] / "bin" / "jupyter"), "labextension", "list"], binder_build["repo"],
        binder_build["env"], 120, "jupyter labextension list")
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)            # no colour codes
    for name in EXTENSIONS:
        line = next((line for line in text.splitlines() if line.strip().startswith(name + " ")), None)
        assert line is not None, f"{name} is not among the JupyterLab extensions:\n{text}"
        assert "enabled" in line and "OK" in line, f"{name} is not enabled and OK: {line.strip()}"


def test_vizgrad_is_the_copy_with_its_built_bundles(binder_build):
    script = ("import json, os, vizgrad, vizgrad.widgets\n"
              "from vizgrad.widgets.base import STATIC_DIR, read_static\n"
              "from vizgrad.render.html import read_bundle\n"
              "read_static('graph-widget.js'); read_bundle()\n"
              "print(json.dumps({'package': os.path.dirname(vizgrad.__file__), 'static': STATIC_DIR,\n"
              "                  'files': sorted(os.listdir(STATIC_DIR))}))\n")
    output, _ = _run([str(binder_build["python"]), "-c", script], binder_build["home"], binder_build["env"], 120,
                     "importing vizgrad in the binder environment")
    found = json.loads(output.strip().splitlines()[-1])
    assert Path(found["package"]) == binder_build["repo"] / "vizgrad", found
    built = set(found["files"])
    sources = (REPOSITORY / "widgets" / "src" / "widgets").glob("*-widget.js")
    expected = {path.name for path in sources} | {"widgets.css"}
    assert expected <= built, f"missing from {found['static']}: {sorted(expected - built)}"
    assert (binder_build["repo"] / "vizgrad" / "render" / "static" / "report.js").is_file()
    assert not (binder_build["repo"] / "widgets" / "node_modules").exists(), "postBuild leaves no build tools"


def _lesson_imports():
    """The top-level modules the lessons' code cells import."""
    modules = set()
    for path in sorted((REPOSITORY / "lessons").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                modules |= set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", source, re.M))
    return sorted(modules)


def test_everything_the_lessons_import_is_installed(binder_build):
    """Every lesson's imports resolve there, and lesson 07 gets the real digits (scikit-learn)."""
    modules = _lesson_imports()
    assert {"vizgrad", "matplotlib"} <= set(modules), modules
    script = ("import importlib, sys\n"
              "for name in sys.argv[1:]:\n"
              "    importlib.import_module(name)\n"
              "import vizgrad\n"
              "X, y = vizgrad.data.load_digits()\n"
              "assert tuple(X.shape) == (1797, 1, 8, 8)\n")
    _run([str(binder_build["python"]), "-c", script, *modules], binder_build["home"], binder_build["env"], 300,
         f"importing {', '.join(modules)} in the binder environment")


def test_jupyterlab_opens_the_welcome_lesson_with_the_widgets(binder_build):
    repo, env = binder_build["repo"], binder_build["env"]
    token, port = secrets.token_hex(16), free_port()
    log_path = binder_build["home"] / "jupyterlab.log"
    command = [str(binder_build["venv"] / "bin" / "jupyter"), "lab", "--no-browser", "--allow-root",
               "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={repo}",
               "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    lab = JupyterLab(root_dir=repo, port=port, token=token, process=process, log_path=log_path)
    try:
        wait_until_ready(lab)
        binder_build["timings"]["JupyterLab start"] = time.perf_counter() - started
        final_url, _ = _get(lab.base_url, token)
        assert urllib.parse.urlparse(final_url).path == "/lab/tree/" + WELCOME, (
            f"/ leads to {final_url}, not the welcome lesson:\n{lab.log()}")
        _, page = _get(lab.base_url + "lab", token)
        match = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
        assert match, "the JupyterLab page has no page config"
        federated = {entry["name"]: entry for entry in json.loads(match.group(1)).get("federated_extensions", [])}
        for name in EXTENSIONS:
            assert name in federated, f"JupyterLab does not load {name}; it loads {sorted(federated)}"
            entry = federated[name]
            _, code = _get(f"{lab.base_url}lab/extensions/{name}/{entry['load']}", token)
            assert code.strip(), f"the front end of {name} is empty"
    finally:
        stop(lab)


EXECUTE = """
import json, sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
nb.cells.append(nbformat.v4.new_code_cell(
    "import json as _json, sys as _sys, vizgrad as _vizgrad\\n"
    "print(_json.dumps({'executable': _sys.executable, 'vizgrad': _vizgrad.__file__}))"))
NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": "lessons"}}).execute()
widgets = sum("application/vnd.jupyter.widget-view+json" in output.get("data", {})
              for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs)
last = "".join(output.get("text", "") for output in nb.cells[-1].outputs)
print(json.dumps({"kernel": json.loads(last.strip().splitlines()[-1]), "widgets": widgets}))
"""


def test_the_welcome_lesson_runs_on_the_binder_kernel(binder_build):
    output, binder_build["timings"]["welcome lesson"] = _run(
        [str(binder_build["python"]), "-c", EXECUTE, WELCOME], binder_build["repo"], binder_build["env"], 600,
        f"executing {WELCOME} with nbclient")
    found = json.loads(output.strip().splitlines()[-1])
    kernel = found["kernel"]
    assert Path(kernel["executable"]).parent == binder_build["venv"] / "bin", kernel
    assert Path(kernel["vizgrad"]).parent == binder_build["repo"] / "vizgrad", kernel
