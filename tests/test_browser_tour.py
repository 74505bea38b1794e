"""Issue 16 in a real browser: what a new user saw on a tour (labels and layout). The
AppTest and unit tests of the same issue are in test_tour.py; the helpers, the server
and the browser come from tests/support/."""

from __future__ import annotations

import glob
import os
import re

import pytest
from conftest import sample
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.browser import GRAPH_DRAWN
from tests.support.pages import open_uploaded, shot, upload, wait_idle, wait_param
from tests.support.samples import sample_zip

pytestmark = [pytest.mark.browser]


@pytest.fixture
def site(server, new_page):
    """The app server's address and a new-page maker."""
    return server, new_page


@pytest.fixture(scope="module")
def zips(tmp_path_factory) -> dict[str, str]:
    return {n: sample_zip(tmp_path_factory, n) for n in ("transformer", "mlp_train")}


def entry_count(name: str, stage: str = "after_optimizations") -> int:
    """Instructions of the ENTRY computation in XLA's text of that stage."""
    path = glob.glob(os.path.join(sample(name), f"*[._]{stage}.txt"))[0]
    text = open(path).read()
    body = re.search(r"^ENTRY .*?\{\n(.*?)\n\}", text, re.S | re.M).group(1)
    return sum(1 for line in body.splitlines() if " = " in line)


def live_value(page, key: str, want: str, timeout: float = 30_000) -> str:
    """A keyed selectbox's shown value once it holds ``want`` (or what it holds after
    ``timeout`` ms): the combobox's value is set after it is drawn, and a redrawn one
    keeps a stale copy until the new one is in."""
    read = f"""() => [...document.querySelectorAll(
        '.st-key-{key}[data-stale=false] input')].map(i => i.value).join(' ')"""
    try:
        page.wait_for_function(f"(want) => ({read})().includes(want)", arg=want,
                               timeout=timeout)
    except Exception:                  # the assertion that follows says what it showed
        pass
    return page.evaluate(read)


def open_two(page, url: str, zips) -> None:
    page.goto(url)
    page.get_by_text("See what XLA did to your program").wait_for()
    upload(page, zips["transformer"])
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    first = wait_param(page, "dump")["dump"]
    wait_idle(page)
    page.locator(".st-key-search-q input").fill("dot")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.locator(".st-key-search-q input").blur()     # the user goes to the sidebar
    wait_idle(page)
    upload(page, zips["mlp_train"])
    other = ("(d) => new URLSearchParams(location.search).get('dump') && "
             "new URLSearchParams(location.search).get('dump') !== d")
    try:
        page.wait_for_function(other, arg=first, timeout=45_000)
    except PlaywrightTimeout:
        # a rerun that re-rendered the sidebar as the file was set dropped it (seen once
        # on a loaded 2-core run): the user picks the file again
        wait_idle(page)
        upload(page, zips["mlp_train"])
        page.wait_for_function(other, arg=first, timeout=60_000)
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)
    # the page settles on the new dump (the old one's page can still be up a moment)
    live_value(page, "pick-computation", f"({entry_count('mlp_train'):,})")
    wait_idle(page)


# --------------------------------------------------------------------------- item 8

def test_item8_the_computation_picker_shows_the_new_dumps_count(site, zips, artifacts_dir):
    url, make_page = site
    old, new = entry_count("transformer"), entry_count("mlp_train")
    assert old != new
    page = make_page()
    open_two(page, url, zips)
    # the page settles on the new dump (the old one's graph can still be up a moment)
    shot(page, artifacts_dir, "tour-08-second-upload.png")
    shown = live_value(page, "pick-computation", f"({new:,})")
    assert f"({new:,})" in shown and f"({old:,})" not in shown, shown


def test_item8_the_computation_picker_follows_the_stage(site, zips):
    """Before and after optimizations the ENTRY has one name (main.30) and other counts:
    the picker shows the count of the stage shown."""
    url, make_page = site
    from tests.support.pages import pick_stage
    after = entry_count("transformer")
    before = entry_count("transformer", "before_optimizations")
    assert after != before
    page = make_page()
    open_uploaded(page, url, zips["transformer"])
    assert f"({after:,})" in live_value(page, "pick-computation", f"({after:,})")
    pick_stage(page, "before", "before optimizations")
    wait_param(page, "stage", "before_optimizations")
    wait_idle(page)
    shown = live_value(page, "pick-computation", f"({before:,})")
    assert f"({before:,})" in shown and f"({after:,})" not in shown, shown


def test_item8_the_compare_picker_follows_the_step(site):
    """Stepping to the next pass step: 'vs the previous step (N)' names the new step's
    previous one, not the last step's."""
    url, make_page = site
    from compiler_bridge import open_dump
    from compiler_bridge.passes import pass_timeline
    from tests.support.pages import button, pick_stage
    path = os.path.join(os.path.dirname(sample("transformer")), "transformer_per_pass.tar.xz")
    dump = open_dump(path)
    tl = pass_timeline(dump, dump.main)
    visible = [s.index for s in tl.visible(True)]
    start = tl.index_of("pass:0023")
    nxt = tl.step(visible[visible.index(start) + 1])
    prev_of_start, prev_of_next = tl.previous_ok(start), tl.previous_ok(nxt.index)
    assert prev_of_start != prev_of_next
    page = make_page()
    page.set_viewport_size({"width": 1600, "height": 1500})
    open_uploaded(page, url, path)
    pick_stage(page, "(0023)", "algsimp")
    wait_param(page, "stage", "pass:0023")
    wait_idle(page)
    assert f"previous step ({prev_of_start})" in live_value(page, "pass-compare",
                                                           f"({prev_of_start})")
    button(page, "pass-next").click()
    wait_param(page, "stage", nxt.stage)
    wait_idle(page)
    shown = live_value(page, "pass-compare", f"({prev_of_next})")
    assert f"previous step ({prev_of_next})" in shown, shown


# --------------------------------------------------------------------------- item 11

def test_item11_the_search_text_does_not_carry_over_to_a_new_dump(site, zips):
    url, make_page = site
    page = make_page()
    open_two(page, url, zips)
    assert page.locator(".st-key-search-q input").input_value() == ""


# --------------------------------------------------------------------------- item 10

PILLS = """(key) => {
  const box = document.querySelector('.st-key-' + key.replace(/[^a-zA-Z0-9_-]/g, '-'));
  if (!box) return null;
  const pills = [...box.querySelectorAll('button')];
  const seen = (el) => {            // inside every clipping ancestor up to the page
    const r = el.getBoundingClientRect();
    for (let a = el.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = a.getBoundingClientRect();
        if (r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1
            || r.bottom > c.bottom + 1) return false;
      }
    }
    return r.width > 0 && r.height > 0;
  };
  return {total: pills.length, visible: pills.filter(seen).length};
}"""


def test_item10_every_operand_chip_is_visible(site, zips, artifacts_dir):
    """tuple.3 (the transformer's ROOT) has 11 operands: all 11 chips show, wrapped."""
    from compiler_bridge import open_dump
    url, make_page = site
    dump = open_dump(sample("transformer"))
    ops = dump.stage(dump.main, "after_optimizations").find("tuple.3").operands
    assert len(ops) == 11
    page = make_page()
    open_uploaded(page, url, zips["transformer"])
    page.goto(page.evaluate("location.href") + "&selected=tuple.3")
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)
    key = "refs:Operands:tuple.3"
    css = ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)   # Streamlit's class for a key
    page.locator(css).first.scroll_into_view_if_needed()
    # the chips' box can stand empty for a moment while a rerun redraws it
    try:
        page.wait_for_function(f"(key) => ({PILLS})(key)?.total === {len(ops)}", arg=key,
                               timeout=30_000)
    except PlaywrightTimeout:
        pass                                    # the assert below says what was there
    got = page.evaluate(PILLS, key)
    shot(page, artifacts_dir, "tour-10-operand-chips.png")
    assert got == {"total": 11, "visible": 11}, got


CHART_BOXES = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter(c => c.getBoundingClientRect().height > 0).map(c => {
    const box = (sel) => { const e = c.querySelector(sel);
      if (!e) return null; const r = e.getBoundingClientRect();
      return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
    const ticks = (sel) => [...c.querySelectorAll(sel)].map(t => t.textContent)
      .filter(t => t);
    const log = [...c.querySelectorAll('.xaxislayer-above, .yaxislayer-above')];
    return {xtitle: box('.g-xtitle text'), legend: box('.legend'),
            xticks: ticks('.xaxislayer-above .xtick text'),
            yticks: ticks('.yaxislayer-above .ytick text'), axes: log.length};
  })"""


def _overlap(a, b) -> bool:
    return a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]


def test_item11_the_pass_timeline_axis_title_is_clear_of_its_legend(site, artifacts_dir):
    url, make_page = site
    path = os.path.join(os.path.dirname(sample("transformer")), "transformer_per_pass.tar.xz")
    page = make_page()
    page.set_viewport_size({"width": 1600, "height": 1500})
    open_uploaded(page, url, path)
    page.wait_for_function(f"() => ({CHART_BOXES})().some(c => c.xtitle && c.legend)",
                           timeout=30_000)
    wait_idle(page)
    charts = [c for c in page.evaluate(CHART_BOXES) if c["xtitle"] and c["legend"]]
    shot(page, artifacts_dir, "tour-11-pass-timeline.png")
    assert charts
    for c in charts:
        assert not _overlap(c["xtitle"], c["legend"]), c


def test_item11_log_axes_label_each_tick_once(site, zips, artifacts_dir):
    """The runtime scatter and roofline: log axes whose labels name their magnitude
    (plotly's default between decades read '2, 5, 2, 5')."""
    url, make_page = site
    page = make_page()
    open_uploaded(page, url, zips["transformer"])
    page.get_by_role("tab", name="Runtimes").click()
    page.wait_for_function(f"() => ({CHART_BOXES})().filter(c => c.xticks.length).length >= 2",
                           timeout=30_000)
    wait_idle(page)
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    shot(page, artifacts_dir, "tour-11-log-axes.png")
    charts = page.evaluate(CHART_BOXES)[:2]            # scatter, roofline
    for c in charts:
        for ticks in (c["xticks"], c["yticks"]):
            assert len(ticks) >= 2 and len(set(ticks)) == len(ticks), ticks


def test_item11_an_error_banner_is_clear_of_the_header(site, tmp_path, artifacts_dir):
    url, make_page = site
    page = make_page()
    page.goto(url)
    page.get_by_text("See what XLA did to your program").wait_for()
    notes = tmp_path / "notes.txt"
    notes.write_text("not an XLA dump\n")
    upload(page, str(notes))
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="no XLA dump files found")
    alert.wait_for()
    wait_idle(page)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, artifacts_dir, "tour-11-error-banner.png")
    header = page.locator('header[data-testid="stHeader"]').bounding_box()
    banner = alert.bounding_box()
    assert header is not None and banner is not None
    assert banner["y"] >= header["y"] + header["height"] - 1, (banner, header)


# --------------------------------------------------------------------------- item 3

TIMELINE_BAR = """(name) => {
  const chart = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .find(c => [...c.querySelectorAll('.ytick text')].some(t => t.textContent === 'thread 1'));
  if (!chart) return null;
  const plot = chart.querySelector('.js-plotly-plot');
  const bars = [...chart.querySelectorAll('.barlayer .trace')];
  for (let t = 0; t < bars.length; t++) {
    const data = plot.data[t];
    const k = (data.customdata || []).findIndex(c => c[0] === name);
    if (k < 0) continue;
    const r = bars[t].querySelectorAll('.point')[k].getBoundingClientRect();
    return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width,
            lanes: [...chart.querySelectorAll('.ytick text')].map(e => e.textContent)};
  }
  return null;
}"""


def test_item3_the_trace_timeline_hovers_and_clicks_to_the_graph(site, tmp_path_factory,
                                                                  artifacts_dir):
    import zipfile

    from tests.support.samples import ASYNC
    url, make_page = site
    out = tmp_path_factory.mktemp("zips") / "attn_async.zip"
    with zipfile.ZipFile(out, "w") as z:
        for dirpath, _, files in os.walk(ASYNC):
            for fn in files:
                full = os.path.join(dirpath, fn)
                z.write(full, os.path.join("attn_async", os.path.relpath(full, ASYNC)))
    page = make_page()
    page.set_viewport_size({"width": 1600, "height": 1400})
    open_uploaded(page, url, str(out))
    page.get_by_role("tab", name="Runtimes").click()
    name = "copy_bitcast_fusion.3"
    page.wait_for_function(f"() => !!({TIMELINE_BAR})({name!r})", timeout=30_000)
    wait_idle(page)
    page.evaluate("""() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
      .find(c => [...c.querySelectorAll('.ytick text')].some(t => t.textContent === 'thread 1'))
      .scrollIntoView({block: 'center'})""")
    page.wait_for_timeout(300)
    bar = page.evaluate(TIMELINE_BAR, name)
    assert {"thread 1", "thread 2"} <= set(bar["lanes"]) and bar["w"] > 2, bar
    page.mouse.move(bar["x"], bar["y"])
    page.locator(".hoverlayer .hovertext").filter(has_text=name).first.wait_for()
    shot(page, artifacts_dir, "tour-03-trace-timeline.png")
    page.mouse.click(bar["x"], bar["y"])
    wait_param(page, "selected", name)
