"""Opening one module's file (issue 18): what reading a single HLO file, StableHLO or an HLO
proto costs, against jaxlib doing its part of the same work in the same run.

1. a single HLO text file (the three biggest peer modules): ``open_dump(FILE)`` (reads the
   file to tell what it is and guess its stage) + parsing the module; reference: XLA's own
   parser (``jaxlib._hlo.hlo_module_from_text``) on the same text;
2. StableHLO: each sample dump's ``module.mlir`` opened as a dump and parsed (jaxlib's
   conversion + printing + our parse); reference: ``mlir_module_to_xla_computation`` alone;
3. a binary HloProto of the transformer's after-optimizations module (written by jaxlib
   from its text, as ``--xla_dump_hlo_as_proto`` writes it): opened and parsed; reference:
   jaxlib reading the proto (``XlaComputation``) alone.

    .venv/bin/python -m bench.speed.open_bench [--repeat 5] [--no-write]
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile


from bench.common import ROOT, command, machine, median_time, publish
from compiler_bridge import open_dump

PEER = os.environ.get("HLOLENS_PEER_HLO") or os.path.join(os.path.dirname(ROOT), "shared",
                                                           "peer_hlo")


def _open_and_parse(path: str) -> int:
    d = open_dump(path)
    m = d.modules[0]
    return d.stage(m, m.files[0].kind).stats()["instructions"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from jax._src.lib import xla_client
    import jaxlib._hlo as H

    load = os.getloadavg()[0]
    rows = []
    peers = sorted(glob.glob(os.path.join(PEER, "*.hlo")), key=os.path.getsize)[-3:]
    for path in peers:
        text = open(path, encoding="utf-8").read()
        ours, _ = median_time(lambda: _open_and_parse(path), args.repeat)
        ref, _ = median_time(lambda: H.hlo_module_from_text(text), args.repeat)
        rows.append(("HLO text file " + os.path.basename(path), _open_and_parse(path),
                     ours, ref, "XLA's parser"))
    for path in sorted(glob.glob(os.path.join(ROOT, "sample_dumps", "*", "*", "module.mlir"))):
        data = open(path, "rb").read()
        ours, _ = median_time(lambda: _open_and_parse(path), args.repeat)
        ref, _ = median_time(lambda: xla_client._xla.mlir.mlir_module_to_xla_computation(
            data, use_tuple_args=False, return_tuple=False), args.repeat)
        rows.append((f"StableHLO {os.path.relpath(path, ROOT)}", _open_and_parse(path),
                     ours, ref, "jaxlib's conversion alone"))
    after = sorted(glob.glob(os.path.join(ROOT, "sample_dumps", "transformer",
                                          "*cpu_after_optimizations.txt")))[0]
    module = H.hlo_module_from_text(open(after, encoding="utf-8").read())
    proto = module.as_serialized_hlo_module_proto()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "jit_train_step.hlo.pb")
        with open(path, "wb") as f:
            f.write(proto)
        ours, _ = median_time(lambda: _open_and_parse(path), args.repeat)
        ref, _ = median_time(lambda: H.XlaComputation(proto).get_hlo_module(), args.repeat)
        rows.append(("HloModuleProto of the transformer (after optimizations)",
                     _open_and_parse(path), ours, ref, "jaxlib reading the proto alone"))

    lines = [
        "## Opening one module's file: HLO text, StableHLO, HLO proto", "",
        f"Command: {command()} — {machine()}, median of {args.repeat} runs each, one warm "
        "process (imports done; each open is a fresh `open_dump`, nothing cached); load "
        f"average {load:.1f} when it started (other jobs share these cores: compare ratios, "
        "not times).", "",
        "| file | instructions | open + parse | reference | ratio | reference is |",
        "|---|---:|---:|---:|---:|---|"]
    for name, n, ours, ref, what in rows:
        lines.append(f"| {name} | {n:,} | {ours * 1e3:.1f} ms | {ref * 1e3:.1f} ms | "
                     f"{ours / ref:.2f} | {what} |")
    lines += ["", "For StableHLO and protos, the difference from the reference is printing "
              "jaxlib's module as text and our parse of it."]
    publish("open_bench", lines, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
