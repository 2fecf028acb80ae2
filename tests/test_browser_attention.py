"""AttentionView end to end: JupyterLab, a kernel running this interpreter, Debian's
Chromium driven by Playwright.

The test opens tests/notebooks/attention.ipynb, runs its cells, and checks what a person
sees and does: a tab per head (with a thumbnail of its weights) and the chosen head's
heatmap, a cell per (query, key) pair and the sentence's characters as labels, the whole
view under 760 px tall and no wider than its output; a click on a cell marks it, shows the sentence shaded by where that
query looks (the caption naming the character it looks at most, as Python computes it),
and reaches Python (`view.selected`, read back by running the next cell). No console or
page errors, no request to any host but the server. The screenshot goes to
test-artifacts/browser-attention/attention.png.
"""

import json
import re
import shutil
from pathlib import Path

import pytest

import chromium
from lab_server import KERNEL_DISPLAY_NAME, running_jupyterlab

pytestmark = pytest.mark.xdist_group("jupyterlab-attention")

NOTEBOOK = Path(__file__).resolve().parent / "notebooks" / "attention.ipynb"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser-attention"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


def _cell(page, tags, tag):
    return page.locator(".jp-Notebook .jp-Cell").nth(next(i for i, t in enumerate(tags) if tag in t))


def _printed(cell, marker):
    text = cell.locator(".jp-OutputArea-output", has_text=marker).first.inner_text()
    return json.loads(text.split(marker, 1)[1].strip().splitlines()[0])


def test_attention_view_draws_the_heads_and_a_click_reaches_python(tmp_path):
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    tags = [cell.get("metadata", {}).get("tags", []) for cell in cells]
    shutil.copy(NOTEBOOK, tmp_path)
    with chromium.launch(needs=("jupyterlab", "ipykernel", "anywidget", "ipywidgets")) as browser, \
            running_jupyterlab(tmp_path) as lab:
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        problems = []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("request", lambda r: problems.append(f"network request: {r.url[:120]}")
                if not r.url.startswith((lab.base_url, "data:", "blob:", "about:")) else None)
        try:
            page.goto(lab.url(f"lab/tree/{NOTEBOOK.name}"))
            page.locator(".jp-Notebook .jp-Cell").nth(len(cells) - 1).wait_for(timeout=60_000)
            page.locator(".jp-StatusBar-Widget", has_text=f"{KERNEL_DISPLAY_NAME} | Idle").wait_for(timeout=60_000)
            _cell(page, tags, "setup").click()
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]"
                ".every(p => /\\[\\d+\\]/.test(p.textContent))", timeout=120_000)
            assert page.eval_on_selector_all(STDERR, "els => els.map(e => e.textContent)") == []
            facts = _printed(_cell(page, tags, "setup"), "VG-FACTS")
            heads, queries, keys = facts["shape"]

            cell = _cell(page, tags, "attention")
            view = cell.locator('[data-testid="vg-attention-widget"]').first
            view.wait_for(timeout=30_000)
            page.wait_for_function("el => el.dataset.ready === 'true' || el.dataset.error !== undefined",
                                   arg=view.element_handle(), timeout=30_000)
            assert view.get_attribute("data-error") is None
            tabs = view.locator('[data-testid="vg-attention-tab"]')
            assert tabs.count() == heads == 4
            assert tabs.evaluate_all("tabs => tabs.map(t => t.getAttribute('aria-selected'))") == ["true", "false", "false", "false"]
            maps = view.locator('[data-testid="vg-attention-map"]')
            assert maps.count() == 1 and maps.get_attribute("data-head") == "0"
            assert maps.locator(".vg-attention-cell").count() == queries * keys
            labels = maps.locator("text").all_text_contents()
            assert labels[:3] == ["I", "t", "␣"] and "y" in labels
            sizes = maps.locator("text").evaluate_all("ts => ts.map(t => t.getBoundingClientRect().height)")
            assert min(sizes) >= 11, "labels at 11 px or more"
            box = view.bounding_box()
            assert box["height"] <= 760
            assert view.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
            assert view.locator('[data-testid="vg-attention-detail"]').count() == 0      # nothing selected yet
            assert view.locator('[data-testid="vg-attention-selected"]').count() == 0

            tabs.nth(2).click()                                                           # head 2, large
            page.wait_for_function("el => el.querySelector('[data-testid=\"vg-attention-map\"]').dataset.head === '2'",
                                   arg=view.element_handle(), timeout=10_000)
            maps.locator('.vg-attention-cell[data-query="10"][data-key="4"]').click()
            caption = view.locator('[data-testid="vg-attention-caption"]')
            caption.wait_for(timeout=10_000)
            top_key, top_token = facts["top"]
            assert caption.inner_text().startswith("head 2, query 10")
            assert f"{top_token} (position {top_key})" in caption.inner_text()
            assert view.locator('[data-testid="vg-attention-selected"]').count() == 1
            strip = view.locator('[data-testid="vg-attention-strip"] span')
            assert strip.count() == keys
            shades = strip.evaluate_all("spans => spans.map(s => s.style.background)")
            assert shades[11:] == ["rgb(255, 255, 255)"] * (keys - 11)      # the future: weight 0
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            cell.screenshot(path=str(ARTIFACTS / "attention.png"))

            reader = _cell(page, tags, "read_selected")
            reader.click()
            page.keyboard.press("Shift+Enter")
            reader.locator(".jp-OutputArea-output", has_text="VG-SELECTED").first.wait_for(timeout=30_000)
            selected = _printed(reader, "VG-SELECTED")
            assert selected["selected"] == {"head": 2, "query": 10, "key": 4} and selected["head"] == 2
            assert selected["top"] == facts["top"]
            assert problems == [], "\n".join(problems)
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "failure.png"))
            raise
        finally:
            page.close()
