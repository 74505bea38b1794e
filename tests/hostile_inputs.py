"""Hostile inputs made from the real samples (issue 17): nothing large is committed, the
tests build what they need. Run as a script to write them into a folder for a manual look:

    .venv/bin/python tests/hostile_inputs.py OUT_DIR
"""

from __future__ import annotations

import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(HERE), "sample_dumps")

# markdown and HTML a visitor must see as text: a link, an image fetched on load, raw HTML
PAYLOAD = ("x` **Session expired** [sign in](http://evil.example/login) "
           "![](http://evil.example/pixel.png) <img src=http://evil.example/i.png>")


def markdown_dump(out: str, sample: str = "transformer") -> str:
    """A copy of a sample dump in a folder whose name is the payload, every ``op_name``
    and source file name of its HLO carrying it too (valid HLO: they are strings)."""
    folder = os.path.join(out, PAYLOAD.replace("/", "_"))
    shutil.copytree(os.path.join(SAMPLES, sample), folder)
    quoted = PAYLOAD.replace("\\", "\\\\").replace('"', '\\"')
    for root, _, files in os.walk(folder):
        for fn in files:
            if not fn.endswith(".txt") or "optimizations" not in fn:
                continue
            path = os.path.join(root, fn)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r'op_name="([^"\\]|\\.)*"', lambda m: f'op_name="{quoted}/dot"', text)
            text = re.sub(r'(?m)^(\d+) "([^"\\]|\\.)*"$', lambda m: f'{m.group(1)} "{quoted}.py"',
                          text)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    return folder


def deep_op_name_dump(out: str, sample: str = "transformer", levels: int = 200_000) -> str:
    """A copy of a sample dump where one drawn ENTRY instruction's ``op_name`` is
    ``levels`` scopes deep (about 1 MB at 200k): valid HLO, hours of grouping once."""
    folder = os.path.join(out, f"{sample}_deep_op_name")
    shutil.copytree(os.path.join(SAMPLES, sample), folder)
    (path,) = [os.path.join(folder, f) for f in os.listdir(folder)
               if f.endswith("cpu_after_optimizations.txt")]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    deep = "/".join(f"s{i}" for i in range(levels)) + "/op"
    entry = next(i for i, line in enumerate(lines) if line.startswith("ENTRY "))
    at = next(i for i in range(entry, len(lines))
              if "op_name=" in lines[i] and " parameter(" not in lines[i])
    lines[at] = re.sub(r'op_name="[^"]*"', f'op_name="{deep}"', lines[at])
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return folder


if __name__ == "__main__":
    print(markdown_dump(sys.argv[1]))
    print(deep_op_name_dump(sys.argv[1]))
