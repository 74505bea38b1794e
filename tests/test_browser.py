"""The explorer in a real browser (Playwright driving Debian's Chromium, headless).

One app server (started without --dump, uploads into a temporary data folder) serves
every test. Screenshots go to test-artifacts/ so a person can look at what was tested;
timings go to test-artifacts/browser-timings.json.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse

import pytest
from conftest import ROOT, missing, sample

from compiler_bridge import open_dump
from tests.support.browser import CHROMIUM, GRAPH_DRAWN
from tests.support.fixtures import TIMINGS
from tests.support.pages import (
    button,
    href,
    open_uploaded,
    params,
    pick_stage,
    select_value,
    shot,
    show_whole,
    stage_value,
    svg_node,
    upload,
    visible_nodes,
    visible_text,
    wait_idle,
    wait_param,
)
from tests.support.samples import sample_zip
from ui import visitor
from viz.stepper import ADDED_FILL, CHANGED_FILL

pytestmark = [pytest.mark.browser]
if not os.path.exists(CHROMIUM):
    missing(f"{CHROMIUM} is missing (apt-get install chromium); CI installs it",
            module_level=True)
@pytest.fixture(scope="module")
def transformer_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "transformer")


def test_upload_explore_and_share_a_view(server, new_page, transformer_zip, artifacts_dir):
    dump = open_dump(sample("transformer"))
    module = dump.stage(dump.main, "after_optimizations")
    page = new_page()
    page.goto(server)
    page.get_by_text("See what XLA did to your program").wait_for()
    shot(page, artifacts_dir, "browser-01-welcome.png")

    # upload a zip of the transformer sample: progress, then the graph
    t0 = time.time()
    upload(page, transformer_zip)
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    TIMINGS["upload_to_graph_s"] = round(time.time() - t0, 2)
    wait_param(page, "dump")
    visible_text(page, "Opened transformer.zip").wait_for()

    # the module picker: pick the transformer's module
    picker = page.locator('[data-testid="stSelectbox"]').filter(has_text="Module")
    picker.click()
    page.get_by_role("option").filter(has_text="jit_train_step").first.click()
    wait_idle(page)
    assert "jit_train_step" in select_value(page, "pick-module")
    shot(page, artifacts_dir, "browser-02-uploaded.png")

    # expand a fusion in place with a double-click
    drawn = visible_nodes(page)
    fusion = next(i[5:] for i in drawn if i.startswith("node:")
                  and (inst := module.find(i[5:])) is not None and inst.opcode == "fusion"
                  and len(module.computation(inst.called_names[0]).instructions) > 2
                  and module.computation(inst.called_names[0]).root.opcode != "parameter")
    fused = module.computation(module.find(fusion).called_names[0])
    inner = fused.root.name
    svg_node(page, f"node:{fusion}").dblclick()
    wait_param(page, "expanded", f"fusion:{fusion}")
    svg_node(page, f"group:fusion:{fusion}").wait_for()
    svg_node(page, f"node:{inner}").wait_for()
    wait_idle(page)
    deadline = time.time() + 10       # the view centres on the opened fusion
    while f"node:{inner}" not in visible_nodes(page) and time.time() < deadline:
        time.sleep(0.1)
    assert f"node:{inner}" in visible_nodes(page)
    shot(page, artifacts_dir, "browser-03-fusion-open.png")

    # click an instruction inside it: the inspector shows its HLO line and source
    svg_bytes = page.evaluate("""() => [...document.querySelectorAll(
        '[data-testid=stBidiComponentIsolated]')].map(h => h.shadowRoot &&
        h.shadowRoot.querySelector('.hl-stage')).filter(Boolean)[0].innerHTML.length""")
    page.evaluate("""() => document.addEventListener('click',
        () => { window.__clickAt = performance.now(); }, {capture: true, once: true})""")
    before_bytes = page.ws_bytes[0]
    t0 = time.time()
    svg_node(page, f"node:{inner}").click()
    page.wait_for_function("(n) => location.href.includes('selected=' + n)", arg=inner)
    TIMINGS["click_to_url_ms"] = round(page.evaluate("performance.now() - window.__clickAt"))
    got = wait_param(page, "selected", inner)
    inst = module.find(inner)
    loc = module.source_location(inst)
    line_start = f"%{inner} = {inst.shape} {inst.opcode}("
    visible_text(page, line_start).wait_for()
    visible_text(page, f"{os.path.basename(loc.file)}:{loc.line}").wait_for()
    TIMINGS["click_to_inspector_s"] = round(time.time() - t0, 3)
    assert got["expanded"] == f"fusion:{fusion}"
    wait_idle(page)
    # the SVG is not sent again for a click: only a hash of the unchanged graph element
    TIMINGS["bytes_received_for_click"] = page.ws_bytes[0] - before_bytes
    TIMINGS["svg_bytes"] = svg_bytes
    assert page.ws_bytes[0] - before_bytes < svg_bytes / 2
    shot(page, artifacts_dir, "browser-04-inspector.png")

    # pan and zoom settle into the URL's viewport
    stage = page.locator(".hl-stage")
    box = stage.bounding_box()
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 320, box["y"] + 260, steps=6)
    page.mouse.up()
    page.mouse.wheel(0, -240)
    before = params(page).get("viewport")
    deadline = time.time() + 10
    while params(page).get("viewport") == before and time.time() < deadline:
        time.sleep(0.05)
    assert params(page).get("viewport") not in (None, before)
    wait_idle(page)

    # a new browser context opening the link shows the same view
    link = href(page)
    other = new_page()
    t0 = time.time()
    other.goto(link)
    other.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    TIMINGS["link_load_to_graph_s"] = round(time.time() - t0, 2)
    TIMINGS["link_navigation_to_graph_ms"] = round(other.evaluate("performance.now()"))
    visible_text(other, line_start).wait_for()
    selected = other.locator(".hl-selected")
    selected.wait_for()
    assert selected.get_attribute("id") == f"node:{inner}"
    assert params(other)["selected"] == inner
    # the same window size shows the same part of the graph (to the 0.1 unit the box is
    # written with: its height is made again from the width and the frame's aspect)
    restored = other.locator(".hl-root").get_attribute("data-viewport").split(",")
    assert all(abs(float(a) - float(b)) <= 0.15
               for a, b in zip(restored, params(page)["viewport"].split(","), strict=True))
    wait_idle(other)
    shot(other, artifacts_dir, "browser-05-shared-link.png")

    # search: Enter goes to the first dot (the module's first in its order), picking
    # another goes there; focus mode stays off as the user left it
    dots = [i.name for i in module.instructions() if i.opcode == "dot"]
    box = page.get_by_placeholder("name, opcode, op_name, shape or source")
    box.fill("dot")
    box.press("Enter")
    got = wait_param(page, "selected", dots[0])
    assert "focus" not in got
    visible_text(page, f"%{dots[0]} = ").wait_for()
    hits = page.locator('[data-testid="stSelectbox"]').filter(has_text="hits")
    hits.wait_for()
    wait_idle(page)
    hits.click()
    option = page.get_by_role("option").filter(has_text=f"{dots[1]} · dot · ").first
    option.click()
    got = wait_param(page, "selected", dots[1])
    assert "focus" not in got
    visible_text(page, f"%{dots[1]} = ").wait_for()
    svg_node(page, f"node:{dots[1]}").wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-06-search.png")

    # the module's opcode histogram (plotly, bundled with Streamlit) and layout changes
    page.get_by_role("tab", name="Opcodes").click()
    chart = page.locator('[data-testid="stPlotlyChart"]')
    chart.wait_for()
    chart.scroll_into_view_if_needed()
    page.locator(".js-plotly-plot .bars").first.wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-07-opcodes.png")
    page.get_by_role("tab", name="Layout changes").click()
    page.get_by_text("copies and transposes that move data").wait_for()
    assert not page.outside_requests and not other.outside_requests


def test_a_non_dump_upload_shows_an_error(server, new_page, tmp_path, artifacts_dir):
    page = new_page()
    page.goto(server)
    page.get_by_text("See what XLA did to your program").wait_for()
    notes = tmp_path / "notes.txt"
    notes.write_text("not an XLA dump\n")
    upload(page, str(notes))
    alert = page.locator('[data-testid="stAlertContentError"]').filter(
        has_text="no XLA dump files found")
    alert.wait_for()
    assert "notes.txt" in alert.inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, artifacts_dir, "browser-08-not-a-dump.png")

    # a zip that is not a zip: also a message naming it
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not really a zip")
    page.locator('section[data-testid="stSidebar"] input[type="file"]').first.set_input_files(
        str(broken))
    page.locator('[data-testid="stAlertContentError"]').filter(has_text="broken.zip").wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, artifacts_dir, "browser-09-broken-zip.png")


# --------------------------------------------------------------------------- passes, sharing

DIFF_FILLS = """() => {
  const host = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .find(h => h.shadowRoot && h.shadowRoot.querySelector('.hl-stage svg'));
  if (!host) return {};
  const count = (c) => host.shadowRoot.querySelectorAll(
    `g.node path[fill="${c}"], g.node polygon[fill="${c}"]`).length;
  return {added: count('""" + ADDED_FILL + """'), changed: count('""" + CHANGED_FILL + """'),
          ghosts: host.shadowRoot.querySelectorAll('g.node[id^="ghost:"]').length,
          svg: host.shadowRoot.querySelector('.hl-root').dataset.svgId};
}"""


def test_step_through_passes_with_the_buttons(server, new_page, artifacts_dir):
    """Issue 4: a per-pass dump (the transformer's, as XLA wrote it, in a .tar.xz):
    step forward three times, the URL carries the step, a reload restores it, and the
    graph shows the diff colours."""
    from compiler_bridge.passes import pass_timeline
    path = os.path.join(ROOT, "sample_dumps", "transformer_per_pass.tar.xz")
    dump = open_dump(path)
    tl = pass_timeline(dump, dump.main)
    visible = [s.index for s in tl.visible(True)]
    start = tl.index_of("pass:0023")
    expected = [tl.step(visible[visible.index(start) + k]).stage for k in (1, 2, 3)]
    assert expected[-1] == "pass:0029"                       # layout-assignment

    page = new_page()
    page.set_viewport_size({"width": 1600, "height": 1500})
    open_uploaded(page, server, path)
    pick_stage(page, "(0023)", "algsimp")
    wait_param(page, "stage", "pass:0023")
    wait_idle(page)
    times = []
    for stage in expected:
        before = page.evaluate(DIFF_FILLS).get("svg")
        t0 = time.time()
        button(page, "pass-next").click()
        wait_param(page, "stage", stage)
        page.wait_for_function(f"() => ({DIFF_FILLS})().svg !== {json.dumps(before)}",
                               timeout=30_000)
        times.append(time.time() - t0)
        wait_idle(page)
    TIMINGS["next_step_to_new_graph_s"] = [round(t, 2) for t in times]
    fills = page.evaluate(DIFF_FILLS)
    shot(page, artifacts_dir, "browser-10-pass-step.png")
    # boxes holding changes are amber; the legend says what the colours mean
    assert fills["changed"] > 0, fills
    visible_text(page, "added in this step").wait_for()
    assert "30 · layout-assignment" in stage_value(page)
    # only what changed and its neighbours: the copies layout assignment added (green),
    # the instructions whose layout it changed (amber)
    page.locator(".st-key-pass-only label").click()
    wait_param(page, "changed_only", "1")
    page.wait_for_function(f"() => ({DIFF_FILLS})().added > 0", timeout=30_000)
    wait_idle(page)
    fills = page.evaluate(DIFF_FILLS)
    assert fills["added"] > 0 and fills["changed"] > 0, fills
    page.locator(".hl-root").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-11-only-changed.png")

    # the text diff of the step, side by side
    page.get_by_role("tab", name="Text diff").click()
    page.locator(".hl-diff").first.wait_for()
    page.locator(".hl-diff").first.scroll_into_view_if_needed()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-12-text-diff.png")

    # a reload restores the step (and its diff colours)
    link = href(page)
    page.reload()
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    assert params(page)["stage"] == "pass:0029" and href(page) == link
    assert params(page)["changed_only"] == "1"
    page.wait_for_function(f"() => ({DIFF_FILLS})().added > 0", timeout=30_000)
    assert "30 · layout-assignment" in stage_value(page)
    wait_idle(page)
    shot(page, artifacts_dir, "browser-13-pass-reloaded.png")

    # a click on a point of the timeline chart goes to that step
    points = page.locator(".js-plotly-plot .scatterlayer .trace").first.locator("path.point")
    assert points.count() == len(visible)
    k = visible.index(tl.index_of("pass:0037"))                # the fusion pass
    box = points.nth(k).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_param(page, "stage", "pass:0037")
    wait_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.outside_requests


@pytest.fixture(scope="module")
def mlp_zip(tmp_path_factory) -> str:
    return sample_zip(tmp_path_factory, "mlp_train")


def test_share_a_view_with_another_browser(server, browser, new_page, mlp_zip, artifacts_dir):
    """Issue 6: context A uploads a zip, selects a node, steps to a pass, saves a view
    and copies the link; context B (no session, no upload) opens the link and sees the
    same module, step and selection, and the saved view in the list."""
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=server.rstrip("/"))
    share_id = open_uploaded(page, server, mlp_zip)["dump"]

    # select a node in the graph, then step to the fusion pass: the selection stays
    name = "params_0___b__.1"
    show_whole(page)
    svg_node(page, f"node:{name}").click()
    wait_param(page, "selected", name)
    wait_idle(page)
    pick_stage(page, "25 · fusion", "25 · fusion")
    wait_param(page, "stage", "pass:0024")
    visible_text(page, f"%{name} = ").wait_for()
    wait_idle(page)

    # save the view with a name and a note
    page.locator('[data-testid="stPopover"]').filter(has_text="Save view").click()
    form = page.locator('[data-testid="stForm"]').filter(has_text="Note")
    form.locator(".st-key-save-name input").fill("bias before fusion")
    form.locator(".st-key-save-note textarea").fill("see how the bias add is fused")
    form.locator(".st-key-save-author input").fill("Ada")
    form.get_by_role("button", name="Save").click()
    visible_text(page, "Saved views (1)").wait_for()
    page.keyboard.press("Escape")
    wait_idle(page)

    # copy the link (the box's copy button) and read it back from the clipboard
    page.locator('[data-testid="stPopover"]').filter(has_text="Link").click()
    box = page.locator(".hl-link").first           # the Link box (in the component)
    box.wait_for()
    shown = box.locator("code").inner_text().strip()
    box.locator("button").click()
    copied = page.evaluate("navigator.clipboard.readText()").strip()
    assert copied == shown, (copied, shown)
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(copied).query))
    assert copied.startswith(server + "?") and q == params(page)      # the page's state
    assert q["dump"] == share_id and q["stage"] == "pass:0024" and q["selected"] == name
    shot(page, artifacts_dir, "browser-14-copy-link.png")
    page.keyboard.press("Escape")

    # context B: a fresh browser context, no session, nothing uploaded
    other = new_page()
    other.goto(copied)
    other.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    visible_text(other, f"%{name} = ").wait_for()                # the inspector
    selected = other.locator(".hl-selected")
    selected.wait_for()
    assert selected.get_attribute("id") == f"node:{name}"
    assert "25 · fusion" in stage_value(other)                    # the step
    assert "jit_train_step" in select_value(other, "pick-module")
    sidebar = other.locator('section[data-testid="stSidebar"]')
    sidebar.get_by_text("Saved views (1)").wait_for()
    view = sidebar.get_by_role("button", name="bias before fusion")
    view.wait_for()
    sidebar.get_by_text("see how the bias add is fused").wait_for()
    wait_idle(other)
    shot(other, artifacts_dir, "browser-15-shared-view.png")

    # B restores the saved view after moving away
    button(other, "pass-next").click()
    wait_param(other, "stage", "pass:0025")
    wait_idle(other)
    view.click()
    wait_param(other, "stage", "pass:0024")
    assert params(other)["selected"] == name
    assert other.locator('[data-testid="stException"]').count() == 0
    assert not page.outside_requests and not other.outside_requests


# --------------------------------------------------------------------------- runtimes

OVERLAY_DRAWN = """() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .some(h => h.shadowRoot && [...h.shadowRoot.querySelectorAll('svg g.node text')]
        .some(t => t.textContent.startsWith('◷ ')))"""
SCATTER = """() => [...document.querySelectorAll('.js-plotly-plot')].find(p => p.layout &&
    String((p.layout.title || {}).text || '').includes('predicted vs measured'))"""
SCATTER_NAMES = f"""() => ({SCATTER})().data.filter(t => t.mode === 'markers')
    .flatMap(t => t.customdata.map(c => c[0]))"""
POINT_AT = f"""(name) => {{
  const gd = ({SCATTER})();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  for (const t of gd.data) {{
    const i = (t.customdata || []).findIndex(c => c[0] === name);
    if (i >= 0) return {{x: box.left + xa._offset + xa.l2p(xa.d2l(t.x[i])),
                         y: box.top + ya._offset + ya.l2p(ya.d2l(t.y[i]))}};
  }}
  return null;
}}"""


def test_runtime_overlay_scatter_and_click(server, new_page, transformer_zip, artifacts_dir):
    """Issue 5: open a sample with a trace, switch the overlay to "measured" (the graph is
    coloured, the URL carries it), the scatter shows one point per matched kernel, and
    clicking a point selects that node (the URL carries selected=...)."""
    import re

    from compiler_bridge.perf import runtime_report
    report = runtime_report(open_dump(sample("transformer")), device="cpu", auto_model=False)
    measured = sorted(r.instruction for r in report.measured_rows)
    slowest = max(report.measured_rows, key=lambda r: r.measured_us).instruction

    page = new_page()
    open_uploaded(page, server, transformer_zip)

    # the overlay: a sidebar control, in the URL, colours and values in the graph
    t0 = time.time()
    page.locator(".st-key-pick-overlay button").filter(
        has_text=re.compile(r"^\s*measured\s*$")).click()
    wait_param(page, "overlay", "measured")
    page.wait_for_function(OVERLAY_DRAWN, timeout=30_000)
    TIMINGS["overlay_to_coloured_graph_s"] = round(time.time() - t0, 2)
    visible_text(page, "measured µs per execution (median)").wait_for()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-16-runtime-overlay.png")

    # the Runtimes tab: one point per matched kernel
    t0 = time.time()
    page.get_by_role("tab", name="Runtimes").click()
    page.wait_for_function(f"() => !!({SCATTER})()", timeout=30_000)
    TIMINGS["runtimes_tab_to_scatter_s"] = round(time.time() - t0, 2)
    wait_idle(page)
    assert sorted(page.evaluate(SCATTER_NAMES)) == measured
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    assert chart.locator(".scatterlayer path.point").count() == len(measured)
    # the module's step time, predicted and measured, above the metrics
    step = page.locator("p", has_text="Step time:").first
    step.scroll_into_view_if_needed()
    assert "measured (median step while profiling)" in step.inner_text()
    shot(page, artifacts_dir, "browser-17a-runtime-step-time.png")
    chart.scroll_into_view_if_needed()
    wait_idle(page)
    shot(page, artifacts_dir, "browser-17-runtime-panel.png")

    # a click on the slowest kernel's point selects it in the graph
    at = page.evaluate(POINT_AT, slowest)
    t0 = time.time()
    page.mouse.click(at["x"], at["y"])
    wait_param(page, "selected", slowest)
    TIMINGS["point_click_to_url_s"] = round(time.time() - t0, 2)
    assert params(page)["overlay"] == "measured"
    selected = page.locator(".hl-selected")
    selected.wait_for()
    assert selected.get_attribute("id") == f"node:{slowest}"
    visible_text(page, f"%{slowest} = ").wait_for()             # the inspector
    wait_idle(page)
    page.locator(".hl-root").scroll_into_view_if_needed()
    shot(page, artifacts_dir, "browser-18-runtime-selected.png")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not page.outside_requests


def _stored_tab_lists(page, server: str) -> str:
    """The text of the Stored tab on a page without a dump."""
    page.goto(server)
    page.get_by_text("See what XLA did to your program").wait_for()
    sidebar = page.locator('section[data-testid="stSidebar"]')
    sidebar.get_by_role("tab", name="Stored").click()
    panel = sidebar.get_by_role("tabpanel").filter(visible=True).first
    panel.get_by_text("dumps", exact=False).first.wait_for()
    # the heading arrives before its buttons: under load the text was read between them
    # (the list's heading without the dump, once in a clean-clone run)
    panel.locator("button").filter(has_text="·").or_(
        panel.get_by_text("No dumps of yours yet")).first.wait_for()
    return panel.inner_text()


def test_the_stored_list_shows_a_visitor_their_own_dumps(server, new_page, tmp_path_factory,
                                                         artifacts_dir):
    """Issue 17, item 7: anyone could list every stored dump. The browser that uploaded
    a dump finds it again in its Stored list (a cookie), a new browser does not."""
    mine = new_page()
    got = open_uploaded(mine, server, sample_zip(tmp_path_factory, "cond_switch"))
    assert got["dump"]
    # the page writes the cookie from a component once drawn: under load that can come
    # after the dump opens, and a visit before it would find no cookie yet
    mine.wait_for_function(f"() => document.cookie.includes({visitor.COOKIE + '='!r})",
                           timeout=30_000)
    listed = _stored_tab_lists(mine, server)                 # a later visit, same browser
    shot(mine, artifacts_dir, "visitor-own-dumps.png")
    assert "Your dumps" in listed and "cond_switch" in listed
    stranger = _stored_tab_lists(new_page(), server)
    assert "cond_switch" not in stranger and "No dumps of yours yet" in stranger
