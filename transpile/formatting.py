"""Format only the statements the passes changed, with black."""
from __future__ import annotations

import ast
import functools
from contextlib import nullcontext

import libcst as cst
from libcst._nodes.internal import CodegenState


@functools.lru_cache(maxsize=1)
def _black():
    import black

    return black


@functools.lru_cache(maxsize=4096)
def black_layout(code: str, line_length: int = 88) -> str:
    """``code`` as black lays it out (black's default mode but for the line length).
    Remembered: the same statements and emitted definitions recur in every file, and
    black is the costliest step of a conversion. Raises what black raises."""
    black = _black()
    return black.format_str(code, mode=black.Mode(line_length=line_length))


_NOTHING = nullcontext()


class _PlainCodegen(CodegenState):
    """LibCST's code generation state but for ``record_syntactic_position``: LibCST enters
    that generator-based context manager around every parenthesizable expression, only
    for metadata providers to override, and it was a sixth of each code generation."""

    __slots__ = ()

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _NOTHING


_DEFAULT_LAYOUT = cst.Module(body=[])


def code_of(node: cst.CSTNode, module: cst.Module | None = None) -> str:
    """The text ``module.code_for_node(node)`` gives (``node.code`` for a module itself),
    generated faster; without a module, in the default layout (four spaces, ``\\n``)."""
    if module is None:
        module = node if isinstance(node, cst.Module) else _DEFAULT_LAYOUT
    state = _PlainCodegen(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return "".join(state.tokens)


class InvalidStatement(ValueError):
    """A changed statement whose code is not valid Python."""


def format_statement(stmt: cst.SimpleStatementLine, indent_width: int) -> cst.SimpleStatementLine:
    """Run black over one changed statement; keep its leading comments and blank lines.
    Raises InvalidStatement when the statement's code does not parse."""
    bare = stmt.with_changes(leading_lines=())
    code = code_of(bare)  # as cst.Module(body=[bare]).code
    try:
        formatted = black_layout(code, max(40, 88 - indent_width))
        if formatted == code:
            return stmt  # already black's layout: no need to parse it back
        module = cst.parse_module(formatted)
    except Exception:  # black refuses some valid code; the statement stays as generated
        try:
            ast.parse(code)
        except SyntaxError as exc:
            raise InvalidStatement(f"{exc.msg} in {code.strip().splitlines()[0][:60]!r}") from None
        return stmt
    if len(module.body) != 1 or not isinstance(module.body[0], cst.SimpleStatementLine):
        return stmt  # black split ``a; b``: keep one statement line
    return module.body[0].with_changes(leading_lines=stmt.leading_lines)
