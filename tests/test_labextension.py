"""Graph outputs and the JupyterLab extension that ships in the package.

- ``Graph`` objects and ``vizgrad.show`` emit ``application/vnd.vizgrad.graph+json`` (the
  Graph JSON, valid against its schema, with the DOT layout in the output's metadata)
  plus an SVG picture (or, without Graphviz, the self-contained HTML view).
- ``vizgrad.show`` displays in a notebook and opens a page in the browser elsewhere.
- The wheel carries the prebuilt extension as shared data; ``pip install`` of that wheel
  is all it takes: ``jupyter labextension list`` shows it installed and enabled.

The extension in a real JupyterLab and browser: tests/test_browser_labextension.py.
"""

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

import vizgrad as vg
from vizgrad import nn
from vizgrad.render import notebook, svg
from vizgrad.render.dot import to_dot
from vizgrad.trace import json_bytes

REPOSITORY = Path(__file__).resolve().parent.parent
MIME = "application/vnd.vizgrad.graph+json"


def traced():
    vg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    with vg.trace() as recording:
        loss = model(vg.randn(4, 2)).square().mean()
        loss.backward()
    return recording


def no_layout(dot_source):
    raise svg.LayoutUnavailable("no Graphviz here")


def test_a_graph_output_carries_its_json_its_layout_and_a_picture():
    graph = traced().graph
    data, metadata = graph._repr_mimebundle_()
    assert list(data) == [MIME, "text/html", "image/svg+xml", "text/plain"]     # richest first
    jsonschema.validate(data[MIME], graph.schema())
    assert data[MIME] == json.loads(graph.to_json())
    assert vg.Graph.from_dict(data[MIME]) == graph                    # nothing lost on the way
    assert metadata == {MIME: {"dot": to_dot(graph), "vizgrad": vg.__version__}}
    picture = data["image/svg+xml"]
    assert picture.startswith("<svg") and all(f">{node.name or node.label}" in picture for node in graph.nodes)
    assert data["text/plain"] == repr(graph)


@pytest.mark.parametrize("graphviz", [True, False])
def test_ipython_shows_the_bundle_and_nothing_else(monkeypatch, graphviz):
    from IPython.core.interactiveshell import InteractiveShell
    if not graphviz:
        monkeypatch.setattr(svg, "layout_available", lambda: False)
        monkeypatch.setattr(svg, "layout_svg", no_layout)
    graph = traced().graph
    data, metadata = InteractiveShell.instance().display_formatter.format(graph)
    # one small HTML output around Graphviz's drawing (no iframe); without Graphviz the summary picture alone
    assert set(data) == {MIME, "image/svg+xml", "text/plain"} | ({"text/html"} if graphviz else set())
    assert "<iframe" not in data.get("text/html", "") and data["image/svg+xml"].startswith("<svg")
    assert metadata[MIME]["dot"].startswith("digraph")


def test_the_svg_repr_is_a_graphviz_picture_or_none(monkeypatch):
    graph = traced().graph
    assert graph._repr_svg_().lstrip().startswith("<?xml")
    monkeypatch.setattr(svg, "layout_available", lambda: False)
    monkeypatch.setattr(svg, "layout_svg", no_layout)
    assert graph._repr_svg_() is None


def test_without_graphviz_a_graph_output_keeps_the_summary_picture(monkeypatch):
    monkeypatch.setattr(svg, "layout_svg", no_layout)
    data, metadata = traced().graph._repr_mimebundle_()
    assert set(data) == {MIME, "image/svg+xml", "text/plain"}      # the summary needs no Graphviz
    assert data["image/svg+xml"].startswith("<svg")
    assert MIME in metadata


def test_an_output_of_nan_and_inf_values_is_strict_json():
    x = vg.tensor([float("nan"), float("inf"), 1.0], requires_grad=True)
    loss = (x * 2.0).sum()
    loss.backward()
    data, _ = notebook.mimebundle(vg.graph(loss))
    text = json.dumps(data[MIME], allow_nan=False)              # what Jupyter's messages and files need
    leaf = next(node for node in json.loads(text)["nodes"] if node["kind"] == "leaf")
    assert leaf["value"]["nan_count"] == 1 and leaf["value"]["inf_count"] == 1 and leaf["value"]["sample"] == [None, None, 1.0]
    assert json.loads(json_bytes(data[MIME])) == json.loads(text)


def test_dot_options_reach_the_layout():
    graph = traced().graph
    _, collapsed = notebook.mimebundle(graph, collapse=["0"])
    assert collapsed[MIME]["dot"] == to_dot(graph, collapse=["0"]) != to_dot(graph)


def test_show_displays_graphs_tensors_and_traces_in_a_notebook(monkeypatch):
    shown = []
    monkeypatch.setattr(notebook, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda data, metadata=None, raw=False: shown.append((data, metadata, raw)))
    recording = traced()
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert vg.show(recording) is None
    vg.show(recording.graph, rankdir="LR")
    vg.show(y)
    vg.show(recording.recorder)
    assert [raw for _, _, raw in shown] == [True] * 4
    assert shown[0][0][MIME] == json.loads(recording.graph.to_json()) == shown[3][0][MIME]
    assert "rankdir=LR" in shown[1][1][MIME]["dot"].replace(" ", "")
    assert [node["op"] for node in shown[2][0][MIME]["nodes"]] == [None, "Mul", "Sum"]


def test_show_in_a_notebook_leaves_the_garbage_collector_nothing_to_walk():
    """vg.show's output of a big graph (thousands of objects) is built, displayed and freed
    while the cyclic collector is paused: no collection ever walks it. (A display that keeps
    the output shows what a collection would otherwise walk.)"""
    import gc
    model = nn.Sequential(*[layer for _ in range(100) for layer in (nn.Linear(4, 4), nn.Tanh())])
    loss = model(vg.randn(3, 4)).sum()
    loss.backward()

    def walked(display):
        """The most objects one collection walked during display_graph and the work after it."""
        counts = []

        def watch(phase, info):
            if phase == "start":
                counts.append(len(gc.get_objects(generation=info["generation"])))
        gc.collect()
        gc.callbacks.append(watch)
        try:
            notebook.display_graph(loss, display)
            gc.collect(0)                                   # what is left for the young generation
        finally:
            gc.callbacks.remove(watch)
        return max(counts, default=0)

    sizes, kept = [], []
    notebook.display_graph(loss, lambda data, metadata, raw: None)       # (what a first call imports and caches)
    assert walked(lambda data, metadata, raw: sizes.append(len(json_bytes(data[MIME])))) < 1000
    assert gc.isenabled() and sizes[0] > 100_000
    assert walked(lambda data, metadata, raw: kept.append(data)) > 2000


def test_show_outside_a_notebook_opens_the_page_in_the_browser(monkeypatch, tmp_path):
    opened = []
    monkeypatch.setattr(notebook, "_in_notebook", lambda: False)
    monkeypatch.setattr("webbrowser.open", opened.append)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = vg.show(traced())
    assert Path(path).parent == tmp_path and opened == [Path(path).as_uri()]
    page = Path(path).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="vizgrad-data"' in page


def test_show_names_what_it_cannot_draw():
    with pytest.raises(TypeError, match=r"show: draws a Graph, a Tensor.*not list"):
        vg.show([1, 2])


def test_no_notebook_means_no_kernel():
    assert notebook._in_notebook() is False                         # pytest runs no kernel


# --- the package --------------------------------------------------------------------
def _run(command, **options):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel that `pip wheel .` builds from this checkout (its widgets/ build is fresh:
    `make test` built it, so the package build's npm step is skipped)."""
    if not (REPOSITORY / "vizgrad" / "labextension" / "package.json").is_file():
        pytest.fail("the JupyterLab extension is not built: run `make build`")
    out = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, SKIP_JUPYTER_BUILDER="1")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out),
          str(REPOSITORY)], env=env, timeout=300)
    (path,) = out.glob("vizgrad-*.whl")
    return path


def test_the_wheel_ships_the_prebuilt_extension_as_shared_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        shared = f"vizgrad-{vg.__version__}.data/data/share/jupyter/labextensions/vizgrad/"
        package = json.loads(archive.read(shared + "package.json"))
        install = json.loads(archive.read(shared + "install.json"))
    assert package["name"] == "vizgrad" and package["version"] == vg.__version__
    assert package["jupyterlab"]["_build"]["mimeExtension"] == "./mimeExtension"
    assert package["jupyterlab"]["_build"]["extension"] == "./extension"
    assert shared + package["jupyterlab"]["_build"]["load"] in names
    assert install == {"packageManager": "python", "packageName": "vizgrad",
                       "uninstallInstructions": install["uninstallInstructions"]}
    assert not any(name.startswith("vizgrad/labextension/") for name in names)     # shipped once
    assert "vizgrad/widgets/static/graph-widget.js" in names and "vizgrad/render/static/report.js" in names


def test_the_wheel_ships_the_pytest_plugin_and_its_entry_point(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read(f"vizgrad-{vg.__version__}.dist-info/entry_points.txt").decode()
    assert "vizgrad_pytest.py" in names
    assert "[pytest11]\nvizgrad = vizgrad_pytest" in entry_points


def test_pip_install_is_all_jupyterlab_needs(wheel, tmp_path):
    prefix = tmp_path / "prefix"
    # --ignore-installed: pip must not uninstall the vizgrad of the environment running the tests
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--ignore-installed",
          "--prefix", str(prefix), str(wheel)], timeout=300)
    here = _run([sys.executable, "-c", "import vizgrad; print(vizgrad.__file__)"], cwd=tmp_path, timeout=60)
    assert Path(here.strip()).parent == REPOSITORY / "vizgrad"
    data = prefix / "share" / "jupyter"
    env = dict(os.environ, JUPYTER_PATH=str(data), JUPYTER_PLATFORM_DIRS="1")
    listing = _run([Path(sys.executable).parent / "jupyter-labextension", "list"], env=env, timeout=120)
    # the listing names each folder, then the extensions found there
    section = listing.split(str(data / "labextensions"), 1)
    assert len(section) == 2, listing
    found = section[1].split("\n/", 1)[0]
    assert re.search(rf"vizgrad v{re.escape(vg.__version__)} \S*enabled\S* \S*OK\S* \(python, vizgrad\)", found), listing
