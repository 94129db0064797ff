"""MS213: torch's grad modes and autocast: ``with torch.no_grad():`` and its kin, as blocks
and as decorators.

MindSpore's PyNative mode records no tape unless ``value_and_grad`` asks for gradients, so
outside a differentiated function a grad-mode block changes nothing: its body takes its
place (comments kept) and a decorator goes. Inside code that is differentiated, a
no-grad block's values must not carry gradients: where the enclosing function (or the
module body) also calls ``.backward()`` -- the code the training-step pass (MS211) wraps
in a forward function -- and in a Module's ``forward`` (differentiated when the model
trains: a frozen backbone run under no_grad), each value assigned or returned in a
``no_grad``/``inference_mode``/``set_grad_enabled(False)`` block is wrapped in
``mindspore.ops.stop_gradient``.
``set_grad_enabled(flag)`` with a flag known only at run time cuts the gradient when the
flag is false.

``torch.autocast`` (and ``torch.cuda.amp.autocast``, ``torch.amp.autocast``) is dropped
with a warning: the converted code runs in float32 (MindSpore's mixed precision,
``amp.auto_mixed_precision``, fails on CPU); the switched-off form (``enabled=False``)
is MS206's. A statement ``torch.set_grad_enabled(False)`` (an inference script's switch)
is removed.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, code, free_name, literal_value, name_chain
from ..analysis.backward import calls_backward
from ..analysis.compiled import OwnBody
from ..analysis.scaffolding import scaffolding_data

NO_GRAD = frozenset({
    "torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.inference_mode", "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode",
})
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                              "torch.autograd.grad_mode.set_grad_enabled"})
AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                      "torch.amp.autocast_mode.autocast"})
STOP_GRADIENT = "mindspore.ops.stop_gradient"
HELPER = "_torch_grad_enabled_value"
AUTOCAST_WARNING = ("autocast dropped: the converted code computes in float32 (MindSpore's "
                    "auto_mixed_precision fails on CPU); expect differences of about 1e-3 from a torch AMP run")


def _plain_number(value: cst.BaseExpression) -> bool:
    """A value that carries no gradient: a literal, or ``.item()``/``.tolist()``/``float()``/
    ``int()``/``len()`` of something."""
    if literal_value(value) is not NOT_LITERAL:
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist"):
            return True
        return isinstance(func, cst.Name) and func.value in ("float", "int", "len", "bool", "str")
    return False


class _CutGradients(OwnBody, cst.CSTTransformer):
    """Wraps each value a block assigns or returns (nested functions and classes left) in ``wrap``."""

    def __init__(self, wrap, returns_only: bool = False):
        super().__init__()
        self.wrap = wrap
        self.wrapped = 0
        self.returns_only = returns_only  # a decorated function: what it gives back

    def _value(self, updated):
        if updated.value is None or _plain_number(updated.value) or (
                self.returns_only and not isinstance(updated, cst.Return)):
            return updated
        self.wrapped += 1
        value = updated.value
        if type(value) is cst.Tuple and not value.lpar:
            # ``return cos, sin``: the tuple is one argument (bare, its items would be the call's
            # arguments: stop_gradient(cos, sin)); ops.stop_gradient cuts each item of a tuple
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated.with_changes(value=self.wrap(value))

    def leave_Assign(self, original, updated):
        return self._value(updated)

    def leave_AnnAssign(self, original, updated):
        return self._value(updated)

    def leave_AugAssign(self, original, updated):
        return self._value(updated)

    def leave_Return(self, original, updated):
        return self._value(updated)


class GradMode(Pass):
    id = "MS213"
    name = "grad-mode"
    reads = frozenset({"identifiers", "module", "nodes", "training_plan"})
    summary = ("with torch.no_grad()/inference_mode()/enable_grad()/set_grad_enabled()/autocast() and their "
               "decorators -> the body alone; values of a no-grad block in differentiated code -> ops.stop_gradient.")
    examples = (
        Example(
            "import torch\ndef evaluate(model, x):\n    with torch.no_grad():\n        # eval\n        y = model(x)\n    return y\n",
            "def evaluate(model, x):\n    # eval\n    y = model(x)\n    return y\n",
        ),
        Example(
            "import torch\n@torch.no_grad()\ndef predict(model, x):\n    return model(x)\n",
            "def predict(model, x):\n    return model(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        # autocast(enabled=False) blocks are MS206's (the same names, switched off)
        self._disabled = frozenset(scaffolding_data()["disabled_context"]["names"])
        self._scopes: list[cst.CSTNode] = []  # the enclosing function of each open with, or the module

    def _qual(self, node) -> str | None:
        return self.ctx.imports.qualify(node)

    # -- which context managers are ours --------------------------------------------------
    def _kind(self, expr: cst.BaseExpression) -> str | None:
        """'no_grad', 'enable_grad', 'set_grad_enabled' or 'autocast' for a context manager
        (or decorator) of ours, else None."""
        call = expr if isinstance(expr, cst.Call) else None
        qual = self._qual(call.func if call else expr)
        if qual in NO_GRAD:
            switched_off = call is not None and call.args and literal_value(call.args[0].value) is False
            return "enable_grad" if switched_off else "no_grad"  # inference_mode(False) changes nothing
        if qual in ENABLE_GRAD:
            return "enable_grad"
        if qual in SET_GRAD_ENABLED and call is not None and len(call.args) == 1 and not call.args[0].star:
            return "set_grad_enabled"
        if qual in AUTOCAST and not (qual in self._disabled and call is not None and _switched_off(call)):
            return "autocast"
        return None

    def _ours(self, item: cst.WithItem) -> bool:
        return item.asname is None and self._kind(item.item) is not None

    def visit_WithItem(self, node: cst.WithItem) -> bool:
        # about to go: ApiCalls does not mark it; set_grad_enabled's flag is kept, and converted
        # (the passes after this one leave the call itself, leave_With drops the item)
        if self._ours(node) and self._kind(node.item) == "set_grad_enabled":
            self.ctx.claim(node.item, self.id)
            self.ctx.freeze(node.item.func)  # the name of what goes: no pass marks it
            return True
        return not self._ours(node)

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return self._kind(node.decorator) is None

    def leave_Decorator(self, original: cst.Decorator, updated):
        kind = self._kind(original.decorator)
        if kind is None:
            return updated
        self.ctx.count_converted()
        if kind == "autocast":
            self.ctx.report(original, self.id, AUTOCAST_WARNING, Severity.WARNING)
        else:
            self.ctx.report(original, self.id, f"@{code(original.decorator)} dropped: MindSpore computes "
                            "gradients only where value_and_grad asks", Severity.INFO)
        return cst.RemovalSentinel.REMOVE

    def leave_FunctionDef(self, original: cst.FunctionDef, updated):
        """``@torch.no_grad()`` on a Module's ``forward`` (a frozen model): what it returns is
        cut from the gradient (the decorator itself goes in leave_Decorator)."""
        if not isinstance(updated, cst.FunctionDef) or not any(
                self._kind(d.decorator) == "no_grad" for d in original.decorators):
            return updated
        if not self._differentiated(original):
            return updated
        stop = self.ctx.reference(STOP_GRADIENT)
        cut = _CutGradients(lambda value: cst.Call(func=stop, args=[cst.Arg(value)]), returns_only=True)
        body = updated.body.visit(cut)
        if cut.wrapped:
            self.ctx.report(original, self.id, f"{original.name.value}: a Module's forward under no_grad: what it "
                            "returns is cut from the gradient (ops.stop_gradient)", Severity.INFO)
        return updated.with_changes(body=body)

    # -- with blocks ------------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        self._scopes.append(self.ctx.innermost(cst.FunctionDef) or self.facts.module)

    def _differentiated(self, scope) -> bool:
        """Code a gradient runs through: a scope that calls ``.backward()``, or a Module's
        ``forward`` (a model's forward is differentiated when it trains: a frozen part
        computed under no_grad there must stay out of the gradient)."""
        if calls_backward(self.facts, scope):
            return True
        if not (isinstance(scope, cst.FunctionDef) and scope.name.value == "forward"):
            return False
        scopes = self.ctx.open_scopes
        index = next((i for i in range(len(scopes) - 1, -1, -1) if scopes[i] is scope), None)
        return index is not None and index > 0 and isinstance(scopes[index - 1], cst.ClassDef)

    def leave_With(self, original: cst.With, updated):
        scope = self._scopes.pop()
        ours = [item for item in original.items if self._ours(item)]
        if not ours or original.asynchronous or not isinstance(updated, cst.With):
            return updated
        self.ctx.count_converted(len(ours))
        body = updated.body
        for item, converted in zip(original.items, updated.items):
            if self._ours(item):
                body = self._resolve(item, body, scope, original, converted)
        # an autocast(enabled=False) beside ours goes too (alone, MS206 drops it)
        dropped = [o for o in original.items if self._ours(o) or self._switched_off_autocast(o)]
        self.ctx.count_converted(len(dropped) - len(ours))
        if len(dropped) < len(original.items):  # `with torch.no_grad(), open(p) as f:` keeps the rest
            kept = [u for o, u in zip(original.items, updated.items) if not any(o is d for d in dropped)]
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=kept, body=body)
        return cst.FlattenSentinel(_lines(updated, body))

    def _switched_off_autocast(self, item: cst.WithItem) -> bool:
        call = item.item
        return (item.asname is None and isinstance(call, cst.Call) and self._qual(call.func) in self._disabled
                and _switched_off(call))

    def _resolve(self, item: cst.WithItem, body, scope, original: cst.With, converted: cst.WithItem):
        """The block's body once the context manager ``item`` is gone (``converted``: the item
        as the other passes left it)."""
        kind = self._kind(item.item)
        if kind == "autocast":
            self.ctx.report(original, self.id, AUTOCAST_WARNING, Severity.WARNING)
            return body
        if kind == "enable_grad":
            return body
        if kind == "set_grad_enabled":  # the flag as the other passes converted it
            enabled = converted.item.args[0].value
        else:
            enabled = cst.Name("False")
        if literal_value(enabled) is True or not self._differentiated(scope):
            return body
        plan = self.facts.training_plan()
        if kind == "set_grad_enabled" and plan is not None and id(original) in plan.trains_inside:
            # the block's own backward runs only with gradients on; MS211 moved its forward
            # code into a function that is differentiated only then
            return body
        flag = None
        if literal_value(enabled) is False:
            stop = self.ctx.reference(STOP_GRADIENT)
            wrap = lambda value: cst.Call(func=stop, args=[cst.Arg(value)])  # noqa: E731
        else:
            helper = self._helper()
            # torch evaluates the flag once: one binding, read by each value cut
            flag = enabled if name_chain(enabled) else cst.Name(self._flag_name(scope))
            wrap = lambda value: cst.Call(func=helper, args=[cst.Arg(flag), cst.Arg(value)])  # noqa: E731
        cut = _CutGradients(wrap)
        body = body.visit(cut)
        if cut.wrapped and flag is not enabled and flag is not None and isinstance(body, cst.IndentedBlock):
            binding = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(flag)], value=enabled)])
            body = body.with_changes(body=[binding, *body.body])
        if cut.wrapped:
            self.ctx.report(original, self.id, f"{code(item.item)}: the block's values are cut from the gradient "
                            "(ops.stop_gradient): this code also calls .backward()", Severity.INFO)
        return body

    def _flag_name(self, scope) -> str:
        """A name for set_grad_enabled's flag that the function does not use."""
        return free_name(self.facts.identifiers(scope), "grad_enabled")

    def _helper(self) -> cst.Name:
        return runtime_helper(self.ctx, HELPER)

    # -- torch.set_grad_enabled(False) as a statement -----------------------------------------
    def _switch(self, line: cst.SimpleStatementLine) -> bool:
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Expr) or not isinstance(line.body[0].value, cst.Call):
            return False
        return self._qual(line.body[0].value.func) in SET_GRAD_ENABLED

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return not self._switch(node)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if not self._switch(original):
            return updated
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(original.body[0].value)} removed: MindSpore computes gradients "
                        "only where value_and_grad asks", Severity.INFO)
        if any(line.comment for line in original.leading_lines):
            return updated.with_changes(body=[cst.Pass()])  # keeps the comments above it
        return cst.RemovalSentinel.REMOVE


def _switched_off(call: cst.Call) -> bool:
    """``autocast(..., enabled=False)``: MS206 drops it."""
    return any(a.keyword and a.keyword.value == "enabled" and isinstance(a.value, cst.Name) and a.value.value == "False"
               for a in call.args)


def _lines(with_node: cst.With, body) -> list:
    """The statements of ``body`` standing where ``with_node`` stood: the comments above the
    ``with`` and on its line go above the first statement."""
    if isinstance(body, cst.IndentedBlock):
        lines = list(body.body)
        header = body.header
    else:  # with torch.no_grad(): y = f(x)
        lines = [cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)]
        header = None
    comment = []
    if header is not None and header.comment is not None:
        comment = [cst.EmptyLine(comment=header.comment)]
    first = lines[0]
    lines[0] = first.with_changes(leading_lines=[*with_node.leading_lines, *comment, *first.leading_lines])
    return lines
