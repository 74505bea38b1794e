"""A table cell with no value (a kernel measured on one side of a comparison only, a
kernel without a spread) shows '–', as the app's other tables and the HTML report do,
not Streamlit's default text 'None' (``st.dataframe(placeholder=...)``)."""

from __future__ import annotations

from conftest import sample
from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, app, ok, open_tab


def _placeholder(at: AppTest, column: str) -> tuple[str, int]:
    """The placeholder of the table with ``column`` and how many of its cells are empty."""
    table = next(d for d in at.dataframe if column in d.value.columns)
    return table.proto.placeholder, int(table.value.isna().sum().sum())


def test_the_compared_kernels_table_shows_a_dash_for_one_sides_kernel(monkeypatch):
    monkeypatch.setenv("HLOLENS_DUMP", sample("transformer"))
    monkeypatch.setenv("HLOLENS_COMPARE", sample("flags_default"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.run()                   # the first run moved the URL to the comparison
    at.query_params["base_module"] = "0000"      # the programs differ: pair them by hand
    at.run()
    ok(at)
    placeholder, empty = _placeholder(at, "baseline µs")
    assert empty and placeholder == "–"


def test_the_runtimes_kernel_table_shows_a_dash_where_nothing_was_measured(monkeypatch):
    at = open_tab(app(sample("transformer"), monkeypatch))
    placeholder, empty = _placeholder(at, "predicted_us")
    assert empty and placeholder == "–"
