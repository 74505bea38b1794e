"""Passes that ran between two snapshots but were not dumped.

XLA writes a snapshot ``after_<A>.before_<B>`` when the pass regex matches A or B (and,
within a pipeline, only after a pass that changed the module). With
``--xla_dump_hlo_pass_re=.*`` the passes between one snapshot's ``before_<B>`` and the
next one's ``after_<C>`` changed nothing; with a narrowed regex (``fusion|layout``) they
may have changed the module unseen, so the next step's diff is theirs too, not C's alone.
The sequence numbers (SSSS) do not show it: XLA counts the files it writes.
"""

from __future__ import annotations

import re

from ..dumps import Dump, DumpModule
from ..steps import Step

# the flag's line in a module's debug_options file (a text proto)
_PASS_RE = re.compile(r'^\s*xla_dump_hlo_pass_re:\s*"((?:[^"\\]|\\.)*)"\s*$', re.M)


def dumped_pass_re(dump: Dump, module: DumpModule) -> str | None:
    """The module's ``--xla_dump_hlo_pass_re`` per its ``debug_options`` file (None when
    the dump does not say)."""
    for f in module.files:
        if f.kind == "debug_options":          # (dumps.dump.DEBUG_OPTIONS)
            try:
                m = _PASS_RE.search(dump.read_text(f.path))
            except (OSError, KeyError, UnicodeDecodeError):
                return None
            return m.group(1).encode().decode("unicode_escape") if m else None
    return None


def narrowed(pass_re: str | None) -> bool:
    """Whether the regex leaves passes out (``.*`` and the like match every name)."""
    return pass_re is not None and pass_re.strip() not in (".*", ".+", "(.*)")


def unseen(prev: Step | None, step: Step) -> str:
    """'B … C' when passes from B (the one after the previous snapshot) to C (the one this
    snapshot follows) ran in between; '' when the two snapshots are neighbours."""
    if prev is None or not prev.next_pass or prev.next_pass == "pipeline-end":
        return ""
    # a nested pipeline's first snapshot is 'after_pipeline-start' in that pipeline,
    # which the outer pipeline's previous snapshot names as the pass before it
    entered = step.pipeline if step.pass_name == "pipeline-start" else step.pass_name
    if step.kind != "pass":
        return f"{prev.next_pass} … the last pass"
    if entered == prev.next_pass:
        return ""
    if step.pass_name == "pipeline-start":
        return f"{prev.next_pass} … the start of {step.pipeline}"
    return f"{prev.next_pass} … {step.pass_name}"
