"""``gc_paused()``: keep the cyclic garbage collector off around work that allocates many
small objects and makes no garbage cycles (parsing a module), correctly when several
threads do such work at once (the Streamlit server).

The collector is process-wide. A plain ``disable() ... enable()`` pair per call is racy:
one thread re-enables it while another is still inside, or two threads each see it
disabled by the other and neither turns it back on. Here one lock and a count of the
threads inside make the first one in switch it off (only if it was on) and the last one
out switch it back on. While any thread is inside, no thread's garbage cycles are
collected; the collection runs once the last one leaves.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

_lock = threading.Lock()
_inside = 0           # threads inside gc_paused()
_reenable = False     # the collector was on when the first of them came in


class _Pause:
    def __enter__(self) -> None:
        global _inside, _reenable
        with _lock:
            if _inside == 0:
                _reenable = gc.isenabled()
                if _reenable:
                    gc.disable()
            _inside += 1

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        global _inside, _reenable
        with _lock:
            _inside -= 1
            if _inside == 0 and _reenable:
                _reenable = False
                gc.enable()


_PAUSE = _Pause()


def gc_paused() -> _Pause:
    """A context manager: the collector is off inside (nested and concurrent uses share
    one pause) and back to its state from before when the last user leaves."""
    return _PAUSE


__all__ = ["gc_paused"]
