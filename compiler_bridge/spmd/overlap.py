"""Overlap of communication with compute, from the schedule: which instructions run between
an async collective's start and its done, and how long the collective's bytes take over the
target's link — the part not hidden behind compute is *exposed*.

Estimate: ``sent_bytes / bandwidth`` of one device's link. A synchronous collective is
exposed whole; an async pair with compute scheduled between its start and done is counted
hidden (the compute between may be shorter: a measured trace says), one with none between
is exposed. The bandwidths are published figures, each taken as one device's send rate:

- TPU v5e: 1,600 Gbps of ICI per chip (Google Cloud's TPU v5e page) = 200 GB/s;
  TPU v6e: 3,584 Gbps = 448 GB/s; TPU v5p: 4,800 Gbps = 600 GB/s;
- H100 / H200 SXM: NVLink 4, 900 GB/s per GPU both ways (NVIDIA's datasheet) = 450 GB/s
  each way; A100 SXM: NVLink 3, 600 GB/s = 300 GB/s each way;
- CPU host devices (``--xla_force_host_platform_device_count``): copies in one process's
  memory; a stated default of 10 GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo import HloModule
from .collectives import collective_of, collectives

# what runs between a start and a done without computing anything
_NOT_COMPUTE = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast",
                          "after-all", "partition-id", "replica-id", "copy-start", "copy-done",
                          "opt-barrier"})


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    bytes_per_second: float
    source: str


LINKS = {
    "cpu": Link("host devices (stated default)", 10e9,
                "a stated default: host devices copy within one process's memory"),
    "tpu_v5e": Link("TPU v5e ICI", 200e9, "Google Cloud, TPU v5e: 1,600 Gbps ICI per chip"),
    "tpu_v6e": Link("TPU v6e ICI", 448e9, "Google Cloud, TPU v6e: 3,584 Gbps ICI per chip"),
    "tpu_v5p": Link("TPU v5p ICI", 600e9, "Google Cloud, TPU v5p: 4,800 Gbps ICI per chip"),
    "h100": Link("NVLink 4 (H100/H200 SXM)", 450e9,
                 "NVIDIA H100 SXM datasheet: NVLink 900 GB/s per GPU (both ways)"),
    "a100": Link("NVLink 3 (A100 SXM)", 300e9,
                 "NVIDIA A100 datasheet: NVLink 600 GB/s per GPU (both ways)"),
}


def link_for(platform: str, file_names: list[str]) -> Link:
    """The link of the target a module was compiled for: its after-optimizations prefix
    (``sm_9.0a_gpu``, ``sm_8.0_gpu``, ``cpu``) or, for XLA:TPU (no prefix), its files
    (``tpu_comp_env.txt``). XLA:TPU's files do not name the chip: a ``v6e`` / ``v5p`` in
    ``file_names`` (the caller adds the dump's name) picks that one, else v5e's."""
    p = platform.lower()
    if "gpu" in p:
        return LINKS["a100"] if p.startswith("sm_8") else LINKS["h100"]
    if any(n.endswith(("tpu_comp_env.txt", "after_codegen.txt")) for n in file_names):
        joined = " ".join(file_names).lower()
        return LINKS["tpu_v6e"] if "v6e" in joined else LINKS["tpu_v5p"] if "v5p" in joined \
            else LINKS["tpu_v5e"]
    return LINKS["cpu"]


def overlap(module: HloModule, rows: list[dict], link: Link) -> list[dict]:
    """Per collective row (``report.collective_rows``): the compute instructions scheduled
    between its start and done, the estimated seconds and the exposed seconds."""
    between: dict[str, list[str]] = {}
    for c in collectives(module):
        if c.done is None or c.instruction.computation is None:
            continue
        order = [i.name for i in c.instruction.computation.instructions]
        lo, hi = order.index(c.instruction.name), order.index(c.done.name)
        comp = c.instruction.computation.instruction_map
        between[c.instruction.name] = [
            n for n in order[lo + 1:hi]
            if comp[n].opcode not in _NOT_COMPUTE and not collective_of(comp[n].opcode)]
    out = []
    for r in rows:
        seconds = r["sent_bytes"] / link.bytes_per_second
        inside = between.get(r["name"], [])
        hidden = r["async"] and bool(inside)
        out.append({"name": r["name"], "kind": r["kind"], "async": r["async"],
                    "compute_between": inside, "estimated_s": seconds,
                    "exposed_s": 0.0 if hidden else seconds,
                    "exposed_bytes": 0 if hidden else r["sent_bytes"]})
    return out
