"""The Pass base class.

A pass is one small rule set in one file: it declares ``visit_<Node>`` and
``leave_<Node>`` methods exactly like a LibCST transformer. The pipeline runs the
passes of one stage together in a single traversal, dispatching each node to the
passes that declare a method for its type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .context import FileContext
from .diagnostics import Safety


@dataclass(frozen=True)
class Example:
    """A before/after pair: documentation and a test case at once."""

    before: str
    after: str


class Pass:
    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    safety: ClassVar[Safety] = Safety.SAFE
    examples: ClassVar[tuple[Example, ...]] = ()

    def __init__(self, ctx: FileContext):
        self.ctx = ctx

    @classmethod
    def handlers(cls) -> dict[str, list[str]]:
        """Node type name -> the visit_/leave_ method names this pass defines."""
        out: dict[str, list[str]] = {}
        for attr in dir(cls):
            if attr.startswith(("visit_", "leave_")):
                out.setdefault(attr, []).append(attr)
        return out
