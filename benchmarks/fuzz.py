"""Fuzz the converter: generated programs and mutated real model files.

Every input that parses is converted and must satisfy three properties:

- ``internal``: no exception out of ``transpile.convert_code`` and no MS999 diagnostic;
- ``unparsable``: the output parses (a ``failed`` result returns the input, which is
  fine, unless it failed because the converted code did not parse: that is a pass
  producing broken code, which the pipeline only caught);
- ``idempotent``: converting a successful output again gives it back unchanged.

Inputs come from two sources. Generated programs (hypothesmith) get torch imports and
torch calls spliced in, so that the passes run (a file that never names torch takes a
cheap path). Mutants of real files (samples/, the fixtures, benchmarks/.work/src/) are
edited at the statement and expression level by a ``random.Random`` seeded with the
file's path and a number, so a failure is reproducible from ``(path, seed)``.

    .venv/bin/python benchmarks/fuzz.py --minutes 10 [--out DIR] [--debug]

prints how many inputs were tried and how many failed each property, and writes each
failing input (and a statement-level minimized version) to ``--out`` with its seed.
"""
from __future__ import annotations

import argparse
import ast
import functools
import json
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import libcst as cst

ROOT = Path(__file__).resolve().parent.parent
PROPERTIES = ("internal", "unparsable", "idempotent")
TORCH_HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
# The pipeline's own safety net: a pass produced code that does not parse.
_BROKEN_OUTPUT = "the converted code does not parse"


# ---------------------------------------------------------------------------- properties

def parses(source: str) -> bool:
    """Whether CPython compiles ``source`` (what "an input that parses" means here)."""
    try:
        compile(source, "<fuzz>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def check(source: str, *, debug: bool = False) -> dict[str, str]:
    """The properties ``source`` violates, each with what went wrong (empty: all hold)."""
    from transpile import convert_code

    try:
        result = convert_code(source, filename="fuzz.py", debug=debug)
    except Exception as exc:  # noqa: BLE001 - any exception is the finding
        return {"internal": f"{type(exc).__name__}: {exc}"[:500]}
    failures = {}
    internal = [d.message for d in result.diagnostics if d.code == "MS999"]
    if internal:
        failures["internal"] = internal[0][:500]
    broken = [d.message for d in result.diagnostics if _BROKEN_OUTPUT in d.message]
    if broken or not parses(result.code):
        failures["unparsable"] = (broken or ["output does not compile"])[0][:500]
    if result.failed or failures:
        return failures
    try:
        again = convert_code(result.code, filename="fuzz.py", debug=debug)
    except Exception as exc:  # noqa: BLE001
        return {"internal": f"second pass: {type(exc).__name__}: {exc}"[:500]}
    if again.code != result.code:
        failures["idempotent"] = _first_difference(result.code, again.code)
    return failures


def _first_difference(first: str, second: str) -> str:
    """The first line where two outputs differ, for the report."""
    a, b = first.splitlines(), second.splitlines()
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {i}: {x.strip()!r} -> {y.strip()!r}"
    return f"length {len(a)} -> {len(b)} lines"


# ---------------------------------------------------------------------------- the API tables

@dataclass(frozen=True)
class Apis:
    """Source APIs of the tables, by how they are spelled in code."""

    functions: tuple[str, ...]  # dotted callables: torch.cat, F.relu, nn.init.zeros_
    classes: tuple[str, ...]  # nn.Conv2d, ...
    methods: tuple[str, ...]  # Tensor method names: view, sum_to_size, add_, ...
    keywords: tuple[str, ...] = ("dim", "keepdim", "input", "other", "out", "inplace", "bias", "dtype",
                                 "device", "p", "eps", "kernel_size", "stride", "padding", "size", "x")


def _spelled(source: str) -> str:
    """The spelling a model file uses for a qualified torch name (the header's aliases)."""
    for prefix, alias in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if source.startswith(prefix):
            return alias + source[len(prefix):]
    return source


@functools.lru_cache(maxsize=1)
def apis() -> Apis:
    """Every known source API, split by kind (sorted: draws depend only on the seed)."""
    from transpile.api import list_apis

    functions, classes, methods = set(), set(), set()
    for api in list_apis():
        if api.kind == "method" and api.source.startswith("Tensor."):
            methods.add(api.source.split(".", 1)[1])
        elif api.kind == "module_method":
            methods.add(api.source.rsplit(".", 1)[1])
        elif api.kind == "class":
            classes.add(_spelled(api.source))
        elif api.kind == "function":
            functions.add(_spelled(api.source))
    return Apis(tuple(sorted(functions)), tuple(sorted(classes)), tuple(sorted(methods)))


# ---------------------------------------------------------------------------- mutations

_LITERALS = ("0", "1", "-1", "2", "3", "1000", "2 ** 31", "0.0", "1e-6", "-0.5", "float('inf')", "True", "False",
             "None", "'mean'", "(2, 3)", "[1, -1]", "...")
_WRAPPERS = ("torch.abs({})", "F.relu({})", "({}).float()", "({}).view(-1)", "torch.cat([{0}, {0}], dim=-1)",
             "({}).to(x.device)", "({})[0]", "({})[..., None]", "({}).transpose(0, 1)", "list({})",
             "torch.tensor({})", "({}).sum(dim=1, keepdim=True)", "({}).mean()", "({}).item()",
             "({}).masked_fill(m, 0)", "({}).clone().detach()", "({})[m.to(x.device)]")
_BLOCKS = ("if x is not None:\n    pass\n", "for _i in range(2):\n    pass\n", "with torch.no_grad():\n    pass\n",
           "while True:\n    pass\n    break\n", "def _inner(x):\n    pass\n",
           "try:\n    pass\nexcept Exception:\n    pass\n", "if self.training:\n    pass\nelse:\n    pass\n")


class _Collector(cst.CSTVisitor):
    """Collects the nodes a mutation can target, in tree order."""

    def __init__(self) -> None:
        self.blocks: list[cst.CSTNode] = []  # Module / IndentedBlock: statement lists
        self.calls: list[cst.Call] = []
        self.expressions: list[cst.BaseExpression] = []
        self.literals: list[cst.BaseExpression] = []
        self.statements: list[cst.CSTNode] = []

    def visit_Module(self, node: cst.Module) -> None:
        self.blocks.append(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statements.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        self.expressions.append(node)

    def visit_Integer(self, node: cst.Integer) -> None:
        self.literals.append(node)

    def visit_Float(self, node: cst.Float) -> None:
        self.literals.append(node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.literals.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("True", "False", "None"):
            self.literals.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.expressions.append(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.expressions.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.expressions.append(node)


class _Replace(cst.CSTTransformer):
    """Replaces one node (by identity) with what ``make(updated)`` returns."""

    def __init__(self, target: cst.CSTNode, make: Callable[[cst.CSTNode], cst.CSTNode]):
        super().__init__()
        self.target, self.make = target, make

    def on_leave(self, original, updated):
        return self.make(updated) if original is self.target else updated


def _replace(module: cst.Module, target: cst.CSTNode, make) -> cst.Module:
    return module.visit(_Replace(target, make))


def _body_list(block) -> list:
    return list(block.body)


def _statement_edit(rng: random.Random, module: cst.Module, found: _Collector) -> cst.Module:
    """Drop, duplicate or swap statements of one block, or nest one in a new block."""
    block = rng.choice(found.blocks)
    body = _body_list(block)
    if not body:
        return module
    i = rng.randrange(len(body))
    kind = rng.choice(("drop", "duplicate", "swap", "nest"))
    if kind == "drop":
        del body[i]
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()])]
    elif kind == "duplicate":
        body.insert(i, body[i])
    elif kind == "swap" and len(body) > 1:
        j = rng.randrange(len(body))
        body[i], body[j] = body[j], body[i]
    elif kind == "nest":
        wrapper = cst.parse_statement(rng.choice(_BLOCKS))
        inner = wrapper.body.with_changes(body=[body[i]])
        body[i] = wrapper.with_changes(body=inner)
    return _replace(module, block, lambda node: node.with_changes(body=body))


def _swap_call(rng: random.Random, module: cst.Module, found: _Collector) -> cst.Module:
    """Call another API of the tables: a function, a layer class or a Tensor method."""
    if not found.calls:
        return module
    call = rng.choice(found.calls)
    table = apis()
    if isinstance(call.func, cst.Attribute) and rng.random() < 0.5:
        method = cst.Name(rng.choice(table.methods))
        return _replace(module, call, lambda node: node.with_changes(func=node.func.with_changes(attr=method)))
    func = cst.parse_expression(rng.choice(table.classes if rng.random() < 0.3 else table.functions))
    return _replace(module, call, lambda node: node.with_changes(func=func))


def _keywords(rng: random.Random, module: cst.Module, found: _Collector) -> cst.Module:
    """Turn positional arguments into keywords, rename a keyword, or drop an argument."""
    calls = [c for c in found.calls if c.args]
    if not calls:
        return module
    call = rng.choice(calls)
    names = apis().keywords

    def edit(node: cst.Call) -> cst.Call:
        args = list(node.args)
        i = rng.randrange(len(args))
        if args[i].star:
            return node
        if rng.random() < 0.2:
            del args[i]
            return node.with_changes(args=_fix_commas(args))
        name = cst.Name(rng.choice(names))
        equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        args[i] = args[i].with_changes(keyword=name, equal=equal)
        # keywords must follow positionals: everything after a new keyword becomes one
        for j in range(i + 1, len(args)):
            if args[j].keyword is None and not args[j].star:
                args[j] = args[j].with_changes(keyword=cst.Name(f"{rng.choice(names)}{j}"), equal=equal)
        return node.with_changes(args=_fix_commas(args))

    return _replace(module, call, edit)


def _fix_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Every argument but the last keeps a comma (one was dropped or moved)."""
    fixed = []
    for i, arg in enumerate(args):
        if i < len(args) - 1 and arg.comma is cst.MaybeSentinel.DEFAULT:
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fixed.append(arg)
    return fixed


def _wrap(rng: random.Random, module: cst.Module, found: _Collector) -> cst.Module:
    """Wrap an expression in a torch call, a method chain or an index."""
    if not found.expressions:
        return module
    target = rng.choice(found.expressions)
    template = rng.choice(_WRAPPERS)

    def make(node: cst.BaseExpression) -> cst.BaseExpression:
        return cst.parse_expression(template.replace("{}", "{0}").format(cst.Module([]).code_for_node(node)))

    return _replace(module, target, make)


def _literal(rng: random.Random, module: cst.Module, found: _Collector) -> cst.Module:
    """Change a literal to another (of any type: the converter must not assume types)."""
    if not found.literals:
        return module
    target = rng.choice(found.literals)
    value = cst.parse_expression(rng.choice(_LITERALS))
    return _replace(module, target, lambda node: value)


MUTATIONS = (_statement_edit, _swap_call, _keywords, _wrap, _literal)


def mutate(source: str, rng: random.Random, edits: int) -> str | None:
    """``source`` after ``edits`` random mutations, or None when the result does not parse."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    for _ in range(edits):
        found = _Collector()
        module.visit(found)
        try:
            module = rng.choice(MUTATIONS)(rng, module, found)
        except Exception:  # noqa: BLE001 - LibCST refuses some edits (a number in a
            continue  # concatenated string): skip that edit
    try:
        code = module.code
    except Exception:  # noqa: BLE001 - an invalid tree does not print
        return None
    return code if code != source and parses(code) else None


def seed_files(include_work: bool = True) -> list[Path]:
    """Real model files to mutate: samples, fixture inputs and (when present) benchmark sources."""
    files = sorted((ROOT / "samples").glob("*.py"))
    files += sorted(p for p in (ROOT / "tests" / "fixtures").glob("*/*.py") if not p.name.endswith(".expected.py"))
    work = ROOT / "benchmarks" / ".work" / "src"
    if include_work and work.is_dir():
        files += sorted(p for p in work.rglob("*.py") if p.is_file() and p.stat().st_size < 200_000)
    return files


def mutant(path: Path, seed: int) -> str | None:
    """The mutant of ``path`` for ``seed`` (always the same one), or None if it does not parse."""
    rng = random.Random(f"{path.relative_to(ROOT)}:{seed}")
    source = path.read_text(encoding="utf-8", errors="replace")
    if not source.strip():
        return None
    return mutate(with_torch_imports(source), rng, rng.randint(1, 4))


def with_torch_imports(source: str) -> str:
    """``source`` importing torch, nn and F (after its docstring and __future__ imports),
    so that a call swapped for another API names something the file binds."""
    lines = source.splitlines(keepends=True)
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return source
    after = 0
    for i, node in enumerate(body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not docstring and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        after = node.end_lineno
    return "".join(lines[:after]) + ("\n" if after and not lines[after - 1].endswith("\n") else "") \
        + TORCH_HEADER + "".join(lines[after:])


# ---------------------------------------------------------------------------- generated programs

class _Splice(cst.CSTTransformer):
    """Makes a generated program call torch: renames calls and attributes to table APIs."""

    def __init__(self, rng: random.Random, rate: float = 0.5):
        super().__init__()
        self.rng, self.rate = rng, rate
        self.table = apis()

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.rng.random() >= self.rate:
            return updated
        if isinstance(updated.func, cst.Attribute) and self.rng.random() < 0.5:
            return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(self.rng.choice(self.table.methods))))
        names = self.table.classes if self.rng.random() < 0.2 else self.table.functions
        return updated.with_changes(func=cst.parse_expression(self.rng.choice(names)))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        if self.rng.random() < self.rate / 2:
            return updated.with_changes(attr=cst.Name(self.rng.choice(self.table.methods)))
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        # Only plain loads are safe to replace; a target or a keyword must stay a Name,
        # which the caller filters out by checking that the result still compiles.
        if self.rng.random() < self.rate / 4:
            return cst.parse_expression(f"torch.randn({self.rng.randint(1, 4)}, {self.rng.randint(1, 4)})")
        return updated


_MODULE_TEMPLATE = "class FuzzNet(nn.Module):\n    def forward(self, x, m=None):\n        pass\n"


def torchify(program: str, rng: random.Random) -> str | None:
    """A generated program made to use torch (or None when the result does not compile)."""
    try:
        module = cst.parse_module(program)
        module = module.visit(_Splice(rng))
        body = list(module.body)
        if body and rng.random() < 0.5:  # inside a Module's forward, where the Cell passes run
            cls = cst.parse_statement(_MODULE_TEMPLATE)
            forward = cls.body.body[0]
            forward = forward.with_changes(body=forward.body.with_changes(body=body))
            body = [cls.with_changes(body=cls.body.with_changes(body=[forward]))]
        code = TORCH_HEADER + module.with_changes(body=body, header=()).code
    except Exception:  # noqa: BLE001 - LibCST rejects some spliced trees: not an input
        return None
    return code if parses(code) else None


# Names a generated statement reads and writes (the Module below binds them all).
_NAMES = ("x", "m", "y", "self.w", "self.proj", "self.norm", "x.shape", "x.device", "x.dtype", "x.size(0)")
_TARGETS = ("x", "y", "m", "self.w", "x[0]", "x[:, 1:]", "y[m]", "x[..., None]", "a, b", "x.data", "self.cache")
_OPERATORS = ("+", "-", "*", "/", "@", "**", "//", "%", "&", "|", "==", "<", ">=", "and", "or", "is not", "in")
_INDICES = (":", "..., None", "::2", "1:", ":, 0", "m", "-1", "None", "x > 0", "[0, 1]")
_HEADS = ("if {}:", "while {}:", "for i in {}:", "with {}:", "if not {}:")
_NET = """class FuzzNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.proj = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.cache = None

    def forward(self, x, m=None):
        y = x
{forward}
        return x


def helper(x, m):
    y = x
{helper}
"""


def _call(func: str, args: list[str], keywords: list[tuple[str, str]]) -> str:
    """``func(args, k=v)`` with each keyword once."""
    parts = args + [f"{k}={v}" for k, v in dict(keywords).items()]
    return f"{func}({', '.join(parts)})"


def torch_expressions():
    """Hypothesis strategy: expressions built of the tables' APIs, operators and indexing."""
    from hypothesis import strategies as st

    table = apis()
    leaves = st.one_of(st.sampled_from(_NAMES), st.sampled_from(_LITERALS), st.integers(-3, 8).map(str))

    def extend(inner):
        args = st.lists(inner, max_size=3)
        keywords = st.lists(st.tuples(st.sampled_from(table.keywords), inner), max_size=2)
        return st.one_of(
            st.builds(_call, st.sampled_from(table.functions), args, keywords),
            st.builds(lambda cls, a, k, b: f"{_call(cls, a, k)}({b})", st.sampled_from(table.classes), args, keywords, inner),
            st.builds(lambda r, name, a, k: _call(f"({r}).{name}", a, k), inner, st.sampled_from(table.methods), args, keywords),
            st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from(_OPERATORS), inner),
            st.builds(lambda a, i: f"({a})[{i}]", inner, st.one_of(inner, st.sampled_from(_INDICES))),
            st.builds(lambda a, b, c: f"({a} if {b} else {c})", inner, inner, inner),
            st.builds(lambda a: f"[{a} for _ in range(2)]", inner),
        )

    return st.recursive(leaves, extend, max_leaves=10)


def torch_statements():
    """Hypothesis strategy: statements (one or a nested block) over those expressions."""
    from hypothesis import strategies as st

    expr = torch_expressions()
    simple = st.one_of(
        st.builds("{} = {}".format, st.sampled_from(_TARGETS), expr),
        st.builds("{} {}= {}".format, st.sampled_from(_TARGETS[:8]), st.sampled_from(("+", "*", "-", "/")), expr),
        st.builds("return {}".format, expr),
        expr,
        st.builds("assert {}".format, expr),
    )

    def block(inner):
        body = st.lists(inner, min_size=1, max_size=3).map(lambda lines: "\n".join(lines))
        return st.builds(lambda head, e, b: head.format(e) + "\n" + _indent(b, 4), st.sampled_from(_HEADS), expr, body)

    return st.recursive(simple, block, max_leaves=6)


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line if line.strip() else line for line in text.split("\n"))


def assemble(program: str, forward: list[str], helper: list[str], rng: random.Random) -> str | None:
    """One generated file: a hypothesmith program (torch spliced in) and a Module whose
    forward and a helper function run generated torch statements; None if it does not compile."""
    spliced = torchify(program, rng) or TORCH_HEADER
    net = _NET.format(forward=_indent("\n".join(forward) or "pass", 8), helper=_indent("\n".join(helper) or "pass", 4))
    code = spliced + "\n\n" + net
    return code if parses(code) else None


def program_strategy():
    """Hypothesis strategy: generated programs that use torch and compile."""
    import hypothesmith
    from hypothesis import strategies as st

    statements = torch_statements()
    return st.builds(assemble, hypothesmith.from_grammar(), st.lists(statements, min_size=1, max_size=5),
                     st.lists(statements, max_size=3), st.randoms(use_true_random=False)).filter(
        lambda code: code is not None)


# ---------------------------------------------------------------------------- every API

# A torch use no table converts: the file keeps importing torch, so that converting it
# again runs the passes over everything, the emitted helpers included.
_STAYS_TORCH = "_kept = torch.no_such_api\n"


def api_calls() -> list[tuple[str, str, list[str]]]:
    """(source API, call, its parameters) for each API of the tables: called with every
    parameter of its signature, by position (a method on ``x``, a module method on ``self``)."""
    from transpile.rewrites.table_calls import tables

    calls = []
    for entry in tables().all_entries():
        params = [p.lstrip("*") for p in entry.params]
        args = ", ".join(params)
        if entry.kind == "method":
            call = f"x.{entry.source.split('.', 1)[1]}({args})"
        elif entry.kind == "module_method":
            call = f"self.{entry.source.rsplit('.', 1)[1]}({args})"
        elif entry.kind == "attribute":
            call = _spelled(entry.source)
        else:
            call = f"{_spelled(entry.source)}({args})"
        calls.append((entry.source, call, params))
    return calls


def api_program(calls: list[tuple[str, str, list[str]]]) -> str:
    """A Module whose forward (one method per call) makes the calls, beside a torch use
    that stays; None when it does not compile (a parameter named like a keyword)."""
    methods = []
    for i, (_, call, params) in enumerate(calls):
        inputs = ", ".join(["x", *(p for p in dict.fromkeys(params) if p not in ("x", "self"))])
        name = "forward" if len(calls) == 1 else f"forward{i}"
        methods.append(f"    def {name}(self, {inputs}):\n        return {call}\n")
    return f"{TORCH_HEADER}{_STAYS_TORCH}\n\nclass Net(nn.Module):\n" + "\n".join(methods)


def api_programs(per_program: int = 1) -> Iterator[tuple[str, str]]:
    """(first source API, program) for the APIs of the tables, ``per_program`` to a file."""
    calls = [c for c in api_calls() if parses(api_program([c]))]
    for i in range(0, len(calls), per_program):
        chunk = calls[i:i + per_program]
        yield chunk[0][0], api_program(chunk)


# ---------------------------------------------------------------------------- minimizing

def _blocks(module: cst.Module) -> list[cst.CSTNode]:
    found = _Collector()
    module.visit(found)
    return found.blocks


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(part, (cst.Import, cst.ImportFrom)) for part in stmt.body)


def _shrink_block(module: cst.Module, index: int, fails: Callable[[str], bool], stop: float) -> cst.Module:
    """Remove chunks of statements from the ``index``-th block (halves, then quarters,
    ... then single statements) while ``fails`` holds."""
    blocks = _blocks(module)
    if index >= len(blocks):
        return module
    block = blocks[index]
    body = _body_list(block)
    chunk = max(len(body) // 2, 1)
    while chunk >= 1 and time.monotonic() < stop:
        i = 0
        while i < len(body) and time.monotonic() < stop:
            kept = [stmt for stmt in body[i:i + chunk] if _is_import(stmt)]  # the names stay bound
            rest = body[:i] + kept + body[i + chunk:] or [cst.SimpleStatementLine([cst.Pass()])]
            smaller = _replace(module, block, lambda node, rest=rest: node.with_changes(body=rest))
            code = smaller.code
            if rest != body and parses(code) and fails(code):
                module, body = smaller, rest
                block = _blocks(module)[index]
                i += len(kept)
            else:
                i += chunk
        chunk //= 2
    return module


def minimize(source: str, fails: Callable[[str], bool], budget: float = 60.0) -> str:
    """A smaller source that still ``fails``: chunks of statements removed from each
    block, outermost first, until nothing more can go (or the budget is spent)."""
    stop = time.monotonic() + budget
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return source
    size = None
    while size != len(module.code) and time.monotonic() < stop:
        size = len(module.code)
        index = 0
        while index < len(_blocks(module)) and time.monotonic() < stop:
            module = _shrink_block(module, index, fails, stop)
            index += 1
    return module.code


# ---------------------------------------------------------------------------- the long run

@dataclass
class Tally:
    """Inputs tried and failures per property; failing inputs written to ``out``.

    Each failing input is saved; only the first of each kind (``kind_of``) is minimized,
    so that one recurring bug does not spend the run shrinking copies of itself."""

    out: Path
    debug: bool = False
    minimize_budget: float = 30.0
    progress: Callable[[str], None] | None = None  # called with a status line now and then
    tried: int = 0
    failed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROPERTIES, 0))
    records: list[dict] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    _last_progress: float = field(default_factory=time.monotonic)

    def run(self, source: str, name: str) -> dict[str, str]:
        """Check one input; record and save it when a property fails."""
        self.tried += 1
        failures = check(source, debug=self.debug)
        for prop in failures:
            self.failed[prop] += 1
        if failures:
            self._save(source, name, failures)
        if self.progress is not None and time.monotonic() - self._last_progress > 30:
            self._last_progress = time.monotonic()
            self.progress(self.summary())
        return failures

    def summary(self) -> str:
        counts = ", ".join(f"{prop} {n}" for prop, n in self.failed.items())
        return f"tried {self.tried}; failed: {counts}; {len(self.kinds)} kinds"

    def _save(self, source: str, name: str, failures: dict[str, str]) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        stem = name.replace("/", "__").replace(":", "-")
        (self.out / f"{stem}.py").write_text(source, encoding="utf-8")
        record = {"input": name, "failures": failures, "file": f"{stem}.py"}
        new_kinds = {kind_of(prop, message) for prop, message in failures.items()} - self.kinds
        if new_kinds:
            self.kinds |= new_kinds
            props = set(failures)
            small = minimize(source, lambda code: bool(props & set(check(code, debug=self.debug))),
                             self.minimize_budget)
            (self.out / f"{stem}.min.py").write_text(small, encoding="utf-8")
            record["minimized"] = f"{stem}.min.py"
        self.records.append(record)
        with open(self.out / "failures.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")


def kind_of(prop: str, message: str) -> str:
    """What tells failures apart: the exception and its message, or the line a second
    pass produced (not the first pass's line), without numbers (lines, suffixes)."""
    message = message.split(" -> ", 1)[-1] if prop == "idempotent" else message
    return prop + ":" + re.sub(r"\d+", "N", message)[:80]


def run_mutants(tally: Tally, files: list[Path], seeds: Iterable[int], stop: float) -> None:
    """Mutants of every file for each seed, until ``stop`` (a monotonic time)."""
    for seed in seeds:
        for path in files:
            if time.monotonic() > stop:
                return
            code = mutant(path, seed)
            if code is not None:
                tally.run(code, f"mutant:{path.relative_to(ROOT)}:{seed}")


def run_generated(tally: Tally, stop: float, chunk: int = 50) -> None:
    """Generated programs in chunks of ``chunk`` examples, hypothesis seed 0, 1, 2, ..."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    for chunk_seed in range(10**9):
        if time.monotonic() > stop:
            return
        count = iter(range(chunk))

        @seed(chunk_seed)
        @settings(max_examples=chunk, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(program_strategy())
        def one(code: str) -> None:
            index = next(count, chunk)
            if time.monotonic() <= stop:
                tally.run(code, f"generated:{chunk_seed}:{index}")

        one()


def _generators_installed() -> bool:
    """Whether hypothesis and hypothesmith, which generate programs, can be imported."""
    try:
        import hypothesis  # noqa: F401
        import hypothesmith  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="total time (default 10)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / ".work" / "fuzz-failures",
                        help="directory for failing inputs (default benchmarks/.work/fuzz-failures)")
    parser.add_argument("--debug", action="store_true", help="convert with debug=True (re-parse every replacement)")
    parser.add_argument("--first-seed", type=int, default=0, help="first mutation seed (default 0)")
    parser.add_argument("--generated-share", type=float, default=0.3,
                        help="share of the time spent on generated programs (default 0.3; 0: none, and hypothesis is not needed)")
    args = parser.parse_args(argv)
    if args.generated_share > 0 and not _generators_installed():
        print("fuzz.py: generated programs need hypothesis and hypothesmith (pip install -e '.[dev]'); "
              "--generated-share 0 runs without them", file=sys.stderr)
        return 2
    start = time.monotonic()
    stop = start + args.minutes * 60
    (args.out / "failures.jsonl").unlink(missing_ok=True)  # the list is this run's
    tally = Tally(args.out, debug=args.debug, progress=lambda line: print(line, file=sys.stderr, flush=True))
    for source, code in api_programs():
        if time.monotonic() > stop:
            break
        tally.run(code, f"api:{source}")
    calls = tally.tried
    if args.generated_share > 0:  # hypothesis is imported only when generated programs are asked for
        run_generated(tally, time.monotonic() + (stop - time.monotonic()) * args.generated_share)
    generated = tally.tried - calls
    files = seed_files()
    run_mutants(tally, files, range(args.first_seed, 10**9), stop)
    elapsed = time.monotonic() - start
    print(f"tried {tally.tried} inputs in {elapsed:.0f} s ({calls} API calls, {generated} generated programs, "
          f"{tally.tried - generated - calls} mutants of {len(files)} files)")
    for prop in PROPERTIES:
        print(f"  {prop:11s} {tally.failed[prop]} failed")
    print(f"  {len(tally.kinds)} kinds of failure (the first input of each minimized)")
    if tally.records:
        print(f"failing inputs (and minimized versions) in {args.out}; their list: {args.out / 'failures.jsonl'}")
    return 1 if tally.records else 0


if __name__ == "__main__":
    sys.exit(main())
