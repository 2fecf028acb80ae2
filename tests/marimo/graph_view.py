# A marimo notebook (tests/test_browser_marimo.py serves it): GraphView of a small MLP's
# loss, from the tensor's own history (no vizgrad.trace), after backward.
import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import json

    import marimo as mo
    import vizgrad as vg
    from vizgrad import nn
    from vizgrad.widgets import GraphView
    return GraphView, json, mo, nn, vg


@app.cell
def _(GraphView, mo, nn, vg):
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    inputs = vg.randn(16, 3)
    targets = vg.randn(16, 1)
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    graph_view = mo.ui.anywidget(GraphView(loss))
    graph_view
    return graph_view, model


@app.cell
def _(graph_view, json, mo, model):
    # what Python knows, for the test to compare with the page; reruns when the page
    # changes a trait (a click selects a node)
    mo.plain_text("VG-FACTS " + json.dumps({
        "nodes": {node["id"]: node["label"] for node in graph_view.widget.graph["nodes"]},
        "timeline": graph_view.widget.timeline,
        "modules": graph_view.widget.modules,
        "selected": graph_view.value["selected"],
        "weight_norm": float(model[0].weight.norm()),
        "weight_grad_norm": float(model[0].weight.grad.norm()),
    }))
    return


if __name__ == "__main__":
    app.run()
