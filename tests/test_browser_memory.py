"""The Memory tab in a real browser (Playwright driving Debian's Chromium, headless):
open a sample, the chart shows the peak, a click on the biggest buffer live there selects
the instruction that defines it in the graph. Screenshots go to test-artifacts/."""

from __future__ import annotations

import time

import pytest
from conftest import sample
from test_browser import (  # noqa: F401 - fixtures
    TIMINGS,
    browser,
    new_page,
    open_uploaded,
    params,
    sample_zip,
    server,
    shot,
    visible_text,
    wait_idle,
    wait_param,
)

from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from viz import panels as P

pytestmark = [pytest.mark.browser]

PEAK_MARKED = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
    .some(c => [...c.querySelectorAll('text')].some(t => t.textContent.startsWith('peak ')))"""


@pytest.fixture(scope="module")
def scan_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "scan_while")


def test_memory_tab_shows_the_peak_and_a_click_selects_the_biggest_buffer(
        server, new_page, scan_zip, artifacts_dir):  # noqa: F811 - the fixtures
    d = open_dump(sample("scan_while"))
    mem = module_memory(d, d.main)
    peak = mem.totals()
    biggest = mem.live_at(peak.peak_index)[0].value.instruction

    page = new_page()
    open_uploaded(page, server, scan_zip)
    t0 = time.time()
    page.get_by_role("tab", name="Memory").click()
    page.wait_for_function(PEAK_MARKED, timeout=30_000)
    TIMINGS["memory_tab_to_peak_s"] = round(time.time() - t0, 2)
    wait_idle(page)
    visible_text(page, f"peak {P.human_bytes(peak.peak_bytes)}").wait_for()
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-memory-1-tab.png")

    # the table of values live at the peak, biggest first: click its first row
    table = page.locator('[class*="st-key-mem-peak"] [data-testid="stDataFrame"]')
    table.scroll_into_view_if_needed()
    wait_idle(page)
    box = table.bounding_box()
    assert box is not None
    t0 = time.time()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)     # row 0's selection cell
    wait_param(page, "selected", biggest)
    TIMINGS["memory_row_click_to_url_s"] = round(time.time() - t0, 2)
    selected = page.locator(".hl-selected")
    selected.wait_for()
    assert selected.get_attribute("id") == f"node:{biggest}"
    visible_text(page, f"%{biggest} = ").wait_for()            # the inspector
    wait_idle(page)
    shot(page, artifacts_dir, "browser-memory-2-selected.png")
    page.locator(".hl-selected").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-memory-3-graph.png")
    assert params(page)["selected"] == biggest
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.outside_requests
