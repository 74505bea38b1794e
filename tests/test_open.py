"""Opening any XLA artefact (issue 18): one HLO file or several loose ones, pasted text,
StableHLO/MLIR, binary HLO protos; through the bridge, the CLIs, the store and the app.

Every input is real: peer corpus modules (with XLA's own parse in golden.jsonl.gz and their
features in INDEX.tsv), the sample dumps' module.mlir and HLO text, and proto dumps JAX
writes here with --xla_dump_hlo_as_proto. Expected values come from those tools: the
module names XLA's parser read, the file names XLA gave each stage, the instruction counts
of jaxlib's own HloModule.
"""

from __future__ import annotations

import csv
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import PEER, ROOT, missing, sample
from streamlit.testing.v1 import AppTest
from tests.support.apptest import (app, card, click, link, ok, open_popover, query, texts,
                                   uploader)

from compiler_bridge import DumpError, HloParseError, open_dump, parse_hlo
from compiler_bridge.dumps import AFTER, BEFORE, Store, StoreError

APP = os.path.join(ROOT, "app.py")
PY = sys.executable


def _peer() -> tuple[dict, dict]:
    """file -> XLA's parse (golden), file -> its features (INDEX.tsv)."""
    golden_path = os.path.join(PEER, "golden.jsonl.gz")
    if not os.path.isfile(golden_path):
        missing(f"the peer corpus ({PEER}) is not available")
    with gzip.open(golden_path, "rt", encoding="utf-8") as f:
        golden = {r["file"]: r for r in map(json.loads, f)}
    with open(os.path.join(PEER, "INDEX.tsv"), encoding="utf-8") as f:
        index = {r["file"]: set(r["features"].split(",")) for r in csv.DictReader(f, delimiter="\t")}
    return golden, index


def _sample_of_peer(n: int) -> list[str]:
    """Every k-th peer module that XLA's parser reads, spread over the corpus."""
    golden, _ = _peer()
    ok = sorted(f for f, r in golden.items() if r["ok"])
    step = max(1, len(ok) // n)
    return ok[::step][:n]


def _jaxlib_instructions(hlo_module) -> int:
    return sum(len(c.instructions()) for c in hlo_module.computations())


# --------------------------------------------------------------------------- single files

def test_every_peer_module_opens_as_a_one_module_dump_named_by_xla():
    """All 339 modules XLA's parser reads open alone; the module is named as XLA named it,
    and its stage follows what the text is: scheduled or fused -> after optimizations."""
    golden, index = _peer()
    wrong_name, wrong_stage = [], []
    checked = 0
    for file, ref in sorted(golden.items()):
        if not ref["ok"]:
            continue
        d = open_dump(os.path.join(PEER, file))
        assert len(d.modules) == 1, file
        m = d.modules[0]
        if m.name != ref["module"]:
            wrong_name.append((file, m.name, ref["module"]))
        features = index[file]
        fused = any(f.startswith("fusion_k") for f in features) or "fusion" in features
        expected = AFTER if "is_scheduled" in features or fused else BEFORE
        if m.files[0].kind != expected:
            wrong_stage.append((file, m.files[0].kind, expected))
        checked += 1
    assert checked >= 330
    assert wrong_name == []
    assert wrong_stage == []


def test_sample_stages_are_guessed_as_xla_named_them(tmp_path):
    """Every sample dump's before/after text, renamed to say nothing, is guessed to be the
    stage XLA's file name says; the two files of one program are one module."""
    for name in ("transformer", "mlp_train", "scan_while", "cond_switch", "legacy_jax0430"):
        d = open_dump(sample(name))
        m = d.main
        out = tmp_path / name
        out.mkdir()
        for stage, f in ((BEFORE, m.before_optimizations), (AFTER, m.after_optimizations)):
            shutil.copy(os.path.join(sample(name), f.path), out / f"{stage[:5]}.hlo")
        loose = open_dump(str(out))
        assert [x.name for x in loose.modules] == [m.name], name
        kinds = {f.name: f.kind for f in loose.modules[0].files}
        assert kinds == {"befor.hlo": BEFORE, "after.hlo": AFTER}, name
        assert loose.stage(loose.modules[0], AFTER).stats() == d.stage(m, AFTER).stats()


def test_a_dump_folder_is_indexed_by_file_names_alone(proto_dumps):
    """A real dump keeps its index exactly: every file is what its name says (``classify``,
    the name-only classifier), nothing is read for its content. The dump written with text
    and protos side by side keeps its protos as protos."""
    from compiler_bridge.dumps.dump import _module_names, classify
    folders = [os.path.join(ROOT, "sample_dumps", n) for n in
               ("transformer", "mlp_train", "scan_while", "cond_switch", "legacy_jax0430")]
    for folder in folders + [proto_dumps["both"]]:
        d = open_dump(folder)
        names = _module_names([f.path for f in d.files])
        assert d.files == [classify(f.path, f.size, names) for f in d.files], folder
    assert any(f.kind == "hlo_proto" for f in open_dump(proto_dumps["both"]).files)


def test_viz_render_draws_a_single_peer_file(tmp_path):
    from viz.__main__ import main
    for file in _sample_of_peer(6):
        out = tmp_path / (file + ".dot")
        assert main(["render", os.path.join(PEER, file), "--format", "dot",
                     "--out", str(out)]) == 0, file
        head, dot = out.read_text().split("\n", 1)     # what it draws, then the graph
        assert head.startswith("// HLO Lens: Dump ") and dot.startswith("digraph"), file


def test_store_adds_single_peer_files_one_by_one(tmp_path):
    golden, _ = _peer()
    store = Store(str(tmp_path / "data"))
    for file in _sample_of_peer(10):
        stored = store.add_path(os.path.join(PEER, file))
        assert stored.modules == [{"id": "0000", "name": golden[file]["module"]}], file
        assert store.open(stored.share_id).modules[0].name == golden[file]["module"]


def test_store_add_and_viz_render_from_the_command_line(tmp_path):
    file = os.path.join(PEER, _sample_of_peer(3)[1])
    data = str(tmp_path / "data")
    p = subprocess.run([PY, "-m", "compiler_bridge", "store", "--data", data, "add", file],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "1 modules" in p.stderr and p.stdout.strip()
    out = str(tmp_path / "v.svg")
    p = subprocess.run([PY, "-m", "viz", "render", file, "--out", out],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert open(out).read().lstrip().startswith("<")


# --------------------------------------------------------------------------- StableHLO

def _mlir_files() -> list[str]:
    hits = sorted(glob.glob(os.path.join(ROOT, "sample_dumps", "*", "*", "module.mlir")))
    assert hits, "the sample dumps hold no module.mlir"
    return hits


def test_every_sample_module_mlir_converts_with_jaxlibs_instruction_count():
    from jax._src.lib import xla_client
    for path in _mlir_files():
        data = open(path, "rb").read()
        ref = xla_client._xla.mlir.mlir_module_to_xla_computation(
            data, use_tuple_args=False, return_tuple=False).get_hlo_module()
        d = open_dump(path)
        m = d.modules[0]
        assert m.files[0].kind == BEFORE and m.files[0].source == "mlir"
        module = d.stage(m, BEFORE)
        assert module.name == ref.name, path
        assert module.stats()["instructions"] == _jaxlib_instructions(ref), path


def test_jax_lowered_text_opens_with_its_source_lines(tmp_path):
    import jax
    import jax.numpy as jnp

    def f(x, y):
        return jnp.tanh(x @ y).sum()
    text = jax.jit(f).lower(jnp.ones((4, 4)), jnp.ones((4, 4))).as_text(debug_info=True)
    path = tmp_path / "lowered.mlir"
    path.write_text(text)
    d = open_dump(str(path))
    assert [m.name for m in d.modules] == ["jit_f"]
    module = d.stage(d.modules[0], BEFORE)
    tanh = next(i for i in module.instructions() if i.opcode == "tanh")
    loc = module.source_location(tanh)
    assert loc is not None and loc.file == __file__
    assert f.__code__.co_firstlineno < loc.line <= f.__code__.co_firstlineno + 2


def test_jax_lowered_text_without_locations_points_at_its_own_lines(tmp_path):
    # as_text() without debug info has no locations: jaxlib's conversion then gives each
    # instruction its line in the MLIR text as the source, in a file it calls '-'; the
    # source names the file it is a line of
    import jax
    import jax.numpy as jnp

    def f(x, y):
        return jnp.tanh(x @ y).sum()
    text = jax.jit(f).lower(jnp.ones((4, 4)), jnp.ones((4, 4))).as_text()
    assert "loc(" not in text
    path = tmp_path / "lowered.mlir"
    path.write_text(text)
    d = open_dump(str(path))
    module = d.stage(d.modules[0], BEFORE)
    tanh = next(i for i in module.instructions() if i.opcode == "tanh")
    loc = module.source_location(tanh)
    assert loc is not None and loc.file == "lowered.mlir", loc
    assert "stablehlo.tanh" in text.splitlines()[loc.line - 1]


def test_mlir_that_jaxlib_refuses_shows_jaxlibs_message_at_its_line(tmp_path):
    lines = open(_mlir_files()[0], encoding="utf-8").read().splitlines()
    at = next(i for i, t in enumerate(lines) if "= stablehlo.add " in t)
    lines[at] = lines[at].replace("= stablehlo.add ", "= stablehlo.addd ", 1)
    path = tmp_path / "broken.mlir"
    path.write_text("\n".join(lines) + "\n")
    d = open_dump(str(path))            # it is MLIR: opens, and its stage says why it fails
    with pytest.raises(HloParseError) as e:
        d.stage(d.modules[0], BEFORE)
    assert e.value.line == at + 1 and "stablehlo.addd" in e.value.text
    from jax._src.lib import xla_client
    with pytest.raises(Exception) as ref:          # what jaxlib itself says
        xla_client._xla.mlir.mlir_module_to_xla_computation(path.read_text())
    assert e.value.message.startswith("jaxlib: ")
    assert e.value.message.removeprefix("jaxlib: ") in str(ref.value)
    assert f":{at + 1}:" in str(ref.value)
    assert d.errors and d.errors[0].file == "broken.mlir"


def test_compiling_stablehlo_for_cpu_gives_what_jax_compiles():
    import jax
    import jax.numpy as jnp
    from compiler_bridge.hlo import compile_for_cpu

    def f(x, y):
        return jnp.tanh(x @ y + 1.0).sum(axis=0)
    lowered = jax.jit(f).lower(jnp.ones((8, 8)), jnp.ones((8, 8)))
    ours = parse_hlo(compile_for_cpu(lowered.as_text(), "f.mlir"), "ours")
    ref = parse_hlo(lowered.compile().as_text(), "jax")
    assert "is_scheduled=true" in compile_for_cpu(lowered.as_text()).splitlines()[0]
    assert ours.stats()["opcodes"] == ref.stats()["opcodes"]


# --------------------------------------------------------------------------- a dump's module.mlir

def _mlir_dumps() -> list[tuple[str, str]]:
    """(sample dump folder, module id) of every module that has a module.mlir (not always
    the dump's main module: the TPU samples keep one for their sharded module only)."""
    out = set()
    for p in _mlir_files():
        m = re.match(r"module_(\d+)\.", os.path.basename(os.path.dirname(p)))
        assert m, p
        out.add((os.path.dirname(os.path.dirname(p)), m.group(1)))
    return sorted(out)


def _broken_mlir_dump(tmp_path) -> tuple[str, int, str]:
    """scan_while with one op of its module.mlir misspelt: (dump, line, module.mlir path)."""
    out = tmp_path / "scan_while"
    shutil.copytree(sample("scan_while"), out)
    path = out / "module_0000.jit_step" / "module.mlir"
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, t in enumerate(lines) if "= stablehlo.add " in t)
    lines[at] = lines[at].replace("= stablehlo.add ", "= stablehlo.addd ", 1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(out), at + 1, str(path)


def test_a_dumps_module_mlir_is_the_stablehlo_stage_listed_first(monkeypatch):
    """Each sample's module.mlir is its module's StableHLO stage: first in every_step,
    addressed as 'stablehlo', while before_optimizations stays step 0 (old links and
    step numbers keep their meaning); jaxlib does not run until it is opened."""
    from compiler_bridge.dumps import STABLEHLO, dump as dump_module
    from compiler_bridge.passes import STABLEHLO_INDEX, pass_timeline
    converted: list[str] = []
    real = dump_module.to_hlo_text

    def counting(data, kind, source=""):
        converted.append(source)
        return real(data, kind, source)
    monkeypatch.setattr(dump_module, "to_hlo_text", counting)
    for folder, mid in _mlir_dumps():
        d = open_dump(folder)
        m = d.module(mid)
        tl = pass_timeline(d, m)
        assert tl.stablehlo is not None and tl.stablehlo.file == m.stablehlo.path, folder
        assert m.stablehlo.path.endswith("/module.mlir")
        assert tl.every_step[0] is tl.stablehlo and tl.every_step[1:] == tl.steps
        assert tl.index_of(STABLEHLO) == STABLEHLO_INDEX
        assert tl.step(STABLEHLO_INDEX).stage == STABLEHLO
        assert tl.steps[0].kind == BEFORE and tl.index_of(BEFORE) == 0
        assert tl.previous_ok(0) is None and tl.previous_ok(STABLEHLO_INDEX) is None
    assert converted == []          # reading timelines converted nothing
    old = open_dump(sample("legacy_jax0430"))   # JAX 0.4.30 wrote no module.mlir
    tl = pass_timeline(old, old.main)
    assert tl.stablehlo is None and tl.index_of(STABLEHLO) is None
    assert tl.every_step == tl.steps
    with pytest.raises(IndexError):            # never Python's last-item indexing
        tl.step(STABLEHLO_INDEX)
    d = open_dump(sample("scan_while"))
    d.stage(d.main, STABLEHLO)
    assert converted == [d.main.stablehlo.path]


def test_the_stablehlo_stage_is_jaxlibs_conversion_with_mlir_locations():
    """Opened, the stage is the module jaxlib's mlir_module_to_xla_computation gives (its
    instruction count), and its source lines are the MLIR's own locations."""
    from jax._src.lib import xla_client

    from compiler_bridge.dumps import STABLEHLO
    for folder, mid in _mlir_dumps():
        d = open_dump(folder)
        mlir = d.module(mid).stablehlo
        data = d.read_bytes(mlir.path)
        ref = xla_client._xla.mlir.mlir_module_to_xla_computation(
            data, use_tuple_args=False, return_tuple=False).get_hlo_module()
        module = d.stage(d.module(mid), STABLEHLO)
        assert module.name == ref.name, folder
        assert module.stats()["instructions"] == _jaxlib_instructions(ref), folder
        text = data.decode("utf-8")
        located = [(i, module.source_location(i)) for i in module.instructions()]
        located = [(i, loc) for i, loc in located if loc is not None]
        assert len(located) > 10, folder
        for inst, loc in located:      # MLIR writes loc("file":line:col ...)
            assert f'loc("{loc.file}":{loc.line}:{loc.column}' in text, (folder, inst.name)


def test_stablehlo_to_before_optimizations_pairs_every_instruction():
    """jaxlib's conversion names instructions as XLA's own does (the before-optimizations
    file XLA wrote): the diff pairs every one, and what XLA changed is metadata."""
    from compiler_bridge.dumps import STABLEHLO
    from compiler_bridge.passes import STABLEHLO_INDEX, pass_timeline, step_diff
    for folder, mid in _mlir_dumps():
        d = open_dump(folder)
        tl = pass_timeline(d, d.module(mid))
        diff = step_diff(d, tl, 0, STABLEHLO_INDEX)
        assert diff is not None and not diff.added and not diff.removed, folder
        stable, before = d.stage(d.module(mid), STABLEHLO), d.stage(d.module(mid), BEFORE)
        assert stable.stats()["instructions"] == before.stats()["instructions"], folder
        assert {k for c in diff.changed for k in c.kinds} <= {"attributes", "called_computation"}, \
            folder


def test_module_mlir_jaxlib_refuses_names_the_file_and_line_and_the_rest_works(tmp_path):
    from jax._src.lib import xla_client

    from compiler_bridge.dumps import STABLEHLO
    from compiler_bridge.passes import pass_timeline
    folder, line, path = _broken_mlir_dump(tmp_path)
    d = open_dump(folder)
    tl = pass_timeline(d, d.main)         # the timeline reads: jaxlib has not run yet
    assert tl.stablehlo is not None and all(s.ok for s in tl.steps)
    with pytest.raises(HloParseError) as e:
        d.stage(d.main, STABLEHLO)
    with pytest.raises(Exception) as ref:          # what jaxlib itself says
        xla_client._xla.mlir.mlir_module_to_xla_computation(open(path, "rb").read())
    assert e.value.source == "module_0000.jit_step/module.mlir" and e.value.line == line
    assert e.value.message.removeprefix("jaxlib: ") in str(ref.value)
    assert f":{line}:" in str(ref.value) and "stablehlo.addd" in e.value.text
    assert "module_0000.jit_step/module.mlir:" in str(e.value)
    assert [x.file for x in d.errors] == ["module_0000.jit_step/module.mlir"]
    for s in tl.steps:                     # every other stage still parses
        assert d.parse(s.file).stats()["instructions"] > 0


def test_viz_render_draws_the_stablehlo_stage(tmp_path):
    out = tmp_path / "s.svg"
    r = subprocess.run([PY, "-m", "viz", "render", sample("cond_switch"), "--stage",
                        "stablehlo", "--format", "dot", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "nodes" in r.stdout and out.read_text().split("\n", 1)[1].startswith("digraph")
    assert ", StableHLO (converted by jaxlib), " in out.read_text().split("\n", 1)[0]


# --------------------------------------------------------------------------- protos

PROTO_PROGRAM = textwrap.dedent("""
    import os, sys
    os.environ["XLA_FLAGS"] = "--xla_dump_to=" + sys.argv[1] + " " + sys.argv[2]
    import jax, jax.numpy as jnp
    def step(w, x):
        return jnp.tanh(x @ w).sum()
    print(jax.jit(step)(jnp.ones((8, 8)), jnp.ones((4, 8))))
""")


@pytest.fixture(scope="module")
def proto_dumps(tmp_path_factory) -> dict[str, str]:
    """Dumps JAX writes here: protos and text side by side, and protos alone."""
    root = tmp_path_factory.mktemp("protos")
    prog = root / "prog.py"
    prog.write_text(PROTO_PROGRAM)
    out = {}
    for name, flags in (("both", "--xla_dump_hlo_as_proto --xla_dump_hlo_as_text"),
                        ("proto", "--xla_dump_hlo_as_proto")):
        out[name] = str(root / name)
        subprocess.run([PY, str(prog), out[name], flags], check=True, timeout=300,
                       capture_output=True)
    return out


def test_a_proto_only_dump_reads_its_stages_from_the_protos(proto_dumps):
    both, alone = open_dump(proto_dumps["both"]), open_dump(proto_dumps["proto"])
    assert not any(f.name.endswith(".txt") and f.kind in (BEFORE, AFTER) for f in alone.files)
    assert [m.name for m in alone.modules] == [m.name for m in both.modules]
    for ma, mb in zip(alone.modules, both.modules):
        for stage in (BEFORE, AFTER):
            got = alone.stage(ma, stage)
            assert got.stats()["instructions"] == both.stage(mb, stage).stats()["instructions"]
    # the text dump is untouched: its stages are its .txt files
    assert all(m.after_optimizations.name.endswith(".txt") for m in both.modules)


def test_single_proto_files_open_hloproto_and_hlomoduleproto(proto_dumps, tmp_path):
    import jaxlib._hlo as H
    for path in sorted(glob.glob(os.path.join(proto_dumps["proto"], "*.hlo.pb"))):
        data = open(path, "rb").read()
        d = open_dump(path)
        (m,) = d.modules
        kind = BEFORE if "before_optimizations" in path else AFTER
        module = d.stage(m, kind)
        ref = H.XlaComputation(_module_bytes(data)).get_hlo_module()   # XLA's own reading
        assert module.stats()["instructions"] == _jaxlib_instructions(ref)
        # the module proto alone (HloModuleProto), as XLA serializes it
        loose = tmp_path / f"{module.name}.{kind}.module.pb"
        loose.write_bytes(ref.as_serialized_hlo_module_proto())
        d2 = open_dump(str(loose))
        assert d2.modules[0].name == m.name
        assert d2.stage(d2.modules[0], d2.modules[0].files[0].kind).stats()["instructions"] \
            == module.stats()["instructions"]


def _module_bytes(hlo_proto: bytes) -> bytes:
    """HloProto.hlo_module, through protobuf's own wire reader."""
    from google.protobuf import empty_pb2, unknown_fields
    holder = empty_pb2.Empty()
    holder.ParseFromString(hlo_proto)
    return next(bytes(f.data) for f in unknown_fields.UnknownFieldSet(holder)
                if f.field_number == 1)


# --------------------------------------------------------------------------- bad input

def test_what_is_no_module_gets_one_clear_message(tmp_path):
    png = tmp_path / "photo.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(DumpError, match="expected a dump folder") as e:
        open_dump(str(png))
    assert "HLO text" in str(e.value) and "StableHLO" in str(e.value) and "HloProto" in str(e.value)
    store = Store(str(tmp_path / "data"))
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    with pytest.raises(StoreError, match="no XLA dump files found") as e:
        store.add_path(str(notes))
    assert "StableHLO" in str(e.value)
    p = subprocess.run([PY, "-m", "viz", "render", str(notes), "--out", str(tmp_path / "x")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 1 and "Traceback" not in p.stderr and "HLO text" in p.stderr


def test_a_text_format_proto_opens_through_xlas_own_definitions(proto_dumps, tmp_path):
    """A text-format HloProto and HloModuleProto (protobuf's text form of what JAX dumped,
    written with XLA's message definitions from jaxlib) open as the same module as the
    binary proto, which jaxlib reads itself."""
    from google.protobuf import text_format

    from compiler_bridge.hlo import xla_message
    path = max(glob.glob(os.path.join(proto_dumps["proto"], "*.hlo.pb")), key=os.path.getsize)
    binary = open(path, "rb").read()
    proto = xla_message("xla.HloProto").FromString(binary)
    assert proto.hlo_module.name and proto.hlo_module.computations
    want = open_dump(path).main
    for name, message in (("module.hlo.pbtxt", proto), ("module_only.pbtxt", proto.hlo_module)):
        pbtxt = tmp_path / name
        pbtxt.write_text(text_format.MessageToString(message))
        got = open_dump(str(pbtxt)).main
        assert got is not None and got.name == want.name
        a = _only_stage(open_dump(str(pbtxt)), got)
        b = _only_stage(open_dump(path), want)
        assert a.stats()["instructions"] > 10
        assert a.stats()["opcodes"] == b.stats()["opcodes"]
    broken = tmp_path / "broken.pbtxt"
    broken.write_text("hlo_module {\n  name: \"x\"\n  no_such_field: 3\n}\n")
    with pytest.raises((DumpError, HloParseError)) as e:
        d = open_dump(str(broken))
        _only_stage(d, d.main)
    assert "broken.pbtxt" in str(e.value) and "no_such_field" in str(e.value)


def _only_stage(dump, module):
    f = module.after_optimizations or module.before_optimizations
    return dump.parse(f.path)


# --------------------------------------------------------------------------- the app

def _fresh(monkeypatch, tmp_path, query: dict | None = None) -> AppTest:
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at: AppTest) -> str:
    """What the page says, markdown escapes taken out (names are escaped: ``jit\\_f``)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]
    text = "\n".join(str(p) for p in parts).replace("\u2060", "")
    return re.sub(r"\\(.)", r"\1", text)


def test_the_app_opens_a_single_uploaded_hlo_file(monkeypatch, tmp_path):
    golden, _ = _peer()
    file = _sample_of_peer(5)[2]
    at = _fresh(monkeypatch, tmp_path)
    up = uploader(at, "upload-files")
    up.set_value([(file, open(os.path.join(PEER, file), "rb").read(), "text/plain")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["dump"]
    assert golden[file]["module"] in at.selectbox(key="pick-module").options[0] or \
        golden[file]["module"] in _texts(at)


def test_the_app_opens_a_file_given_with_dump(monkeypatch, tmp_path):
    golden, _ = _peer()
    file = _sample_of_peer(5)[3]
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HLOLENS_DUMP", os.path.join(PEER, file))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert golden[file]["module"] in _texts(at)


def test_a_pasted_module_opens_and_its_link_works_elsewhere(monkeypatch, tmp_path):
    text = open(os.path.join(PEER, _sample_of_peer(5)[1]), encoding="utf-8").read()
    at = _fresh(monkeypatch, tmp_path)
    area = next(t for t in at.text_area if t.key.startswith("paste-main"))
    area.input(text).run()
    next(b for b in at.button if b.key.startswith("paste-main-open")).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    share = at.query_params["dump"]
    name = parse_hlo(text, "x").name
    assert name in _texts(at)
    other = _fresh(monkeypatch, tmp_path, {"dump": share})
    assert not other.error and name in _texts(other)


def test_pasted_text_that_is_no_module_is_refused_clearly(monkeypatch, tmp_path):
    at = _fresh(monkeypatch, tmp_path)
    next(t for t in at.text_area if t.key.startswith("paste-main")).input("hello").run()
    next(b for b in at.button if b.key.startswith("paste-main-open")).click().run()
    assert not at.exception
    assert any("not an HLO module" in e.value and "StableHLO" in e.value for e in at.error)
    assert "dump" not in at.query_params


def _xla_cpu_stats(mlir: bytes):
    """What XLA:CPU reports compiling this StableHLO here: its optimized HLO's instruction
    count and its ``get_compiled_memory_stats()``."""
    import jax.extend
    from jax._src.lib import xla_client
    backend = jax.extend.backend.get_backend("cpu")
    ex = backend.compile_and_load(mlir.decode(), xla_client.DeviceList(
        tuple(backend.devices()[:1])), xla_client.CompileOptions())
    text = ex.hlo_modules()[0].to_string()
    count = len(re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = ", text, re.M))
    return count, ex.get_compiled_memory_stats()


def test_stablehlo_is_its_own_stage_and_compiles_for_cpu(monkeypatch, tmp_path):
    """Issue 32, item 15: an uploaded .mlir is its HLO before optimizations (as jaxlib
    converts it), and the header and picker say so, as the URL does. Compiled with
    XLA:CPU, it is a dump as XLA writes one — its StableHLO first, every pass, the buffer
    assignment — so nothing asks for a dump flag, no message lacks its file, and the
    module picker counts the compiled module's instructions."""
    from tests.support.apptest import open_tab
    path = _mlir_files()[0]
    at = _fresh(monkeypatch, tmp_path)
    up = uploader(at, "upload-files")
    up.set_value([("module.mlir", open(path, "rb").read(), "text/plain")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["stage"] == BEFORE
    shown = "before optimizations (StableHLO converted by jaxlib)"
    assert f"module 0000 · {shown}" in _texts(at)
    assert at.selectbox(key="pick-stage").options == [shown]
    first = at.query_params["dump"]
    next(b for b in at.button if b.key == "compile-mlir").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["dump"] != first
    options = at.selectbox(key="pick-stage").options
    assert options[:2] == ["StableHLO (as HLO)", "before optimizations"]
    assert options[-1] == "after optimizations" and len(options) > 3     # every pass
    page = _texts(at)
    assert "after optimizations" in page
    assert "<text>" not in page and "--xla_dump" not in page
    count, stats = _xla_cpu_stats(open(path, "rb").read())
    (label,) = at.selectbox(key="pick-module").options
    assert f"{count:,} instructions" in label, label
    at = open_tab(at, "Memory")
    labels = {m.label: m.value for m in at.metric}
    assert labels["Temp"] == f"{stats.temp_size_in_bytes / 1024:.1f} KiB", labels
    assert "<text>" not in _texts(at) and "--xla_dump" not in _texts(at)


def test_the_app_lists_a_dumps_stablehlo_first_and_draws_it(monkeypatch, tmp_path):
    """A dump's module.mlir is a stage of its module (no separate dump, no button): first
    in the picker, drawn, its source lines the MLIR's locations, its link reopens it."""
    from compiler_bridge.dumps import STABLEHLO
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    at = app(sample("scan_while"), monkeypatch)
    picker = at.selectbox(key="pick-stage")
    assert picker.options[:2] == ["StableHLO (as HLO)", "before optimizations"]
    assert picker.options[-1] == "after optimizations"
    assert not any(b.key == "open-mlir" for b in at.button)
    share = query(at)["dump"]
    picker.select(STABLEHLO).run()
    ok(at)
    assert query(at) == {"dump": share, "stage": STABLEHLO}     # the same dump
    page = texts(at)
    assert "module 0000 · StableHLO (as HLO)" in page and "module.mlir" in page
    d = open_dump(sample("scan_while"))
    module = d.stage(d.main, STABLEHLO)
    drawn = [c.value for c in at.caption if " nodes, " in c.value]
    assert drawn and drawn[0].startswith(f"**{module.entry.name}".replace(".", "\\."))
    inst = next(i for i in module.entry.instructions if module.source_location(i))
    click(at, "node:" + inst.name)
    source = card(at)["source"]                   # 'file:line:col (function)'
    where = source.rsplit(" (", 1)[0]
    file, line, col = where.rsplit(":", 2)
    mlir = d.read_text(d.main.stablehlo.path)
    assert f'loc("{file}":{line}:{col}' in mlir
    assert "stage=stablehlo" in link(open_popover(at, "pop-link"))
    again = app(sample("scan_while"), monkeypatch, {"dump": share, "stage": STABLEHLO})
    assert "module 0000 · StableHLO (as HLO)" in texts(again)


def test_the_app_compares_before_optimizations_with_the_stablehlo(monkeypatch, tmp_path):
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    at = app(sample("transformer"), monkeypatch, {"stage": BEFORE})   # no per-pass files
    at.toggle(key="pass-vs-before").set_value(True).run()
    ok(at)
    assert query(at)["compare"] == "stablehlo"
    assert "vs StableHLO (as HLO):" in texts(at)
    per_pass = app(sample("mlp_train"), monkeypatch, {"stage": BEFORE})
    compare = per_pass.selectbox(key="pass-compare")
    assert "vs StableHLO (as HLO)" in compare.options
    compare.select("stablehlo").run()
    ok(per_pass)
    assert query(per_pass)["compare"] == "stablehlo"
    assert "vs StableHLO (as HLO):" in texts(per_pass)


def test_the_app_shows_jaxlibs_message_for_a_module_mlir_it_refuses(monkeypatch, tmp_path):
    folder, line, _ = _broken_mlir_dump(tmp_path)
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    at = app(folder, monkeypatch, {"stage": "stablehlo"})
    errors = "\n".join(e.value for e in at.error)
    assert "jaxlib cannot convert its StableHLO" in errors
    assert f"module_0000.jit_step/module.mlir:{line}:" in errors and "stablehlo.addd" in errors
    at.selectbox(key="pick-stage").select(BEFORE).run()       # the other stages work
    ok(at)
    assert query(at)["stage"] == BEFORE
    left = "\n".join(e.value for e in at.error)     # the dump's list of unreadable files
    assert "cannot be drawn" not in left and "module.mlir" in left, left
    assert any(" nodes, " in c.value for c in at.caption)


def test_several_loose_files_uploaded_are_one_dump(monkeypatch, tmp_path):
    """A program's before and after text, uploaded as two files with names XLA never
    wrote, open as one module with both stages."""
    d = open_dump(sample("mlp_train"))
    m = d.main
    files = [("before.hlo", d.read_bytes(m.before_optimizations.path), "text/plain"),
             ("after.hlo", d.read_bytes(m.after_optimizations.path), "text/plain")]
    at = _fresh(monkeypatch, tmp_path)
    up = uploader(at, "upload-files")
    up.set_value(files).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.selectbox(key="pick-module").options) == 1
    assert at.selectbox(key="pick-stage").options == ["before optimizations",
                                                      "after optimizations"]
    assert m.name in _texts(at)
