"""The lexer the parser and the attribute decoders share: strings, comments, brackets; and
the collector pause around a parse, under threads."""

from __future__ import annotations

import gc
import threading

import pytest

from compiler_bridge.hlo import gc_paused, parse_hlo
from compiler_bridge.hlo.lexer import LexError, group_end, scan_value, skip, strip_comments


def test_a_value_ends_at_the_first_top_level_comma():
    text = 'dims={0,1}, metadata={op_name="a,b}"}, x=1'
    assert text[5:scan_value(text, 5)] == "{0,1}"
    start = text.index("metadata=") + len("metadata=")
    assert text[start:scan_value(text, start)] == '{op_name="a,b}"}'


def test_a_value_ends_at_the_callers_closing_bracket():
    text = "{a=1, b=(2, 3)}"
    assert scan_value(text, 3) == 4
    assert scan_value(text, 8, stop_at_comma=False) == len(text) - 1


def test_comments_inside_a_value_are_skipped():
    text = "{1 /* } */, 2 // )\n}"
    assert group_end(text, 0) == len(text)


def test_bracket_errors_name_the_opener():
    with pytest.raises(LexError) as e:
        scan_value("{a=(1]}", 0)
    assert e.value.message == "expected ')' to close '(' (offset 3), found ']'"
    assert e.value.offset == 5
    with pytest.raises(LexError) as e:
        group_end("x = {(1, 2}", 4, lambda opener, at: f"the '{opener}' at {at}")
    assert e.value.message == "expected ')' to close the '(' at 5, found '}'"


def test_an_unclosed_group_stops_at_the_end_of_the_text():
    with pytest.raises(LexError) as e:
        group_end("{ {1}", 0)
    assert (e.value.message, e.value.offset, e.value.stop) == \
        ("expected '}' to close this '{'", 0, 5)


@pytest.mark.parametrize("text, message, offset", [
    ('{"abc}', "unterminated string", 1),
    ("{1 /* 2}", "unterminated /* comment", 3),
])
def test_unterminated_strings_and_comments(text, message, offset):
    with pytest.raises(LexError) as e:
        group_end(text, 0)
    assert (e.value.message, e.value.offset) == (message, offset)


def test_skip_and_strip_comments():
    assert skip("  /* a */ // b\n  x", 0) == 17
    assert skip("/* open", 0) == 0
    assert strip_comments('{x="/* kept */" /* gone */} // gone') == '{x="/* kept */" }'


def test_the_parser_reports_bracket_errors_with_the_line_of_the_opener():
    text = ("HloModule m\n\nENTRY %e {\n  ROOT %c = f32[] constant(0),\n"
            "    backend_config={\"a\": [1,\n 2}\n}\n")
    with pytest.raises(ValueError) as e:
        parse_hlo(text, "m.hlo")
    assert "expected ']' to close the '[' on line 5, found '}'" in str(e.value)
    assert "m.hlo:6" in str(e.value)


def test_gc_paused_restores_the_collector_after_the_last_of_several_threads():
    assert gc.isenabled()
    inside = threading.Barrier(4)
    leave = [threading.Event() for _ in range(4)]
    seen: list[bool] = []

    def work(i: int) -> None:
        with gc_paused():
            inside.wait()
            seen.append(gc.isenabled())
            leave[i].wait()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for i, t in enumerate(threads):
        while len(seen) < 4:
            threading.Event().wait(0.001)
        assert not gc.isenabled()   # some thread is still inside
        leave[i].set()
        t.join()
    assert seen == [False] * 4
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with gc_paused():
            with gc_paused():
                pass
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_parse_leaves_the_collector_on():
    parse_hlo("HloModule m\n\nENTRY %e {\n  ROOT %c = f32[] constant(0)\n}\n")
    assert gc.isenabled()
