"""Property: whatever is done to a real dump file, the parser answers with a module or an
HloParseError, never another exception (hypothesis mutates real XLA output)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from compiler_bridge import HloParseError, parse_hlo, parse_hlo_bytes

from conftest import read, sample_file

TEXTS = [read(sample_file(name, "module_*.cpu_after_optimizations.txt"))
         for name in ("cond_switch", "scan_while")]
TEXTS.append(read(sample_file("legacy_jax0430", "module_*after_optimizations.txt")))
SPECIAL = list('{}()[]%=,:"\\/*<>?#\n ') + ["ROOT ", "ENTRY ", "/*", "*/", "//", "f32[",
                                            "{1,0}", "fusion(", "calls=", "metadata={",
                                            "\u00e9", "\x00", "\ufeff", "}", "-> "]


def check(text: str) -> None:
    try:
        module = parse_hlo(text, "mutated.txt")
    except HloParseError as e:
        assert e.source == "mutated.txt"
        assert str(e)
        return
    try:
        module.materialize()
        for inst in module.instructions():
            module.source_location(inst)
            str(inst.shape), inst.shape.byte_size, inst.text
    except HloParseError:
        pass


mutation = st.tuples(
    st.sampled_from(range(len(TEXTS))),
    st.lists(st.tuples(st.sampled_from(["delete", "insert", "duplicate_line", "swap_lines",
                                        "truncate", "replace"]),
                       st.floats(0, 1), st.floats(0, 1), st.sampled_from(SPECIAL)),
             min_size=1, max_size=4))


def apply(text: str, ops) -> str:
    for op, a, b, s in ops:
        n = len(text)
        i, j = sorted((int(a * n), int(b * n)))
        lines = text.split("\n")
        li, lj = int(a * (len(lines) - 1)), int(b * (len(lines) - 1))
        if op == "delete":
            text = text[:i] + text[min(j, i + 200):]
        elif op == "insert":
            text = text[:i] + s + text[i:]
        elif op == "replace":
            text = text[:i] + s + text[i + len(s):]
        elif op == "truncate":
            text = text[:i]
        elif op == "duplicate_line":
            lines.insert(lj, lines[li])
            text = "\n".join(lines)
        elif op == "swap_lines":
            lines[li], lines[lj] = lines[lj], lines[li]
            text = "\n".join(lines)
    return text


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutation)
def test_mutated_dump_gives_module_or_parse_error(m):
    index, ops = m
    check(apply(TEXTS[index], ops))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.binary(max_size=300), st.floats(0, 1))
def test_random_bytes_spliced_into_a_dump(blob, where):
    data = TEXTS[0].encode()
    at = int(where * len(data))
    try:
        parse_hlo_bytes(data[:at] + blob + data[at:], "mutated.txt")
    except HloParseError:
        pass
