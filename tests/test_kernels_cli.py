"""``python -m compiler_bridge kernels`` beyond the GPU and TPU facts: a CPU dump's kernels
carry nulls where a field applies to another target, the text form, and clear errors."""

from __future__ import annotations

import glob
import json
import os
import re

from conftest import SAMPLES, read, sample
from tests.support.cli import run

FIELDS = {"name", "kind", "emitter", "tile", "memory_space", "xla_estimate_us", "ptx"}


def test_cpu_kernels_have_nulls_where_a_field_does_not_apply():
    proc = run("kernels", sample("mlp_train"), "--json")
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stdout)["modules"]
    assert modules
    for m in modules:
        path = glob.glob(os.path.join(SAMPLES, "mlp_train", f"module_{m['id']}.*after_optimizations.txt"))
        path = [p for p in path if re.search(r"after_optimizations\.txt$", p)][0]
        assert m["name"] == re.match(r"HloModule (\S+?),", read(path)).group(1)
        assert m["target"] == "XLA:CPU"
        fusions = re.findall(r"^\s*%?(\S+) = \S+ fusion\(", read(path).split("\nENTRY ", 1)[1],
                             re.M)
        assert {k["name"] for k in m["kernels"] if k["kind"].startswith("k")} >= set(fusions)
        for k in m["kernels"]:
            assert FIELDS <= set(k)
            assert all(k[f] is None for f in ("emitter", "tile", "memory_space",
                                               "xla_estimate_us", "ptx"))


def test_text_form_names_target_clock_and_cycles():
    proc = run("kernels", sample("tpu_v6e"), "--module", "0055")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("module 0055 jit_convnet_train_step: XLA:TPU v6e")
    assert "µs at 1.75 GHz" in proc.stdout and " cycles = " in proc.stdout


def test_an_unknown_module_or_path_is_a_clear_error(tmp_path):
    proc = run("kernels", sample("gpu_h100"), "--module", "nope")
    assert proc.returncode == 2 and "no module 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run("kernels", str(empty), "--json")
    assert proc.returncode == 1 and "no XLA dump files found" in proc.stderr
