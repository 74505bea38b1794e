"""Server memory for one large upload (issue 33, item 4): a real sample dump (transformer)
zipped with incompressible filler files to ``--mb`` MB, uploaded through Chromium's file
input to a fresh server; the server's resident memory read from /proc every 50 ms: before,
its peak while the upload is received and stored, once the dump is shown, and after the
browser has closed. ``--root`` measures another checkout (e.g. a worktree of the commit
before), ``--label`` names its row. Nothing large is committed: the zip is made here.

    .venv/bin/python -m bench.speed.upload_memory [--mb 400] [--sessions 2]
        [--root DIR --label before]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
import zipfile

from bench.common import ROOT, command, machine, write_section
from tests.support.browser import launch, start_app, stop_app
from tests.support.pages import open_uploaded


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def make_zip(out: str, mb: int, n: int = 0) -> str:
    path = os.path.join(out, f"big_dump_{n}.zip")
    src = os.path.join(ROOT, "sample_dumps", "transformer")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for fn in sorted(os.listdir(src)):
            if os.path.isfile(os.path.join(src, fn)):
                z.write(os.path.join(src, fn), f"dump/{fn}")
        for i in range(0, mb, 100):
            with z.open(f"dump/filler/{i:04d}.bin", "w", force_zip64=True) as f:
                for _ in range(min(100, mb - i)):
                    f.write(os.urandom(1 << 20))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=400)
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--label", default="this checkout")
    ap.add_argument("--sessions", type=int, default=1,
                    help="browsers uploading zips of --mb each (different bytes) at once")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        blobs = [make_zip(tmp, args.mb, n) for n in range(args.sessions)]
        env = dict(os.environ, HLOLENS_DATA=os.path.join(tmp, "data"))
        env.pop("HLOLENS_DUMP", None)
        with open(os.path.join(tmp, "app.log"), "w") as log:
            proc, url = start_app(env, log, timeout=90, root=args.root)
            peak, stop = [0], threading.Event()

            def sample() -> None:
                while not stop.is_set():
                    peak[0] = max(peak[0], rss(proc.pid))
                    time.sleep(0.05)
            try:
                time.sleep(2)
                before = rss(proc.pid)
                threading.Thread(target=sample, daemon=True).start()
                start = time.time()
                # each browser in a thread of its own (Playwright's sync API is per thread)
                threads = [threading.Thread(target=_upload, args=(url, b)) for b in blobs]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                took = time.time() - start
                time.sleep(3)
                shown = rss(proc.pid)
                time.sleep(10)
                closed = rss(proc.pid)
                stop.set()
            finally:
                stop_app(proc)
    mb = 1 << 20
    zips = f"{args.mb:,} MB" + (f" × {args.sessions} at once" if args.sessions > 1 else "")
    row = (f"| {args.label} | {zips} | "
           f"{before / mb:,.0f} | {peak[0] / mb:,.0f} | {shown / mb:,.0f} | "
           f"{closed / mb:,.0f} | {took:.1f} s |")
    print(row)
    if not args.no_write:
        write_section(f"upload_memory:{args.label}", "\n".join([
            f"### Upload memory ({args.label}): {command()}", "", machine(), "",
            "| checkout | zip | RSS before (MB) | peak (MB) | dump shown (MB) | "
            "browsers closed +10 s (MB) | upload to graph |", "|---|---|---|---|---|---|---|",
            row]))


def _upload(url: str, blob: str) -> None:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        page.set_default_timeout(900_000)
        open_uploaded(page, url, blob, timeout=900_000)
        browser.close()


if __name__ == "__main__":
    main()
