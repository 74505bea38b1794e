"""Targets: which machine a module was compiled for, from the file names XLA writes."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from compiler_bridge import dump_target, module_target, open_dump
from compiler_bridge.dumps import AFTER
from compiler_bridge.perf import BUILTIN, profile_for_module, profile_for_platform
from compiler_bridge.targets import (Target, gpu_arch, gpu_device_info, target_of_files,
                                     target_of_platform)
from conftest import sample, sample_file


@pytest.mark.parametrize("name", ["transformer", "mlp_train", "scan_while"])
def test_a_cpu_dump_says_cpu(name):
    dump = open_dump(sample(name))
    platforms = {f.platform for m in dump.modules for f in m.files if f.kind == AFTER}
    assert platforms == {"cpu"}
    assert {target_of_platform(p) for p in platforms} == {Target("cpu", "cpu")}


@pytest.mark.parametrize("prefix,target,profile", [
    ("sm_9.0a_gpu", Target("gpu", "sm_9.0a_gpu", "sm_9.0a", "h100"), "h100"),
    ("sm_8.0_gpu", Target("gpu", "sm_8.0_gpu", "sm_8.0", "a100"), "a100"),
    ("gfx942_gpu", Target("gpu", "gfx942_gpu", "gfx942", "a100"), "a100"),
])
def test_a_gpu_prefix_names_its_architecture_and_profile(prefix, target, profile):
    assert target_of_platform(prefix) == target
    assert profile_for_platform(prefix) is BUILTIN[profile]


def test_the_architecture_of_a_prefix():
    arch = gpu_arch("sm_9.0a_gpu")
    assert arch is not None and (arch.vendor, arch.major, arch.minor, arch.suffix) == (
        "nvidia", 9, 0, "a")
    assert gpu_arch("cpu") is None
    assert target_of_platform("").label == "unknown target"
    assert target_of_platform("sm_9.0a_gpu").label == "XLA:GPU sm_9.0a"


def test_an_xla_gpu_dump_names_its_h100():
    """The H100 sample (compiled by XLA:GPU for XLA's published H100 target spec): every
    after-optimizations file carries the sm_9.0a prefix."""
    dump = open_dump(sample("gpu_h100"))
    platforms = {f.platform for m in dump.modules for f in m.files if f.kind == AFTER}
    assert platforms == {"sm_9.0a_gpu"}
    target = target_of_platform("sm_9.0a_gpu")
    assert (target.kind, target.arch, target.chip) == ("gpu", "sm_9.0a", "h100")


# --- a dump knows its target from its files (issue 30, item 2); expected values are jax's
# and XLA's own words, from each sample's xla_facts.json (device_kind, topology)

def _facts(name: str) -> dict:
    with open(os.path.join(sample(name), "xla_facts.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("name", ["gpu_h100", "tpu_v5e", "tpu_v6e", "tpu_v5e_oom"])
def test_every_module_of_a_backend_sample_knows_its_device(name):
    facts = _facts(name)
    dump = open_dump(sample(name))
    assert len(dump.modules) == len(facts["modules"])
    kind = "gpu" if facts["platform"] == "cuda" else "tpu"
    for mod in dump.modules:
        target = module_target(dump, mod)
        assert (target.kind, target.device_kind) == (kind, facts["device_kind"]), mod.label
        if kind == "tpu":
            # jax's name of the slice it compiled for (the module may use one chip of it)
            assert target.topology == facts["topology"]
        else:
            # XLA:GPU's dump holds no topology: "1x1x4" (jax's slices x hosts x devices)
            # is in no file it writes
            assert target.topology == ""
    assert dump_target(dump) == module_target(dump, dump.main)


def test_the_tpu_generation_picks_its_datasheet():
    assert module_target(open_dump(sample("tpu_v5e"))).chip == "tpu_v5e"
    assert module_target(open_dump(sample("tpu_v6e"))).chip == "tpu_v6e"
    v6e = open_dump(sample("tpu_v6e"))
    assert profile_for_module(v6e, v6e.main) is BUILTIN["tpu_v6e"]
    assert module_target(v6e).label == "XLA:TPU TPU v6 lite (v6e:2x2)"


@pytest.mark.parametrize("name", ["transformer", "mlp_train", "cond_switch"])
def test_a_cpu_dump_names_its_device_kind_as_jax_does(name):
    """jax's CPU device kind is 'cpu'; the topology.textproto jax writes beside the module
    says it (``platform_version: "cpu"``)."""
    target = dump_target(open_dump(sample(name)))
    assert (target.kind, target.device_kind, target.topology) == ("cpu", "cpu", "")


def test_a_tpu_dump_without_its_topology_is_still_xla_tpus(tmp_path):
    """Only XLA:TPU writes after_codegen.txt and tpu_comp_env.txt: without the module
    folders (no topology.textproto) the dump is a TPU's of unknown generation."""
    src = sample("tpu_v5e")
    for n in os.listdir(src):
        if os.path.isfile(os.path.join(src, n)):
            shutil.copy(os.path.join(src, n), tmp_path / n)
    dump = open_dump(str(tmp_path))
    target = dump_target(dump)
    assert (target.kind, target.device_kind, target.chip) == ("tpu", "", "")
    assert profile_for_module(dump, dump.main).kind == "tpu"


def test_the_gpu_target_config_gives_the_datasheets_rates():
    """The roofline's H100 from the dump's target config (XLA's published spec, rates as
    XLA's GPU performance model computes them) agrees with NVIDIA's datasheet (the
    built-in H100): two sources, one device."""
    dump = open_dump(sample("gpu_h100"))
    with open(sample_file("gpu_h100", "*gpu_target_config.pbtxt"), encoding="utf-8") as f:
        info = gpu_device_info(f.read())
    assert (info.name, info.core_count) == ("NVIDIA H100 80GB HBM3", 132)
    prof = profile_for_module(dump, dump.main)
    sheet = BUILTIN["h100"]
    for dtype in ("f64", "f32", "bf16", "f16", "s8", "f8"):
        assert prof.matmul_rate(dtype) == pytest.approx(sheet.matmul_rate(dtype), rel=2e-3)
    assert prof.vector_flops == pytest.approx(sheet.vector_flops, rel=2e-3)
    assert prof.bandwidth == pytest.approx(sheet.bandwidth, rel=2e-3)
    assert "gpu_target_config" in prof.source


def test_a_broken_target_config_falls_back_to_the_architecture():
    with pytest.raises(ValueError, match="GpuTargetConfigProto"):
        gpu_device_info("gpu_device_info { name: \"x\" }")
    assert target_of_files("sm_9.0a_gpu", "gpu_device_info {").chip == "h100"
    assert target_of_files("", "", "platform_name: \"tpu\"\nplatform_version: \"TFRT TPU v9\"") \
        == Target("tpu", device_kind="TPU v9")
