"""Targets: which machine a module was compiled for, from the file names XLA writes."""

from __future__ import annotations

import pytest

from compiler_bridge import open_dump
from compiler_bridge.dumps import AFTER
from compiler_bridge.perf import BUILTIN, profile_for_platform
from compiler_bridge.targets import Target, gpu_arch, target_of_platform
from conftest import sample


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
