"""Format only the statements the passes changed, with black."""
from __future__ import annotations

import ast
import functools

import libcst as cst


@functools.lru_cache(maxsize=1)
def _black():
    import black

    return black


class InvalidStatement(ValueError):
    """A changed statement whose code is not valid Python."""


def format_statement(stmt: cst.SimpleStatementLine, indent_width: int) -> cst.SimpleStatementLine:
    """Run black over one changed statement; keep its leading comments and blank lines.
    Raises InvalidStatement when the statement's code does not parse."""
    bare = stmt.with_changes(leading_lines=())
    code = cst.Module(body=[bare]).code
    black = _black()
    mode = black.Mode(line_length=max(40, 88 - indent_width))
    try:
        formatted = black.format_str(code, mode=mode)
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
