"""Links written before ViewState carried a version (no ``v``: version 1) still open the view
they opened then: the same computation, the same nodes drawn, the same edge count. The links
and their views were captured by the code of that time (fixtures/capture_views.py)."""

from __future__ import annotations

import json
import os

import pytest

from compiler_bridge import open_dump
from compiler_bridge.dumps import Store
from viz import GraphView, ViewState, graph_for
from viz import navigation as N

from conftest import sample

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "views_written_before_v1.json")
with open(FIXTURE, encoding="utf-8") as _f:
    WRITTEN = json.load(_f)


def _opens_the_same_view(view: GraphView, written: dict) -> None:
    assert view.computation == written["computation"]
    assert sorted(view.nodes.values()) == written["drawn"]
    assert view.edge_count == written["edges"]


def test_the_fixture_holds_links_without_a_version():
    assert WRITTEN and all("v" not in w["query"] for w in WRITTEN)


@pytest.mark.parametrize("written", WRITTEN, ids=[str(w["query"]) for w in WRITTEN])
def test_a_version_1_link_opens_the_same_view(written):
    state = ViewState.from_query(written["query"])
    _opens_the_same_view(graph_for(open_dump(sample(written["sample"])), state), written)


@pytest.mark.parametrize("written", WRITTEN, ids=[str(w["query"]) for w in WRITTEN])
def test_a_version_1_saved_view_opens_the_same_view(written, tmp_path):
    store = Store(str(tmp_path / "store"))
    stored = store.add_path(sample(written["sample"]))
    store.save_view(stored.share_id, "before versions", written["query"])
    (saved,) = store.views(stored.share_id)
    state = N.restore_view(ViewState(dump=stored.share_id), saved.query)
    assert state == ViewState.from_query(saved.query).with_(dump=stored.share_id)
    _opens_the_same_view(graph_for(store.open(stored.share_id), state), written)


@pytest.mark.parametrize("written", WRITTEN, ids=[str(w["query"]) for w in WRITTEN])
def test_the_link_written_now_opens_the_same_view_again(written):
    state = ViewState.from_query(written["query"])
    again = ViewState.from_query(state.to_query())
    assert again == state
    _opens_the_same_view(graph_for(open_dump(sample(written["sample"])), again), written)


def test_a_group_id_with_a_tilde_survives_a_link():
    # long scopes get ids like 'L:<first 40 characters>~<hash>' (viz.grouping)
    state = ViewState(expanded=("L:jit(train_step)/transformer~0123456789", "x%7Ey", "c"))
    query = state.to_query()
    assert query["v"] == str(ViewState.version)
    assert ViewState.from_query(query) == state
    # version 1 split such an id in two, and that is how such a link still reads
    assert ViewState.from_query({"expanded": "L:a~b"}).expanded == ("L:a", "b")


def test_a_link_without_expanded_groups_reads_the_same_in_both_versions():
    query = ViewState(grouping="source", budget=800, selected="dot.1").to_query()
    assert "v" not in query
    assert ViewState.from_query({**query, "v": "2"}) == ViewState.from_query(query)
