"""The Memory tab in a real browser (Playwright driving Debian's Chromium, headless):
open a sample, the chart shows the peak, a click on the biggest buffer live there selects
the instruction that defines it in the graph. Screenshots go to test-artifacts/."""

from __future__ import annotations

import time

import pytest
from conftest import sample

from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from tests.support.fixtures import TIMINGS
from tests.support.pages import open_uploaded, params, shot, visible_text, wait_idle, wait_param
from tests.support.samples import sample_zip
from viz import panels as P

pytestmark = [pytest.mark.browser]

PEAK_MARKED = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
    .some(c => [...c.querySelectorAll('text')].some(t => t.textContent.startsWith('live-bytes peak ')))"""


CHART = """() => [...document.querySelectorAll('.js-plotly-plot')].find(p => p.layout &&
    String((p.layout.title || {}).text || '').includes('Live bytes over the schedule'))"""
POINT_AT = f"""(name) => {{
  const gd = ({CHART})();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const t = gd.data.find(t => t.name === 'all live bytes');
  const i = (t.customdata || []).findIndex(c => c[0] === name);
  if (i < 0) return null;
  const full = gd._fullData[gd.data.indexOf(t)];   // x and y as arrays (data has them packed)
  return {{x: box.left + xa._offset + xa.l2p(xa.d2l(full.x[i])),
           y: box.top + ya._offset + ya.l2p(ya.d2l(full.y[i]))}};
}}"""
LIVE_LABELS = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .some(h => h.shadowRoot && [...h.shadowRoot.querySelectorAll('svg g.node text')]
      .some(t => t.textContent.includes(' live')))"""


@pytest.fixture(scope="module")
def scan_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "scan_while")


def test_memory_tab_shows_the_peak_and_a_click_selects_the_biggest_buffer(
        server, new_page, scan_zip, artifacts_dir):
    d = open_dump(sample("scan_while"))
    mem = module_memory(d, d.main)
    peak = mem.totals()
    biggest = mem.live_at(peak.live_peak_index)[0].value.instruction

    page = new_page()
    open_uploaded(page, server, scan_zip)
    t0 = time.time()
    page.get_by_role("tab", name="Memory").click()
    page.wait_for_function(PEAK_MARKED, timeout=30_000)
    TIMINGS["memory_tab_to_peak_s"] = round(time.time() - t0, 2)
    wait_idle(page)
    visible_text(page, f"live-bytes peak {P.human_bytes(peak.live_peak_bytes)}").wait_for()
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-memory-1-tab.png")

    # a click on a point of the chart selects that point's instruction
    at = page.evaluate(POINT_AT, "dot.1")
    assert at is not None
    page.mouse.click(at["x"], at["y"])
    wait_param(page, "selected", "dot.1")
    page.locator('.hl-selected[id="node:dot.1"]').wait_for()   # the graph redrawn there
    wait_idle(page)

    # the table of values live at the peak, biggest first: click its first row
    # the table is keyed by the selection: after the click above its old copy is marked
    # stale until the new one is in
    table = page.locator('[class*="st-key-mem-peak"][data-stale="false"] '
                         '[data-testid="stDataFrame"]')
    table.scroll_into_view_if_needed()
    wait_idle(page)
    t0 = time.time()
    for attempt in range(3):       # a loaded machine may still be drawing the table
        box = table.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)     # row 0's selection cell
        try:
            wait_param(page, "selected", biggest, timeout=10)
            break
        except AssertionError:
            if attempt == 2:
                raise
            wait_idle(page)
            table.scroll_into_view_if_needed()
    TIMINGS["memory_row_click_to_url_s"] = round(time.time() - t0, 2)
    # the graph shows the new selection once it has redrawn (the old one is there until then)
    page.locator(f'.hl-selected[id="node:{biggest}"]').wait_for()
    assert page.locator(".hl-selected").count() == 1
    visible_text(page, f"%{biggest} = ").wait_for()            # the inspector
    wait_idle(page)
    shot(page, artifacts_dir, "browser-memory-2-selected.png")
    page.locator(".hl-selected").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-memory-3-graph.png")
    assert params(page)["selected"] == biggest

    # the overlay: the graph's nodes carry the bytes live while they run
    import re
    page.locator(".st-key-pick-memory button").filter(
        has_text=re.compile(r"^\s*bytes live\s*$")).click()
    wait_param(page, "memory", "live")
    page.wait_for_function(LIVE_LABELS, timeout=30_000)
    wait_idle(page)
    visible_text(page, "bytes live while each instruction runs").wait_for()
    page.locator(".hl-selected").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-memory-4-overlay.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.outside_requests
