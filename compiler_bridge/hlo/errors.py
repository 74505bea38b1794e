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
        return diagnostic(self.message, self.source, self.line, self.column, self.text)


def diagnostic(message: str, source: str | None, line: int = 0, column: int = 0,
               text: str = "", width: int = 300) -> str:
    """``file:line:col: message``, then the offending line (cut at ``width``) and a caret
    under the column: how the readers of XLA's files report what they cannot read."""
    if not source and not line:      # nothing to point at: the message alone
        return message
    where = source or "<text>"
    if line:
        where += f":{line}"
        if column:
            where += f":{column}"
    out = f"{where}: {message}"
    if text:
        shown = text if len(text) <= width else text[:width - 3] + "..."
        out += "\n  " + shown
        if column and column <= len(shown) + 1:
            out += "\n  " + " " * (column - 1) + "^"
    return out
