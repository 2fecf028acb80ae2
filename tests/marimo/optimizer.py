# A marimo notebook (tests/test_browser_marimo.py serves it): OptimizerView, three
# optimizers racing on Rosenbrock's function; its buttons step the race in Python. The
# widget is the cell's last expression, unwrapped: marimo's formatter for anywidgets shows it.
import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo
    from vizgrad.widgets import OptimizerView
    return OptimizerView, mo


@app.cell
def _(OptimizerView):
    race = OptimizerView("rosenbrock", optimizers=("SGD", "Momentum", "Adam"))
    race
    return (race,)


@app.cell
def _(mo):
    retune = mo.ui.button(label="Adam: lr 0.02", value=0, on_click=lambda clicks: clicks + 1)
    retune
    return (retune,)


@app.cell
def _(race, retune):
    if retune.value:
        race.configure("Adam", lr=0.02)     # Python changes a setting: the card's input follows
    return


if __name__ == "__main__":
    app.run()
