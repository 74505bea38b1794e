"""TensorFlow's stderr with ``TF_CPP_VMODULE=mark_for_compilation_pass=3,
compilability_check_util=3`` (and the graph dumper's lines): the only record of why a node
was not clustered, and TF's own ``Clustering info`` summary of each clustering run.

The log is cut into runs: a run starts at ``Starting fuel`` (mark_for_compilation begins a
graph) or, in logs without auto-clustering, where a graph's dumps start over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .graph_passes import pass_of

_PREFIX = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.\-]+:\d+\] ?")
_UNCOMPILABLE = re.compile(r"Found uncompilable node (\S+) \(op (\S+)\): ?(.*)$")
_DUMPED = re.compile(r"Dumped (?:Graph|FunctionDef) to (.+?)\s*$")
_INFO = re.compile(r"\*\*\* Clustering info for graph of size (\d+)")
_BUILT = re.compile(r"^\s*Built (\d+) clusters, size (\d+) / (\d+)")
_CLUSTER = re.compile(r"^\s*(\S+) (\d+) / (\d+) \(")
_UNCLUSTERED = re.compile(r"^\s*Unclustered nodes: (\d+) / (\d+)")
_OP_COUNT = re.compile(r"^\s*(\S+): (\d+) instances")
# 'Could not contract <A #i> -> <B + 3 others #j> because <why>.': A (a node, or a cluster
# named by one of its nodes) stays out of B's cluster. TF 2.21's whys: 'contracting the edge
# would create a cycle via [x,<y + 2 others #k>]' (or 'via (all clusters) [...]'), 'the new
# cluster would break resource variable semantics', and others
_CONTRACT = re.compile(r"Could not contract <(.+?) #\d+> -> <(.+?) #\d+> because (.*?)\.?$")
_CYCLE_VIA = re.compile(r"cycle via (?:\(all clusters\) )?\[(.*)\]$")
_OTHERS = re.compile(r" \+ \d+ others$")
_MEMBER = re.compile(r"^<(.+?)(?: \+ \d+ others)? #\d+>$")
MARKERS = ("Found uncompilable node", "Clustering info for graph", "Dumped Graph to")


@dataclass(frozen=True, slots=True)
class Uncompilable:
    node: str
    op: str
    reason: str


@dataclass(frozen=True, slots=True)
class ClusterSummary:
    name: str
    size: int
    ops: dict[str, int]


@dataclass(slots=True)
class ClusteringInfo:
    """TF's ``*** Clustering info for graph of size N`` block."""

    graph_size: int
    clusters: list[ClusterSummary] = field(default_factory=list)
    unclustered: dict[str, int] = field(default_factory=dict)
    unclustered_size: int = 0


@dataclass(frozen=True, slots=True)
class CycleNote:
    """``Could not contract A -> B ... cycle via [x, y]``: two would-be clusters kept apart."""

    source: str      # a node of the first cluster (its representative)
    target: str
    via: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KeptOut:
    """``Could not contract <A> -> <B> because <why>``: TF's reason why A and B (each a node,
    or a would-be cluster named by one of its nodes) were not merged — the reason the one of
    them that ended unclustered stayed out of the other's cluster."""

    source: str
    target: str
    because: str     # TF's words, without the final period
    via: tuple[str, ...] = ()       # a cycle's path (clusters named by one of their nodes)


@dataclass(slots=True)
class LogRun:
    dumped: list[str] = field(default_factory=list)     # dump paths, in the log's order
    uncompilable: list[Uncompilable] = field(default_factory=list)
    info: ClusteringInfo | None = None
    cycles: list[CycleNote] = field(default_factory=list)
    kept_out: list[KeptOut] = field(default_factory=list)


    def reasons(self) -> dict[str, Uncompilable]:
        return {u.node: u for u in self.uncompilable}


@dataclass(slots=True)
class TfLog:
    file: str
    runs: list[LogRun]

    def run_of(self, path: str) -> LogRun | None:
        """The last run that dumped the file at ``path``: matched by its trailing path
        parts, else (the folder was moved or rearranged after the run) by its name alone."""
        # several (a log appended to by runs of the program): the file on disk is the
        # last one's, which wrote it last
        for run in reversed(self.runs):
            for d in run.dumped:
                if _same_file(d, path):
                    return run
        base = path.rsplit("/", 1)[-1]
        named = [run for run in self.runs for d in run.dumped if d.rsplit("/", 1)[-1] == base]
        return named[-1] if named else None


def _same_file(logged: str, path: str) -> bool:
    a, b = logged.split("/"), path.split("/")
    n = min(len(a), len(b))
    return a[-n:] == b[-n:]


def _member(text: str) -> str:
    """A node of a cycle's path: '<y + 2 others #k>' (a cluster) as the node named."""
    m = _MEMBER.match(text.strip())
    return m.group(1) if m else text.strip()


def looks_like_log(text: str) -> bool:
    return any(m in text for m in MARKERS)


def parse_log(text: str, file: str) -> TfLog:
    runs: list[LogRun] = []
    run: LogRun | None = None
    last_rank = -1
    info: ClusteringInfo | None = None
    current: dict[str, int] | None = None      # the op histogram being read
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw, count=1)
        if info is not None:
            if _BUILT.match(line):
                continue
            if m := _UNCLUSTERED.match(line):
                current = info.unclustered
                info.unclustered_size = int(m.group(1))
                continue
            if m := _OP_COUNT.match(line):
                if current is not None:
                    current[m.group(1)] = int(m.group(2))
                continue
            if m := _CLUSTER.match(line):
                summary = ClusterSummary(m.group(1), int(m.group(2)), {})
                info.clusters.append(summary)
                current = summary.ops
                continue
            info = current = None       # the block ended
        if run is None or "Starting fuel" in line:
            run = LogRun()
            runs.append(run)
            last_rank = -1
        if m := _DUMPED.search(line):
            path = m.group(1)
            p = pass_of(path.rsplit("/", 1)[-1])
            rank = p.rank
            # per-cluster dumps (any order, cluster by cluster) never start a graph
            if not p.per_cluster and rank <= last_rank:
                run = LogRun()
                runs.append(run)
            run.dumped.append(path)
            last_rank = max(last_rank, rank) if p.per_cluster else rank
        elif m := _UNCOMPILABLE.search(line):
            run.uncompilable.append(Uncompilable(m.group(1), m.group(2), m.group(3).strip()))
        elif m := _INFO.search(line):
            info = run.info = ClusteringInfo(int(m.group(1)))
        elif m := _CONTRACT.search(line):
            source, target = _OTHERS.sub("", m.group(1)), _OTHERS.sub("", m.group(2))
            because = m.group(3)
            via: tuple[str, ...] = ()
            if c := _CYCLE_VIA.search(because):
                via = tuple(_member(x) for x in c.group(1).split(",") if x)
                note = CycleNote(source, target, via)
                if note not in run.cycles:
                    run.cycles.append(note)
            run.kept_out.append(KeptOut(source, target, because, via))
    return TfLog(file, [r for r in runs if r.dumped or r.uncompilable or r.info])
