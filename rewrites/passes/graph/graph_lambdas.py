"""MS313: a lambda inside a larger expression, outside construct -> a named function.

GRAPH_MODE compiles a function object called in construct from its source, and finds a
lambda's source by its line: MindSpore 2.10 accepts only a line whose statement IS the
lambda (``f = lambda t: ...``, ``return lambda t: ...``). A lambda stored from inside a
larger expression and called in construct fails to compile: an activation given as a
default (``def __init__(self, act=lambda t: t)``: "unmatched ')'"), chosen with
``act or (lambda t: ...)`` ("Node type must be Lambda, but got BoolOp"), two assigned on
one line ("got Tuple"), a table of them (``dict(relu=lambda t: ...)``: "got Call").

Each such lambda, where it is kept as a value (a parameter's default, an item of a tuple,
list, set or dict, an operand of ``or``/``and``/``if else``, an argument of a class built
(a capitalised name: ``Lambda(lambda x: ...)``) or of ``dict``/``partial``/``setattr``),
becomes a function defined just before the statement that holds it, in the same scope,
and the lambda's place names the function: the same parameters, the same body, the same
closure (late binding, as a lambda's). A lambda in a class body, a method's default
included, goes before the class (a class body is no enclosing scope of a lambda: its body
sees the same names there). Left as they are: lambdas alone on their line, passed to a
function that calls them there and then (``sorted(key=...)``, ``self._apply(lambda t:
...)``), handed to the framework's own calls (the tables convert those), in compiled code
(the graph reads construct's own lambdas whole), and inside comprehensions and other
lambdas (they may use the comprehension's variables).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...syntax import free_name

# Functions that keep a lambda argument as a value (a class built with one does too).
STORERS = frozenset({"dict", "partial", "setattr", "OrderedDict", "defaultdict"})
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class GraphLambdas(Pass):
    id = "MS313"
    name = "graph-lambdas"
    reads = frozenset({"identifiers", "module"})
    summary = ("A lambda inside a larger expression outside construct -> a named function "
               "(GRAPH_MODE compiles a lambda called in construct only from a line of its own).")
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n"
            "    def __init__(self, act=lambda t: torch.relu(t)):\n        super().__init__()\n        self.act = act\n"
            "    def forward(self, x):\n        return self.act(x)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\ndef _lambda_default_act(t):\n    return ops.relu(input=t)\n"
            "\n\nclass M(nn.Cell):\n"
            "    def __init__(self, act=_lambda_default_act):\n        super().__init__()\n        self.act = act\n"
            "    def construct(self, x):\n        return self.act(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._definitions: list[list[cst.FunctionDef]] = []  # per open statement that can hold a definition
        self._anchors: list[bool | None] = []  # per open statement: None if it is none, else whether at module level
        self._elifs: set[int] = set()  # an elif is its if's: nothing goes between them
        self._stored: dict[int, str | None] = {}  # id of a lambda kept as a value -> a name its place hints
        self._inside = 0  # comprehensions and lambdas the traversal is in
        self._line_hints: list[str | None] = []  # per open statement line: a name from its one target
        self._taken: set[str] = set()

    # -- statements: where definitions go ------------------------------------------
    def _enter(self, node: cst.CSTNode, scope_itself: bool = False) -> None:
        """A statement holds definitions when it is in a module's or a function's body (a
        class's body is no scope of what its lambdas use: they go before the class)."""
        scopes = self.ctx.open_scopes[:-1] if scope_itself else self.ctx.open_scopes
        enclosing = scopes[-1] if scopes else None
        anchor = (enclosing is None or type(enclosing) is cst.FunctionDef) and id(node) not in self._elifs
        self._anchors.append((enclosing is None) if anchor else None)
        if anchor:
            self._definitions.append([])

    def _leave(self, updated):
        module_level = self._anchors.pop()
        if module_level is None:
            return updated
        definitions = self._definitions.pop()
        if not definitions or not isinstance(updated, cst.BaseStatement):
            return updated
        # The blank lines before the statement go before the definitions, its comments stay
        # on it; at module level, black's two blank lines around a top-level definition.
        lines = list(updated.leading_lines)
        blank = next((i for i, line in enumerate(lines) if line.comment is not None), len(lines))
        between = [cst.EmptyLine(), cst.EmptyLine()] if module_level else []
        definitions = [d.with_changes(leading_lines=lines[:blank] if i == 0 else between)
                       for i, d in enumerate(definitions)]
        return cst.FlattenSentinel([*definitions, updated.with_changes(leading_lines=between + lines[blank:])])

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter(node)
        small = node.body[0] if len(node.body) == 1 else None
        hint = None
        if type(small) is cst.Assign and len(small.targets) == 1:  # names from what is assigned
            target, value = small.targets[0].target, small.value
            if type(target) is type(value) is cst.Tuple and len(target.elements) == len(value.elements):
                for spelled, assigned in zip(target.elements, value.elements):
                    if type(assigned.value) is cst.Lambda and _last_name(spelled.value):
                        self._stored[id(assigned.value)] = f"_lambda_{_last_name(spelled.value)}"
            elif _last_name(target):
                hint = f"_lambda_{_last_name(target)}"
        self._line_hints.append(hint)

    def leave_SimpleStatementLine(self, original, updated):
        self._line_hints.pop()
        return self._leave(updated)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node, scope_itself=True)
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            if type(param.default) is cst.Lambda:
                self._stored[id(param.default)] = f"_lambda_default_{param.name.value}"

    def leave_FunctionDef(self, original, updated):
        return self._leave(updated)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter(node, scope_itself=True)

    def leave_ClassDef(self, original, updated):
        return self._leave(updated)

    def visit_If(self, node: cst.If) -> None:
        self._enter(node)
        if type(node.orelse) is cst.If:
            self._elifs.add(id(node.orelse))

    def leave_If(self, original, updated):
        return self._leave(updated)

    def visit_For(self, node: cst.For) -> None:
        self._enter(node)

    def leave_For(self, original, updated):
        return self._leave(updated)

    def visit_While(self, node: cst.While) -> None:
        self._enter(node)

    def leave_While(self, original, updated):
        return self._leave(updated)

    def visit_With(self, node: cst.With) -> None:
        self._enter(node)

    def leave_With(self, original, updated):
        return self._leave(updated)

    # -- where a lambda is kept as a value ------------------------------------------------
    def _keep(self, value: cst.BaseExpression, hint: str | None = None) -> None:
        if type(value) is cst.Lambda:
            self._stored.setdefault(id(value), hint)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        if not (called[:1].isupper() or called in STORERS):
            return  # a function: it calls its lambda there and then, as a rule (a callback, a key)
        if (self.ctx.imports.qualify(func) or "").split(".")[0] in self.ctx.source_roots:
            return  # the tables convert the framework's calls: their hooks may read a lambda's body
        for arg in node.args:
            self._keep(arg.value, f"_lambda_{arg.keyword.value}" if arg.keyword is not None else None)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key.evaluated_value if type(node.key) is cst.SimpleString else None
        self._keep(node.value, f"_lambda_{key}" if isinstance(key, str) and key.isidentifier() else None)

    def visit_Element(self, node: cst.Element) -> None:  # of a tuple, list or set
        self._keep(node.value)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._keep(node.left)
        self._keep(node.right)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._keep(node.body)
        self._keep(node.orelse)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._inside += 1

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda):
        self._inside -= 1
        if (self._inside or self.ctx.compiled or id(original) not in self._stored or not self._definitions
                or not isinstance(updated, cst.Lambda)):
            return updated
        if not self._taken:
            self._taken = set(self.facts.identifiers(self.facts.module))
        hint = self._stored[id(original)] or (self._line_hints[-1] if self._line_hints else None)
        name = free_name(self._taken, hint or "_lambda")
        self._taken.add(name)
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=updated.body)])])
        self._definitions[-1].append(cst.FunctionDef(name=cst.Name(name), params=updated.params, body=body))
        self.ctx.report(original, self.id, f"a lambda inside a larger expression is the function {name}, defined "
                        "before the statement: GRAPH_MODE compiles a lambda called in construct only from a line "
                        "of its own", Severity.INFO)
        return cst.Name(name)

    def visit_ListComp(self, node) -> None:
        self._inside += 1

    def leave_ListComp(self, original, updated):
        self._inside -= 1
        return updated

    def visit_SetComp(self, node) -> None:
        self._inside += 1

    def leave_SetComp(self, original, updated):
        self._inside -= 1
        return updated

    def visit_DictComp(self, node) -> None:
        self._inside += 1

    def leave_DictComp(self, original, updated):
        self._inside -= 1
        return updated

    def visit_GeneratorExp(self, node) -> None:
        self._inside += 1

    def leave_GeneratorExp(self, original, updated):
        self._inside -= 1
        return updated


def _last_name(target: cst.BaseExpression) -> str | None:
    """``act`` for ``act`` and ``self.act``."""
    if type(target) is cst.Attribute:
        return target.attr.value
    return target.value if type(target) is cst.Name else None
