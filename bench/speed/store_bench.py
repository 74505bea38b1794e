"""Upload to first view for a 100 MB dump zip, and what the store costs over extraction.

The zip is made of real dump files (``generated/``, written by ``bench/corpus/make_scale.py``):

* module 0000: ``generated/scale_20k`` (the >= 20k-instruction transformer, every file
  XLA wrote for it) — the largest compiled program, so the app shows it first;
* modules 0002, 0004, ...: the 52 per-pass snapshots and before-optimizations text of
  the 9-layer transformer (``generated/scale_9layers_passes``, 24k instructions each),
  copied under new module ids until the *zip* reaches ``--mb`` megabytes. HLO text
  deflates about 11x, so a 100 MB zip unpacks to about 1.1 GB (per-pass dumps of big
  programs are this big).

Measured in one process, like the app's upload path, each on a fresh store folder:

1. plain extraction: ``zipfile.ZipFile.extractall`` (no checks) into a temporary folder;
2. safe extraction: ``compiler_bridge.archive.extract`` (zip-slip, links, size cap);
3. ``Store.add_archive`` (safe extraction + content hash of every file + manifest,
   SQLite row, atomic rename): the store's overhead is (3) - (1);
4. the first view after that: ``Store.open`` (index the files), parse the main module's
   after-optimizations text, build the default graph view, Graphviz layout (the layout
   worker started beforehand, as the app does at start; this DOT never laid out before);
5. the app itself through Streamlit's AppTest: the upload widget gets the zip and the
   page stores it and draws everything it shows first (the module picker parses every
   module for its counts, the stage picker reads the timeline), caches emptied.

Upload to first view = (3) + (4); (5) is the same path with the whole page around it.
The browser's transfer of the bytes to the server (localhost: about 1 s per 100 MB) is
not included. Also timed: the same zip uploaded again (stored once: the archive's bytes
are recognised by their sha256 before anything is unpacked).

    .venv/bin/python -m bench.speed.store_bench [--mb 100] [--repeat 3] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile


from bench.common import ROOT, command, machine, write_section
from compiler_bridge.dumps import archive
from compiler_bridge.dumps import Store
from viz import layout
from viz import graph_for
from viz import ViewState

MAIN = os.path.join(ROOT, "generated", "scale_20k")
PASSES = os.path.join(ROOT, "generated", "scale_9layers_passes")


def ensure_inputs() -> None:
    if not os.path.isdir(MAIN):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_scale"],
                       check=True, cwd=ROOT)
    if not os.path.isdir(PASSES):
        subprocess.run([sys.executable, "-m", "bench.corpus.make_scale",
                        "--layers", "9", "--pass-re", ".*"], check=True, cwd=ROOT)


def _files(folder: str) -> list[tuple[str, str]]:
    out = []
    for root, _, names in os.walk(folder):
        for n in sorted(names):
            full = os.path.join(root, n)
            out.append((full, os.path.relpath(full, folder).replace(os.sep, "/")))
    return sorted(out, key=lambda x: x[1])


def make_zip(path: str, mb: float) -> dict:
    """The benchmark's zip (kept in generated/ between runs)."""
    target = int(mb * 1e6)
    if os.path.exists(path) and abs(os.path.getsize(path) - target) < 0.05 * target:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
        return {"files": len(infos), "unpacked": sum(i.file_size for i in infos),
                "zip": os.path.getsize(path)}
    tmp = path + ".part"
    unpacked = files = 0
    # everything but the after-optimizations files, so module 0000 stays the main one
    extra = [(full, rel) for full, rel in _files(PASSES)
             if rel.startswith("module_0000.") and "after_optimizations" not in rel]
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for full, rel in _files(MAIN):
            z.write(full, "bigdump/" + rel)
            unpacked += os.path.getsize(full)
            files += 1
        mid = 2
        while True:
            z.fp.flush()
            if os.path.getsize(tmp) >= target:
                break
            for full, rel in extra:
                name = rel.replace("module_0000.", f"module_{mid:04d}.", 1)
                z.write(full, "bigdump/" + name)
                unpacked += os.path.getsize(full)
                files += 1
                z.fp.flush()
                if os.path.getsize(tmp) >= target:
                    break
            mid += 2
    os.replace(tmp, path)
    return {"files": files, "unpacked": unpacked, "zip": os.path.getsize(path)}


def timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def one_run(data: bytes, zip_path: str, work: str) -> dict:
    r: dict = {}
    plain = os.path.join(work, "plain")
    with zipfile.ZipFile(zip_path) as z:
        _, r["plain_extract"] = timed(lambda: z.extractall(plain))
    shutil.rmtree(plain)
    safe = os.path.join(work, "safe")
    _, r["safe_extract"] = timed(lambda: archive.extract(data, safe, label="bench.zip"))
    shutil.rmtree(safe)

    store = Store(os.path.join(work, "data"))
    stored, r["store_add"] = timed(lambda: store.add_archive(data, "bench.zip"))
    dump, r["open"] = timed(lambda: store.open(stored.share_id))
    main = dump.main
    r["main"] = f"{main.id} {main.name}"
    module, r["parse"] = timed(lambda: dump.parse(main.after_optimizations.path))
    r["instructions"] = module.stats()["instructions"]
    view, r["graph"] = timed(lambda: graph_for(dump, ViewState()))
    r["nodes"] = view.node_count
    with layout._cache_lock:          # a new DOT for the layout worker in every run
        layout._cache.clear()
    _, r["layout"] = timed(lambda: layout.render_svg(view.dot))
    _, r["again"] = timed(lambda: store.add_archive(data, "bench.zip"))
    r["first_view"] = r["store_add"] + r["open"] + r["parse"] + r["graph"] + r["layout"]
    r["app"] = app_upload(data, os.path.join(work, "app-data"))
    return r


def app_upload(data: bytes, store_dir: str) -> float:
    """The app's own path (Streamlit's AppTest, no browser): the upload widget gets the
    zip, the page stores it, reruns and draws everything (module list with counts,
    stage picker, graph laid out, inspector, tabs). Caches are emptied first."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest
    os.environ["HLOLENS_DATA"] = store_dir
    os.environ.pop("HLOLENS_DUMP", None)
    st.cache_resource.clear()
    st.cache_data.clear()
    with layout._cache_lock:
        layout._cache.clear()
    at = AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=600)
    at.run()
    uploader = next(u for u in at.get("file_uploader") if u.key.startswith("upload-files"))
    gc.collect()
    t0 = time.perf_counter()
    uploader.upload("bench.zip", data).run()
    took = time.perf_counter() - t0
    drawn = [c.value for c in at.caption if "laid out in" in c.value]
    if at.exception or at.error or not drawn:
        raise RuntimeError(f"the app did not show the dump: {[e.value for e in at.error]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0, help="size of the zip in MB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    ensure_inputs()
    zip_path = os.path.join(ROOT, "generated", f"store_bench_{args.mb:g}mb.zip")
    print("making the zip…", flush=True)
    info = make_zip(zip_path, args.mb)
    print(f"{info['zip'] / 1e6:.1f} MB zip, {info['unpacked'] / 1e6:.0f} MB unpacked, "
          f"{info['files']} files", flush=True)
    with open(zip_path, "rb") as f:
        data = f.read()
    load = os.getloadavg()[0]
    layout.warm()                      # the app starts the layout worker at start
    runs = []
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="store-bench-") as work:
            r = one_run(data, zip_path, work)
        runs.append(r)
        print(f"run {k + 1}: " + ", ".join(f"{key} {v:.2f}s" for key, v in r.items()
                                           if isinstance(v, float)), flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    overhead = med("store_add") - med("plain_extract")
    safe_extra = med("safe_extract") - med("plain_extract")
    safe_text = (f"safe extraction alone adds {safe_extra:.2f} s"
                 if safe_extra > 0.1 * med("plain_extract") else
                 "safe extraction costs about what plain extraction does")
    r0 = runs[0]
    lines = [
        "## Store: upload to first view of a 100 MB dump zip",
        "",
        f"Command: {command()} — {machine()}, median of {args.repeat} runs (fresh store "
        f"folder each); load average {load:.1f} when it started (other jobs share the "
        "cores).",
        "",
        f"The zip: {info['zip'] / 1e6:.1f} MB (deflate), {info['unpacked'] / 1e6:,.0f} MB "
        f"unpacked, {info['files']:,} files of real dumps: `generated/scale_20k` as module "
        "0000 (the main program) and the 52 per-pass snapshots of the 9-layer transformer "
        "(24k instructions each) copied under further module ids. First view: module "
        f"{r0['main']}, {r0['instructions']:,} instructions, default graph view of "
        f"{r0['nodes']} nodes. The browser's transfer of the upload is not included.",
        "",
        "| step | median s | runs |",
        "|---|---:|---|",
    ]
    rows = [("plain extraction (`ZipFile.extractall`, no checks)", "plain_extract"),
            ("safe extraction (`archive.extract`: zip-slip, links, size cap)", "safe_extract"),
            ("**`Store.add_archive`** (safe extraction + hash of every file + manifest, "
             "SQLite, rename)", "store_add"),
            ("`Store.open` (index the files)", "open"),
            ("parse the main module (after optimizations)", "parse"),
            ("build the default graph view", "graph"),
            ("Graphviz layout (worker warm, new DOT)", "layout"),
            ("**upload to first view** (add + open + parse + graph + layout)", "first_view"),
            ("**the app's whole page** after the upload (AppTest: store, index, counts of "
             "every module, timeline, graph laid out, inspector)", "app"),
            ("the same zip uploaded again (recognised by its sha256, nothing unpacked)",
             "again")]
    for label, key in rows:
        lines.append(f"| {label} | {med(key):.2f} | "
                     + ", ".join(f"{r[key]:.2f}" for r in runs) + " |")
    lines += [
        "",
        f"The store's overhead over plain extraction: **{overhead:.2f} s** "
        f"({overhead / med('plain_extract') * 100:.0f}% of it: {safe_text}; the rest is "
        f"hashing {info['unpacked'] / 1e6:,.0f} MB and the bookkeeping). Peak RSS of the "
        f"benchmark process {peak:,.0f} MB (the zip is held in memory, as an upload is).",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section("store_bench", text)


if __name__ == "__main__":
    main()
