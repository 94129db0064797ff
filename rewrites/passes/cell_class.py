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
from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..cell_names import (CELL_API_NAMES, CELL_CALL_NAMES, CELL_OVERRIDDEN_NAMES, MODULE_BASES,  # noqa: F401
                          cell_api_rename, is_module_class, is_target_cell, outside_module_bases, tree_module_class)
from ..analysis.layer_types import index_place, shape_of
from ..syntax import code
from ..target_code import torch_shaped
from ..outside_packages import builds_on_torch, why
from ..runtime.registry import runtime_helper


# builtins that take an attribute's name as a string
NAME_LOOKUPS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def _assigns_construct(body: cst.IndentedBlock) -> bool:
    """Whether a class body already binds ``construct`` by assignment (``construct = forward``,
    written by an earlier run): adding the alias again would double it."""
    for stmt in body.body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == "construct" for t in small.targets):
                return True
    return False


def _takes_a_mode(function: cst.FunctionDef) -> bool:
    """``def train(self, mode=True)`` as torch's Module.train is called: self and at most
    one more parameter, which has a default."""
    params = function.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.posonly_params:
        return False
    rest = params.params[1:]
    return bool(params.params) and len(rest) <= 1 and all(p.default is not None for p in rest)


def _with_train_alias(body: cst.IndentedBlock) -> cst.IndentedBlock:
    """``train = set_train`` after the renamed override: code that still calls it by torch's
    name (a receiver not known to be a Module keeps ``.train()``) runs it too."""
    at = max(i for i, s in enumerate(body.body) if isinstance(s, cst.FunctionDef) and s.name.value == "set_train")
    alias = cst.parse_statement("train = set_train  # torch's name, for callers left as they were (transpile MS101)\n")
    alias = alias.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    return body.with_changes(body=[*body.body[:at + 1], alias, *body.body[at + 1:]])


def _is_super(node: cst.BaseExpression) -> bool:
    """``super()`` or ``super(Cls, self)``."""
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "super"


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
    reads = frozenset({"layer_types", "target_cells"})
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
        self._outside_calls: set[int] = set()  # ids of the calls of those packages warned about
        self._optional_imports: set[int] = set()  # ids of imports tried for an ImportError
        self._renames_cell_api: list[bool] = []  # per open class: a torch Module subclass
        self._train_overrides: list[cst.ClassDef] = []  # open classes whose train(mode) became set_train

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
        # a torch Module's own attributes and methods named as Cell's API are renamed in
        # its code (a class written on a MindSpore Cell means Cell's)
        self._renames_cell_api.append(any(self._is_cell_base(arg.value) for arg in node.bases))

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
        self._renames_cell_api.pop()
        updated = self._cell_for_outside_bases(updated)
        body = updated.body
        if self._train_overrides and self._train_overrides[-1] is original:
            self._train_overrides.pop()
            # innermost decorator: it wraps the class as defined (a parent's set_train runs the override)
            runs_from_parents = cst.Decorator(decorator=runtime_helper(self.ctx, "_torch_train_override"))
            return updated.with_changes(body=_with_train_alias(body), decorators=[*updated.decorators, runs_from_parents])
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

    def _cell_for_outside_bases(self, updated: cst.ClassDef) -> cst.ClassDef:
        """``class Model(L.LightningModule)``: a Module base of a package built on torch,
        which stays torch's, becomes the run-time Cell ``passes/module_bases.toml`` names for
        it (the class is a Module: its forward became construct)."""
        bases, replaced = [], False
        for arg in updated.bases:
            helper = None if arg.keyword is not None else outside_module_bases().get(
                self.ctx.imports.qualify(arg.value) or "")
            if helper is None:
                bases.append(arg)
                continue
            self.ctx.count_converted()
            bases.append(arg.with_changes(value=runtime_helper(self.ctx, helper)))
            replaced = True
        return updated.with_changes(bases=bases) if replaced else updated

    def visit_FunctionDef(self, node) -> None:
        self._scopes.append("def")

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._scopes.pop()
        if original.name.value == "forward" and self._scopes and self._scopes[-1] == "cell":
            self.ctx.count_converted()
            return updated.with_changes(name=cst.Name("construct"))
        if not (self._scopes and self._scopes[-1] == "cell" and self._renames_cell_api[-1]):
            return updated
        if original.name.value in CELL_API_NAMES | CELL_CALL_NAMES or original.name.value in CELL_OVERRIDDEN_NAMES:
            self.ctx.count_converted()
            return updated.with_changes(name=cst.Name(cell_api_rename(original.name.value)))
        if original.name.value == "train" and _takes_a_mode(original):
            # torch's train(mode) and eval() run an override (loralib merges its weights
            # there); their conversions call set_train, so the override is named so
            self.ctx.count_converted()
            self.ctx.report(original, self.id, "train(mode) override renamed set_train: set_train(mode) on this "
                            "Cell or a parent Cell runs it (_torch_train_override: MindSpore sets its children's "
                            "mode without calling their set_train)", Severity.INFO)
            if not self._train_overrides or self._train_overrides[-1] is not self.ctx.current_class:
                self._train_overrides.append(self.ctx.current_class)
            return updated.with_changes(name=cst.Name("set_train"))
        return updated

    def _cell_api_name(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.cells`` or ``super().cells()`` in a method of a torch Module subclass: the
        user's attribute or method, renamed as its definition is (``cells_``); on a Cell it
        would be Cell's own (``cells()``, ``phase``), which building and compiling use. So
        is the attribute read on an instance the tree's type index knows of such a class."""
        receiver = original.value
        on_self = type(receiver) is cst.Name and receiver.value == "self"
        if on_self or _is_super(receiver):
            if not self._renames_cell_api or not self._renames_cell_api[-1]:
                return updated
        else:  # rnn.cells with rnn a Module of the tree, as the type index says
            types = self.facts.layer_types()
            value = types.value(shape_of(receiver, *index_place(self.ctx.open_scopes, types.index)))
            if not types.tree_module(value):
                head = receiver
                while type(head) is cst.Attribute:
                    head = head.value
                if (types.known(value) or (type(head) is cst.Name and head.value in self.ctx.imports.bindings)
                        or not types.module_defining(original.attr.value)):
                    return updated  # known not to be such a Module, or a module's name (config.phase)
                self.ctx.count_unconverted()
                self.ctx.report(original, self.id, f"{code(original)}: a Module of the tree defines "
                                f"{original.attr.value!r}, renamed {cell_api_rename(original.attr.value)!r} (a Cell's "
                                f"own {original.attr.value} would hide it); whether {code(receiver)} is one is not "
                                "known here: left as it is", Severity.WARNING)
                return updated
        self.ctx.count_converted()
        return updated.with_changes(attr=cst.Name(cell_api_rename(original.attr.value)))

    def _overridden_cell_name(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.compile(...)`` / ``model.compile(...)`` where the tree's Module class of the
        receiver (or a base of it in the tree) defines ``compile``: that method, renamed
        ``compile_`` with its definition; torch's own ``Module.compile`` is left as it is."""
        types = self.facts.layer_types()
        receiver = original.value
        scope, owner, locals_, module = index_place(self.ctx.open_scopes, types.index)
        if _is_super(receiver) or (type(receiver) is cst.Name and receiver.value == "self"):
            known = owner is not None and self._renames_cell_api and self._renames_cell_api[-1] and (
                types.defines(owner, original.attr.value))
        else:
            value = types.value(shape_of(receiver, scope, owner, locals_, module))
            known = types.tree_module(value) and all(
                types.defines(v.cls, original.attr.value) for v in getattr(value, "values", (value,)))
        if not known:
            return updated
        self.ctx.count_converted()
        return updated.with_changes(attr=cst.Name(cell_api_rename(original.attr.value)))

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        """``forward`` named in a Cell's class body (``__call__ = forward``, ``forward =
        wrap(forward)``) is the method renamed ``construct``: left as it was, it would be
        a NameError when the class is built."""
        if original.value == "forward" and self._scopes and self._scopes[-1] == "cell":
            return updated.with_changes(value="construct")
        return updated

    def _module_class_parameter(self, receiver: cst.BaseExpression) -> bool:
        """``receiver`` is a parameter of an enclosing function annotated as a Module class
        (``experts_class: type[nn.Module]``, ``type[nn.Module] | None``): its ``forward`` read
        or written by name is the method renamed ``construct`` (a class decorator wrapping it)."""
        if type(receiver) is not cst.Name:
            return False
        for scope in reversed(self.ctx.open_scopes):
            if type(scope) is not cst.FunctionDef:
                continue
            params = scope.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.name.value == receiver.value:
                    return param.annotation is not None and self._module_type(param.annotation.annotation)
        return False

    def _module_type(self, annotation: cst.BaseExpression) -> bool:
        """``type[M]`` (``typing.Type[M]``), alone or in a union with None, for a Module class M."""
        if type(annotation) is cst.BinaryOperation and type(annotation.operator) is cst.BitOr:
            return any(self._module_type(side) for side in (annotation.left, annotation.right))
        if type(annotation) is not cst.Subscript or len(annotation.slice) != 1:
            return False
        outer = annotation.value
        outer_name = outer.value if type(outer) is cst.Name else dotted_name(outer)
        inner = annotation.slice[0].slice
        if type(inner) is not cst.Index:
            return False
        if outer_name in ("Optional", "typing.Optional"):
            return self._module_type(inner.value)
        if outer_name not in ("type", "Type", "typing.Type"):
            return False
        qual = self.ctx.imports.qualify(inner.value)
        return is_module_class(qual) or bool(tree_module_class(self.ctx, inner.value)) or (
            type(inner.value) is cst.Name and inner.value.value in self.cell_classes)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.forward``, ``super().forward(x)``, ``self.block.forward(x)``; ``self.cells``
        (a name a Cell defines) in a Module's code."""
        if original.attr.value in CELL_API_NAMES or original.attr.value in CELL_CALL_NAMES:
            return self._cell_api_name(original, updated)
        if original.attr.value in CELL_OVERRIDDEN_NAMES:
            return self._overridden_cell_name(original, updated)
        if original.attr.value == "train" and _is_super(original.value) and self._renames_cell_api \
                and self._renames_cell_api[-1]:
            self.ctx.count_converted()  # super().train(mode): the base's set_train
            return updated.with_changes(attr=cst.Name("set_train"))
        if original.attr.value != "forward":
            return updated
        if not self._forward_is_construct(original.value):
            return updated
        return updated.with_changes(attr=cst.Name("construct"))

    def _forward_is_construct(self, receiver: cst.BaseExpression) -> bool:
        """Whether ``receiver.forward`` names the method renamed ``construct``."""
        if tree_module_class(self.ctx, receiver):  # Mlp.forward(self, x), Mlp from the tree
            return True
        if self._module_class_parameter(receiver):  # experts_class.forward, experts_class: type[nn.Module]
            return True
        if not self.cell_classes:
            return False
        # some_module.forward: not a cell
        return not (isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings)

    def visit_Call(self, node: cst.Call) -> None:
        """A call of a package built on torch that this file imports from outside the tree
        (``torchinfo.summary(trunk, input_size=...)``): that torch code gets the converted
        Cells and tensors, so the call gets a warning of its own (the import's counts the
        package once)."""
        qual = self.ctx.imports.qualify(node.func) or ""
        root = qual.split(".")[0]
        if root in self._outside_reported and id(node) not in self._outside_calls:
            self._outside_calls.add(id(node))
            self.ctx.report(node, self.id, f"{qual}(...) runs {root}'s torch code, not converted: what it is "
                            f"handed here is MindSpore's (convert {root} with the tree, or replace the call)")

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """``getattr(cls, "forward")``, ``setattr(cls, "forward", f)``, ``hasattr``: the name
        given as a string, on a receiver whose ``.forward`` is ``construct``."""
        func = original.func
        if type(func) is not cst.Name or func.value not in NAME_LOOKUPS or len(original.args) < 2 \
                or func.value in self.ctx.imports.bindings or any(a.keyword or a.star for a in original.args[:2]):
            return updated
        name = original.args[1].value
        if type(name) is not cst.SimpleString or name.evaluated_value != "forward" \
                or not self._forward_is_construct(original.args[0].value):
            return updated
        args = list(updated.args)
        args[1] = args[1].with_changes(value=name.with_changes(value=name.value.replace("forward", "construct")))
        return updated.with_changes(args=args)
