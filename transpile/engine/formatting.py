"""Format only the statements the passes changed, with black."""
from __future__ import annotations

import ast
import functools
import re

import libcst as cst
from . import codegen
from .line_split import Unsure, split_statement
from .parsing import parse_module


@functools.lru_cache(maxsize=1)
def load_black():
    """The black module, imported on first use (a fifth of a second)."""
    import black

    return black


@functools.lru_cache(maxsize=4096)
def black_layout(code: str, line_length: int = 88) -> str:
    """``code`` as black lays it out (black's default mode but for the line length).
    Remembered: the same statements and emitted definitions recur in every file, and
    black is the costliest step of a conversion. Raises what black raises."""
    black = load_black()
    return black.format_str(code, mode=black.Mode(line_length=line_length))


_DEFAULT_LAYOUT = cst.Module(body=[])


def code_of(node: cst.CSTNode, module: cst.Module | None = None) -> str:
    """The text ``module.code_for_node(node)`` gives (``node.code`` for a module itself),
    generated faster (engine/codegen.py); without a module, in the default layout (four
    spaces, ``\\n``)."""
    if module is None:
        module = node if isinstance(node, cst.Module) else _DEFAULT_LAYOUT
    return codegen.code(node, module.default_indent, module.default_newline)


# -- statements black would leave as they are ---------------------------------------
# Most changed statements are short lines already in black's layout, and black's parse
# and print of each cost a fifth of a conversion. ``black_keeps`` recognises a subset of
# them from the tree: one small statement on one line within the length, ASCII, no
# comment, no backslash (escapes, continuations), and every piece of layout as black
# writes it. Whatever it is unsure of goes to black.

_INTEGER = re.compile(r"[0-9][0-9_]*")  # black changes 0XA, 0xa, 10L, 10J
_FLOAT = re.compile(r"[0-9][0-9_]*\.[0-9][0-9_]*(e-?[0-9][0-9_]*)?|[0-9][0-9_]*e-?[0-9][0-9_]*")  # not 1., .5, 1E5, 1e+5
_STRING = re.compile(r'(?:[rb]|rb|br)?"[^"]')  # double-quoted, one quote (black turns 'x' into "x")
_OPERATOR_PARENT = (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.ComparisonTarget,
                    cst.UnaryOperation, cst.Attribute, cst.Call, cst.Subscript)
_GROUPED = (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.UnaryOperation, cst.IfExp)


class _NotKept(Exception):
    """Black may change this statement."""


def _ws(value, text: str = "") -> None:
    if type(value) is not cst.SimpleWhitespace or value.value != text:
        raise _NotKept


def _no_comma(node) -> None:
    if node.comma is not cst.MaybeSentinel.DEFAULT:
        raise _NotKept


def _comma(node, last: bool) -> None:
    """A separating comma as ``, `` (none after the last item: black explodes a trailing one)."""
    if last:
        _no_comma(node)
    elif node.comma is not cst.MaybeSentinel.DEFAULT:  # (LibCST writes a missing one as ``, ``)
        _ws(node.comma.whitespace_before)
        _ws(node.comma.whitespace_after, " ")


def _expr(node, parent=None) -> None:
    """Raise _NotKept unless black writes ``node`` as LibCST does (``parent`` holds it)."""
    kind = type(node)
    lpar = getattr(node, "lpar", ())
    if lpar:  # black keeps grouping parentheses, and a tuple's, where they are needed or operator groupings
        if not (kind is cst.Tuple or (kind in _GROUPED and isinstance(parent, _OPERATOR_PARENT))) or len(lpar) > 1:
            raise _NotKept
        _ws(lpar[0].whitespace_after)
        _ws(node.rpar[0].whitespace_before)
    if kind is cst.Name or kind is cst.Ellipsis:
        return
    if kind is cst.Integer:
        if not _INTEGER.fullmatch(node.value):
            raise _NotKept
    elif kind is cst.Float:
        if not _FLOAT.fullmatch(node.value):
            raise _NotKept
    elif kind is cst.SimpleString:
        if not _STRING.match(node.value):
            raise _NotKept
    elif kind is cst.FormattedString:
        if node.start != 'f"':
            raise _NotKept
        for part in node.parts:
            if type(part) is cst.FormattedStringExpression:
                if part.conversion is not None or part.format_spec is not None or part.equal is not None:
                    raise _NotKept
                _ws(part.whitespace_before_expression)
                _ws(part.whitespace_after_expression)
                if '"' in code_of(part.expression) or "'" in code_of(part.expression):
                    raise _NotKept
                _expr(part.expression, node)
    elif kind is cst.Attribute:
        if type(node.value) in (cst.Integer, cst.Float):
            raise _NotKept
        _ws(node.dot.whitespace_before)
        _ws(node.dot.whitespace_after)
        _expr(node.value, node)
    elif kind is cst.Call:
        _ws(node.whitespace_after_func)
        _ws(node.whitespace_before_args)
        _expr(node.func, node)
        for i, arg in enumerate(node.args):
            if arg.star not in ("", "*", "**"):
                raise _NotKept
            _ws(arg.whitespace_after_star)
            _ws(arg.whitespace_after_arg)
            _comma(arg, i == len(node.args) - 1)
            if arg.keyword is not None:
                if arg.equal is cst.MaybeSentinel.DEFAULT:  # LibCST writes `` = ``
                    raise _NotKept
                _ws(arg.equal.whitespace_before)
                _ws(arg.equal.whitespace_after)
            if type(arg.value) is cst.GeneratorExp:  # f(x for x in y): the call's parentheses are its own
                if len(node.args) != 1 or arg.keyword is not None or arg.star or arg.value.lpar:
                    raise _NotKept
                _comprehension(arg.value, arg.value.elt)
                continue
            _expr(arg.value, node)
    elif kind is cst.Subscript:
        _ws(node.lbracket.whitespace_after)
        _ws(node.rbracket.whitespace_before)
        _ws(node.whitespace_after_value)
        _expr(node.value, node)
        for i, element in enumerate(node.slice):
            _comma(element, i == len(node.slice) - 1)
            inner = element.slice
            if type(inner) is cst.Index:
                if inner.star is not None:
                    raise _NotKept
                _expr(inner.value, node)
            else:  # black spaces a slice's colons around anything but names and numbers
                for bound in (inner.lower, inner.upper, inner.step):
                    if bound is not None and type(bound) not in (cst.Name, cst.Integer):
                        raise _NotKept
                    if bound is not None:
                        _expr(bound, node)
                for colon in (inner.first_colon, inner.second_colon):
                    if colon is not cst.MaybeSentinel.DEFAULT:
                        _ws(colon.whitespace_before)
                        _ws(colon.whitespace_after)
    elif kind is cst.BinaryOperation:
        if type(node.operator) is cst.Power:  # black hugs simple operands
            raise _NotKept
        _ws(node.operator.whitespace_before, " ")
        _ws(node.operator.whitespace_after, " ")
        _expr(node.left, node)
        _expr(node.right, node)
    elif kind is cst.BooleanOperation:
        _ws(node.operator.whitespace_before, " ")
        _ws(node.operator.whitespace_after, " ")
        _expr(node.left, node)
        _expr(node.right, node)
    elif kind is cst.UnaryOperation:
        _ws(node.operator.whitespace_after, " " if type(node.operator) is cst.Not else "")
        _expr(node.expression, node)
    elif kind is cst.Comparison:
        _expr(node.left, node)
        for target in node.comparisons:
            op = target.operator
            _ws(op.whitespace_before, " ")
            _ws(op.whitespace_after, " ")
            if type(op) in (cst.NotIn, cst.IsNot):
                _ws(op.whitespace_between, " ")
            _expr(target.comparator, target)
    elif kind is cst.IfExp:
        for ws in (node.whitespace_before_if, node.whitespace_after_if, node.whitespace_before_else,
                   node.whitespace_after_else):
            _ws(ws, " ")
        for part in (node.body, node.test, node.orelse):
            _expr(part, node)
    elif kind in (cst.List, cst.Tuple, cst.Set):
        if kind is not cst.Tuple:
            _ws(node.lbracket.whitespace_after if kind is cst.List else node.lbrace.whitespace_after)
            _ws(node.rbracket.whitespace_before if kind is cst.List else node.rbrace.whitespace_before)
        if kind is cst.Tuple and not lpar and parent is not None:
            raise _NotKept  # an unparenthesized tuple inside an expression
        one_tuple = kind is cst.Tuple and len(node.elements) == 1 and lpar
        for i, element in enumerate(node.elements):
            if one_tuple and element.comma is not cst.MaybeSentinel.DEFAULT:  # (x,): black keeps its comma
                _ws(element.comma.whitespace_before)
                _ws(element.comma.whitespace_after)
            else:
                _comma(element, i == len(node.elements) - 1)
            if type(element) is cst.StarredElement:
                if element.lpar:
                    raise _NotKept
                _ws(element.whitespace_before_value)
            _expr(element.value, node)
    elif kind is cst.Dict:
        _ws(node.lbrace.whitespace_after)
        _ws(node.rbrace.whitespace_before)
        for i, element in enumerate(node.elements):
            _comma(element, i == len(node.elements) - 1)
            if type(element) is cst.DictElement:
                _ws(element.whitespace_before_colon)
                _ws(element.whitespace_after_colon, " ")
                _expr(element.key, node)
            else:
                _ws(element.whitespace_before_value)
            _expr(element.value, node)
    elif kind in (cst.ListComp, cst.SetComp, cst.DictComp):
        _ws(node.lbracket.whitespace_after if kind is cst.ListComp else node.lbrace.whitespace_after)
        _ws(node.rbracket.whitespace_before if kind is cst.ListComp else node.rbrace.whitespace_before)
        if kind is cst.DictComp:
            _ws(node.whitespace_before_colon)
            _ws(node.whitespace_after_colon, " ")
            _expr(node.key, node)
            _expr(node.value, node)
        else:
            _expr(node.elt, node)
        _comprehension(node, None)
    else:
        raise _NotKept


def _comprehension(node, elt) -> None:
    """The ``for ... in ... if ...`` clauses of a comprehension (and ``elt``, when given)."""
    if elt is not None:
        _expr(elt, node)
    comp = node.for_in
    while comp is not None:
        if comp.asynchronous is not None:
            raise _NotKept
        for ws in (comp.whitespace_before, comp.whitespace_after_for, comp.whitespace_before_in,
                   comp.whitespace_after_in):
            _ws(ws, " ")
        _expr(comp.target, comp)
        _expr(comp.iter, comp)
        for cond in comp.ifs:
            _ws(cond.whitespace_before, " ")
            _ws(cond.whitespace_before_test, " ")
            _expr(cond.test, comp)
        comp = comp.inner_for_in


def _top(node) -> None:
    """A statement's own expression: black drops redundant parentheses around it."""
    if getattr(node, "lpar", ()):
        raise _NotKept
    _expr(node)


def _dotted(node) -> None:
    if type(node) is cst.Attribute:
        _ws(node.dot.whitespace_before)
        _ws(node.dot.whitespace_after)
        _dotted(node.value)
    elif type(node) is not cst.Name:
        raise _NotKept


def _small(stmt) -> None:
    kind = type(stmt)
    if kind is cst.Expr:
        if type(stmt.value) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            raise _NotKept  # a docstring as black sees a lone statement
        _top(stmt.value)
    elif kind is cst.Assign:
        for target in stmt.targets:
            _ws(target.whitespace_before_equal, " ")
            _ws(target.whitespace_after_equal, " ")
            _top(target.target)
        _top(stmt.value)
    elif kind is cst.AnnAssign:
        _ws(stmt.annotation.whitespace_before_indicator)
        _ws(stmt.annotation.whitespace_after_indicator, " ")
        _top(stmt.target)
        _top(stmt.annotation.annotation)
        if stmt.value is not None:
            if stmt.equal is cst.MaybeSentinel.DEFAULT:
                raise _NotKept
            _ws(stmt.equal.whitespace_before, " ")
            _ws(stmt.equal.whitespace_after, " ")
            _top(stmt.value)
    elif kind is cst.AugAssign:
        _ws(stmt.operator.whitespace_before, " ")
        _ws(stmt.operator.whitespace_after, " ")
        _top(stmt.target)
        _top(stmt.value)
    elif kind is cst.Return:
        if stmt.value is None:
            if stmt.whitespace_after_return is not cst.MaybeSentinel.DEFAULT:
                _ws(stmt.whitespace_after_return)
        else:
            _ws(stmt.whitespace_after_return, " ")
            _top(stmt.value)
    elif kind is cst.Raise:
        if stmt.exc is None:
            if stmt.whitespace_after_raise is not cst.MaybeSentinel.DEFAULT:
                _ws(stmt.whitespace_after_raise)
            if stmt.cause is not None:
                raise _NotKept
        else:
            _ws(stmt.whitespace_after_raise, " ")
            _top(stmt.exc)
            if stmt.cause is not None:
                _ws(stmt.cause.whitespace_before_from, " ")
                _ws(stmt.cause.whitespace_after_from, " ")
                _top(stmt.cause.item)
    elif kind in (cst.Pass, cst.Break, cst.Continue):
        pass
    elif kind is cst.Import:
        _ws(stmt.whitespace_after_import, " ")
        for i, alias in enumerate(stmt.names):
            _comma(alias, i == len(stmt.names) - 1)
            _dotted(alias.name)
            if alias.asname is not None:
                _ws(alias.asname.whitespace_before_as, " ")
                _ws(alias.asname.whitespace_after_as, " ")
    elif kind is cst.ImportFrom:
        if stmt.lpar is not None or type(stmt.names) is cst.ImportStar or stmt.relative:
            raise _NotKept
        for ws in (stmt.whitespace_after_from, stmt.whitespace_before_import, stmt.whitespace_after_import):
            _ws(ws, " ")
        _dotted(stmt.module)
        for i, alias in enumerate(stmt.names):
            _comma(alias, i == len(stmt.names) - 1)
            if type(alias.name) is not cst.Name:
                raise _NotKept
            if alias.asname is not None:
                _ws(alias.asname.whitespace_before_as, " ")
                _ws(alias.asname.whitespace_after_as, " ")
    else:
        raise _NotKept


def _line_break(ws, indent: str) -> None:
    """A bare line break inside brackets, the next line indented by ``indent``."""
    if type(ws) is not cst.ParenthesizedWhitespace or ws.empty_lines or not ws.indent:
        raise _NotKept
    first = ws.first_line
    if first.whitespace.value or first.comment is not None or first.newline.value is not None:
        raise _NotKept
    _ws(ws.last_line, indent)


def _statement_call(stmt, raising: bool = False) -> cst.Call:
    """The call a statement is (``f(...)``, ``x = f(...)``, ``return f(...)``, with
    ``raising`` also ``raise E(...)``), its statement layout checked as black writes it."""
    kind = type(stmt)
    if kind is cst.Expr:
        call = stmt.value
    elif kind is cst.Assign:
        for target in stmt.targets:
            _ws(target.whitespace_before_equal, " ")
            _ws(target.whitespace_after_equal, " ")
            _top(target.target)
        call = stmt.value
    elif kind is cst.Return:
        _ws(stmt.whitespace_after_return, " ")
        call = stmt.value
    elif raising and kind is cst.Raise and stmt.exc is not None and stmt.cause is None:
        _ws(stmt.whitespace_after_raise, " ")
        call = stmt.exc
    else:
        raise _NotKept
    if type(call) is not cst.Call or call.lpar or not call.args:
        raise _NotKept
    _ws(call.whitespace_after_func)
    _expr(call.func, call)
    return call


def _argument(arg, call) -> None:
    if arg.star not in ("", "*", "**") or type(arg.value) is cst.GeneratorExp:
        raise _NotKept
    _ws(arg.whitespace_after_star)
    if arg.keyword is not None:
        if arg.equal is cst.MaybeSentinel.DEFAULT:
            raise _NotKept
        _ws(arg.equal.whitespace_before)
        _ws(arg.equal.whitespace_after)
    _expr(arg.value, call)


def _exploded(stmt) -> None:
    """A call whose arguments stand one to a line, each followed by a comma: black's layout
    of a call with a trailing comma (a "magic" one: black never joins those lines), when
    each line fits. Changed statements of formatted sources are mostly of this shape."""
    call = _statement_call(stmt)
    _line_break(call.whitespace_before_args, "    ")
    for i, arg in enumerate(call.args):
        if arg.comma is cst.MaybeSentinel.DEFAULT:
            raise _NotKept
        _argument(arg, call)
        _ws(arg.whitespace_after_arg)
        _ws(arg.comma.whitespace_before)
        _line_break(arg.comma.whitespace_after, "" if i == len(call.args) - 1 else "    ")


def _hugged(stmt, lines: list[str], line_length: int) -> None:
    """``f(`` / the arguments on one indented line, no trailing comma / ``)``: black's
    layout of a call too long for one line whose arguments fit on one (black splits at
    the last bracket, and only a magic trailing comma or a bracket display's parent makes
    it put one argument to a line)."""
    if len(lines) != 4 or lines[2] != ")" or len(lines[0]) + len(lines[1]) - 3 <= line_length:
        raise _NotKept  # joined, the line would fit: black joins it
    call = _statement_call(stmt, raising=True)
    func = call.func
    while type(func) is cst.Attribute:
        func = func.value
    if type(func) is not cst.Name:  # a call on a call or subscript: black may split elsewhere
        raise _NotKept
    _line_break(call.whitespace_before_args, "    ")
    last = len(call.args) - 1
    for i, arg in enumerate(call.args):
        _argument(arg, call)
        if i == last:
            if arg.comma is not cst.MaybeSentinel.DEFAULT:
                raise _NotKept
            _line_break(arg.whitespace_after_arg, "")
        else:
            _ws(arg.whitespace_after_arg)
            _comma(arg, False)
            if arg.comma is cst.MaybeSentinel.DEFAULT:
                raise _NotKept


def black_keeps(stmt: cst.SimpleStatementLine, code: str, line_length: int) -> bool:
    """Whether black would give ``code`` (``stmt``'s text, no leading lines) unchanged."""
    if len(stmt.body) != 1 or not code.isascii() or "\\" in code or not code.endswith("\n"):
        return False
    lines = code.split("\n")
    if len(lines) == 2:
        if len(code) > line_length + 1:
            return False
    elif any(len(line) > line_length for line in lines):
        return False
    trailing = stmt.trailing_whitespace
    if trailing.newline.value is not None:
        return False
    if trailing.comment is None:
        if trailing.whitespace.value:
            return False
    else:  # black writes a comment two spaces after the code, as ``# text``
        text = trailing.comment.value
        if trailing.whitespace.value != "  " or not text.startswith("# ") or text != text.rstrip() \
                or "fmt:" in text or len(lines) == 4:
            return False
    small = stmt.body[0]
    if small.semicolon is not cst.MaybeSentinel.DEFAULT:
        return False
    try:
        if len(lines) == 2:
            _small(small)
        elif len(lines) == 4 and not lines[1].endswith(","):
            _hugged(small, lines, line_length)
        else:
            _exploded(small)
    except (_NotKept, AttributeError):  # (a field left to LibCST's default: black decides)
        return False
    return True


# -- black's layout of a call too long for its line, without black -------------------
# The two layouts black gives most changed lines, built from the tree; used only where
# ``black_keeps`` then accepts the result. The hugged one is black's by construction
# (black lays out a logical line whatever its line breaks inside brackets, so a layout it
# keeps is the one it gives the joined line); the exploded one was checked against black
# on every line the conversion of the four corpora sends to it.

_BREAK = cst.ParenthesizedWhitespace(last_line=cst.SimpleWhitespace("    "), indent=True)
_BREAK_BEFORE_CLOSE = cst.ParenthesizedWhitespace(last_line=cst.SimpleWhitespace(""), indent=True)


def _with_call(stmt: cst.SimpleStatementLine, call: cst.Call) -> cst.SimpleStatementLine:
    small = stmt.body[0]
    small = small.with_changes(exc=call) if type(small) is cst.Raise else small.with_changes(value=call)
    return stmt.with_changes(body=[small])


def _split_call(stmt: cst.SimpleStatementLine, code: str, line_length: int) -> cst.SimpleStatementLine | None:
    """``stmt`` (one line, too long) as black lays it out, when that is one of the two
    layouts above; else None (black decides)."""
    small = stmt.body[0]
    kind = type(small)
    if kind not in (cst.Expr, cst.Assign, cst.Return, cst.Raise) or len(stmt.body) != 1 \
            or stmt.trailing_whitespace.comment is not None or code.count("\n") != 1 or len(code) <= line_length + 1:
        return None
    call = small.exc if kind is cst.Raise else small.value
    if type(call) is not cst.Call or not call.args:
        return None
    args = list(call.args)
    args[-1] = args[-1].with_changes(whitespace_after_arg=_BREAK_BEFORE_CLOSE)
    hugged = _with_call(stmt, call.with_changes(whitespace_before_args=_BREAK, args=args))
    text = code_of(hugged)
    if black_keeps(hugged, text, line_length):
        return hugged
    hugged_body = text.split("\n")[1]
    if kind is cst.Raise or len(hugged_body) <= line_length or any(arg.star for arg in call.args):
        return None  # (black adds no trailing comma after *args in code it cannot date)
    last = len(call.args) - 1
    args = [arg.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""), comma=cst.Comma(
        whitespace_after=_BREAK_BEFORE_CLOSE if i == last else _BREAK)) for i, arg in enumerate(call.args)]
    exploded = _with_call(stmt, call.with_changes(whitespace_before_args=_BREAK, args=args))
    return exploded if black_keeps(exploded, code_of(exploded), line_length) else None


# -- black's layout of any logical line in a subset, without black ---------------------
# ``line_split`` reproduces black's splitting of one logical line (right-hand and delimiter
# splits, optional parentheses, magic trailing commas) for statements of names, literals,
# calls, subscripts, operators, conditional expressions, displays and comprehensions; what
# it is unsure of goes to black. benchmarks/black_free.py checks it against black on every
# statement the conversion of the samples and the four corpora sends to black.


def layout_without_black(stmt: cst.SimpleStatementLine, code: str, line_length: int) -> str | None:
    """The text black gives ``stmt`` (``code``, no leading lines), or None when unsure."""
    if "#" in code or "\\" in code or not code.isascii() or stmt.trailing_whitespace.newline.value is not None:
        return None
    try:
        return split_statement(stmt, line_length)
    except (Unsure, KeyError, AttributeError, TypeError, RecursionError):
        return None  # (a field left to LibCST's default, a deep nesting: black decides)


class InvalidStatement(ValueError):
    """A changed statement whose code is not valid Python."""


def format_statement(stmt: cst.SimpleStatementLine, indent_width: int,
                     before: cst.SimpleStatementLine | None = None) -> cst.SimpleStatementLine:
    """Run black over one changed statement; keep its leading comments and blank lines.
    ``before``: the statement as it was before the edit; when the edit left its code as it
    was (a pass rebuilt a node the same) and its lines fit the length at this depth (an
    earlier pass may have moved it into a block), its layout is kept as written.
    Raises InvalidStatement when the statement's code does not parse."""
    bare = stmt.with_changes(leading_lines=())
    code = code_of(bare)  # as cst.Module(body=[bare]).code
    line_length = max(40, 88 - indent_width)
    if black_keeps(bare, code, line_length):
        return stmt
    split = _split_call(bare, code, line_length)
    if split is not None:
        return split.with_changes(leading_lines=stmt.leading_lines)
    if before is not None and all(len(line) <= line_length for line in code.splitlines()) \
            and code_of(before.with_changes(leading_lines=())) == code:
        return stmt  # the text is as it was and fits where it stands: not black's to lay out again
    # (black_keeps, _split_call and line_split each give black's text where they answer: the
    # first that answers decides, and the cheapest go first)
    laid_out = layout_without_black(bare, code, line_length)
    if laid_out is not None:
        if laid_out == code:
            return stmt
        return parse_module(laid_out).body[0].with_changes(leading_lines=stmt.leading_lines)
    if code.count("\n") == 1:
        # A line a pass built leaves fields to LibCST's defaults, which ``black_keeps``
        # cannot vouch for; parsed back, every field is spelled (a parse costs far less than black).
        try:
            parsed = parse_module(code).body
        except cst.ParserSyntaxError:
            parsed = None
        if parsed and len(parsed) == 1 and type(parsed[0]) is cst.SimpleStatementLine:
            if black_keeps(parsed[0], code, line_length):
                return stmt
            split = _split_call(parsed[0], code, line_length)
            if split is not None:
                return split.with_changes(leading_lines=stmt.leading_lines)
    try:
        formatted = black_layout(code, line_length)
        if formatted == code:
            return stmt  # already black's layout: no need to parse it back
        module = parse_module(formatted)
    except Exception:  # black refuses some valid code; the statement stays as generated
        try:
            ast.parse(code)
        except SyntaxError as exc:
            raise InvalidStatement(f"{exc.msg} in {code.strip().splitlines()[0][:60]!r}") from None
        return stmt
    if len(module.body) != 1 or not isinstance(module.body[0], cst.SimpleStatementLine):
        return stmt  # black split ``a; b``: keep one statement line
    return module.body[0].with_changes(leading_lines=stmt.leading_lines)
