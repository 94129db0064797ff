"""MS206: torch's TorchScript / FX / tracing scaffolding, resolved for eager mode.

Model code asks ``torch.jit.is_scripting()``, decorates helpers with
``@torch.jit.unused``, declares TorchScript overload stubs and registers functions
with ``torch.fx.wrap``. None of it computes anything, but left in place it keeps the
converted file importing torch, and GRAPH mode cannot compile a torch call. Eager
mode's answers replace it: the checks become ``False``, the decorators and stubs go,
``torch.jit.annotate(T, v)`` is ``v``, ``torch._assert(c, m)`` is ``assert c, m``, and
``with torch.autocast(..., enabled=False):`` is its body (autocast switched off changes
nothing; GRAPH mode compiles no ``with`` over a torch object).
The names are data (``rewrites/passes/scaffolding.toml``, beside this file).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.passes import Example, Pass

from ..analysis.scaffolding import scaffolding_data
from ..syntax import code


def _decorator_name(decorator: cst.Decorator) -> cst.BaseExpression:
    d = decorator.decorator
    return d.func if isinstance(d, cst.Call) else d


def _only_pass(fn: cst.FunctionDef) -> bool:
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    small = [s for line in body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    if len(small) != len(body):
        return False
    return all(isinstance(s, cst.Pass) or (isinstance(s, cst.Expr) and isinstance(s.value, (cst.Ellipsis, cst.SimpleString)))
               for s in small)


class Scaffolding(Pass):
    id = "MS206"
    name = "scaffolding"
    summary = "TorchScript/FX/tracing scaffolding resolved for eager mode (is_scripting() -> False, jit decorators and overload stubs dropped)."
    examples = (
        Example(
            "import torch\ndef f(x):\n    if torch.jit.is_scripting():\n        return x\n    return x + 1\n",
            "def f(x):\n    if False:\n        return x\n    return x + 1\n",
        ),
        Example(
            "import torch\n@torch.jit.unused\ndef g(x):\n    return x\n",
            "def g(x):\n    return x\n",
        ),
        Example(
            "import torch\ndef h(x, n):\n    torch._assert(n > 0, 'empty')\n    return x\n",
            "def h(x, n):\n    assert n > 0, \"empty\"\n    return x\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        data = scaffolding_data()
        self.constant: dict[str, str] = data["constant"]
        self.identity: dict[str, int] = data["identity"]
        self.decorators = frozenset(data["decorator"]["drop"])
        self.stubs = frozenset(data["decorator"]["overload_stub"])
        self.statements = frozenset(data["statement"]["drop"])
        self.checks: dict[str, str] = data["check"]
        self.disabled_contexts = frozenset(data["disabled_context"]["names"])
        self._depth = 0  # function / class nesting: statements are dropped only at module level

    def _qual(self, node) -> str | None:
        return self.ctx.imports.qualify(node)

    # -- decorators and overload stubs -------------------------------------------------
    def visit_Decorator(self, node: cst.Decorator) -> bool:
        # not descending keeps ApiCalls from marking a name that is about to go
        return self._qual(_decorator_name(node)) not in self.decorators | self.stubs

    def leave_Decorator(self, original: cst.Decorator, updated):
        if self._qual(_decorator_name(original)) in self.decorators:
            self.ctx.count_converted()
            return cst.RemovalSentinel.REMOVE
        return updated

    def visit_FunctionDef(self, node) -> None:
        self._depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated):
        self._depth -= 1
        if any(self._qual(_decorator_name(d)) in self.stubs for d in original.decorators) and _only_pass(original):
            self.ctx.count_converted()
            return cst.RemovalSentinel.REMOVE
        return updated

    def visit_ClassDef(self, node) -> None:
        self._depth += 1

    def leave_ClassDef(self, original, updated):
        self._depth -= 1
        return updated

    # -- with torch.autocast(..., enabled=False): the body alone -------------------------
    def _disabled_context(self, item: cst.WithItem) -> bool:
        call = item.item
        return (item.asname is None and isinstance(call, cst.Call) and self._qual(call.func) in self.disabled_contexts
                and any(a.keyword and a.keyword.value == "enabled" and isinstance(a.value, cst.Name)
                        and a.value.value == "False" for a in call.args))

    def visit_WithItem(self, node: cst.WithItem) -> bool:
        return not self._disabled_context(node)  # about to go: ApiCalls does not mark it

    def leave_With(self, original: cst.With, updated):
        if not all(self._disabled_context(item) for item in original.items) or original.asynchronous:
            return updated
        body = updated.body
        lines = list(body.body) if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(body=body.body)]
        self.ctx.count_converted(len(original.items))
        first = lines[0]
        lines[0] = first.with_changes(leading_lines=[*updated.leading_lines, *first.leading_lines])
        return cst.FlattenSentinel(lines)

    # -- calls -------------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        qual = self._qual(original.func)
        if qual in self.constant:
            self.ctx.count_converted()
            return cst.Name(self.constant[qual])
        if qual in self.identity:
            index = self.identity[qual]
            args = [a for a in updated.args if not a.keyword and not a.star]
            if index < len(args) and len(args) == len(updated.args):
                self.ctx.count_converted()
                return args[index].value
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        call = original.body[0].value
        if not isinstance(call, cst.Call):
            return updated
        qual = self._qual(call.func)
        if qual in self.statements and self._depth == 0:
            self.ctx.count_converted()
            if any(line.comment for line in original.leading_lines):
                return updated.with_changes(body=[cst.Pass()])  # keeps the comments above it
            return cst.RemovalSentinel.REMOVE
        if qual in self.checks:
            return self._assert(updated, self.checks[qual])
        return updated

    def _assert(self, line: cst.SimpleStatementLine, message_kind: str):
        call = line.body[0].value
        if not isinstance(call, cst.Call) or any(a.star or a.keyword for a in call.args) or not call.args:
            return line
        message = call.args[1].value if len(call.args) > 1 else None
        if message is not None and message_kind == "callable":
            if not isinstance(message, cst.Lambda) or message.params.params:
                message = None  # a named function: the check stays, without its message
            else:
                message = message.body
        self.ctx.count_converted()
        return line.with_changes(body=[cst.Assert(test=_one_line(call.args[0].value), msg=_one_line(message))])


def _one_line(expr):
    """An argument spread over lines (a message ``"a"`` ``"b"`` split after ``"a"``) is held
    together by the call's parentheses; an ``assert`` has none, so it gets its own."""
    if expr is None or expr.lpar or "\n" not in code(expr):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
