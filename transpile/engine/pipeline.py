"""Run passes over a file: stages of passes, one LibCST traversal per stage."""
from __future__ import annotations

import ast
import re
import symtable
import sys
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Callable, Sequence

import libcst as cst

from .context import FileContext, Stats
from .diagnostics import Diagnostic, Safety, Severity
from .edits import IGNORE_COMMENT, Edit, EditKey, ignored_passes
from .formatting import InvalidStatement, code_of, format_statement
from .import_table import ImportTable
from .nesting import MAX_NESTING, SHALLOW_NESTING, call_with_deep_stack, longest_statement_line, nesting_depth
from .passes import Pass
from .parsing import parse_module
from .positions import start_positions
from .collector import collector_paused
from .package_index import source_digest
from .walk import SCOPE_TYPES, skippable, transform

Stage = tuple[type[Pass], ...]

# The largest source converted: LibCST's tree takes about 0.5 GB of memory per million
# characters (the largest file of the benchmark corpora has 234,000).
MAX_SOURCE_CHARS = 5_000_000


@dataclass
class ConversionResult:
    """What converting one source gave."""

    code: str
    diagnostics: list[Diagnostic]
    changed: bool
    filename: str = "<string>"
    stats: Stats = field(default_factory=Stats)
    failed: bool = False  # the input could not be converted at all (code is the input)
    edits: list[Edit] = field(default_factory=list)  # when recorded: each pass's replacements, in order

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]


class ReparseError(AssertionError):
    """A pass produced a tree that does not survive code generation and re-parsing."""


def _handler_tables(passes: Sequence[Pass]):
    visit: dict[str, list] = {}
    leave: dict[str, list] = {}
    for p in passes:
        for kind, node_type, attr in _handler_names(type(p)):
            (visit if kind == "visit" else leave).setdefault(node_type, []).append(getattr(p, attr))
    return visit, leave


_HANDLER_NAMES: "weakref.WeakKeyDictionary[type, tuple]" = weakref.WeakKeyDictionary()  # tests make local passes


def _handler_names(pass_type: type) -> tuple[tuple[str, str, str], ...]:
    """(kind, node type, attribute) of a pass class's visit_/leave_ handlers, in ``dir``
    order; found once per class (``dir`` of every pass for every file cost 1% of a run)."""
    names = _HANDLER_NAMES.get(pass_type)
    if names is None:
        found = []
        for attr in dir(pass_type):
            kind, _, node_type = attr.partition("_")
            if node_type and "_" not in node_type and kind in ("visit", "leave"):
                found.append((kind, node_type, attr))
        names = _HANDLER_NAMES[pass_type] = tuple(found)
    return names


# Whole statements: what markers attach to and black formats (a set of concrete types,
# because isinstance against LibCST's abstract bases is slow on every node).
STATEMENT_TYPES = frozenset(
    t for t in vars(cst).values()
    if isinstance(t, type) and issubclass(t, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    and not getattr(t, "__abstractmethods__", None)
)


# Nodes whose leave every pass sees even after an earlier pass removed or replaced them:
# passes keep stacks per statement and scope (a removed TorchScript overload stub must
# still pop what each pass pushed on entering it). Expressions are not among them: a
# later pass handed a replaced expression would report it as if unconverted.
_LEFT_BY_ALL = STATEMENT_TYPES | SCOPE_TYPES | {cst.IndentedBlock}
# Nodes whose entering and leaving the traversal keeps track of (where it is: ctx.compiled,
# in_annotation, in_import, ...); any other node without handlers is passed through at once.
_TRACKED = _LEFT_BY_ALL | {cst.Annotation, cst.Import, cst.ImportFrom}


class StageTransformer(cst.CSTTransformer):
    """Dispatches every node to the passes that handle its type, in pass order.

    It also does what every pass needs around statements: collects ``# transpile:``
    markers for the enclosing statement and formats statements that changed.
    """

    def __init__(self, passes: Sequence[Pass], ctx: FileContext, debug: bool = False,
                 compiled_method: Callable[[FileContext, cst.FunctionDef, cst.ClassDef], bool] | None = None):
        super().__init__()
        self.ctx = ctx
        self._compiled_method = compiled_method or (lambda ctx, function, cls: False)
        self.debug = debug
        self._visit, self._leave = _handler_tables(passes)
        # Subtrees that can hold no node a pass handles are not entered: what the traversal
        # tracks (statements, scopes) matters only to handlers inside them.
        self.skip = skippable(frozenset(self._visit) | frozenset(self._leave))
        self._position = {p.id: i for i, p in enumerate(passes)}  # a claim skips the passes after its owner
        self._edits = 0
        self._edit_marks: list[int] = []
        self._depth = 0
        # (the module's own replacement is never an edit: the definitions and imports the
        # other edits need)
        self._watch = ctx.watching_edits
        self._ignores: list[frozenset[str] | None] = []  # per open statement: passes its ignore comment names
        self._decided: list[set[str]] = []  # per open statement: passes a decision declined there

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.ctx.frozen:
            return False  # left as it is, handlers and all (on_leave returns it unchanged)
        kind = type(node)
        claimed = self.ctx.claimed
        if kind not in _TRACKED and not (claimed and id(node) in claimed):  # most nodes: only their handlers
            descend = True
            for handler in self._visit.get(kind.__name__, ()):
                if handler(node) is False:
                    descend = False
            return descend
        if kind in STATEMENT_TYPES:
            self.ctx.markers.append([])
            self._edit_marks.append(self._edits)
            if self._watch:
                self._ignores.append(ignored_passes(_line_comment(node)))
                self._decided.append(set())
        elif kind is cst.IndentedBlock:
            self._depth += 1
        if kind in SCOPE_TYPES:
            self._enter_scope(node, kind)
        elif kind is cst.Annotation:
            self.ctx.annotation_depth += 1
        elif kind is cst.Import or kind is cst.ImportFrom:
            self.ctx.import_depth += 1
        descend = True
        for handler in self._visit.get(type(node).__name__, ()):
            if claimed and id(node) in claimed and self._after_claim(handler, node):
                continue
            if handler(node) is False:
                descend = False
        return descend

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        kind = type(original)
        leaves = self._leave.get(kind.__name__)
        if updated is original and leaves is None and kind not in _TRACKED:
            return original  # unchanged, no handler, no statement or scope to close (most nodes)
        if id(original) in self.ctx.frozen:
            return original
        if updated is not original and kind in _OPERAND_FIELDS:
            updated = _parenthesize_replaced(original, updated)
        result = last = updated
        late = kind in _LEFT_BY_ALL
        claimed = self.ctx.claimed
        if not late and not self._watch:
            # most nodes (expressions, edits not watched): the loop below without what it
            # does for statements and scopes (the same handlers, results and checks, in order)
            for handler in leaves or ():
                if claimed and id(original) in claimed and self._after_claim(handler, original):
                    continue  # (a handler before may claim the node)
                new = handler(original, result)
                if new is not result:
                    self._edits += 1
                    new = _keep_parentheses(result, new)
                    if self.debug:
                        check_node(new, type(handler.__self__).id)
                    result = new
                    if type(result) is not kind:
                        break  # an expression replaced by another kind: later passes see the new one
            if kind is cst.Annotation:
                self.ctx.annotation_depth -= 1
            elif kind is cst.Import or kind is cst.ImportFrom:
                self.ctx.import_depth -= 1
            return result
        for handler in leaves or ():
            if claimed and id(original) in claimed and self._after_claim(handler, original):
                continue
            if type(result) is not kind:  # (LibCST's node classes are final: isinstance through ABCMeta is slow)
                if not late:
                    break  # an expression replaced by another kind: later passes see the new one
                # A statement or scope removed or replaced: the later passes still see it
                # leave (what they pushed on visiting it is popped), their result unused.
                handler(original, last)
                continue
            last = result
            snap = self.ctx.snapshot() if self._watch else None
            new = handler(original, result)
            if new is not result:
                pass_type = type(handler.__self__)
                if (snap is not None and not pass_type.derived_edits and type(original) is not cst.Module
                        and not self._proposed(pass_type, original, result, new, snap)):
                    new = self.ctx.keep_source_references(result, original)
                    if new is result:
                        continue
                self._edits += 1
                new = _keep_parentheses(result, new)
                if self.debug:
                    check_node(new, type(handler.__self__).id)
                result = new
        if kind in SCOPE_TYPES:
            self.ctx.open_scopes.pop()
            if kind is not cst.Lambda:
                self.ctx.compiled_scopes.pop()
        elif kind is cst.Annotation:
            self.ctx.annotation_depth -= 1
        elif kind is cst.Import or kind is cst.ImportFrom:
            self.ctx.import_depth -= 1
        if kind is cst.IndentedBlock:
            self._depth -= 1
        elif kind in STATEMENT_TYPES:
            markers = self.ctx.markers.pop()
            if self._watch:
                ignored, decided = self._ignores.pop(), self._decided.pop()
                if ignored is not None:  # an ignored line gets no marker of the passes it names
                    markers = [m for m in markers if ignored and m.split()[2] not in ignored]
                if decided:  # the output says so itself: converting it again keeps the code
                    result = _with_ignore_comment(result, decided)
            edited = self._edits != self._edit_marks.pop()
            wrapped = isinstance(original, cst.SimpleStatementLine)  # a line a pass may have put in an if
            lines = (cst.SimpleStatementLine, cst.FlattenSentinel, cst.If) if wrapped else (cst.SimpleStatementLine, cst.FlattenSentinel)
            if edited and isinstance(result, lines):
                try:
                    result = self._format(result, wrapped, original)
                except InvalidStatement as why:
                    result = self._keep_original(original, markers, why)
            if markers:
                result = _attach_markers(result, markers, was_line=kind is cst.SimpleStatementLine)
            if edited:
                self._edits += 1  # the enclosing statement changed too
        return result


    def _enter_scope(self, node: cst.CSTNode, kind: type) -> None:
        """Open a scope: a class's body is not compiled; a method is when ``compiled_method``
        says so, a nested function when the function around it is; a lambda changes nothing."""
        ctx = self.ctx
        if kind is cst.FunctionDef:
            enclosing = ctx.open_scopes[-1] if ctx.open_scopes else None
            if type(enclosing) is cst.ClassDef:
                ctx.compiled_scopes.append(self._compiled_method(ctx, node, enclosing))
            else:
                ctx.compiled_scopes.append(ctx.compiled)
        elif kind is cst.ClassDef:
            ctx.compiled_scopes.append(False)
        ctx.open_scopes.append(node)

    def _after_claim(self, handler, node: cst.CSTNode) -> bool:
        """Whether ``handler`` belongs to a pass after the one that claimed ``node``."""
        return self._position[handler.__self__.id] > self._position[self.ctx.claimed[id(node)]]

    def _ignored(self, pass_id: str) -> bool:
        """Whether an enclosing statement's ``# transpile: ignore`` comment names the pass."""
        return any(ignored is not None and (not ignored or pass_id in ignored) for ignored in self._ignores)

    def _proposed(self, pass_type: type[Pass], original, found, new, snap: tuple) -> bool:
        """A pass's replacement of ``original`` (``found`` as the pass got it) by ``new``:
        recorded when asked, and whether it stands (False: declined, the state it
        changed is taken back)."""
        ctx = self.ctx
        code = _node_code(original)
        counted = (pass_type.id, code)
        occurrence = ctx.edit_counts.get(counted, 0)
        ctx.edit_counts[counted] = occurrence + 1
        why_not = ""
        if self._ignored(pass_type.id):
            why_not = "a '# transpile: ignore' comment"
        elif EditKey(pass_type.id, code, occurrence) in ctx.declined:
            why_not = "a decision"
        reported = ctx.restore(snap) if why_not else ctx.pending[snap[3]:]
        if why_not == "a decision" and self._decided:
            self._decided[-1].add(pass_type.id)
        if why_not:
            ctx.report(original, pass_type.id, f"{pass_type.name or pass_type.id} not applied here: declined by {why_not}",
                       Severity.INFO, Safety.MANUAL)
        if ctx.recording:
            # the same text can be an edit: ``nn.ReLU()`` names MindSpore's once the imports change
            ctx.edit_records.append((pass_type, original, code, occurrence, _node_code(found), _node_code(new),
                                     reported, why_not))
        return not why_not

    def _format(self, result, wrapped: bool = False, original: cst.CSTNode | None = None):
        """Black's layout for a changed statement line (or each line of a sequence, or the
        lines of a guard ``if`` a pass wrapped a line in: they are changed lines too, and a
        second run would otherwise lay them out)."""
        if isinstance(result, cst.FlattenSentinel):
            kinds = (cst.SimpleStatementLine, cst.If) if wrapped else cst.SimpleStatementLine
            return cst.FlattenSentinel([self._format(n, wrapped) if isinstance(n, kinds) else n for n in result.nodes])
        if isinstance(result, cst.If):
            if not isinstance(result.body, cst.IndentedBlock):
                return result
            inner = 4 * (self._depth + 1)
            body = [format_statement(n, inner) if isinstance(n, cst.SimpleStatementLine) else n for n in result.body.body]
            return result.with_changes(body=result.body.with_changes(body=body))
        before = original if type(original) is cst.SimpleStatementLine else None
        return format_statement(result, 4 * self._depth, before)

    def _keep_original(self, original, markers: list[str], why: Exception):
        """A statement whose rewrite is not valid Python stays as it was, marked, and
        counts as unconverted; the rest of the file is still converted."""
        message = f"this statement's conversion is not valid Python ({why}); it is left as it was"
        self.ctx.report(original, "MS000", message, Severity.ERROR, Safety.MANUAL)
        self.ctx.stats.unconverted += 1
        markers[:] = [f"{MARKER_PREFIX} MS000 {message}"]
        return original


def _line_comment(stmt: cst.CSTNode) -> str | None:
    """The comment ending a statement's (first) line."""
    if isinstance(stmt, cst.SimpleStatementLine):
        whitespace = stmt.trailing_whitespace
    else:
        body = getattr(stmt, "body", None)
        whitespace = getattr(body, "header", None)
    comment = getattr(whitespace, "comment", None)
    return comment.value if comment is not None else None


def _with_ignore_comment(stmt, pass_ids: set[str]):
    """``stmt`` with ``# transpile: ignore[...]`` for ``pass_ids`` ending its (first) line."""
    if isinstance(stmt, cst.FlattenSentinel):
        return cst.FlattenSentinel([_with_ignore_comment(stmt.nodes[0], pass_ids), *stmt.nodes[1:]]) if stmt.nodes else stmt
    if isinstance(stmt, cst.SimpleStatementLine):
        owner, field_name = stmt, "trailing_whitespace"
    elif isinstance(getattr(stmt, "body", None), cst.IndentedBlock):
        owner, field_name = stmt.body, "header"
    elif isinstance(getattr(stmt, "body", None), cst.SimpleStatementSuite):
        owner, field_name = stmt.body, "trailing_whitespace"
    else:
        return stmt
    whitespace = getattr(owner, field_name)
    old = whitespace.comment.value if whitespace.comment else ""
    known = ignored_passes(old)
    if known is not None and (not known or pass_ids <= known):
        return stmt
    text = f"# transpile: ignore[{', '.join(sorted(pass_ids | (known or set())))}]"
    if known is not None:
        old = old[:IGNORE_COMMENT.search(old).start()].rstrip()
    comment = cst.Comment(f"{old}  {text}" if old else text)
    spaced = whitespace.with_changes(comment=comment, whitespace=whitespace.whitespace if old else cst.SimpleWhitespace("  "))
    changed = owner.with_changes(**{field_name: spaced})
    return changed if owner is stmt else stmt.with_changes(body=changed)


def _node_code(node) -> str:
    """A node's code without the comment lines above a statement and the line break after it."""
    if isinstance(node, cst.FlattenSentinel):
        return "".join(_node_code(n) + "\n" for n in node.nodes).rstrip("\n")
    if isinstance(node, cst.RemovalSentinel):
        return ""
    if getattr(node, "leading_lines", None):
        node = node.with_changes(leading_lines=())
    return code_of(node).rstrip("\n")


def _keep_parentheses(replaced: cst.CSTNode, new):
    """A replacement keeps the parentheses of the expression it replaces: a multi-line
    ``(x.f()\n .contiguous())`` whose call is dropped is still inside them."""
    lpar = getattr(replaced, "lpar", None)
    if lpar and isinstance(new, cst.BaseExpression) and not getattr(new, "lpar", True):
        return new.with_changes(lpar=lpar, rpar=replaced.rpar)
    return new


# Binding strength: a child weaker than its parent's operator needs parentheses.
_ATOM = 100
_OPERATOR_STRENGTH = {
    cst.BitOr: 6, cst.BitXor: 7, cst.BitAnd: 8, cst.LeftShift: 9, cst.RightShift: 9, cst.Add: 10,
    cst.Subtract: 10, cst.Multiply: 11, cst.Divide: 11, cst.FloorDivide: 11, cst.Modulo: 11,
    cst.MatrixMultiply: 11, cst.Power: 13, cst.And: 3, cst.Or: 2, cst.Not: 4, cst.Minus: 12,
    cst.Plus: 12, cst.BitInvert: 12,
}
_UNARY = 12
_OPERAND_FIELDS = {
    cst.Attribute: ("value",), cst.Subscript: ("value",), cst.Call: ("func",),
    cst.BinaryOperation: ("left", "right"), cst.BooleanOperation: ("left", "right"),
    cst.UnaryOperation: ("expression",), cst.Comparison: ("left",),
}


def _strength(node: cst.BaseExpression) -> int:
    kind = type(node)
    if node.lpar:
        return _ATOM
    if kind in (cst.BinaryOperation, cst.BooleanOperation, cst.UnaryOperation):
        return _OPERATOR_STRENGTH[type(node.operator)]
    if kind is cst.Comparison:
        return 5
    if kind is cst.IfExp:
        return 1
    if kind in (cst.Lambda, cst.NamedExpr, cst.Yield):
        return 0
    if kind is cst.Await:
        return 14
    return _ATOM


def _needs_parentheses(parent: cst.CSTNode, field_name: str, child: cst.BaseExpression) -> bool:
    strength = _strength(child)
    if isinstance(parent, (cst.Attribute, cst.Subscript, cst.Call)):
        return strength < _ATOM
    if isinstance(parent, cst.Comparison):
        return strength <= 5
    own = _OPERATOR_STRENGTH[type(parent.operator)]
    if type(parent.operator) is cst.Power:  # right-associative; a ** -b is fine
        return strength <= own if field_name == "left" else strength < _UNARY
    return strength < own or (strength == own and field_name == "right")


def _parenthesize_replaced(original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
    """A child a pass replaced keeps its meaning where it stands: the receiver of
    ``torch.empty(1).uniform_(a, b).item()`` that became ``r * s + a`` needs parentheses."""
    changes = {}
    for name in _OPERAND_FIELDS[type(original)]:
        child = getattr(updated, name)
        if child is not getattr(original, name) and _needs_parentheses(updated, name, child):
            changes[name] = child.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return updated.with_changes(**changes) if changes else updated


MARKER_PREFIX = "# transpile:"


def _markers_to_first_statement(module: cst.Module) -> cst.Module:
    """LibCST parses the comments above a file's first statement into the module's
    header; marker lines there (an earlier run's) belong to that statement, where the
    next markers are compared with them. The code is the same."""
    marks = [i for i, line in enumerate(module.header) if line.comment and line.comment.value.startswith(MARKER_PREFIX)]
    if not marks or not module.body:
        return module
    first = module.body[0]
    moved = first.with_changes(leading_lines=[*module.header[marks[0]:], *first.leading_lines])
    return module.with_changes(header=module.header[:marks[0]], body=[moved, *module.body[1:]])


def _names(node: cst.CSTNode) -> set[str]:
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)
        stack.extend(current.children)
    return found


def _marked_node(nodes, marker: str) -> int:
    """Which of the statements a pass put in one statement's place carries a marker: the
    first that names the marker's subject (``# transpile: MS201 torch.hsplit: ...`` ->
    ``hsplit``), else the first. Lines hoisted before a statement (``y = h[-1]`` before the
    call that read ``h.pop()``) so leave its markers on it, where a second run finds them."""
    words = marker.split()
    subject = words[3].rstrip(":").rsplit(".", 1)[-1] if len(words) > 3 else ""
    if len(nodes) > 1 and subject.isidentifier():
        for i, node in enumerate(nodes):
            if subject in _names(node):
                return i
    return 0


def _attach_markers(stmt, markers: list[str], was_line: bool = False):
    """``stmt`` with the marker comments it lacks; ``was_line``: it was a simple line. Of
    several statements in its place, each marker goes on the one ``_marked_node`` picks."""
    if isinstance(stmt, cst.FlattenSentinel):
        nodes = list(stmt.nodes)
        for marker in markers:
            at = _marked_node(nodes, marker)
            nodes[at] = _attach_markers(nodes[at], [marker], was_line)
        return cst.FlattenSentinel(nodes)
    target = stmt
    if not isinstance(target, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        return stmt
    inner = target.body.body[0] if was_line and isinstance(target, cst.BaseCompoundStatement) and isinstance(
        target.body, cst.IndentedBlock) and target.body.body else None
    if isinstance(inner, cst.SimpleStatementLine):
        # A line a pass wrapped in a block (MS306's guard): its markers go on the line
        # itself, where converting the output again finds them (not on the guard).
        block = target.body.with_changes(body=[_attach_markers(inner, markers), *target.body.body[1:]])
        return target.with_changes(body=block)
    existing = {line.comment.value for line in target.leading_lines if line.comment}
    new_lines = [cst.EmptyLine(comment=cst.Comment(m)) for m in markers if m not in existing]
    if not new_lines:
        return stmt
    return target.with_changes(leading_lines=[*target.leading_lines, *new_lines])


_LAYOUT = (
    cst.BaseParenthesizableWhitespace, cst.Comma, cst.LeftParen, cst.RightParen, cst.AssignEqual,
    cst.Colon, cst.Semicolon, cst.Dot, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
    cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
    cst.Comment, cst.ParenthesizedWhitespace, cst.SimpleWhitespace,
)


def skeleton(node: cst.CSTNode):
    """The tree without layout: node types, names and literal values, nesting."""
    value = getattr(node, "value", None)
    leaf = value if isinstance(value, str) else None
    return (type(node).__name__, leaf, tuple(skeleton(c) for c in node.children if not isinstance(c, _LAYOUT)))


def check_node(node, where: str) -> None:
    """A pass's replacement must print to code that parses back to the same node."""
    if isinstance(node, cst.BaseExpression):
        parse = cst.parse_expression
    elif isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        parse = cst.parse_statement
        node = node.with_changes(leading_lines=())
    else:
        return  # parts of nodes are checked with the statement that holds them
    text = cst.Module(body=[]).code_for_node(node)
    try:
        again = parse(text)
    except cst.ParserSyntaxError as exc:
        raise ReparseError(f"{where}: {text!r} does not parse: {exc}") from exc
    if skeleton(again) != skeleton(node):
        raise ReparseError(f"{where}: {text!r} re-parses to a different tree")


def check_reparse(module: cst.Module, where: str) -> None:
    code = module.code
    try:
        again = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        raise ReparseError(f"{where}: output does not parse: {exc}") from exc
    if skeleton(again) != skeleton(module):
        raise ReparseError(f"{where}: output re-parses to a different tree")


def _failure(source: str, filename: str, message: str, line: int) -> ConversionResult:
    """The input comes back unchanged, failed, with one error diagnostic."""
    diag = Diagnostic("MS000", Severity.ERROR, message, filename, line, 0, Safety.MANUAL)
    return ConversionResult(source, [diag], False, filename, failed=True)


def _measure(source: str, filename: str, converting: bool) -> tuple[int, int] | ConversionResult:
    """(depth, line) of the deepest point of a source CPython parses, as ``nesting_depth``
    measures it, or the failed result when the source is not Python or is past a limit
    (only its syntax is checked when it is not ``converting``)."""
    if converting and len(source) > MAX_SOURCE_CHARS:
        return _failure(source, filename, f"too large to convert: {len(source):,} characters, the converter "
                        f"handles at most {MAX_SOURCE_CHARS:,} (about 0.5 GB of memory per million)", 1)
    try:  # CPython's parser first: LibCST's native one crashes on what this one refuses
        try:
            tree = _parse(source, filename)
        except (RecursionError, MemoryError):  # past CPython's limits here: on a deep stack, to say where
            tree = call_with_deep_stack(_parse, source, filename)
    except SyntaxError as exc:
        why = exc.msg + (" (Python allows 200 levels)" if exc.msg == "too many nested parentheses" else "")
        return _syntax_error(source, filename, why + _newer_syntax(exc, source), exc.lineno or 1, (exc.offset or 1) - 1)
    except (RecursionError, MemoryError) as exc:  # CPython's own limits on nesting and size
        why = f"{type(exc).__name__}: {exc}" if str(exc) else f"{type(exc).__name__}, its stack is full"
        return _failure(source, filename, f"too deeply nested or too large for Python's own parser ({why})",
                        longest_statement_line(source))
    if not converting:
        return 0, 0
    depth, line = nesting_depth(tree)
    if depth > MAX_NESTING:
        return _failure(source, filename, f"an expression or block nested {depth} levels deep; the converter "
                        f"handles at most {MAX_NESTING} (split it, e.g. a long `a + b + ...` into partial sums)", line)
    return depth, line


# Python 3.12's new statements, by the start of the line a 3.11 parser stops at
_NEWER_STATEMENTS = (
    (re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[[^=]*\])?\s*="), "a type statement (`type X = ...`, Python 3.12)"),
    (re.compile(r"^\s*(async\s+)?def\s+[A-Za-z_]\w*\s*\["), "a type parameter list (`def f[T](...)`, Python 3.12)"),
    (re.compile(r"^\s*class\s+[A-Za-z_]\w*\s*\["), "a type parameter list (`class C[T]:`, Python 3.12)"),
)


def _newer_syntax(exc: SyntaxError, source: str) -> str:
    """The words that say a syntax error is syntax of a newer Python than the one
    transpile runs on ("" when it is not, or transpile runs on that Python)."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if sys.version_info >= (3, 12):
        return ""
    lines = source.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and exc.lineno <= len(lines) else ""
    for pattern, what in _NEWER_STATEMENTS:
        if pattern.match(line):
            return f": {what}, syntax newer than this tool's Python {running}"
    if exc.msg.startswith("f-string"):
        return (f" (if this is an f-string Python 3.12 allows, with the same quotes, a backslash or a comment "
                f"inside its braces: syntax newer than this tool's Python {running})")
    return ""


def _parses(code: str, filename: str) -> bool:
    """Whether CPython parses ``code``. Its symbol table (a parse without the tree as Python
    objects, nor bytecode) costs less than ``ast.parse`` or ``compile``; it refuses more (a
    ``nonlocal`` at module level), so only a refusal asks the parser itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the parser's SyntaxWarnings are the code's, not ours to show)
        try:
            symtable.symtable(code, filename, "exec")
            return True
        except (SyntaxError, ValueError, RecursionError):
            pass
    try:
        ast.parse(code, filename)
    except SyntaxError:
        return False
    return True


def _parse(source: str, filename: str) -> ast.Module:
    return ast.parse(source[1:] if source.startswith("\ufeff") else source, filename)


def _syntax_error(source: str, filename: str, message: str, line: int, col: int) -> ConversionResult:
    diag = Diagnostic("MS000", Severity.ERROR, f"syntax error: {message}", filename, line, col, Safety.MANUAL)
    return ConversionResult(source, [diag], False, filename, failed=True)


def mentioned(pass_type: type[Pass], source: str, bound: str) -> bool:
    """Whether a file may hold what the pass acts on (``Pass.mentions``): one of its words
    in the source or in the qualified names the file's imports bind (``bound``, NUL-joined)."""
    words = pass_type.mentions
    return not words or any(word in source or word in bound for word in words)


class PassOrderError(ValueError):
    """The stages put a pass before one it declares it must run after (``Pass.runs_after``)."""


def check_order(stages: Sequence[Stage]) -> None:
    """Raise PassOrderError unless every pass comes after (in an earlier stage, or earlier
    in its stage) each pass of the pipeline it names in ``runs_after``; a named pass the
    pipeline does not hold constrains nothing (a pipeline of a few passes)."""
    place = {p.id: (s, i) for s, stage in enumerate(stages) for i, p in enumerate(stage)}
    names = {p.id: p.name for stage in stages for p in stage}
    wrong = [f"{p.id} {p.name} ({s + 1}.{i + 1}) must run after {other} {names[other]} "
             f"({place[other][0] + 1}.{place[other][1] + 1}): {why}"
             for s, stage in enumerate(stages) for i, p in enumerate(stage)
             for other, why in p.runs_after.items() if other in place and place[other] >= (s, i)]
    if wrong:
        raise PassOrderError("the passes are out of their declared order (stage.position):\n" + "\n".join(wrong))


class Pipeline:
    """An explicit sequence of stages; each stage is one traversal."""

    def __init__(self, stages: Sequence[Stage], module_map: dict[str, str], source_roots: set[str], *,
                 aliases: dict[str, str] | None = None,
                 analyse: Callable[[cst.Module, FileContext], object] | None = None,
                 builds_on_source: Callable[[str], bool] | None = None,
                 compiled_method: Callable[[FileContext, cst.FunctionDef, cst.ClassDef], bool] | None = None):
        """``analyse(module, ctx)`` gathers, once per file, what the passes need to know
        about it; the passes read the result as ``ctx.facts``. Raises PassOrderError when the
        stages break a pass's ``runs_after``."""
        check_order(stages)
        self.stages = tuple(stages)
        # Passes are left out of files that do not mention them (``Pass.mentions``); False
        # runs every pass on every file (tests/test_mentions.py compares the two).
        self.check_mentions = True
        self.module_map = module_map
        self.source_roots = source_roots
        self.aliases = aliases or {}
        self.analyse = analyse
        # whether a method of a class is compiled code (ctx.compiled; the rewrites' rule)
        self.compiled_method = compiled_method
        # whether a top-level package outside the converted tree is built on the source
        # framework (a file importing it is the rewrites' business even without a source import)
        self.builds_on_source = builds_on_source or (lambda root: False)

    @property
    def passes(self) -> tuple[type[Pass], ...]:
        return tuple(p for stage in self.stages for p in stage)

    def run(self, source: str, filename: str = "<string>", *, debug: bool = False,
            inherited: dict[str, str] | None = None, package=None, record_edits: bool = False,
            declined=frozenset()) -> ConversionResult:
        """``inherited``: import bindings the file gets from elsewhere (its star imports
        of sibling modules), used where the file does not bind the name itself. ``package``:
        what the file's tree says about it (``package_index.PackageFacts``), read by the passes.
        ``record_edits``: the result lists every replacement a pass made (``edits``);
        ``declined``: the ``EditKey``s of replacements not to make.

        Never raises for bad input: a file not valid Python, nested too deeply or too
        large for memory comes back failed, with a diagnostic."""
        # The collector is paused for the file (its trees hold no cycles); what the file
        # left in cycles (black's trees have parent links) is freed after it.
        with collector_paused(collect_after=0):
            return self._run(source, filename, debug, inherited, package, record_edits, declined)

    def _run(self, source: str, filename: str, debug: bool, inherited: dict[str, str] | None, package,
             record_edits: bool, declined) -> ConversionResult:
        inherited = inherited or (package.inherited if package is not None else {})
        inherits_source = any(q.split(".")[0] in self.source_roots for q in inherited.values())
        tree_source = package is not None and bool(package.base_roots() & self.source_roots
                                                   or any(map(self.builds_on_source, package.outside)))
        # A file that never names a source framework has nothing to do (its syntax is still checked).
        cheap = not inherits_source and not tree_source and not any(root in source for root in self.source_roots)
        known = getattr(package, "measured", None)
        if known is not None and known[1] <= MAX_NESTING and len(source) <= MAX_SOURCE_CHARS \
                and known[0] == source_digest(source):
            measured = known[1], known[2]  # the tree index parsed this text already
        else:
            measured = _measure(source, filename, converting=not cheap)
        if isinstance(measured, ConversionResult):
            return measured
        if cheap:
            return ConversionResult(source, [], False, filename)
        depth, line = measured
        task = (source, filename, debug, inherited, package, tree_source, record_edits, frozenset(declined))
        try:
            if depth <= SHALLOW_NESTING:
                try:
                    return self._convert(*task)
                except RecursionError:
                    pass  # called from deep in the caller's stack: again, on a deep one
            return call_with_deep_stack(self._convert, *task)
        except RecursionError as exc:
            return _failure(source, filename, f"nested too deeply to convert ({exc}; {depth} levels deep)", line)
        except MemoryError:
            return _failure(source, filename, f"out of memory converting this file ({len(source):,} characters)", 1)

    def _convert(self, source: str, filename: str, debug: bool, inherited: dict[str, str], package,
                 tree_source: bool, record_edits: bool, declined: frozenset) -> ConversionResult:
        """The conversion proper, of a file CPython parses and that nests within limits."""
        try:
            module = _markers_to_first_statement(parse_module(source))
        except cst.ParserSyntaxError as exc:
            return _syntax_error(source, filename, exc.message, exc.raw_line, exc.raw_column)
        task = (module, source, filename, debug, inherited, package, tree_source, record_edits, declined)
        result = self._attempt(*task)
        if result is not None:
            return result
        # Each changed line was checked, yet the whole does not parse (a pass's bug): the
        # top-level statements whose conversion breaks it are kept as they were, marked.
        kept = _culprits(len(module.body), lambda keep: self._attempt(*task, keep) is not None)
        result = self._attempt(*task, kept) if kept is not None else None
        if result is not None:
            return result
        message = ("the converted code does not parse as a whole (a bug in transpile: please report it); "
                   "nothing is converted")
        return _failure(source, filename, message, 1)

    def _attempt(self, module: cst.Module, source: str, filename: str, debug: bool, inherited: dict[str, str],
                 package, tree_source: bool, record_edits: bool, declined: frozenset,
                 keep: frozenset[int] = frozenset()) -> ConversionResult | None:
        """The module converted, its top-level statements numbered in ``keep`` left as they
        are (marked, with an error); None when the converted code does not parse."""
        ctx = FileContext(source, filename, self.module_map, self.aliases)
        try:
            return self._convert_with(ctx, module, source, filename, debug, inherited, package, tree_source,
                                      record_edits, declined, keep)
        finally:
            # The passes and the facts hold the context and it holds them: a cycle that
            # kept each file's trees alive until the cyclic collector traced them all
            # (seconds on a large tree). Emptied, reference counting frees them at once.
            vars(ctx).clear()

    def _convert_with(self, ctx: FileContext, module: cst.Module, source: str, filename: str, debug: bool,
                      inherited: dict[str, str], package, tree_source: bool, record_edits: bool,
                      declined: frozenset, keep: frozenset[int]) -> ConversionResult | None:
        ctx.imports = ImportTable.from_module(module)
        ctx.imports.open_scopes = ctx.open_scopes  # names a function binds hide the imports
        for name, qualified in inherited.items():
            ctx.imports.bindings.setdefault(name, qualified)
        ctx.package = package
        ctx.source_roots = self.source_roots
        ctx.recording, ctx.declined = record_edits, declined
        if not (ctx.imports.roots() & self.source_roots) and not tree_source:
            return ConversionResult(source, [], False, filename)
        if self.analyse is not None:
            ctx.facts = self.analyse(module, ctx)
        kept = {id(module.body[i]) for i in keep}
        for i in sorted(keep):
            ctx.frozen.add(id(module.body[i]))
            ctx.report(module.body[i], "MS000", _KEPT_WHOLE, Severity.ERROR, Safety.MANUAL)
            ctx.stats.unconverted += 1
        current = module
        bound = "\0".join(ctx.imports.bindings.values())
        for stage in self.stages:
            # In debug mode every replacement a pass makes is re-parsed on the spot
            # (blaming that pass), and the whole tree after each stage.
            passes = [p(ctx) for p in stage if not self.check_mentions or mentioned(p, source, bound)]
            driver = StageTransformer(passes, ctx, debug, self.compiled_method)
            current = transform(current, driver, driver.skip)
            if debug:
                check_reparse(current, "+".join(p.id for p in stage))
        if kept:
            marker = [f"{MARKER_PREFIX} MS000 {_KEPT_WHOLE}"]
            current = current.with_changes(body=[
                _attach_markers(stmt, marker, was_line=isinstance(stmt, cst.SimpleStatementLine))
                if id(stmt) in kept else stmt for stmt in current.body])
        code = code_of(current)
        # never hand out code that does not parse (each changed statement was checked;
        # the source parsed before)
        if code != source and not _parses(code, filename):
            return None
        diagnostics = ctx.resolve(module)
        edits = _edits(ctx, module) if record_edits else []
        return ConversionResult(code, diagnostics, code != source, filename, ctx.stats, edits=edits)


_KEPT_WHOLE = ("this statement's conversion makes the file invalid Python (a bug in transpile: please report it); "
               "it is left as it was")


def _culprits(count: int, parses: Callable[[frozenset[int]], bool]) -> frozenset[int] | None:
    """The top-level statements (numbers below ``count``) to keep as they are for the
    conversion to parse, found by halving: a group is converted when the output with it
    (and the groups taken so far) parses, else split. None when keeping them all is not enough."""
    everything = frozenset(range(count))
    if not parses(everything):
        return None
    converted: set[int] = set()

    def take(group: list[int]) -> None:
        if parses(everything - converted - set(group)):
            converted.update(group)
        elif len(group) > 1:
            half = len(group) // 2
            take(group[:half])
            take(group[half:])

    take(list(range(count)))
    return everything - converted


_SAFETY_ORDER = {Safety.SAFE: 0, Safety.MANUAL: 1, Safety.UNSAFE: 2}


def _edits(ctx: FileContext, module: cst.Module) -> list[Edit]:
    """The recorded replacements, located in the input (an unsafe report makes an edit unsafe)."""
    positions = start_positions(module, [record[1] for record in ctx.edit_records])
    edits = []
    for pass_type, original, code, occurrence, before, after, reported, why_not in ctx.edit_records:
        line, col = positions.get(id(original), (0, 0))
        safety = max((p.safety for p in reported), key=_SAFETY_ORDER.__getitem__, default=Safety.SAFE)
        reason = "; ".join(dict.fromkeys(p.message for p in reported)) or pass_type.summary
        edits.append(Edit(pass_type.id, line, col, code, before, after, reason, safety, occurrence,
                          applied=not why_not, why_not=why_not, pass_name=pass_type.name))
    return edits
