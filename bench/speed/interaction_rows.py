"""The interaction benchmark's rows: each user action done and timed in a page, from the
action to its result on screen."""

from __future__ import annotations

import re
import statistics
import time
import urllib.parse
import urllib.request

from bench.speed.interaction_rig import (
    BIG,
    PASS_START,
    SMALL,
    TIMEOUT_MS,
    App,
    Bench,
    NotMeasurable,
    search_names,
    summary,
)

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
        drawn = ("(n) => __ib.param('selected') === n && __ib.isSelected('node:' + n)"
                 " && __ib.inFrame('node:' + n)")
        # Enter -> the hits list for this query (its label says how many hits)
        hits_cond = """(n) => [...document.querySelectorAll('[data-testid=stSelectbox]')]
          .some(s => s.checkVisibility() && s.textContent.includes('pick one')
                && !s.closest('[data-stale=true]')
                && [...s.closest('[class*="st-key-search-pick"]')?.classList || []]
                     .some(c => c.startsWith('st-key-search-pick') && c.endsWith(n.replace(/[^\\w-]/g, '-'))))"""
        # since issue 32 (item 14) Enter goes to the first hit (an exact name ranks first):
        # then the pick is not needed, and Enter -> drawn is the whole time
        either = f"(n) => ({drawn})(n) || ({hits_cond})(n)"
        t_find = bench.timed(page, lambda: box.press("Enter"), either, arg=name,
                             events=("keydown",), what=f"node:{name} or the hits list")
        if page.evaluate(f"(n) => ({drawn})(n)", name):
            bench.idle(page)
            finds.append(t_find)
            picks.append(0.0)
            totals.append(t_find)
            continue
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
        t_pick = bench.timed(page, option.click, drawn, arg=name,
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
        "note": f"Enter→drawn (or its hits list) {statistics.median(finds[1:]):.2f} + pick→drawn "
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
