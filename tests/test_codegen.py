"""engine/codegen.py writes exactly what LibCST writes, and positions.start_positions,
which runs on it, finds what LibCST's own code generation finds.

The code of every module of the fixtures and samples (and of a seeded sample of torch/nn
files when torch is installed) must be its source; the code of a seeded sample of their
nodes (every node of the smaller ones) must be ``module.code_for_node(node)``, or raise
what LibCST raises. Nodes built by hand with their default fields (as passes build them)
and layouts other than four spaces and ``\\n`` are checked too, and every node type the
generator has a function for must occur in what is checked.
"""
from __future__ import annotations

import random
import sysconfig
from importlib.metadata import version
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from transpile.engine import codegen, positions
from transpile.engine.formatting import code_of

ROOT = Path(__file__).parent.parent
TORCH_NN = Path(sysconfig.get_paths()["purelib"]) / "torch" / "nn"

# Rarer syntax, so that every node type with a generator function is checked.
HAND_WRITTEN = '''\
from __future__ import annotations  # header comment
import os.path as osp, sys
from . import (a as b,
               c)
from x import *
@decorator(1)

@other . attr
async def f(a, /, b: int = 1, *args: "x", c=2, d, **kw) -> dict[str, int] :
    global g; nonlocal_ = 1 ; x = y = 3
    async for i in range(3): pass
    else:
        break
    async with a as b, c: continue
    while x < 2 <= 3 >= 1 > 0 == +x != 4 is not None is None in y not in z:
        x += 1; x -= 1; x *= 2; x /= 2; x //= 2; x %= 2; x **= 2; x @= m; x &= 1; x |= 1; x ^= 1; x <<= 1; x >>= 1
    else:
        pass
    return
def g(*, a, b=1): raise
def h(a, /): ...
def k(a, *, b): del a, b
class C(Base, metaclass=M): pass
class D(): x: int
class E:
    if a: pass
    elif b and not c or -d: pass
    elif ~e + +f - g * h / i // j % k ** l << m >> n & o | p ^ q @ r: pass
    else: raise E from e
    lam = lambda x, *y, z=1, **w: (x, *y)
    s = {1, 2, *s}; d = {1: 2, **d}; t = (1,); u = (); v = [*a, b][1:2:3, ::2, :, 1:]
    w = x if y else z; j = 1j + 1.5e3 + 0x1F + 1_000
    text = "a" 'b' f"c{d!r:>{e}}" r"f"; data = b"x" rb"y"
    gen = (i for i in x if i), [i for i in x], {i: j for i, j in x}, {i for i in x}
    assert x, "message"
    try:
        yield x
    except (A, B) as e:
        await y
    finally: pass
    try: pass
    except* C: pass
    with (a as b, c as d,): pass
    match x:
        case [1, *rest] | {"k": v, **kw} | Point(x=0) | None if rest: pass
        case _: pass
    print(*args, **kwargs, sep="")
    t[1, 2] = x[a][b](c).d
    (x) = ((y))
'''


def _python_files() -> list[Path]:
    files = sorted((ROOT / "samples").glob("*.py")) + sorted((ROOT / "tests" / "fixtures").glob("**/*.py"))
    if TORCH_NN.is_dir():
        nn = sorted(TORCH_NN.rglob("*.py"))
        files += random.Random(27).sample(nn, min(12, len(nn)))
    return files


class _Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.nodes: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        return True


def _nodes(module: cst.Module) -> list[cst.CSTNode]:
    found = _Nodes()
    module.visit(found)
    return found.nodes


def _outcome(generate):
    try:
        return generate()
    except Exception as exc:  # LibCST raises for a node it cannot write alone (an Annotation, a Param's star)
        return type(exc)


def _check_nodes(module: cst.Module, nodes, seen: set[type]) -> None:
    for node in nodes:
        seen.add(type(node))
        ours = _outcome(lambda: code_of(node, module))
        assert ours == _outcome(lambda: module.code_for_node(node)), (type(node).__name__, ours)


@pytest.fixture(scope="module")
def modules() -> list[tuple[str, str, cst.Module]]:
    found = [("hand-written", HAND_WRITTEN, cst.parse_module(HAND_WRITTEN))]
    for path in _python_files():
        source = path.read_text(encoding="utf-8")
        try:
            found.append((str(path), source, cst.parse_module(source)))
        except cst.ParserSyntaxError:
            continue  # (a fixture may be a file that does not parse)
    return found


def test_module_code_is_the_source(modules):
    assert len(modules) > 400
    for name, source, module in modules:
        assert code_of(module) == source, name


@pytest.mark.parametrize("part", ["samples", "fixtures", "torch"])
def test_node_code_is_libcsts(modules, part):
    """A seeded sample of 40 nodes of each module (all of a smaller one)."""
    rng = random.Random(27)
    chosen = [module for name, _, module in modules if f"/{part}/" in name]
    if not chosen:
        pytest.skip(f"no {part} modules here")
    for module in chosen:
        nodes = _nodes(module)
        _check_nodes(module, nodes if len(nodes) < 40 else rng.sample(nodes, 40), set())


def test_the_generator_follows_the_installed_libcst():
    # On another LibCST release every node goes LibCST's way (correct, but slow): check that
    # release's _codegen_impl of each generated type against codegen.py, then CHECKED_LIBCST.
    assert len(codegen._GEN) > 50, f"LibCST {version('libcst')} is not {codegen.CHECKED_LIBCST}"


def test_hand_written_and_built_node_code_is_libcsts_and_covers_every_generated_type():
    seen: set[type] = set()
    module = cst.parse_module(HAND_WRITTEN)
    _check_nodes(module, _nodes(module), seen)
    # Nodes as passes build them: default whitespace, commas, equals and semicolons.
    for built in _built_nodes():
        _check_nodes(cst.Module(body=[]), _nodes(cst.Module(body=[]).with_changes(body=[built]))[1:] or [built], seen)
    missing = {kind.__name__ for kind, fn in codegen._GEN.items() if fn is not codegen._libcst} - {k.__name__ for k in seen}
    assert not missing


def _built_nodes() -> list[cst.CSTNode]:
    x, y = cst.Name("x"), cst.Name("y")
    call = cst.Call(func=cst.Attribute(value=x, attr=y), args=[cst.Arg(x), cst.Arg(value=y, keyword=cst.Name("k")),
                                                              cst.Arg(x, star="*"), cst.Arg(y, star="**")])
    params = cst.Parameters(posonly_params=[cst.Param(x)], params=[cst.Param(y, default=cst.Integer("1"))],
                            kwonly_params=[cst.Param(cst.Name("z"), annotation=cst.Annotation(cst.Name("int")))],
                            star_kwarg=cst.Param(cst.Name("kw")))
    body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(call), cst.Expr(x)])])
    return [
        call,
        cst.SimpleStatementLine(body=[cst.Expr(call)]),
        cst.SimpleStatementLine(body=[]),
        cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(x)], value=y), cst.Pass(),
                                      cst.AugAssign(x, cst.AddAssign(), y), cst.Return(), cst.Raise(),
                                      cst.AnnAssign(x, cst.Annotation(y)), cst.AnnAssign(x, cst.Annotation(y), y),
                                      cst.Raise(x, cause=cst.From(y)), cst.Continue(), cst.Break()]),
        cst.FunctionDef(name=cst.Name("f"), params=params, body=body, returns=cst.Annotation(cst.Name("int")),
                        decorators=[cst.Decorator(x)]),
        cst.FunctionDef(name=cst.Name("f"), params=cst.Parameters(star_arg=cst.ParamStar(),
                                                                  kwonly_params=[cst.Param(x)]),
                        body=cst.IndentedBlock(body=[])),
        cst.FunctionDef(name=cst.Name("f"), params=cst.Parameters(params=[cst.Param(x)], kwonly_params=[cst.Param(y)]),
                        body=cst.SimpleStatementSuite(body=[cst.Pass()])),
        cst.FunctionDef(name=cst.Name("f"), params=cst.Parameters(star_arg=cst.Param(x, star="*")),
                        body=cst.IndentedBlock(body=[], indent="\t")),
        cst.ClassDef(name=cst.Name("C"), body=body, bases=[cst.Arg(x)], keywords=[cst.Arg(y, keyword=cst.Name("m"))]),
        cst.ClassDef(name=cst.Name("C"), body=body),
        cst.If(test=x, body=body, orelse=cst.If(test=y, body=body, orelse=cst.Else(body=body))),
        cst.For(target=x, iter=y, body=body, orelse=cst.Else(body=body)),
        cst.While(test=x, body=body),
        cst.Subscript(value=x, slice=[cst.SubscriptElement(cst.Index(x)),
                                      cst.SubscriptElement(cst.Slice(lower=x, upper=None, step=y)),
                                      cst.SubscriptElement(cst.Index(y, star="*"))]),
        cst.Tuple([cst.Element(x)]), cst.Tuple([cst.Element(x), cst.StarredElement(y)]), cst.Tuple([]),
        cst.List([cst.Element(x), cst.Element(y)]), cst.Set([cst.Element(x), cst.Element(y)]),
        cst.Dict([cst.DictElement(x, y), cst.DictElement(y, x)]),
        cst.IfExp(test=x, body=y, orelse=x), cst.BinaryOperation(x, cst.Add(), y, lpar=[cst.LeftParen()],
                                                                 rpar=[cst.RightParen()]),
        cst.Comparison(x, [cst.ComparisonTarget(cst.NotEqual(value="<>"), y), cst.ComparisonTarget(cst.IsNot(), y)]),
        cst.UnaryOperation(cst.Not(), x), cst.BooleanOperation(x, cst.Or(), y),
        cst.ConcatenatedString(cst.SimpleString('"a"'), cst.SimpleString('"b"')),
        cst.Name("x", lpar=[cst.LeftParen(), cst.LeftParen()], rpar=[cst.RightParen(), cst.RightParen()]),
        cst.Ellipsis(), cst.Imaginary("1j"), cst.Float("1."),
        cst.EmptyLine(comment=cst.Comment("# c")), cst.Newline("\r\n"),
    ]


@pytest.mark.parametrize("indent,newline", [("\t", "\r\n"), ("  ", "\r"), ("    ", "\n")])
def test_the_module_layout_is_used(indent, newline):
    module = cst.parse_module(HAND_WRITTEN).with_changes(default_indent=indent, default_newline=newline)
    for built in _built_nodes():
        assert _outcome(lambda: code_of(built, module)) == _outcome(lambda: module.code_for_node(built))
    for node in _nodes(module):
        assert _outcome(lambda: code_of(node, module)) == _outcome(lambda: module.code_for_node(node))


@pytest.mark.parametrize("trailing", [True, False])
def test_module_without_trailing_newline_or_body(trailing):
    for module in (cst.Module(body=[], has_trailing_newline=trailing),
                   cst.parse_module("x = 1\n# end\n").with_changes(has_trailing_newline=trailing),
                   cst.parse_module("\n\n").with_changes(has_trailing_newline=trailing)):
        assert code_of(module) == module.code


# -- positions ---------------------------------------------------------------------------

def _libcst_positions(module: cst.Module, nodes) -> dict[int, tuple[int, int]]:
    """start_positions as it was before engine/codegen.py: LibCST's code generation alone."""
    state = positions._WantedPositions(module, {id(n) for n in nodes})
    try:
        module._codegen(state)
    except positions._AllFound:
        pass
    return state.found


def test_start_positions_are_those_of_libcsts_code_generation(modules):
    rng = random.Random(27)
    checked = 0
    for _, _, module in rng.sample(modules, 60) + modules[:1]:
        nodes = _nodes(module)
        wanted_sets = [rng.sample(nodes, min(len(nodes), k)) for k in (1, 1, 2, 5, 20)]
        wanted_sets.append([n for n in nodes if type(n) not in codegen.INLINED and rng.random() < 0.05])
        wanted_sets.append([n for n in nodes if isinstance(n, (cst.Call, cst.Name, cst.Attribute))][-3:])
        for wanted in wanted_sets:
            assert positions.start_positions(module, wanted) == _libcst_positions(module, wanted)
            checked += len(wanted)
    assert checked > 1000


def test_start_positions_agree_with_libcsts_position_provider():
    wrapper = MetadataWrapper(cst.parse_module(HAND_WRITTEN), unsafe_skip_copy=True)
    starts = wrapper.resolve(PositionProvider)
    nodes = [n for n in _nodes(wrapper.module) if isinstance(n, (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement))]
    found = positions.start_positions(wrapper.module, nodes)
    assert {id(n): (starts[n].start.line, starts[n].start.column) for n in nodes} == found


def test_start_positions_of_a_node_used_twice():
    shared = cst.Name("shared")
    module = cst.Module(body=[cst.SimpleStatementLine([cst.Expr(cst.Call(func=cst.Name("f"), args=[cst.Arg(shared)]))]),
                              cst.SimpleStatementLine([cst.Expr(shared)])])
    for wanted in ([shared], [shared, module.body[1]], [module.body[1].body[0], shared]):
        assert positions.start_positions(module, wanted) == _libcst_positions(module, wanted)
