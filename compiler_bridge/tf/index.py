"""The TensorFlow half of a dump: its graph files grouped by graph across passes, the step
graph, each XLA cluster with its nodes, op histogram and XLA module, the jit_compile
functions with theirs, and (from a log, when one is in the folder) why nodes were left out.

``tf_index(dump)`` builds it once per dump (``Dump.derived``); a graph file that cannot be
read is reported in ``Dump.errors`` and the rest still opens.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from ..dumps import TF_GRAPH, TRACE, XPLANE, Dump, DumpError, DumpModule
from ..hlo import HloParseError
from .inputs import module_inputs
from .graphdef import FUNCTION, GraphReadError, TfGraph, TfNode, read_graph
from .log import (ClusterSummary, CycleNote, KeptOut, LogRun, TfLog, Uncompilable,
                  looks_like_log, parse_log)
from .graph_passes import ANNOTATED, BEFORE_ENCAPSULATE, MARK, GraphPass, pass_of

T = TypeVar("T")
MAX_LOG_BYTES = 64 << 20
_SIMILAR = 0.5          # share of the smaller graph's node names two dumps of one graph share


@dataclass(slots=True)
class GraphFile:
    path: str
    graph: TfGraph
    pass_: GraphPass

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n.base_name for n in self.graph.nodes)


@dataclass(slots=True)
class GraphGroup:
    """One graph's dumps across passes, in pass order."""

    index: int
    files: list[GraphFile] = field(default_factory=list)

    def of_pass(self, name: str) -> GraphFile | None:
        for f in self.files:
            if f.pass_.name == name:
                return f
        return None

    @property
    def largest(self) -> int:
        return max((len(f.graph.nodes) for f in self.files), default=0)

    @property
    def last(self) -> GraphFile:
        """The latest graph-wide dump (per-cluster dumps hold only a cluster)."""
        for f in reversed(self.files):
            if f.pass_.cluster is None:
                return f
        return self.files[-1]


@dataclass(slots=True)
class Cluster:
    name: str
    nodes: list[TfNode]
    module: DumpModule | None
    graph: str = ""         # the graph dump it is read from
    pipeline: str = ""      # the tf.data function the graph is, when it is one

    @property
    def ops(self) -> dict[str, int]:
        return dict(sorted(Counter(n.op for n in self.nodes).items()))


@dataclass(frozen=True, slots=True)
class JitUnit:
    """A ``jit_compile=True`` function and one XLA module compiled from it."""

    function: str
    module: DumpModule
    inputs: str = ""       # its ENTRY parameters' shapes (retraces differ by them)

    @property
    def eager(self) -> bool:
        """Compiled for a call from Python (eager): XLA's module name then carries the
        eager op's attributes ('_XlaMustCompile_true_config_proto_..'); a call node of a
        tf.function's graph compiles under the function's name alone."""
        return "_XlaMustCompile_true" in self.module.name


@dataclass(frozen=True, slots=True)
class LooseCluster:
    """An auto-clustering cluster's XLA module that no graph dump in the folder holds (the
    folder has only XLA's files: TF_DUMP_GRAPH_PREFIX unset, or its graphs elsewhere), with
    TF's log's summary of the cluster when the log has one."""

    name: str
    module: DumpModule
    summary: ClusterSummary | None


@dataclass(slots=True)
class TfIndex:
    files: list[GraphFile]
    groups: list[GraphGroup]
    step: GraphGroup | None           # the step graph's dumps: the group of main
    main: GraphFile | None            # the step graph as mark_for_compilation left it: the
                                      # round TF clustered (else the largest graph)
    clusters: list[Cluster]
    log: TfLog | None
    run: LogRun | None                # the log's run of the step graph
    jit: list[JitUnit]
    errors: list[tuple[str, str]] = field(default_factory=list)
    # the clusters TF built in other graphs than the step graph (a program's other
    # tf.functions: an evaluation step, a tf.data map function), graph by graph
    elsewhere: list[Cluster] = field(default_factory=list)
    loose: list[LooseCluster] = field(default_factory=list)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def derived(self, what: str, compute: Callable[["TfIndex"], T]) -> T:
        """``compute(self)`` once per index (the index lives as long as its dump)."""
        if what not in self.memo:
            self.memo[what] = compute(self)
        return self.memo[what]

    @property
    def empty(self) -> bool:
        return not self.files and not self.jit and not self.loose

    def reason(self, node: str) -> Uncompilable | None:
        """The log's 'uncompilable' line for a node of the step graph, if any."""
        return self.derived("reasons", _run_reasons).get(node)

    def kept_out(self, node: str) -> KeptOut | None:
        """The log's last 'Could not contract' line between an unclustered node of the step
        graph and a neighbour (TF tries again as clusters grow), if any."""
        return self.derived("kept-out", _run_kept_out).get(node)

    @property
    def loose_reasons(self) -> list[Uncompilable]:
        """The log's 'uncompilable' lines of the runs that built the loose clusters (the
        function's own _Arg and _Retval left out): why nodes stayed out of them."""
        names = {c.name for c in self.loose}
        out: dict[str, Uncompilable] = {}
        for r in self.log.runs if self.log is not None and names else ():
            if r.info is not None and names & {c.name for c in r.info.clusters}:
                out.update((u.node, u) for u in r.uncompilable
                           if "top level _Arg or _Retval" not in u.reason)
        return list(out.values())

    def cluster_of(self, node: str) -> Cluster | None:
        return self.derived("cluster-of", _cluster_map).get(node)

    @property
    def cycles(self) -> list[CycleNote]:
        return list(self.run.cycles) if self.run is not None else []

    def to_json(self) -> dict:
        """The ``clusters`` command's JSON."""
        graphs = []
        for g in self.groups:
            for f in g.files:
                clusters = {name: len(nodes) for name, nodes in f.graph.clusters().items()}
                graphs.append({"file": f.path, "pass": f.pass_.name,
                               "nodes": len(f.graph.nodes), "clusters": clusters,
                               "unclustered": len(f.graph.nodes) - sum(clusters.values())})
        main: dict = {}
        if self.main is not None:
            clustered = {n.name for c in self.clusters for n in c.nodes}
            unclustered = []
            for n in self.main.graph.nodes:
                if n.name in clustered:
                    continue
                r = self.reason(n.name)
                unclustered.append({"node": n.name, "op": n.op,
                                    "reason": r.reason if r is not None else None})
            main = {"file": self.main.path, "nodes": len(self.main.graph.nodes),
                    "clusters": [{"name": c.name, "nodes": len(c.nodes), "ops": c.ops,
                                  "module": c.module.id if c.module else None}
                                 for c in self.clusters],
                    "unclustered": unclustered}
        return {"graphs": graphs, "main": main,
                "elsewhere": [{"name": c.name, "graph": c.graph, "nodes": len(c.nodes),
                               "ops": c.ops, "module": c.module.id if c.module else None,
                               "pipeline": c.pipeline or None}
                              for c in self.elsewhere],
                "loose": [{"name": c.name, "module": c.module.id,
                           "nodes": c.summary.size if c.summary else None,
                           "ops": c.summary.ops if c.summary else None} for c in self.loose],
                "loose_unclustered": [{"node": u.node, "op": u.op, "reason": u.reason}
                                      for u in self.loose_reasons],
                "jit": [{"function": j.function, "module": j.module.id, "inputs": j.inputs,
                         "called": "eager" if j.eager else "graph"} for j in self.jit]}


def _cluster_map(ix: TfIndex) -> dict[str, Cluster]:
    return {n.name: c for c in ix.clusters for n in c.nodes}


def _run_kept_out(ix: TfIndex) -> dict[str, KeptOut]:
    out: dict[str, KeptOut] = {}
    if ix.run is None:
        return out
    for k in ix.run.kept_out:
        for node in (k.source, k.target):
            if ix.cluster_of(node) is None:
                out[node] = k
    return out


def _run_reasons(ix: TfIndex) -> dict[str, Uncompilable]:
    return ix.run.reasons() if ix.run is not None else {}


# --------------------------------------------------------------------------- names

def mangle(name: str) -> str:
    """XLA's module name for a TF function name: non-alphanumerics become '_', a leading
    '_' becomes 'a' (``__inference_f_12`` -> ``a_inference_f_12``)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "a" + out[1:] if out.startswith("_") else out


def modules_named(dump: Dump, function: str) -> list[DumpModule]:
    """The modules XLA compiled from the TF function (cluster) ``function``: named
    ``mangle(function)`` followed by its mangled attributes ('[' -> '_') or a '.N'."""
    stem = mangle(function)
    return [m for m in dump.modules
            if m.name == stem or m.name.startswith((stem + "_", stem + "."))]


_JIT_MODULE = re.compile(r"^a(_inference_.+?_\d+)_(?:_|\.|$)")
# an auto-clustering cluster's module: 'cluster_3__XlaCompiledKernel_true__...'
_CLUSTER_MODULE = re.compile(r"^(cluster_\d+)__XlaCompiledKernel_true")


# --------------------------------------------------------------------------- grouping

def _similarity(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    return len(a & b) / min(len(a), len(b))


def group_files(files: list[GraphFile]) -> list[GraphGroup]:
    """Pair the dumps of one graph across passes by their node names: pass by pass in the
    order the passes run, each file joins the graph without that pass whose latest dump
    shares most names with it (ties: the graph seen first, as the dumper's counters are
    in the same order in every pass); per-cluster dumps join the graph whose cluster of
    that name they share most nodes with."""
    groups: list[GraphGroup] = []
    ordered = sorted(files, key=lambda f: (f.pass_.rank, f.pass_.kind,
                                           f.pass_.cluster or "", f.pass_.counter))
    for f in ordered:
        names = f.names
        best: GraphGroup | None = None
        best_score = _SIMILAR
        for g in groups:
            if g.of_pass(f.pass_.name) is not None or g.files[-1].pass_.rank > f.pass_.rank:
                continue
            if f.pass_.cluster is not None:
                members = _cluster_members(g, f.pass_.cluster)
                if not members:
                    continue
                score = _similarity(names, members)
            else:
                score = _similarity(names, g.last.names)
            if score > best_score:
                best, best_score = g, score
        if best is None:
            best = GraphGroup(len(groups))
            groups.append(best)
        best.files.append(f)
    return groups


def _cluster_members(g: GraphGroup, cluster: str) -> frozenset[str]:
    for f in g.files:
        if f.pass_.name in (MARK, ANNOTATED):
            found = frozenset(n.base_name for n in f.graph.nodes if n.cluster == cluster)
            if found:
                return found
    return frozenset()


# --------------------------------------------------------------------------- building

def _find_log(dump: Dump) -> TfLog | None:
    skip = {TRACE, XPLANE, TF_GRAPH}
    for f in dump.files:
        if f.module_id is not None or f.kind in skip or f.size > MAX_LOG_BYTES:
            continue
        try:
            data = dump.read_bytes(f.path)
        except (OSError, KeyError, DumpError):
            continue
        if b"\x00" in data[:4096]:
            continue
        text = data.decode("utf-8", "replace")
        if looks_like_log(text):
            return parse_log(text, f.path)
    return None


def _cluster_module(dump: Dump, name: str, nodes: list[TfNode]) -> DumpModule | None:
    """The cluster's module; when several are named for it (cluster names repeat across
    graphs), the one whose HLO metadata names most of the cluster's nodes."""
    candidates = modules_named(dump, name)
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    wanted = {n.base_name for n in nodes}
    best, best_score = None, 0
    for m in candidates:
        f = m.before_optimizations or m.after_optimizations
        if f is None:
            continue
        try:
            hlo = dump.parse(f.path)
        except HloParseError:
            continue
        score = len({i.op_name for i in hlo.instructions()} & wanted)
        if score > best_score:
            best, best_score = m, score
    return best


def _jit_units(dump: Dump, files: list[GraphFile]) -> list[JitUnit]:
    """Modules compiled from jit_compile functions: those the graphs mark _XlaMustCompile
    (on the call node or the FunctionDef), and top-level ones known only by module name."""
    functions: set[str] = set()
    for f in files:
        for n in f.graph.nodes:
            if n.must_compile and n.function:
                functions.add(n.function)
        functions.update(fn.name for fn in f.graph.functions if fn.must_compile)
    out: list[JitUnit] = []
    seen: set[str] = set()
    for fn in sorted(functions):
        for m in modules_named(dump, fn):
            out.append(JitUnit(fn, m, module_inputs(dump, m)))
            seen.add(m.id)
    for m in dump.modules:
        if m.id in seen:
            continue
        jm = _JIT_MODULE.match(m.name)
        if jm and ("_XlaMustCompile_true" in m.name or not m.name.startswith("cluster_")):
            out.append(JitUnit("_" + jm.group(1), m, module_inputs(dump, m)))
    return sorted(out, key=lambda j: (j.module.id, j.function))


def build_index(dump: Dump) -> TfIndex:
    files: list[GraphFile] = []
    errors: list[tuple[str, str]] = []
    for f in dump.files:
        if f.kind != TF_GRAPH:
            continue
        try:
            graph = read_graph(dump.read_bytes(f.path), f.path)
        except GraphReadError as e:
            dump.report(f.path, str(e))
            errors.append((f.path, str(e)))
            continue
        except (OSError, KeyError, DumpError) as e:
            dump.report(f.path, f"cannot read: {e}")
            errors.append((f.path, f"cannot read: {e}"))
            continue
        files.append(GraphFile(f.path, graph, pass_of(posixpath.basename(f.path))))
    groups = group_files(files)
    pipeline = _pipeline_functions(files)
    rounds = _clustered_rounds(files)
    pipelined = {f.path: _runs_in_pipeline(f, pipeline) for f in rounds}
    main = _clustered_step(rounds, pipelined)
    step: GraphGroup | None
    if main is not None:
        step = next(g for g in groups if main in g.files)
    else:       # TF clustered nothing: the largest graph it looked at
        marked = [g for g in groups if g.of_pass(MARK) is not None]
        step = max(marked or groups, key=lambda g: g.largest, default=None)
        main = step.of_pass(MARK) if step is not None else None
        if main is not None and main.graph.kind == FUNCTION:
            main = None
    clusters = _clusters_of(dump, main) if main is not None else []
    elsewhere = [c for f in rounds if f is not main
                 for c in _clusters_of(dump, f, pipelined[f.path])]
    log = _find_log(dump)
    if log is not None:
        _log_order(groups, log)
    run = None
    if log is not None and main is not None:
        run = log.run_of(main.path)
    jit = _jit_units(dump, files)
    return TfIndex(files, groups, step, main, clusters, log, run, jit, errors, elsewhere,
                   _loose(dump, clusters + elsewhere, jit, log))


def _loose(dump: Dump, clusters: list[Cluster], jit: list[JitUnit], log: TfLog | None
           ) -> list[LooseCluster]:
    """Cluster modules no cluster of the graph dumps claims, with the log's summary of the
    cluster of that name (names count up across one run of a program: the last summary)."""
    claimed = {c.module.id for c in clusters if c.module is not None}
    claimed |= {j.module.id for j in jit}
    summaries = {c.name: c for r in (log.runs if log else []) if r.info
                 for c in r.info.clusters}
    out = []
    for m in dump.modules:
        if (cm := _CLUSTER_MODULE.match(m.name)) and m.id not in claimed:
            out.append(LooseCluster(cm.group(1), m, summaries.get(cm.group(1))))
    return sorted(out, key=lambda c: int(c.name.rsplit("_", 1)[1]))


def _clustered_step(rounds: list[GraphFile], pipelined: dict[str, str]
                    ) -> GraphFile | None:
    """The step graph as mark_for_compilation left it: of the rounds TF clustered, the one
    with most nodes in clusters (then the larger), whatever its round number — a run
    dumps a round per function TF optimizes, and a small one can look like any part of
    the step graph by its node names (issue 32, item 4). A tf.data function's round
    (a map TF clusters too, larger than the step it feeds; ``pipelined``: each round's
    function by its path, or '') only where no other is. ``rounds``: _clustered_rounds."""
    return max(rounds, key=lambda f: (not pipelined[f.path], _clustered(f),
                                      len(f.graph.nodes)), default=None)


def _pipeline_functions(files: list[GraphFile]) -> dict[str, frozenset[str]]:
    """Name -> node names of each function a tf.data op runs (MapDataset's ``f``, a
    filter's ``predicate``, ...), from the libraries of the graphs that build the dataset."""
    named = {v for f in files for n in f.graph.nodes if "Dataset" in n.op for _, v in n.attrs}
    return {fn.name: frozenset(fn.node_names) for f in files for fn in f.graph.functions
            if fn.name in named}


def _runs_in_pipeline(f: GraphFile, pipeline: dict[str, frozenset[str]]) -> str:
    """The tf.data function the round is the graph of ('' if none): nine in ten of its
    nodes are the function's (TF names a constant it copies while instantiating
    ``Const/clone_N``)."""
    names = {n.name.split("/clone_")[0] for n in f.graph.nodes
             if n.op not in ("_Arg", "_Retval")}
    return next((name for name, p in pipeline.items()
                 if names and len(names & p) >= 0.9 * len(names)), "")


def _clustered(f: GraphFile) -> int:
    return sum(len(nodes) for nodes in f.graph.clusters().values())


def _clustered_rounds(files: list[GraphFile]) -> list[GraphFile]:
    """The mark_for_compilation dumps of graphs TF built clusters in, in file order; where
    there are none (a run without --tf_xla_clustering_debug dumps no mark_for_compilation,
    and with encapsulate_subgraphs_pass's VLOG on it still dumps the marked graph before
    encapsulation), those encapsulate_subgraphs_before dumps."""
    for name in (MARK, BEFORE_ENCAPSULATE):
        found = [f for f in files if f.pass_.name == name and f.graph.kind != FUNCTION
                 and _clustered(f)]
        if found:
            return found
    return []


def _clusters_of(dump: Dump, f: GraphFile, pipeline: str = "") -> list[Cluster]:
    return [Cluster(name, nodes, _cluster_module(dump, name, nodes), f.path, pipeline)
            for name, nodes in f.graph.clusters().items()]


def _log_order(groups: list[GraphGroup], log: TfLog) -> None:
    """Put each graph's files in the order the log says they were dumped (per-cluster
    dumps cluster by cluster), where the log names them all."""
    order = {d.rsplit("/", 1)[-1]: i for i, d in enumerate(d for r in log.runs for d in r.dumped)}
    for g in groups:
        names = [posixpath.basename(f.path) for f in g.files]
        if all(n in order for n in names):
            g.files.sort(key=lambda f: order[posixpath.basename(f.path)])


def tf_index(dump: Dump) -> TfIndex:
    """The dump's TF index, built once per dump."""
    return dump.derived("tf-index", build_index)


def has_tf(dump: Dump) -> bool:
    """Whether the dump has TF graph dumps, jit_compile or cluster modules (cheap: names
    only)."""
    return any(f.kind == TF_GRAPH for f in dump.files) or any(
        _JIT_MODULE.match(m.name) or _CLUSTER_MODULE.match(m.name) for m in dump.modules)
