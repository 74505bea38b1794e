"""``hlolens serve``: the app on this machine's store, in the foreground.

    hlolens serve [--data DIR] [--port N] [--dump PATH]

``hlolens.show`` finds an app started so (the store's app.json names its pid and port)
and adds to it instead of starting another.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from compiler_bridge.dumps import DumpError, Store

from . import ROOT, app_url


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="hlolens", description="HLO Lens: see what XLA did "
                                "to your program.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="start the app (foreground)")
    s.add_argument("--data", default="", help="the store (default $HLOLENS_DATA or "
                   "./.hlolens-data)")
    s.add_argument("--port", type=int, default=8501)
    s.add_argument("--dump", default="", help="a dump folder, archive or one module's file "
                   "to open first")
    args = p.parse_args(argv)
    if args.dump and not os.path.exists(args.dump):     # say it here, not in a browser tab
        print(f"error: {args.dump}: no such file or folder", file=sys.stderr)
        return 1
    store = Store(args.data or None)
    running = app_url(store)
    if running:
        if args.dump:                      # the running app opens it from the store
            try:
                running += f"?dump={store.add_path(args.dump).share_id}"
            except (DumpError, OSError) as e:
                print(f"error: {args.dump}: {e}", file=sys.stderr)
                return 1
        print(f"HLO Lens already serves this store: {running}")
        return 0
    data = store.location if store.remote else os.path.abspath(store.base)
    with open(os.path.join(store.local_root, "app.json"), "w", encoding="utf-8") as f:
        json.dump({"pid": os.getpid(), "port": args.port}, f)     # exec keeps the pid
    os.environ["HLOLENS_DATA"] = data
    os.chdir(ROOT)
    cmd = [sys.executable, "-m", "ui.serve", "--server.port", str(args.port),
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    if args.dump:
        cmd += ["--", "--dump", os.path.abspath(args.dump)]
    print(f"HLO Lens: http://localhost:{args.port}/", flush=True)
    os.execv(sys.executable, cmd)
    return 0       # not reached


if __name__ == "__main__":
    sys.exit(main())
