"""vizgrad.render.svg: Graphviz's first layout is quiet; the notebook output's picture is a
drawing of the collapsed model laid out by Graphviz (vizgrad.render.inline), and where
Graphviz is missing, the summary drawn without any layout engine, bounded at any size."""

import re
import subprocess
import sys

import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.render import svg


def test_the_first_layout_in_a_process_writes_nothing_to_stderr():
    pytest.importorskip("pygraphviz", reason="the fontconfig warnings come from pygraphviz's bundled libraries")
    code = ("from vizgrad.render.svg import layout_svg\n"
            "assert '<svg' in layout_svg('digraph { a -> b }')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""


def test_only_fontconfigs_unknown_element_warnings_are_dropped():
    noise = ('Fontconfig warning: "/usr/share/fontconfig/conf.avail/05-reset-dirs-sample.conf", '
             'line 6: unknown element "reset-dirs"\n')
    kept = "Warning: using box for unknown shape foo\n"
    assert svg._without_fontconfig_noise(noise + kept + noise) == kept


def test_the_summary_shows_small_graphs_node_by_node_with_scalar_values():
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    picture = svg.summary_svg(vg.graph(loss))
    assert picture.startswith("<svg") and picture.endswith("</svg>")
    assert picture.count("<rect") == 3 and "= 5" in picture          # the scalar's value, not "()"


def test_the_summary_of_a_large_graph_is_one_row_per_module():
    blocks = nn.Sequential(*[nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(6)])
    with vg.trace() as traced:
        y = vg.randn(4, 8)
        for _ in range(20):                  # ~350 nodes in six modules, called 20 times each
            y = blocks(y) * 0.5
    picture = svg.summary_svg(traced.graph)
    assert picture.count("<rect") == 1 + 6 + 20                      # the input, the modules, the products
    assert re.search(r">0 · Sequential +\(\d+ nodes\)<", picture)     # each module's name and type
    assert re.search(r">5 · Sequential +\(\d+ nodes\)<", picture)
    assert ">input (4, 8)<" in picture                               # the input's shape said once


def test_the_summary_is_bounded_and_keeps_the_rows_nearest_the_output():
    y = vg.randn(3, requires_grad=True)
    for _ in range(2000):
        y = y * 1.0001
    picture = svg.summary_svg(vg.graph(y.sum()))
    assert picture.count("<rect") == svg.SUMMARY_MAX_ROWS
    assert "1962 earlier rows not shown" in picture and ">Sum" in picture


def test_the_notebook_picture_is_a_drawing_of_the_collapsed_model_not_a_list():
    pytest.importorskip("pygraphviz", reason="the drawing is laid out by the Graphviz that pygraphviz bundles")
    import graph_models
    from vizgrad.render import notebook
    _, graph = graph_models.traced("transformer")          # 4 blocks of attention and an MLP
    picture = notebook.mimebundle(graph)[0]["image/svg+xml"]
    assert "<rect" not in picture and "earlier rows not shown" not in picture       # not the summary's rows
    nodes = re.findall(r'<g class="node" data-vg-id="([^"]+)">\s*(?:<g>\s*)?(?:<a\b[^>]*>\s*)?<(polygon|ellipse|path)', picture)
    assert len(nodes) == picture.count('<g class="node"')                # every item a shape
    boxes = [node for node, _ in nodes if node.startswith("m_")]
    assert len(boxes) >= 8 and len(nodes) <= 100                         # the blocks' modules boxed, bounded
    edges = re.findall(r'<g class="edge">\s*(?:<g>\s*)?(?:<a\b[^>]*>\s*)?<path [^>]*d="M[^"]+"', picture)
    assert len(edges) == picture.count('<g class="edge"') >= len(boxes)
    assert ">Attention</text>" in picture and ">blocks.0.attn</text>" in picture     # a box: its type and name
    width = int(re.search(r'<svg class="vg-drawing" width="(\d+)"', picture)[1])
    assert width < 1000                                                  # a cell's width, labels at 11 px
