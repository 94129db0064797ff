"""The Pass base class.

A pass is one small rule set in one file: it declares ``visit_<Node>`` and
``leave_<Node>`` methods exactly like a LibCST transformer. The pipeline runs the
passes of one stage together in a single traversal, dispatching each node to the
passes that declare a method for its type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

from .context import FileContext


@dataclass(frozen=True)
class Example:
    """A before/after pair: documentation and a test case at once."""

    before: str
    after: str


class Pass:
    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    examples: ClassVar[tuple[Example, ...]] = ()
    # Its replacements follow from the other passes' (the imports they need): not shown
    # as edits of their own and never declined one by one.
    derived_edits: ClassVar[bool] = False
    # The passes (ids) this one must run after when both are in a pipeline, each with why:
    # in the same stage, their handlers see a node before this one's. Pipeline checks it.
    runs_after: ClassVar[Mapping[str, str]] = {}
    # The codes it reports besides its id, each with what it means (`transpile passes CODE`)
    other_codes: ClassVar[Mapping[str, str]] = {}
    # The facts (attributes of ``ctx.facts``) its handlers read, directly or through the hooks
    # and analyses they call: what it depends on, beside the node in hand.
    # tests/test_pass_rules.py and tests/test_fact_reads.py hold it to what the pass reads.
    reads: ClassVar[frozenset[str]] = frozenset()
    # Words without which the pass has nothing to do in a file: when given, the pipeline
    # leaves the pass out of a file whose source holds none of them and whose imports bind
    # no name qualified with one (star imports of the tree included). Sound for a pass that
    # acts only on names qualified through the imports (spelled in the file, or inherited)
    # and whose handlers, where it finds nothing, change nothing, the traversal's descent
    # included. tests/test_mentions.py converts every fixture and sample with and without it.
    mentions: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: FileContext):
        self.ctx = ctx

    @property
    def facts(self):
        """What the analysis knows about the file being converted (shared by all passes,
        frozen; the pass reads those it lists in ``reads``)."""
        return self.ctx.facts
