"""Bad input gets an HloParseError naming file, line, column, the line and what was expected."""

from __future__ import annotations

import re

import pytest

from compiler_bridge import HloParseError, parse_hlo, parse_hlo_bytes

from conftest import read, sample_file

SRC = "module_0000.jit_train_step.cpu_after_optimizations.txt"


@pytest.fixture(scope="module")
def text() -> str:
    return read(sample_file("mlp_train", "module_*.cpu_after_optimizations.txt"))


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def parse_error(text: str | bytes) -> HloParseError:
    with pytest.raises(HloParseError) as info:
        if isinstance(text, bytes):
            parse_hlo_bytes(text, SRC)
        else:
            parse_hlo(text, SRC)
    err = info.value
    assert err.source == SRC and str(err).startswith(SRC + ":")
    return err


def test_truncated_file_mid_instruction(text):
    cut = text.index(" fusion(", len(text) // 2) + 8   # inside an operand list
    err = parse_error(text[:cut])
    assert err.line == text[:cut].count("\n") + 1
    assert "expected ')'" in err.message or "end of file" in err.message
    assert err.text and err.text in text


def test_truncated_file_between_instructions(text):
    cut = text.rindex("\n", 0, text.rindex("ROOT")) + 1
    err = parse_error(text[:cut])
    assert "unexpected end of file" in err.message and "expected '}'" in err.message


def test_binary_file_is_rejected_with_offset():
    """A profiler's XPlane protobuf (binary, as the profiler wrote it) given as HLO: the
    error names the first NUL byte's offset and line, as the bytes show them."""
    data = open(sample_file("transformer", "trace/plugins/profile/*/vm.xplane.pb"), "rb").read()
    nul = data.index(b"\0")
    err = parse_error(data)
    assert "binary data" in err.message and "expected HLO text" in err.message
    assert f"offset {nul})" in err.message
    assert err.line == data[:nul].count(b"\n") + 1


def test_non_utf8_bytes(text):
    # outside a quoted string a byte that is not UTF-8 is not HLO: named with its place
    data = text.encode()
    at = data.index(b'op_name="') - 1
    bad = data[:at] + b"\xff\xfe" + data[at:]
    err = parse_error(bad)
    assert "not UTF-8" in err.message and "0xff" in err.message
    assert err.line == data[:at].count(b"\n") + 1 and err.column > 1


def test_latin1_bytes_inside_strings(text):
    # a source file and an op_name written in Latin-1 (issue 17, item 8): XLA takes this
    # text as Unicode; read as bytes, those bytes are Latin-1 and the module opens
    data = text.encode()
    name = data.index(b'op_name="') + len(b'op_name="')
    path = data.index(b'1 "/') + len(b'1 "')
    assert path < name
    latin = data[:path] + b"home/Jos\xe9" + data[path:name] + b"caf\xe9/" + data[name:]
    module = parse_hlo_bytes(latin, "latin1.hlo")
    ops = [i.metadata.op_name for c in module.computations for i in c.instructions
           if i.metadata and i.metadata.op_name.startswith("caf")]
    assert ops and ops[0].startswith("caf\u00e9/")
    assert module.stack_frames.file_names[1].startswith("home/Jos\u00e9/")
    # the same text as Unicode is what XLA's parser takes; both read alike
    same = parse_hlo(latin.decode("latin-1"), "latin1.hlo")
    assert same.stats() == module.stats()
    assert same.stack_frames.file_names == module.stack_frames.file_names
    from jaxlib import _hlo as xla                     # XLA's own parser takes it too
    assert xla.hlo_module_from_text(latin.decode("latin-1")).name == module.name


def test_empty_file():
    err = parse_error("")
    assert "empty file" in err.message and "HloModule" in err.message
    err = parse_error("\n  \n")
    assert "empty file" in err.message


def test_not_hlo_text():
    err = parse_error("digraph G { a -> b }\n")
    assert err.line == 1 and err.column == 1 and "HloModule" in err.message


def test_unknown_opcode(text):
    m = re.search(r"[}\]] (multiply|add)\(", text)
    bad = text[: m.start(1)] + "multiplyy" + text[m.end(1):]
    err = parse_error(bad)
    assert err.message == "unknown opcode 'multiplyy'"
    assert err.line == line_of(text, m.group(0))
    assert err.text[err.column - 1:].startswith("multiplyy(")


def test_reference_to_missing_computation(text):
    m = re.search(r"calls=%([\w.\-]+)", text)
    bad = text.replace(m.group(0), "calls=%no_such_computation", 1)
    err = parse_error(bad)
    assert "no_such_computation" in err.message and "not defined" in err.message
    assert err.line == line_of(text, m.group(0))
    assert err.text[err.column - 1:].lstrip("%").startswith("no_such_computation")


def test_duplicate_instruction_name(text):
    entry = text.index("ENTRY")
    m = re.search(r"\n  (%[\w.\-]+) = ", text[entry:])
    first = m.group(1)
    second = re.search(r"\n  (%[\w.\-]+) = ", text[entry + m.end():])
    at = entry + m.end() + second.start(1)
    bad = text[:at] + first + text[at + len(second.group(1)):]
    err = parse_error(bad)
    assert "defined twice" in err.message and first.lstrip("%") in err.message
    assert "first on line" in err.message


def test_duplicate_computation_name(text):
    names = re.findall(r"^(%[\w.\-]+) \(", text, re.M)
    a, b = names[0], names[1]
    at = text.index("\n" + b + " (") + 1
    bad = text[:at] + a + text[at + len(b):]
    bad = bad.replace(b + ",", a + ",").replace(b + "\n", a + "\n")
    err = parse_error(bad)
    assert "defined twice" in err.message or "not defined" in err.message


def test_undefined_operand(text):
    m = re.search(r"add\((%[\w.\-]+),", text)
    bad = text.replace(m.group(0), "add(%ghost.1,", 1)
    err = parse_error(bad)
    assert "'ghost.1'" in err.message and "not defined" in err.message
    assert err.text[err.column - 1:].startswith("%ghost.1")


def test_bad_attribute_syntax(text):
    m = re.search(r"dimensions=\{([\d,]+)\}", text)
    bad = text.replace(m.group(0), "dimensions={" + m.group(1), 1)
    err = parse_error(bad)
    assert "expected" in err.message and err.line == line_of(text, m.group(0))


def test_error_rendering_points_at_column(text):
    m = re.search(r"[}\]] (multiply|add)\(", text)
    bad = text[: m.start(1)] + "bogus" + text[m.end(1):]
    err = parse_error(bad)
    lines = str(err).split("\n")
    assert lines[0] == f"{SRC}:{err.line}:{err.column}: unknown opcode 'bogus'"
    assert lines[2].index("^") == lines[1].index("bogus")
