"""The TensorFlow cluster view in a real browser (Playwright driving Debian's Chromium):
open the TF sample, see its clusters, open one cluster's HLO module from the table, come
back. Screenshots go to test-artifacts/browser-tf-*.png.
"""

from __future__ import annotations

import time

import pytest
from conftest import sample

from compiler_bridge import open_dump
from compiler_bridge.tf import graph_step_diff, graph_timeline, tf_index
from tests.support.browser import GRAPH_DRAWN
from tests.support.pages import (button, params, shot, show_whole, upload, visible_text,
                                 wait_idle, wait_param)
from tests.support.samples import sample_zip
from viz.stepper import CHANGED_FILL

pytestmark = [pytest.mark.browser]

# shapes of the TF graph filled with a colour
_FILLS = """(c) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .map(h => h.shadowRoot ? h.shadowRoot.querySelectorAll(`[fill="${c}"]`).length : 0)
    .reduce((a, b) => a + b, 0)"""


def _in_graph(page, element_id: str) -> bool:
    return page.evaluate(
        """(id) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
            .some(h => h.shadowRoot && h.shadowRoot.querySelector(`[id="${id}"]`))""",
        element_id)


def test_open_clusters_then_a_clusters_module_and_come_back(server, new_page, artifacts_dir,
                                                          tmp_path_factory):
    name = "tf_uncompilable"
    ix = tf_index(open_dump(sample(name)))
    cluster = ix.clusters[0]
    assert cluster.module is not None
    page = new_page()
    page.goto(server)
    page.get_by_text("See what XLA did to your program").wait_for()
    upload(page, sample_zip(tmp_path_factory, name))

    # the cluster view: the step graph with the cluster as a box, the clusters table
    visible_text(page, "TensorFlow clusters").wait_for(timeout=60_000)
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_param(page, "dump")
    wait_idle(page)
    assert _in_graph(page, f"group:{cluster.name}")
    assert _in_graph(page, "node:text/AsString")          # unclustered, outside the box
    visible_text(page, "String ops (AsString, StringLength)").wait_for()
    shot(page, artifacts_dir, "browser-tf-01-clusters.png")

    # the pass stepper (the HLO explorer's): mark_for_compilation against the dump before
    # it; Next ▶ goes to the annotated dump, whose renamed nodes are drawn as changed
    dump = open_dump(sample(name))
    tl = graph_timeline(dump, ix)
    mark = next(s.index for s in tl.steps if s.pass_name == "mark_for_compilation")
    newly = len(graph_step_diff(ix, tl, mark).changed)
    visible_text(page, f"0 nodes added, 0 removed, {newly} changed ({newly} clustered)")\
        .wait_for()
    before = page.evaluate(_FILLS, CHANGED_FILL)
    button(page, "pass-next").click()
    wait_param(page, "stage", tl.step(mark + 1).stage, timeout=60)
    page.wait_for_function(f"(c) => ({_FILLS})(c) > {before}", arg=CHANGED_FILL,
                           timeout=30_000)
    wait_idle(page)
    n = tl.step(mark + 1).nodes
    visible_text(page, f"{n} changed ({n} renamed)").wait_for()
    page.get_by_role("tab", name="Changes", exact=True).wait_for()
    visible_text(page, "mark_for_compilation_annotated").wait_for()
    assert page.evaluate(_FILLS, CHANGED_FILL) > before
    shot(page, artifacts_dir, "browser-tf-01b-pass-step.png")
    page.get_by_role("tab", name="Changes", exact=True).scroll_into_view_if_needed()
    visible_text(page, "Click a row to select that node in the graph.").wait_for()
    shot(page, artifacts_dir, "browser-tf-01c-pass-changes.png")
    button(page, "pass-prev").click()
    wait_param(page, "stage", tl.step(mark).stage, timeout=60)
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)

    # a click on the closed cluster opens it: its nodes are drawn inside
    page.locator(f'[id="group:{cluster.name}"]').first.click()
    wait_param(page, "expanded", cluster.name, timeout=60)
    page.wait_for_function(
        """(id) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
            .some(h => h.shadowRoot && h.shadowRoot.querySelector(`[id="${id}"]`))""",
        arg=f"node:{cluster.nodes[0].name}", timeout=90_000)   # layout on loaded cores
    wait_idle(page)
    shot(page, artifacts_dir, "browser-tf-02-cluster-open.png")

    # a click on an unclustered node inspects it: op, and why XLA left it out (the log's words)
    show_whole(page)
    page.locator('[id="node:text/AsString"]').first.click()
    wait_param(page, "selected", "text/AsString", timeout=60)
    wait_idle(page)
    inspector = page.locator('[data-testid="stMarkdownContainer"]').filter(
        has_text="not clustered:").first
    inspector.wait_for()
    text = inspector.inner_text()
    assert "AsString" in text and "No registered 'AsString' OpKernel" in text
    assert all(x in text for x in ix.main.graph.node("text/AsString").inputs)   # inputs
    shot(page, artifacts_dir, "browser-tf-02b-node.png")

    # open the cluster's HLO module from the table: the HLO explorer shows it
    page.get_by_role("button", name=f"Open {cluster.name}'s HLO (module {cluster.module.id})")\
        .click()
    wait_param(page, "module", cluster.module.id, timeout=60)
    # the cluster page goes (its elements stay on screen until the new run replaces them)
    page.get_by_role("heading", name="TensorFlow clusters").wait_for(state="hidden",
                                                                      timeout=60_000)
    visible_text(page, cluster.module.name[:30]).wait_for(timeout=60_000)
    page.wait_for_function(GRAPH_DRAWN, timeout=60_000)
    wait_idle(page)
    shot(page, artifacts_dir, "browser-tf-03-module.png")

    # and back to the clusters from the sidebar
    page.get_by_role("button", name="◀ TensorFlow clusters").click()
    deadline = time.time() + 60
    while "module" in params(page) and time.time() < deadline:
        time.sleep(0.05)
    assert "module" not in params(page)
    page.get_by_role("heading", name="TensorFlow clusters").wait_for(timeout=60_000)
    page.wait_for_function(
        """(id) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
            .some(h => h.shadowRoot && h.shadowRoot.querySelector(`[id="${id}"]`))""",
        arg=f"group:{cluster.name}", timeout=60_000)
    wait_idle(page)
    shot(page, artifacts_dir, "browser-tf-04-back.png")
