"""Compile for a target from HLO Lens (issue 30, item 6): ``python -m compiler_bridge compile
FILE --target cpu|h100|v5e:2x2|...`` compiles a StableHLO or HLO module into a dump, without
the hardware. Expected values are XLA's own: the samples' ``memory_analysis()`` and
``cost_analysis()`` (``sample_dumps/memory_analysis.json``, each backend sample's
``xla_facts.json``), which the same module compiled here must reproduce.

GPU and TPU compiles need ``.venv-backends`` (``make samples-backends``; ``make test`` makes
it): without it these tests skip on a developer's machine and fail under CI=true.
"""

from __future__ import annotations

import json
import os

import pytest

from compiler_bridge import cli, cross_compile, dump_target, open_dump, runtime_report
from compiler_bridge.compare import compare_dumps
from compiler_bridge.cross_compile import CompileError, compile_module
from conftest import missing, sample, sample_file

TRANSFORMER_MLIR = os.path.join("transformer", "module_0000.jit_train_step", "module.mlir")


def _facts(folder: str) -> dict:
    with open(os.path.join(folder, "xla_facts.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def backends():
    if not os.path.exists(os.path.join(cross_compile.BACKENDS_VENV, "bin", "python")):
        missing(f"{cross_compile.BACKENDS_VENV} is missing (make samples-backends)")


def test_without_the_backends_venv_the_message_names_the_install(tmp_path, monkeypatch,
                                                                  capsys):
    src = os.path.join(sample("transformer"), "..", TRANSFORMER_MLIR)
    with pytest.raises(CompileError) as e:
        compile_module(src, "v5e:2x2", str(tmp_path / "out"), venv=str(tmp_path / "none"))
    assert "make samples-backends" in str(e.value)
    assert "requirements-backends.txt" in str(e.value) and "none is missing" in str(e.value)
    # and the command says the same, with exit 1
    monkeypatch.setattr(cross_compile, "BACKENDS_VENV", str(tmp_path / "none"))
    assert cli.main(["compile", src, "--target", "h100", "--out", str(tmp_path / "o2")]) == 1
    err = capsys.readouterr().err
    assert "XLA's GPU and TPU compilers are not installed" in err
    assert "make samples-backends" in err


def test_an_unknown_target_names_the_known_ones(tmp_path, capsys):
    src = os.path.join(sample("transformer"), "..", TRANSFORMER_MLIR)
    assert cli.main(["compile", src, "--target", "v9:2x2", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "unknown target 'v9:2x2'" in err and "h100" in err and "v5e:2x2" in err


def test_a_cpu_compile_reproduces_xlas_memory_analysis(tmp_path):
    """The transformer sample's StableHLO compiled here for the CPU: XLA's memory_analysis()
    equals the one jax reported when the sample was made."""
    src = os.path.join(sample("transformer"), "..", TRANSFORMER_MLIR)
    done = compile_module(src, "cpu", str(tmp_path / "cpu"))
    with open(os.path.join(sample("transformer"), "..", "memory_analysis.json"),
              encoding="utf-8") as f:
        want = json.load(f)["transformer"]["memory_analysis"]
    assert _facts(done.out)["modules"][0]["memory_analysis"] == want
    dump = open_dump(done.out)
    assert [m.name for m in dump.modules] == ["jit_train_step"]
    assert dump_target(dump).kind == "cpu"


def test_a_bad_module_is_refused_with_the_reason(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule broken\n\nENTRY main {\n  ROOT x = f32[] nonsense(\n}\n")
    with pytest.raises(CompileError, match="not a StableHLO or HLO module"):
        compile_module(str(bad), "cpu", str(tmp_path / "out"))


@pytest.mark.parametrize("sample_name,module", [("tpu_v5e", 2), ("tpu_v6e", 2)])
def test_a_tpu_compile_reproduces_the_samples_facts(backends, tmp_path, sample_name, module):
    """The sharded MLP's StableHLO (4 devices) compiled here for the sample's topology: the
    dump says its target, and XLA's memory_analysis() and cost_analysis() equal those of
    the sample, which jax compiled from the Python program."""
    facts = _facts(sample(sample_name))
    entry = facts["modules"][module]
    src = os.path.join(sample(sample_name), entry["files"], "module.mlir")
    done = compile_module(src, facts["topology"], str(tmp_path / "tpu"))
    got = _facts(done.out)
    assert got["device_kind"] == facts["device_kind"]
    assert got["modules"][0]["devices"] == entry["devices"] == 4
    assert got["modules"][0]["memory_analysis"] == entry["memory_analysis"]
    assert got["modules"][0]["cost_analysis"] == entry["cost_analysis"]
    target = dump_target(open_dump(done.out))
    assert (target.device_kind, target.topology) == (facts["device_kind"], facts["topology"])
    # XLA's optimal_seconds reaches the runtime report from the facts the compile wrote
    dump = open_dump(done.out)
    report = runtime_report(dump, auto_model=False)
    optimal = entry["cost_analysis"]["optimal_seconds"]     # negative: XLA did not know
    assert report.xla_estimates[0].optimal_us == (
        pytest.approx(optimal * 1e6) if optimal > 0 else None)
    assert report.xla_estimates[0].kernels > 0          # its after_codegen's estimates


def test_hlo_text_compiles_for_a_gpu_and_compares_with_the_cpu(backends, tmp_path, capsys):
    """An HLO text module (the transformer's before-optimizations) for an H100 and for this
    CPU, side by side in the comparison."""
    src = sample_file("transformer", "*.before_optimizations.txt")
    out = str(tmp_path / "gpu")
    assert cli.main(["compile", src, "--target", "h100", "--out", out, "--compare-cpu",
                     "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["target"]["device_kind"] == _facts(sample("gpu_h100"))["device_kind"]
    assert shown["cpu_dump"] == out + "-cpu"
    pairs = shown["comparison"]["modules"]
    assert [(m["a"], m["b"]) for m in pairs] == [(open_dump(out + "-cpu").main.id,
                                                  open_dump(out).main.id)]
    cmp = compare_dumps(open_dump(out + "-cpu"), open_dump(out), "cpu", "gpu")
    assert cmp.reports and cmp.reports[0].pair.name == "jit_train_step"


def _lowered():
    import jax
    import jax.numpy as jnp

    def layer(w, x):
        return jax.nn.relu(x @ w).sum(axis=-1)
    return jax.jit(layer).lower(jnp.ones((128, 128)), jnp.ones((8, 128)))


def test_show_for_a_target_opens_that_compile_against_this_cpus(backends, tmp_path):
    import hlolens
    from compiler_bridge.dumps import Store
    shown = hlolens.show(_lowered(), data=str(tmp_path / "data"), start=False,
                         target="v6e:2x2")
    store = Store(str(tmp_path / "data"))
    base = shown.url.split("base=")[1]
    assert shown.url.endswith(f"?dump={shown.share_id}&base={base}")
    tpu, cpu = store.open(shown.share_id), store.open(base)
    assert (dump_target(tpu).device_kind, dump_target(tpu).topology) == ("TPU v6 lite",
                                                                         "v6e:2x2")
    assert dump_target(cpu).kind == "cpu"
    # (XLA:TPU's file names add .cl_<N> to the module's name: the module is the program's,
    # the suffix its compile id, and the two compiles pair by name)
    assert [m.name for m in tpu.modules] == ["jit_layer"]
    assert all(m.compile_id.startswith("cl_") for m in tpu.modules)
    shown_pair = compare_dumps(cpu, tpu, "cpu", "tpu")
    assert shown_pair.reports                                   # the pair the page shows
    assert [p.how for p in shown_pair.pairing.pairs] == ["name"]


def test_show_for_a_target_without_the_backends_says_how_to_install(tmp_path, monkeypatch):
    import hlolens
    monkeypatch.setattr(cross_compile, "BACKENDS_VENV", str(tmp_path / "none"))
    with pytest.raises(CompileError, match="make samples-backends"):
        hlolens.show(_lowered(), data=str(tmp_path / "data"), start=False, target="h100")


# --- in the app (AppTest): the target picker beside *Compile with XLA:CPU*

def _uploaded_mlir(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.support.apptest import APP, uploader
    monkeypatch.setenv("HLOLENS_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HLOLENS_DUMP", raising=False)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    src = os.path.join(sample("transformer"), "..", TRANSFORMER_MLIR)
    up = uploader(at, "upload-files")
    up.set_value([("module.mlir", open(src, "rb").read(), "text/plain")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_the_app_compiles_an_uploaded_module_for_a_tpu_against_the_cpu(backends, monkeypatch,
                                                                        tmp_path):
    from tests.support.apptest import texts
    at = _uploaded_mlir(monkeypatch, tmp_path)
    first = at.query_params["dump"]
    at.selectbox(key="compile-target").select("v5e:2x2").run()
    button = next(b for b in at.button if b.key == "compile-mlir")
    assert button.label == "Compile for v5e:2x2"
    button.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    dump, base = at.query_params["dump"], at.query_params["base"]
    assert first not in (dump, base) and dump != base
    from compiler_bridge.dumps import Store
    store = Store(str(tmp_path / "data"))
    assert dump_target(store.open(dump)).device_kind == "TPU v5 lite"
    assert dump_target(store.open(base)).kind == "cpu"
    assert "jit_train_step" in texts(at)


def test_the_app_says_how_to_install_the_compilers(monkeypatch, tmp_path):
    from tests.support.apptest import texts
    monkeypatch.setattr(cross_compile, "BACKENDS_VENV", str(tmp_path / "none"))
    at = _uploaded_mlir(monkeypatch, tmp_path)
    first = at.query_params["dump"]
    at.selectbox(key="compile-target").select("h100").run()
    next(b for b in at.button if b.key == "compile-mlir").click().run()
    assert not at.exception and len(at.error) == 1
    shown = texts(at)           # as the page reads (markdown's escapes taken out)
    assert "XLA's GPU and TPU compilers are not installed" in shown
    assert "make samples-backends" in shown and "requirements-backends.txt" in shown
    assert at.query_params["dump"] == first


def test_an_out_of_memory_tpu_compile_keeps_its_dump_and_xlas_words(backends, tmp_path):
    """The OOM sample's program (its HLO before optimizations) compiled here for its v5e:
    XLA refuses with the words it used when the sample was made, and what it dumped before
    stopping (buffer assignment, memory-usage report) is kept."""
    facts = _facts(sample("tpu_v5e_oom"))
    entry = facts["modules"][0]
    src = os.path.join(sample("tpu_v5e_oom"), entry["files"] + ".before_optimizations.txt")
    with pytest.raises(CompileError) as e:
        compile_module(src, facts["topology"], str(tmp_path / "oom"))
    words = entry["error"].splitlines()[0]
    assert words.startswith("RESOURCE_EXHAUSTED: Ran out of memory on HBM")
    assert words in str(e.value)
    assert e.value.out == str(tmp_path / "oom")
    assert words in _facts(e.value.out)["modules"][0]["error"]
    dump = open_dump(e.value.out)
    assert any(f.name.endswith("memory-usage-report.txt") for f in dump.main.files)
