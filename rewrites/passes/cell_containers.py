"""MS102: plain Python lists of layers held by a Cell become ``nn.CellList``.

A bare list hides its cells from MindSpore: their parameters are not registered
(seed 004). Covers list literals, comprehensions and lists filled by ``append`` in
``__init__``. ModuleList/Sequential/ModuleDict are renamed by the tables.
"""
from __future__ import annotations

import libcst as cst

from transpile.passes import Example, Pass
from transpile.walk import iter_nodes

from ..syntax import code
from ..table_calls import tables

CELL_LIST = "mindspore.nn.CellList"


class CellContainers(Pass):
    id = "MS102"
    name = "cell-containers"
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
        self._local_classes: set[str] = set()
        self._appended: list[set[str]] = []  # per __init__: attributes filled by append

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._local_classes.add(node.name.value)

    def _is_layer(self, expr) -> bool:
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in self._local_classes:
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
        if node.name.value == "__init__":
            events = self.facts.assignments_and_calls(node)
            plain = {attr for n in events if type(n) is cst.Assign for attr in _plain_list_targets(n)}
            for n in events:
                found = _append_call(n) if type(n) is cst.Call else None
                if found is not None and self._is_layer(found[1]) and found[0] in plain:
                    appended.add(found[0])
        self._appended.append(appended)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        """``self.X = []`` filled by append: wrap it once the appends are done.

        A CellList created empty and then appended to names its children ``0.weight``
        rather than ``X.0.weight`` (MindSpore 2.10), so the list is built first and
        wrapped after the last top-level statement that appends to it.
        """
        appended = self._appended.pop()
        if not appended or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        for attr in sorted(appended):
            last = max((i for i, stmt in enumerate(body) if _appends_to(stmt, attr)), default=None)
            if last is None:
                continue
            wrap = cst.parse_statement(f"self.{attr} = {code(self.ctx.reference(CELL_LIST))}(self.{attr})\n")
            body.insert(last + 1, wrap)
            self.ctx.stats.converted += 1
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) != 1 or not _is_self_attr(original.targets[0].target):
            return updated
        value = original.value
        if self._is_layer_list(value):
            wrapped = cst.Call(func=self.ctx.reference(CELL_LIST), args=[cst.Arg(updated.value)])
        else:
            return updated
        self.ctx.stats.converted += 1
        return updated.with_changes(value=wrapped)


def _is_self_attr(expr) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"



def _appends_to(stmt, attr: str) -> bool:
    """The statement (being rewritten) appends to ``self.<attr>``."""
    return any(type(n) is cst.Call and (found := _append_call(n)) is not None and found[0] == attr
               for n in iter_nodes(stmt))


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
