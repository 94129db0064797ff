"""MS102: plain Python lists of layers held by a Cell become ``nn.CellList``; a
``ModuleDict`` holding containers becomes a plain Cell holding them.

A bare list hides its cells from MindSpore: their parameters are not registered
(seed 004). Covers list literals, comprehensions and lists filled by ``append`` in
``__init__``. ModuleList/Sequential/ModuleDict are renamed by the tables. A list whose
items ``__init__`` registers one by one (``for i, c in enumerate(self.convs):
self.add_module("conv_%d" % i, c)``, also ``register_module`` and ``setattr(self, ...)``)
stays a list: torch names their parameters by those names (``conv_0.weight``), and so does
MindSpore, for a plain list; a CellList would name them first (``convs.0.weight``).

MindSpore's CellDict refuses a CellList, SequentialCell or CellDict as a value. A ModuleDict
that ``__init__`` fills by key with containers (``self.resample[k] = Block()``, ``Block`` a
Sequential of the file, or torch's) is an emitted CellDict subclass that takes them. So
``self.transformer = nn.ModuleDict(dict(h=nn.ModuleList([...]), ln_f=...))`` (GPT-style
models) becomes a plain Cell with each child set as an attribute under its key, then
assigned: ``self.transformer.h`` reads the same (indexing by key does not), and the
parameters are named by their paths (transformer.h.0.qkv.weight).

torch's ModuleList holds None for an absent optional layer (``nn.ModuleList([pre_norm,
post_norm])`` with ``pre_norm = norm() if pre else None``); CellList refuses None. Where
an element or an appended value may be None (the literal, or a name the function binds
to None or to ``x if c else None``), the list is an emitted CellList subclass in which a
cell without parameters stands for None and reads back as None.
"""
from __future__ import annotations

import builtins
import sys

import libcst as cst

from transpile.engine.passes import Example, Pass
from transpile.engine.walk import iter_nodes

from ..cell_names import MODULE_DICT, MODULE_LIST, SEQUENTIAL, is_module_class, is_target_cell, tree_module_class
from ..runtime.registry import runtime_helper
from ..syntax import code
from ..table_calls import tables

CELL_LIST = "mindspore.nn.CellList"
# Roots whose classes are known: torch's layers are Modules, nothing else there or in
# the standard library is.
_CLASSLESS_ROOTS = frozenset({"torch", "mindspore", "builtins"}) | frozenset(sys.stdlib_module_names)

# containers MindSpore's CellDict refuses as values (torch's, and MindSpore's own in code
# converted already: a class of the file converted by hand derives from SequentialCell)
CONTAINERS = MODULE_LIST | MODULE_DICT | SEQUENTIAL | {
    "mindspore.nn.CellList", "mindspore.nn.CellDict", "mindspore.nn.SequentialCell"}


class CellContainers(Pass):
    id = "MS102"
    name = "cell-containers"
    reads = frozenset({"assignments_and_calls", "nodes", "target_cells", "type_index"})
    summary = "Lists of layers held as attributes become nn.CellList."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = [nn.ReLU() for _ in range(3)]\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.CellList([nn.ReLU() for _ in range(3)])\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._local_classes: set[str] = set()  # classes of the file that may be Modules
        self._appended: list[set[str]] = []  # per __init__: attributes filled by append
        self._maybe_none: list[set[str]] = []  # per function: names that may hold None
        self._none_appended: list[set[str]] = []  # per function: attributes appended a maybe-None
        self._filled_with_containers: list[set[str]] = []  # per function: self.X given a container by key
        self._registered_items: list[set[str]] = []  # per function: self.X whose items __init__ registers by name

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(self._base_may_be_module(b.value) for b in node.bases if b.keyword is None):
            self._local_classes.add(node.name.value)

    def _is_container_class(self, cls: cst.BaseExpression) -> bool:
        """A container (torch's or MindSpore's), or a class of the file or of the tree
        deriving from one (the type index's bases)."""
        if self.ctx.imports.qualify(cls) in CONTAINERS:
            return True
        if type(cls) is not cst.Name:
            return False
        index = self.facts.type_index()
        return _derives_from_container(f"{index.module}.{cls.value}", index.classes, set())

    def _base_may_be_module(self, base: cst.BaseExpression) -> bool:
        """False only for a base known not to be a Module: a class of this file or of the
        tree that is none (a Dataset: torchvision's LSUN appends LSUNClass datasets), a
        builtin, or a class of torch or the standard library other than a layer."""
        if isinstance(base, cst.Name) and base.value in self._local_classes | self.facts.target_cells:
            return True
        in_tree = tree_module_class(self.ctx, base)
        if in_tree is not None:
            return in_tree
        qual = self.ctx.imports.qualify(base)
        if qual is None:
            unbound = isinstance(base, cst.Name) and base.value not in self.ctx.imports.relative
            return not (unbound and hasattr(builtins, base.value))  # object, dict, Exception
        return is_module_class(qual) or is_target_cell(qual) or qual.split(".")[0] not in _CLASSLESS_ROOTS

    def _is_layer(self, expr) -> bool:
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in self._local_classes | self.facts.target_cells:
                return True
            qual = self.ctx.imports.qualify(expr.func)
            if qual is None:
                return False
            entry = self.tables.lookup(qual)
            return qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper() and (
                entry is None or entry.kind == "class"
            )
        return False

    def _is_layer_list(self, expr) -> bool:
        if isinstance(expr, cst.List):
            return bool(expr.elements) and all(self._is_layer(e.value) for e in expr.elements)
        if isinstance(expr, cst.ListComp):
            return self._is_layer(expr.elt)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        appended: set[str] = set()
        events = self.facts.assignments_and_calls(node)
        maybe_none = {t.target.value for n in events if type(n) is cst.Assign and _may_be_none(n.value, set())
                      for t in n.targets if isinstance(t.target, cst.Name)}
        self._maybe_none.append(maybe_none)
        self._none_appended.append({found[0] for n in events if type(n) is cst.Call
                                    and (found := _append_call(n)) is not None and _may_be_none(found[1], maybe_none)})
        self._filled_with_containers.append({
            t.target.value.attr.value for n in events if type(n) is cst.Assign and isinstance(n.value, cst.Call)
            and self._is_container_class(n.value.func)
            for t in n.targets if isinstance(t.target, cst.Subscript) and _is_self_attr(t.target.value)})
        self._registered_items.append(
            _registered_one_by_one(self.facts.nodes(node, (cst.For,))) if node.name.value == "__init__" else set())
        if node.name.value == "__init__":
            plain = {attr for n in events if type(n) is cst.Assign for attr in _plain_list_targets(n)}
            for n in events:
                found = _append_call(n) if type(n) is cst.Call else None
                if found is not None and self._is_layer(found[1]) and found[0] in plain - self._registered_items[-1]:
                    appended.add(found[0])
        self._appended.append(appended)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        """``self.X = []`` filled by append: wrap it once the appends are done.

        A CellList created empty and then appended to names its children ``0.weight``
        rather than ``X.0.weight`` (MindSpore 2.10), so the list is built first and
        wrapped after the last top-level statement that appends to it.
        """
        appended = self._appended.pop()
        self._maybe_none.pop()
        self._none_appended.pop()
        self._filled_with_containers.pop()
        self._registered_items.pop()
        if not appended or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        for attr in sorted(appended):
            last = max((i for i, stmt in enumerate(body) if _appends_to(stmt, attr)), default=None)
            if last is None or any(_assigns_self_attr(stmt, attr) for stmt in body[last + 1:]):
                continue  # assigned again after the appends (the CellList an earlier run wrote)
            wrap = cst.parse_statement(f"self.{attr} = {code(self.ctx.reference(CELL_LIST))}(self.{attr})\n")
            body.insert(last + 1, wrap)
            self.ctx.count_converted()
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        """``T = nn.ModuleDict(dict(h=nn.ModuleList(...), ...))`` -> a plain Cell filled by key."""
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
            return updated
        assign, new = original.body[0], updated.body[0] if len(updated.body) == 1 else None
        if len(assign.targets) != 1 or not isinstance(new, cst.Assign) or not isinstance(new.value, cst.Call):
            return updated
        target = assign.targets[0].target
        if not (isinstance(target, cst.Name) or _is_self_attr(target)) or not isinstance(assign.value, cst.Call):
            return updated
        if self.ctx.imports.qualify(assign.value.func) not in MODULE_DICT or len(assign.value.args) != 1:
            return updated
        values = _dict_values(assign.value.args[0].value)
        if not values or not any(isinstance(v, cst.Call) and self.ctx.imports.qualify(v.func) in CONTAINERS
                                 for v in values):
            return updated
        # filled before it is assigned: assigning a Cell prefixes its parameters' names with
        # the attribute (transformer.h.0.qkv.weight), children set as attributes likewise
        stem = "_" + code(target).rsplit(".", 1)[-1]
        holder, children = stem + "_cells", stem + "_children"
        cell = code(self.ctx.reference("mindspore.nn.Cell"))
        self.ctx.count_converted()
        return cst.FlattenSentinel([
            updated.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(children))],
                                                  value=new.value.args[0].value)]),
            cst.parse_statement(f"{holder} = {cell}()\n"),
            cst.parse_statement(f"for _key, _child in {children}.items():\n    setattr({holder}, _key, _child)\n"),
            updated.with_changes(body=[new.with_changes(value=cst.Name(holder))], leading_lines=()),
        ])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if self._holds_none(original) and isinstance(updated.value, cst.Call):
            self.ctx.count_converted()
            return updated.with_changes(value=updated.value.with_changes(func=runtime_helper(self.ctx, "_CellListWithNone")))
        if len(original.targets) != 1 or not _is_self_attr(original.targets[0].target):
            return updated
        value = original.value
        if (self._filled_with_containers and original.targets[0].target.attr.value in self._filled_with_containers[-1]
                and isinstance(value, cst.Call) and self.ctx.imports.qualify(value.func) in MODULE_DICT
                and isinstance(updated.value, cst.Call)):
            # self.resample = nn.ModuleDict(); self.resample[k] = Block() (a Sequential)
            self.ctx.count_converted()
            return updated.with_changes(value=updated.value.with_changes(
                func=runtime_helper(self.ctx, "_CellDictOfContainers")))
        if self._registered_items and original.targets[0].target.attr.value in self._registered_items[-1]:
            return updated  # each item registered under its own name below: a plain list, as in torch
        if self._is_layer_list(value):
            wrapped = cst.Call(func=self.ctx.reference(CELL_LIST), args=[cst.Arg(updated.value)])
        else:
            return updated
        self.ctx.count_converted()
        return updated.with_changes(value=wrapped)


    def _holds_none(self, assign: cst.Assign) -> bool:
        """``x = nn.ModuleList([...])`` with an element that may be None, or appended one
        later in the function."""
        value = assign.value
        if not (self._maybe_none and isinstance(value, cst.Call) and self.ctx.imports.qualify(value.func) in MODULE_LIST):
            return False
        names = self._maybe_none[-1]
        items = value.args[0].value if value.args and not value.args[0].keyword else None
        if isinstance(items, (cst.List, cst.Tuple)) and any(
                isinstance(e, cst.Element) and _may_be_none(e.value, names) for e in items.elements):
            return True
        return any(_is_self_attr(t.target) and t.target.attr.value in self._none_appended[-1] for t in assign.targets)


def _may_be_none(expr, names: set[str]) -> bool:
    """``None``, ``x if c else None`` (either branch), or a name bound to one of them."""
    if isinstance(expr, cst.Name):
        return expr.value == "None" or expr.value in names
    if isinstance(expr, cst.IfExp):
        return _may_be_none(expr.body, names) or _may_be_none(expr.orelse, names)
    return False


def _dict_values(expr) -> list | None:
    """The values of ``{...}`` or ``dict(k=v, ...)``; None for any other expression."""
    if isinstance(expr, cst.Dict) and all(isinstance(e, cst.DictElement) for e in expr.elements):
        return [e.value for e in expr.elements]
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict"
            and expr.args and all(a.keyword is not None for a in expr.args)):
        return [a.value for a in expr.args]
    return None


def _is_self_attr(expr) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def _appends_to(stmt, attr: str) -> bool:
    """The statement (being rewritten) appends to ``self.<attr>``."""
    return any(type(n) is cst.Call and (found := _append_call(n)) is not None and found[0] == attr
               for n in iter_nodes(stmt))


def _assigns_self_attr(stmt, attr: str) -> bool:
    """The statement line assigns ``self.<attr>``."""
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Assign) and any(_is_self_attr(t.target) and t.target.attr.value == attr
                                              for t in small.targets)
        for small in stmt.body)


REGISTERING_METHODS = frozenset({"add_module", "register_module"})
# setattr as written, and as MS218 writes it in converted code (converted again, a list it
# kept plain stays plain)
SETATTR_SPELLINGS = frozenset({"setattr", "_torch_setattr"})


def _registered_one_by_one(loops) -> set[str]:
    """Attributes ``self.X`` whose items a loop registers under names of their own:
    ``for c in self.X:`` or ``for i, c in enumerate(self.X):`` around
    ``self.add_module(name, c)``, ``self.register_module(name, c)`` or ``setattr(self, name, c)``."""
    found = set()
    for loop in loops:
        items, item = loop.iter, loop.target
        if (type(items) is cst.Call and type(items.func) is cst.Name and items.func.value == "enumerate"
                and len(items.args) == 1 and type(item) is cst.Tuple and len(item.elements) == 2):
            items, item = items.args[0].value, item.elements[1].value
        if not (_is_self_attr(items) and type(item) is cst.Name):
            continue
        if any(type(n) is cst.Call and _registers(n, item.value) for n in iter_nodes(loop.body)):
            found.add(items.attr.value)
    return found


def _registers(call: cst.Call, name: str) -> bool:
    """``self.add_module(key, name)`` / ``self.register_module(key, name)`` / ``setattr(self, key, name)``
    (or ``_torch_setattr(self, key, name)``)."""
    f, args = call.func, call.args
    if type(f) is cst.Name and f.value in SETATTR_SPELLINGS and args and type(args[0].value) is cst.Name \
            and args[0].value.value == "self":
        args = args[1:]
    elif not (type(f) is cst.Attribute and f.attr.value in REGISTERING_METHODS and _is_self_attr(f)):
        return False
    return len(args) == 2 and type(args[1].value) is cst.Name and args[1].value.value == name


def _plain_list_targets(assign: cst.Assign) -> list[str]:
    """``self.X = []`` / ``self.X = list()``: lists that need wrapping once filled
    (``self.X = nn.ModuleList()`` is a CellList already)."""
    value = assign.value
    plain = isinstance(value, (cst.List, cst.ListComp)) or (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list")
    return [t.target.attr.value for t in assign.targets if plain and _is_self_attr(t.target)]


def _append_call(call: cst.Call):
    """(attribute, appended value) of ``self.X.append(value)``, else None."""
    f = call.func
    if isinstance(f, cst.Attribute) and f.attr.value == "append" and _is_self_attr(f.value) and len(call.args) == 1:
        return f.value.attr.value, call.args[0].value
    return None


def _derives_from_container(qualified: str, classes, seen: set[str]) -> bool:
    info = classes.get(qualified)
    if info is None or qualified in seen:
        return False
    seen.add(qualified)
    return any(base in CONTAINERS or _derives_from_container(base, classes, seen) for base in info.bases)
