"""The self-contained HTML page and report (vizgrad.render.html), without a browser:
nothing is loaded from the network, user strings cannot break out of the page's data,
the embedded JSON is the graph, and a missing bundle says how to build it.
The browser checks are in test_browser_report.py."""

import base64
import html
import itertools
import json
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import cli, diagnostics, nn
from vizgrad.render import html as report
from vizgrad.render.dot import to_dot
from vizgrad.trace import Graph

EVIL = "</script><img src=x onerror=alert(1)>"


def evil_graph():
    """A traced step whose parameter, module and tensor names try to escape into markup."""
    model = nn.Module()
    model.add_module(EVIL, nn.Linear(2, 1))
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    w.name = EVIL + "\u2028\u2029<!--"
    with vg.trace() as recorded:
        (getattr(model, EVIL)(vg.tensor([[1.0, 2.0]])) * w).sum().backward()
    return recorded.graph


def embedded(page):
    """The JSON text inside the page's data element."""
    match = re.search(r'<script type="application/json" id="vizgrad-data">(.*?)</script>', page, re.S)
    assert match, "the page has no vizgrad-data element"
    return match.group(1)


def markup_only(page):
    """The page without the contents of its <script> and <style> elements."""
    return re.sub(r"(<(script|style)[^>]*>).*?(</\2>)", r"\1\3", page, flags=re.S)


def test_the_page_loads_nothing_from_anywhere():
    page = evil_graph().to_html(title="graph")
    markup = markup_only(page)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<link\b", page, re.I)
    assert not re.search(r"\b(src|href)\s*=", markup, re.I)
    assert "http://" not in markup and "https://" not in markup
    assert "@import" not in page and not re.search(r"url\(\s*['\"]?(https?:)?//", page)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page).group(1)
    assert "default-src 'none'" in csp and "http" not in csp
    assert page.count("<script") == 2 and page.count("</script>") == 2


def test_user_strings_stay_data():
    page = evil_graph().to_html(title=EVIL)
    assert "<img" not in page
    assert "<!--" not in page
    assert "\u2028" not in page and "\u2029" not in page
    assert f"<title>{html.escape(EVIL)}</title>" in page
    data = embedded(page)
    assert "\\u003c/script\\u003e\\u003cimg" in data and "\\u2028\\u2029" in data


def test_the_embedded_json_round_trips_to_the_same_graph():
    graph = evil_graph()
    data = json.loads(embedded(graph.to_html()))
    assert data["schema"] == "vizgrad.report" and data["layout"] == "page"
    assert Graph.from_dict(data["graph"]).to_dict() == graph.to_dict()
    assert data["dot"] == to_dot(graph)
    assert data["graph"]["nodes"][4]["name"] == EVIL + "\u2028\u2029<!--"


def test_to_html_writes_the_page_and_returns_its_path(tmp_path):
    graph = evil_graph()
    target = tmp_path / "graph.html"
    assert graph.to_html(target, title="step") == str(target)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and '<div id="vizgrad-report"' in text
    assert list(tmp_path.iterdir()) == [target]   # no temporary file left behind


def test_dot_options_reach_the_layout():
    data = json.loads(embedded(evil_graph().to_html(rankdir="LR")))
    assert "rankdir=LR" in data["dot"]


def test_the_notebook_fragment_is_a_sandboxed_frame():
    fragment = report.to_html_fragment(evil_graph())
    assert fragment.startswith("<iframe") and 'sandbox="allow-scripts"' in fragment
    assert "<script" not in fragment and "<img" not in fragment     # the page is an escaped attribute
    document = html.unescape(re.search(r'srcdoc="([^"]*)"', fragment).group(1))
    assert json.loads(embedded(document))["layout"] == "fragment"


def test_a_missing_bundle_says_how_to_build_it(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "STATIC_DIR", str(tmp_path))
    with pytest.raises(report.BundleMissing, match=r"make build"):
        evil_graph().to_html()
    assert report.to_html_fragment(evil_graph()) is None      # notebooks fall back to SVG or text


def test_a_bundle_that_could_break_out_is_refused(tmp_path, monkeypatch):
    (tmp_path / "report.js").write_text("var s = '</script>';")
    (tmp_path / "report.css").write_text("body {}")
    monkeypatch.setattr(report, "STATIC_DIR", str(tmp_path))
    with pytest.raises(report.BundleMissing, match="rebuild"):
        evil_graph().to_html()


def test_the_built_bundle_is_inline_safe():
    script, style = report.read_bundle()
    assert "</script" not in script.lower() and "<!--" not in script and "</style" not in style.lower()


def test_png_data_uri_is_a_valid_png():
    pixels = np.zeros((3, 5, 3), dtype=np.uint8)
    pixels[1, 2] = (10, 20, 30)
    uri = report.png_data_uri(pixels)
    assert uri.startswith("data:image/png;base64,")
    png = base64.b64decode(uri.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, position = {}, 8
    while position < len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        body = png[position + 8:position + 8 + length]
        assert struct.unpack(">I", png[position + 8 + length:position + 12 + length])[0] == zlib.crc32(kind + body)
        chunks[kind] = body
        position += 12 + length
    assert struct.unpack(">IIBBBBB", chunks[b"IHDR"]) == (5, 3, 8, 2, 0, 0, 0)
    rows = zlib.decompress(chunks[b"IDAT"])
    assert len(rows) == 3 * (1 + 5 * 3) and rows[16 + 1 + 2 * 3:16 + 1 + 3 * 3] == bytes((10, 20, 30))
    with pytest.raises(ValueError, match="RGB"):
        report.png_data_uri(np.zeros((2, 2)))


def test_loss_curves_in_each_accepted_form():
    assert report.loss_curve_data([1.0, float("nan")]) == {"steps": [0, 1], "values": [1.0, None]}
    assert report.loss_curve_data(([0, 10], [2.0, 1.0])) == {"steps": [0, 10], "values": [2.0, 1.0]}
    assert report.loss_curve_data({"values": [3.0]}) == {"steps": [0], "values": [3.0]}
    with pytest.raises(ValueError, match="2 steps but 1 values"):
        report.loss_curve_data(([0, 1], [1.0]))


def test_a_training_report_holds_every_panel(tmp_path):
    vg.manual_seed(0)
    model = cli.make_mlp()
    x_np, y_np = cli.two_moons(40, noise=0.1, seed=0)
    x, y = vg.tensor(x_np), vg.tensor(y_np)
    history = []
    losses = cli.fit(model, x, y, steps=4, lr=0.5,
                     on_step=lambda step, loss: history.append((step, diagnostics.grad_flow(model))))
    with vg.trace() as recorded:
        cli.logistic_loss(model(x), y).backward()
    path = report.build_report(tmp_path / "report.html", recorded.graph, loss_curve=losses, grad_flow=history,
                               decision_boundary=cli.decision_boundary(model, x_np, y_np, cells=8),
                               summary={"accuracy": "50%"}, title="training")
    data = json.loads(embedded(open(path, encoding="utf-8").read()))
    extra = data["extra"]
    assert extra["loss_curve"] == {"steps": [0, 1, 2, 3], "values": losses}
    assert extra["grad_flow"]["layers"] == [name for name, _ in model.named_parameters()]
    assert extra["grad_flow"]["steps"] == [0, 1, 2, 3] and len(extra["grad_flow"]["rms"][0]) == 6
    boundary = extra["decision_boundary"]
    assert boundary["image"].startswith("data:image/png;base64,") and len(boundary["points"]) == 40
    assert {point[2] for point in boundary["points"]} == {0, 1}
    assert extra["summary"] == {"accuracy": "50%"} and data["title"] == "training"


def test_grad_flow_history_must_keep_its_parameters():
    first = diagnostics.grad_flow(nn.Linear(2, 1))
    with pytest.raises(ValueError, match="differ"):
        report.grad_flow_data([(0, first), (1, first[:1])])


def test_the_demo_writes_its_report(tmp_path, capsys):
    target = tmp_path / "demo.html"
    assert cli.main(["demo", "--steps", "6", "--seed", "2", "--out", str(target)]) == 0
    output = capsys.readouterr()
    assert f"report: {target}" in output.out and "accuracy" in output.out
    assert "training [" in output.err and "6/6" in output.err
    data = json.loads(embedded(target.read_text(encoding="utf-8")))
    assert len(data["extra"]["loss_curve"]["values"]) == 6
    assert data["graph"]["backward_order"] and data["extra"]["decision_boundary"]["extent"]


def test_the_demo_without_a_bundle_fails_with_the_build_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(report, "STATIC_DIR", str(tmp_path))
    assert cli.main(["demo", "--steps", "2", "--out", str(tmp_path / "demo.html")]) == 1
    assert "make build" in capsys.readouterr().err


def test_the_progress_bar_redraws_in_place_only_on_a_terminal():
    class Terminal(list):
        def write(self, text):
            self.append(text)

        def flush(self):
            pass

        def isatty(self):
            return True

    screen = Terminal()
    bar = cli.ProgressBar(4, "training", width=4, stream=screen)
    for done in range(1, 5):
        bar.update(done, f"loss {done}")
    bar.close()
    assert screen[0] == "\rtraining [#...] 1/4 loss 1" and screen[-1] == "\rtraining [####] 4/4 loss 4\n"


# Machado, Oliveira and Fernandes (2009): full protanopia and deuteranopia on linear RGB.
_CVD_SIMULATIONS = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
}


def _cie_lab(linear_rgb):
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear_rgb
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 216 / 24389, np.cbrt(t), t * 24389 / 27 / 116 + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _linear_rgb(hex_colour):
    srgb = np.array([int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]) / 255
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def test_series_colours_stay_apart_for_colour_blind_viewers():
    source = (Path(__file__).resolve().parents[1] / "widgets" / "src" / "charts.js").read_text()
    palette = re.search(r"SERIES_COLOURS = \[([^\]]*)\]", source).group(1)
    colours = tuple(re.findall(r'"(#[0-9a-fA-F]{6})"', palette))
    assert colours == report.SERIES_COLOURS                      # one palette for Python and the browser
    assert report.CLASS_COLOURS[:2] == ((0x4c, 0x72, 0xb0), (0xdd, 0x84, 0x52))   # class 0 blue, class 1 orange
    for name, simulation in {"normal vision": np.eye(3), **_CVD_SIMULATIONS}.items():
        seen = {colour: _cie_lab(np.clip(simulation @ _linear_rgb(colour), 0, 1)) for colour in colours}
        for first, second in itertools.combinations(colours, 2):
            difference = float(np.linalg.norm(seen[first] - seen[second]))
            assert difference > 15, f"{first} and {second} are {difference:.1f} ΔE apart under {name}"


def test_the_colour_blindness_check_catches_a_red_green_pair():
    red, green = _linear_rgb("#c44e52"), _linear_rgb("#55a868")    # the palette's old pair
    assert np.linalg.norm(_cie_lab(red) - _cie_lab(green)) > 15
    simulated = _CVD_SIMULATIONS["deuteranopia"]
    assert np.linalg.norm(_cie_lab(simulated @ red) - _cie_lab(np.clip(simulated @ green, 0, 1))) < 15
