"""Black's layout of one logical line, without black, for a well-defined subset of statements.

Black (26.10.1, default mode) lays out each logical line alone: the line's tokens ("leaves")
with black's spacing, split when too long by its right-hand split (the last bracket pair
first, trying to keep optional parentheses invisible and trailers together), and inside
brackets by its delimiter split (one delimiter of the highest priority per line), each
resulting line split again while still too long; a trailing comma before a closing bracket
("magic") makes its brackets explode. Its output depends only on the joined line and its
trailing commas, not on the line breaks the statement had inside brackets.

This module reproduces that behaviour (written from black's documented and observed
behaviour, not copied) for statements ``expr``, ``target = value``, ``target op= value``,
``return value`` and ``raise exc`` whose expressions are names, numbers, plain strings,
attributes, calls, subscripts with simple slices, operators but ``**``, conditional
expressions, tuples, lists, sets, dicts and comprehensions; no comments, no backslashes,
ASCII. ``split_statement`` answers with black's text, or raises ``Unsure`` for anything
outside the subset or any step it does not reproduce: the caller then asks black.

The state black keeps on its leaves is kept the same way here (a leaf's bracket depth and
matching bracket are set again each time a line holding it is built, and an optional
parenthesis made visible stays visible), because black's choices depend on it.
"""
from __future__ import annotations

import libcst as cst

__all__ = ["Unsure", "split_statement"]


class Unsure(Exception):
    """The statement is outside the subset, or black's answer depends on what is not modelled."""


class _CannotSplit(Exception):
    """A transform does not apply to this line (black's CannotTransform)."""


# leaf kinds
NAME, NUMBER, STRING, OP, COMMA, EQUAL, DOT, COLON, STAR = "NAME", "NUMBER", "STRING", "OP", ",", "=", ".", ":", "*"
LPAR, RPAR, LSQB, RSQB, LBRACE, RBRACE = "(", ")", "[", "]", "{", "}"
OPENING = frozenset((LPAR, LSQB, LBRACE))
CLOSING = frozenset((RPAR, RSQB, RBRACE))
BRACKETS = OPENING | CLOSING
_CLOSER = {LPAR: RPAR, LSQB: RSQB, LBRACE: RBRACE}

# delimiter priorities (a line splits at its highest)
COMPREHENSION, COMMA_P, TERNARY, LOGIC, STRING_P, COMPARATOR, DOT_P = 20, 18, 16, 14, 12, 10, 1
_MATH = {"|": 9, "^": 8, "&": 7, "<<": 6, ">>": 6, "+": 5, "-": 5, "*": 4, "/": 4, "//": 4, "%": 4, "@": 4}


class Leaf:
    __slots__ = ("kind", "value", "prefix", "space", "before", "comma_after", "vararg", "arglist", "trailer", "atom",
                 "orphan", "opening", "depth", "starts_import")

    def __init__(self, kind, value, prefix="", before=0):
        self.kind = kind
        self.value = value
        self.prefix = prefix  # the whitespace before it on its line (a line's first leaf loses it)
        self.space = prefix  # the whitespace black gives it in the statement
        self.orphan = False  # a comma black added: not in black's tree
        self.starts_import = False  # the ``import`` or ``from`` of an import statement
        self.before = before  # priority of a split before this leaf (DOT_P: when it follows a closing bracket)
        self.comma_after = kind == COMMA  # a comma black may split after (not a for-target's)
        self.vararg = False  # a * or ** of a call's argument (black adds no trailing comma after it)
        self.arglist = False  # a comma between a call's arguments
        self.trailer = False  # a bracket of a call or subscript (not a display, group or optional pair)
        self.atom = False  # an opening bracket whose parent is an atom (display, group, optional pair)
        self.opening = None
        self.depth = 0

    def copy(self) -> "Leaf":
        new = Leaf(self.kind, self.value, self.space, self.before)
        new.comma_after, new.vararg, new.arglist = self.comma_after, self.vararg, self.arglist
        new.trailer, new.atom, new.starts_import = self.trailer, self.atom, self.starts_import
        return new


# -- the leaves of a statement, with black's spacing --------------------------------

_BINARY = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
           cst.Modulo: "%", cst.MatrixMultiply: "@", cst.BitOr: "|", cst.BitAnd: "&", cst.BitXor: "^",
           cst.LeftShift: "<<", cst.RightShift: ">>"}
_COMPARE = {cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.GreaterThan: ">",
            cst.LessThanEqual: "<=", cst.GreaterThanEqual: ">="}
_COMPARE_WORDS = {cst.In: ("in",), cst.NotIn: ("not", "in"), cst.Is: ("is",), cst.IsNot: ("is", "not")}
_UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}
_AUGMENTED = {cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=", cst.DivideAssign: "/=",
              cst.FloorDivideAssign: "//=", cst.ModuloAssign: "%=", cst.MatrixMultiplyAssign: "@=",
              cst.BitOrAssign: "|=", cst.BitAndAssign: "&=", cst.BitXorAssign: "^=", cst.LeftShiftAssign: "<<=",
              cst.RightShiftAssign: ">>="}


def _string(value: str) -> str:
    """A string literal as black writes it: double quotes unless that needs escapes."""
    body_start = 0
    while value[body_start] in "rb":
        body_start += 1
    prefix, rest = value[:body_start], value[body_start:]
    if prefix not in ("", "r", "b", "rb", "br") or rest[:3] in ('"""', "'''") or len(rest) < 2 \
            or rest[0] != rest[-1] or rest[0] not in "'\"":
        raise Unsure
    body = rest[1:-1]
    if rest[0] == "'" and '"' not in body:
        return f'{prefix}"{body}"'
    return value


def _number(value: str) -> str:
    """A number as black writes it: lower case but hexadecimal digits, no empty fraction or
    integer part, no ``+`` in an exponent."""
    text = value.lower()
    if text.startswith(("0o", "0b")):
        return text
    if text.startswith("0x"):
        return text[:2] + text[2:].upper()
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else ""
        return f"{_point(mantissa)}e{sign}{exponent.lstrip('+-')}"
    if text.endswith("j"):
        return _point(text[:-1]) + "j"
    return _point(text)


def _point(text: str) -> str:
    if "." not in text:
        return text
    whole, fraction = text.split(".")
    return f"{whole or 0}.{fraction or 0}"


def _no_comments(ws) -> None:
    """Whitespace black rebuilds (it keeps only comments, and a backslash outside brackets)."""
    if type(ws) is cst.SimpleWhitespace:
        return
    if type(ws) is cst.ParenthesizedWhitespace:
        if ws.first_line.comment is not None or any(line.comment is not None for line in ws.empty_lines):
            raise Unsure
        return
    if ws is cst.MaybeSentinel.DEFAULT:
        return
    raise Unsure


class _Leaves:
    """The leaves of one statement in order, each with the spacing black gives it."""

    def __init__(self):
        self.leaves: list[Leaf] = []
        self.dated = False  # uses syntax of Python 3.6+ (black then adds a trailing comma after *args)

    def add(self, kind, value, prefix, before=0) -> Leaf:
        leaf = Leaf(kind, value, prefix, before)
        self.leaves.append(leaf)
        return leaf

    def comma(self, node, arglist=False) -> Leaf:
        comma = node.comma
        if comma is not cst.MaybeSentinel.DEFAULT:
            _no_comments(comma.whitespace_before)
            _no_comments(comma.whitespace_after)
        leaf = self.add(COMMA, ",", "")
        leaf.arglist = arglist
        return leaf

    def optional(self, node, prefix) -> None:
        """``node`` inside a pair of invisible parentheses (black's optional ones; their
        parent is an atom), its own parentheses left out."""
        lpar = self.add(LPAR, "", prefix)
        lpar.atom = True
        self.bare(node, "", None, parenthesized=True)
        self.add(RPAR, "", "")

    def expr(self, node, prefix, parent=None, parenthesized=False, need=1) -> None:
        kind = type(node)
        lpar = node.lpar if hasattr(node, "lpar") else ()
        if not lpar and _precedence(node) < need:
            raise Unsure  # a tree whose code reads otherwise (an operand that needs parentheses)
        if lpar:  # black keeps parentheses inside an expression (not those of a statement's value)
            if len(lpar) > 1:
                raise Unsure
            _no_comments(lpar[0].whitespace_after)
            _no_comments(node.rpar[0].whitespace_before)
            opening = self.add(LPAR, "(", prefix)
            opening.atom = True
            self.bare(node, "", parent, parenthesized=True)
            self.add(RPAR, ")", "")
            return
        self.bare(node, prefix, parent, parenthesized)

    def bare(self, node, prefix, parent, parenthesized) -> None:
        kind = type(node)
        if kind is cst.Name:
            self.add(NAME, node.value, prefix)
        elif kind is cst.Integer or kind is cst.Float or kind is cst.Imaginary:
            self.dated = self.dated or "_" in node.value
            self.add(NUMBER, _number(node.value), prefix)
        elif kind is cst.SimpleString:
            self.add(STRING, _string(node.value), prefix)
        elif kind is cst.FormattedString:
            text = _code(node.with_changes(lpar=(), rpar=()) if node.lpar else node)  # (its parentheses are out)
            if "\n" in text:
                raise Unsure
            if node.start == "f'" and '"' not in text and "'" not in text[2:-1]:
                text = f'f"{text[2:-1]}"'  # (black leaves a double-quoted f-string as it is)
            elif node.start != 'f"':
                raise Unsure
            self.dated = True
            self.add(STRING, text, prefix)
        elif kind is cst.Ellipsis:
            self.add(DOT, ".", prefix)
            self.add(DOT, ".", "")
            self.add(DOT, ".", "")
        elif kind is cst.Attribute:
            if type(node.value) in (cst.Integer, cst.Float):
                raise Unsure
            _no_comments(node.dot.whitespace_before)
            _no_comments(node.dot.whitespace_after)
            self.expr(node.value, prefix, node, need=_ATOM)
            self.add(DOT, ".", "", DOT_P)
            self.add(NAME, node.attr.value, "")
        elif kind is cst.Call:
            self.call(node, prefix)
        elif kind is cst.Subscript:
            self.subscript(node, prefix)
        elif kind is cst.BinaryOperation:
            op = _BINARY.get(type(node.operator))
            if op is None:  # ** : black hugs simple operands
                raise Unsure
            self.ws(node.operator.whitespace_before, node.operator.whitespace_after)
            level = _precedence(node)
            self.expr(node.left, prefix, node, need=level)
            self.add(OP, op, " ", _MATH[op])
            self.expr(node.right, " ", node, need=level + 1)
        elif kind is cst.BooleanOperation:
            self.ws(node.operator.whitespace_before, node.operator.whitespace_after)
            level = _precedence(node)
            self.expr(node.left, prefix, node, need=level)
            self.add(NAME, "and" if type(node.operator) is cst.And else "or", " ", LOGIC)
            self.expr(node.right, " ", node, need=level + 1)
        elif kind is cst.UnaryOperation:
            _no_comments(node.operator.whitespace_after)
            if type(node.operator) is cst.Not:
                self.add(NAME, "not", prefix)
                self.expr(node.expression, " ", node, need=_NOT)
            else:
                if type(node.expression) is cst.BinaryOperation and type(node.expression.operator) is cst.Power:
                    raise Unsure
                self.add(OP, _UNARY[type(node.operator)], prefix)
                self.expr(node.expression, "", node, need=_UNARY_LEVEL)
        elif kind is cst.Comparison:
            self.expr(node.left, prefix, node, need=_BITOR)
            for target in node.comparisons:
                op = target.operator
                self.ws(op.whitespace_before, op.whitespace_after)
                words = _COMPARE_WORDS.get(type(op))
                if words is None:
                    self.add(OP, _COMPARE[type(op)], " ", COMPARATOR)
                else:  # (a split goes before the first word of ``not in``, ``is not``)
                    if len(words) == 2:
                        _no_comments(op.whitespace_between)
                    for i, word in enumerate(words):
                        self.add(NAME, word, " ", 0 if i else COMPARATOR)
                self.expr(target.comparator, " ", target, need=_BITOR)
        elif kind is cst.IfExp:
            for ws in (node.whitespace_before_if, node.whitespace_after_if, node.whitespace_before_else,
                       node.whitespace_after_else):
                _no_comments(ws)
            if not parenthesized:  # black wraps a conditional expression in optional parentheses
                lpar = self.add(LPAR, "", prefix)  # (their parent is the expression: not an atom)
                self.ifexp(node, "")
                self.add(RPAR, "", "")
            else:
                self.ifexp(node, prefix)
        elif kind is cst.Tuple:
            if not node.lpar and (parent is not None or len(node.elements) < 2):
                raise Unsure  # a bare tuple inside an expression; ``x = a,``
            self.elements(node.elements, prefix, one_tuple=len(node.elements) == 1)
        elif kind in (cst.List, cst.Set):
            if not node.elements and kind is cst.Set:
                raise Unsure
            closing = self.open_display(node, prefix)
            self.elements(node.elements, "", one_element_parens=True)
            self.add(*closing, "")
        elif kind is cst.Dict:
            closing = self.open_display(node, prefix)
            last = len(node.elements) - 1
            for i, element in enumerate(node.elements):
                space = "" if i == 0 else " "
                if type(element) is cst.DictElement:
                    _no_comments(element.whitespace_before_colon)
                    _no_comments(element.whitespace_after_colon)
                    self.expr(element.key, space, node)
                    self.add(COLON, ":", "")
                    self.expr(element.value, " ", node)
                else:
                    _no_comments(element.whitespace_before_value)
                    self.add(STAR, "**", space)
                    self.expr(element.value, "", node, need=_BITOR)
                if i < last or element.comma is not cst.MaybeSentinel.DEFAULT:
                    self.comma(element)
            self.add(*closing, "")
        elif kind in (cst.ListComp, cst.SetComp, cst.DictComp):
            closing = self.open_display(node, prefix)
            if kind is cst.DictComp:
                _no_comments(node.whitespace_before_colon)
                _no_comments(node.whitespace_after_colon)
                self.expr(node.key, "", node)
                self.add(COLON, ":", "")
                self.expr(node.value, " ", node)
            else:
                self.expr(node.elt, "", node)
            self.comprehension(node.for_in)
            self.add(*closing, "")
        elif kind is cst.GeneratorExp:
            if not parenthesized:
                raise Unsure
            self.expr(node.elt, "", node)
            self.comprehension(node.for_in)
        elif kind is cst.ConcatenatedString:
            _no_comments(node.whitespace_between)
            self.expr(node.left, prefix, node)
            self.expr(node.right, " ", node)
        elif kind is cst.Lambda:
            self.lambda_(node, prefix)
        else:
            raise Unsure

    def lambda_(self, node, prefix) -> None:
        params = node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg \
                or params.posonly_params or params.posonly_ind is not cst.MaybeSentinel.DEFAULT:
            raise Unsure
        _no_comments(node.whitespace_after_lambda)
        self.add(NAME, "lambda", prefix)
        last = len(params.params) - 1
        for i, param in enumerate(params.params):
            if param.annotation is not None or param.star not in ("", cst.MaybeSentinel.DEFAULT):
                raise Unsure
            _no_comments(param.whitespace_after_param)
            self.add(NAME, param.name.value, " ")
            if param.default is not None:
                if param.equal is not cst.MaybeSentinel.DEFAULT:
                    self.ws(param.equal.whitespace_before, param.equal.whitespace_after)
                self.add(EQUAL, "=", "")
                self.expr(param.default, "", node)
            if i < last or param.comma is not cst.MaybeSentinel.DEFAULT:
                self.comma(param).comma_after = False  # (black: inside the arguments, never split)
        self.add(COLON, ":", "")
        self.expr(node.body, " ", node)

    def open_display(self, node, prefix) -> tuple[str, str]:
        """A display's or comprehension's opening bracket; the kind and text of its closing one."""
        square = hasattr(node, "lbracket")
        bracket, close = (node.lbracket, node.rbracket) if square else (node.lbrace, node.rbrace)
        self.ws(bracket.whitespace_after, close.whitespace_before)
        self.add(LSQB if square else LBRACE, "[" if square else "{", prefix).atom = True
        return (RSQB, "]") if square else (RBRACE, "}")

    def ws(self, *spaces) -> None:
        for ws in spaces:
            _no_comments(ws)

    def ifexp(self, node, prefix) -> None:
        self.expr(node.body, prefix, node, need=_OR)
        self.add(NAME, "if", " ", TERNARY)
        self.expr(node.test, " ", node, need=_OR)
        self.add(NAME, "else", " ", TERNARY)
        self.expr(node.orelse, " ", node)

    def elements(self, elements, prefix, one_element_parens=False, one_tuple=False) -> None:
        """A tuple's, list's or set's elements (LibCST writes a one-tuple's comma itself)."""
        last = len(elements) - 1
        for i, element in enumerate(elements):
            space = prefix if i == 0 else " "
            if type(element) is cst.StarredElement:
                if element.lpar:
                    raise Unsure
                _no_comments(element.whitespace_before_value)
                self.add(STAR, "*", space)
                self.expr(element.value, "", element, need=_BITOR)
            else:
                if last == 0 and one_element_parens and getattr(element.value, "lpar", ()):
                    raise Unsure  # [(a)]: black drops the parentheses
                self.expr(element.value, space, element)
            if i < last or one_tuple or element.comma is not cst.MaybeSentinel.DEFAULT:
                self.comma(element)

    def comprehension(self, comp) -> None:
        while comp is not None:
            if comp.asynchronous is not None:
                raise Unsure
            self.ws(comp.whitespace_before, comp.whitespace_after_for, comp.whitespace_before_in,
                    comp.whitespace_after_in)
            self.add(NAME, "for", " ", COMPREHENSION)
            target = comp.target
            if type(target) is cst.Tuple and not target.lpar:
                for i, element in enumerate(target.elements):
                    if type(element) is not cst.Element:
                        raise Unsure
                    self.expr(element.value, " ", element, need=_BITOR)
                    if i < len(target.elements) - 1 or element.comma is not cst.MaybeSentinel.DEFAULT:
                        self.comma(element).comma_after = False
            else:
                self.expr(target, " ", comp, need=_BITOR)
            self.add(NAME, "in", " ")
            self.expr(comp.iter, " ", comp, need=_OR)
            for cond in comp.ifs:
                self.ws(cond.whitespace_before, cond.whitespace_before_test)
                self.add(NAME, "if", " ", COMPREHENSION)
                self.expr(cond.test, " ", comp, need=_OR)
            comp = comp.inner_for_in

    def call(self, node, prefix) -> None:
        self.ws(node.whitespace_after_func, node.whitespace_before_args)
        self.expr(node.func, prefix, node, need=_ATOM)
        opening = self.add(LPAR, "(", "")
        opening.trailer = True
        args = node.args
        last = len(args) - 1
        for i, arg in enumerate(args):
            space = "" if i == 0 else " "
            _no_comments(arg.whitespace_after_star)
            _no_comments(arg.whitespace_after_arg)
            if type(arg.value) is cst.GeneratorExp:
                gen = arg.value
                if last != 0 or arg.keyword is not None or arg.star or gen.lpar \
                        or arg.comma is not cst.MaybeSentinel.DEFAULT:
                    raise Unsure
                self.expr(gen.elt, "", gen)
                self.comprehension(gen.for_in)
                continue
            if arg.star:
                if arg.star not in ("*", "**"):
                    raise Unsure
                self.add(STAR, arg.star, space).vararg = True
                self.expr(arg.value, "", node, need=_BITOR)
            elif arg.keyword is not None:
                if arg.equal is not cst.MaybeSentinel.DEFAULT:
                    self.ws(arg.equal.whitespace_before, arg.equal.whitespace_after)
                self.add(NAME, arg.keyword.value, space)
                self.add(EQUAL, "=", "")
                self.keyword_value(arg.value, node)
            else:
                sole = last == 0 and arg.comma is cst.MaybeSentinel.DEFAULT
                self.expr(arg.value, space, node, parenthesized=sole)
            if i < last or arg.comma is not cst.MaybeSentinel.DEFAULT:
                self.comma(arg, arglist=True)
        if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and any(arg.star for arg in args):
            self.dated = True
        self.add(RPAR, ")", "").trailer = True

    def keyword_value(self, value, parent) -> None:
        self.expr(value, "", parent)

    def subscript(self, node, prefix) -> None:
        self.ws(node.lbracket.whitespace_after, node.rbracket.whitespace_before, node.whitespace_after_value)
        self.expr(node.value, prefix, node, need=_ATOM)
        self.add(LSQB, "[", "").trailer = True
        last = len(node.slice) - 1
        for i, element in enumerate(node.slice):
            space = "" if i == 0 else " "
            inner = element.slice
            if type(inner) is cst.Index:
                if inner.star is not None:
                    raise Unsure
                self.expr(inner.value, space, node)
            else:
                first = True
                for bound, colon in ((inner.lower, None), (inner.upper, inner.first_colon),
                                     (inner.step, inner.second_colon)):
                    if colon is not None and (colon is not cst.MaybeSentinel.DEFAULT or bound is not None):
                        if colon is not cst.MaybeSentinel.DEFAULT:
                            self.ws(colon.whitespace_before, colon.whitespace_after)
                        self.add(COLON, ":", space if first else "")
                        first = False
                    if bound is not None:
                        if not _simple_bound(bound):
                            raise Unsure  # black spaces the colons around anything else
                        self.expr(bound, space if first else "", node)
                        first = False
            if i < last or element.comma is not cst.MaybeSentinel.DEFAULT:
                self.comma(element)
        self.add(RSQB, "]", "").trailer = True


def _simple_bound(node) -> bool:
    """A slice bound black writes without spaces around the colons: a name, a number, negated."""
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and not node.lpar:
        node = node.expression
    return type(node) in (cst.Name, cst.Integer) and not node.lpar


_OR, _NOT, _BITOR, _UNARY_LEVEL, _ATOM = 2, 4, 6, 12, 14
_BINARY_LEVEL = {cst.BitOr: 6, cst.BitXor: 7, cst.BitAnd: 8, cst.LeftShift: 9, cst.RightShift: 9, cst.Add: 10,
                 cst.Subtract: 10, cst.Multiply: 11, cst.Divide: 11, cst.FloorDivide: 11, cst.Modulo: 11,
                 cst.MatrixMultiply: 11, cst.Power: 13}


def _precedence(node) -> int:
    """How tightly ``node`` binds, as Python's grammar nests expressions (higher: tighter)."""
    kind = type(node)
    if kind is cst.IfExp:
        return 1
    if kind is cst.BooleanOperation:
        return 2 if type(node.operator) is cst.Or else 3
    if kind is cst.UnaryOperation:
        return _NOT if type(node.operator) is cst.Not else _UNARY_LEVEL
    if kind is cst.Comparison:
        return 5
    if kind is cst.BinaryOperation:
        return _BINARY_LEVEL[type(node.operator)]
    if kind is cst.Tuple and not node.lpar:
        return 0
    if kind is cst.Lambda:
        return 1
    if kind in (cst.NamedExpr, cst.Yield, cst.StarredElement):
        return 0
    return _ATOM


_MODULE = cst.Module(body=[])


def _code(node) -> str:
    return _MODULE.code_for_node(node)


def _top(builder: _Leaves, value, prefix: str) -> None:
    """A statement's value after ``=``, ``return``, ``del``: black puts it in optional
    parentheses, or makes its own redundant ones optional; a tuple's and a generator's stay."""
    lpar = getattr(value, "lpar", ())
    if len(lpar) > 1:
        raise Unsure
    if lpar and (type(value) in (cst.Tuple, cst.GeneratorExp)):
        if type(value) is cst.Tuple and any(type(e) is cst.StarredElement for e in value.elements):
            raise Unsure
        builder.expr(value, prefix)
        return
    if lpar:
        builder.ws(lpar[0].whitespace_after, value.rpar[0].whitespace_before)
    builder.optional(value, prefix)


def statement_leaves(stmt: cst.SimpleStatementLine) -> _Leaves:
    """The leaves black makes of ``stmt``'s one small statement, or Unsure."""
    if len(stmt.body) != 1:
        raise Unsure
    small = stmt.body[0]
    if small.semicolon is not cst.MaybeSentinel.DEFAULT:
        raise Unsure
    builder = _Leaves()
    kind = type(small)
    if kind is cst.Expr:
        value = small.value
        if type(value) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Tuple) \
                or getattr(value, "lpar", ()):
            raise Unsure
        builder.expr(value, "")
    elif kind is cst.Assign:
        if len(small.targets) != 1:
            raise Unsure  # chained assignments
        target = small.targets[0]
        builder.ws(target.whitespace_before_equal, target.whitespace_after_equal)
        if getattr(target.target, "lpar", ()):
            raise Unsure
        if type(target.target) is cst.Tuple:
            builder.optional(target.target, "")
        elif type(target.target) in (cst.Name, cst.Attribute, cst.Subscript):
            builder.expr(target.target, "")
        else:
            raise Unsure
        builder.add(EQUAL, "=", " ")
        _top(builder, small.value, " ")
    elif kind is cst.AugAssign:
        builder.ws(small.operator.whitespace_before, small.operator.whitespace_after)
        if type(small.target) not in (cst.Name, cst.Attribute, cst.Subscript) or small.target.lpar:
            raise Unsure
        builder.expr(small.target, "")
        builder.add(OP, _AUGMENTED[type(small.operator)], " ")
        _top(builder, small.value, " ")
    elif kind is cst.Return and small.value is not None:
        builder.ws(small.whitespace_after_return)
        builder.add(NAME, "return", "")
        if type(small.value) is cst.Tuple and any(type(e) is cst.StarredElement for e in small.value.elements):
            builder.dated = True  # ``return *a, b``
        _top(builder, small.value, " ")
    elif kind is cst.Del:
        builder.ws(small.whitespace_after_del)
        builder.add(NAME, "del", "")
        if type(small.target) not in (cst.Name, cst.Attribute, cst.Subscript) or small.target.lpar:
            raise Unsure
        builder.optional(small.target, " ")
    elif kind is cst.ImportFrom:
        _import_from(builder, small)
    elif kind is cst.Import:
        builder.ws(small.whitespace_after_import)
        builder.add(NAME, "import", "").starts_import = True
        _aliases(builder, small.names, " ")
    elif kind is cst.Raise and small.exc is not None and small.cause is None:
        builder.ws(small.whitespace_after_raise)
        builder.add(NAME, "raise", "")
        if getattr(small.exc, "lpar", ()) or type(small.exc) is cst.Tuple:
            raise Unsure
        builder.expr(small.exc, " ")
    else:
        raise Unsure
    return builder


def _dotted(builder: _Leaves, node, prefix: str) -> None:
    if type(node) is cst.Attribute:
        _dotted(builder, node.value, prefix)
        builder.add(DOT, ".", "")
        builder.add(NAME, node.attr.value, "")
    elif type(node) is cst.Name:
        builder.add(NAME, node.value, prefix)
    else:
        raise Unsure


def _aliases(builder: _Leaves, names, prefix: str) -> None:
    last = len(names) - 1
    for i, alias in enumerate(names):
        _dotted(builder, alias.name, prefix if i == 0 else " ")
        if alias.asname is not None:
            builder.ws(alias.asname.whitespace_before_as, alias.asname.whitespace_after_as)
            if type(alias.asname.name) is not cst.Name:
                raise Unsure
            builder.add(NAME, "as", " ")
            builder.add(NAME, alias.asname.name.value, " ")
        if i < last or alias.comma is not cst.MaybeSentinel.DEFAULT:
            builder.comma(alias)


def _import_from(builder: _Leaves, small) -> None:
    """``from m import a, b``: black puts the names in optional parentheses (its own ones
    made optional) and, split, one to a line with a trailing comma."""
    if type(small.names) is cst.ImportStar:
        raise Unsure
    builder.ws(small.whitespace_after_from, small.whitespace_before_import, small.whitespace_after_import)
    builder.add(NAME, "from", "").starts_import = True
    prefix = " "
    for dot in small.relative:
        builder.add(DOT, ".", prefix)
        prefix = ""
    if small.module is not None:
        _dotted(builder, small.module, prefix)
    builder.add(NAME, "import", " ")
    lpar = builder.add(LPAR, "", " ")
    lpar.atom = True
    _aliases(builder, small.names, "")
    builder.add(RPAR, "", "")


# -- lines and black's transforms on them --------------------------------------------


class Line:
    __slots__ = ("depth", "leaves", "inside", "split_rhs", "magic", "delimiters", "invisible",
                 "_depth", "_match", "_previous", "_for", "_lambda")

    def __init__(self, depth: int, inside: bool = False):
        self.depth = depth
        self.leaves: list[Leaf] = []
        self.inside = inside  # inside brackets (black tracks every leaf's brackets)
        self.split_rhs = False  # a body to explode one item per line
        self.magic = None  # the closing bracket of a magic trailing comma
        self.delimiters: dict[int, int] = {}  # id(leaf) -> priority of a split after it
        self.invisible: list[Leaf] = []
        self._depth = 0
        self._match: dict[tuple[int, str], Leaf] = {}
        self._previous = None
        self._for: list[int] = []
        self._lambda: list[int] = []

    def append(self, leaf: Leaf, track: bool = False) -> None:
        if self.inside or track:
            self._mark(leaf)
            if self._is_magic(leaf):
                self.magic = leaf
        self.leaves.append(leaf)

    def _mark(self, leaf: Leaf) -> None:
        kind = leaf.kind
        if self._depth == 0 and kind in CLOSING and (0, kind) not in self._match:
            return
        if self._for and self._for[-1] == self._depth and kind == NAME and leaf.value == "in":
            self._depth -= 1
            self._for.pop()
        if self._lambda and self._lambda[-1] == self._depth and kind == COLON:
            self._depth -= 1
            self._lambda.pop()
        if kind in CLOSING:
            self._depth -= 1
            leaf.opening = self._match.pop((self._depth, kind))
            if not leaf.value:
                self.invisible.append(leaf)
        leaf.depth = self._depth
        if self._depth == 0:
            previous = self._previous
            priority = leaf.before
            if priority == DOT_P and not (previous is None or previous.kind in CLOSING):
                priority = 0
            elif kind == STRING and previous is not None and previous.kind == STRING:
                priority = STRING_P  # implicit concatenation
            if priority and previous is not None:
                self.delimiters[id(previous)] = priority
            elif leaf.comma_after:
                self.delimiters[id(leaf)] = COMMA_P
        if kind in OPENING:
            self._match[self._depth, _CLOSER[kind]] = leaf
            self._depth += 1
            if not leaf.value:
                self.invisible.append(leaf)
        self._previous = leaf
        if kind == NAME and leaf.value == "lambda":
            self._depth += 1
            self._lambda.append(self._depth)
        if kind == NAME and leaf.value == "for":
            self._depth += 1
            self._for.append(self._depth)

    def _is_magic(self, closing: Leaf) -> bool:
        if closing.kind not in CLOSING or not self.leaves or self.leaves[-1].kind != COMMA:
            return False
        if closing.kind == RBRACE:
            return True
        if closing.kind == RSQB:
            return not (closing.trailer and _one_sequence(closing.opening, closing, self.leaves, LSQB, RSQB))
        if self.is_import:
            return True
        return closing.opening is not None and not _one_sequence(closing.opening, closing, self.leaves)

    @property
    def is_import(self) -> bool:
        return bool(self.leaves) and self.leaves[0].starts_import

    def max_priority(self, exclude=()) -> int:
        values = [v for k, v in self.delimiters.items() if k not in exclude]
        if not values:
            raise ValueError
        return max(values)

    def count(self, priority: int) -> int:
        return sum(1 for v in self.delimiters.values() if v == priority)

    def __str__(self) -> str:
        if not self.leaves:
            return "\n"
        first = self.leaves[0]
        return first.prefix + "    " * self.depth + first.value + "".join(
            leaf.prefix + leaf.value for leaf in self.leaves[1:]) + "\n"

    def text(self) -> str:
        return str(self).strip("\n")


def _one_sequence(opening, closing, leaves, open_kind=LPAR, close_kind=RPAR) -> bool:
    """Whether between the brackets stands one item (with its comma: a one-tuple)."""
    if opening is None or (opening.kind, closing.kind) != (open_kind, close_kind):
        return False
    depth = closing.depth + 1
    try:
        start = next(i for i, leaf in enumerate(leaves) if leaf is opening) + 1
    except StopIteration:
        return False
    commas = 0
    for leaf in leaves[start:]:
        if leaf is closing:
            break
        if leaf.depth == depth and leaf.kind == COMMA:
            commas += 1
            if leaf.arglist:
                commas += 1
                break
    return commas < 2


class _Splitter:
    def __init__(self, line_length: int, dated: bool):
        self.line_length = line_length
        self.dated = dated

    def short(self, line: Line, text: str | None = None) -> bool:
        return len(line.text() if text is None else text) <= self.line_length

    # transform_line
    def transform(self, line: Line, force: bool) -> list[Line]:
        text = line.text()
        if not line.split_rhs and line.magic is None and self.short(line, text):
            return [line]
        transforms = (self.delimiter_split, self.rhs) if line.inside else (self.rhs,)
        for transform in transforms:
            try:
                return self.run(line, transform, force, text)
            except _CannotSplit:
                continue
        return [line]

    def run(self, line: Line, transform, force: bool, text: str) -> list[Line]:
        optional = [bracket for bracket in line.invisible if bracket.depth == 0]
        result = []
        for new in transform(line, force):
            if new.text() == text:
                raise _CannotSplit
            result.extend(self.transform(new, force))
        if force or transform != self.rhs or not line.invisible or any(b.value for b in optional) \
                or self.short(result[0]) or any(leaf.orphan for leaf in line.leaves):
            return result
        copy = Line(line.depth, line.inside)
        copy.split_rhs, copy.magic = line.split_rhs, line.magic
        for leaf in line.leaves:
            copy.append(leaf.copy(), track=True)
        if copy.leaves:
            copy.leaves[0].prefix = ""
        second = self.run(copy, transform, True, text)
        if all(self.short(new) for new in second):
            result = second
        return result

    # right_hand_split_with_omits
    def rhs(self, line: Line, force: bool):
        prefix_lengths = {}
        length = 4 * line.depth
        for leaf in line.leaves:
            prefix_lengths[id(leaf)] = length
            length += len(leaf.prefix) + len(leaf.value)
        first_lines = None
        for omit in _trailers_to_omit(line, self.line_length):
            if omit:
                target = None
                for leaf in reversed(line.leaves):
                    if leaf.kind in CLOSING and id(leaf) not in omit:
                        target = leaf.opening
                        break
                if target is not None and target.value and prefix_lengths.get(id(target), 0) > self.line_length:
                    continue
            lines = list(self.right_hand_split(line, force, omit))
            if first_lines is None and not omit:
                first_lines = lines
            if self.short(lines[0]):
                yield from lines
                return
        if first_lines is not None:
            yield from first_lines
        else:
            yield from self.right_hand_split(line, force, ())

    def right_hand_split(self, line: Line, force: bool, omit):
        split = _first_rhs(line, omit)
        yield from self.maybe_omit_optional(split, line, force, omit)

    def maybe_omit_optional(self, split, line: Line, force: bool, omit):
        head, body, tail, opening, closing = split
        if not force and opening.kind == LPAR and not opening.value and closing.kind == RPAR \
                and not closing.value and not line.is_import and self.can_omit(split):
            omit = {id(closing), *omit}
            try:
                split_oop = _first_rhs(line, omit)
                if self.prefer_oop(split_oop, split):
                    yield from self.maybe_omit_optional(split_oop, line, force, omit)
                    return
            except _CannotSplit:
                if _is_chained(line):
                    pass
                elif not _can_be_split(body) and not self.short(body):
                    raise
        if opening.kind == LPAR:
            opening.value = "("
        if closing.kind == RPAR:
            closing.value = ")"
        for result in (head, body, tail):
            if result.leaves:
                yield result

    def prefer_oop(self, oop, split) -> bool:
        head = split[0]
        if not (len(head.leaves) >= 2 and head.leaves[-2].kind == EQUAL):
            return True
        if not any(leaf.kind in BRACKETS for leaf in head.leaves[:-1]):
            return True
        if len(head.text()) > self.line_length - 1:
            return True
        if head.magic is not None:
            return True
        equals = [leaf.kind for leaf in head.leaves].count(EQUAL)
        oop_equals = [leaf.kind for leaf in oop[0].leaves].count(EQUAL)
        if equals > 1 and equals > oop_equals:
            return False
        closing_after_assign = False
        for leaf in reversed(oop[0].leaves):
            if leaf.kind == EQUAL:
                break
            if leaf.kind in CLOSING:
                closing_after_assign = True
                break
        return closing_after_assign or (
            any(leaf.kind == EQUAL for leaf in oop[0].leaves) and self.short(oop[0]))

    def can_omit(self, split) -> bool:
        """Whether the body has a shape safe to lay out without its optional parentheses."""
        line = split[1]
        if not line.delimiters:
            return True
        priority = line.max_priority()
        count = line.count(priority)
        if count > 1:
            return False
        if priority == DOT_P:
            return True
        first, second = line.leaves[0], line.leaves[1]
        if first.kind in OPENING and second.kind not in CLOSING:
            if self._can_omit_opening(line, first):
                return True
        penultimate, last = line.leaves[-2], line.leaves[-1]
        if last.kind == RPAR or last.kind == RBRACE or (last.kind == RSQB and not last.trailer):
            if penultimate.kind in OPENING:
                return False
            if self._can_omit_closing(line, last):
                return True
        return False

    def _can_omit_opening(self, line: Line, first: Leaf) -> bool:
        remainder = False
        length = 4 * line.depth
        index = -1
        for index, leaf in enumerate(line.leaves):
            if leaf.kind in CLOSING and leaf.opening is first:
                remainder = True
            if remainder:
                length += len(leaf.prefix) + len(leaf.value)
                if length > self.line_length:
                    return False
                if leaf.kind in OPENING:
                    remainder = False
        return len(line.leaves) == index + 1

    def _can_omit_closing(self, line: Line, last: Leaf) -> bool:
        length = 4 * line.depth
        seen_other = False
        for leaf in line.leaves:
            length += len(leaf.prefix) + len(leaf.value)
            if leaf is last.opening:
                if seen_other or length <= self.line_length:
                    return True
            elif leaf.kind in OPENING:
                seen_other = True
        return False

    # delimiter_split
    def delimiter_split(self, line: Line, force: bool):
        if not line.leaves:
            raise _CannotSplit
        last_leaf = line.leaves[-1]
        try:
            priority = line.max_priority(exclude={id(last_leaf)})
        except ValueError:
            raise _CannotSplit from None
        if priority == DOT_P and line.count(priority) == 1:
            raise _CannotSplit
        lines = []
        current = Line(line.depth, line.inside)
        lowest = None
        comma_safe = True
        for leaf in line.leaves:
            current.append(leaf)
            if lowest is None or leaf.depth < lowest:
                lowest = leaf.depth
            if comma_safe and leaf.depth == lowest and leaf.vararg and not self.dated:
                comma_safe = False
            if line.delimiters.get(id(leaf)) == priority:
                lines.append(current)
                current = Line(line.depth, line.inside)
        if current.leaves:
            if priority == COMMA_P and current.leaves[-1].kind != COMMA:
                if comma_safe:  # (black adds one after *args only in code it dates to Python 3.6+)
                    comma = Leaf(COMMA, ",")
                    comma.orphan = True
                    current.append(comma)
            lines.append(current)
        for new in lines:
            new.leaves[0].prefix = ""
            yield new


def _is_chained(line: Line) -> bool:
    return [leaf.kind for leaf in line.leaves].count(EQUAL) > 1


def _can_be_split(line: Line) -> bool:
    leaves = line.leaves
    if len(leaves) < 2:
        return False
    if leaves[0].kind == STRING and leaves[1].kind == DOT:
        calls = dots = 0
        following = leaves[-1]
        for leaf in leaves[-2::-1]:
            if leaf.kind in OPENING:
                if following.kind not in CLOSING:
                    return False
                calls += 1
            elif leaf.kind == DOT:
                dots += 1
            elif leaf.kind == NAME:
                if not (following.kind == DOT or following.kind in OPENING):
                    return False
            elif leaf.kind not in CLOSING:
                return False
            if dots > 1 and calls > 1:
                return False
    return True


def _first_rhs(line: Line, omit):
    """Head (up to the last opening bracket not omitted), body and tail of ``line``."""
    tail, body, head = [], [], []
    current = tail
    opening = closing = None
    for leaf in reversed(line.leaves):
        if current is body and leaf is opening:
            current = head if body else tail
        current.append(leaf)
        if current is tail and leaf.kind in CLOSING and id(leaf) not in omit:
            opening, closing = leaf.opening, leaf
            current = body
    if not (opening and closing and head):
        raise _CannotSplit
    tail.reverse()
    body.reverse()
    head.reverse()
    head_line = _build(head, line, opening, "head")
    body_line = _build(body, line, opening, "body")
    tail_line = _build(tail, line, opening, "tail")
    tail_length = len(str(tail_line).strip())
    if not body_line.leaves:
        if tail_length == 0 or tail_length < 3:
            raise _CannotSplit
    return head_line, body_line, tail_line, opening, closing


def _build(leaves, original: Line, opening: Leaf, component: str) -> Line:
    result = Line(original.depth)
    if component == "body":
        result.inside = True
        result.depth += 1
        if leaves and original.is_import and leaves[-1].kind != COMMA:  # black ends an import's names with a comma
            comma = Leaf(COMMA, ",")
            comma.orphan = True
            leaves = [*leaves, comma]
    track = _inside_matching(leaves) if component == "head" else ()
    for leaf in leaves:
        result.append(leaf, track=id(leaf) in track)
    if component == "body" and _should_explode(result, opening):
        result.split_rhs = True
    return result


def _inside_matching(leaves) -> set[int]:
    ids: set[int] = set()
    stack: list[tuple[str, list[int]]] = []
    started = False
    for leaf in leaves:
        if leaf.kind in OPENING:
            started = True
            stack.append((_CLOSER[leaf.kind], [id(leaf)]))
        elif not started:
            continue
        elif leaf.kind in CLOSING:
            if stack and leaf.kind == stack[-1][0]:
                _, level = stack.pop()
                level.append(id(leaf))
                ids.update(level)
            else:
                break
        elif stack:
            stack[-1][1].append(id(leaf))
    return ids


def _should_explode(line: Line, opening: Leaf) -> bool:
    """Whether a body is split one item to a line straight away (black's should_split_line)."""
    if opening.value not in "[{(":
        return False
    exclude = set()
    trailing = False
    if not line.leaves:
        return False
    last = line.leaves[-1]
    if last.kind == COMMA:
        trailing = True
        exclude.add(id(last))
    try:
        priority = line.max_priority(exclude)
    except ValueError:
        return False
    return priority == COMMA_P and (trailing or opening.atom)


def _trailers_to_omit(line: Line, line_length: int):
    """Black's generate_trailers_to_omit: growing sets of closing brackets to keep joined."""
    omit: set[int] = set()
    if line.magic is None:
        yield omit
    length = 4 * line.depth
    opening = closing = None
    inner: set[int] = set()
    leaves = line.leaves
    for index in range(len(leaves) - 1, -1, -1):
        leaf = leaves[index]
        length += len(leaf.prefix) + len(leaf.value)
        if length > line_length:
            break
        if opening is not None:
            if leaf is opening:
                opening = None
            elif leaf.kind in CLOSING:
                prev = leaves[index - 1] if index > 0 else None
                if prev is not None and prev.kind == COMMA and leaf.opening is not None \
                        and not _one_sequence(leaf.opening, leaf, leaves):
                    break
                inner.add(id(leaf))
        elif leaf.kind in CLOSING:
            prev = leaves[index - 1] if index > 0 else None
            if prev is not None and prev.kind in OPENING:
                inner.add(id(leaf))
                continue
            if closing is not None:
                omit.add(id(closing))
                omit.update(inner)
                inner.clear()
                yield omit
            if prev is not None and prev.kind == COMMA and leaf.opening is not None \
                    and not _one_sequence(leaf.opening, leaf, leaves):
                break
            if leaf.value:
                opening = leaf.opening
                closing = leaf


def split_statement(stmt: cst.SimpleStatementLine, line_length: int) -> str:
    """The text black gives ``stmt`` (its code with no leading lines, no comment) at
    ``line_length``; raises Unsure where this module does not reproduce black."""
    builder = statement_leaves(stmt)
    line = Line(0)
    for leaf in builder.leaves:
        line.append(leaf, track=True)
    lines = _Splitter(line_length, builder.dated).transform(line, False)
    return "".join(str(new) for new in lines)
