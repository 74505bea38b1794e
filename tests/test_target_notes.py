"""A GPU or TPU dump whose file naming the device cannot be read (a half-written
``topology.textproto`` or ``gpu_target_config.pbtxt``, as a copy cut short leaves it): the
predictions still come, from the generation's default profile, and the notes name the file
and what it should hold, instead of quietly predicting for another chip."""

from __future__ import annotations

import os
import shutil

from compiler_bridge import open_dump, runtime_report
from compiler_bridge.kernels import module_kernels
from tests.support.samples import sample


def _cut(folder, name: str, keep: int) -> list[str]:
    """Every file called ``name`` under ``folder`` cut to its first ``keep`` bytes."""
    cut = []
    for root, _, files in os.walk(folder):
        for f in files:
            if f.endswith(name):
                p = os.path.join(root, f)
                with open(p, "rb") as fh:
                    data = fh.read()
                with open(p, "wb") as fh:
                    fh.write(data[:keep])
                cut.append(os.path.relpath(p, folder))
    return cut


def test_a_cut_topology_is_named_where_the_tpu_is_unknown(tmp_path):
    folder = tmp_path / "tpu"
    shutil.copytree(sample("tpu_v5e"), folder)
    cut = _cut(folder, "topology.textproto", 80)      # inside platform_version's string
    assert cut
    d = open_dump(str(folder))
    notes = runtime_report(d, fit_to_trace=False).notes
    said = [n for n in notes if "topology.textproto" in n]
    assert said and "expected a TPU topology" in said[0], notes
    assert any(c in said[0] for c in cut)
    kernels = module_kernels(d, d.main).notes
    assert any("topology.textproto: expected" in n for n in kernels), kernels


def test_a_cut_gpu_target_config_is_named(tmp_path):
    folder = tmp_path / "gpu"
    shutil.copytree(sample("gpu_h100"), folder)
    assert _cut(folder, "gpu_target_config.pbtxt", 60)
    d = open_dump(str(folder))
    notes = runtime_report(d, fit_to_trace=False).notes
    said = [n for n in notes if "gpu_target_config.pbtxt" in n]
    assert said and "expected a GpuTargetConfigProto" in said[0], notes
