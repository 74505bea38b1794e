"""Our parse of every sample HLO text equals XLA's own (jaxlib's C++ parser), and what we
print and extract is accepted by it."""

from __future__ import annotations

import os
import re

import pytest

from compiler_bridge import parse_hlo
from compiler_bridge.hlo import extract_text, print_module

from conftest import missing, read, sample_hlo_texts

try:
    from jaxlib import _hlo as hlo
except ImportError:
    missing("jaxlib._hlo (XLA's own parser) is not importable", module_level=True)
pytestmark = pytest.mark.jaxlib

_INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")


def xla_structure(text: str) -> list:
    """[(computation, entry, [(name, opcode, shape, operands)])] from XLA's own parse."""
    m = hlo.hlo_module_from_text(text)
    printed = m.to_string()
    entry = re.search(r"^ENTRY %?([\w.\-]+)", printed, re.M).group(1)
    out = []
    for comp in m.computations():
        insts = []
        for inst in comp.instructions():
            line = inst.to_string()
            shape = re.match(r"(?:ROOT )?%[\w.\-]+ = (.*?) [a-z][\w\-]*\(", line)
            opcode = re.match(r"(?:ROOT )?%[\w.\-]+ = .*? ([a-z][\w\-]*)\(", line).group(1)
            insts.append((inst.name, opcode, shape.group(1), tuple(o.name for o in inst.operands())))
        out.append((comp.name, comp.name == entry, insts))
    return out


def our_structure(module) -> list:
    return [(c.name, c is module.entry,
             [(i.name, i.opcode, str(i.shape), tuple(i.operand_names)) for i in c.instructions])
            for c in module.computations]


def _key(structure):
    # XLA lists computations in its own order; compare per computation name
    return {name: (entry, insts) for name, entry, insts in structure}


FILES = sample_hlo_texts()


def test_samples_exist():
    assert len(FILES) >= 30


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_sample_matches_xla(path):
    text = read(path)
    ours = our_structure(parse_hlo(text, path))
    theirs = xla_structure(text)
    assert [c[0] for c in ours] == [c[0] for c in theirs]
    assert _key(ours) == _key(theirs)


@pytest.mark.parametrize("path", FILES[:: max(1, len(FILES) // 12)],
                         ids=lambda p: os.path.basename(p))
def test_printed_module_round_trips_through_xla(path):
    text = read(path)
    module = parse_hlo(text, path)
    printed = print_module(module)
    assert hlo.hlo_module_from_text(printed).to_string() == \
        hlo.hlo_module_from_text(text).to_string()
    assert our_structure(parse_hlo(printed)) == our_structure(module)


def test_extracted_fusions_and_computations_parse_in_xla():
    main = [p for p in FILES if p.endswith("cpu_after_optimizations.txt")]
    assert main
    count = 0
    for path in main:
        module = parse_hlo(read(path), path)
        names = [c.name for c in module.computations]
        names += [i.name for i in module.instructions() if i.opcode in ("fusion", "while", "dot")]
        for name in names:
            text = extract_text(module, name)
            xm = hlo.hlo_module_from_text(text)
            ours = parse_hlo(text)
            assert len(list(xm.computations())) == len(ours.computations)
            count += 1
    assert count > 50
