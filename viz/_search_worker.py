"""The regex search's worker process (see viz.panels.search): a pattern and the texts of
a module's instructions in (JSON on stdin), for each instruction that matches its index and
which of its texts matched out, one line each, flushed as found; ``@N`` lines say how far it
got. It runs alone so that a search over its time budget can be killed: RE2 is linear in
the text but a pattern's cost per character can be large, and one call cannot be stopped.

Run by its path, not as ``-m viz...``: the package's imports would take most of a budget.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    import re2

    job = json.load(sys.stdin)
    options = re2.Options()
    options.case_sensitive = False
    options.never_capture = True
    options.log_errors = False
    options.max_mem = job["max_mem"]
    pattern = re2.compile(job["pattern"], options)
    out = sys.stdout
    for i, texts in enumerate(job["texts"]):
        for field, text in enumerate(texts):
            if text and pattern.search(text) is not None:
                out.write(f"{i} {field}\n")
                out.flush()
                break
        if i % 256 == 255:
            out.write(f"@{i + 1}\n")
            out.flush()
    out.write(f"@{len(job['texts'])}\n")


if __name__ == "__main__":
    main()
