# A marimo notebook (tests/test_browser_marimo.py serves it): GradFlowView fed by training
# steps (a button trains five more).
import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import json

    import marimo as mo
    import vizgrad as vg
    from vizgrad import nn
    from vizgrad.widgets import GradFlowView
    return GradFlowView, json, mo, nn, vg


@app.cell
def _(GradFlowView, mo, nn, vg):
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = vg.optim.SGD(model.parameters(), lr=0.1)
    inputs = vg.randn(64, 2)
    targets = (inputs[:, :1] * inputs[:, 1:]).tanh()
    grad_flow = mo.ui.anywidget(GradFlowView(model))
    grad_flow
    return grad_flow, inputs, model, optimizer, targets


@app.cell
def _(mo):
    train = mo.ui.button(label="train 5 steps", value=0, on_click=lambda clicks: clicks + 1)
    train
    return (train,)


@app.cell
def _(grad_flow, inputs, json, mo, model, nn, optimizer, targets, train):
    # five steps when the notebook runs and five more per click; the view follows live
    for _ in range(5):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    mo.plain_text("VG-FACTS " + json.dumps({
        "clicks": train.value, "loss": loss.item(), "steps": 5 * (train.value + 1),
        "statuses": grad_flow.widget.statuses(),
    }))
    return


if __name__ == "__main__":
    app.run()
