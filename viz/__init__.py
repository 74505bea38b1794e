"""viz: pure builders from compiler_bridge models to views: graph grouping and DOT, the
layout (Graphviz, off the main thread), plotly figures, tables and exports. Never imports
streamlit; ``ui`` places what these build on the page.
"""

from __future__ import annotations

from . import compare, dot, layout, memory, navigation, panels, runtime, sharding, stepper, tf
from .categories import BORDERS
from .export import (html_report, model_explorer_graphs, model_explorer_node_data,
                     titled_dot, titled_svg)
from .graph import GraphView, build_graph, draw
from .grouping import GraphOptions, GroupInfo, Grouping, group, split_scopes
from .layout import (Layout, LayoutError, engine, prefetch, prefetching, render_svg,
                     start_layout, warm)
from .navigation import set_budget
from .overview import home
from .stepper import (
    ADDED_FILL,
    CHANGED_FILL,
    DIFF_GHOST,
    DIFF_LEGEND,
    REMOVED_BORDER,
    changed_nodes,
    diff_legend,
    diff_decorations,
    diff_summary,
    group_decorations,
    removed_anchors,
    removed_ghosts,
    text_diff_html,
    timeline_figure,
    timeline_rows,
)
from .render import compare_step, diff_for, graph_for, runtime_overlay
from .share import (COMMENT_BORDER, COMMENT_LEGEND, author, file_stem, report_inspector,
                    share_link, when)
from .state import GROUPINGS, MEMORY_OVERLAYS, OVERLAYS, ViewState

__all__ = [
    "ADDED_FILL",
    "BORDERS",
    "CHANGED_FILL",
    "COMMENT_BORDER",
    "COMMENT_LEGEND",
    "DIFF_GHOST",
    "DIFF_LEGEND",
    "GROUPINGS",
    "GraphOptions",
    "GraphView",
    "GroupInfo",
    "Layout",
    "Grouping",
    "LayoutError",
    "MEMORY_OVERLAYS",
    "OVERLAYS",
    "REMOVED_BORDER",
    "ViewState",
    "author",
    "build_graph",
    "changed_nodes",
    "compare",
    "compare_step",
    "diff_decorations",
    "diff_legend",
    "diff_for",
    "diff_summary",
    "dot",
    "draw",
    "engine",
    "file_stem",
    "graph_for",
    "group",
    "group_decorations",
    "home",
    "html_report",
    "layout",
    "memory",
    "model_explorer_graphs",
    "model_explorer_node_data",
    "titled_dot",
    "titled_svg",
    "navigation",
    "panels",
    "removed_anchors",
    "removed_ghosts",
    "render_svg",
    "report_inspector",
    "runtime",
    "runtime_overlay",
    "set_budget",
    "share_link",
    "sharding",
    "split_scopes",
    "stepper",
    "prefetch",
    "prefetching",
    "start_layout",
    "text_diff_html",
    "tf",
    "timeline_figure",
    "timeline_rows",
    "warm",
    "when",
]
