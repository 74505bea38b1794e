"""Programs compiled during a test for XLA:GPU (H100) or XLA:TPU (a topology by name),
without the hardware: in a child process of ``.venv-backends`` (jax with libtpu and the
CUDA plugin) with ``JAX_PLATFORMS=cpu`` and ``--xla_dump_to``, as
``sample_dumps/make_backend_samples.py`` does. The child writes ``xla_facts.json`` beside
the dump: per program, ``memory_analysis()`` of the compile (and jax's output
shardings: spec and one device's shape) or the error XLA raised. For
XLA behaviour no committed sample holds; each test's programs are small (seconds).

Without ``.venv-backends`` the test skips on a developer's machine and fails under CI=true
(``conftest.missing``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from compiler_bridge import cross_compile

H100_CONFIG = (Path(cross_compile.ROOT) / "compiler_bridge" / "targets" / "specs"
               / "h100_sxm.txtpb")

# the program text defines PROGRAMS: {name: (function, abstract args, jax.jit options)},
# built on DEVICES (the target's) and MESH (a 2x2 mesh of the first four, axes x and y)
_CHILD = r"""
import json, os, sys
import numpy as np
import jax, jax.numpy as jnp
from functools import partial
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
out, platform, topology, config = sys.argv[1:5]
if platform == "tpu":
    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
else:
    topo = topologies.get_topology_desc(platform="cuda", topology_name="",
                                        target_config=open(config).read(), topology=topology)
DEVICES = list(topo.devices)
MESH = Mesh(np.array(DEVICES[:4]).reshape(2, 2), ("x", "y"))
ONE = SingleDeviceSharding(DEVICES[0])
shard_map = partial(jax.shard_map, check_vma=False)
def S(shape, sharding=ONE, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)
def on(*axes):
    return NamedSharding(MESH, P(*axes))
exec(sys.argv[5])
facts = {}
for name, (fn, args, options) in PROGRAMS.items():
    try:
        compiled = jax.jit(fn, **options).lower(*args).compile()
        m = compiled.memory_analysis()
        outs = zip(jax.tree.leaves(compiled.output_shardings),
                   jax.tree.leaves(compiled.out_info))
        facts[name] = {"memory_analysis": {k: getattr(m, k) for k in dir(m)
                       if k.endswith("_in_bytes") and isinstance(getattr(m, k), int)},
                       # per output: jax's spec and one device's shape of it
                       "outputs": [{"spec": [list(a) if isinstance(a, tuple) else a
                                             for a in getattr(s, "spec", ())],
                                    "shard_shape": list(s.shard_shape(o.shape))}
                                   for s, o in outs]}
    except Exception as e:   # a refused compile is a fact too
        facts[name] = {"error": str(e)}
json.dump(facts, open(os.path.join(out, "xla_facts.json"), "w"))
"""

# a scan over sharded layers with its gradient, weights donated: in-loop collectives on
# every target (the kernels and the collectives tests share it)
SCAN_FSDP = r"""
def scan_fsdp(ws, x):
    def loss(ws):
        y, _ = jax.lax.scan(lambda x, w: (jax.nn.relu(x @ w), None), x, ws)
        return (y ** 2).mean()
    return ws - 0.1 * jax.grad(loss)(ws)
PROGRAMS = {"scan_fsdp": (scan_fsdp, (S((6, 512, 512), on(None, "x", "y")),
                                      S((128, 512), on(("x", "y"), None))),
                          {"donate_argnums": 0})}
"""

TARGETS = {"h100": ("cuda", "1x1x4"), "v5e": ("tpu", "v5e:2x2"),
           "v6e": ("tpu", "v6e:2x2"), "v5p": ("tpu", "v5p:2x2x1")}


def compile_for(target: str, folder: Path, program: str, flags: str = ""
                ) -> tuple[Path, dict]:
    """Compile ``program``'s PROGRAMS for ``target`` (a key of TARGETS) into
    ``folder/dump`` (with more XLA ``flags``, e.g. ``--xla_dump_hlo_pass_re=.*``): the
    dump and, per program, XLA's ``memory_analysis()`` or error."""
    python = os.path.join(cross_compile.BACKENDS_VENV, "bin", "python")
    if not os.path.exists(python):
        from conftest import missing
        missing(f"{cross_compile.BACKENDS_VENV} is missing (make samples-backends)")
    platform, topology = TARGETS[target]
    dump = folder / "dump"
    dump.mkdir(parents=True)
    flags = f"--xla_dump_to={dump} {flags}".strip()
    if platform == "cuda":      # one LLVM module at a time: the same PTX numbers each run
        flags += " --xla_gpu_force_compilation_parallelism=1"
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags, TF_CPP_MIN_LOG_LEVEL="2",
               ALLOW_MULTIPLE_LIBTPU_LOAD="1")
    p = subprocess.run([python, "-c", _CHILD, str(dump), platform, topology,
                        str(H100_CONFIG), program], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return dump, json.loads((dump / "xla_facts.json").read_text())
