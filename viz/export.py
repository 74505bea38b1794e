"""Exports for bug reports: a self-contained HTML report, and Model Explorer's graph JSON
and node-data JSON so Model Explorer users can take a module along.

Everything taken from the model is escaped; nothing refers to the network.
"""

from __future__ import annotations

import html
import json
import re
import time
from typing import Iterable, Mapping

from compiler_bridge.hlo import HloComputation, HloInstruction, HloModule

from .grouping import split_scopes
from .state import query_string

_XMLNS = re.compile(r'\s+xmlns(?::xlink)?="[^"]*"')


def svg_for_html(svg: str) -> str:
    """SVG to inline in an HTML page: namespace URLs dropped (HTML5 needs none)."""
    head_end = svg.find(">")
    return _XMLNS.sub("", svg[:head_end]) + svg[head_end:]


def titled_svg(svg: str, title: str) -> str:
    """The SVG with ``title`` as its own (the root's first child: what a browser's tab or
    a viewer names it by; Graphviz's title is its graph's, 'G')."""
    start = svg.find("<svg")
    end = svg.find(">", start)
    if start < 0 or end < 0:
        return svg
    return f"{svg[:end + 1]}\n<title>{html.escape(title, quote=False)}</title>{svg[end + 1:]}"


def titled_dot(dot: str, title: str) -> str:
    """The DOT text under a comment line holding ``title`` (on one line)."""
    return "// HLO Lens: " + " ".join(title.split()) + "\n" + dot


# --------------------------------------------------------------------------- HTML report

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#212529}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
.meta{color:#6c757d;margin-bottom:16px} .graph{border:1px solid #dee2e6;overflow:auto;max-height:80vh}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #dee2e6;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f8f9fa} pre{background:#f8f9fa;padding:8px;overflow:auto;white-space:pre-wrap;word-break:break-all}
.legend span{display:inline-block;padding:1px 8px;margin:2px;border:1px solid #adb5bd;border-radius:3px}
"""


def _table(rows: Iterable[Mapping[str, object]]) -> str:
    rows = list(rows)
    if not rows:
        return "<p>(none)</p>"
    cols = list(rows[0].keys())
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in cols)
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_report(*, title: str, svg: str, view_query: Mapping[str, str] | None = None,
                inspector: Mapping[str, object] | None = None,
                runtime_rows: Iterable[Mapping[str, object]] | None = None,
                legend: Iterable[tuple[str, str]] = (), notes: Iterable[str] = ()) -> str:
    """One HTML file: the graph, the selected node's details, the runtime table if any."""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<div class='meta'>HLO Lens report, {html.escape(time.strftime('%Y-%m-%d %H:%M'))}"]
    if view_query:
        parts.append(f" · view <code>?{html.escape(query_string(view_query))}</code>")
    parts.append("</div>")
    for note in notes:
        parts.append(f"<p class='meta'>{html.escape(note)}</p>")
    legend = list(legend)
    if legend:
        parts.append("<div class='legend'>" + "".join(
            f"<span style='background:{html.escape(color)}'>{html.escape(name)}</span>"
            for name, color in legend) + "</div>")
    parts.append(f"<div class='graph'>{svg_for_html(svg)}</div>")
    if inspector:
        parts.append("<h2>Selected node</h2><table>")
        for key, value in inspector.items():
            text = value if isinstance(value, str) else json.dumps(value, indent=2, default=str)
            cell = f"<pre>{html.escape(text)}</pre>" if "\n" in text or len(text) > 80 else \
                html.escape(text)
            parts.append(f"<tr><th>{html.escape(str(key))}</th><td>{cell}</td></tr>")
        parts.append("</table>")
    if runtime_rows is not None:
        parts.append("<h2>Kernels</h2>" + _table(runtime_rows))
    parts.append("</body></html>")
    return "".join(parts)


# --------------------------------------------------------------------------- Model Explorer

def _attrs(module: HloModule, inst: HloInstruction) -> list[dict]:
    out = [{"key": "opcode", "value": inst.opcode},
           {"key": "shape", "value": str(inst.shape)},
           {"key": "bytes", "value": str(inst.shape.byte_size)}]
    if inst.op_name:
        out.append({"key": "op_name", "value": inst.op_name})
    loc = module.source_location(inst)
    if loc is not None:
        out.append({"key": "source", "value": str(loc)})
    for key, value in inst.attributes.items():
        if key != "metadata":
            out.append({"key": key, "value": value})
    return out


def _graph(module: HloModule, comp: HloComputation) -> dict:
    nodes = []
    for inst in comp.instructions:
        node = {
            "id": inst.name,
            "label": inst.opcode,
            "namespace": "/".join(split_scopes(inst.op_name)),
            "subgraphIds": list(inst.called_names),
            "attrs": _attrs(module, inst),
            "incomingEdges": [{"sourceNodeId": op, "sourceNodeOutputId": "0",
                               "targetNodeInputId": str(k)}
                              for k, op in enumerate(inst.operand_names)],
            "outputsMetadata": [{"id": "0", "attrs": [
                {"key": "tensor_name", "value": inst.name},
                {"key": "shape", "value": str(inst.shape)}]}],
        }
        nodes.append(node)
    return {"id": comp.name, "nodes": nodes}


def model_explorer_graphs(module: HloModule) -> dict:
    """Model Explorer's graph JSON (a GraphCollection): one graph per computation, nodes
    namespaced by op_name scopes, called computations as subgraphs."""
    return {"label": module.name,
            "graphs": [_graph(module, c) for c in module.computations]}


def model_explorer_node_data(module: HloModule, values: Mapping[str, float] | None = None) -> dict:
    """Model Explorer node data (ModelNodeData) for every graph: ``values`` per instruction
    (e.g. measured microseconds), or each instruction's output bytes when none are given."""
    data = {}
    for comp in module.computations:
        results = {}
        for inst in comp.instructions:
            v = values.get(inst.name) if values is not None else float(inst.shape.byte_size)
            if v is not None:
                results[inst.name] = {"value": v}
        if results:
            data[comp.name] = {"results": results, "gradient": [
                {"stop": 0, "bgColor": "#f8f9fa"}, {"stop": 0.5, "bgColor": "#ffd43b"},
                {"stop": 1, "bgColor": "#e03131"}]}
    return data
