"""MS201: calls and references to framework symbols, converted as the tables say."""
from __future__ import annotations

import libcst as cst

from transpile.diagnostics import Severity
from transpile.passes import Example, Pass
from transpile.walk import read

from ..table_calls import convert_call, tables
from ..syntax import Unconvertible, code
from ..tensor_inference import named_params, target_names
from .layer_values import factory_possible
from .scaffolding import scaffolding_names


class ApiCalls(Pass):
    id = "MS201"
    name = "api-calls"
    summary = "Rewrite calls and references to torch APIs using the mapping tables."
    examples = (
        Example(
            "import torch.nn as nn\nfc = nn.Linear(4, 2, bias=False)\n",
            "import mindspore.nn as nn\nfc = nn.Dense(in_channels=4, out_channels=2, has_bias=False)\n",
        ),
        Example(
            "import torch\ny = torch.cat([a, b], 1)\n",
            "from mindspore import ops\ny = ops.cat(tensors=[a, b], axis=1)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self.roots = {m.split(".")[0] for m in self.tables.modules}
        self._call_funcs: set[int] = set()  # ids of nodes handled elsewhere or not references
        self._scaffolding = scaffolding_names()  # MS206 resolves these
        self._list_names: list[frozenset[str]] = []  # ctx.list_names of the enclosing functions

    def _source_qualname(self, node) -> str | None:
        qual = self.ctx.imports.qualify(node)
        if qual is None or qual.split(".")[0] not in self.roots or qual in self._scaffolding:
            return None
        return qual

    # imports are the import pass's business; also keep the table current for nested ones
    def visit_Import(self, node) -> bool:
        self.ctx.imports.add(node)
        return False

    def visit_ImportFrom(self, node) -> bool:
        self.ctx.imports.add(node)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self._source_qualname(node.func) is not None:
            self._call_funcs.add(id(node.func))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qual = self._source_qualname(original.func)
        if qual is None:
            return updated
        entry = self.tables.lookup(qual)
        if entry is None and qual in self.tables.modules:
            return updated
        if any(a.star for a in updated.args) and factory_possible(entry):
            return updated  # nn.Conv2d(cin, cout, **kwargs): MS205 converts the arguments at run time
        try:
            if entry is None:
                raise Unconvertible("no MindSpore mapping yet")
            self.ctx.at = original
            try:
                result = convert_call(self.ctx, entry, updated, self.id)
            finally:
                self.ctx.at = None
        except Unconvertible as why:
            self.ctx.stats.unconverted += 1
            self.ctx.mark(original, self.id, f"{qual}: {why}")
            return updated.with_changes(func=self.ctx.keep_source(qual))
        self.ctx.stats.converted += 1
        if entry.note:
            self.ctx.report(original, self.id, f"{qual}: {entry.note}", Severity.INFO)
        return result

    # bare references: base classes, dtypes, annotations, layers passed as values.
    # Names that only look like references (x.Linear, f(bias=...), def nn()) are skipped.
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._call_funcs.add(id(node.attr))
        if self.ctx.imports.qualify(node) in self._scaffolding:
            return False  # MS206's: torch.jit.is_scripting is not the module torch.jit
        return self._source_qualname(node) is None

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._call_funcs.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self._call_funcs.add(id(node.name))

    def visit_Module(self, node: cst.Module) -> None:
        self.ctx.list_attributes = list_attributes_of(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._call_funcs.add(id(node.name))
        self._list_names.append(self.ctx.list_names)
        self.ctx.list_names = list_names_of(node)

    def leave_FunctionDef(self, original, updated):
        self.ctx.list_names = self._list_names.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._call_funcs.add(id(node.name))

    def leave_Attribute(self, original, updated):
        return self._reference(original, updated)

    def leave_Name(self, original, updated):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        if id(original) in self._call_funcs:
            return updated
        if isinstance(original, cst.Name) and isinstance(updated, cst.Name) and updated.value != original.value:
            return updated  # an earlier pass already rewrote it (MS205: a layer class as a value)
        qual = self._source_qualname(original)
        if qual is None or qual in self.tables.modules:
            return updated
        entry = self.tables.lookup(qual)
        if entry is None or entry.unsupported or not entry.target or entry.target.startswith("."):
            why = entry.unsupported if entry and entry.unsupported else "no MindSpore mapping yet"
            self.ctx.stats.unconverted += 1
            self.ctx.mark(original, self.id, f"{qual}: {why}")
            return self.ctx.keep_source(qual)
        if entry.kind in ("class", "function") and (entry.rename or entry.defaults or entry.set or entry.hook) \
                and not factory_possible(entry):  # MS205 makes the value take torch's arguments
            self.ctx.report(
                original, self.id,
                f"{qual} used as a value: renamed to {entry.target}, but its arguments are not converted where it is called",
                Severity.WARNING,
            )
        self.ctx.stats.converted += 1
        return self.ctx.reference(entry.target)


LIST_TYPES = frozenset({"list", "List", "MutableSequence"})


def is_list_annotation(annotation: cst.Annotation | None) -> bool:
    """``list``, ``List[int]``, ``typing.List[int]`` or ``list[int]``."""
    if annotation is None:
        return False
    ann = annotation.annotation
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    if isinstance(ann, cst.Attribute):
        ann = ann.attr
    return isinstance(ann, cst.Name) and ann.value in LIST_TYPES


def list_names_of(node: cst.FunctionDef) -> frozenset[str]:
    """Names that hold a list wherever the function uses them: parameters annotated as
    lists, and local names every binding of which is a list display or comprehension
    (``padding = [k // 2 for k in kernel]``)."""
    params = node.params
    names = {p.name.value for p in named_params(node) if is_list_annotation(p.annotation)}
    unannotated = {p.name.value for p in named_params(node) if p.name.value not in names}
    if params.star_arg is not None and isinstance(params.star_arg, cst.Param):
        unannotated.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        unannotated.add(params.star_kwarg.name.value)
    bindings = _LocalBindings()
    read(node.body, bindings)
    locals_ = {name for name in bindings.list_only if name not in bindings.other and name not in unannotated}
    return frozenset(names | locals_)


class _LocalBindings(cst.CSTVisitor):
    """Which names of one function body are bound to a list literal, and which otherwise."""

    def __init__(self):
        self.list_only: set[str] = set()
        self.other: set[str] = set()

    def visit_FunctionDef(self, node) -> bool:
        self.other.add(node.name.value)
        return False  # a nested function is its own scope

    def visit_ClassDef(self, node) -> bool:
        self.other.add(node.name.value)
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def _bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            is_list = isinstance(value, (cst.List, cst.ListComp))
            (self.list_only if is_list else self.other).add(target.value)
        else:  # unpacking: the names inside hold unknown values (a starred name always a list)
            for name in target_names(target):
                self.other.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, None)

    def visit_Global(self, node: cst.Global) -> None:
        self.other.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.other.update(n.name.value for n in node.names)

    def visit_Import(self, node) -> None:
        self.other.update(_imported_names(node))

    def visit_ImportFrom(self, node) -> None:
        self.other.update(_imported_names(node))


def _imported_names(node) -> list[str]:
    if isinstance(node.names, cst.ImportStar):
        return []
    out = []
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            out.append(alias.asname.name.value)
        else:
            n = alias.name
            while isinstance(n, cst.Attribute):
                n = n.value
            out.append(n.value)
    return out


def list_attributes_of(module: cst.Module) -> frozenset[str]:
    """Attribute names some class of the file declares as lists (dataclass fields and
    class-level annotations: ``stride_q: List[int]``)."""
    found = _ListFields()
    read(module, found)
    return frozenset(found.names)


class _ListFields(cst.CSTVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                            and is_list_annotation(small.annotation):
                        self.names.add(small.target.value)
