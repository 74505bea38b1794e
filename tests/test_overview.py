"""Where a graph opens when the link names no place in it (``viz.home``, issue 32 item 13):
on the computation's biggest fusion, as drawn; without fusions, on its ROOT."""

from __future__ import annotations

import re

from conftest import read, sample, sample_file

from compiler_bridge import open_dump
from viz import ViewState, graph_for, home


def _biggest_fusion_in_text(path: str) -> str:
    """The ENTRY fusion whose fused computation has the most instructions, read from XLA's
    text: each computation's lines counted, each ENTRY fusion's calls= looked up."""
    text = read(path)
    sizes, name, entry = {}, "", []
    for line in text.splitlines():
        m = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if m:
            name, sizes[m.group(2)] = m.group(2), 0
            in_entry = bool(m.group(1))
            continue
        if name and " = " in line:
            sizes[name] += 1
            f = re.search(r"%?([\w.\-]+) = .* fusion\(.*calls=%?([\w.\-]+)", line)
            if f and in_entry:
                entry.append((f.group(1), f.group(2)))
    return max(entry, key=lambda e: (sizes[e[1]], e[0]))[0]


def test_a_view_opens_on_its_biggest_fusion():
    dump = open_dump(sample("transformer"))
    module = dump.stage(dump.main, "after_optimizations")
    want = _biggest_fusion_in_text(sample_file("transformer", "*cpu_after_optimizations.txt"))
    flat = graph_for(dump, ViewState(grouping="flat"))
    assert home(flat, module) == f"node:{want}"
    grouped = graph_for(dump, ViewState())              # drawn as itself or in its group
    assert home(grouped, module) == grouped.shown_as[want]


def test_without_fusions_a_view_opens_on_its_root():
    dump = open_dump(sample("transformer"))
    module = dump.stage(dump.main, "before_optimizations")
    view = graph_for(dump, ViewState(stage="before_optimizations", grouping="flat"))
    root = re.search(r"^ENTRY .*?^  ROOT %?([\w.\-]+) =", read(sample_file(
        "transformer", "*before_optimizations.txt")), re.S | re.M).group(1)
    assert root in view.shown_as                    # drawn as itself or in its part's box
    assert home(view, module) == view.shown_as[root]
