"""What the interaction benchmark measures with: its rows and goals, the script it puts in
every page (``INIT_JS``: frame-accurate times, node counts), its inputs, an app of a checkout
on a free port (``App``) and the browser side (``Bench``: pages, timed actions, shots)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench.common import ROOT
from tests.support.browser import start_app

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
