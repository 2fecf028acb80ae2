"""B6: writing the HTML report, the self-contained page (DOT, Graph JSON, the bundled
script) of a recorded 1,000-node graph; against its target, no peers. Also the recorded
graphs that B9 opens in Chromium are built here."""

import os
import tempfile

from benchmarks.harness import VIZGRAD, benchmark

B6_BLOCKS = 250            # Linear + Tanh blocks: about 1,000 graph nodes with the parameters


def blocks_model(count):
    """A Sequential of ``count`` Linear(8, 8) + Tanh blocks: about ``count * 4`` graph nodes."""
    import vizgrad as vg
    return vg.nn.Sequential(*[layer for _ in range(count) for layer in (vg.nn.Linear(8, 8), vg.nn.Tanh())])


def recorded_graph(model):
    """The graph a trace records of ``model`` on a random (16, 8) batch, its backward included."""
    import vizgrad as vg
    with vg.trace() as recording:
        model(vg.randn(16, 8)).square().mean().backward()
    return recording.graph


@benchmark("B6", "report", "ms", 1e3, references=())
def report():
    """Build and write the HTML report (DOT, JSON, the bundled page) of a recorded 1,000-node graph."""
    def vizgrad_setup():
        import vizgrad as vg
        vg.manual_seed(0)
        graph = recorded_graph(blocks_model(B6_BLOCKS))
        folder = tempfile.mkdtemp(prefix="vizgrad-b6-")

        def step():
            graph.to_html(os.path.join(folder, "report.html"))
            return float(len(graph.nodes))
        return step

    return {VIZGRAD: vizgrad_setup}
