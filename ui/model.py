"""What the parts of the page hand one another: the opened dump (``Opened``), the module
and step picked (``Picked``), the module on screen (``Shown``), the selection in the
inspector (``Inspected``) and the trace runtimes come from (``TraceChoice``). Plain
dataclasses: a page builds one and the next reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamlit.delta_generator import DeltaGenerator

from compiler_bridge import Dump, DumpModule, HloModule
from compiler_bridge.passes import Step, Timeline
from viz import panels as P


@dataclass
class Opened:
    dump: Dump        # its ``key`` is what caches of anything computed from it go by
    key: str          # what the URL's ``dump`` holds: a share id ('' = --dump, not stored)
    name: str
    path: str
    share_id: str = ""   # the store's id of this dump ('' when it is not in the store)


@dataclass
class Picked:
    """The module and step chosen (before the step's text is parsed)."""

    dump_module: DumpModule
    timeline: Timeline     # before_optimizations, every pass step, after_optimizations
    index: int             # the step shown
    stage: str             # its ViewState.stage ('pass:0017', 'after_optimizations')
    path: str

    @property
    def step(self) -> Step:
        return self.timeline.step(self.index)


@dataclass
class Shown:
    """The module on screen: its dump files, stage and parsed HLO."""

    dump_module: DumpModule
    stage: str
    path: str
    module: HloModule     # caches know it by ``module.key``
    timeline: Timeline | None = None
    index: int = 0


@dataclass
class Inspected:
    """What the inspector shows: the selected instruction (None for a group, nothing, or a
    name this step lacks) and a place under its summary for more (history, comments)."""

    name: str
    info: P.Inspector | None
    slot: DeltaGenerator  # a Streamlit container


@dataclass(frozen=True)
class TraceChoice:
    """One trace the runtimes can come from."""

    key: str          # '' (the dump's own) or an uploaded trace's id (the URL's ``trace``)
    label: str        # for the picker
    origin: str       # 'dump' | 'store' | 'session'
    name: str         # the file, for messages
