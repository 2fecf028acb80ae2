"""A JupyterLab server for end-to-end tests, started and stopped by the test itself.

    with running_jupyterlab(root_dir) as lab:
        page.goto(lab.url("lab/tree/widgets.ipynb"))

    with running_jupyterlab(root_dir, app="notebook") as server:     # Notebook 7 instead
        page.goto(server.url("notebooks/widgets.ipynb"))

What the server is:
- JupyterLab (or Notebook 7: ``app="notebook"``, the same server with Notebook's pages)
  run by this interpreter (``sys.executable -m jupyterlab``) on 127.0.0.1 at
  a free port, with a token the test picks, ``--no-browser --allow-root``, serving
  ``root_dir`` (copy the notebooks there: the server may write checkpoints beside them).
- Isolated from the machine's Jupyter setup: its config, data, runtime and settings
  folders are fresh temporary ones, so no user kernelspec, extension setting or saved
  workspace leaks in.
- Its ``python3`` kernel runs this interpreter too (a kernelspec written into the
  temporary data folder, put first on ``JUPYTER_PATH``), with the repository on
  ``PYTHONPATH``, so a notebook imports the vizgrad under test.
- Quiet: news and update checks are off (no toast over the page), and every notebook
  cell stays in the DOM (``windowingMode: none``), so off-screen widgets are laid out
  and can be measured.

Startup polls ``/api/status`` with short bounded retries and fails with the server's log
if it exits or never answers. Stopping asks ``/api/shutdown`` (which also stops the
kernels it started), then terminates and finally kills the process by its handle.

The module is named ``lab_server`` rather than ``jupyter_server``: pytest puts tests/
first on ``sys.path``, where a ``jupyter_server.py`` would hide the real package of
that name from anything the tests import.
"""

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
# What JupyterLab calls the kernel (its toolbar and status bar show it once connected).
KERNEL_DISPLAY_NAME = "Python 3 (vizgrad tests)"

# User settings JupyterLab reads from JUPYTERLAB_SETTINGS_DIR (plugin id -> values).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}
# Server-side: no announcements feed, no update check (both would ask the network).
SERVER_CONFIG = {"LabApp": {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}}


@dataclass
class JupyterLab:
    """A running server: where it listens, its token, its process and its log file."""

    root_dir: Path
    port: int
    token: str
    process: subprocess.Popen
    log_path: Path

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path):
        """The address of ``path`` (e.g. ``lab/tree/x.ipynb``) with the token, for a browser."""
        return f"{self.base_url}{path.lstrip('/')}?token={self.token}"

    def request(self, path, method="GET", body=None, timeout=2.0):
        """An authorised call to the server's REST API (``body``: sent as JSON); returns the
        decoded JSON answer, or None for an empty one."""
        headers = {"Authorization": f"token {self.token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif method == "POST":
            data = b""
        request = urllib.request.Request(self.base_url + path.lstrip("/"), method=method, headers=headers, data=data)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = response.read()
        return json.loads(answer) if answer else None

    def log(self, last_chars=4000):
        """The end of what the server wrote to stdout and stderr."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-last_chars:]
        except OSError as error:
            return f"(no server log: {error})"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_kernelspec(data_dir, python=sys.executable):
    """Make ``python3`` in ``data_dir`` run ``python`` (the first place Jupyter looks)."""
    folder = Path(data_dir) / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNEL_DISPLAY_NAME, "language": "python",
            "metadata": {"debugger": False}}
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return folder


def _write_settings(settings_dir):
    for plugin, values in LAB_SETTINGS.items():
        path = Path(settings_dir) / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def _environment(home):
    """The server's (and so its kernels') environment: this one, with Jupyter's folders
    moved into ``home`` and the repository first on PYTHONPATH."""
    env = dict(os.environ)
    folders = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "runtime",
               "JUPYTERLAB_SETTINGS_DIR": "lab-settings", "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
               "IPYTHONDIR": "ipython"}
    for name, folder in folders.items():
        env[name] = str(home / folder)
        (home / folder).mkdir(parents=True, exist_ok=True)
    # Jupyter searches JUPYTER_PATH before its data folder and, inside a virtual
    # environment, the environment's own share/jupyter (which has its own python3)
    env["JUPYTER_PATH"] = env["JUPYTER_DATA_DIR"]
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                             if p])
    (home / "config" / "jupyter_server_config.json").write_text(json.dumps(SERVER_CONFIG), encoding="utf-8")
    write_kernelspec(home / "data")
    _write_settings(home / "lab-settings")
    return env


def _sign(path, data_dir):
    """Sign the notebook at ``path`` with the secret the server keeps in ``data_dir``."""
    import nbformat
    from nbformat.sign import NotebookNotary
    notary = NotebookNotary(data_dir=str(data_dir))
    notary.sign(nbformat.read(str(path), as_version=4))


def wait_until_ready(lab, attempts=240, interval=0.25):
    """Poll ``/api/status`` until it answers (about a minute at most); fail with the log
    if the process exits first or the server never answers."""
    last_error = None
    for _ in range(attempts):
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {lab.process.returncode} before it answered:\n"
                               f"{lab.log()}")
        try:
            return lab.request("api/status")
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            last_error = error
        time.sleep(interval)
    raise RuntimeError(f"JupyterLab did not answer /api/status after {attempts} attempts ({last_error}):\n{lab.log()}")


def stop(lab, timeout=10.0):
    """Shut the server down (its kernels with it); terminate, then kill, if it lingers."""
    if lab.process.poll() is None:
        with contextlib.suppress(OSError, urllib.error.URLError):
            lab.request("api/shutdown", method="POST")
        try:
            lab.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            lab.process.terminate()
            try:
                lab.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                lab.process.kill()
                lab.process.wait()


@contextlib.contextmanager
def running_jupyterlab(root_dir, token=None, options=(), app="jupyterlab", disabled_extensions=(), trusted=()):
    """Start JupyterLab serving ``root_dir``; yield a :class:`JupyterLab`; always stop it.
    ``options``: more command-line options, e.g. ``["--LabApp.notebook_starts_kernel=False"]``;
    ``app``: ``"jupyterlab"``, or ``"notebook"`` for Notebook 7; ``disabled_extensions``: front-end
    extensions the page does not load (``"vizgrad"``: a front end without vizgrad's); ``trusted``:
    notebooks (paths) signed with the server's own secret, as if their owner had run them there
    (their saved HTML outputs' scripts run)."""
    if app not in ("jupyterlab", "notebook"):
        raise ValueError(f"app must be 'jupyterlab' or 'notebook', got {app!r}")
    root_dir = Path(root_dir)
    with tempfile.TemporaryDirectory(prefix="vizgrad-jupyter-") as home:
        home = Path(home)
        env = _environment(home)
        if disabled_extensions:
            (home / "config" / "labconfig").mkdir(parents=True, exist_ok=True)
            (home / "config" / "labconfig" / "page_config.json").write_text(
                json.dumps({"disabledExtensions": {name: True for name in disabled_extensions}}), encoding="utf-8")
        for path in trusted:
            _sign(Path(path), home / "data")
        token = token or secrets.token_hex(16)
        port = free_port()
        log_path = home / "server.log"
        command = [sys.executable, "-m", app, "--no-browser", "--allow-root", "--ip=127.0.0.1",
                   f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                   f"--ServerApp.root_dir={root_dir}", *options]
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
        lab = JupyterLab(root_dir=root_dir, port=port, token=token, process=process, log_path=log_path)
        try:
            wait_until_ready(lab)
            yield lab
        finally:
            stop(lab)
