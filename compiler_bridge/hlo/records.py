"""Small records of the HLO model: an instruction's metadata, and the stack-frame tables
(``FileNames`` / ``FunctionNames`` / ``FileLocations`` / ``StackFrames``) that map it to
source locations. Plain values: the attribute decoders and the model both build them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Metadata:
    """An instruction's ``metadata={...}``."""

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    source_end_line: int = 0
    source_column: int = 0
    source_end_column: int = 0
    stack_frame_id: int = 0
    other: tuple[tuple[str, str], ...] = ()   # every other field, verbatim


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where in the user's program an instruction came from."""

    file: str
    line: int
    function: str = ""
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    callers: tuple["SourceLocation", ...] = ()   # outermost last

    def __str__(self) -> str:
        out = f"{self.file}:{self.line}"
        if self.column:
            out += f":{self.column}"
        if self.function:
            out += f" ({self.function})"
        return out


@dataclass(frozen=True, slots=True)
class FileLocation:
    file_name_id: int
    function_name_id: int
    line: int
    end_line: int = 0
    column: int = 0
    end_column: int = 0


@dataclass(frozen=True, slots=True)
class StackFrame:
    file_location_id: int
    parent_frame_id: int   # as written: the parent is frame (parent_frame_id - 1); <= 1 means none


@dataclass(slots=True)
class StackFrameIndex:
    """The ``FileNames`` / ``FunctionNames`` / ``FileLocations`` / ``StackFrames`` tables."""

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, FileLocation] = field(default_factory=dict)
    stack_frames: dict[int, StackFrame] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.stack_frames or self.file_names)

    def location(self, frame_id: int) -> SourceLocation | None:
        frames: list[SourceLocation] = []
        seen = set()
        fid = frame_id
        while fid and fid in self.stack_frames and fid not in seen:
            seen.add(fid)
            frame = self.stack_frames[fid]
            loc = self.file_locations.get(frame.file_location_id)
            if loc is not None:
                frames.append(SourceLocation(
                    self.file_names.get(loc.file_name_id, "?"), loc.line,
                    self.function_names.get(loc.function_name_id, ""), loc.column,
                    loc.end_line, loc.end_column))
            fid = frame.parent_frame_id - 1
        if not frames:
            return None
        head = frames[0]
        return SourceLocation(head.file, head.line, head.function, head.column,
                              head.end_line, head.end_column, tuple(frames[1:]))


__all__ = ["FileLocation", "Metadata", "SourceLocation", "StackFrame", "StackFrameIndex"]
