"""Small syntax helpers shared by passes and hooks: binding a call's arguments to the
source signature, literals, emitting calls, operands and expressions safe to repeat."""
from __future__ import annotations

import ast
from typing import Any, Collection

import libcst as cst

from transpile.engine.formatting import code_of as _code_of
from transpile.engine.walk import read

from .runtime.registry import define, helper_names


class Unconvertible(Exception):
    """A call that cannot be converted; the message says why."""


# torch's argument parser takes numpy's keyword names for these parameters of its C functions
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim"}


def bind(call: cst.Call, params: tuple[str, ...], kwonly: tuple[str, ...], skip: int = 0) -> dict[str, Any]:
    """Source parameter name -> argument expression (a list for ``*varargs``)."""
    bound: dict[str, Any] = {}
    positional = [p for p in params]
    pos_index = skip
    for arg in call.args:
        if arg.star == "*" and pos_index < len(positional) and positional[pos_index].startswith("*"):
            # x.new_zeros(*size): an unpacked sequence fills the varargs
            bound.setdefault(positional[pos_index][1:], []).append(cst.StarredElement(arg.value))
            continue
        if arg.star:
            raise Unconvertible("arguments passed with * or ** cannot be matched to parameters")
        if arg.keyword is None:
            if pos_index >= len(positional):
                raise Unconvertible("more positional arguments than the signature has")
            name = positional[pos_index]
            if name.startswith("*"):
                bound.setdefault(name[1:], []).append(arg.value)
                continue
            bound[name] = arg.value
            pos_index += 1
        else:
            key = arg.keyword.value
            names = {p.lstrip("*") for p in params} | set(kwonly)
            if key not in names and NUMPY_KEYWORDS.get(key) in names:
                key = NUMPY_KEYWORDS[key]  # torch.cat(xs, axis=1), x.sum(axis=0, keepdims=True)
            if key not in names:
                raise Unconvertible(f"unknown argument {key!r}")
            if key in bound:
                raise Unconvertible(f"argument {key!r} given twice")
            bound[key] = arg.value
    return bound


def is_number(value: Any) -> bool:
    """A real number as ``literal_value`` reads one (an int or a float, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def literal(value: Any) -> cst.BaseExpression:
    """Expression for a TOML value (bool, number, string, list -> tuple)."""
    if isinstance(value, list):
        return cst.parse_expression(repr(tuple(value)))
    return cst.parse_expression(repr(value))


_NAMED_CONSTANTS = {"True": True, "False": False, "None": None}
# Expressions that are never literals: answered without generating their code.
_NEVER_LITERAL = (cst.Attribute, cst.Call, cst.Subscript, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                  cst.GeneratorExp, cst.Comparison, cst.BooleanOperation, cst.IfExp, cst.Await, cst.Yield,
                  cst.FormattedString, cst.NamedExpr, cst.StarredElement)


def literal_value(node: cst.BaseExpression) -> Any:
    """The Python value of a literal expression, or a sentinel ``NotLiteral``."""
    kind = type(node)
    if kind is cst.Name:
        return _NAMED_CONSTANTS.get(node.value, NOT_LITERAL)
    if kind is cst.FormattedString and all(isinstance(p, cst.FormattedStringText) for p in node.parts):
        # f"a b" with nothing substituted is a str (denoising-diffusion writes einsum's equation so)
        text = "".join(p.value for p in node.parts).replace("{{", "{").replace("}}", "}")
        prefix = node.start.replace("f", "").replace("F", "")
        try:
            return ast.literal_eval(prefix + text + node.end)
        except Exception:
            return NOT_LITERAL
    if kind in _NEVER_LITERAL:
        return NOT_LITERAL
    if kind is cst.SimpleString:
        token = node.value
        if token[0] in "'\"" and "\\" not in token and "\r" not in token:  # no prefix, escape or CR: the text between the quotes
            quotes = 3 if token[:3] in ('"""', "'''") else 1
            return token[quotes:-quotes]
    try:
        if kind in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString):
            return ast.literal_eval(node.value)  # the token alone: no code generation
        return ast.literal_eval(_code_of(node))
    except Exception:
        return NOT_LITERAL


class _NotLiteral:
    def __repr__(self) -> str:
        return "<not a literal>"


NOT_LITERAL = _NotLiteral()


def pack_varargs(values: list[cst.BaseExpression]) -> cst.BaseExpression:
    """``f(2, 3)`` -> ``(2, 3)``; a single argument passes as it is (int or tuple);
    ``f(*size)`` -> ``tuple(size)``, ``f(n, *rest)`` -> ``(n, *rest)``."""
    if len(values) == 1:
        if isinstance(values[0], cst.StarredElement):
            return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(values[0].value)])
        return values[0]
    return cst.Tuple([v if isinstance(v, cst.StarredElement) else cst.Element(v) for v in values])


def _parenthesized_generator(value: cst.BaseExpression) -> cst.BaseExpression:
    """``f(t for t in ts)`` -> ``g(x=(t for t in ts))``: a keyword's generator needs its own parentheses."""
    if isinstance(value, cst.GeneratorExp) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


def keyword_call(func: cst.BaseExpression, args: dict[str, cst.BaseExpression]) -> cst.Call:
    """Every argument as a keyword; a ``"*"`` entry holds positional varargs."""
    positional = [cst.Arg(v.value, star="*") if isinstance(v, cst.StarredElement) else cst.Arg(v)
                  for v in args.get("*", ())]
    return cst.Call(
        func=func,
        args=positional + [
            cst.Arg(
                keyword=cst.Name(k),
                value=_parenthesized_generator(v),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            for k, v in args.items()
            if k != "*"
        ],
    )


def code(node: cst.CSTNode) -> str:
    return _code_of(node)


def operand(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` safe to use as an operand or a receiver: parenthesized unless it is a name,
    attribute, call, subscript or number."""
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def operand_code(node: cst.BaseExpression) -> str:
    """Source of ``node`` safe to use as an operand (for code built as text)."""
    return code(operand(node))


def name_chain(node: cst.BaseExpression) -> bool:
    """A name or an attribute chain (``x``, ``self.conv.weight``): a stored value, so a
    hook may write it twice (cheap, same value) and an in-place write through it reaches
    the stored tensor (a subscript may be a copy in MindSpore)."""
    while type(node) is cst.Attribute:
        node = node.value
    return type(node) is cst.Name


def self_chain(node: cst.BaseExpression) -> bool:
    """``self.a`` or ``self.a.b...``: an attribute chain that starts at ``self``."""
    if not isinstance(node, cst.Attribute):
        return False
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value == "self"


def repeatable(node: cst.BaseExpression) -> bool:
    """An expression that may be written (evaluated) twice: names, attribute chains,
    numbers, and subscripts, slices and tuples of them (``x[:, :, 1:, :]``,
    ``self.buf[i, -1]``); never a call."""
    kind = type(node)
    if kind in (cst.Name, cst.Integer, cst.Float, cst.Ellipsis):
        return True
    if kind is cst.Attribute or kind is cst.Index:
        return repeatable(node.value)
    if kind is cst.UnaryOperation:
        return repeatable(node.expression)
    if kind is cst.Tuple:
        return all(repeatable(e.value) for e in node.elements)
    if kind is cst.Subscript:
        return repeatable(node.value) and all(repeatable(e.slice) for e in node.slice)
    if kind is cst.Slice:
        return all(part is None or repeatable(part) for part in (node.lower, node.upper, node.step))
    return False


def first_param(entry) -> str:
    """The target name of a table entry's first source parameter."""
    p = entry.params[0].lstrip("*")
    return entry.rename.get(p, p)


def mindspore_ref(ctx, name: str) -> cst.BaseExpression:
    """``mindspore.<name>`` as the file spells it (``ms.int64``), its import requested."""
    return ctx.reference(f"mindspore.{name}")


def target_call(ctx, target: str, args: dict[str, Any], positional: tuple = ()) -> cst.Call:
    """``target(*positional, **args)`` with ``target`` a qualified name."""
    call = keyword_call(ctx.reference(target), args)
    return call.with_changes(args=[cst.Arg(p) for p in positional] + list(call.args)) if positional else call


def entry_call(ctx, entry, args: dict[str, Any], receiver, target: str | None = None) -> cst.Call:
    """What a table entry converts to: ``target(**args)``, a method's receiver passed as
    the first argument (named ``entry.receiver``, else ``input``)."""
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    return target_call(ctx, target or entry.target, args)


# -- code emitted beside the converted code -------------------------------------------
# Names the emitted definitions take: those of the run-time helpers (rewrites/runtime/),
# and ``_torch_<what>``, ``_Torch<Class>`` and the einops lowerings' for the definitions
# a pass writes from the file's own data (tests/test_emitted_definitions.py checks every
# name the rewrites emit). A module-level definition with such a name is the tool's own
# output from an earlier run: converting a converted file again leaves it (and its body)
# as it is. (tests/test_fuzz.py also calls every API of the tables, which finds the hooks' names.)
EMITTED_PREFIXES = ("_torch_", "_Torch", "_einops_", "_Einops", "_MindSporeEinops", "_special_", "_linalg_", "_lambda_")


def is_emitted_name(name: str) -> bool:
    return name.startswith(EMITTED_PREFIXES) or name in helper_names()


def emitted(ctx, name: str, source: str) -> cst.Name:
    """``name``, defined once per file by ``source`` (its ``{name}``) beside the code
    (``ctx.definitions``; MS205 inserts them after the imports)."""
    define(ctx, name, source.replace("{name}", name))
    return cst.Name(name)


def spelled(ctx, source: str) -> str:
    """``source`` with ``MS.``, ``OPS.`` and ``NN.`` spelled as the file imports
    mindspore, mindspore.ops and mindspore.nn (the imports are requested)."""
    ms_, ops_, nn_ = module_spellings(ctx)
    return source.replace("MS.", f"{ms_}.").replace("OPS.", f"{ops_}.").replace("NN.", f"{nn_}.")


def emitted_spelled(ctx, name: str, source: str) -> cst.Name:
    """``emitted`` of ``source`` as ``spelled`` writes it."""
    return emitted(ctx, name, spelled(ctx, source))


def module_spellings(ctx) -> tuple[str, str, str]:
    """How the file spells mindspore, mindspore.ops and mindspore.nn (imports requested)."""
    return tuple(code(ctx.reference(f"{m}.x")).rsplit(".", 1)[0] for m in ("mindspore", "mindspore.ops", "mindspore.nn"))


def free_name(taken: Collection[str], name: str) -> str:
    """``name``, or ``name`` with a number where it is ``taken`` (``FileFacts.identifiers``
    of a function or the file)."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def is_docstring(stmt) -> bool:
    """A statement that is only a string: a docstring when it comes first."""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def after_imports(body) -> int:
    """After the docstring and the last top-level import (also those in try/if blocks)
    before the first function or class: where emitted definitions go (their bases must be
    imported when they are defined, and files put ``__all__`` or constants between imports)."""
    index = 0
    for i, stmt in enumerate(body):
        if i == 0 and is_docstring(stmt):
            index = 1
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                index = i + 1
            continue
        if isinstance(stmt, (cst.Try, cst.If)) and _only_imports(stmt):
            index = i + 1
            continue
        break
    return index


def _only_imports(stmt) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> None:
            found.append(all(isinstance(s, (cst.Import, cst.ImportFrom, cst.Pass)) for s in node.body))

    read(stmt, Finder())
    return bool(found) and all(found)


def lines_before(updated: cst.SimpleStatementLine, statements) -> cst.CSTNode:
    """``statements`` (small statements) as lines of their own just before ``updated`` (a line
    of one statement), which hands its leading lines (blank lines, comments above it) to the
    first of them: ``lines_in_place_of`` with the line's own statement last."""
    return lines_in_place_of(updated, [*statements, *updated.body]) if statements else updated


class ConditionalDepth(cst.CSTVisitor):
    """A visitor's count of the open places where code may not run, or may run more than
    once: lambdas, comprehensions, conditional expressions, ``and``/``or``
    (``self.conditional``, 0 outside them)."""

    conditional = 0

    def _enter_conditional(self, node) -> None:
        self.conditional += 1

    def _leave_conditional(self, node) -> None:
        self.conditional -= 1

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_conditional
    visit_IfExp = visit_BooleanOperation = _enter_conditional
    leave_Lambda = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_conditional
    leave_IfExp = leave_BooleanOperation = _leave_conditional


def lines_in_place_of(line: cst.SimpleStatementLine, statements: list) -> cst.FlattenSentinel:
    """``statements`` (small statements), each on a line of its own, in place of ``line``: the
    first keeps the comments above it, the last its own comment."""
    out = [cst.SimpleStatementLine(body=[s]) for s in statements]
    out[0] = out[0].with_changes(leading_lines=line.leading_lines)
    out[-1] = out[-1].with_changes(trailing_whitespace=line.trailing_whitespace)
    return cst.FlattenSentinel(out)
