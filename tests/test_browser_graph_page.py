"""The graph as a part of the page (issue 32, items 12 and 13), in headless Chromium: the
wheel over the graph scrolls the page as over a map widget (Ctrl/⌘ + wheel, or the wheel
over the graph once clicked, zooms); a graph too big to read whole opens readable, on its
biggest fusion, inside its bounds, with the whole graph as a minimap."""

from __future__ import annotations

import os
import time

import pytest
from conftest import missing, sample

from compiler_bridge import open_dump
from tests.support.browser import CHROMIUM
from tests.support.pages import open_uploaded, shot, wait_idle
from tests.support.samples import sample_zip

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)

# the graph's root element, the page's scroll offset (Streamlit scrolls its main section)
ROOT = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .map(h => h.shadowRoot && h.shadowRoot.querySelector('.hl-root'))
    .filter(r => r && r.querySelector('.hl-stage svg'))[0]"""
SCROLLED = """() => Math.max(...[document.scrollingElement,
    ...document.querySelectorAll('[data-testid=stMain], [data-testid=stAppViewContainer]')]
    .filter(Boolean).map(e => e.scrollTop))"""
VIEW = "() => (" + ROOT + ")().dataset.viewport"


@pytest.fixture(scope="module")
def transformer_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "transformer")


def _box(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _biggest_fusion() -> str:
    """The ENTRY fusion of the transformer that fuses the most instructions."""
    d = open_dump(sample("transformer"))
    m = d.stage(d.main, "after_optimizations")
    fusions = [i for i in m.entry.instructions if i.opcode == "fusion"]
    return max(fusions, key=lambda i: (len(m.computation(i.called_names[0]).instructions),
                                       i.name)).name


def test_a_big_graph_opens_readable_on_its_biggest_fusion_with_a_minimap(
        server, new_page, transformer_zip, artifacts_dir):
    page = new_page()
    open_uploaded(page, server, transformer_zip)
    time.sleep(0.5)
    got = page.evaluate("""() => { const r = (""" + ROOT + """)();
        const st = r.querySelector('.hl-stage').getBoundingClientRect();
        const hs = [...r.querySelectorAll('.hl-stage text')].map(t => t.getBoundingClientRect())
            .filter(b => b.bottom > st.top && b.top < st.bottom && b.right > st.left
                    && b.left < st.right).map(b => b.height).sort((a, b) => a - b);
        return {vp: r.dataset.viewport, full: r.dataset.full, text: hs[hs.length >> 1],
                mini: !r.querySelector('.hl-mini').hidden, stage: [st.left, st.top,
                st.width, st.height]}; }""")
    shot(page, artifacts_dir, "graph-page-1-opens-readable.png")
    vp, full = _box(got["vp"]), _box(got["full"])
    assert vp[2] < full[2] or vp[3] < full[3]             # a part of the graph
    assert got["text"] >= 10, got                          # labels of 10 px or more
    # inside the graph's bounds: no empty margin above or to the left
    assert vp[1] >= full[1] - 0.5 and vp[0] >= full[0] - 0.5, got
    assert got["mini"]
    # centred on the biggest fusion (as far as the graph's edges allow)
    node = page.locator(f'[id="node:{_biggest_fusion()}"]').bounding_box()
    left, top, width, height = got["stage"]
    assert left <= node["x"] and node["x"] + node["width"] <= left + width
    assert top <= node["y"] and node["y"] + node["height"] <= top + height
    # "fit" shows the whole graph, and the minimap goes
    page.get_by_title("Fit the whole graph").click()
    page.wait_for_function("() => (" + ROOT + ")().querySelector('.hl-mini').hidden")
    wait_idle(page)


def test_the_wheel_scrolls_the_page_and_ctrl_wheel_zooms(server, new_page, transformer_zip,
                                                         artifacts_dir):
    page = new_page()
    open_uploaded(page, server, transformer_zip)
    stage = page.locator(".hl-stage")
    box = stage.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    before, scrolled = page.evaluate(VIEW), page.evaluate(SCROLLED)
    page.mouse.wheel(0, 300)
    page.wait_for_function(f"() => ({SCROLLED})() > {scrolled}", timeout=5_000)
    time.sleep(0.6)                                    # a zoom would have settled by now
    assert page.evaluate(VIEW) == before               # the graph did not zoom
    assert page.locator(".hl-root.hl-hinting").count() == 1     # it says how to zoom
    shot(page, artifacts_dir, "graph-page-2-wheel-scrolls.png")

    box = stage.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    scrolled = page.evaluate(SCROLLED)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -240)
    page.keyboard.up("Control")
    page.wait_for_function(f"(b) => ({VIEW})() !== b", arg=before, timeout=5_000)
    assert _box(page.evaluate(VIEW))[2] < _box(before)[2]        # zoomed in
    assert page.evaluate(SCROLLED) == scrolled                    # the page stayed

    # clicked, the graph takes the wheel itself
    page.mouse.click(box["x"] + box["width"] - 5, box["y"] + box["height"] - 5)
    zoomed = page.evaluate(VIEW)
    page.mouse.wheel(0, 240)
    page.wait_for_function(f"(b) => ({VIEW})() !== b", arg=zoomed, timeout=5_000)
    assert _box(page.evaluate(VIEW))[2] > _box(zoomed)[2]        # zoomed out
    assert page.evaluate(SCROLLED) == scrolled
    wait_idle(page)


def test_a_wide_graph_has_no_empty_space_above_it(server, new_page, tmp_path_factory,
                                                  artifacts_dir):
    """scan_while's view is wider than the frame's shape: opened, and fitted whole, its top
    is at the frame's top (the spare height goes below it)."""
    page = new_page()
    open_uploaded(page, server, sample_zip(tmp_path_factory, "scan_while"))
    full = _box(page.evaluate("() => (" + ROOT + ")().dataset.full"))
    assert full[2] / full[3] > 666 / 680                   # wider than the frame
    vp = _box(page.evaluate(VIEW))
    assert abs(vp[1] - full[1]) <= 0.5, (vp, full)
    shot(page, artifacts_dir, "graph-page-3-wide-graph-top.png")
    before = page.evaluate(VIEW)
    page.get_by_title("Fit the whole graph").click()
    page.wait_for_function(f"(b) => ({VIEW})() !== b", arg=before, timeout=5_000)
    vp = _box(page.evaluate(VIEW))
    pad = max(full[2], full[3]) * 0.01                     # fit's margin
    assert abs(vp[1] - (full[1] - pad)) <= 0.5, (vp, full)
    wait_idle(page)


def test_the_overlay_notice_button_shows_its_whole_label(server, new_page, transformer_zip,
                                                         artifacts_dir):
    """At a stage other than after optimizations the runtime overlay says what it colours,
    with a button to go there: its label is read whole, not cut to 'Show after opt…'."""
    page = new_page()
    got = open_uploaded(page, server, transformer_zip)
    page.goto(server + f"?dump={got['dump']}&stage=before_optimizations&overlay=predicted")
    button = page.locator(".st-key-rt-to-after button").filter(visible=True).first
    button.wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "graph-page-4-overlay-notice.png")
    cut = button.evaluate("""b => [b, ...b.querySelectorAll('*')].filter(e =>
        e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible')
        .map(e => e.tagName + ' ' + e.scrollWidth + '>' + e.clientWidth)""")
    assert not cut, cut
    assert button.inner_text().strip() == "Show after optimizations"
