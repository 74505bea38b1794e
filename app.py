"""HLO Lens: explore an XLA dump (``XLA_FLAGS=--xla_dump_to=DIR``) in the browser.

    streamlit run app.py -- --dump DIR       # `make run` opens the bundled transformer sample

Everything the page shows is in the URL (dump, module, stage or pass step, computation,
selection, open groups, focus, runtime overlay and trace, viewport), so a link or a
reload restores the view; dumps and the traces uploaded for them live in the store
($HLOLENS_DATA), so a link works for anyone on this server. Each part below is a
function of a ``ui`` module; a part that fails shows a message and the rest still works.
"""

from functools import partial

import streamlit as st

from ui import (communication, compare, data, explorer, kit, memory, opening, runtimes,
                sharing, stepper, tf, traces, workspace)

st.set_page_config(page_title="HLO Lens", layout="wide")
data.warm_up()                                   # Graphviz (wasm) compiles while we read
opening.style()
nav = kit.Navigator()                            # the view, read from the URL

opened = picked = shown = None
with kit.section("Opening the dump"):
    opened = opening.open_dump_section(nav)      # sidebar: upload, stored dumps, --dump
if opened is None:
    opening.welcome(nav)
    st.stop()
tf_page = tf.shows(nav, opened)                  # TF graphs, no module chosen: read them
if tf_page:
    opening.dump_errors(opened)                  # files of no module that could not be read
    with kit.section("TensorFlow clusters"):     # clusters, their modules, reasons
        tf.cluster_page(nav, opened)
    st.stop()
compare.apply_cli(nav, opened)                   # --dump A --compare B: B vs baseline A

with kit.section("Module"):
    picked = explorer.pick_module(nav, opened)   # sidebar: module and stage (pass step)
    tf.back_button(nav, opened)                  # sidebar: back to the TF clusters
opening.dump_errors(opened, picked.dump_module.id if picked else None)   # and the module's
with kit.section("Compare"):
    compare.sidebar(nav, opened, picked)         # sidebar: a baseline dump, recompilations
if picked is None:
    st.stop()
opening.stablehlo_actions(nav, opened, picked.dump_module)   # a loose .mlir: XLA:CPU compile
toolbar = explorer.header(opened, picked)        # title; beside it the share toolbar
cmp = None
with kit.section("Comparison"):                  # another compile as the baseline: its
    cmp = compare.resolve(nav, opened, picked)   # diff colours the graph, not the step's
    if cmp is not None:
        compare.panel(nav, opened, cmp)
if cmp is None:
    with kit.section("Passes"):
        stepper.pass_panel(nav, opened, picked)  # ◀ ▶ slider, timeline chart, compare
with kit.section("Memory"):
    memory.stepper_line(opened, picked)          # temp and peak bytes, or why a step has none
shown = explorer.parse_stage(opened, picked)
if shown is None:                                # a step that does not parse: still
    with kit.section("Sharing"):                 # linkable, and the saved views are there
        sharing.toolbar(toolbar, nav, opened, None, None, "", None)
        sharing.saved_views(nav, opened)
    st.stop()

rt = None
with kit.section("Runtimes"):
    rt = traces.Runtimes(nav, opened, shown)     # the trace; the report when asked for
with kit.section("Graph controls"):
    explorer.graph_controls(nav, shown)          # sidebar: grouping, focus, hops
    runtimes.overlay_control(nav, rt)            # sidebar: colour by measured/predicted
    memory.overlay_control(nav, opened, shown)   # sidebar: colour by bytes defined/live

# search, Link / Save view / Export, breadcrumb, graph and inspector: a click reruns
# only this part (a fragment); it reruns the page when the view changes beyond it
workspace.workspace(nav.state, opened, shown, rt, cmp)

explorer.details(nav, opened, shown,             # Changes, Text diff, Steps; Runtimes;
                 compare.detail_tabs(nav, opened, shown, cmp) if cmp is not None
                 else stepper.detail_tabs(nav, opened, shown),   # summary, opcodes, ...
                 more=[("Runtimes", lambda: runtimes.panel(nav, rt)),
                       ("Memory", partial(memory.panel, nav, opened, shown)),
                       ("Communication", partial(communication.panel, nav, opened, shown, rt))])
with kit.section("Sharing"):
    sharing.saved_views(nav, opened)             # sidebar: this dump's saved views
