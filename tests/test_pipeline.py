"""The engine on its own, with test passes (no torch): every output is valid Python,
and a replacement keeps its meaning where it stands."""
from __future__ import annotations

import ast

import libcst as cst
import pytest

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Pass
from transpile.engine.pipeline import PassOrderError, Pipeline


# ``1.real`` prints as code that does not parse (a float literal ``1.`` then ``real``)
NOT_PYTHON = cst.Attribute(value=cst.Integer("1"), attr=cst.Name("real"))


class Rename(Pass):
    """``fine`` -> ``renamed``; ``broken`` -> an expression that does not print as Python."""
    id = "MS990"
    name = "rename"

    def leave_Name(self, original, updated):
        if updated.value == "broken":
            return NOT_PYTHON
        return updated.with_changes(value="renamed") if updated.value == "fine" else updated


class BadDefinition(Pass):
    """Gives ``def bad`` a return annotation that is not Python: a compound statement's
    header, which no statement-level check formats."""
    id = "MS991"
    name = "bad-definition"

    def leave_FunctionDef(self, original, updated):
        if updated.name.value == "bad":
            return updated.with_changes(returns=cst.Annotation(NOT_PYTHON))
        return updated


class Double(Pass):
    """``double(a)`` -> ``a + a`` (a call replaced by a weaker expression);
    ``.drop()`` calls are replaced by their receiver."""
    id = "MS992"
    name = "double"

    def leave_Call(self, original, updated):
        if isinstance(updated.func, cst.Name) and updated.func.value == "double":
            arg = updated.args[0].value
            return cst.BinaryOperation(left=arg, operator=cst.Add(), right=arg)
        if isinstance(updated.func, cst.Attribute) and updated.func.attr.value == "drop":
            return updated.func.value
        return updated


def run(passes, source: str):
    return Pipeline((tuple(passes),), {"src": "dst"}, {"src"}).run(source, "m.py")


def test_an_invalid_statement_is_kept_as_it_was_and_marked() -> None:
    result = run([Rename], "import src\nx = fine\ny = broken\nz = fine + 1\n")
    assert not result.failed
    lines = result.code.splitlines()
    assert "x = renamed" in lines and "z = renamed + 1" in lines  # the rest is converted
    assert "y = broken" in lines
    marker = lines[lines.index("y = broken") - 1]
    assert marker.startswith("# transpile: MS000")
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert [d.code for d in errors] == ["MS000"] and errors[0].line == 3
    ast.parse(result.code)


def test_an_output_that_does_not_parse_is_not_handed_out() -> None:
    """The conversion of ``def bad`` makes the file invalid though no changed line is: that
    statement is kept as it was, with a marker and an error at its own line in the input
    (none citing the output's lines), and the rest of the file is still converted."""
    source = "import src\n\nx = fine\n\n\ndef bad():\n    return fine\n\n\ndef good():\n    return fine\n"
    result = run([Rename, BadDefinition], source)
    assert not result.failed and result.changed
    ast.parse(result.code)
    assert "x = renamed" in result.code and "def good():\n    return renamed" in result.code
    assert "# transpile: MS000 " in result.code and "def bad():\n    return fine" in result.code
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert [(d.code, d.line) for d in errors] == [("MS000", 6)]
    assert "left as it was" in errors[0].message and "line" not in errors[0].message


def test_code_that_parses_but_does_not_compile_is_still_handed_out() -> None:
    """The whole-output check asks the compiler first (cheaper than ``ast.parse``), which
    also refuses code that parses (a module-level ``return``, a ``nonlocal`` with no
    function around it): such code was in the input, and is converted as before."""
    source = "import src\n\nx = fine\nreturn fine\n"
    with pytest.raises(SyntaxError):
        compile(source, "m.py", "exec")
    result = run([Rename], source)
    assert not result.failed and result.changed
    assert result.code == "import src\n\nx = renamed\nreturn renamed\n"
    assert not [d for d in result.diagnostics if d.severity is Severity.ERROR]


def test_a_weaker_replacement_is_parenthesized_where_it_stands() -> None:
    source = ("import src\n"
              "a = double(x).real\n"
              "b = 2 * double(x)\n"
              "c = double(x) + 1\n"
              "d = -double(x)\n"
              "e = double(x) ** 2\n"
              "f = 2 ** double(x)\n"
              "g = 1 - double(x)\n"
              "h = double(x)[0]\n")
    lines = run([Double], source).code.splitlines()
    assert lines[1:] == ["a = (x + x).real", "b = 2 * (x + x)", "c = x + x + 1", "d = -(x + x)",
                         "e = (x + x) ** 2", "f = 2 ** (x + x)", "g = 1 - (x + x)", "h = (x + x)[0]"]


def test_a_replacement_keeps_the_parentheses_it_stood_in() -> None:
    """A multi-line chain in parentheses whose last call is dropped stays valid."""
    source = "import src\ny = (x.view(2)\n     .drop())\n"
    result = run([Double], source)
    ast.parse(result.code)
    assert "drop" not in result.code and result.code.count("(") == result.code.count(")")


@pytest.mark.framework
def test_a_module_imported_in_one_function_is_imported_again_where_another_needs_it() -> None:
    """``import numpy as np`` inside one function binds np there only: a hook in another
    function asking for numpy (torch.finfo) gets a module-level import, not that np."""
    from transpile import convert_code

    code = convert_code("import torch\n\ndef f():\n    import numpy as np\n    return np.arange(3)\n\n"
                        "def g(x):\n    return torch.finfo(x.dtype).max\n").code
    namespace: dict = {}
    exec(compile(code, "<converted>", "exec"), namespace)
    import mindspore

    assert namespace["g"](mindspore.Tensor([1.0])) == float(np_finfo_max()), code


def np_finfo_max() -> float:
    import numpy

    return float(numpy.finfo("float32").max)


class AfterRename(Pass):
    """Declares that it must see nodes after Rename (MS990) does."""
    id = "MS993"
    name = "after-rename"
    runs_after = {"MS990": "it reads the renamed names"}


def test_stages_that_break_a_declared_order_are_refused() -> None:
    Pipeline(((Rename, AfterRename),), {}, set())
    Pipeline(((Rename,), (AfterRename,)), {}, set())
    Pipeline(((AfterRename, Double),), {}, set())  # Rename absent: nothing to keep
    for stages in (((AfterRename, Double, Rename),), ((AfterRename,), (Rename,))):
        with pytest.raises(PassOrderError, match=r"MS993 after-rename \(\d\.\d\) must run after MS990 rename "
                                                 r"\(\d\.\d\): it reads the renamed names"):
            Pipeline(stages, {}, set())


def test_the_rewrites_stages_refuse_a_pass_moved_before_one_it_follows() -> None:
    from transpile.rewrites import STAGES, _pipeline
    from transpile.rewrites.passes.bool_index import BoolIndex
    from transpile.rewrites.passes.tensor_methods import TensorMethods

    first = [p for p in STAGES[0] if p is not TensorMethods]
    first.insert(first.index(BoolIndex), TensorMethods)
    with pytest.raises(PassOrderError, match="MS202 tensor-methods .* must run after MS301 bool-index"):
        _pipeline((tuple(first),) + tuple(STAGES[1:]))


def test_declared_orders_name_passes_of_the_same_stage() -> None:
    from transpile.rewrites import STAGES

    for stage in STAGES:
        ids = {p.id for p in stage}
        for p in stage:
            assert set(p.runs_after) <= ids - {p.id}, p.id
            assert all(why.strip() for why in p.runs_after.values()), p.id


# -- the traversal's context and claims ----------------------------------------------------
class WhereNamesAre(Pass):
    """Records, for each name ``probe_*``, where the traversal says it stands."""
    id = "MS993"
    name = "where-names-are"
    seen: dict = {}

    def visit_Name(self, node) -> None:
        if node.value.startswith("probe_"):
            ctx = self.ctx
            cls, function = ctx.current_class, ctx.current_function
            WhereNamesAre.seen[node.value] = (ctx.compiled, cls.name.value if cls else None,
                                              function.name.value if function else None, ctx.in_annotation)


def test_the_traversal_says_where_it_is() -> None:
    source = ("import src\n"
              "def probe_top(a: probe_ann): return probe_module_level\n"
              "class Net:\n"
              "    x = probe_class_body\n"
              "    def forward(self):\n"
              "        def inner(): return probe_nested\n"
              "        return probe_forward\n"
              "    def helper(self): return probe_helper\n")
    compiled = lambda ctx, function, cls: function.name.value == "forward"  # noqa: E731
    WhereNamesAre.seen = {}
    Pipeline(((WhereNamesAre,),), {"src": "dst"}, {"src"}, compiled_method=compiled).run(source, "m.py")
    # (a function's header, its name and annotations, is visited inside it)
    assert WhereNamesAre.seen == {
        "probe_top": (False, None, "probe_top", False),
        "probe_ann": (False, None, "probe_top", True),
        "probe_module_level": (False, None, "probe_top", False),
        "probe_class_body": (False, "Net", None, False),
        "probe_nested": (True, "Net", "inner", False),
        "probe_forward": (True, "Net", "forward", False),
        "probe_helper": (False, "Net", "helper", False),
    }


class ClaimCalls(Pass):
    """Claims every call of ``keep``: the passes after it leave the call, not its arguments."""
    id = "MS994"
    name = "claim-calls"

    def visit_Call(self, node) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "keep":
            self.ctx.claim(node, self.id)


class WrapCalls(Pass):
    """``f(x)`` -> ``wrapped(f(x))`` for every call."""
    id = "MS995"
    name = "wrap-calls"

    def leave_Call(self, original, updated):
        return cst.Call(func=cst.Name("wrapped"), args=[cst.Arg(updated)])


def test_a_claimed_node_is_left_by_the_later_passes_but_its_children_are_not() -> None:
    source = "import src\ny = keep(other(1))\n"
    assert "y = keep(wrapped(other(1)))" in run([ClaimCalls, WrapCalls], source).code
    # a pass before the claimer still sees the node
    assert "y = wrapped(keep(wrapped(other(1))))" in run([WrapCalls, ClaimCalls], source).code



@pytest.mark.framework
def test_an_alias_bound_only_under_type_checking_is_not_reused_at_run_time() -> None:
    """``if TYPE_CHECKING: import torch.nn as nn`` binds nothing when the code runs: a
    converted ``torch.nn.Embedding`` must name mindspore.nn through a binding that exists."""
    import mindspore

    from transpile import convert_code

    code = convert_code("from typing import TYPE_CHECKING\nimport torch\nif TYPE_CHECKING:\n    import torch.nn as nn\n\n"
                        "def is_embedding(m):\n    return isinstance(m, torch.nn.Embedding)\n").code
    namespace: dict = {}
    exec(compile(code, "<converted>", "exec"), namespace)
    assert namespace["is_embedding"](mindspore.nn.Embedding(3, 2)), code
    assert not namespace["is_embedding"](mindspore.nn.Dense(3, 2)), code
