"""MS210: torch types in annotations become the MindSpore types they document.

An annotation (a parameter's, a return's, an annotated assignment's or class field's)
names what a value holds. There ``torch.LongTensor`` is a tensor (the dtype part is only
documentation: MindSpore has one Tensor class) and ``torch.device`` a device, which
MindSpore spells as a string. ``tables/annotations.toml`` maps such types; a type it does
not list converts as its entry in the other tables says (``torch.Tensor``,
``nn.Module``). The types inside ``Optional[...]``, ``Union[...]``, ``list[...]``,
``X | None`` and string forward references (``"torch.Tensor"``) are annotation
positions too; ``Literal[...]`` values and ``Annotated[...]`` metadata are not.

A torch type left in an annotation is marked and counted apart from code
(``Stats.annotations``): it runs nothing. Outside annotations nothing changes here:
``isinstance(x, torch.LongTensor)`` tests the dtype, and MS201 marks it.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.passes import Example, Pass

from ..analysis.annotations import forward_reference, type_positions
from ..table_calls import reference_refusal, tables


class AnnotationTypes(Pass):
    id = "MS210"
    name = "annotation-types"
    summary = "torch types in annotations become MindSpore types (typed tensors: Tensor; torch.device: str)."
    runs_after = {
        "MS104": "MS104 types an autograd Function's ctx parameter as the emitted _FunctionCtx, not torch's FunctionCtx",
    }
    examples = (
        Example(
            "import torch\nfrom typing import Optional\n\n\n"
            "def pick(ids: torch.LongTensor, device: Optional[torch.device] = None) -> torch.FloatTensor:\n"
            "    return ids\n",
            "from typing import Optional\nimport mindspore as ms\n\n\n"
            "def pick(ids: ms.Tensor, device: Optional[str] = None) -> ms.Tensor:\n"
            "    return ids\n",
        ),
        Example(
            'import torch\n\n\nclass Cache:\n    keys: "torch.Tensor"\n    device: torch.device\n',
            'import mindspore as ms\n\n\nclass Cache:\n    keys: "ms.Tensor"\n    device: str\n',
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self.roots = self.tables.source_roots
        self._types: set[int] = set()  # ids of the original nodes in type positions

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._types |= type_positions(node)

    def leave_Attribute(self, original, updated):
        return self._type(original, updated) if id(original) in self._types else updated

    def leave_Name(self, original, updated):
        return self._type(original, updated) if id(original) in self._types else updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        if id(original) not in self._types:
            return updated
        return self._forward_reference(original, updated, original)

    def _forward_reference(self, original: cst.SimpleString, updated: cst.SimpleString, mark_at: cst.CSTNode):
        """A forward reference: the types named in the string, converted alike (a marker
        goes to ``mark_at``, the string in the file's tree)."""
        expr = forward_reference(original)
        if expr is None:
            return updated  # not an expression: a plain string
        converted = expr.visit(_StringTypes(self, mark_at, type_positions(cst.Annotation(expr))))
        text = cst.Module([]).code_for_node(converted)
        quote = original.quote
        if converted is expr or quote in text or "\\" in text:
            return updated
        return updated.with_changes(value=f"{original.prefix}{quote}{text}{quote}")

    def _type(self, original, updated, mark_at=None):
        """A torch type (``original``, in a type position) -> its MindSpore type; a type
        without one stays, marked and counted as left in an annotation."""
        qual = self.ctx.imports.qualify(original)
        if qual is None or qual.split(".")[0] not in self.roots:
            return updated
        target = self.tables.annotations.get(qual)
        if target is None and qual in self.tables.modules:
            # a module as a type (a slip: ``fmt: F``) converts as a module: a name bound to
            # it is the imports pass's, a dotted one names the target module
            target = self.tables.modules[qual]
            if not isinstance(original, cst.Attribute):
                return updated
        if target is None:
            entry = self.tables.lookup(qual)
            why = reference_refusal(entry)
            if why is not None:
                self.ctx.count_annotation()
                self.ctx.mark(mark_at or original, self.id, f"{qual} (in an annotation): {why}")
                return self.ctx.keep_source(qual, original)
            target = entry.target
        self.ctx.count_converted()
        return self.ctx.reference(target)


class _StringTypes(cst.CSTTransformer):
    """Converts the types of one forward reference (a few nodes parsed from its string)."""

    def __init__(self, owner: AnnotationTypes, string: cst.SimpleString, positions: frozenset[int]) -> None:
        super().__init__()
        # the ids of this parse's nodes: kept apart from the file's, as they are reused
        # once the parse is gone
        self.owner, self.string, self.positions = owner, string, positions

    def leave_Attribute(self, original, updated):
        return self._type(original, updated)

    def leave_Name(self, original, updated):
        return self._type(original, updated)

    def leave_SimpleString(self, original, updated):
        """A forward reference inside one: ``"Optional['torch.Tensor']"``."""
        if id(original) not in self.positions:
            return updated
        return self.owner._forward_reference(original, updated, self.string)

    def _type(self, original, updated):
        if id(original) not in self.positions:
            return updated
        return self.owner._type(original, updated, mark_at=self.string)
