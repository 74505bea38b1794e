"""Call nodes inside a cluster (a ``PartitionedCall`` of a ``jit_compile`` function, or any
function call TF clustered): XLA compiles the called function's body into the cluster's
module, and its HLO metadata names the body's nodes, not the call. Here: which TF names
stand for a call node, and the call node a body's name stands for.
"""

from __future__ import annotations

from .index import TfIndex


def call_bodies(ix: TfIndex) -> dict[str, frozenset[str]]:
    """Each call node of the step graph's clusters -> the node names of the function it
    calls (and of the functions those call), from the graph's function library (once per
    index). Names the step graph has itself are left out: the metadata cannot tell them
    apart."""
    return ix.derived("call-bodies", _bodies)


def caller_of(ix: TfIndex, name: str) -> str | None:
    """The clustered call node whose function's body has the node ``name``, if any."""
    return next((call for call, names in call_bodies(ix).items() if name in names), None)


def _bodies(ix: TfIndex) -> dict[str, frozenset[str]]:
    if ix.main is None:
        return {}
    library = {f.name: f for f in ix.main.graph.functions}
    outer = {n.name for n in ix.main.graph.nodes}
    out: dict[str, frozenset[str]] = {}
    for c in ix.clusters:
        for n in c.nodes:
            if n.function not in library:
                continue
            names: set[str] = set()
            todo, seen = [n.function], set()
            while todo:
                fn = library.get(todo.pop())
                if fn is None or fn.name in seen:
                    continue
                seen.add(fn.name)
                names.update(fn.node_names)
                todo.extend(fn.calls)
            out[n.name] = frozenset(names - outer)
    return out
