"""The Graphviz worker (``viz._layout_worker``, issue 32 item 16): the WebAssembly compiled
once per machine is kept in the cache folder, a new worker lays out from it the same SVG,
and a cache file it cannot load is compiled over."""

from __future__ import annotations

import glob
import os
import struct
import subprocess
import sys

from conftest import ROOT, sample

from compiler_bridge import open_dump
from viz import ViewState, graph_for


def _layout(cache: str, dot: str) -> str:
    """One DOT laid out by a new worker process told ``cache`` first."""
    frames = b"".join(struct.pack("<Q", len(b)) + b for b in (cache.encode(), dot.encode()))
    proc = subprocess.run([sys.executable, "-m", "viz._layout_worker"], input=frames,
                          capture_output=True, cwd=ROOT, timeout=300)
    status, size = struct.unpack("<BQ", proc.stdout[:9])
    assert status == 0, proc.stdout[9:].decode(errors="replace")
    return proc.stdout[9:9 + size].decode()


def test_the_compiled_graphviz_is_kept_and_lays_out_the_same(tmp_path):
    dot = graph_for(open_dump(sample("cond_switch")), ViewState()).dot
    cache = str(tmp_path / "cache")
    first = _layout(cache, dot)
    kept = glob.glob(os.path.join(cache, "graphviz-*.cwasm"))
    assert len(kept) == 1 and os.path.getsize(kept[0]) > 0
    assert 'class="node"' in first
    assert _layout(cache, dot) == first                 # from the kept machine code
    with open(kept[0], "wb") as f:                      # a damaged file: compiled again
        f.write(b"not machine code")
    assert _layout(cache, dot) == first
    assert os.path.getsize(kept[0]) > 1000              # and kept again, whole
