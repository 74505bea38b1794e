"""Layouts made ahead: ``viz.prefetch`` lays out in the background, on a Graphviz of its
own, and a page asking for the same view finds the layout ready (or joins it)."""

from __future__ import annotations

import re
import time

from compiler_bridge import open_dump
from conftest import sample
from viz import ViewState, graph_for, prefetch, prefetching, start_layout


def _wait_idle(limit: float = 60) -> None:
    deadline = time.time() + limit
    while prefetching() and time.time() < deadline:
        time.sleep(0.05)
    assert not prefetching()


def test_a_view_laid_out_ahead_is_ready_when_asked(monkeypatch):
    """Prefetched, the layout is in the cache: asking for it lays nothing out again (a
    Graphviz that fails would fail the request), and it is the whole graph: every node
    the DOT names is drawn in the SVG. How fast a cache hit is lives in bench/."""
    dump = open_dump(sample("scan_while"))
    dot = graph_for(dump, ViewState(grouping="flat", budget=777)).dot
    prefetch(lambda: [dot])
    _wait_idle()

    def no_graphviz(*args, **kwargs):
        raise AssertionError("laid out again")
    monkeypatch.setattr("viz.layout._render", no_graphviz)
    got = start_layout(dot).wait(60)
    assert got is not None
    svg = got[0]
    wanted = set(re.findall(r'\bid="(node:[^"]+)"', dot))
    assert wanted and wanted == set(re.findall(r'<g id="(node:[^"]+)" class="node"', svg))


def test_a_failing_view_builder_is_logged_not_raised(caplog):
    def broken():
        yield from ()
        raise ValueError("no such view")
    prefetch(broken)
    _wait_idle()
    assert "prefetching layouts failed" in caplog.text


def test_a_newer_prefetch_drops_the_rest_of_an_older_one():
    dump = open_dump(sample("cond_switch"))
    made = []

    def older():
        for budget in (301, 302, 303):
            made.append(budget)
            if budget == 301:
                prefetch(lambda: [])          # a newer view was drawn meanwhile
            yield graph_for(dump, ViewState(grouping="flat", budget=budget)).dot
    prefetch(older)
    _wait_idle()
    assert made == [301]
