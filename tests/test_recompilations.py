"""'Compare with…' offers recompilations: the function on screen compiled again for other
shapes, nothing else (issue 32, item 3). The dump is real JAX output, compiled here: a
jit function for two batch sizes, and JAX's eager helpers (``x.astype``) compiled as
``jit_convert_element_type`` once per dtype, most with the same parameter."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest
from tests.support.apptest import APP, ok, open_expander

from compiler_bridge import open_dump
from compiler_bridge.compare import recompilations

PROGRAM = r"""
import numpy as np
import jax
import jax.numpy as jnp

def train_step(w, x):
    return jnp.tanh(x @ w).sum()

w = np.ones((16, 16), np.float32)
for batch in (8, 4):                                   # a recompilation: other shapes
    jax.jit(train_step)(w, np.ones((batch, 16), np.float32))
x = jnp.ones(4, jnp.float32)
for dtype in (jnp.bfloat16, jnp.int32, jnp.float16):  # eager helpers: the same parameter
    x.astype(dtype)
"""


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> str:
    try:
        import jax  # noqa: F401
    except ImportError:
        from conftest import missing
        missing("jax is not installed")
    folder = tmp_path_factory.mktemp("recompiled") / "dump"
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"--xla_dump_to={folder} --xla_dump_hlo_as_text")
    subprocess.run([sys.executable, "-c", PROGRAM], env=env, check=True, timeout=300,
                   capture_output=True)
    return str(folder)


def _entry_parameters(path: str) -> tuple[str, ...]:
    """The ENTRY computation's parameter shapes, as the HLO text writes them."""
    text = open(path).read()
    entry = text[text.index("\nENTRY "):]
    entry = entry[: entry.index("\n}")]
    return tuple(re.findall(r"= (\w+\[[\d,]*\])(?:\{[^}]*\})? parameter\(", entry))


def test_a_recompilation_is_the_function_for_other_shapes(dump):
    files = sorted(f for f in os.listdir(dump) if f.endswith(".before_optimizations.txt"))
    by_name: dict[str, set] = {}
    count: dict[str, int] = {}
    for f in files:
        name = f.split(".")[1]
        by_name.setdefault(name, set()).add(_entry_parameters(os.path.join(dump, f)))
        count[name] = count.get(name, 0) + 1
    # the dump has helpers compiled several times with the same parameters
    assert count["jit_convert_element_type"] > len(by_name["jit_convert_element_type"])
    got = {r.name: r for r in recompilations(open_dump(dump))}
    assert set(got) == {n for n, shapes in by_name.items() if len(shapes) > 1}
    for name, r in got.items():
        assert len(r.modules) == len(by_name[name])          # one per parameter shapes
        assert not any("the same parameters" in x for x in r.differences())


def test_compare_with_offers_only_the_recompilations_of_the_function_shown(dump,
                                                                           monkeypatch):
    monkeypatch.setenv("HLOLENS_DUMP", dump)
    monkeypatch.delenv("HLOLENS_COMPARE", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    ok(at)
    open_expander(at, "Compare with…")
    assert open_dump(dump).main.name == "jit_train_step"       # the module shown
    captions = [c.value for c in at.caption if "was compiled" in c.value]
    assert len(captions) == 1 and "jit\\_train\\_step" in captions[0], captions
    keys = [b.key for b in at.button if str(b.key).startswith("recompiled:")]
    assert keys == ["recompiled:jit_train_step"]
