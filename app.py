"""HLO Lens: explore an XLA dump (``XLA_FLAGS=--xla_dump_to=DIR``) in the browser.

    streamlit run app.py -- --dump DIR       # `make run` opens the bundled transformer sample

Everything the page shows is in the URL (dump, module, stage or pass step, computation,
selection, open groups, focus, runtime overlay and trace, viewport), so a link or a
reload restores the view; dumps and the traces uploaded for them live in the store
($HLOLENS_DATA), so a link works for anyone on this server. Each part below is a
function of a ``ui`` module; a part that fails shows a message and the rest still works.
"""

import streamlit as st

from ui import explorer, graph, inspector, kit, opening, passes, runtimes, sharing

st.set_page_config(page_title="HLO Lens", layout="wide")
opening.warm_up()                                # Graphviz (wasm) compiles while we read
opening.style()
nav = kit.Navigator()                            # the view, read from the URL

opened = picked = shown = view = None
with kit.section("Opening the dump"):
    opened = opening.open_dump_section(nav)      # sidebar: upload, stored dumps, --dump
if opened is None:
    opening.welcome()
    st.stop()
opening.dump_errors(opened)                      # files that could not be read, by name

with kit.section("Module"):
    picked = explorer.pick_module(nav, opened)   # sidebar: module and stage (pass step)
if picked is None:
    st.stop()
toolbar = explorer.header(opened, picked)        # title; Link, Save view, Export (below)
with kit.section("Passes"):
    passes.pass_panel(nav, opened, picked)       # ◀ ▶ slider, timeline chart, compare
shown = explorer.parse_stage(opened, picked)
if shown is None:                                # a step that does not parse: still
    with kit.section("Sharing"):                 # linkable, and the saved views are there
        sharing.toolbar(toolbar, nav, opened, None, None, "", None)
        sharing.saved_views(nav, opened)
    st.stop()

with kit.section("Graph events"):
    explorer.handle_graph_events(nav, shown)     # clicks and pans since the last run
rt = None
with kit.section("Runtimes"):
    rt = runtimes.Runtimes(nav, opened, shown)   # the trace; the report when asked for
with kit.section("Graph controls"):
    explorer.graph_controls(nav, shown)          # sidebar: grouping, focus, hops
    runtimes.overlay_control(nav, rt)            # sidebar: colour by measured/predicted
with kit.section("Search"):
    explorer.search_box(nav, shown)
with kit.section("Breadcrumb"):
    explorer.breadcrumb(nav, shown)              # ENTRY › while.5 › body, and a picker

svg, inspected = "", None
module_comments = sharing.comments_of(opened, shown.dump_module.id)  # read once per run
graph_col, inspector_col = st.columns([3, 2], gap="medium")
with graph_col, kit.section("Graph"):
    runtimes.graph_messages(nav, rt)             # no trace, a broken one, another stage
    view, svg = graph.show(nav, opened, shown, sharing.comment_counts(module_comments),
                           rt.for_graph() if rt else None)
with inspector_col, kit.section("Inspector"):
    inspected = inspector.show(nav, opened, shown, view)
    runtimes.inspector(nav, rt, inspected, view)         # its measured/predicted time
    passes.history(nav, opened, shown, inspected)        # the steps that changed it
    sharing.comments(nav, opened, shown, inspected, module_comments)

explorer.details(nav, opened, shown, view,       # Changes, Text diff, Steps; Runtimes;
                 passes.detail_tabs(nav, opened, shown),    # summary, opcodes, ...
                 more=[("Runtimes", lambda: runtimes.panel(nav, rt))])
with kit.section("Sharing"):
    sharing.toolbar(toolbar, nav, opened, shown, view, svg, inspected,
                    runtime_rows=rt.export_rows if rt else None,
                    runtime_legend=rt.export_legend if rt else None)
    sharing.saved_views(nav, opened)             # sidebar: this dump's saved views
