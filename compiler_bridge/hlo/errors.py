"""The error the HLO reader raises for text it cannot read."""

from __future__ import annotations


class HloParseError(ValueError):
    """HLO text that cannot be parsed, with where and what was expected.

    ``str()`` reads like a compiler diagnostic::

        module_0006.jit_f.before_optimizations.txt:12:31: expected ')' to close the operand list
          %add.3 = f32[8]{0} add(%x, %y
                                        ^
    """

    def __init__(self, message: str, *, source: str | None = None, line: int = 0,
                 column: int = 0, text: str = "") -> None:
        self.message = message
        self.source = source
        self.line = line          # 1-based; 0 when the error is not tied to a line
        self.column = column      # 1-based
        self.text = text          # the offending line, verbatim
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source or "<text>"
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        out = f"{where}: {self.message}"
        if self.text:
            shown = self.text if len(self.text) <= 300 else self.text[:297] + "..."
            out += "\n  " + shown
            if self.column and self.column <= len(shown) + 1:
                out += "\n  " + " " * (self.column - 1) + "^"
        return out

    def with_source(self, source: str | None) -> "HloParseError":
        if source is None or self.source == source:
            return self
        return HloParseError(self.message, source=source, line=self.line,
                             column=self.column, text=self.text)
