"""Compile one StableHLO or HLO module for a target, in a process of its own (run as a
script by ``compiler_bridge.targets.compile``, in ``.venv-backends`` for GPU and TPU): it
imports jax only, never HLO Lens, and XLA dumps the compile into ``--xla_dump_to`` (set by
the parent in ``XLA_FLAGS``, which XLA reads once per process).

    python compile_child.py INPUT OUT PLATFORM TOPOLOGY [TARGET_CONFIG]

PLATFORM is 'tpu', 'cuda' or 'cpu'; TOPOLOGY a TPU topology name ('v5e:2x2'); for 'cuda'
TARGET_CONFIG is a ``GpuTargetConfigProto`` text (the device XLA:GPU compiles for). No
accelerator is needed: jax's compile-only devices of the topology (``jax.experimental.
topologies``) compile, nothing runs. Beside the dump it writes ``xla_facts.json``: what XLA
says of the compile (``cost_analysis()``, ``memory_analysis()``, or the error), as
``make samples-backends`` does. Exit status 0: compiled; 3: XLA refused (the error is in the
facts and on stderr); 2: bad input.
"""

from __future__ import annotations

import json
import os
import re
import sys

MLIR_BYTECODE = b"ML\xefR"


def counts(text: str) -> tuple[int, int]:
    """(replicas, partitions) the module asks for: HLO's header, StableHLO's attributes."""
    def one(pattern: str) -> int:
        m = re.search(pattern, text[:20000])
        return int(m.group(1)) if m else 1
    return (one(r"(?:num_replicas=|mhlo\.num_replicas\s*=\s*)(\d+)"),
            one(r"(?:num_partitions=|mhlo\.num_partitions\s*=\s*)(\d+)"))


def as_stablehlo(data: bytes):
    """The module as jax's compiler takes it: StableHLO text or bytecode as is, HLO text
    converted (jaxlib's HLO parser, then XLA's HLO -> StableHLO translation)."""
    text = data.decode("utf-8", "replace")
    if data.startswith(MLIR_BYTECODE) or re.search(r"^\s*(module|func\.func)\b", text, re.M):
        return data if data.startswith(MLIR_BYTECODE) else text, counts(text)
    from jax._src.lib import xla_client as xc
    from jaxlib import _hlo  # type: ignore[attr-defined]
    module = _hlo.hlo_module_from_text(text)
    proto = module.as_serialized_hlo_module_proto()
    return xc._xla.mlir.hlo_to_stablehlo(proto), counts(text)


def _parse(module):
    """The MLIR module (within its context). Bytecode may be a StableHLO portable artifact
    (``jax.export``'s ``mlir_module_serialized``: versioned VHLO ops, whose functions XLA
    does not see): deserialized into StableHLO first, as jax does before it compiles one."""
    from jax._src.lib.mlir import ir
    if isinstance(module, bytes):
        try:
            from jax._src.lib import _jax
            return _jax.mlir.deserialize_portable_artifact(module)
        except Exception:      # noqa: BLE001 - plain StableHLO bytecode, not an artifact
            pass
    return ir.Module.parse(module)


def devices_for(platform: str, topology: str, config: str, n: int) -> list:
    import jax
    from jax.experimental import topologies
    if platform == "tpu":
        topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
    elif platform == "cuda":
        topo = topologies.get_topology_desc(platform="cuda", topology_name="",
                                            target_config=config, topology=f"1x1x{n}")
    else:
        return list(jax.devices("cpu"))
    return list(topo.devices)


def main(argv: list[str]) -> int:
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    source, out, platform, topology = argv[:4]
    config = open(argv[4], encoding="utf-8").read() if len(argv) == 5 else ""
    with open(source, "rb") as f:
        data = f.read()
    import numpy as np
    from jax._src import compiler
    from jax._src.lib import xla_client as xc
    try:
        module, (replicas, partitions) = as_stablehlo(data)
    except Exception as e:     # noqa: BLE001 - jaxlib's parser says what is wrong
        print(f"not a StableHLO or HLO module: {str(e).strip().splitlines()[0]}",
              file=sys.stderr)
        return 2
    n = replicas * partitions
    devices = devices_for(platform, topology, config, n)
    if len(devices) < n:
        print(f"the module asks for {n} devices ({replicas} replicas x {partitions} "
              f"partitions); the target has {len(devices)}", file=sys.stderr)
        return 2
    devices = devices[:n]
    backend = devices[0].client
    from jax._src.interpreters import mlir as jax_mlir
    context = jax_mlir.make_ir_context()
    try:
        with context:
            module = _parse(module)
    except Exception as e:     # noqa: BLE001 - MLIR's parser says what is wrong
        print(f"not a StableHLO module: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        return 2
    assignment = np.array(devices, dtype=object).reshape(replicas, partitions)
    options = compiler.get_compile_options(replicas, partitions, assignment, backend=backend)
    facts: dict = {"made_by": "python -m compiler_bridge compile", "platform": platform,
                   "topology": topology, "device_kind": devices[0].device_kind,
                   "num_devices": n}
    try:
        # a compile-only client (TPU, GPU) compiles; this machine's CPU client loads too
        compile_ = backend.compile_and_load if platform == "cpu" else backend.compile
        with context:
            exe = compile_(module, executable_devices=xc.DeviceList(tuple(devices)),
                           compile_options=options)
    except Exception as e:     # noqa: BLE001 - XLA's refusal is the fact to keep
        facts["error"] = str(e)
        print(f"XLA could not compile it: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        _write(out, facts)
        return 3
    try:
        cost = exe.cost_analysis()
    except Exception:      # noqa: BLE001 - XLA:GPU compiled without a GPU has none
        cost = None
    if isinstance(cost, list):
        cost = cost[0] if cost else None
    facts["cost_analysis"] = {k: float(v) for k, v in sorted(cost.items())} if cost else None
    try:
        stats = exe.get_compiled_memory_stats()
        facts["memory_analysis"] = {k: getattr(stats, k) for k in sorted(dir(stats))
                                    if k.endswith("_in_bytes")
                                    and isinstance(getattr(stats, k), int)}
    except Exception:      # noqa: BLE001 - not every backend reports it
        facts["memory_analysis"] = None
    _write(out, facts)
    return 0


def _write(out: str, facts: dict) -> None:
    """``xla_facts.json`` as the samples hold it: one module, named by its files' prefix."""
    prefixes = sorted({m.group(1) for n in os.listdir(out)
                       if (m := re.match(r"^(module_\d+\.[^.]+(?:\.cl_\d+)?)\.", n))})
    name = prefixes[-1] if prefixes else ""
    entry = {"module": name.split(".")[1] if name else "", "files": name,
             "devices": facts.pop("num_devices")}
    for key in ("error", "cost_analysis", "memory_analysis"):
        if key in facts:
            entry[key] = facts.pop(key)
    facts["num_devices"] = entry["devices"]
    facts["modules"] = [entry]
    with open(os.path.join(out, "xla_facts.json"), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
