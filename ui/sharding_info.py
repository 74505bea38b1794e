"""The selected instruction on the device mesh (a part of the inspector, not a page): for a
sharded instruction, which device holds which tile, its slice, the per-device shape and
bytes; for a collective, its device groups. Built by ``viz.sharding.sharding_card``."""

from __future__ import annotations

import html

import streamlit as st

from compiler_bridge.dumps import BEFORE
from compiler_bridge.spmd import num_partitions
from viz import sharding as SHV

from .model import Opened, Shown


def _table(card: SHV.ShardingCard) -> str:
    body = "".join(
        "<tr>" + "".join(
            f"<td style='background:{c.colour};color:white;padding:4px 8px;"
            f"border:1px solid white;font-size:12px'><b>device {c.device}</b><br>"
            f"{html.escape(c.text)}</td>" for c in row) + "</tr>"
        for row in card.grid)
    return f"<table style='border-collapse:collapse'>{body}</table>"


def show(opened: Opened, shown: Shown, name: str) -> None:
    """The mesh picture of ``name`` in ``shown``'s module; nothing for a module on one
    device or an instruction without a sharding. After optimizations the module no longer
    names its mesh: the before-optimizations text's is drawn."""
    inst = shown.module.find(name)
    if inst is None or num_partitions(shown.module) <= 1:
        return
    hint = None
    if shown.stage != BEFORE and shown.dump_module.before_optimizations is not None:
        hint = SHV.mesh_hint(opened.dump.stage(shown.dump_module, BEFORE))
    card = SHV.sharding_card(shown.module, inst, hint)
    if card is None:
        return
    box = st.expander(f"On the mesh · {card.title}", expanded=True, key=f"mesh:{name}")
    box.markdown("  \n".join(card.lines))
    rows_axis, cols_axis = card.axes
    box.caption(f"rows: {rows_axis} · columns: {cols_axis}" if rows_axis else
                f"devices ({cols_axis})")
    box.markdown(_table(card), unsafe_allow_html=True)
