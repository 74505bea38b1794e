"""Modules saved by ``jax.export``: ``Exported.mlir_module_serialized`` is a StableHLO
portable artifact (MLIR bytecode of versioned VHLO ops), what a serialized export holds;
``Exported.mlir_module()`` its StableHLO text. Both open and both compile for a target."""

from __future__ import annotations

import os

from compiler_bridge import cli, open_dump, parse_hlo_bytes
from compiler_bridge.hlo import MLIR_TEXT, to_hlo_text


def _export(folder) -> tuple[str, str]:
    """(the artifact's path, the text's path) of a small exported function."""
    import jax
    import jax.numpy as jnp
    from jax import export

    def g(x, w):
        return jax.nn.relu(x @ w).sum(axis=0)
    exp = export.export(jax.jit(g))(jax.ShapeDtypeStruct((4, 8), jnp.float32),
                                    jax.ShapeDtypeStruct((8, 16), jnp.float32))
    artifact, text = os.path.join(folder, "g.mlirbc"), os.path.join(folder, "g.mlir")
    with open(artifact, "wb") as f:
        f.write(exp.mlir_module_serialized)
    with open(text, "w", encoding="utf-8") as f:
        f.write(exp.mlir_module())
    return artifact, text


def test_a_portable_artifact_compiles_as_its_text_does(tmp_path):
    """Before, XLA refused the artifact ('MLIR module must have a main function'): its
    functions are VHLO's until deserialized."""
    artifact, text = _export(tmp_path)
    with open(artifact, "rb") as f:
        assert f.read(4) == b"ML\xefR"
    counts = []
    for src in (artifact, text):
        out = str(tmp_path / os.path.basename(src).replace(".", "_"))
        assert cli.main(["compile", src, "--target", "cpu", "--out", out]) == 0, src
        d = open_dump(out)
        assert [m.name for m in d.modules] == ["jit_g"]
        hlo = d.stage(d.main)
        counts.append(sorted((i.opcode for i in hlo.instructions())))
    assert counts[0] == counts[1]
    # and read as a module without compiling (jaxlib converts it), as the text is
    for src in (artifact, text):
        with open(src, "rb") as f:
            module = parse_hlo_bytes(to_hlo_text(f.read(), MLIR_TEXT, src), src)
        assert module.name == "jit_g"
