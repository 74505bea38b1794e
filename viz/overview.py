"""Where a graph opens when the link names no place in it (no viewport, selection or node to
centre on): the view is too big to read whole, so it opens at a readable scale on its most
interesting node, and the whole graph is the minimap beside it (``ui/component``)."""

from __future__ import annotations

from compiler_bridge import HloModule

from .graph import GraphView


def home(view: GraphView, module: HloModule) -> str:
    """The SVG id of the node the view opens on: the biggest fusion of the computation
    shown (most instructions fused), else its ROOT; drawn as itself or inside the closed
    group that holds it. '' when neither is drawn."""
    comp = module.get_computation(view.computation)
    if comp is None:
        return ""
    fusions = [i for i in comp.instructions if i.opcode == "fusion" and i.called_names
               and i.name in view.shown_as]
    sizes = {i.name: len(c.instructions) for i in fusions
             if (c := module.get_computation(i.called_names[0])) is not None}
    if sizes:
        biggest = max(sizes, key=lambda n: (sizes[n], n))
        return view.shown_as[biggest]
    root = comp.root
    return view.shown_as.get(root.name, "") if root is not None else ""
