"""User actions timed in headless Chromium: from the action to its result on screen.

Each row of the table below is one thing a user does; the time is measured in the page
(``performance.now()``: from the first DOM event of the action, or from navigation start
for a page load, to the first animation frame in which a DOM condition holds that means
the result is drawn), so it includes the Streamlit round trip, the script run, the
transfer and the drawing, and excludes Playwright's own waiting.

| row | action -> result |
|---|---|
| open_small / open_small_cold | fresh browser context opens the transformer sample (755 instructions) -> the first ``g.node`` of the graph in the page. Warm: the server drew this view before; cold: the first page after the server started |
| open_big / open_big_cold | the same for ``generated/scale_20k`` (23.9k instructions, opened by its share id). Cold: the first open of that dump in a server that just showed the small sample |
| first_page | ``streamlit run app.py -- --dump sample_dumps/transformer`` (as ``make run``) started -> first graph drawn in a page opened as soon as the server answers its health check |
| click_inspector | click a drawn node (a different one each time) -> the inspector's ``%name = `` line visible. The first click of the page (indexes built) is reported apart |
| search_select | sum of: Enter in the search box (a name typed) -> the hits list for it, and: pick the hit -> ``selected=`` in the URL and the node drawn, highlighted, inside the graph's frame. From the default view; the first search is reported apart |
| dblclick_fusion | double-click a fusion of 3+ ops (small module, default view reloaded untimed before each) -> its box ``group:fusion:NAME`` drawn with more nodes |
| open_big_part | double-click one of the biggest closed groups of the 23.9k module's default view (reloaded untimed before each) -> a new SVG with more nodes, the group drawn open |
| next_step | per-pass dump (transformer_per_pass.tar.xz) at pass:0023, press J -> a new SVG and ``stage=`` moved on |
| overlay_toggle | sidebar Runtime overlay ``measured`` / ``none`` -> a new SVG with / without the ``◷`` runtime labels (samples: both directions; the first toggle, which reads the trace, reported apart) |
| shared_link | a link made in the app (23.9k module, a group open, a node in it selected) opened in a fresh context -> graph drawn with that node highlighted |
| long_task | longest main-thread task (PerformanceObserver ``longtask``, observing from before the page's first script) over: open the 23.9k module, open its biggest group (and a part of it), click a node, drag + wheel zoom, search + pick, fit; per-phase maxima and the longest animation frame's scripts in the notes |

Each app started gets a fresh temporary store ($HLOLENS_DATA) and cache ($HLOLENS_CACHE) and
a free port, and is stopped (its process group) at the end, errors included. ``--root``
runs the app of another checkout (its ``app.py`` with this venv's Python); the inputs
(sample dumps, ``generated/scale_20k``) always come from this checkout, so both sides read
the same bytes. A row that fails on one side is recorded as ``n/a: why``.

    .venv/bin/python -m bench.speed.interaction_bench --root /tmp/before --label before --repeat 3
    .venv/bin/python -m bench.speed.interaction_bench --label after --repeat 3 --table before,after
    .venv/bin/python -m bench.speed.interaction_bench --table before,after --no-run   # table only

Results: ``bench/results/interaction-<label>.json``; BENCHMARKS.md is written only with
``--table`` (section ``interaction_bench``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request


from bench.common import ROOT, command, machine, write_section
from tests.support.browser import launch, start_app

RESULTS = os.path.join(ROOT, "bench", "results")
SMALL = os.path.join(ROOT, "sample_dumps", "transformer")
BIG = os.path.join(ROOT, "generated", "scale_20k")
PER_PASS = os.path.join(ROOT, "sample_dumps", "transformer_per_pass.tar.xz")
PASS_START = "pass:0023"

ROWS = ["open_small", "open_small_cold", "open_big", "open_big_cold", "first_page",
        "click_inspector", "search_select", "dblclick_fusion", "open_big_part", "next_step",
        "overlay_toggle", "shared_link", "long_task"]
COLD_ROWS = {"open_small_cold", "open_big_cold", "first_page"}
BIG_ROWS = {"open_big", "open_big_cold", "open_big_part", "shared_link", "long_task"}
GOALS = {"open_small": 1.5, "open_small_cold": 3.0, "open_big": 2.0, "open_big_cold": 4.0,
         "first_page": 4.0, "click_inspector": 0.15, "search_select": 0.3,
         "dblclick_fusion": 0.5, "open_big_part": 1.0, "next_step": 0.6,
         "overlay_toggle": 0.5, "shared_link": 3.0, "long_task": 0.2}
WHAT = {
    "open_small": "open the transformer sample (755 instr.), warm server → graph drawn",
    "open_small_cold": "the same, first page after server start",
    "open_big": "open scale_20k (23.9k instr.), warm → graph drawn",
    "open_big_cold": "the same, first open of that dump after server start",
    "first_page": "`streamlit run app.py -- --dump sample_dumps/transformer` → graph drawn",
    "click_inspector": "click a node → inspector shows its `%name = ` line",
    "search_select": "search a name (Enter → hits) + pick the hit → selected, drawn in frame",
    "dblclick_fusion": "double-click a fusion → its fused computation drawn in place",
    "open_big_part": "scale_20k: double-click a big closed group → new SVG drawn",
    "next_step": "per-pass dump, press J → graph of the next step drawn",
    "overlay_toggle": "runtime overlay measured / none → graph recoloured",
    "shared_link": "link (scale_20k, group open, node selected), fresh context → drawn, selected",
    "long_task": "longest main-thread task, fixed sequence on scale_20k",
}

TIMEOUT_MS = int(os.environ.get("IB_TIMEOUT_MS", "120000"))
VIEWPORT = {"width": 1600, "height": 1100}

# Installed in every document before its scripts: long-task observers and DOM probes.
INIT_JS = r"""
(() => {
  const ib = window.__ib = {long: [], loaf: [], gen: 0, t0: null, t1: null};
  try {
    new PerformanceObserver(l => { for (const e of l.getEntries())
      ib.long.push([e.startTime, e.duration]); }).observe({type: 'longtask', buffered: true});
  } catch (e) { ib.noLong = String(e); }
  try {
    new PerformanceObserver(l => { for (const e of l.getEntries())
      ib.loaf.push([e.startTime, e.duration, e.blockingDuration || 0,
        (e.scripts || []).sort((a, b) => b.duration - a.duration).slice(0, 2).map(x =>
          `${x.invokerType} ${(x.sourceURL || x.invoker || '').split('/').pop()}`
          + `${x.sourceFunctionName ? ' ' + x.sourceFunctionName : ''} ${Math.round(x.duration)}ms`)
          .join('; '),
        Math.round(e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0)]); })
      .observe({type: 'long-animation-frame', buffered: true});
  } catch (e) { /* optional */ }
  ib.host = () => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .find(h => h.shadowRoot && h.shadowRoot.querySelector('.hl-stage svg'));
  ib.svg = () => { const h = ib.host(); return h ? h.shadowRoot.querySelector('.hl-stage svg') : null; };
  ib.nodes = () => { const s = ib.svg(); return s ? s.querySelectorAll('g.node').length : 0; };
  ib.svgId = () => { const h = ib.host();
    const r = h && h.shadowRoot.querySelector('.hl-root'); return r ? (r.dataset.svgId || '') : ''; };
  ib.el = (id) => { const h = ib.host(); return h ? h.shadowRoot.getElementById(id) : null; };
  ib.inFrame = (id) => {
    const h = ib.host(); if (!h) return false;
    const el = h.shadowRoot.getElementById(id); if (!el) return false;
    const s = h.shadowRoot.querySelector('.hl-stage').getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    return r.width > 0 && x >= s.left && x <= s.right && y >= s.top && y <= s.bottom;
  };
  ib.isSelected = (id) => { const el = ib.el(id); return !!el && el.classList.contains('hl-selected'); };
  ib.runtimeLabels = () => { const s = ib.svg(); return !!s && [...s.querySelectorAll('g.node text')]
    .some(t => t.textContent.startsWith('\u25f7 ')); };
  ib.code = (text) => {     // a code box of the page, or the inspector card's HLO line
    const boxes = [...document.querySelectorAll('[data-testid=stCode] code')];
    for (const h of document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
      if (h.shadowRoot) boxes.push(...h.shadowRoot.querySelectorAll('.hl-card-text'));
    return boxes.some(c => c.textContent.includes(text) && c.checkVisibility());
  };
  ib.param = (k) => new URL(location.href).searchParams.get(k);
  ib.idle = () => !document.querySelector('[data-testid=stStatusWidget]');
  ib.arm = (types) => {
    const gen = ++ib.gen; ib.t0 = null; ib.t1 = null;
    const f = () => { if (ib.gen === gen && ib.t0 === null) ib.t0 = performance.now(); };
    for (const t of types) document.addEventListener(t, f, {capture: true, once: true});
  };
  ib.drawnNodes = () => {       // g.node ids drawn whole inside the graph's frame
    const h = ib.host(); if (!h) return [];
    const s = h.shadowRoot.querySelector('.hl-stage').getBoundingClientRect();
    return [...h.shadowRoot.querySelectorAll('g.node')].filter(g => {
      const r = g.getBoundingClientRect();
      return r.left >= s.left && r.right <= s.right && r.top >= s.top && r.bottom <= s.bottom
        && r.width > 8 && r.height > 4;
    }).map(g => [g.id, g.textContent.replace(/\s+/g, ' ').trim()]);
  };
})();
"""

GRAPH_DRAWN = "() => __ib.nodes() > 0"


class NotMeasurable(Exception):
    """A row that cannot be measured on this side (says why)."""


# --------------------------------------------------------------------------- inputs

def wait_for_big(timeout: float) -> bool:
    """generated/scale_20k, once `make scale` has finished writing it."""
    deadline = time.time() + timeout
    last = None
    announced = False
    while True:
        files = sorted(glob.glob(os.path.join(BIG, "*after_optimizations.txt")))
        if files:
            sig = [(f, os.path.getsize(f), os.path.getmtime(f)) for f in
                   sorted(glob.glob(os.path.join(BIG, "*")))]
            age = time.time() - max(s[2] for s in sig)
            if age > 30 or (sig == last and age > 3):
                return True
            last = sig
        if time.time() > deadline:
            return False
        if not announced:
            print(f"waiting for {BIG} (make scale)…", flush=True)
            announced = True
        time.sleep(2)


def hlo_instructions(folder: str) -> tuple[list[tuple[str, str]], set[str]]:
    """(name, opcode) of the ENTRY computation of the dump's after-optimizations module,
    and every instruction name of that module (read from the text, not with the app's code,
    so the bench does not depend on the checkout it measures)."""
    files = [f for f in glob.glob(os.path.join(folder, "*after_optimizations.txt"))]
    if not files:
        return [], set()
    entry: list[tuple[str, str]] = []
    names: set[str] = set()
    in_entry = False
    line_re = re.compile(r"^\s*(?:ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s.*?\s([a-z][a-z0-9\-]*)\(")
    with open(sorted(files)[0], encoding="utf-8") as f:
        for line in f:
            if line.startswith("ENTRY "):
                in_entry = True
                continue
            if line.startswith("}"):
                in_entry = False
                continue
            m = line_re.match(line)
            if m:
                names.add(m.group(1))
                if in_entry:
                    entry.append((m.group(1), m.group(2)))
    return entry, names


def search_names(folder: str, n: int) -> list[str]:
    """n ENTRY instructions, spread through the schedule, whose name is in no other name
    (so the hits list for it is short): fusions and dots, no parameters or constants."""
    entry, names = hlo_instructions(folder)
    ok = [nm for nm, op in entry if op in ("fusion", "dot", "convolution", "custom-call",
                                           "reduce", "scatter", "gather", "while")
          and not any(nm != o and nm in o for o in names)]
    if not ok:
        return []
    step = max(1, len(ok) // (n + 1))
    picked = ok[step::step][:n]
    return picked or ok[:n]


# --------------------------------------------------------------------------- the app

class App:
    """``streamlit run app.py`` of a checkout on a free port with its own store."""

    def __init__(self, root: str, dump: str | None = None, log_dir: str | None = None):
        self.root = root
        self.data = tempfile.mkdtemp(prefix="hlolens-ib-")
        self.env = dict(os.environ, HLOLENS_DATA=os.path.join(self.data, "store"),
                        HLOLENS_CACHE=os.path.join(self.data, "cache"))
        for k in ("HLOLENS_DUMP", "PYTHONPATH"):
            self.env.pop(k, None)
        self.dump = dump
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.started = 0.0
        self.log_path = os.path.join(self.data, "server.log")

    def store_add(self, path: str) -> str:
        """The share id of ``path`` added to this app's store by the checkout's own CLI."""
        r = subprocess.run([sys.executable, "-m", "compiler_bridge", "store", "add", path],
                           cwd=self.root, env=self.env, capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0 or not r.stdout.strip():
            raise RuntimeError(f"store add {os.path.basename(path)} failed: "
                               f"{(r.stderr or r.stdout).strip()[-400:]}")
        return r.stdout.split()[0]

    def start(self, timeout: float = 120) -> None:
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - open while the server runs
        self.started = time.perf_counter()
        # asked every 50 ms and in a process group of its own: first_page times the start,
        # and stop() ends the layout workers it leaves behind with it
        try:
            self.proc, self.url = start_app(
                self.env, self.log, timeout, self.root,
                app_args=("--dump", self.dump) if self.dump else (), poll=0.05,
                new_session=True)
        except RuntimeError as e:
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"{e}:\n{tail}") from None

    def log_tail(self, n: int = 3000) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(10)
        if self.proc is not None:
            try:                                   # layout workers left in its group
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.log.close()
        self.proc = None

    def cleanup(self, keep: bool) -> None:
        self.stop()
        if not keep:
            shutil.rmtree(self.data, ignore_errors=True)


# --------------------------------------------------------------------------- the browser

def until(cond: str) -> str:
    """A wait_for_function body: ``cond(arg)``, noting the first frame it holds in __ib.t1."""
    return (f"(a) => {{ const ok = !!(({cond})(a)); "
            "if (ok && __ib.t1 === null) __ib.t1 = performance.now(); return ok; }")


class Bench:
    def __init__(self, browser, args):
        self.browser = browser
        self.args = args
        self.contexts: list = []

    def new_page(self):
        ctx = self.browser.new_context(viewport=VIEWPORT)
        ctx.add_init_script(INIT_JS)
        page = ctx.new_page()
        page.set_default_timeout(60_000)
        self.contexts.append(ctx)
        self.last_page = page
        return page

    def close(self, page) -> None:
        ctx = page.context
        if ctx in self.contexts:
            self.contexts.remove(ctx)
        ctx.close()

    def failed(self, row: str) -> None:
        """A screenshot of the page a failed row left (with --shots), then no pages open."""
        page = getattr(self, "last_page", None)
        if page is not None and page.context in self.contexts:
            self.shot(page, row + "-failed")
        self.close_all()

    def close_all(self) -> None:
        for ctx in list(self.contexts):
            try:
                ctx.close()
            except Exception:  # noqa: BLE001 - browser may be gone
                pass
        self.contexts.clear()

    def shot(self, page, row: str) -> None:
        if self.args.shots:
            os.makedirs(self.args.shots, exist_ok=True)
            try:
                page.screenshot(path=os.path.join(self.args.shots,
                                                  f"{self.args.label}-{row}.png"))
            except Exception as e:  # noqa: BLE001 - a screenshot is a nicety
                print(f"  (screenshot of {row} failed: {e})", flush=True)

    # ---- primitives

    def wait(self, page, cond: str, arg, what: str) -> None:
        """Until ``cond(arg)`` holds in an animation frame (noted in __ib.t1)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            page.wait_for_function(until(cond), arg=arg, polling="raf", timeout=TIMEOUT_MS)
        except PlaywrightTimeout:
            raise NotMeasurable(f"{what} not seen within {TIMEOUT_MS / 1000:.0f} s") from None

    def load(self, page, url: str, cond: str = GRAPH_DRAWN, arg=None,
             what: str = "a graph") -> float:
        """Navigate ``page`` to ``url``: seconds from navigation start to ``cond``."""
        page.goto(url, wait_until="commit")
        self.wait(page, cond, arg, what)
        return page.evaluate("__ib.t1") / 1000

    def timed(self, page, action, cond: str, arg=None, events=("pointerdown",),
              what: str = "the result") -> float:
        """Seconds from the first of ``events`` that ``action`` fires to ``cond``."""
        page.evaluate("(t) => __ib.arm(t)", list(events))
        w0 = time.perf_counter()
        action()
        self.wait(page, cond, arg, what)
        wall = time.perf_counter() - w0
        t0, t1 = page.evaluate("[__ib.t0, __ib.t1]")
        if t0 is None or t1 is None:
            return wall
        return max(0.0, (t1 - t0) / 1000)

    def idle(self, page, settle: float = 0.3) -> None:
        """Until Streamlit finished its run (twice, ``settle`` s apart) and events settled."""
        for _ in range(2):
            time.sleep(settle)
            page.wait_for_function("() => __ib.idle()", timeout=TIMEOUT_MS)

    def node(self, page, element_id: str):
        return page.locator(f'[id="{element_id}"]')

    def drawn(self, page) -> list[tuple[str, str]]:
        return [tuple(x) for x in page.evaluate("__ib.drawnNodes()")]

    def open_view(self, page, url: str) -> None:
        self.load(page, url)
        self.idle(page)


def summary(samples: list[float]) -> dict:
    return {"samples": [round(s, 4) for s in samples], "median": round(statistics.median(samples), 4),
            "min": round(min(samples), 4), "max": round(max(samples), 4)}


# --------------------------------------------------------------------------- the rows

def cold_cycle(bench: Bench, root: str, big_ok: bool, keep: bool) -> dict:
    """Start a server (``make run``'s command), open the small sample as soon as it
    answers (first_page, open_small_cold), then the big module (open_big_cold)."""
    app = App(root, dump=SMALL)
    out: dict = {}
    try:
        big_id = app.store_add(BIG) if big_ok else ""
        app.start()
        page = bench.new_page()
        since_start = time.perf_counter() - app.started
        t = bench.load(page, app.url)
        out["first_page"] = since_start + t
        out["_server_up"] = since_start
        out["open_small_cold"] = t
        bench.shot(page, "first_page")
        bench.close(page)
        if big_id:
            page = bench.new_page()
            out["open_big_cold"] = bench.load(page, f"{app.url}?dump={big_id}")
            bench.shot(page, "open_big_cold")
            bench.close(page)
    finally:
        app.cleanup(keep)
    return out


def row_open(bench: Bench, url: str, n: int, name: str) -> dict:
    times = []
    for i in range(n):
        page = bench.new_page()
        times.append(bench.load(page, url))
        if i == n - 1:
            bench.shot(page, name)
        bench.close(page)
    return summary(times)


def row_click_inspector(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    bench.open_view(page, url)
    nodes = [i[5:] for i, text in bench.drawn(page) if i.startswith("node:")]
    if not nodes:
        raise NotMeasurable("no node drawn whole in the frame")
    # spread over the drawn nodes (a node clicked twice would not change the inspector);
    # the first click (the module's inspector indexes built) is reported apart
    m = n + 1
    picks = [nodes[(k * len(nodes)) // m] for k in range(m)] if len(nodes) >= m else nodes
    times = []
    for k in range(m):
        name = picks[k % len(picks)]
        if k >= len(picks):              # reuse: deselect first with another node
            bench.node(page, f"node:{picks[(k + 1) % len(picks)]}").click()
            bench.idle(page)
        times.append(bench.timed(page, lambda nm=name: bench.node(page, f"node:{nm}").click(),
                                 "(n) => __ib.code('%' + n + ' = ')", arg=name,
                                 what=f"the inspector's %{name} = line"))
        bench.idle(page)
    bench.shot(page, "click_inspector")
    bench.close(page)
    return summary(times[1:]) | {"parts": {"first": round(times[0], 4)},
                                 "note": f"first click {times[0]:.2f}; nodes "
                                         + ", ".join(picks[1:m])}


def _hits_box(page, name: str):
    """The hits selectbox of a search for ``name``."""
    return page.locator('[data-testid="stSelectbox"]').filter(has_text="pick one").filter(
        visible=True).last


def row_search_select(bench: Bench, url: str, folder: str, n: int) -> dict:
    names = search_names(folder, n + 1)     # the first search is reported apart
    if not names:
        raise NotMeasurable("no instruction names found in the dump")
    page = bench.new_page()
    bench.open_view(page, url)
    box = page.locator(".st-key-search-q input").first
    if not box.count():
        raise NotMeasurable("no search box (.st-key-search-q)")
    totals, finds, picks = [], [], []
    for k in range(n + 1):
        name = names[k % len(names)]
        box.fill(name)
        # Enter -> the hits list for this query (its label says how many hits)
        hits_cond = """(n) => [...document.querySelectorAll('[data-testid=stSelectbox]')]
          .some(s => s.checkVisibility() && s.textContent.includes('pick one')
                && !s.closest('[data-stale=true]')
                && [...s.closest('[class*="st-key-search-pick"]')?.classList || []]
                     .some(c => c.startsWith('st-key-search-pick') && c.endsWith(n.replace(/[^\\w-]/g, '-'))))"""
        t_find = bench.timed(page, lambda: box.press("Enter"), hits_cond, arg=name,
                             events=("keydown",), what=f"the hits list for {name}")
        bench.idle(page)
        hits = _hits_box(page, name)
        hits.click()
        page.keyboard.type(name)
        page.wait_for_function(
            """t => { const o = [...document.querySelectorAll('[role="option"]')];
                     return o.length > 0 && o.every(e => e.textContent.includes(t)); }""",
            arg=name, timeout=10_000)
        option = page.get_by_role("option").filter(
            has_text=re.compile(r"^\s*" + re.escape(name) + r" · ")).first
        t_pick = bench.timed(
            page, option.click,
            "(n) => __ib.param('selected') === n && __ib.isSelected('node:' + n)"
            " && __ib.inFrame('node:' + n)", arg=name,
            what=f"node:{name} selected and drawn in the frame")
        bench.idle(page)
        finds.append(t_find)
        picks.append(t_pick)
        totals.append(t_find + t_pick)
    bench.shot(page, "search_select")
    bench.close(page)
    return summary(totals[1:]) | {
        "parts": {"enter_to_hits": summary(finds[1:]), "pick_to_drawn": summary(picks[1:]),
                  "first": round(totals[0], 4)},
        "note": f"Enter→hits {statistics.median(finds[1:]):.2f} + pick→drawn "
                f"{statistics.median(picks[1:]):.2f}; first search {totals[0]:.2f}; "
                f"names {', '.join(names[1:n + 1])}"}


def _ops(text: str) -> int:
    m = re.search(r"· (\d+) ops", text)
    return int(m.group(1)) if m else 0


def _size(text: str) -> int:
    m = re.search(r"([\d,]+) instructions", text)
    return int(m.group(1).replace(",", "")) if m else 0


def row_dblclick_fusion(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    bench.open_view(page, url)
    fusions = [i[5:] for i, text in bench.drawn(page)
               if i.startswith("node:") and " fusion " in f" {text} " and _ops(text) >= 3]
    if not fusions:
        raise NotMeasurable("no fusion of 3+ ops drawn in the default view")
    times = []
    for k in range(n):
        name = fusions[(k * len(fusions)) // n] if len(fusions) >= n else fusions[k % len(fusions)]
        if k:
            bench.open_view(page, url)     # the default view again (untimed)
        before = page.evaluate("__ib.nodes()")
        times.append(bench.timed(
            page, lambda nm=name: bench.node(page, f"node:{nm}").dblclick(),
            "([n, c]) => !!__ib.el('group:fusion:' + n) && __ib.nodes() > c",
            arg=[name, before], events=("dblclick",),
            what=f"group:fusion:{name} drawn open"))
        bench.idle(page)
    bench.shot(page, "dblclick_fusion")
    bench.close(page)
    return summary(times)


def _big_groups(bench: Bench, page) -> list[str]:
    groups = [(i, _size(text)) for i, text in bench.drawn(page) if i.startswith("group:")]
    groups.sort(key=lambda g: -g[1])
    return [g for g, size in groups if size > 1]


OPENED = ("([g, c, s]) => __ib.svgId() !== s && __ib.nodes() > c"
          " && !!__ib.el(g) && !__ib.el(g).matches('g.node')")


def row_open_big_part(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    bench.open_view(page, url)
    groups = _big_groups(bench, page)
    if not groups:
        raise NotMeasurable("no closed group drawn in the default view")
    times, opened = [], []
    for k in range(n):
        gid = groups[k % len(groups)]
        if k:
            bench.open_view(page, url)
        before = page.evaluate("[__ib.nodes(), __ib.svgId()]")
        times.append(bench.timed(page, lambda g=gid: bench.node(page, g).dblclick(), OPENED,
                                 arg=[gid, before[0], before[1]], events=("dblclick",),
                                 what=f"{gid} drawn open"))
        opened.append(gid)
        bench.idle(page)
    bench.shot(page, "open_big_part")
    bench.close(page)
    return summary(times) | {"note": "groups " + ", ".join(dict.fromkeys(opened))}


def row_next_step(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    bench.open_view(page, url + f"&stage={PASS_START}")
    if page.evaluate("__ib.param('stage')") != PASS_START:
        raise NotMeasurable(f"the per-pass dump did not open at {PASS_START}")
    times, stages = [], []
    for _ in range(n):
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        before = page.evaluate("[__ib.svgId(), __ib.param('stage')]")
        times.append(bench.timed(
            page, lambda: page.keyboard.press("j"),
            "([s, st]) => __ib.svgId() !== s && __ib.param('stage') !== st && __ib.nodes() > 0",
            arg=before, events=("keydown",), what="a new SVG for the next step"))
        stages.append(page.evaluate("__ib.param('stage')"))
        bench.idle(page)
    bench.shot(page, "next_step")
    bench.close(page)
    return summary(times) | {"note": f"{PASS_START} → " + " → ".join(stages)}


def row_overlay_toggle(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    bench.open_view(page, url)
    buttons = page.locator(".st-key-pick-overlay button")
    if not buttons.count():
        raise NotMeasurable("no Runtime overlay control (.st-key-pick-overlay)")
    on = buttons.filter(has_text=re.compile(r"^\s*measured\s*$")).first
    off = buttons.filter(has_text=re.compile(r"^\s*none\s*$")).first

    def toggle(button, want: bool) -> float:
        s = page.evaluate("__ib.svgId()")
        t = bench.timed(page, button.click,
                        "([s, w]) => __ib.svgId() !== s && __ib.runtimeLabels() === w",
                        arg=[s, want], what="a new SVG " + ("with" if want else "without")
                        + " runtime labels")
        bench.idle(page)
        return t

    first = toggle(on, True)           # the first one reads the trace: reported apart
    toggle(off, False)
    ons, offs = [], []
    for k in range(n):
        ons.append(toggle(on, True))
        if k == n - 1:
            bench.shot(page, "overlay_toggle")
        offs.append(toggle(off, False))
    bench.close(page)
    return summary(ons + offs) | {
        "parts": {"on": summary(ons), "off": summary(offs), "first_on": round(first, 4)},
        "note": f"on {statistics.median(ons):.2f}, off {statistics.median(offs):.2f}; "
                f"first on after server start {first:.2f}"}


def _open_group_and_select(bench: Bench, page, url: str, marks: dict | None = None
                           ) -> tuple[str, str]:
    """In the big module's default view: open its biggest group and click a node drawn in
    it. Returns (group id, node name). ``marks``: performance.now() at each step's start."""
    marks = {} if marks is None else marks
    marks["load"] = 0.0
    bench.open_view(page, url)
    marks["open_group"] = page.evaluate("performance.now()")
    groups = _big_groups(bench, page)
    if not groups:
        raise NotMeasurable("no closed group drawn in the default view")
    gid = first = groups[0]
    new: list[str] = []
    for _ in range(4):                 # a big group opens into parts: open one of them
        before = page.evaluate("[__ib.nodes(), __ib.svgId()]")
        old = {i for i, _ in bench.drawn(page)}
        bench.node(page, gid).dblclick()
        bench.wait(page, OPENED, [gid, before[0], before[1]], f"{gid} drawn open")
        bench.idle(page)
        drawn = bench.drawn(page)
        new = [i[5:] for i, _ in drawn if i.startswith("node:") and i not in old]
        inner = sorted(((i, _size(t)) for i, t in drawn if i.startswith("group:")
                        and i not in old and _size(t) > 1), key=lambda g: -g[1])
        if new or not inner:
            break
        gid = inner[0][0]
    if not new:
        raise NotMeasurable(f"no node of {first} drawn whole in the frame after opening it")
    name = new[len(new) // 2]
    marks["click"] = page.evaluate("performance.now()")
    bench.node(page, f"node:{name}").click()
    page.wait_for_function("(n) => __ib.param('selected') === n && __ib.code('%' + n + ' = ')",
                           arg=name, timeout=TIMEOUT_MS)
    bench.idle(page)
    return gid, name


def row_shared_link(bench: Bench, url: str, n: int) -> dict:
    page = bench.new_page()
    _, name = _open_group_and_select(bench, page, url)
    time.sleep(1.0)                    # the viewport report (debounced) lands in the URL
    bench.idle(page)
    link = page.evaluate("location.href")
    bench.close(page)
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(link).query))
    if q.get("selected") != name or "expanded" not in q:
        raise NotMeasurable(f"the app's URL lacks the selection or the open group: {link}")
    times = []
    for k in range(n):
        page = bench.new_page()
        times.append(bench.load(page, link, "(n) => __ib.isSelected('node:' + n)", arg=name,
                                what=f"node:{name} drawn selected"))
        if k == n - 1:
            bench.shot(page, "shared_link")
        bench.close(page)
    return summary(times) | {"note": f"?{urllib.parse.urlparse(link).query}"[:300]}


def row_long_task(bench: Bench, url: str, folder: str, n: int) -> dict:
    names = search_names(folder, n)
    worst, phases_all, frames = [], [], []
    for k in range(n):
        page = bench.new_page()
        marks: dict[str, float] = {}
        t_start = time.perf_counter()
        _open_group_and_select(bench, page, url, marks)   # load, open a group (a part), click
        marks["pan_zoom"] = page.evaluate("performance.now()")
        stage = page.locator(".hl-stage").first
        box = stage.bounding_box()
        if box:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(box["x"] + box["width"] / 2 + 150, box["y"] + box["height"] / 2 + 80,
                            steps=8)
            page.mouse.up()
            for _ in range(3):
                page.mouse.wheel(0, -240)
                time.sleep(0.1)
            time.sleep(1.0)
            bench.idle(page)
        marks["search"] = page.evaluate("performance.now()")
        if names:
            target = names[k % len(names)]
            search = page.locator(".st-key-search-q input").first
            search.fill(target)
            search.press("Enter")
            hits = _hits_box(page, target)
            hits.wait_for()
            bench.idle(page)
            hits.click()
            page.keyboard.type(target)
            page.get_by_role("option").filter(
                has_text=re.compile(r"^\s*" + re.escape(target) + r" · ")).first.click()
            page.wait_for_function(   # (drawn or not: the inspector shows it)
                "(n) => __ib.param('selected') === n && __ib.code('%' + n + ' = ')",
                arg=target, timeout=TIMEOUT_MS)
            bench.idle(page)
        marks["fit"] = page.evaluate("performance.now()")
        fit = page.locator(".hl-tools [data-act=fit]").first
        if fit.count():
            fit.click()
            time.sleep(1.0)
            bench.idle(page)
        marks["end"] = page.evaluate("performance.now()")
        long = page.evaluate("__ib.long")
        loaf = page.evaluate("__ib.loaf")
        if page.evaluate("__ib.noLong || ''"):
            raise NotMeasurable("no longtask observer: " + page.evaluate("__ib.noLong"))
        if k == n - 1:
            bench.shot(page, "long_task")
        bench.close(page)
        order = list(marks)
        per = {}
        for a, b in zip(order, order[1:]):
            per[a] = max([d for s, d in long if marks[a] <= s < marks[b]], default=0.0) / 1000
        worst.append(max([d for _, d in long], default=0.0) / 1000)
        phases_all.append(per)
        if loaf:           # the longest animation frame: what ran in it (for a diagnosis)
            top = max(loaf, key=lambda e: e[1])
            phase = [a for a in order[:-1] if marks[a] <= top[0]][-1:] or ["?"]
            frames.append(f"{top[1] / 1000:.2f} s in {phase[0]} (style+layout+paint "
                          f"{top[4] / 1000:.2f} s; {top[3] or 'no script'})")
        print(f"    sequence {k + 1}: {time.perf_counter() - t_start:.1f} s, "
              f"{len(long)} long tasks, longest {worst[-1]:.3f} s "
              + " ".join(f"{p}={v:.3f}" for p, v in per.items()), flush=True)
    phase_med = {p: round(statistics.median(x[p] for x in phases_all), 4) for p in phases_all[0]}
    return summary(worst) | {"parts": phase_med, "long_animation_frames": frames,
                             "note": "longest by phase (median): " + ", ".join(
                                 f"{p} {v:.2f}" for p, v in phase_med.items())
                             + (f"; longest animation frame of the last run: {frames[-1]}"
                                if frames else "")}


# --------------------------------------------------------------------------- driver

def git_rev(root: str) -> str:
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return (rev or "?") + ("+changes" if dirty else "")


def measure(args, rows: list[str]) -> dict:
    from playwright.sync_api import sync_playwright

    root = os.path.abspath(args.root)
    results: dict = {}
    big_ok = bool(BIG_ROWS & set(rows)) and wait_for_big(args.wait_big)
    if BIG_ROWS & set(rows) and not big_ok:
        print(f"{BIG} is missing: the rows that need it say n/a", flush=True)

    def fail(row: str, why: str) -> None:
        results[row] = {"error": why}
        print(f"  {row}: n/a: {why}", flush=True)

    with sync_playwright() as p:
        # Playwright gives each launch a fresh temporary profile (its own --user-data-dir)
        browser = launch(p)
        bench = Bench(browser, args)
        try:
            # ---- cold: one server start per repeat
            if COLD_ROWS & set(rows):
                cold: dict[str, list[float]] = {}
                for k in range(args.repeat):
                    try:
                        got = cold_cycle(bench, root, big_ok and "open_big_cold" in rows,
                                         args.keep)
                    except Exception as e:  # noqa: BLE001 - the row says why
                        print(f"  cold cycle {k + 1} failed: {str(e)[:1500]}", flush=True)
                        if args.verbose:
                            traceback.print_exc()
                        bench.failed("cold")
                        why = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                        if not isinstance(e, NotMeasurable):
                            why = f"{type(e).__name__}: {why}"
                        cold.setdefault("_error", []).append(why)
                        if len(cold["_error"]) >= 2:
                            break
                        continue
                    for r, v in got.items():
                        cold.setdefault(r, []).append(v)
                    print(f"  cold cycle {k + 1}: " + ", ".join(
                        f"{r.lstrip('_')} {v:.2f}" for r, v in got.items()), flush=True)
                for r in ("first_page", "open_small_cold", "open_big_cold"):
                    if r not in rows:
                        continue
                    if cold.get(r):
                        results[r] = summary(cold[r])
                        if r == "first_page":
                            up = statistics.median(cold["_server_up"])
                            results[r]["parts"] = {"server_up": round(up, 4)}
                            results[r]["note"] = (f"server answers after {up:.2f}, then the "
                                                  "page as open_small_cold")
                    elif r == "open_big_cold" and not big_ok:
                        fail(r, "generated/scale_20k is missing (make scale)")
                    else:
                        fail(r, "; ".join(dict.fromkeys(cold.get("_error", ["no sample"]))))

            # ---- warm: one server for the rest
            warm_rows = [r for r in rows if r not in COLD_ROWS]
            if not warm_rows:
                return results
            app = App(root, dump=SMALL)
            try:
                big_id = pp_id = small_url = big_url = ""
                pp_error = big_error = ""
                try:
                    if big_ok:
                        try:
                            big_id = app.store_add(BIG)
                        except RuntimeError as e:
                            big_error = str(e)
                    else:
                        big_error = "generated/scale_20k is missing (make scale)"
                    if "next_step" in warm_rows:
                        try:
                            pp_id = app.store_add(PER_PASS)
                        except RuntimeError as e:
                            pp_error = str(e)
                    app.start()
                    page = bench.new_page()        # the server adds --dump to its store and
                    bench.open_view(page, app.url)     # draws the view once: warm from here
                    small_url = page.evaluate("location.href")
                    bench.close(page)
                except Exception as e:  # noqa: BLE001 - every row says why
                    bench.failed("warm-up")
                    print("  the server's log ends:\n" + app.log_tail(1500), flush=True)
                    why = f"the app did not show the small sample: {type(e).__name__}: " \
                          f"{(str(e).strip().splitlines() or [''])[0][:200]}"
                    for row in warm_rows:
                        fail(row, why)
                    return results
                if big_id:
                    try:
                        page = bench.new_page()
                        bench.open_view(page, f"{app.url}?dump={big_id}")
                        bench.close(page)
                        big_url = f"{app.url}?dump={big_id}"
                    except Exception as e:  # noqa: BLE001 - the big rows say why
                        bench.failed("warm-up-big")
                        big_error = (f"scale_20k did not draw: {type(e).__name__}: "
                                     f"{(str(e).strip().splitlines() or [''])[0][:200]}")
                n = args.repeat
                for row in warm_rows:
                    t0 = time.perf_counter()
                    if row in BIG_ROWS and not big_url:
                        fail(row, big_error)
                        continue
                    if row == "next_step" and not pp_id:
                        fail(row, pp_error[:200])
                        continue
                    try:
                        if row == "open_small":
                            res = row_open(bench, small_url, n, row)
                        elif row == "open_big":
                            res = row_open(bench, big_url, n, row)
                        elif row == "click_inspector":
                            res = row_click_inspector(bench, small_url, n)
                        elif row == "search_select":
                            res = row_search_select(bench, small_url, SMALL, n)
                        elif row == "dblclick_fusion":
                            res = row_dblclick_fusion(bench, small_url, n)
                        elif row == "open_big_part":
                            res = row_open_big_part(bench, big_url, n)
                        elif row == "next_step":
                            res = row_next_step(bench, f"{app.url}?dump={pp_id}", n)
                        elif row == "overlay_toggle":
                            res = row_overlay_toggle(bench, small_url, n)
                        elif row == "shared_link":
                            res = row_shared_link(bench, big_url, n)
                        elif row == "long_task":
                            res = row_long_task(bench, big_url, BIG, n)
                        else:
                            raise NotMeasurable("unknown row")
                    except NotMeasurable as e:
                        bench.failed(row)
                        fail(row, str(e))
                        continue
                    except Exception as e:  # noqa: BLE001 - one row's failure is reported
                        bench.failed(row)
                        if args.verbose:
                            traceback.print_exc()
                        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                        fail(row, f"{type(e).__name__}: {first[:200]}")
                        continue
                    results[row] = res
                    print(f"  {row}: median {res['median']:.3f} s (min {res['min']:.3f}, max "
                          f"{res['max']:.3f}) [{time.perf_counter() - t0:.0f} s]"
                          + (f" — {res['note']}" if res.get("note") else ""), flush=True)
            finally:
                bench.close_all()
                app.cleanup(args.keep)
        finally:
            bench.close_all()
            browser.close()
    return results


def cell(row: dict | None, goal: float | None) -> str:
    if row is None:
        return "not run"
    if "error" in row:
        return "n/a: " + row["error"].replace("|", "/").replace("\n", " ")
    ok = "" if goal is None else (" ✓" if row["median"] <= goal else " ✗")
    return f"**{row['median']:.2f}**{ok} ({row['min']:.2f}–{row['max']:.2f})"


def write_table(labels: list[str]) -> None:
    runs = {}
    for label in labels:
        path = os.path.join(RESULTS, f"interaction-{label}.json")
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: run with --label {label} first")
        with open(path, encoding="utf-8") as f:
            runs[label] = json.load(f)
    lines = [
        "## Interactions in the browser: user action to result on screen",
        "",
        "Headless Chromium (Debian's, via Playwright), 1600×1100, fresh browser context per "
        "page load, interactions repeated in one page. Time = from the action's first DOM "
        "event in the page (pointerdown, dblclick, keydown; navigation start for a page "
        "load) to the first animation frame in which the result is in the DOM (graph nodes, "
        "the inspector's `%name = ` line, the selected node in the frame, a new SVG). "
        "Seconds, **median** (min–max) of the repeats; ✓/✗ against the goal. Cold = first "
        "page (or first open of the dump) after the server started; every server gets a fresh "
        "store and cache. `long_task` = the longest main-thread task (PerformanceObserver "
        "`longtask`) during a fixed sequence on scale_20k (open, open a group, click, pan and "
        "zoom, search and pick, fit).",
        "",
        "| row | action → result | goal s | " + " | ".join(labels) + " |",
        "|---|---|---:|" + "---:|" * len(labels),
    ]
    for row in ROWS:
        lines.append(f"| {row} | {WHAT[row]} | ≤{GOALS[row]:g} | "
                     + " | ".join(cell(runs[lb]["rows"].get(row), GOALS[row]) for lb in labels)
                     + " |")
    lines += ["", "Notes per row:", ""]
    for row in ROWS:
        notes = [f"{lb}: {runs[lb]['rows'][row]['note']}" for lb in labels
                 if runs[lb]["rows"].get(row, {}).get("note")]
        if notes:
            lines.append(f"- {row}: " + "; ".join(n.replace("|", "/") for n in notes))
    lines += ["", "Runs:", ""]
    for lb in labels:
        for r in runs[lb]["runs"]:
            which = "all rows" if set(r["rows"]) == set(ROWS) else ", ".join(r["rows"])
            lines.append(f"- {lb}: {r['command']} — root `{r['root']}` at {r['commit']}, "
                         f"{r['machine']}, {r['repeat']} repeats, {r['seconds']:.0f} s "
                         f"({which})")
    lines.append(f"- table: {command()}")
    write_section("interaction_bench", "\n".join(lines))
    print(f"wrote the interaction_bench section of {os.path.relpath(os.path.join(ROOT, 'BENCHMARKS.md'))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT, help="the checkout whose app.py is run")
    ap.add_argument("--label", default="", help="names the run (default: the root's folder)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", default="", help=f"comma-separated subset of: {','.join(ROWS)}")
    ap.add_argument("--table", default="", help="labels, e.g. before,after: write their "
                    "section in BENCHMARKS.md (after this run)")
    ap.add_argument("--no-run", action="store_true", help="only write the --table")
    ap.add_argument("--no-write", action="store_true", help="no BENCHMARKS.md (the default "
                    "unless --table is given)")
    ap.add_argument("--shots", default="", help="a screenshot per row into this folder")
    ap.add_argument("--wait-big", type=float, default=900,
                    help="seconds to wait for generated/scale_20k (make scale)")
    ap.add_argument("--keep", action="store_true", help="keep the stores and server logs")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # stop the servers on the way out
    args.label = args.label or os.path.basename(os.path.abspath(args.root).rstrip("/"))
    rows = [r.strip() for r in args.rows.split(",") if r.strip()] or ROWS
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        ap.error(f"unknown rows {unknown}; choose from {','.join(ROWS)}")
    if not args.no_run:
        if not os.path.exists(os.path.join(args.root, "app.py")):
            ap.error(f"{args.root} has no app.py")
        t0 = time.perf_counter()
        print(f"{args.label}: {os.path.abspath(args.root)} ({git_rev(args.root)}), "
              f"{args.repeat} repeats, rows {','.join(rows)}", flush=True)
        got = measure(args, rows)
        run = {"command": command(), "root": os.path.abspath(args.root),
               "commit": git_rev(args.root), "machine": machine(), "repeat": args.repeat,
               "seconds": round(time.perf_counter() - t0, 1),
               "rows": [r for r in ROWS if r in got]}
        os.makedirs(RESULTS, exist_ok=True)
        path = os.path.join(RESULTS, f"interaction-{args.label}.json")
        out = {"label": args.label, "rows": {}, "runs": []}
        if set(rows) != set(ROWS) and os.path.exists(path):   # a subset: merge into the label
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
            if old.get("runs"):
                out = old
        out["rows"].update(got)
        out["rows"] = {r: out["rows"][r] for r in ROWS if r in out["rows"]}
        out["runs"] = [r for r in out["runs"] if set(r["rows"]) - set(got)] + [run]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
        print(f"{len(got)} rows in {run['seconds']:.0f} s -> {os.path.relpath(path)}")
    if args.table and not args.no_write:
        write_table([lb.strip() for lb in args.table.split(",") if lb.strip()])


if __name__ == "__main__":
    main()
