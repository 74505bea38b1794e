"""Our parse of every peer module equals XLA's own (jaxlib 0.10.2), recorded in
``peer_hlo/golden.jsonl.gz``: same computations in order, same instruction names (after
XLA's module-wide uniquing), opcodes, shapes with layout and operand names.  Files XLA
rejects must give an HloParseError or a (tolerant) parse, never another exception.
No jaxlib needed: the golden file holds XLA's answers."""

from __future__ import annotations

import gzip
import json
import os
import re


from compiler_bridge import HloParseError, parse_hlo

from conftest import PEER, missing

GOLDEN = os.path.join(PEER, "golden.jsonl.gz")

if not os.path.exists(GOLDEN):
    missing(f"{GOLDEN} is not available", module_level=True)

# rows stay JSON text until a test needs one (decoded, the corpus holds millions of small
# objects, which would slow every garbage collection of the session)
_HEAD = re.compile(r'\{"file": "([^"]+)", "ok": (true|false)')
with gzip.open(GOLDEN, "rt", encoding="utf-8") as _f:
    RAW = {m.group(1): (m.group(2) == "true", line)
           for line in _f if (m := _HEAD.match(line))}
FILES = sorted(RAW)
ACCEPTED = [f for f in FILES if RAW[f][0]]
REJECTED = [f for f in FILES if not RAW[f][0]]

_outcomes: dict[str, object] = {}


def outcome(name: str):
    """What parsing a peer file gave: the exception it raised, or for a module the first
    difference from XLA's parse ('' when equal).  Each file is parsed once per session and
    the module is not kept (the corpus is 31 MB); the attributes of the smaller accepted
    modules are decoded too (``materialize``)."""
    if name not in _outcomes:
        with open(os.path.join(PEER, name), encoding="utf-8") as f:
            text = f.read()
        try:
            module = parse_hlo(text, name)
            if RAW[name][0] and len(text) < 500_000:
                module.materialize()   # every attribute decodes (lazily kept text is sound)
        except Exception as e:   # noqa: BLE001 - the tests below judge what was raised
            _outcomes[name] = e
        else:
            if RAW[name][0]:
                a, b = ours(module), golden(name)
                _outcomes[name] = "" if a == b else first_difference(a, b)
            else:
                _outcomes[name] = ""
    return _outcomes[name]


def ours(module) -> list[dict]:
    return [{"name": c.name, "entry": c.is_entry,
             "instructions": [[i.name, i.opcode, str(i.shape), list(i.operand_names)]
                              for i in c.instructions]}
            for c in module.computations]


def golden(name: str) -> list[dict]:
    row = json.loads(RAW[name][1])
    return [{"name": c["name"], "entry": c.get("entry", False),
             "instructions": c["instructions"]} for c in row["computations"]]


def first_difference(a: list[dict], b: list[dict]) -> str:
    names_a, names_b = [c["name"] for c in a], [c["name"] for c in b]
    if names_a != names_b:
        return f"computations differ: ours {names_a[:10]} vs XLA {names_b[:10]}"
    for ca, cb in zip(a, b):
        if ca == cb:
            continue
        if ca["entry"] != cb["entry"]:
            return f"{ca['name']}: ENTRY flag differs"
        for ia, ib in zip(ca["instructions"], cb["instructions"]):
            if ia != ib:
                return f"{ca['name']}: ours {ia} vs XLA {ib}"
        return (f"{ca['name']}: {len(ca['instructions'])} instructions vs "
                f"{len(cb['instructions'])}")
    return "equal"


def test_corpus_is_there():
    assert len(FILES) >= 300 and len(ACCEPTED) >= 300


def test_every_accepted_file_matches_xla():
    """Each of the files XLA accepts gives the module XLA builds (100%, no exception)."""
    failures = {}
    for name in ACCEPTED:
        result = outcome(name)
        if isinstance(result, Exception):
            failures[name] = f"we raise {type(result).__name__}: {str(result).splitlines()[0]}"
        elif result:
            failures[name] = result
    report = "\n".join(f"{k}: {v}" for k, v in list(failures.items())[:25])
    assert not failures, (f"{len(ACCEPTED) - len(failures)} of {len(ACCEPTED)} files match "
                          f"XLA; first differences:\n{report}")


def test_rejected_files_give_parse_error_or_module():
    """For a file XLA rejects: a precise HloParseError (file, line, message) or a parse."""
    bad = {}
    for name in REJECTED:
        result = outcome(name)
        if isinstance(result, Exception):
            if not isinstance(result, HloParseError):
                bad[name] = f"{type(result).__name__}: {result}"
            elif not (result.source == name and result.line > 0 and result.message
                      and str(result).startswith(f"{name}:{result.line}:")):
                bad[name] = f"imprecise error: {result!r}"
    assert not bad, bad


def test_no_peer_file_raises_anything_but_parse_error():
    others = {}
    for name in FILES:
        result = outcome(name)
        if isinstance(result, Exception) and not isinstance(result, HloParseError):
            others[name] = f"{type(result).__name__}: {result}"
    assert not others, others
