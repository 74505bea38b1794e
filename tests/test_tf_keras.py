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
