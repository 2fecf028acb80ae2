"""Live Jupyter widgets (anywidget): the computation graph with its backward replay,
gradient flow over training, a training dashboard, optimizers racing on a surface, a
playground, a convolution explorer and attention maps.

Example::

    from vizgrad.widgets import GraphView, GradFlowView, dashboard
    view = GraphView(loss)            # the graph; after loss.backward(), the replay
    board = dashboard(model, optimizer)
    board                             # loss curves, gradient flow, histograms, update ratios

Needs anywidget and ipywidgets (``pip install 'vizgrad[widgets]'``) and the built
front-end bundle (``make build`` in a source checkout). The engine never imports this
package; the widgets only listen to :mod:`vizgrad.events`.
"""

try:
    import anywidget  # noqa: F401
    import ipywidgets  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a clean environment
    raise ImportError(f"vizgrad.widgets needs anywidget and ipywidgets ({error}): "
                      "pip install 'vizgrad[widgets]'") from error

from .base import Coalescer, VizgradWidget  # noqa: E402
from .graph_view import GraphView  # noqa: E402
from .grad_flow import GradFlowView  # noqa: E402
from .dashboard import Dashboard, DashboardState  # noqa: E402
from .dashboard import dashboard  # noqa: E402  (the function, not the submodule of the same name)

_LAZY = {
    "AttentionView": "attention_view",
    "OptimizerView": "optimizer_view",
    "OptimizerRace": "optimizer_view",
    "Playground": "playground",
    "ConvExplorer": "conv_explorer",
}

__all__ = ["Coalescer", "Dashboard", "DashboardState", "GradFlowView", "GraphView", "VizgradWidget", "dashboard",
           *_LAZY]


def __getattr__(name):
    """The optimizer, playground and convolution widgets load on first use."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'vizgrad.widgets' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
