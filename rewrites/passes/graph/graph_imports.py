"""MS324: an import statement in compiled code -> ``importlib.import_module``.

GRAPH_MODE compiles no import statement: ring-attention's forward imports its CUDA kernel
in a branch it takes only on a GPU (``from ring_attention_pytorch.ring_flash_attention_cuda
import ring_flash_attn_cuda``), and MindSpore 2.10 refuses the whole construct ("Unsupported
statement 'ImportFrom'"), whatever branch runs. ``importlib.import_module(...)`` is a call
GRAPH_MODE hands to Python (measured on 2.10: ``importlib.import_module("math").sqrt`` in
construct compiles and gives math.sqrt), and it is what the statement does:

    from m import a, b as c        ->  a = importlib.import_module("m").a
                                        c = importlib.import_module("m").b
    from .m import a               ->  a = importlib.import_module(".m", __package__).a
    import m.n as k                ->  k = importlib.import_module("m.n")
    import m                       ->  m = importlib.import_module("m")

(the module is imported once, by the first of them; the others read Python's module cache).
Imports of the frameworks the tool converts are the imports pass's (it moves them to the
module's top). Left as they are, with a warning: ``import m.n`` without ``as`` (it binds
``m``), ``from m import *`` and ``from . import n`` (``n`` may be a module the import loads). The rule applies in forward/construct, what they call on ``self`` and
the module functions they call; elsewhere an import runs as Python.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.import_table import dotted_name
from transpile.engine.passes import Example, Pass

from ...syntax import lines_in_place_of
from ...table_calls import LOWERED_ROOTS, tables
from .called_by_compiled import CompiledOrCalled


class GraphImports(CompiledOrCalled, Pass):
    id = "MS324"
    name = "graph-imports"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = ("An import statement in construct becomes importlib.import_module (GRAPH_MODE compiles no "
               "import statement).")
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x, k):\n"
            "        from operator import mul\n        return mul(x, k)\n",
            "import mindspore.nn as nn\nimport importlib\nclass M(nn.Cell):\n    def construct(self, x, k):\n"
            "        mul = importlib.import_module(\"operator\").mul\n        return mul(x, k)\n",
        ),
    )

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if not isinstance(updated, cst.SimpleStatementLine) or not self.ctx.open_scopes \
                or not any(type(s) in (cst.Import, cst.ImportFrom) for s in original.body) or not self._compiled():
            return updated
        if len(original.body) != 1 or type(updated.body[0]) is not type(original.body[0]):
            return updated
        statement = original.body[0]
        assigns = _assignments(statement)
        if assigns is None:
            return updated  # the imports pass moves a framework's import to the module's top
        if isinstance(assigns, str):
            self.ctx.report(statement, self.id, f"an import statement in compiled code ({assigns}): GRAPH_MODE "
                            "compiles none (\"Unsupported statement\"); import at the module's top", Severity.WARNING)
            return updated
        self.ctx.request_import("importlib", "importlib")
        self.ctx.report(statement, self.id, "an import statement in compiled code is importlib.import_module: "
                        "GRAPH_MODE compiles no import statement", Severity.INFO)
        return lines_in_place_of(updated, assigns)


def _assignments(statement) -> list[cst.Assign] | str | None:
    """The assignments that do ``statement``, why it is left, or None for a framework's import."""
    roots = set(tables().framework_roots) | set(tables().source_roots) | LOWERED_ROOTS
    if type(statement) is cst.Import:
        found = []
        for alias in statement.names:
            module = dotted_name(alias.name)
            if module is None or module.split(".")[0] in roots:
                return None
            if alias.asname is None and "." in module:
                return f"import {module} binds {module.split('.')[0]}"
            bound = alias.asname.name.value if alias.asname is not None else module
            found.append(_assign(bound, _import_call(module, 0)))
        return found
    if isinstance(statement.names, cst.ImportStar):
        return "a star import"
    level = len(statement.relative)
    module = dotted_name(statement.module) if statement.module is not None else ""
    if module is None or (level == 0 and module.split(".")[0] in roots):
        return None
    if not module:
        return "from . import: the names may be modules it loads"
    return [_assign(a.asname.name.value if a.asname is not None else a.name.value,
                    cst.Attribute(value=_import_call("." * level + module, level), attr=cst.Name(a.name.value)))
            for a in statement.names]


def _import_call(module: str, level: int) -> cst.Call:
    args = [cst.Arg(cst.SimpleString(f'"{module}"'))]
    if level:
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(cst.Name("__package__")))
    return cst.Call(func=cst.Attribute(value=cst.Name("importlib"), attr=cst.Name("import_module")), args=args)


def _assign(name: str, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)
