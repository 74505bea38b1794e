"""The server's settings: one frozen object read from the environment and the command line.

Every module takes its settings from :func:`settings` and none reads ``os.environ`` or
``sys.argv`` for them. :data:`ENVIRONMENT` is the table of the variables, their defaults and
what each does; the README's table of settings is tested against it. The object is read once
per distinct environment: a test that sets a variable (``monkeypatch.setenv``) gets a new
object, a running server reads the environment once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ENVIRONMENT", "Setting", "Settings", "SettingsError", "settings", "settings_table"]

PREFIX = "HLOLENS_"


class SettingsError(ValueError):
    """A setting whose value is not of its form; the message names the variable."""


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, its default as the README states it, and what it
    does."""

    variable: str
    default: str
    what: str


ENVIRONMENT: tuple[Setting, ...] = (
    Setting("HLOLENS_DATA", "`./.hlolens-data`",
            "the store: a folder or an fsspec URL (`s3://…`)"),
    Setting("HLOLENS_LIST_ALL", "off",
            "`1`: the lists of stored dumps (Stored, the Baseline dump picker) show every dump "
            "to everyone (a trusted team); otherwise a visitor sees the dumps their browser "
            "uploaded or opened, and others' open only by link"),
    Setting("HLOLENS_STORE_QUOTA", "`50G`",
            "disk space all stored dumps and the traces uploaded beside them may take (each "
            "file counted by the blocks it takes on disk); a new dump or trace over it is "
            "refused with a message"),
    Setting("HLOLENS_STORE_FILES", "`1000000`",
            "files and folders (inodes) all stored dumps may take; a new dump over it is "
            "refused with a message"),
    Setting("HLOLENS_MAX_FILES", "`50000`",
            "the most files one dump may hold (an archive is refused as soon as it unpacks "
            "more)"),
    Setting("HLOLENS_MAX_RATIO", "`200`",
            "an archive that unpacks to more than this many times its size (past 16 MB) is "
            "refused"),
    Setting("HLOLENS_MAX_TRACE_BYTES", "512 MB",
            "the most a compressed trace may expand to"),
    Setting("HLOLENS_MAX_TRACE_EVENTS", "`1000000`",
            "the most per-op events (and XLA:CPU completion markers) a trace may hold; one "
            "with more is refused, so that reading it stays within about 1.5 GB of memory"),
    Setting("HLOLENS_CACHE", "`~/.cache/hlolens`",
            "this machine's calibrated device profile, its trained cost models, a remote "
            "store's local index and file cache"),
    Setting("HLOLENS_GRAPHVIZ", "`dot` if installed",
            "`wasm`: lay graphs out with the pip-installed Graphviz in WebAssembly even where "
            "Debian's `dot` exists"),
    Setting("HLOLENS_DUMP", "none",
            "the dump the app opens first, as `--dump PATH` after `streamlit run app.py --`"),
    Setting("HLOLENS_COMPARE", "none",
            "the baseline dump the app compares with, as `--compare PATH`"),
)


@dataclass(frozen=True)
class Settings:
    """What the server was told. Sizes are bytes; paths as given (``~`` expanded)."""

    data: str = ""                  # '' -> the store's default location
    list_all: bool = False
    store_quota: int = 50 << 30
    store_files: int = 1_000_000
    max_files: int = 50_000
    max_ratio: float = 200.0
    max_trace_bytes: int = 512 << 20
    max_trace_events: int = 1_000_000
    cache_dir: str = os.path.expanduser("~/.cache/hlolens")
    graphviz: str = ""              # '' (dot if installed) | 'wasm'
    dump: str = ""                  # --dump or $HLOLENS_DUMP
    compare: str = ""               # --compare or $HLOLENS_COMPARE

    @property
    def calibrated_profile(self) -> str:
        """Where ``calibrate`` keeps this machine's device profile."""
        return os.path.join(self.cache_dir, "device.json")

    @classmethod
    def read(cls, environ: Mapping[str, str], argv: Sequence[str] = ()) -> Settings:
        """The settings that ``environ`` and the app's command line (what follows
        ``streamlit run app.py --``) give; SettingsError names a malformed variable."""
        parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        parser.add_argument("--dump", default="")
        parser.add_argument("--compare", default="")
        args, _ = parser.parse_known_args(list(argv))

        def env(name: str) -> str:
            return environ.get(name, "").strip()

        return cls(
            data=env("HLOLENS_DATA"),
            list_all=env("HLOLENS_LIST_ALL").lower() in ("1", "true", "yes"),
            store_quota=_bytes("HLOLENS_STORE_QUOTA", env, 50 << 30),
            store_files=_count("HLOLENS_STORE_FILES", env, 1_000_000),
            max_files=_count("HLOLENS_MAX_FILES", env, 50_000),
            max_ratio=_number("HLOLENS_MAX_RATIO", env, 200.0),
            max_trace_bytes=int(_number("HLOLENS_MAX_TRACE_BYTES", env, 512 << 20)),
            max_trace_events=_count("HLOLENS_MAX_TRACE_EVENTS", env, 1_000_000),
            cache_dir=os.path.expanduser(env("HLOLENS_CACHE") or "~/.cache/hlolens"),
            graphviz=env("HLOLENS_GRAPHVIZ").lower(),
            dump=args.dump or env("HLOLENS_DUMP"),
            compare=args.compare or env("HLOLENS_COMPARE"),
        )


def _number(name: str, env: Callable[[str], str], default: float) -> float:
    text = env(name)
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r}: expected a number") from None


def _count(name: str, env: Callable[[str], str], default: int) -> int:
    text = env(name)
    if not text:
        return default
    try:
        n = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        n = -1
    if n < 0:
        raise SettingsError(f"{name}={text!r}: expected a whole number, e.g. 50000")
    return n


def _bytes(name: str, env: Callable[[str], str], default: int) -> int:
    """``20G``, ``500M``, ``1T``, ``1234`` (binary suffixes K, M, G, T; a trailing B)."""
    text = env(name)
    t = text.upper().rstrip("B")
    if not t:
        return default
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    try:
        return int(float(t.rstrip("KMGT")) * scale)
    except ValueError:
        raise SettingsError(f"{name}={text!r}: expected bytes, e.g. 20G or 500M") from None


@lru_cache(maxsize=8)
def _read(environ: tuple[tuple[str, str], ...], argv: tuple[str, ...]) -> Settings:
    return Settings.read(dict(environ), argv)


def settings() -> Settings:
    """The settings of this process: its ``HLOLENS_*`` variables and its command line."""
    mine = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(PREFIX)))
    return _read(mine, tuple(sys.argv[1:]))


def settings_table() -> str:
    """The README's table of settings, as markdown rows (one per variable)."""
    rows = ["| variable | default | what |", "|---|---|---|"]
    rows += [f"| `{s.variable}` | {s.default} | {s.what} |" for s in ENVIRONMENT]
    return "\n".join(rows)
