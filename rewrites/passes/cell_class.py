"""MS101: subclasses of nn.Module define ``construct``, not ``forward``.

The base class itself is renamed by the table entry ``torch.nn.Module -> mindspore.nn.Cell``;
this pass finds the subclasses (any import spelling, subclasses of torch's layer
classes such as ``nn.Sequential`` or ``nn.Conv2d``, and local subclasses of them)
and renames ``forward`` and explicit ``.forward(`` calls.
"""
from __future__ import annotations

import sys

import libcst as cst

from transpile.passes import Example, Pass

from ..cell_names import MODULE_BASES, is_module_class  # noqa: F401


def _assigns_construct(body: cst.IndentedBlock) -> bool:
    """Whether a class body already binds ``construct`` by assignment (``construct = forward``,
    written by an earlier run): adding the alias again would double it."""
    for stmt in body.body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == "construct" for t in small.targets):
                return True
    return False


class CellClass(Pass):
    id = "MS101"
    name = "cell-class"
    summary = "nn.Module subclasses become nn.Cell; forward becomes construct."
    examples = (
        Example(
            "from torch import nn as tnn\nclass Net(tnn.Module):\n    def forward(self, x):\n        return x\n",
            "from mindspore import nn as tnn\nclass Net(tnn.Cell):\n    def construct(self, x):\n        return x\n",
        ),
        Example(
            "import torch.nn as nn\nclass A(nn.Module):\n    pass\nclass B(A):\n    def forward(self, x):\n        return super().forward(x)\n",
            "import mindspore.nn as nn\nclass A(nn.Cell):\n    pass\nclass B(A):\n    def construct(self, x):\n        return super().construct(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cell_classes: set[str] = set()
        self._scopes: list[str] = []  # "cell", "class" or "def", innermost last

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_cell = any(self._is_cell_base(arg.value) for arg in node.bases)
        if is_cell:
            self.cell_classes.add(node.name.value)
        self._scopes.append("cell" if is_cell else "class")

    def _foreign_base(self, expr) -> bool:
        """A base class imported from another package or module of the tree (not torch,
        not the standard library): whether it is a Module is not known in this file."""
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and head.value in self.ctx.imports.relative:
            return True  # from .blocks import Block
        qual = self.ctx.imports.qualify(expr)
        if qual is None or "." not in qual:
            return False
        root = qual.split(".")[0]
        return root not in sys.stdlib_module_names and root not in ("torch", "mindspore", "typing_extensions")

    def _is_cell_base(self, expr) -> bool:
        if isinstance(expr, cst.Name) and expr.value in self.cell_classes:
            return True
        return is_module_class(self.ctx.imports.qualify(expr))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        """A class defining ``forward`` whose base is imported from elsewhere in the tree
        (MONAI's ``VarAutoEncoder(AutoEncoder)``) may be a Module: the converted base then
        runs its own ``construct``, which the subclass's ``forward`` overrides in torch.
        ``construct = forward`` keeps ``forward`` for the callers and gives a Cell's
        ``__call__`` the subclass's code; on a class that is not a Cell it is unused."""
        kind = self._scopes.pop()
        body = updated.body
        if kind == "cell" or not isinstance(body, cst.IndentedBlock):
            return updated
        if not any(self._foreign_base(arg.value) for arg in original.bases if arg.keyword is None):
            return updated
        names = [s.name.value for s in body.body if isinstance(s, cst.FunctionDef)]
        if "forward" not in names or "construct" in names or _assigns_construct(body):
            return updated
        at = max(i for i, s in enumerate(body.body) if isinstance(s, cst.FunctionDef) and s.name.value == "forward")
        alias = cst.parse_statement("construct = forward  # a Cell's __call__ runs construct (transpile MS101)\n")
        alias = alias.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        self.ctx.stats.converted += 1
        return updated.with_changes(body=body.with_changes(body=[*body.body[:at + 1], alias, *body.body[at + 1:]]))

    def visit_FunctionDef(self, node) -> None:
        self._scopes.append("def")

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._scopes.pop()
        if original.name.value == "forward" and self._scopes and self._scopes[-1] == "cell":
            self.ctx.stats.converted += 1
            return updated.with_changes(name=cst.Name("construct"))
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.forward``, ``super().forward(x)``, ``self.block.forward(x)``."""
        if original.attr.value != "forward" or not self.cell_classes:
            return updated
        receiver = original.value
        if isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings:
            return updated  # some_module.forward: not a cell
        return updated.with_changes(attr=cst.Name("construct"))
