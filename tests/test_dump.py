"""The dump index: every file of a real dump classified, grouped, parsed on demand."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from compiler_bridge import DumpError, HloParseError, Store, measure, open_dump
from compiler_bridge.dumps import dump_hash
from compiler_bridge.dumps import dump as D

from conftest import ROOT, sample


def test_sample_dumps_classify_every_file():
    for name in ("mlp_train", "transformer", "scan_while", "cond_switch"):
        d = open_dump(sample(name))
        unknown = [f.path for f in d.files if f.kind == D.UNKNOWN]
        assert not unknown, unknown
        assert d.main is not None and d.main.name == "jit_train_step" or name not in (
            "mlp_train", "transformer")
        main = d.main
        assert main.before_optimizations and main.after_optimizations
        assert main.after_optimizations.platform == "cpu"


def test_per_pass_files_parse_their_names():
    d = open_dump(sample("mlp_train"))
    passes = d.main.passes
    assert len(passes) >= 10
    seqs = [p.pass_info.sequence for p in passes]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    infos = [p.pass_info for p in passes]
    assert any(i.after == "pipeline-start" for i in infos)
    assert all(i.pipeline and i.after for i in infos)
    assert any(i.after == "layout-assignment" for i in infos)


@pytest.mark.parametrize("name, kind, extra", [
    ("module_0006.jit_f.before_optimizations.txt", D.BEFORE, {}),
    ("module_0006.jit_f.cpu_after_optimizations.txt", D.AFTER, {"platform": "cpu"}),
    ("module_0006.jit_f.sm_8.0_gpu_after_optimizations.txt", D.AFTER, {"platform": "sm_8.0_gpu"}),
    ("module_0006.jit_f.after_optimizations.txt", D.AFTER, {"platform": ""}),
    ("module_0006.jit_f.cpu_after_optimizations-buffer-assignment.txt", D.BUFFER_ASSIGNMENT, {}),
    ("module_0006.jit_f.cpu_after_optimizations-buffer-assignment-values.txt",
     D.BUFFER_ASSIGNMENT_VALUES, {}),
    ("module_0006.jit_f.cpu_after_optimizations-live-range.txt", D.LIVE_RANGE, {}),
    ("module_0006.jit_f.cpu_after_optimizations-memory-usage-report.txt",
     D.MEMORY_USAGE_REPORT, {}),
    ("module_0006.jit_f.debug_options", D.DEBUG_OPTIONS, {}),
    ("module_0006.jit_f.add_tanh_fusion_kernel_module.ir-no-opt.ll", D.LLVM_IR_NO_OPT,
     {"kernel": "add_tanh_fusion_kernel_module"}),
    ("module_0006.jit_f.add_tanh_fusion_kernel_module.ir-with-opt.ll", D.LLVM_IR_WITH_OPT,
     {"kernel": "add_tanh_fusion_kernel_module"}),
    ("module_0006.jit_f.obj-file.add_tanh_fusion_kernel_module.o", D.OBJECT_FILE,
     {"kernel": "add_tanh_fusion_kernel_module"}),
    ("module_0006.jit_f.ir-with-opt.ll", D.LLVM_IR_WITH_OPT, {"kernel": None}),
    ("module_0006.jit_f.ptx", D.PTX, {}),
    ("module_0006.jit_f.thunk_sequence.txt", D.THUNK_SEQUENCE, {}),
    ("module_0006.jit_f.autotune_results.pbtxt", D.AUTOTUNE_RESULTS, {}),
    ("module_0006.jit_f.gpu_target_config.pbtxt", D.GPU_TARGET_CONFIG, {}),
    ("module_0006.jit_f.cpu_after_optimizations.dot", D.DOT, {}),
    ("module_0006.jit_f.cpu_after_optimizations.html", D.HTML, {}),
    ("fused_computation.module_0006.jit_f._fusion.html", D.FUSION_VISUALIZATION, {}),
    ("module_0006.jit_f/module.mlir", D.MLIR, {}),
    ("module_0006.jit_f/compile_options.textproto", D.COMPILE_OPTIONS, {}),
    ("plugins/profile/2026_01_01/perfetto_trace.json.gz", D.TRACE, {}),
    ("plugins/profile/2026_01_01/host.trace.json.gz", D.TRACE, {}),
    ("plugins/profile/2026_01_01/host.xplane.pb", D.XPLANE, {}),
    ("module_0006.jit_f.0042.simplification.after_algsimp.before_dce.txt", D.PASS,
     {"pass_info": D.PassInfo(42, "simplification", "algsimp", "dce")}),
    ("module_0006.jit_f.0099.copy-insertion.after_add-special-case-copies.txt", D.PASS,
     {"pass_info": D.PassInfo(99, "copy-insertion", "add-special-case-copies", "")}),
    ("notes.txt", D.UNKNOWN, {}),
])
def test_classify_file_names(name, kind, extra):
    f = D.classify(name, 10, {"0006": "jit_f"})
    assert f.kind == kind
    for k, v in extra.items():
        assert getattr(f, k) == v
    if kind not in (D.TRACE, D.XPLANE, D.UNKNOWN):
        assert f.module_id == "0006" and f.module_name == "jit_f"


def test_module_name_with_dots_is_found_from_its_files():
    names = D._module_names(["module_0001.jit_f.1.before_optimizations.txt"])
    assert names == {"0001": "jit_f.1"}
    f = D.classify("module_0001.jit_f.1.cpu_after_optimizations.txt", 1, names)
    assert f.module_name == "jit_f.1" and f.kind == D.AFTER


def test_traces_are_found_inside_the_dump():
    d = open_dump(sample("transformer"))
    kinds = {f.kind for f in d.traces}
    assert kinds == {D.TRACE, D.XPLANE}


def test_a_folder_of_links_opens_as_the_files_they_point_at(tmp_path):
    # a dump assembled from links (a build system's outputs, files of several runs): its
    # modules and traces are what the links point at, as the real folder's are
    real = sample("transformer")
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in os.listdir(real):
        os.symlink(os.path.join(real, name), linked / name)   # files and folders (trace/)
    os.symlink(tmp_path / "gone.txt", linked / "module_0007.jit_gone.before_optimizations.txt")
    os.symlink(linked, linked / "loop")
    a, b = open_dump(real), open_dump(str(linked))

    def index(d):
        return sorted((f.path, f.size, f.kind) for f in d.files)
    assert index(b) == index(a) and len(index(a)) > 10
    assert [m.name for m in b.modules] == [m.name for m in a.modules]
    assert sorted(f.path for f in b.traces) == sorted(f.path for f in a.traces) != []
    main_a = a.parse(a.main.after_optimizations.path)
    main_b = b.parse(b.main.after_optimizations.path)
    assert len(list(main_b.instructions())) == len(list(main_a.instructions())) > 100
    why = {e.file: e.error for e in b.errors}
    assert "does not exist" in why["module_0007.jit_gone.before_optimizations.txt"]
    assert "cycle" in why["loop"] and not a.errors
    said = subprocess.run([sys.executable, "-m", "compiler_bridge", "stats", str(linked)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    # the report, and the links it could not follow as errors: exit 1 (the CLI's rule)
    assert said.returncode == 1 and "1 modules" in said.stdout
    assert ("error: module_0007.jit_gone.before_optimizations.txt: a link to "
            f"'{tmp_path / 'gone.txt'}', which does not exist") in said.stderr
    ta, tb = measure(a), measure(b)
    assert tb.matched_events == ta.matched_events > 0
    ka, kb = ta.module(a.main.id).kernels, tb.module(b.main.id).kernels
    assert {k: t.total_us for k, t in kb.items()} == {k: t.total_us for k, t in ka.items()}
    # the store keeps the files the links point at: the same content as the real folder
    store = Store(str(tmp_path / "data"))
    assert dump_hash(str(linked))[0] == dump_hash(real)[0]
    sa, sb = store.add_path(real), store.add_path(str(linked))
    assert sb.hash == sa.hash
    assert index(store.open(sb.share_id)) == index(a)


def test_parse_on_demand_is_cached():
    d = open_dump(sample("cond_switch"))
    f = d.main.after_optimizations
    m1 = d.parse(f.path)
    assert d.parse(f.path) is m1
    assert m1.id == d.main.id


def _zip_dir(src: str, dest: str, top: str | None = None) -> str:
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, files in os.walk(src):
            for fn in files:
                full = os.path.join(root, fn)
                rel = os.path.relpath(full, src)
                z.write(full, f"{top}/{rel}" if top else rel)
    return dest


@pytest.mark.parametrize("top", [None, "my_dump"])
def test_zip_and_tar_give_the_same_index(tmp_path, top):
    src = sample("scan_while")
    folder = open_dump(src)
    z = open_dump(_zip_dir(src, str(tmp_path / "d.zip"), top))
    tgz = tmp_path / "d.tar.gz"
    with tarfile.open(tgz, "w:gz") as t:
        t.add(src, arcname=top or ".")
    t = open_dump(str(tgz))
    for other in (z, t):
        assert [(f.path, f.size, f.kind) for f in other.files] == \
            [(f.path, f.size, f.kind) for f in folder.files]
        assert other.main.id == folder.main.id
        assert other.stats() == folder.stats()


def test_one_broken_file_never_hides_the_rest(tmp_path):
    src = sample("cond_switch")
    dst = tmp_path / "dump"
    shutil.copytree(src, dst)
    d0 = open_dump(str(dst))
    victim = dst / d0.main.before_optimizations.path
    victim.write_text(victim.read_text()[: victim.stat().st_size // 2])
    d = open_dump(str(dst))
    stats = d.stats()
    main = next(m for m in stats["modules"] if m["id"] == d.main.id)
    assert main["stages"]["before_optimizations"] is None
    assert main["stages"]["after_optimizations"]["instructions"] > 0
    assert len(stats["errors"]) == 1 and stats["errors"][0]["file"] == d0.main.before_optimizations.path
    assert "line" in stats["errors"][0]["error"] or ":" in stats["errors"][0]["error"]
    with pytest.raises(HloParseError):
        d.parse(d0.main.before_optimizations.path)


def test_open_dump_rejects_what_is_not_a_dump(tmp_path):
    with pytest.raises(DumpError, match="no such file"):
        open_dump(str(tmp_path / "missing"))
    p = tmp_path / "photo.png"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(DumpError, match="expected a dump folder"):
        open_dump(str(p))
    bad = tmp_path / "broken.tar.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DumpError):
        open_dump(str(bad))


@pytest.mark.parametrize("member, why", [
    ("../escape.txt", "zip-slip"),
    ("/abs.txt", "absolute path"),
    ("C:/win.txt", "absolute path"),
])
def test_unsafe_archive_members_are_refused(tmp_path, member, why):
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("module_0001.m.before_optimizations.txt", "HloModule m\n")
        zf.writestr(member, "x")
    with pytest.raises(DumpError, match=why):
        open_dump(str(z))
    t = tmp_path / "evil.tar.gz"
    with tarfile.open(t, "w:gz") as tf:
        info = tarfile.TarInfo(member)
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(DumpError, match=why):
        open_dump(str(t))


def test_links_and_oversized_archives_are_refused(tmp_path):
    t = tmp_path / "link.tar"
    with tarfile.open(t, "w") as tf:
        info = tarfile.TarInfo("module_0001.m.before_optimizations.txt")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    with pytest.raises(DumpError, match="link"):
        open_dump(str(t))
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("module_0001.m.before_optimizations.txt", b"\0" * 5_000_000)
    assert z.stat().st_size < 50_000
    with pytest.raises(DumpError, match="size cap"):
        open_dump(str(z), max_unpacked_bytes=1_000_000)
