"""MS307: ``lst.pop()`` in compiled code: out of a larger expression, and into an index and a slice.

GRAPH_MODE (MindSpore 2.10) does not compile a pop nested in an expression:
``ops.cat((x, h.pop()), axis=1)`` hands Concat the pair (list, item) ("Failed calling
Concat with tensors=Tuple[Tensor, Tuple[List[Tensor*3], Tensor]]"), the U-Net skip
connections of denoising-diffusion. Such a pop is taken out, in order, into a name
assigned just before the statement.

Nor does it compile ``y = h.pop()`` itself right: on a list whose items differ in shape
(a U-Net's skips, one per resolution) the process dies (SIGSEGV) or the run raises
"index 1 is out of bounds for dimension with size 1"; under a condition on a tensor it
returns another item than Python, without an error. ``y = h[-1]`` and ``h = h[: len(h) - 1]``
compile to what Python computes, so a pop of a list the function owns alone becomes
that::

    x = ops.cat((x, h.pop()), axis=1)   ->   h_popped = h[-1]
                                             h = h[: len(h) - 1]
                                             x = ops.cat((x, h_popped), axis=1)

Rebinding is a pop only where nothing else holds the list: a local list
(``facts.list_names``, parameters left out) read only as a method call's receiver
(``h.append(x)``), an indexed value (``h[i]``), ``len(h)`` or a returned value; any other
read (an alias ``g = h``, an argument, a loop over it, a closure) keeps ``h.pop()``.
Only pops without an argument, on names that hold a list in the function, from simple
statements, and never from where they may not run or may run more than once (the
branches of ``a if c else b``, ``and``/``or``, lambdas, comprehensions). Everything the
statement evaluates before the pop is free of it (names, attributes, other calls'
arguments) in the code this targets; a pop is the statement's first side effect there.
Applies in forward/construct and what it calls (compiled code).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import read

from ...analysis.compiled import compiled_statement
from ...syntax import lines_before
from ...tensor_inference import named_params


CONDITIONAL = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)


def _never(_scope) -> bool:
    return False


def _popped_list(call: cst.BaseExpression, lists) -> str | None:
    """The list ``call`` pops its last item from (``name.pop()``, no argument), if one of ``lists``."""
    if type(call) is not cst.Call or call.args:
        return None
    f = call.func
    if type(f) is cst.Attribute and f.attr.value == "pop" and type(f.value) is cst.Name and f.value.value in lists:
        return f.value.value
    return None


class _PopFinder(cst.CSTVisitor):
    """The ``name.pop()`` calls on the function's lists within ``value`` (not ``value``
    itself), outside the places where a pop may not run or may run more than once."""

    def __init__(self, value: cst.BaseExpression, lists) -> None:
        super().__init__()
        self.value, self.lists = value, lists
        self.pops: list[cst.Call] = []

    def visit_Call(self, call: cst.Call) -> None:
        f = call.func
        if (call is not self.value and isinstance(f, cst.Attribute) and f.attr.value == "pop"
                and isinstance(f.value, cst.Name) and f.value.value in self.lists):
            self.pops.append(call)


for _kind in CONDITIONAL:  # not entered
    setattr(_PopFinder, f"visit_{_kind.__name__}", lambda _self, _node: False)


class GraphListPop(Pass):
    id = "MS307"
    name = "graph-list-pop"
    reads = frozenset({"list_names", "names", "nodes"})
    summary = ("lst.pop() in construct -> lst[-1] and lst = lst[: len(lst) - 1] on a list the function owns alone, its own "
               "assignment when nested in an expression (GRAPH_MODE miscompiles both).")
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        hs = [x, x]\n        return torch.cat((x, hs.pop()), dim=1)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        hs = [x, x]\n        hs_popped = hs[-1]\n        hs = hs[: len(hs) - 1]\n"
            "        return ops.cat(tensors=(x, hs_popped), axis=1)\n",
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        hs = [x, x * 2]\n        y = hs.pop()\n        return y + hs[0]\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        hs = [x, x * 2]\n        y = hs[-1]\n        hs = hs[: len(hs) - 1]\n        return y + hs[0]\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._moved: dict[int, str] = {}  # id of an original pop call -> the name it is bound to
        self._pending: list[list[cst.BaseSmallStatement]] = []  # per statement: assignments to put before it
        self._whole: dict[int, str] = {}  # id of a statement line that is one pop -> the list popped
        self._owned: dict[int, frozenset[str]] = {}  # id of a function -> its lists nothing else holds

    def _owned_lists(self, fn: cst.FunctionDef, lists: frozenset[str]) -> frozenset[str]:
        """The local lists of ``fn`` whose every read leaves no other reference to them:
        rebinding such a name changes nothing anything else sees."""
        key = id(fn)
        if key not in self._owned:
            candidates = lists - {p.name.value for p in named_params(fn)}
            harmless: dict[str, int] = {}
            for node in self.facts.nodes(fn, (cst.Call, cst.Subscript, cst.Return), _never):
                kind = type(node)
                if kind is cst.Call:
                    f = node.func
                    if type(f) is cst.Attribute and type(f.value) is cst.Name:  # h.append(x), h.pop()
                        read_name = f.value.value
                    elif (type(f) is cst.Name and f.value == "len" and len(node.args) == 1
                          and type(node.args[0].value) is cst.Name and not node.args[0].star):
                        read_name = node.args[0].value.value
                    else:
                        continue
                elif kind is cst.Subscript:
                    if type(node.value) is not cst.Name:
                        continue
                    read_name = node.value.value
                elif type(node.value) is cst.Name:  # return h
                    read_name = node.value.value
                else:
                    continue
                if read_name in candidates:
                    harmless[read_name] = harmless.get(read_name, 0) + 1
            loads = self.facts.names.load_counts(fn)  # nested scopes included: a closure's read is not harmless
            self._owned[key] = frozenset(n for n in candidates if harmless.get(n, 0) == loads.get(n, 0))
        return self._owned[key]

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._pending.append([])
        found = compiled_statement(self.ctx, node)
        if found is None:
            return
        fn, stmt = found
        value = stmt.value
        lists = self.facts.list_names(fn)
        if not lists:
            return  # (most functions hold no list: the statement is not read)
        whole = _popped_list(value, lists)
        if whole is not None and (type(stmt) in (cst.Expr, cst.Return) or (
                type(stmt) is cst.Assign and len(stmt.targets) == 1 and type(stmt.targets[0].target) is cst.Name)):
            if whole in self._owned_lists(fn, lists):
                self._whole[id(node)] = whole
            return
        finder = _PopFinder(value, lists)
        read(value, finder)
        pops = finder.pops
        used: set[str] = set()
        for call in pops:
            base = f"{call.func.value.value}_popped"
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}{n}"
            used.add(name)
            self._moved[id(call)] = name

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self._moved.pop(id(original), None)
        if name is None:
            return updated
        listed = original.func.value.value
        fn = self.ctx.current_function
        if not original.args and listed in self._owned_lists(fn, self.facts.list_names(fn)):
            self._pending[-1].extend(_index_and_slice(cst.Name(name), listed))
            how = f"{name} = {listed}[-1] and {listed} = {listed}[: len({listed}) - 1] take the place of {listed}.pop()"
        else:
            self._pending[-1].append(cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=updated))
            how = f"{name} = {listed}.pop() is taken out of the expression"
        self.ctx.report(original, self.id, f"{how} (GRAPH_MODE miscompiles a list pop)", Severity.INFO)
        return cst.Name(name)

    def leave_SimpleStatementLine(self, original, updated):
        before = self._pending.pop()
        listed = self._whole.pop(id(original), None)
        if listed is not None and isinstance(updated, cst.SimpleStatementLine):
            stmt = updated.body[0]
            if type(stmt) is cst.Return:  # nothing runs after it: the item is all that is needed
                body = [stmt.with_changes(value=_last(listed))]
            else:
                body = _index_and_slice(stmt.targets[0].target if type(stmt) is cst.Assign else None, listed)
            self.ctx.report(original.body[0], self.id, f"{listed}.pop() is {listed}[-1] and {listed} = {listed}[: len({listed}) - 1] "
                            "(GRAPH_MODE miscompiles a list pop)", Severity.INFO)
            before = body[:-1]
            updated = updated.with_changes(body=[body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
        return lines_before(updated, before) if isinstance(updated, cst.SimpleStatementLine) else updated


def _last(listed: str) -> cst.Subscript:
    return cst.Subscript(value=cst.Name(listed), slice=[cst.SubscriptElement(cst.Index(
        cst.UnaryOperation(operator=cst.Minus(), expression=cst.Integer("1"))))])


def _index_and_slice(target: cst.BaseAssignTargetExpression | None, listed: str) -> list[cst.Assign]:
    """``target = listed[-1]`` (when the item is kept) and ``listed = listed[: len(listed) - 1]``
    (the bound from the length: a negative literal one would be MS306's to rewrite on a
    second run)."""
    bound = cst.BinaryOperation(left=cst.Call(func=cst.Name("len"), args=[cst.Arg(cst.Name(listed))]),
                                operator=cst.Subtract(), right=cst.Integer("1"))
    drop = cst.Assign(targets=[cst.AssignTarget(cst.Name(listed))], value=cst.Subscript(
        value=cst.Name(listed), slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=bound))]))
    if target is None:
        return [drop]
    return [cst.Assign(targets=[cst.AssignTarget(target)], value=_last(listed)), drop]
