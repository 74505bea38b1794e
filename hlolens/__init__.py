"""HLO Lens from a notebook or a script: ``hlolens.show(jax.jit(f).lower(x))``.

``show`` takes a ``jax.stages.Lowered``, a ``jax.stages.Compiled``, or a function and its
arguments; it writes a dump of that program as XLA names its files (before and after
optimizations, the StableHLO, memory and cost analysis; a short profiled run on request),
adds it to the store, starts the app on this machine if none serves that store, and
prints the link (clickable in a notebook).

``hlolens serve`` (or ``python -m hlolens serve``) starts the app.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from typing import Any

from compiler_bridge import compile_module
from compiler_bridge.dumps import Store

__all__ = ["Shown", "app_url", "serve", "show", "write_dump"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "app.py")
_APP_FILE = "app.json"              # in the store: the app serving it (pid, port)


@dataclass(frozen=True)
class Shown:
    """What ``show`` did: the link, the store's share id and where the dump was written;
    ``note``: what the link needs ('' when an app serves it)."""

    url: str
    share_id: str
    dump: str
    note: str = ""

    def _repr_html_(self) -> str:
        from html import escape
        note = f" ({escape(self.note)})" if self.note else ""
        return (f'<a href="{escape(self.url)}" target="_blank">Open in HLO Lens: '
                f'{escape(self.url)}</a>{note}')


def _safe(name: str) -> str:
    return re.sub(r"[^\w.\-]+", "_", name).strip("._")[:80] or "program"


def _program(obj: Any, args: tuple, kwargs: dict) -> tuple[Any, Any, str, Any]:
    """(Lowered or None, Compiled, name, what a profiled run calls) for what ``show`` was
    given. A function runs as itself: a Compiled takes only the dynamic arguments, so
    static ones (``static_argnums``) passed as ``show(f, x, 3)`` would not fit it."""
    import jax
    lowered = None
    run: Any = None
    if isinstance(obj, jax.stages.Compiled):
        compiled = obj
    else:
        if isinstance(obj, jax.stages.Lowered):
            lowered = obj
        elif callable(obj):
            fn = obj if hasattr(obj, "lower") else jax.jit(obj)
            lowered = fn.lower(*args, **kwargs)
            run = fn
        else:
            raise TypeError("hlolens.show takes a jax Lowered, a Compiled, or a function "
                            f"and its arguments; got {type(obj).__name__}")
        compiled = lowered.compile()
    executable: Any = compiled.runtime_executable()
    modules = executable.hlo_modules() if executable is not None else []
    name = modules[0].name if modules else "program"
    return lowered, compiled, name, run or compiled


def _analysis(compiled: Any) -> dict:
    out: dict = {}
    try:
        mem = compiled.memory_analysis()
        out["memory_analysis"] = {k: getattr(mem, k) for k in dir(mem)
                                  if k.endswith("_in_bytes") and isinstance(getattr(mem, k), int)}
    except Exception as e:       # not every backend says
        out["memory_analysis"] = {"error": str(e)}
    try:
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) and cost else cost
        out["cost_analysis"] = {k: float(v) for k, v in dict(cost or {}).items()}
    except Exception as e:
        out["cost_analysis"] = {"error": str(e)}
    return out


def write_dump(obj: Any, *args: Any, out: str | None = None, profile: bool = False,
               **kwargs: Any) -> str:
    """Write the dump of a program into ``out`` (a new temporary folder by default); returns
    the folder. Files are named as ``--xla_dump_to`` names them, module id 0000."""
    lowered, compiled, name, run = _program(obj, args, kwargs)
    if profile:
        _can_profile(compiled, args, kwargs)
    made = not out                  # a folder of ours: removed again when this fails
    out = out or tempfile.mkdtemp(prefix="hlolens-show-")
    try:
        _write(out, lowered, compiled, name, run, profile, args, kwargs)
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise
    return out


def _write(out: str, lowered: Any, compiled: Any, name: str, run: Any, profile: bool,
           args: tuple, kwargs: dict) -> None:
    import jax
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"module_0000.{_safe(name)}")
    platform = jax.devices()[0].platform if compiled.runtime_executable() is None \
        else compiled.runtime_executable().local_devices()[0].platform
    if lowered is not None:
        with open(base + ".before_optimizations.txt", "w", encoding="utf-8") as f:
            f.write(lowered.as_text(dialect="hlo", debug_info=True))
        os.makedirs(base, exist_ok=True)
        with open(os.path.join(base, "module.mlir"), "w", encoding="utf-8") as f:
            f.write(lowered.as_text(debug_info=True))
    with open(base + f".{platform}_after_optimizations.txt", "w", encoding="utf-8") as f:
        f.write(compiled.as_text())
    with open(base + ".hlolens-analysis.json", "w", encoding="utf-8") as f:
        json.dump({"jax": jax.__version__, "platform": platform, **_analysis(compiled)}, f,
                  indent=1)
    if profile:
        _profile(run, _donates(compiled), args, kwargs, out)


def _can_profile(compiled: Any, args: tuple, kwargs: dict) -> None:
    """A profiled run needs arrays to run on: TypeError, before anything is written, for
    a program shown without its arguments (a Lowered or Compiled alone) or with shapes
    (``jax.ShapeDtypeStruct``) where arrays go."""
    import jax
    given = jax.tree.leaves((args, kwargs))
    if any(isinstance(a, jax.ShapeDtypeStruct) for a in given):
        raise TypeError("hlolens.show(..., profile=True) runs the program: give it arrays, "
                        "not jax.ShapeDtypeStruct")
    if not given and jax.tree.leaves(compiled.args_info):
        raise TypeError("hlolens.show(..., profile=True) runs the program, which takes "
                        "arguments: show(f, x, profile=True), or show(lowered, x, "
                        "profile=True) with the arrays to run it on")


def _donates(compiled: Any) -> bool:
    """Whether the program donates an argument (``donate_argnums``): each run then
    consumes its arguments."""
    import jax
    return any(getattr(a, "donated", False) for a in jax.tree.leaves(compiled.args_info))


def _profile(run: Any, donates: bool, args: tuple, kwargs: dict, out: str,
             runs: int = 3) -> None:
    """A short profiled run: the perfetto trace goes beside the modules. A program that
    donates its arguments runs each time on copies made before the trace (the user's
    arrays are never consumed, and the copies are not in the trace)."""
    import jax

    def fresh() -> tuple[tuple, dict]:
        if not donates:
            return args, kwargs
        return jax.tree.map(lambda a: jax.device_put(a, a.sharding, may_alias=False)
                            if isinstance(a, jax.Array) else a, (args, kwargs))
    trace_dir = tempfile.mkdtemp(prefix="hlolens-trace-")
    try:
        a, k = fresh()
        jax.block_until_ready(run(*a, **k))        # warm (a function compiles here)
        inputs = [fresh() for _ in range(runs)]
        jax.block_until_ready(inputs)
        with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
            for a, k in inputs:
                jax.block_until_ready(run(*a, **k))
        for root, _, files in os.walk(trace_dir):
            if "perfetto_trace.json.gz" in files:
                shutil.copy(os.path.join(root, "perfetto_trace.json.gz"), out)
                break
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)


# --------------------------------------------------------------------------- the app

def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _free_port(start: int = 8501) -> int:
    for port in range(start, start + 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _store(data: Store | str | os.PathLike[str] | None) -> Store:
    """The store ``data`` names: a Store, its location (a str or a path object), or None
    for $HLOLENS_DATA or ./.hlolens-data."""
    if isinstance(data, Store):
        return data
    return Store(os.fspath(data) if data is not None else None)


def app_url(store: Store | str | os.PathLike[str] | None = None) -> str | None:
    """The URL of the app serving ``store`` on this machine, if one runs and is healthy;
    ``store``: a Store, or its location as ``serve`` and ``show`` take it (``data``)."""
    store = _store(store)
    try:
        with open(os.path.join(store.local_root, _APP_FILE), encoding="utf-8") as f:
            rec = json.load(f)
        pid, port = int(rec["pid"]), int(rec["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _alive(pid) and _healthy(port):
        return f"http://localhost:{port}/"
    return None


def serve(data: str | os.PathLike[str] | None = None, *, port: int = 0,
          dump: str | os.PathLike[str] = "", wait: bool = True,
          timeout: float = 120.0) -> str:
    """Start the app on the store ``data`` (default $HLOLENS_DATA or ./.hlolens-data) unless
    one serves it already; returns its URL. ``wait``: block until it is healthy. ``dump``
    (a dump folder, archive or one module's file; FileNotFoundError when it is not there):
    the app opens it first, or, where an app serves the store already, it is added to the
    store and the link to it returned."""
    if dump and not os.path.exists(dump):
        raise FileNotFoundError(f"hlolens.serve: {dump}: no such file or folder")
    dump = os.fspath(dump)
    store = _store(data)
    url = app_url(store)
    if url is not None:
        return f"{url}?dump={store.add_path(dump).share_id}" if dump else url
    port = port or _free_port()
    env = dict(os.environ, HLOLENS_DATA=store.location if store.remote
               else os.path.abspath(store.base))
    log = open(os.path.join(store.local_root, "app.log"), "ab")
    cmd = [sys.executable, "-m", "ui.serve", "--server.port", str(port),
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    if dump:
        cmd += ["--", "--dump", os.path.abspath(dump)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    with open(os.path.join(store.local_root, _APP_FILE), "w", encoding="utf-8") as f:
        json.dump({"pid": proc.pid, "port": port}, f)
    deadline = time.time() + timeout
    while wait and not _healthy(port):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"HLO Lens did not start (see {log.name})")
        time.sleep(0.3)
    return f"http://localhost:{port}/"


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython   # type: ignore[import-not-found]
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


_NEEDS_LOWERED = ("hlolens.show(..., target=) needs the program before compilation: a "
                  "Lowered or a function and its arguments")


def show(obj: Any, *args: Any, data: str | os.PathLike[str] | None = None, name: str = "",
         profile: bool = False, start: bool = True, target: str = "",
         **kwargs: Any) -> Shown:
    """Open a JAX program in HLO Lens: ``show(jax.jit(f).lower(x))``, ``show(compiled)`` or
    ``show(f, x, y)``. Returns (and prints) the link; ``start=False`` never starts the
    app (with none serving the store, the link is where ``hlolens serve`` would, and the
    note says so). ``profile``: also a short profiled run (on the arrays given:
    ``show(f, x)``; TypeError when a program that takes arguments has none).
    ``target``: also compile the program for that target ('h100', 'v5e:2x2', ...; see
    ``python -m compiler_bridge compile``) without the hardware; the link then opens that
    compile, compared with this machine's (``CompileError`` when it cannot compile, e.g.
    without ``.venv-backends``)."""
    import jax
    if target and isinstance(obj, jax.stages.Compiled):     # before anything runs
        raise TypeError(_NEEDS_LOWERED)
    folder = write_dump(obj, *args, profile=profile, **kwargs)
    compiled_for = tempfile.mkdtemp(prefix="hlolens-target-") if target else ""
    try:
        program = next(p for p in sorted(os.listdir(folder)) if p.startswith("module_0000."))
        label = name or program.split(".")[1]
        if target:
            mlir = os.path.join(folder, "module_0000." + program.split(".")[1],
                                "module.mlir")
            if not os.path.exists(mlir):
                raise TypeError(_NEEDS_LOWERED)
            compile_module(mlir, target, os.path.join(compiled_for, "dump"))
        store = _store(data)
        stored = store.add_path(folder, name=label)
        query = f"dump={stored.share_id}"
        if target:
            cpu = stored
            stored = store.add_path(os.path.join(compiled_for, "dump"),
                                    name=f"{label} ({target})")
            query = f"dump={stored.share_id}&base={cpu.share_id}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if compiled_for:
            shutil.rmtree(compiled_for, ignore_errors=True)
    base = serve(data) if start else app_url(store)
    note = ""
    if base is None:              # start=False, and no app serves the store: where one would
        base = "http://localhost:8501/"
        where = store.location if store.remote else os.path.abspath(store.base)
        note = f"no app serves this store yet: hlolens serve --data {where}"
    shown = Shown(f"{base}?{query}", stored.share_id, store.folder(stored.share_id), note)
    if _in_notebook():
        from IPython.display import display   # type: ignore[import-not-found]
        display(shown)
    else:
        print(f"HLO Lens: {shown.url}" + (f" ({note})" if note else ""))
    return shown
