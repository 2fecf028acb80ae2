"""B8, B9, B9L, B9F: graphs displayed. B8 in the kernel: ``GraphView(tensor)`` or
``vg.show(tensor)`` until the display call returns, its messages packed as a kernel packs
them. B9 in Chromium driven by Playwright: a report page from its data arriving to the
first complete paint (1,000 and 5,000 nodes), and the frame time while panning and zooming
a 1,000-node graph. Each against its target, no peers."""

import os
import tempfile
from pathlib import Path

from benchmarks.harness import Elapsed, Skipped, benchmark
from benchmarks.html_report import blocks_model, recorded_graph


def _display_models():
    """The graphs of B8 and B9, as tensors (with their backward pass run): an unrolled RNN
    (40 steps, one cell's weights shared by every step, ~250 nodes), a CNN with BatchNorm,
    and a Sequential of Linear + Tanh blocks of about ``blocks * 4`` nodes."""
    import vizgrad as vg
    from vizgrad import nn
    import vizgrad.nn.functional as F

    def rnn():
        vg.manual_seed(0)
        ih, hh, out = nn.Linear(4, 16), nn.Linear(16, 16), nn.Linear(16, 1)
        xs, h = vg.randn(3, 40, 4), vg.zeros(3, 16)
        for t in range(40):
            h = (ih(xs[:, t]) + hh(h)).tanh()
        loss = out(h).pow(2).mean()
        loss.backward()
        return loss

    def cnn():
        vg.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
        loss = F.cross_entropy(model(vg.randn(8, 1, 28, 28)), vg.tensor([0, 1, 2, 3, 4, 5, 6, 7]))
        loss.backward()
        return loss

    def blocks(count):
        vg.manual_seed(0)
        model = blocks_model(count)
        loss = model(vg.randn(16, 8)).square().mean()
        loss.backward()
        return loss

    return {"RNN, 40 steps, shared weights": rnn, "CNN with BatchNorm": cnn, "5,000 nodes": lambda: blocks(1250)}


class _KernelComm:
    """What a Jupyter kernel does with a widget's messages, and with display()'s output,
    before the call returns: pack them as its session does (jupyter_client's packer, which
    uses orjson where installed), to be sent nowhere. B8 installs it for its views' comms."""
    pack = None
    original = None

    @classmethod
    def install(cls):
        try:
            import comm
            from comm import DummyComm
            from jupyter_client.session import Session
        except ImportError:
            raise Skipped("jupyter_client or comm is not installed (pip install -e '.[dev]')") from None
        if cls.original is None:
            cls.pack, cls.original = Session().pack, comm.create_comm

            class PackingComm(DummyComm):
                def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
                    cls.pack({"comm_id": self.comm_id, "data": data or {}, "metadata": metadata or {}, **keys})
            comm.create_comm = PackingComm
        return cls.pack

    @classmethod
    def uninstall(cls):
        if cls.original is not None:
            import comm
            comm.create_comm, cls.original = cls.original, None


@benchmark("B8", "graph_display", "ms", 1e3, references=(), teardown=_KernelComm.uninstall, target=100)
def graph_display():
    """In the kernel: GraphView(tensor) or vg.show(tensor) until the display call returns."""
    def view_setup(make):
        def setup():
            from vizgrad.widgets import GraphView
            pack = _KernelComm.install()
            loss = make()

            def step():                                  # the comm packs the view's state as it opens
                view = GraphView(loss)
                data, metadata = view._repr_mimebundle_()       # what IPython's display() asks for, then packs
                pack({"data": data, "metadata": metadata})
                view.close()
            return step
        return setup

    def show_setup(make):
        def setup():
            from vizgrad.render import notebook
            pack = _KernelComm.install()
            loss = make()

            def display(data, metadata, raw):            # IPython's display(): the output, packed
                pack({"data": data, "metadata": metadata})

            def step():                                  # vg.show in a notebook
                notebook.display_graph(loss, display)
            return step
        return setup

    setups = {}
    for name, make in _display_models().items():
        setups[f"GraphView: {name}"] = view_setup(make)
        setups[f"vg.show: {name}"] = show_setup(make)
    return setups


B9_FRAMES = 120


class _Chromium:
    """Debian's Chromium driven by Playwright, started once for B9 and closed by its teardown."""
    playwright = browser = None

    @classmethod
    def page(cls):
        executable = "/usr/bin/chromium"
        if not os.path.exists(executable):
            raise Skipped(f"no Chromium at {executable}")
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise Skipped("Playwright is not installed (pip install -e '.[dev]')") from None
        if cls.browser is None:
            cls.playwright = sync_playwright().start()
            cls.browser = cls.playwright.chromium.launch(executable_path=executable, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"])
        return cls.browser.new_page(viewport={"width": 1280, "height": 720})

    @classmethod
    def close(cls):
        if cls.browser is not None:
            cls.browser.close()
            cls.playwright.stop()
        cls.playwright = cls.browser = None


def _chains(count=13, length=25):
    """``count`` modules, each a chain of ``length`` (x @ w).tanh() * 1.01 steps: ~1,000 nodes in 13 groups."""
    import vizgrad as vg

    class Chain(vg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = vg.nn.Parameter(vg.randn(8, 8) * 0.3)

        def forward(self, x):
            for _ in range(length):
                x = (x @ self.w).tanh() * 1.01
            return x

    return vg.nn.Sequential(*[Chain() for _ in range(count)])


def _report_of(blocks=None):
    """A report page (file URI) and node count: Linear + Tanh blocks (about ``blocks * 4``
    nodes), or with no ``blocks`` the ~1,000-node graph of :func:`_chains`."""
    import vizgrad as vg
    vg.manual_seed(0)
    graph = recorded_graph(_chains() if blocks is None else blocks_model(blocks))
    path = os.path.join(tempfile.mkdtemp(prefix="vizgrad-b9-"), "graph.html")
    graph.to_html(path)
    return Path(path).as_uri(), len(graph.nodes)


_FIRST_PAINT = "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def _paint_setup(blocks):
    def setup():
        uri, nodes = _report_of(blocks)
        page = _Chromium.page()

        def step():                                      # the page opens: data in, layout, first complete paint
            page.goto(uri, wait_until="commit")
            page.wait_for_selector("#vizgrad-report[data-ready], #vizgrad-report[data-error]", timeout=60_000)
            error = page.get_attribute("#vizgrad-report", "data-error")
            if error:
                raise RuntimeError(f"the report could not draw its graph: {error}")
            page.evaluate(_FIRST_PAINT)
            return float(nodes)
        return step
    return setup


@benchmark("B9", "graph_paint_1000", "ms", 1e3, references=(), teardown=_Chromium.close, target=1000)
def graph_paint_1000():
    """In Chromium: a 1,000-node graph's page, from the data arriving to the first complete paint."""
    return {"report (Chromium, Playwright)": _paint_setup(250)}


@benchmark("B9L", "graph_paint_5000", "ms", 1e3, references=(), teardown=_Chromium.close, target=3000)
def graph_paint_5000():
    """In Chromium: a 5,000-node graph's page, from the data arriving to the first complete paint."""
    return {"report (Chromium, Playwright)": _paint_setup(1250)}


# Pans (drags) or zooms (wheel) the drawn graph once per animation frame, as a person would;
# returns the seconds from the first frame of the gesture to its last (``frames`` frames):
# the frame rate while it lasts (the repaint once it ends is one frame of its own).
_PAN_ZOOM = """async ([frames, zoom]) => {
  const svg = document.querySelector("svg.vg-graph");
  const box = svg.getBoundingClientRect();
  const at = (i) => ({ clientX: box.left + box.width / 2 + 200 * Math.sin(i / 15), clientY: box.top + box.height / 2 + 120 * Math.cos(i / 19) });
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  let first = null;
  let last = null;
  for (let i = 0; i <= frames; i++) {
    if (zoom) svg.dispatchEvent(new WheelEvent("wheel", { ...at(i), deltaY: i % 60 < 30 ? 30 : -30, bubbles: true, cancelable: true }));
    else svg.dispatchEvent(new PointerEvent("pointermove", { ...at(i), pointerId: 1, buttons: 1, bubbles: true }));
    last = await frame();
    if (first === null) first = last;
  }
  return (last - first) / 1000;
}"""


@benchmark("B9F", "graph_pan_zoom_1000", "ms/frame", 1e3 / B9_FRAMES, references=(), teardown=_Chromium.close,
           target=1000 / 60)
def graph_pan_zoom():
    """In Chromium: frame time while panning and zooming a 1,000-node graph drawn whole (60 fps = 16.7 ms)."""
    def setup(zoom):
        uri, nodes = _report_of()
        page = _Chromium.page()
        page.goto(uri)
        page.wait_for_selector("#vizgrad-report[data-ready]", timeout=60_000)
        drawing = "svg.vg-graph > g"                     # each new drawing has a new id
        while page.locator("g.vg-group").count():        # open every group (a folded run first): all nodes drawn
            before = page.get_attribute(drawing, "id")
            page.locator("g.vg-group").first.dispatch_event("pointerdown", {"button": 0})
            page.locator("g.vg-group").first.dispatch_event("pointerup", {"button": 0})
            page.wait_for_function("([selector, before]) => document.querySelector(selector)?.id !== before",
                                   arg=[drawing, before], timeout=60_000)
        drawn = page.locator("g.vg-node").count()
        if drawn < 900:
            raise RuntimeError(f"only {drawn} nodes drawn")
        box = page.locator("svg.vg-graph").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.get_by_role("button", name="zoom in").click()   # part of the graph in view, its labels readable
        page.get_by_role("button", name="zoom in").click()

        def step():
            if not zoom:
                page.mouse.down()                        # a real press: the moves that follow drag
            seconds = page.evaluate(_PAN_ZOOM, [B9_FRAMES, zoom])
            if not zoom:
                page.mouse.up()
            return Elapsed(seconds)
        return step
    return {"pan (drag)": lambda: setup(False), "zoom (wheel)": lambda: setup(True)}
