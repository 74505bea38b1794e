"""The command line: `python -m compiler_bridge stats|extract` as scripts use it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from compiler_bridge import open_dump, parse_hlo

from conftest import ROOT, read, sample, sample_file


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "compiler_bridge", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def test_stats_json_for_one_file():
    path = sample_file("mlp_train", "module_*.cpu_after_optimizations.txt")
    out = json.loads(run("stats", path, "--json").stdout)
    m = parse_hlo(read(path))
    assert set(out) == {"module", "computations", "instructions", "entry_instructions",
                        "fusions", "opcodes"}
    assert out["module"] == "jit_train_step"
    assert out["computations"] == len(m.computations)
    assert out["instructions"] == sum(len(c.instructions) for c in m.computations)
    assert out["entry_instructions"] == len(m.entry.instructions)
    assert out["fusions"] == sum(1 for i in m.instructions() if i.opcode == "fusion")
    assert sum(out["opcodes"].values()) == out["instructions"]


def test_stats_json_for_a_dump():
    path = sample("mlp_train")
    out = json.loads(run("stats", path, "--json").stdout)
    assert set(out) == {"modules", "main", "errors"}
    d = open_dump(path)
    assert out["main"] == d.main.id and out["errors"] == []
    mod = next(m for m in out["modules"] if m["id"] == out["main"])
    assert mod["name"] == "jit_train_step"
    assert mod["passes"] == len(d.main.passes) > 0
    assert mod["files"]["pass"] == mod["passes"]
    for stage in ("before_optimizations", "after_optimizations"):
        s = mod["stages"][stage]
        assert s["instructions"] == parse_hlo(read(f"{path}/{d.main.first(stage).path}")).stats()["instructions"]


def test_stats_human_output():
    out = run("stats", sample("scan_while")).stdout
    assert "main program" in out and "jit_" in out


def test_extract_writes_a_standalone_module(tmp_path):
    path = sample_file("mlp_train", "module_*.cpu_after_optimizations.txt")
    m = parse_hlo(read(path))
    fusion = next(i for i in m.entry.instructions if i.opcode == "fusion")
    out = tmp_path / "repro.hlo"
    run("extract", path, "--computation", fusion.name, "--out", str(out))
    cut = parse_hlo(out.read_text())
    assert len(cut.entry.parameters) == len(set(fusion.operand_names))
    assert [str(p.shape) for p in cut.entry.parameters] == \
        [str(m.entry.get(n).shape) for n in dict.fromkeys(fusion.operand_names)]
    assert cut.entry.root.opcode == "fusion" and cut.entry.root.fusion_kind == fusion.fusion_kind
    assert {c.name for c in cut.computations} >= set(fusion.called_names)
    comp = fusion.calls[0]
    text = run("extract", path, "--computation", comp).stdout
    assert parse_hlo(text).entry.name == comp


def test_errors_are_one_clear_line_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n")
    p = run("stats", str(bad), ok=False)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    assert f"{bad}:3:" in p.stderr and "unknown opcode 'bogus'" in p.stderr
    p = run("stats", str(tmp_path / "nope"), ok=False)
    assert p.returncode == 1 and "no such file" in p.stderr
    path = sample_file("mlp_train", "module_*.cpu_after_optimizations.txt")
    p = run("extract", path, "--computation", "no_such_thing", ok=False)
    assert p.returncode == 2 and "no_such_thing" in p.stderr


@pytest.mark.parametrize("members", [[], [("readme.txt", "not a dump")]])
def test_stats_of_an_archive_without_a_dump_fails_and_says_so(tmp_path, members):
    """An empty zip, or one with no XLA files, is no dump: exit 1 and a message naming it
    (issue 17: it exited 0 with '0 modules')."""
    import zipfile
    path = tmp_path / "upload.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members:
            z.writestr(name, text)
    out = run("stats", str(path), ok=False)
    assert out.returncode == 1
    assert "upload.zip" in out.stderr and "no XLA dump files found" in out.stderr
