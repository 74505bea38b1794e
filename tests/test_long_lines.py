"""HLO with very long lines, as XLA writes them: a constant printed in full
(``--xla_dump_large_constants``: 1M floats are 11 MB on one line)."""

from __future__ import annotations

from compiler_bridge import open_dump
from tests.support.apptest import app, card, click
from tests.support.fresh import compile_program

BIG_CONSTANT = """
C = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000) / 7.0
def f(x):
    return (x @ C).sum(axis=0)
ARGS = (jnp.ones((8, 1000)),)
"""


def test_selecting_a_megabyte_constant_sends_a_bounded_card(tmp_path, monkeypatch):
    """The selected node's card carries the start of its HLO line (100,000 characters,
    ``viz.panels.SELECTED_CARD_TEXT``) and says how much more there is and where; before,
    all 11 MB went to the browser on every rerun while the constant stayed selected."""
    dump, _ = compile_program(tmp_path, BIG_CONSTANT,
                              "--xla_dump_hlo_as_text --xla_dump_large_constants")
    d = open_dump(dump)
    hlo = d.stage(d.main)
    const = max((i for i in hlo.instructions() if i.opcode == "constant"),
                key=lambda i: len(i.text))
    assert len(const.text) > 10_000_000          # XLA printed every value
    at = click(app(str(dump), monkeypatch), f"node:{const.name}")
    shown = card(at)
    assert shown["name"] == const.name
    text = str(shown["text"])
    assert len(text) < 100_200 and "… (" in text, len(text)
    kept = text.rindex("… (")
    assert kept == 100_000 and text[:kept] == const.text[:kept]
    assert text[kept:] == (f"… ({len(const.text) - kept:,} more characters: the whole "
                           f"instruction is line {const.line} of the file)")
