"""The selected instruction on the device mesh (a part of the inspector, not a page): for a
sharded instruction, which device holds which tile, its slice, the per-device shape and
bytes; for a collective, its device groups. Built by ``viz.sharding.sharding_card``."""

from __future__ import annotations

import html

import streamlit as st

from viz import sharding as SHV

from .model import Shown


def _table(card: SHV.ShardingCard) -> str:
    rows_axis, cols_axis = card.axes
    head = (f"<tr><th style='padding:2px 6px'>{html.escape(rows_axis)} ↓ · "
            f"{html.escape(cols_axis)} →</th></tr>")
    body = "".join(
        "<tr>" + "".join(
            f"<td style='background:{c.colour};color:white;padding:4px 8px;"
            f"border:1px solid white;font-size:12px'><b>device {c.device}</b><br>"
            f"{html.escape(c.text)}</td>" for c in row) + "</tr>"
        for row in card.grid)
    return f"<table style='border-collapse:collapse'>{head}{body}</table>"


def show(shown: Shown, name: str) -> None:
    """The mesh picture of ``name`` in ``shown``'s module; nothing for a module on one
    device or an instruction without a sharding."""
    inst = shown.module.find(name)
    if inst is None:
        return
    card = SHV.sharding_card(shown.module, inst)
    if card is None:
        return
    box = st.expander(f"On the mesh · {card.title}", key=f"mesh:{name}")
    box.markdown("  \n".join(card.lines))
    box.markdown(_table(card), unsafe_allow_html=True)
