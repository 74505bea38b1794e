"""Bytes the server sends the browser: for a page load of the transformer sample, and for
each click on a node (websocket frames received by the page, Chromium via Playwright).

    .venv/bin/python -m bench.speed.click_bytes [--root CHECKOUT]

``--root`` runs the app of another checkout (a worktree of an older commit), so both can
be measured in one sitting. Prints one line; BENCHMARKS.md quotes it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time


from bench.common import ROOT
from tests.support.browser import GRAPH_DRAWN, launch, start_app, stop_app

DRAWN = """() => { for (const h of document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))
    if (h.shadowRoot && h.shadowRoot.querySelector('svg g.node'))
      return [...h.shadowRoot.querySelectorAll('svg g.node')].map(n => n.id)
        .filter(i => i.startsWith('node:'));
  return []; }"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=ROOT)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    env = dict(os.environ, HLOLENS_DATA=tempfile.mkdtemp(prefix="hlolens-bytes-"),
               HLOLENS_DUMP=os.path.join(ROOT, "sample_dumps", "transformer"))
    proc, url = start_app(env, subprocess.DEVNULL, 60, root=os.path.abspath(args.root))
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1600, "height": 1100})
            got = [0]
            page.on("websocket", lambda ws: ws.on(
                "framereceived", lambda f: got.__setitem__(0, got[0] + len(f))))
            page.goto(url)
            page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
            time.sleep(3)
            load = got[0]
            clicks = []
            drawn = page.evaluate(DRAWN)
            for k in range(5):
                before = got[0]
                page.locator(f'[id="{drawn[(k * 7) % len(drawn)]}"]').click()
                time.sleep(2.5)             # the run and any settling pan
                clicks.append(got[0] - before)
            browser.close()
    finally:
        stop_app(proc)
    print(f"{os.path.basename(os.path.abspath(args.root))}: page load {load:,} bytes; "
          f"per click {', '.join(f'{c:,}' for c in clicks)} (median "
          f"{statistics.median(clicks):,.0f})")


if __name__ == "__main__":
    main()
