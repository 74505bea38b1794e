"""HLO Lens: explore an XLA dump (``XLA_FLAGS=--xla_dump_to=DIR``) in the browser.

    streamlit run app.py -- --dump DIR       # `make run` opens the bundled transformer sample

Everything the page shows is in the URL (module, stage, computation, selection, open
groups, focus, viewport), so a link or a reload restores the view. Each part below is a
function of ``viz.page``; a part that fails shows a message and the rest still works.
"""

import streamlit as st

from viz import page

st.set_page_config(page_title="HLO Lens", layout="wide")
page.style()
nav = page.Navigator()                           # the view, read from the URL

opened = shown = view = None
with page.section("Opening the dump"):
    opened = page.open_dump_section(nav)         # sidebar: upload (with progress) or --dump
if opened is None:
    page.welcome()
    st.stop()
page.dump_errors(opened)                         # files that could not be read, by name

with page.section("Module"):
    shown = page.pick_module(nav, opened)        # sidebar: module and stage pickers
if shown is None:
    st.stop()

page.header(opened, shown)
with page.section("Graph events"):
    page.handle_graph_events(nav, shown)         # clicks and pans since the last run
with page.section("Graph controls"):
    page.graph_controls(nav, shown)              # sidebar: grouping, focus, hops
with page.section("Search"):
    page.search_box(nav, shown)
with page.section("Breadcrumb"):
    page.breadcrumb(nav, shown)                  # ENTRY › while.5 › body, and a picker

graph_col, inspector_col = st.columns([3, 2], gap="medium")
with graph_col, page.section("Graph"):
    view = page.graph(nav, opened, shown)
with inspector_col, page.section("Inspector"):
    page.inspector(nav, opened, shown, view)

page.details(nav, opened, shown, view)           # module summary, layout changes, files
