"""Who owns the time in a trace: each op event's *self time* (its duration minus the op
events nested directly inside it on its thread: a ``while`` owns only the gaps between its
body's ops), when an asynchronous dot/convolution thunk is really done (XLA:CPU's
``end:`` markers), nesting depths, and ``attribute``: each execution's own time and its
charged share of the wall time where several threads overlap.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Any, Callable, Sequence

from .trace_events import EPS_US, OpEvent

# Opcodes whose XLA:CPU thunks run asynchronously (their events end before the work does).
ASYNC_OPCODES = frozenset({"dot", "convolution"})


def _thread_orders(events: Sequence[OpEvent], key: Callable[[int], Any]) -> list[list[int]]:
    """Each thread's event indices, sorted by ``key`` (events nest only within a thread)."""
    by_thread: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(events):
        by_thread[e.thread].append(i)
    return [sorted(idx, key=key) for idx in by_thread.values()]


def self_times(events: list[OpEvent]) -> None:
    """Set ``self_us`` and ``parent``: per thread, subtract directly nested op events."""
    for e in events:
        e.self_us = e.dur_us
        e.parent = -1
    for idx in _thread_orders(events, lambda i: (events[i].start_us, -events[i].dur_us)):
        stack: list[int] = []
        for i in idx:
            e = events[i]
            while stack:
                top = events[stack[-1]]
                if e.start_us < top.end_us - EPS_US and e.end_us <= top.end_us + EPS_US:
                    break   # nested inside top
                stack.pop()   # top ended before e (or overlaps it only partly)
            if stack:
                e.parent = stack[-1]
                events[stack[-1]].self_us -= e.dur_us
            stack.append(i)
    for e in events:
        if e.self_us < 0.0:
            e.self_us = 0.0


def async_completions(events: list[OpEvent], markers: dict) -> None:
    """Set ``async_us`` for ops whose work outlives their event.

    XLA:CPU runs its Eigen ``dot`` and ``convolution`` thunks asynchronously on the
    intra-op pool: the op's event ends when the work is handed off, long before it is
    done (a 1024^3 dot: a 2 ms event, 17 ms to completion). The executor marks each op's
    completion with an ``end: <op>`` event. An op is synchronous when that marker follows
    it on its own thread before the thread starts another op; otherwise ``async_us`` is
    the time from the op's start to the first marker after it (any thread of the
    process). The marker can also come late because the thread that processes it is busy,
    so only ops of ASYNC_OPCODES use ``async_us``, bounded by the start of their first
    consumer (see ``_match``).
    """
    if not markers:
        return
    for idx in _thread_orders(events, lambda i: events[i].start_us):
        starts = [events[i].start_us for i in idx]
        for pos, i in enumerate(idx):
            e = events[i]
            ms = markers.get((e.process, e.op))
            if not ms:
                continue
            k = bisect.bisect_left(ms, (e.start_us, ""))
            if k >= len(ms):
                continue
            # the next op this thread starts after e ends (not nested in e)
            nxt = bisect.bisect_left(starts, e.end_us - EPS_US, pos + 1)
            next_start = starts[nxt] if nxt < len(starts) else float("inf")
            same_thread_sync = any(t == e.thread and ts < next_start
                                   for ts, t in ms[k:k + 4])
            if same_thread_sync:
                continue
            done = ms[k][0]
            if done > e.end_us + EPS_US:
                e.async_us = done - e.start_us


def depths(events: Sequence[OpEvent]) -> list[int]:
    """Each event's nesting depth on its thread."""
    out = [0] * len(events)
    for idx in _thread_orders(events, lambda i: (events[i].start_us, -events[i].dur_us)):
        stack: list[int] = []
        for i in idx:
            e = events[i]
            while stack and not (e.start_us < events[stack[-1]].end_us - EPS_US
                                 and e.end_us <= events[stack[-1]].end_us + EPS_US):
                stack.pop()
            out[i] = len(stack)
            stack.append(i)
    return out


def attribute(execs: Sequence[tuple[str, float, float, float]]
              ) -> tuple[list[float], list[float]]:
    """Each op execution's own time and its part of the wall time, over one run.

    ``execs``: ``(thread, start, end, done)`` per execution (µs); ``done > end`` for an
    asynchronous thunk whose work outlives its event. On a thread, the innermost running
    event owns the time (a ``while`` owns only the gaps between its body's ops); an
    asynchronous op also owns the time after its event, up to ``done``, in which its
    thread runs no other op started after it (the wait no other op of the thread could
    use; an enclosing ``while`` does not take it). That is the
    execution's *own* time. Where the owners of k threads run at once, each is charged
    1/k of that wall time: the *charged* times of a run add up to at most its span, so
    shares of step time never exceed 100%; ``own - charged`` is the time the execution
    ran alongside others (overlap).
    """
    n = len(execs)
    own = [0.0] * n
    charged = [0.0] * n
    if n == 0:
        return own, charged
    # boundaries: (time, order, index); order 0 = an event ends, 1 = a wait ends,
    # 2 = an event starts (ends first, so back-to-back events do not overlap)
    points: list[tuple[float, int, int]] = []
    for i, (_t, start, end, done) in enumerate(execs):
        points.append((start, 2, i))
        points.append((end, 0, i))
        if done > end + EPS_US:
            points.append((done, 1, i))
    points.sort()
    running: dict[str, dict[int, float]] = defaultdict(dict)   # thread -> event -> start
    waiting: dict[str, set[int]] = defaultdict(set)             # thread -> async waits
    owners: dict[str, list[int]] = {}                           # thread -> who owns it now

    def owner_of(thread: str) -> list[int]:
        act = running.get(thread)
        waits = waiting.get(thread, set())
        if act:
            inner = max(act, key=lambda i: (act[i], i))     # innermost: latest start
            # a wait that began inside it (a dot in a while body) is the body's work,
            # not the enclosing op's
            waits = {i for i in waits if execs[i][1] > act[inner]}
            if not waits:
                return [inner]
        return sorted(waits)

    k = 0
    prev = points[0][0]
    while k < len(points):
        t = points[k][0]
        if t > prev and owners:
            span = t - prev
            share = span / len(owners)
            for who in owners.values():
                for i in who:
                    own[i] += span / len(who)
                    charged[i] += share / len(who)
        changed: set[str] = set()
        while k < len(points) and points[k][0] == t:
            _, kind, i = points[k]
            thread, start, end, done = execs[i]
            if kind == 2:
                running[thread][i] = start
            elif kind == 0:
                running[thread].pop(i, None)
                if done > end + EPS_US:
                    waiting[thread].add(i)
            else:
                waiting[thread].discard(i)
            changed.add(thread)
            k += 1
        for thread in changed:
            who = owner_of(thread)
            if who:
                owners[thread] = who
            else:
                owners.pop(thread, None)
        prev = t
    return own, charged
