"""MS215: a param group's learning rate, ``optimizer.param_groups[i]["lr"]``, read and written.

torch keeps a group's lr as a Python float. MindSpore's experimental optimizers (what
``torch.optim.X`` converts to) keep it as a 0-d float32 ``Parameter``, which the optimizer
and every scheduler built on it read and assign in place (``initial_lr``, set by a
scheduler, is a 0-d Tensor; the other keys are plain values). So, in 2.10:

- a read formatted as a number (``f"{g['lr']:.4f}"``) raises TypeError, and arithmetic on
  it gives a Tensor: a read of ``G["lr"]`` or ``G["initial_lr"]`` becomes ``float(G["lr"])``.
  A read that is already the whole argument of ``float(...)`` is left as it is (no double
  wrap); a read inside another expression given to ``float`` is wrapped like any other. A
  read whose attribute is taken (``g["lr"].item()``, ``.dtype``) is left: the code holds a
  tensor lr there, and the Parameter answers as one.
- ``G["lr"] = v`` would put a float in the Parameter's place: the optimizer uses it, but a
  scheduler built before keeps updating the Parameter (the real lr no longer changes) and
  one built after fails on ``group['lr'].value()``. It becomes
  ``_torch_set_group_lr(G, v)``, a function emitted in the file that assigns the value
  into the Parameter (a group whose lr is a plain float, a torch optimizer left
  unconverted, is written as before). ``G["lr"] op= v`` becomes
  ``_torch_set_group_lr(G, float(G["lr"]) op v)`` when G may be evaluated twice (no call in
  it); else, and where the item is one of several targets (``a = G["lr"] = v``,
  ``G["lr"], b = ...``), the statement is left and marked. Writes of ``initial_lr`` stay: MindSpore's schedulers
  take a float there as torch's do.

G is a param group: ``X.param_groups[i]`` (any index; any X but ``self``, whose groups are
a torch Optimizer subclass's own: its ``step`` reads what torch stored, and the class stays
torch's), or a name bound in the same scope (function, class body or module) by
``for G in X.param_groups`` (a slice of it too), ``for i, G in enumerate(X.param_groups)``,
``for G, v in zip(X.param_groups, ...)`` or ``G = X.param_groups[i]``, and bound nowhere else
in that scope (nor a parameter); a comprehension's ``for G in X.param_groups`` binds G in the
comprehension. The file must mention ``param_groups``.

Left as they are: keys that are not a literal (``g[field]``), ``G.get("lr")``,
``G.update(lr=...)``. The float read of a float32 Parameter shows float32's rounding where
torch keeps the float it was given (``0.10000000149011612`` for 0.1) unless it is formatted.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper
from ..syntax import literal_value, operand, repeatable
from ..tensor_inference import named_params, target_names

HELPER = "_torch_set_group_lr"
READ_KEYS = ("lr", "initial_lr")  # a Parameter and a 0-d Tensor in MindSpore
WRITE_KEYS = ("lr",)
SCOPE_BINDINGS = (cst.For, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.WithItem, cst.NamedExpr)


def _nested_scopes_left_out(scope) -> bool:
    """(``facts.nodes``' ``enter``: a nested function's names are its own.)"""
    return False


def _param_groups(expr: cst.BaseExpression) -> bool:
    """``X.param_groups`` or a slice of it (``X.param_groups[1:]``): a list of groups."""
    if isinstance(expr, cst.Subscript):
        return (len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice)
                and _param_groups_attribute(expr.value))
    return _param_groups_attribute(expr)


def _param_groups_attribute(expr: cst.BaseExpression) -> bool:
    """``X.param_groups``, X not ``self``: a custom optimizer's own groups (a torch Optimizer
    subclass, which stays torch's) hold what torch stored, a float or a tensor."""
    return (isinstance(expr, cst.Attribute) and expr.attr.value == "param_groups"
            and not (isinstance(expr.value, cst.Name) and expr.value.value == "self"))


def _indexed_group(expr: cst.BaseExpression) -> bool:
    """``X.param_groups[i]``: one group."""
    return (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
            and expr.slice[0].slice.star is None and _param_groups_attribute(expr.value))


def _key(item: cst.BaseExpression) -> str | None:
    """``"lr"`` of ``G["lr"]``: the item's string key, if it is one."""
    if not (isinstance(item, cst.Subscript) and len(item.slice) == 1 and isinstance(item.slice[0].slice, cst.Index)):
        return None
    key = literal_value(item.slice[0].slice.value)
    return key if type(key) is str else None


def _loop_bindings(target: cst.BaseExpression, iterable: cst.BaseExpression) -> tuple[set[str], set[str]]:
    """The names a ``for target in iterable`` binds to param groups, and the others."""
    names = set(target_names(target))
    if _param_groups(iterable) and isinstance(target, cst.Name):
        return {target.value}, set()
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and elements \
            and not any(a.star or a.keyword for a in iterable.args):
        args = [a.value for a in iterable.args]
        if iterable.func.value == "enumerate" and len(elements) == 2 and len(args) in (1, 2):
            sources = [None, args[0]]
        elif iterable.func.value == "zip" and len(elements) == len(args):
            sources = args
        else:
            sources = []
        groups = {e.value for e, s in zip(elements, sources)
                  if s is not None and isinstance(e, cst.Name) and _param_groups(s)}
        return groups, names - groups
    return set(), names


def _binding(node: cst.CSTNode) -> tuple[set[str], set[str]]:
    """The names ``node`` binds to param groups, and the others."""
    if isinstance(node, cst.For):
        return _loop_bindings(node.target, node.iter)
    if isinstance(node, cst.Assign):
        names = {n for t in node.targets for n in target_names(t.target)}
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _indexed_group(node.value):
            return names, set()
        return set(), names
    if isinstance(node, cst.WithItem):
        return set(), set(target_names(node.asname.name)) if node.asname else set()
    return set(), set(target_names(node.target))  # AugAssign, AnnAssign, NamedExpr


def _subscripts(target: cst.BaseExpression):
    """The subscripts an assignment or ``del`` target writes (through tuples and stars)."""
    if isinstance(target, cst.Subscript):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _subscripts(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _subscripts(target.value)


def _evaluated_twice_alike(expr: cst.BaseExpression) -> bool:
    """``repeatable``, or arithmetic of such (``opt.param_groups[i % 2]``): no call in it."""
    if isinstance(expr, cst.BinaryOperation):
        return _evaluated_twice_alike(expr.left) and _evaluated_twice_alike(expr.right)
    if isinstance(expr, cst.Subscript):
        return _evaluated_twice_alike(expr.value) and all(
            isinstance(e.slice, cst.Index) and _evaluated_twice_alike(e.slice.value) for e in expr.slice)
    return repeatable(expr)


def _binary_operator(op: cst.BaseAugOp) -> cst.BaseBinaryOp:
    """``*`` of ``*=`` (every augmented operator is its binary one plus ``Assign``)."""
    return getattr(cst, type(op).__name__[: -len("Assign")])()


class ParamGroupLr(Pass):
    id = "MS215"
    name = "param-group-lr"
    reads = frozenset({"module", "nodes"})
    summary = ("optimizer.param_groups[i]['lr'] reads -> float(...); writes -> assigned into MindSpore's lr "
               "Parameter, which the optimizer and its schedulers read.")
    examples = (
        Example(
            "import torch\n\n\ndef warm_up(optimizer, step, log):\n"
            "    for group in optimizer.param_groups:\n        group['lr'] = 0.1 * step / 10\n"
            "    log.append(f\"lr {optimizer.param_groups[0]['lr']:.4f}\")\n",
            "import mindspore as ms\nfrom mindspore import ops\n\n\n"
            "def _torch_set_group_lr(group, value):\n"
            '    """torch\'s ``group["lr"] = value``: MindSpore\'s optimizer and its schedulers read the lr\n'
            '    from a Parameter, so the value is assigned into it (transpile MS215)."""\n'
            '    lr = group["lr"]\n    if isinstance(lr, ms.Parameter):\n'
            "        ops.assign(lr, ms.Tensor(float(value), lr.dtype))\n"
            '    else:\n        group["lr"] = value\n\n\n'
            "def warm_up(optimizer, step, log):\n    for group in optimizer.param_groups:\n"
            "        _torch_set_group_lr(group, 0.1 * step / 10)\n"
            "    log.append(f\"lr {float(optimizer.param_groups[0]['lr']):.4f}\")\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.active = "param_groups" in ctx.source
        self._written: set[int] = set()  # items assigned or deleted: their statement converts them
        # reads left as they are: float()'s whole argument already, or the receiver of an
        # attribute (``g["lr"].item()``, ``.dtype``: the code holds a tensor lr there)
        self._reads_left: set[int] = set()
        self._comprehensions: list[tuple[int, dict[str, bool]]] = []  # (comprehension, name -> is a group)
        self._scope_groups: dict[int, frozenset[str]] = {}

    # -- what is a group --------------------------------------------------------------
    def _group_names(self, scope: cst.CSTNode) -> frozenset[str]:
        """Names every binding of which in ``scope`` is a param group (nested scopes left out)."""
        if id(scope) not in self._scope_groups:
            groups: set[str] = set()
            others = {p.name.value for p in named_params(scope)} if isinstance(scope, cst.FunctionDef) else set()
            for node in self.facts.nodes(scope, SCOPE_BINDINGS, _nested_scopes_left_out):
                bound, other = _binding(node)
                groups |= bound
                others |= other
            self._scope_groups[id(scope)] = frozenset(groups - others)
        return self._scope_groups[id(scope)]

    def _is_group(self, expr: cst.BaseExpression) -> bool:
        if _indexed_group(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        for _, names in reversed(self._comprehensions):
            if expr.value in names:
                return names[expr.value]
        scope = self.ctx.open_scopes[-1] if self.ctx.open_scopes else self.facts.module
        return expr.value in self._group_names(scope)

    def _lr_item(self, node: cst.BaseExpression, keys: tuple[str, ...]) -> bool:
        """``G["lr"]`` (a key of ``keys``) with G a param group."""
        return self.active and _key(node) in keys and self._is_group(node.value)

    # -- where items are written or already floats --------------------------------------
    def _note_written(self, targets) -> None:
        if self.active:
            self._written.update(id(s) for t in targets for s in _subscripts(t) if _key(s) in READ_KEYS)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note_written(t.target for t in node.targets)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_written((node.target,))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._note_written((node.target,))

    def visit_Del(self, node: cst.Del) -> None:
        self._note_written((node.target,))

    def visit_For(self, node: cst.For) -> None:
        self._note_written((node.target,))

    def visit_Call(self, node: cst.Call) -> None:
        if (self.active and isinstance(node.func, cst.Name) and node.func.value == "float" and len(node.args) == 1
                and not node.args[0].star and node.args[0].keyword is None):
            self._reads_left.add(id(node.args[0].value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.active and isinstance(node.value, cst.Subscript):
            self._reads_left.add(id(node.value))

    # -- comprehensions bind their own names --------------------------------------------
    def _enter_comprehension(self, node) -> None:
        if not self.active:
            return
        names: dict[str, bool] = {}
        loop = node.for_in
        while loop is not None:
            groups, others = _loop_bindings(loop.target, loop.iter)
            names.update({n: False for n in others} | {n: True for n in groups})
            loop = loop.inner_for_in
        self._comprehensions.append((id(node), names))

    def _leave_comprehension(self, original, updated):
        # (no other pass replaces a comprehension, so every one entered is left here)
        while self._comprehensions and self._comprehensions.pop()[0] != id(original):
            pass
        return updated

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    # -- the rewrites -------------------------------------------------------------------
    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        if id(original) in self._written or id(original) in self._reads_left:
            return updated
        if not self._lr_item(original, READ_KEYS):
            return updated
        self.ctx.count_converted()
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(updated)])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        items = [s for t in original.targets for s in _subscripts(t.target) if self._lr_item(s, WRITE_KEYS)]
        if not items:
            return updated
        if len(original.targets) != 1 or original.targets[0].target is not items[0]:
            self.ctx.mark(original, self.id, "a param group's lr written along with other targets: left, so the "
                          f"value replaces MindSpore's lr Parameter; written alone it converts to {HELPER}(group, value)")
            return updated
        return cst.Expr(self._set_lr(original, updated.targets[0].target.value, updated.value),
                        semicolon=updated.semicolon)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        if not self._lr_item(original.target, WRITE_KEYS):
            return updated
        group = updated.target.value
        if not _evaluated_twice_alike(original.target.value):
            self.ctx.mark(original, self.id, "the lr of a param group reached through a call, updated in place: "
                          "left (the conversion would make the call twice); bind the group to a name first")
            return updated
        current = cst.Call(func=cst.Name("float"), args=[cst.Arg(updated.target)])
        value = cst.BinaryOperation(left=current, operator=_binary_operator(original.operator),
                                    right=operand(updated.value))
        return cst.Expr(self._set_lr(original, group, value), semicolon=updated.semicolon)

    def _set_lr(self, original: cst.CSTNode, group: cst.BaseExpression, value: cst.BaseExpression) -> cst.Call:
        """``_torch_set_group_lr(group, value)``, the function emitted once per file."""
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, "MindSpore keeps a param group's lr in a Parameter that its "
                            f"optimizer and schedulers read: {HELPER} assigns the new value into it", Severity.INFO)
        self.ctx.count_converted()
        return cst.Call(func=runtime_helper(self.ctx, HELPER),
                        args=[cst.Arg(group), cst.Arg(value)])
