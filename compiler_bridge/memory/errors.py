"""The error the memory readers raise for a file they cannot read."""

from __future__ import annotations

from ..hlo import diagnostic


class MemoryFileError(ValueError):
    """A buffer-assignment / live-range / memory-usage file that cannot be read, or a
    module that has none, with the file, the line and what was expected::

        module_0000.jit_f.cpu_after_optimizations-live-range.txt:7: expected
        '<index>:<instruction>' in the InstructionSequence
          7 bogus
    """

    def __init__(self, message: str, *, source: str | None = None, line: int = 0,
                 text: str = "") -> None:
        self.message = message
        self.source = source
        self.line = line          # 1-based; 0 when not tied to a line
        self.text = text          # the offending line, verbatim
        super().__init__(self._render())

    def _render(self) -> str:
        return diagnostic(self.message, self.source, self.line, text=self.text, width=200)
