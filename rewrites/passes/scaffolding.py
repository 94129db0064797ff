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
from ..syntax import code, literal_value
from ..table_calls import tables


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
        self.copies_metadata = frozenset(data["decorator"]["copies_metadata"])
        self.statements = frozenset(data["statement"]["drop"])
        self.checks: dict[str, str] = data["check"]
        self.build: dict[str, str] = data["build"]
        self.build_attributes = frozenset(name.rsplit(".", 1)[1] for name in self.build)
        self.disabled_contexts = frozenset(data["disabled_context"]["names"])

    def _qual(self, node) -> str | None:
        return self.ctx.imports.qualify(node)

    # -- decorators and overload stubs -------------------------------------------------
    def visit_Decorator(self, node: cst.Decorator) -> bool:
        # not descending keeps ApiCalls from marking a name that is about to go
        return self._qual(_decorator_name(node)) not in self.decorators | self.stubs and not self._copies_torch(node)

    def _copies_torch(self, node: cst.Decorator) -> bool:
        """``@wraps(torch.nn.Module.cuda)``: a copy of the metadata of a torch name the tables
        do not convert."""
        d = node.decorator
        if type(d) is not cst.Call or len(d.args) != 1 or d.args[0].keyword or d.args[0].star:
            return False
        if self._qual(d.func) not in self.copies_metadata:
            return False
        copied = self._qual(d.args[0].value)
        return (copied is not None and copied.split(".")[0] in self.ctx.source_roots
                and tables().lookup(copied) is None and copied not in tables().modules)

    def leave_Decorator(self, original: cst.Decorator, updated):
        if self._qual(_decorator_name(original)) in self.decorators or self._copies_torch(original):
            self.ctx.count_converted()
            return cst.RemovalSentinel.REMOVE
        return updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated):
        if any(self._qual(_decorator_name(d)) in self.stubs for d in original.decorators) and _only_pass(original):
            self.ctx.count_converted()
            return cst.RemovalSentinel.REMOVE
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

    # -- torch's build read as a value: torch.version.cuda, getattr(torch, "version").hip --
    def _attribute_qual(self, node: cst.Attribute) -> str | None:
        inner = node.value
        if (type(inner) is cst.Call and type(inner.func) is cst.Name and inner.func.value == "getattr"
                and "getattr" not in self.ctx.imports.bindings and len(inner.args) == 2
                and not any(a.star or a.keyword for a in inner.args)):
            module, name = self._qual(inner.args[0].value), literal_value(inner.args[1].value)
            return f"{module}.{name}.{node.attr.value}" if module is not None and type(name) is str else None
        return self._qual(node)

    def leave_Attribute(self, original: cst.Attribute, updated):
        if original.attr.value not in self.build_attributes:
            return updated
        qual = self._attribute_qual(original)
        if qual in self.build:
            self.ctx.count_converted()
            return cst.Name(self.build[qual])
        return updated

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
        if qual in self.statements:
            self.ctx.count_converted()
            if any(line.comment for line in original.leading_lines):
                return updated.with_changes(body=[cst.Pass()])  # keeps the comments above it
            return cst.RemovalSentinel.REMOVE
        if qual in self.checks:
            return self._assert(updated, self.checks[qual])
        return updated

    def leave_IndentedBlock(self, original, updated):
        if updated.body or not original.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])  # every statement dropped

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
