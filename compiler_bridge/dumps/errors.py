"""The error a dump (folder or archive) raises when it cannot be opened at all."""

from __future__ import annotations


class DumpError(Exception):
    """A dump (folder or archive) that cannot be opened at all."""


class StoreError(DumpError):
    """A store operation that cannot be done (a missing dump, a refused upload...)."""
