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
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback

from bench.common import ROOT, command, machine, write_section
from bench.speed.interaction_rig import (
    BIG,
    BIG_ROWS,
    COLD_ROWS,
    GOALS,
    PER_PASS,
    RESULTS,
    ROWS,
    SMALL,
    WHAT,
    App,
    Bench,
    NotMeasurable,
    summary,
    wait_for_big,
)
from bench.speed.interaction_rows import (
    cold_cycle,
    row_click_inspector,
    row_dblclick_fusion,
    row_long_task,
    row_next_step,
    row_open,
    row_open_big_part,
    row_overlay_toggle,
    row_search_select,
    row_shared_link,
)
from tests.support.browser import launch

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
