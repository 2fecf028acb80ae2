"""A widget's snapshot: its last state, saved in the notebook beside the widget view, so
that vizgrad's JupyterLab extension (which Notebook 7 loads too) can draw it with no kernel.

* :func:`take` reads a widget's synced traits with the widget's own serialisation
  (``get_state``) and splits the binary buffers out, base64 each: the data of the
  ``application/vnd.vizgrad.snapshot+json`` output (GraphView's graph too, JSON text in a
  binary trait: as base64 it takes about half the room that JSON objects take in a saved
  notebook, which indents every nested line). :func:`restore` is its inverse.
* :class:`SnapshotDisplays` keeps a widget's display handles and refreshes them: a trait
  change requests a refresh through a :class:`~vizgrad.widgets.base.Coalescer` at about one
  per :data:`REFRESH_INTERVAL` seconds, and whatever is pending is delivered when the running
  cell finishes (one IPython ``post_run_cell`` callback for all open widgets, held weakly).
  Nothing is built while nothing is displayed or nothing changed.
"""

import base64
import copy
import weakref

from ipywidgets.widgets.widget import _put_buffers, _remove_buffers

from ..errors import ArgumentError

MIME_TYPE = "application/vnd.vizgrad.snapshot+json"
WIDGET_VIEW_MIME_TYPE = "application/vnd.jupyter.widget-view+json"
SCHEMA = "vizgrad.snapshot"
VERSION = 1
REFRESH_INTERVAL = 5.0        # seconds between refreshes while a widget keeps changing
# traits the front end never needs from a snapshot: the code, the styles, ipywidgets' plumbing
_DROPPED = frozenset({"_esm", "_css", "_dom_classes", "layout", "tabbable", "tooltip"})
_DROPPED_PREFIXES = ("_model_", "_view_", "_anywidget_")


def state_keys(widget):
    """The synced traits a snapshot keeps (in the widget's order)."""
    return [key for key in widget.keys if key not in _DROPPED and not key.startswith(_DROPPED_PREFIXES)]


def take(widget):
    """The snapshot of ``widget`` (a :class:`~vizgrad.widgets.base.VizgradWidget`): JSON data
    for :data:`MIME_TYPE`, its binary traits base64-encoded under ``buffers`` with their paths."""
    from .._version import __version__
    state, paths, buffers = _remove_buffers(widget.get_state(key=state_keys(widget)))
    return {
        "schema": SCHEMA, "version": VERSION, "vizgrad": __version__,
        "widget": type(widget).__name__, "module": widget._bundle, "model_id": widget.model_id,
        "state": state,
        "buffers": [{"path": list(path), "data": base64.b64encode(bytes(buffer)).decode("ascii")}
                    for path, buffer in zip(paths, buffers)],
    }


def restore(snapshot):
    """The widget state a snapshot holds, each buffer back at its path as ``bytes``."""
    if not isinstance(snapshot, dict) or snapshot.get("schema") != SCHEMA:
        raise ArgumentError(f"restore: snapshot is not a vizgrad snapshot (its 'schema' is not {SCHEMA!r})")
    state = copy.deepcopy(snapshot["state"])
    buffers = snapshot.get("buffers", [])
    _put_buffers(state, [entry["path"] for entry in buffers], [base64.b64decode(entry["data"]) for entry in buffers])
    return state


# --- refreshing the displays ---------------------------------------------------------------
_open = weakref.WeakSet()          # the SnapshotDisplays of open widgets, for post_run_cell
_hooked = []                       # the IPython shell whose post_run_cell flushes them (registered once)


def _flush_all(*_):
    for displays in list(_open):
        displays.cell_finished()


def _hook_cell_end():
    """Register :func:`_flush_all` on IPython's ``post_run_cell`` once (nothing outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or shell in _hooked:
        return
    shell.events.register("post_run_cell", _flush_all)
    _hooked.append(shell)


class SnapshotDisplays:
    """The displays of one widget and their refresh.

    Args:
        build: returns ``(data, metadata)``, the widget's whole MIME bundle, called only
            when a refresh is delivered.
        coalescer: the :class:`~vizgrad.widgets.base.Coalescer` that paces the refreshes.
        settle: called first when the cell ends (the widget delivers its own pending trait
            updates, so that the refresh shows the cell's last state).
    """

    def __init__(self, build, coalescer, settle=None):
        self._build = build
        self._coalescer = coalescer
        self._settle = settle
        self.handles = []
        self.refreshes = 0

    def add(self, handle):
        """Keep ``handle`` (an IPython ``DisplayHandle``) to refresh it from now on."""
        self.handles.append(handle)
        _open.add(self)
        _hook_cell_end()

    def changed(self, _change=None):
        """A synced trait changed: ask for a refresh (nothing when nothing is displayed)."""
        if self.handles:
            self._coalescer.request(self._refresh)

    def cell_finished(self):
        """The running cell finished: settle the widget, then deliver a pending refresh now."""
        if self._settle is not None:
            self._settle()
        self._coalescer.flush()

    def close(self):
        """Stop refreshing: drop the pending refresh and the handles."""
        self._coalescer.close()
        self.handles.clear()
        _open.discard(self)

    def _refresh(self):
        data, metadata = self._build()
        self.refreshes += 1
        for handle in self.handles:
            handle.update(data, metadata=metadata, raw=True)
