"""Comparing two compiles that no committed sample holds, made on the spot by JAX
(``tests.support.fresh``): the flags each dump's ``debug_options`` says, as XLA wrote them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import sample

from compiler_bridge import compare_dumps, open_dump
from compiler_bridge.compare import flags_diff
from tests.support.fresh import compile_program

PROGRAM = "def f(x):\n    return (jnp.tanh(x) @ x).sum() * 1.0\nARGS = (np.ones((4, 4), np.float32),)\n"


def test_a_repeated_flag_reads_as_xla_flags_writes_it(tmp_path):
    """``--xla_disable_hlo_passes=algsimp,cse``: XLA writes one ``debug_options`` line per
    pass; the diff and ``as_xla_flags`` give the flag back as XLA_FLAGS sets it."""
    plain, _ = compile_program(tmp_path / "a", PROGRAM)
    off, _ = compile_program(tmp_path / "b", PROGRAM, "--xla_dump_hlo_as_text "
                             "--xla_disable_hlo_passes=algsimp,cse")
    written = re.findall(r'^xla_disable_hlo_passes: "([^"]*)"$',
                         next(off.glob("*.debug_options")).read_text(), re.M)
    assert written == ["algsimp", "cse"]
    d = flags_diff(open_dump(plain), open_dump(off))
    assert d.only_b == ("--xla_disable_hlo_passes=algsimp,cse",)
    assert not d.only_a and not d.changed
    side = compare_dumps(open_dump(plain), open_dump(off)).side_json("b")
    assert "--xla_disable_hlo_passes=algsimp,cse" in side["xla_flags"]


_CUT = 'xla_gpu_cuda_data_dir: "./cuda_s'


def _cut_flags(tmp_path) -> tuple[Path, str, int]:
    """A copy of the committed flags_default whose first compile_options.textproto is cut
    inside a quoted value: (the copy, that file in it, the cut line)."""
    a = tmp_path / "a"
    shutil.copytree(sample("flags_default"), a)
    options = next(a.glob("module_0000.*/compile_options.textproto"))
    text = options.read_text()
    cut = text.index(_CUT) + len(_CUT)
    options.write_text(text[:cut])
    return a, options.relative_to(a).as_posix(), text[:cut].count("\n") + 1


def test_a_flags_file_cut_short_is_named_not_compared(tmp_path):
    """A compile_options.textproto cut inside a quoted value: the cut line is no flag
    value; the comparison says which file and line, and the flags that differ are still
    the ones XLA wrote."""
    a, rel, line = _cut_flags(tmp_path)
    whole = flags_diff(open_dump(sample("flags_default")), open_dump(sample("flags_no_fusion_emitters")))
    d = flags_diff(open_dump(a), open_dump(sample("flags_no_fusion_emitters")))
    # the same flags differ (A's value of those past the cut is not known: 'only B')
    assert _names(d) == _names(whole) == {"xla_cpu_use_fusion_emitters"}
    assert not [c for c in d.changed if c not in whole.changed]
    assert not [f for f in d.only_a + d.only_b if '"' in f]
    assert [p.split(": ", 1)[0] for p in d.problems_a] == [f"{rel}:{line}"]
    assert not d.problems_b
    cmp = compare_dumps(open_dump(a), open_dump(sample("flags_no_fusion_emitters")))
    assert any(n.startswith(f"A (a): {rel}:{line}: ") for n in cmp.notes)


def _names(d) -> set[str]:
    return {f[2:].split("=", 1)[0] for f in d.only_a + d.only_b} | {c[0] for c in d.changed}


def test_the_page_names_the_flags_file_cut_short(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.support.apptest import APP, ok, texts
    a, rel, line = _cut_flags(tmp_path)
    monkeypatch.setenv("HLOLENS_DUMP", str(a))
    monkeypatch.setenv("HLOLENS_COMPARE", sample("flags_no_fusion_emitters"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.run()                      # the first run moved the URL to the comparison
    ok(at)
    page = texts(at).replace("\\", "")
    assert f"baseline: {rel}:{line}: expected a text-proto field" in page


# the program compiled with its own options (jax's compiler_options), after JAX's eager
# helpers (jnp.arange, reshape: modules of their own, compiled with XLA_FLAGS alone)
WITH_OPTIONS = """
def _g(a):
    return jnp.tanh(a @ a.T).sum()
class _Lowered:
    def __init__(self, lowered):
        self.lowered = lowered
    def compile(self):
        return self.lowered.compile(compiler_options=OPTIONS)
class _Jit:
    def lower(self, *args):
        self.compiled = _Lowered(jax.jit(_g).lower(*args)).compile()
        return self
    def compile(self):
        return self.compiled
    def __call__(self, *args):
        return self.compiled(*args)
f = _Jit()
ARGS = (jnp.arange(32.0).reshape(8, 4),)
"""


def test_the_flags_compared_are_the_programs_not_a_helpers(tmp_path):
    """With several pairs (the program and JAX's helpers), the flags compared and listed
    are the user's program's (``Dump.main``), not the first helper's."""
    plain, _ = compile_program(tmp_path / "a", "OPTIONS = {}\n" + WITH_OPTIONS)
    tuned, _ = compile_program(tmp_path / "b", 'OPTIONS = {"xla_cpu_use_fusion_emitters": '
                               'False}\n' + WITH_OPTIONS)
    a, b = open_dump(plain), open_dump(tuned)
    assert b.main.name == "jit__g" and len(b.modules) > 1
    written = {m.name: next(tuned.glob(f"module_{m.id}.*.debug_options")).read_text()
               for m in b.modules}
    assert "xla_cpu_use_fusion_emitters: false" in written["jit__g"]
    assert not [n for n, t in written.items() if n != "jit__g" and "fusion_emitters" in t]
    cmp = compare_dumps(a, b)
    assert len(cmp.reports) > 1
    assert _names(cmp.flags) == {"xla_cpu_use_fusion_emitters"}
    assert "--xla_cpu_use_fusion_emitters=false" in cmp.side_json("b")["xla_flags"]
