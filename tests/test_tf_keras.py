"""A Keras model trained by ``model.fit`` under TF 2.21's auto-clustering
(sample_dumps/tf_keras, made by make_tf_samples.py): many rounds of graph dumps, the
remapper's fused ops left out, TF 2.21's other reasons, and XLA's older memory-usage
report. Expected values come from TF's log (read here with plain regexes) and XLA's files.
"""

from __future__ import annotations

import glob
import os
import re

from compiler_bridge import open_dump
from compiler_bridge.memory import module_memory
from compiler_bridge.tf import tf_index

from conftest import read, sample

_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ?")


def _log_lines() -> list[str]:
    return [_GLOG.sub("", line) for line in
            read(os.path.join(sample("tf_keras"), "tf_log.txt")).splitlines()]


def test_tf_2_21_memory_usage_reports_are_read():
    """TF 2.21's XLA writes the report in its older form ('Total bytes used: N' first,
    then the allocations and their chunks): read, not refused, and its total is the
    buffer assignment's."""
    d = open_dump(sample("tf_keras"))
    reports = glob.glob(os.path.join(sample("tf_keras"), "*-memory-usage-report.txt"))
    assert len(reports) == len(d.modules) == 2
    for m in d.modules:
        mem = module_memory(d, m)
        f = next(r for r in reports if os.path.basename(r).startswith(f"module_{m.id}."))
        first = read(f).splitlines()[0]
        assert first.startswith("Total bytes used: ")
        assert mem.report is not None, mem.missing
        assert mem.report.total_bytes == int(first.split()[3]) == mem.totals().total_bytes
        # one chunk table per allocation the report lists with its values
        assert len(mem.report.spaces[0].chunks) == read(f).count("used_by_n_values")
        assert not mem.missing
    assert not d.errors


def _clustered_rounds() -> dict[str, int]:
    """mark_for_compilation file -> clusters TF built in that round (its 'Clustering info'
    block follows the round's 'Dumped Graph to .../mark_for_compilation[_N].pbtxt')."""
    out: dict[str, int] = {}
    last = None
    for line in _log_lines():
        if m := re.match(r"Dumped Graph to .*/(mark_for_compilation(?:_\d+)?\.pbtxt)$", line):
            last = m.group(1)
        elif (m := re.match(r"\s*Built (\d+) clusters", line)) and last is not None:
            out[last] = int(m.group(1))
            last = None
    return out


def test_the_step_graph_is_the_round_tf_clustered():
    """Keras's fit dumps a round per function TF optimizes; a larger graph of string ops
    that TF clustered nothing of comes later. The step graph is the round TF clustered,
    whatever its number or size, with its clusters and their modules."""
    rounds = _clustered_rounds()
    clustered = [f for f, n in rounds.items() if n]
    assert len(rounds) > 20 and clustered == ["mark_for_compilation_23.pbtxt"]
    d = open_dump(sample("tf_keras"))
    ix = tf_index(d)
    largest = max(ix.files, key=lambda f: len(f.graph.nodes))
    assert largest.path != clustered[0] and rounds[largest.path] == 0
    assert ix.main is not None and ix.main.path == clustered[0]
    assert ix.step is not None and ix.main in ix.step.files
    assert len(ix.clusters) == rounds[clustered[0]]
    for c in ix.clusters:
        assert c.module is not None and c.module.name.startswith(c.name + "__XlaCompiled")
    main = ix.to_json()["main"]
    assert main["file"] == clustered[0]
    assert len(main["unclustered"]) == main["nodes"] - sum(c["nodes"] for c in
                                                           main["clusters"]) > 0
