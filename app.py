"""HLO Lens: explore an XLA dump (``XLA_FLAGS=--xla_dump_to=DIR``) in the browser.

    streamlit run app.py -- --dump DIR       # `make run` opens the bundled transformer sample

Everything the page shows is in the URL (dump, module, stage or pass step, computation,
selection, open groups, focus, runtime overlay and trace, viewport), so a link or a
reload restores the view; dumps and the traces uploaded for them live in the store
($HLOLENS_DATA), so a link works for anyone on this server. Each part below is a
function of a ``ui`` module; a part that fails shows a message and the rest still works.
"""

import streamlit as st

from ui import explorer, kit, opening, passes, runtimes, sharing, tf, workspace

st.set_page_config(page_title="HLO Lens", layout="wide")
opening.warm_up()                                # Graphviz (wasm) compiles while we read
opening.style()
nav = kit.Navigator()                            # the view, read from the URL

opened = picked = shown = None
with kit.section("Opening the dump"):
    opened = opening.open_dump_section(nav)      # sidebar: upload, stored dumps, --dump
if opened is None:
    opening.welcome()
    st.stop()
tf_page = tf.shows(nav, opened)                  # TF graphs, no module chosen: read them
opening.dump_errors(opened)                      # files that could not be read, by name
if tf_page:
    with kit.section("TensorFlow clusters"):     # clusters, their modules, reasons
        tf.cluster_page(nav, opened)
    st.stop()

with kit.section("Module"):
    picked = explorer.pick_module(nav, opened)   # sidebar: module and stage (pass step)
    tf.back_button(nav, opened)                  # sidebar: back to the TF clusters
if picked is None:
    st.stop()
toolbar = explorer.header(opened, picked)        # title; beside it the share toolbar
with kit.section("Passes"):
    passes.pass_panel(nav, opened, picked)       # ◀ ▶ slider, timeline chart, compare
shown = explorer.parse_stage(opened, picked)
if shown is None:                                # a step that does not parse: still
    with kit.section("Sharing"):                 # linkable, and the saved views are there
        sharing.toolbar(toolbar, nav, opened, None, None, "", None)
        sharing.saved_views(nav, opened)
    st.stop()

rt = None
with kit.section("Runtimes"):
    rt = runtimes.Runtimes(nav, opened, shown)   # the trace; the report when asked for
with kit.section("Graph controls"):
    explorer.graph_controls(nav, shown)          # sidebar: grouping, focus, hops
    runtimes.overlay_control(nav, rt)            # sidebar: colour by measured/predicted

# search, Link / Save view / Export, breadcrumb, graph and inspector: a click reruns
# only this part (a fragment); it reruns the page when the view changes beyond it
workspace.workspace(nav.state, opened, shown, rt)

explorer.details(nav, opened, shown,             # Changes, Text diff, Steps; Runtimes;
                 passes.detail_tabs(nav, opened, shown),    # summary, opcodes, ...
                 more=[("Runtimes", lambda: runtimes.panel(nav, rt))])
with kit.section("Sharing"):
    sharing.saved_views(nav, opened)             # sidebar: this dump's saved views
