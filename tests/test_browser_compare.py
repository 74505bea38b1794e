"""Comparing two dumps in a real browser (Playwright, Debian's Chromium, headless).

Two stored dumps of one program (``flags_default`` and ``flags_no_fusion_emitters``):
open both (a visitor is offered the dumps they opened), pick one as the other's baseline
in the sidebar, see the comparison, go to an
instruction the flag took out of its fusion, share the link, open it fresh. Screenshots
go to test-artifacts/browser-compare-*.png.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import missing, sample
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from compiler_bridge import compare_dumps, open_dump
from compiler_bridge.dumps import Store
from tests.support.browser import CHROMIUM, GRAPH_DRAWN
from tests.support.fixtures import app_server
from tests.support.pages import (href, open_sidebar_expander, params, shot, show_whole, svg_node, visible_text,
                                 wait_idle, wait_param)

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)

BASE, NEW = "flags_default", "flags_no_fusion_emitters"
# nodes drawn in the graph (0 while it is being replaced)
NODE_COUNT = """() => Math.max(0, ...[...document.querySelectorAll(
    '[data-testid=stBidiComponentIsolated]')].map(h => h.shadowRoot ?
    h.shadowRoot.querySelectorAll('.hl-stage g.node').length : 0))"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A server whose store holds both dumps: (url, baseline share id, other share id)."""
    data = tmp_path_factory.mktemp("hlolens-data")
    store = Store(str(data))
    base = store.add_path(sample(BASE), name=BASE).share_id
    new = store.add_path(sample(NEW), name=NEW).share_id
    with app_server(data, keep_log="server-compare.log") as url:
        yield url, base, new


def _page(browser):
    """A fresh browser context and page (1600×1100), noting requests that leave the host."""
    ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
        ("http://127.0.0.1", "data:", "blob:", "about:")) else None)
    page.outside_requests = outside
    return ctx, page


def test_compare_two_stored_dumps_step_to_a_changed_fusion_and_share(stored, browser,
                                                                     artifacts_dir):
    url, base_id, new_id = stored
    # what the comparison must show, from the dumps (their file names and text)
    expected = compare_dumps(open_dump(sample(BASE)), open_dump(sample(NEW)),
                             module_b="0000").reports[0]
    diff = expected.comparison.diff
    unfused = next(c for c in diff.changed if "unfused" in c.kinds)
    ghost = next(r.name for r in diff.removed if r.opcode == "fusion"
                 and r.name == unfused.old.fusion)

    ctx, page = _page(browser)
    # a visitor is offered only the dumps their browser uploaded or opened (issue 33,
    # item 1): open the baseline's link first, and wait for the browser to remember it
    page.goto(url.rstrip("/") + f"/?dump={base_id}")
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    deadline = time.time() + 30
    while not any(c["name"] == "hlolens-mine" and base_id in c["value"]
                  for c in ctx.cookies()) and time.time() < deadline:
        time.sleep(0.2)
    page.goto(url.rstrip("/") + f"/?dump={new_id}")
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)

    # pick the other stored dump as the baseline, in the sidebar
    sidebar = page.locator('section[data-testid="stSidebar"]')
    open_sidebar_expander(page, "Compare with…")
    picker = sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Baseline dump")
    picker.wait_for()
    option = page.get_by_role("option").filter(has_text=BASE).first
    for _ in range(5):          # a click while the expander still opens may miss
        picker.click()
        try:
            option.wait_for(timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    t0 = time.time()
    option.click()
    got = wait_param(page, "base", base_id)
    assert got["dump"] == new_id
    visible_text(page, "with baseline").wait_for()
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)
    # the summary line: counts of both sides, and the flag that differs
    ca, cb = expected.comparison.counts_a, expected.comparison.counts_b
    visible_text(page, f"{ca.instructions:,} → {cb.instructions:,} instructions").wait_for()
    visible_text(page, "--xla_cpu_use_fusion_emitters").wait_for()
    # the fusion the flag dissolved is a ghost; what it held is drawn as changed
    svg_node(page, f"ghost:{ghost}").wait_for()
    timings = {"pick_baseline_to_coloured_graph_s": round(time.time() - t0, 2)}
    shot(page, artifacts_dir, "browser-compare-01-opened.png")

    # the Changes tab lists what changed; the instruction the flag took out of its fusion
    # is drawn as changed: a click shows its baseline side in the inspector
    page.get_by_role("tab", name="Changes", exact=True).click()
    tables = page.locator('[data-testid="stButtonGroup"]')
    tables.get_by_text("Changed (").first.click()
    wait_idle(page)
    show_whole(page)
    svg_node(page, f"node:{unfused.new.name}").click()
    wait_param(page, "selected", unfused.new.name)
    visible_text(page, "In the baseline").wait_for()
    visible_text(page, unfused.describe()).wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-compare-02-changed-fusion.png")

    # only what changed: fewer nodes, the change still there
    before = page.evaluate(NODE_COUNT)
    assert before
    page.get_by_text("Only what changed").first.click()
    wait_param(page, "changed_only", "1")
    page.wait_for_function(f"() => ({NODE_COUNT})() > 0 && ({NODE_COUNT})() < {before}",
                           timeout=60_000)
    svg_node(page, f"node:{unfused.new.name}").wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-compare-03-only-changed.png")

    # share: the link carries both dumps, the module and the view; a fresh browser opens it
    link = href(page)
    q = params(page)
    assert (q["dump"], q["base"], q["selected"], q["changed_only"]) == \
        (new_id, base_id, unfused.new.name, "1")
    ctx2, other = _page(browser)
    t0 = time.time()
    other.goto(link)
    other.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    visible_text(other, "with baseline").wait_for()
    visible_text(other, unfused.describe()).wait_for()
    assert other.locator(".hl-selected").get_attribute("id") == f"node:{unfused.new.name}"
    svg_node(other, f"node:{unfused.new.name}").wait_for()
    timings["link_to_comparison_s"] = round(time.time() - t0, 2)
    wait_idle(other)
    with open(os.path.join(artifacts_dir, "browser-compare-timings.json"), "w") as f:
        json.dump(timings, f, indent=2)
    shot(other, artifacts_dir, "browser-compare-04-shared-link.png")
    assert not page.outside_requests and not other.outside_requests
    ctx.close()
    ctx2.close()
