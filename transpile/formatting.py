"""Format only the statements the passes changed, with black."""
from __future__ import annotations

import functools

import libcst as cst


@functools.lru_cache(maxsize=1)
def _black():
    import black

    return black


def format_statement(stmt: cst.SimpleStatementLine, indent_width: int) -> cst.SimpleStatementLine:
    """Run black over one changed statement; keep its leading comments and blank lines."""
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
        return stmt
    if len(module.body) != 1 or not isinstance(module.body[0], cst.SimpleStatementLine):
        return stmt  # black split ``a; b``: keep one statement line
    return module.body[0].with_changes(leading_lines=stmt.leading_lines)
