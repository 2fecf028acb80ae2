"""The widgets' static pictures in a real browser (Debian's Chromium driven by Playwright):
each widget's ``text/html`` fallback (tests/test_widgets_pictures.py's ``made_widgets``) is
loaded alone in a 1280×800 page, with no script and no network, and must draw: every
embedded PNG decodes, the picture fits the page's width, every label is inside the picture,
at least 11 px, and no two labels overlap; the ``image/svg+xml`` fallback alone, as an
``<img>`` (how GitHub and JupyterLab show it), decodes too. Screenshots go to
test-artifacts/browser-pictures/<widget>.png.

Skipped only where Chromium cannot be (no /usr/bin/chromium outside CI).
"""

import base64
from pathlib import Path

import pytest

import chromium

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

from test_widgets_pictures import made_widgets  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-pictures"
VIEWPORT = {"width": 1280, "height": 800}
PAGE = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>{name}</title></head>"
        "<body style='margin:8px'>{html}</body></html>")

# every label's box and font size, relative to its picture; each <image>'s PNG decoded
MEASURE = """async () => {
  const svg = document.querySelector("svg");
  const base = svg.getBoundingClientRect();
  const labels = [...svg.querySelectorAll("text")].map((text) => {
    const box = text.getBoundingClientRect();
    return {text: text.textContent, size: parseFloat(getComputedStyle(text).fontSize),
            x: box.left - base.left, y: box.top - base.top,
            right: box.right - base.left, bottom: box.bottom - base.top};
  });
  const widths = await Promise.all([...svg.querySelectorAll("image")].map(async (image) => {
    const picture = new Image();
    picture.src = image.getAttribute("href");
    await picture.decode();
    return picture.naturalWidth;
  }));
  return {width: base.width, height: base.height, right: base.right, labels, widths};
}"""


@pytest.fixture(scope="module")
def browser():
    with chromium.launch() as browser:
        yield browser


@pytest.fixture(scope="module")
def widgets():
    made = made_widgets()
    for widget in made.values():
        widget.close()
    return made


def overlapping(labels):
    """Pairs of labels whose boxes overlap by more than a pixel each way."""
    pairs = []
    for k, a in enumerate(labels):
        for b in labels[k + 1:]:
            if (a["x"] + 1 < b["right"] and b["x"] + 1 < a["right"]
                    and a["y"] + 1 < b["bottom"] and b["y"] + 1 < a["bottom"]):
                pairs.append((a["text"], b["text"]))
    return pairs


def open_page(browser, content, problems):
    page = browser.new_page(viewport=VIEWPORT)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("request", lambda request: problems.append(f"request: {request.url}")
            if not request.url.startswith(("data:", "about:")) else None)
    page.set_content(content)
    return page


def test_each_picture_draws_in_chromium_legible_and_whole(browser, widgets):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    failures = []
    for name, widget in widgets.items():
        problems = []
        page = open_page(browser, PAGE.format(name=name, html=widget._fallback_html()), problems)
        try:
            measured = page.evaluate(MEASURE)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        finally:
            page.close()
        if problems:
            failures.append((name, problems))
        if measured["right"] > VIEWPORT["width"]:
            failures.append((name, f"wider than the page: {measured['right']}"))
        if not all(width > 0 for width in measured["widths"]):
            failures.append((name, f"an image did not decode: {measured['widths']}"))
        for label in measured["labels"]:
            if label["size"] < 11:
                failures.append((name, f"label {label['text']!r} at {label['size']} px"))
            if label["x"] < -0.5 or label["y"] < -0.5 or label["right"] > measured["width"] + 0.5 \
                    or label["bottom"] > measured["height"] + 0.5:
                failures.append((name, f"label {label['text']!r} outside the picture: {label}"))
        clashes = overlapping(measured["labels"])
        if clashes:
            failures.append((name, f"labels overlap: {clashes[:5]}"))
    assert not failures, failures


def test_each_svg_alone_decodes_as_an_image(browser, widgets):
    """As GitHub and JupyterLab show ``image/svg+xml``: in an ``<img>``, where a malformed or
    non-self-contained SVG draws nothing."""
    problems = []
    images = "".join(f"<img data-name='{name}' src='data:image/svg+xml;base64,"
                     f"{base64.b64encode(widget._fallback_svg().encode('utf-8')).decode('ascii')}'>"
                     for name, widget in widgets.items())
    page = open_page(browser, PAGE.format(name="svg images", html=images), problems)
    try:
        sizes = page.evaluate("""async () => Promise.all([...document.querySelectorAll("img")].map(async (img) => {
            await img.decode();
            return [img.dataset.name, img.naturalWidth, img.naturalHeight];
        }))""")
    finally:
        page.close()
    assert not problems
    drawn = {name: (width, height) for name, width, height in sizes}
    assert set(drawn) == set(widgets)
    for name, widget in widgets.items():
        svg = widget._fallback_svg()
        width = int(svg.split("width='", 1)[1].split("'", 1)[0])
        assert drawn[name][0] == width and drawn[name][1] > 50, (name, drawn[name])
