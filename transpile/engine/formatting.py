"""Format only the statements the passes changed, with black."""
from __future__ import annotations

import ast
import functools

import libcst as cst


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


class InvalidStatement(ValueError):
    """A changed statement whose code is not valid Python."""


def format_statement(stmt: cst.SimpleStatementLine, indent_width: int) -> cst.SimpleStatementLine:
    """Run black over one changed statement; keep its leading comments and blank lines.
    Raises InvalidStatement when the statement's code does not parse."""
    bare = stmt.with_changes(leading_lines=())
    code = cst.Module(body=[bare]).code
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
