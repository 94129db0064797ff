"""MS101: subclasses of nn.Module define ``construct``, not ``forward``.

The base class itself is renamed by the table entry ``torch.nn.Module -> mindspore.nn.Cell``;
this pass finds the subclasses (any import spelling, subclasses of torch's layer
classes such as ``nn.Sequential`` or ``nn.Conv2d``, local subclasses of them, and
subclasses of Modules defined in other files of the converted tree, found through the
tree's class index: ``ctx.package``) and renames ``forward`` and explicit ``.forward(``
calls. In a file converted partly by hand, a subclass of a MindSpore Cell (``nn.Cell``
from mindspore, or a class of the file written on one) that still defines ``forward``
is one too: MindSpore would run the base's ``construct`` and never its ``forward``.

It also reports (MS902) each package built on torch that the file imports from outside
the converted tree (``rewrites/outside_packages.py``): nothing in the file is left to
convert, yet it cannot run until that package is converted too.
"""
from __future__ import annotations

import sys

import libcst as cst

from transpile.engine.import_table import dotted_name
from transpile.engine.package_index import OUTSIDE_CODE, outside_message
from transpile.engine.passes import Example, Pass

from ..cell_names import MODULE_BASES, is_module_class, is_target_cell, tree_module_class  # noqa: F401
from ..target_code import torch_shaped
from ..outside_packages import builds_on_torch, why


def _assigns_construct(body: cst.IndentedBlock) -> bool:
    """Whether a class body already binds ``construct`` by assignment (``construct = forward``,
    written by an earlier run): adding the alias again would double it."""
    for stmt in body.body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == "construct" for t in small.targets):
                return True
    return False


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    """``except:``, ``except ImportError:``, ``except (ImportError, AttributeError):``..."""
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any(dotted_name(k.value if isinstance(k, cst.Element) else k) in _IMPORT_ERRORS for k in kinds)


class CellClass(Pass):
    id = "MS101"
    name = "cell-class"
    reads = frozenset({"target_cells"})
    summary = "nn.Module subclasses become nn.Cell; forward becomes construct."
    other_codes = {
        OUTSIDE_CODE: "the file imports a package built on torch from outside the converted tree: it cannot "
                      "run until that package is converted too (one line per package for the whole run).",
    }
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
        self._outside_reported: set[str] = set()
        self._optional_imports: set[int] = set()  # ids of imports tried for an ImportError

    def visit_Try(self, node: cst.Try) -> None:
        """Imports tried for an ImportError (``try: from apex import amp``, and the fallback
        in the handler) are optional: the file runs without them, nothing is reported."""
        if not any(_catches_import_error(h) for h in node.handlers):
            return
        for block in (node.body, *(h.body for h in node.handlers)):
            for stmt in getattr(block, "body", ()):
                if isinstance(stmt, cst.SimpleStatementLine):
                    self._optional_imports.update(id(s) for s in stmt.body if isinstance(s, (cst.Import, cst.ImportFrom)))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._report_outside(node, dotted_name(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not node.relative and node.module is not None:
            self._report_outside(node, dotted_name(node.module))

    def _report_outside(self, node: cst.CSTNode, module: str | None) -> None:
        """Once per package and file: an import of a package built on torch from outside
        the tree (any package, for a file converted alone), counted as unconverted."""
        root = (module or "").split(".")[0]
        if not root or root in self._outside_reported or id(node) in self._optional_imports:
            return
        if not builds_on_torch(root):
            return
        if self.ctx.package is not None and root not in self.ctx.package.outside:
            return  # part of the converted tree
        self._outside_reported.add(root)
        self.ctx.count_unconverted()
        self.ctx.report(node, OUTSIDE_CODE, outside_message(root, why(root)))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # a MindSpore Cell's subclass is still torch's when it has forward and no construct
        # (a converted Function keeps a static forward beside its construct)
        is_cell = any(self._is_cell_base(arg.value) for arg in node.bases) or (
            torch_shaped(node) and any(self._is_target_cell_base(arg.value) for arg in node.bases))
        if is_cell:
            self.cell_classes.add(node.name.value)
        self._scopes.append("cell" if is_cell else "class")

    def _foreign_base(self, expr) -> bool:
        """A base class imported from another package or module of the tree (not torch,
        not the standard library): whether it is a Module is not known in this file."""
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if tree_module_class(self.ctx, expr) is not None:
            return False  # a class of the converted tree, known to be a Module or not
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
        return is_module_class(self.ctx.imports.qualify(expr)) or tree_module_class(self.ctx, expr, cells=False) is True

    def _is_target_cell_base(self, expr) -> bool:
        """A MindSpore Cell: MindSpore's, or the file's or the tree's written for MindSpore
        (kept apart from ``cell_classes``, whose growth as the file is read decides which
        ``.forward`` attributes are renamed, as on the first run)."""
        if isinstance(expr, cst.Name) and expr.value in self.facts.target_cells:
            return True
        return is_target_cell(self.ctx.imports.qualify(expr)) or tree_module_class(self.ctx, expr) is True

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
        self.ctx.count_converted()
        return updated.with_changes(body=body.with_changes(body=[*body.body[:at + 1], alias, *body.body[at + 1:]]))

    def visit_FunctionDef(self, node) -> None:
        self._scopes.append("def")

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._scopes.pop()
        if original.name.value == "forward" and self._scopes and self._scopes[-1] == "cell":
            self.ctx.count_converted()
            return updated.with_changes(name=cst.Name("construct"))
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        """``forward`` named in a Cell's class body (``__call__ = forward``, ``forward =
        wrap(forward)``) is the method renamed ``construct``: left as it was, it would be
        a NameError when the class is built."""
        if original.value == "forward" and self._scopes and self._scopes[-1] == "cell":
            return updated.with_changes(value="construct")
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.forward``, ``super().forward(x)``, ``self.block.forward(x)``."""
        if original.attr.value != "forward":
            return updated
        receiver = original.value
        if tree_module_class(self.ctx, receiver):  # Mlp.forward(self, x), Mlp from the tree
            return updated.with_changes(attr=cst.Name("construct"))
        if not self.cell_classes:
            return updated
        if isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings:
            return updated  # some_module.forward: not a cell
        return updated.with_changes(attr=cst.Name("construct"))
