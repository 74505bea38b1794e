"""Who sees which dumps. Links are the capability: a visitor's Stored list holds the dumps
they uploaded or opened (remembered in their browser, a cookie of share ids), not every
dump on the server; ``HLOLENS_LIST_ALL=1`` lists all of them, for a trusted team.
"""

from __future__ import annotations

import os
import re

import streamlit as st

from .component import remember_cookie

COOKIE = "hlolens-mine"
_STATE = "hlolens-mine"
_MAX = 200                   # newest ids kept: a cookie holds 4 KB
_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def list_all() -> bool:
    """The server lists every stored dump to everyone (a trusted team's setting)."""
    return os.environ.get("HLOLENS_LIST_ALL", "").strip().lower() in ("1", "true", "yes")


def mine() -> list[str]:
    """Share ids of the dumps this browser uploaded or opened, oldest first."""
    ids = st.session_state.get(_STATE)
    if ids is None:
        try:
            raw = st.context.cookies.get(COOKIE) or ""
        except Exception:                  # no browser (scripts, AppTest): none yet
            raw = ""
        ids = [i for i in raw.split(".") if _ID.fullmatch(i)][-_MAX:]
        st.session_state[_STATE] = ids
    return ids


def remember(share_id: str) -> None:
    """Add a dump this visitor opened to their list (and their browser's cookie)."""
    ids = mine()
    if not share_id or share_id in ids:
        return
    ids.append(share_id)
    del ids[:-_MAX]
    remember_cookie(COOKIE, list(ids), key=f"remember:{len(ids)}:{share_id}")
