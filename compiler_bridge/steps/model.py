"""Steps and timelines: one snapshot per pass, in the order the passes ran.

A ``Timeline`` is plain data (picklable, cacheable by ``key``) whatever made it:
``source`` says whose snapshots they are (``HLO``: an HLO module's per-pass files;
``TF_GRAPH``: one TF graph's dumps around XLA clustering), ``unit`` what they count
(instructions, nodes) and ``metrics`` which of a step's counts a chart draws.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable

from ..dumps import PASS

HLO = "hlo"
TF_GRAPH = "tf_graph"
GRAPH_PASS = "graph_pass"     # Step.kind of a TF graph dump
# Step.index of an HLO module's StableHLO step: it precedes before_optimizations but sits
# outside ``steps`` so that every other step keeps its index (see passes/timeline.py)
STABLEHLO_INDEX = -1


@dataclass(frozen=True)
class Step:
    """One snapshot."""

    index: int                 # position in the timeline (0 = the first snapshot;
                               # STABLEHLO_INDEX = an HLO module's StableHLO, before it)
    file: str                  # path inside the dump
    kind: str                  # HLO: 'before_optimizations' | 'pass' | 'after_optimizations'
                               # | 'stablehlo'; TF: GRAPH_PASS
    pipeline: str              # HLO: the pass pipeline; '' for before/after and TF
    pass_name: str             # the pass that ran; 'before_optimizations' / 'after_optimizations'
    next_pass: str = ""        # the pass that runs next ('' when the name does not say)
    sequence: int | None = None    # HLO: the dumper's number; TF: the index
    text_hash: str = ""        # sha1 of the file
    identical: bool = False    # same bytes as the previous step
    instructions: int | None = None    # HLO counts (None on an error step and for TF)
    computations: int | None = None
    fusions: int | None = None
    entry_instructions: int | None = None
    tensor_bytes: int | None = None
    error: str = ""            # the reader's message when the file does not read
    nodes: int | None = None           # TF counts: the graph's nodes,
    clusters: int | None = None        # its XLA clusters (_XlaCluster or after encapsulation
    clustered: int | None = None       # the cluster call nodes), the nodes in them
    part: str = ""             # a dump of one part of the graph (a TF cluster), else ''
    unseen: str = ""           # HLO: passes that ran since the previous snapshot but that
                               # a narrowed --xla_dump_hlo_pass_re left undumped ('A … B')

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def stage(self) -> str:
        """The ``ViewState.stage`` value that names this step ('pass:0017')."""
        return f"pass:{self.sequence:04d}" if self.kind in (PASS, GRAPH_PASS) else self.kind

    @property
    def count(self) -> int | None:
        """What the step holds in its timeline's unit (instructions or nodes)."""
        return self.nodes if self.kind == GRAPH_PASS else self.instructions

    @property
    def label(self) -> str:
        """'0017 HLO_passes_through_layout_assignment / layout-assignment'; TF:
        '3 mark_for_compilation'."""
        if self.kind == GRAPH_PASS:
            return f"{self.index} {self.pass_name}"
        if self.kind != PASS:
            return self.pass_name.replace("_", " ")
        return f"{self.sequence:04d} {self.pipeline} / {self.pass_name}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Timeline:
    """Every step of one module (HLO) or graph (TF)."""

    module_id: str             # HLO: the module id; TF: 'tf:<graph group>'
    module_name: str           # what the chart's title names
    steps: tuple[Step, ...]
    per_pass: bool             # False: only before/after; show the timeline's ``hint``
    hint: str = ""
    dump_key: str = ""         # Dump.key of the dump it was read from
    source: str = HLO          # HLO or TF_GRAPH
    unit: str = "instruction"  # what a step's count counts
    metrics: tuple[str, ...] = ("instructions", "fusions", "entry_instructions")
    stablehlo: Step | None = None   # HLO: the module's StableHLO, before ``steps`` (index -1)

    @property
    def key(self) -> str:
        """Content identity: the dump's key and the module id (``<dump key>#<id>``)."""
        return f"{self.dump_key}#{self.module_id}"

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def step(self, index: int) -> Step:
        if index == STABLEHLO_INDEX and self.stablehlo is not None:
            return self.stablehlo
        if index < 0:          # never Python's from-the-end indexing
            raise IndexError(f"no step {index}")
        return self.steps[index]

    @property
    def every_step(self) -> tuple[Step, ...]:
        """The steps in the compile's order: the StableHLO (when there is one), then
        ``steps`` (what the stage picker lists)."""
        return ((self.stablehlo,) if self.stablehlo is not None else ()) + self.steps

    def index_of(self, stage: str) -> int | None:
        """The step for a ``ViewState.stage`` ('pass:0017', 'pass:17',
        'after_optimizations'...); None when no step has it."""
        if stage.startswith("pass:"):
            try:
                seq = int(stage[5:])
            except ValueError:
                return None
            stage = f"pass:{seq:04d}"
        for s in self.every_step:
            if s.stage == stage:
                return s.index
        return None

    def previous_ok(self, index: int) -> int | None:
        """The last step before ``index`` that parsed (what ``index`` is compared with).
        Dumps of one part (a TF cluster) compare with that part's previous dump, else
        with the last dump of the whole; a whole dump never compares with a part. None for
        the first step and the StableHLO (compared only when asked)."""
        if index <= 0:
            return None
        part = self.steps[index].part
        for k in range(index - 1, -1, -1):
            s = self.steps[k]
            if s.ok and (s.part == part or not s.part):
                return k
        return None

    def search(self, query: str) -> list[Step]:
        """Steps whose pipeline or pass name contains ``query`` (case-insensitive)."""
        q = query.strip().lower()
        return [s for s in self.steps
                if not q or q in s.pass_name.lower() or q in s.pipeline.lower()
                or q in s.next_pass.lower()]

    def visible(self, hide_identical: bool = False) -> list[Step]:
        """The steps to list: all, or without those identical to the previous one."""
        return [s for s in self.steps if not (hide_identical and s.identical)]


def change_counts(timeline: Timeline, diff: Callable[[int, int], Any]
                  ) -> list[dict[str, int | None]]:
    """Per step, how many entities were added/removed/changed against the step it compares
    with (``diff(index, against)`` has those three lists): zeros for the first step and
    identical ones, None on a step that does not read."""
    out: list[dict[str, int | None]] = []
    for s in timeline.steps:
        if s.error:
            out.append({"added": None, "removed": None, "changed": None})
            continue
        prev = timeline.previous_ok(s.index)
        if s.identical or prev is None:
            out.append({"added": 0, "removed": 0, "changed": 0})
            continue
        d = diff(s.index, prev)
        out.append({"added": len(d.added), "removed": len(d.removed), "changed": len(d.changed)})
    return out
