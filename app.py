"""HLO Lens: explore an XLA dump (``XLA_FLAGS=--xla_dump_to=DIR``) in the browser.

    streamlit run app.py -- --dump DIR       # `make run` opens the bundled transformer sample

Everything the page shows is in the URL (dump, module, stage or pass step, computation,
selection, open groups, focus, runtime overlay and trace, viewport), so a link or a
reload restores the view; dumps and the traces uploaded for them live in the store
($HLOLENS_DATA), so a link works for anyone on this server. Each part below is a
function of ``viz.page``, ``viz.pass_page``, ``viz.runtime_page`` or ``viz.share_page``;
a part that fails shows a message and the rest still works.
"""

import streamlit as st

from viz import page
from viz import pass_page as passes
from viz import runtime_page as runtimes
from viz import share_page as share

st.set_page_config(page_title="HLO Lens", layout="wide")
page.warm_up()                                   # Graphviz (wasm) compiles while we read
page.style()
nav = page.Navigator()                           # the view, read from the URL

opened = picked = shown = view = None
with page.section("Opening the dump"):
    opened = page.open_dump_section(nav)         # sidebar: upload, stored dumps, --dump
if opened is None:
    page.welcome()
    st.stop()
page.dump_errors(opened)                         # files that could not be read, by name

with page.section("Module"):
    picked = page.pick_module(nav, opened)       # sidebar: module and stage (pass step)
if picked is None:
    st.stop()
toolbar = page.header(opened, picked)            # title; Link, Save view, Export (below)
with page.section("Passes"):
    passes.pass_panel(nav, opened, picked)       # ◀ ▶ slider, timeline chart, compare
shown = page.parse_stage(opened, picked)
if shown is None:                                # a step that does not parse: still
    with page.section("Sharing"):                # linkable, and the saved views are there
        share.toolbar(toolbar, nav, opened, None, None, "", None)
        share.saved_views(nav, opened)
    st.stop()

with page.section("Graph events"):
    page.handle_graph_events(nav, shown)         # clicks and pans since the last run
rt = None
with page.section("Runtimes"):
    rt = runtimes.Runtimes(nav, opened, shown)   # the trace; the report when asked for
with page.section("Graph controls"):
    page.graph_controls(nav, shown)              # sidebar: grouping, focus, hops
    runtimes.overlay_control(nav, rt)            # sidebar: colour by measured/predicted
with page.section("Search"):
    page.search_box(nav, shown)
with page.section("Breadcrumb"):
    page.breadcrumb(nav, shown)                  # ENTRY › while.5 › body, and a picker

svg, inspected = "", None
module_comments = share.comments_of(opened, shown.dump_module.id)   # read once per run
graph_col, inspector_col = st.columns([3, 2], gap="medium")
with graph_col, page.section("Graph"):
    runtimes.graph_messages(nav, rt)             # no trace, a broken one, another stage
    view, svg = page.graph(nav, opened, shown, share.comment_counts(module_comments),
                           rt.for_graph() if rt else None)
with inspector_col, page.section("Inspector"):
    inspected = page.inspector(nav, opened, shown, view)
    runtimes.inspector(nav, rt, inspected, view)         # its measured/predicted time
    passes.history(nav, opened, shown, inspected)        # the steps that changed it
    share.comments(nav, opened, shown, inspected, module_comments)

page.details(nav, opened, shown, view,           # Changes, Text diff, Steps; Runtimes;
             passes.detail_tabs(nav, opened, shown),    # summary, opcodes, ...
             more=[("Runtimes", lambda: runtimes.panel(nav, rt))])
with page.section("Sharing"):
    share.toolbar(toolbar, nav, opened, shown, view, svg, inspected,
                  runtime_rows=rt.export_rows if rt else None,
                  runtime_legend=rt.export_legend if rt else None)
    share.saved_views(nav, opened)               # sidebar: this dump's saved views
