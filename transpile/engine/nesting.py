"""How deeply a source nests, measured before LibCST sees it, and a deep stack for the
files that nest deeply.

LibCST's parser is native code that recurses once per level of nesting: 1,500 nested
parentheses overflowed its stack and killed the process. The passes, the tree walks and
LibCST's code generation recurse too (``y = x + x + ...`` of 500 terms raised
RecursionError), and LibCST's parser and some passes take time quadratic in the depth
(5,000 terms took minutes). So CPython's parser reads the file first (it refuses more than
200 nested brackets with a SyntaxError; what it refuses as too deep for the caller's stack
is read again on the deep stack, to say how deep and where), a file nested deeper than
``MAX_NESTING`` fails with a diagnostic, and one deeper than ``SHALLOW_NESTING`` is
converted on a thread with a large stack and recursion limit. Real code nests less than
30 levels deep (29 at most in the 1,206 files of the benchmark corpora): it stays on the
caller's thread.
"""
from __future__ import annotations

import ast
import io
import sys
import threading
import tokenize
from typing import Callable, TypeVar

# Levels of nodes from the module down, as ``nesting_depth`` counts them. Past this a file
# fails: the time is quadratic in the depth (600 terms of ``torch.relu(x) + ...`` convert in
# 7 s on a loaded machine, 1,000 took 25 s: LibCST's parser, tensor_methods' numpy test).
MAX_NESTING = 600
# Up to this depth a file converts on the caller's stack, under the default recursion limit.
SHALLOW_NESTING = 100

# The deep thread: 512 MB of (virtual, touched only as used) stack leaves about 10 kB per
# Python frame at the recursion limit, several times what a frame that recurses through C
# (``any`` over a generator, ``isinstance`` with ``__instancecheck__``) was measured to use.
DEEP_STACK_BYTES = 512 << 20
DEEP_RECURSION_LIMIT = 50_000

_deep_lock = threading.Lock()  # the recursion limit is the interpreter's, not the thread's
_on_deep_stack = threading.local()
T = TypeVar("T")


def nesting_depth(tree: ast.AST, exact_above: int = SHALLOW_NESTING) -> tuple[int, int]:
    """(depth, line): how many levels of nodes ``tree`` nests, from the module down, and
    the line of the deepest node. Counted as LibCST nests them: ``a and b and c`` is a
    level per operand, a dotted name in an import a level per dot (CPython keeps the
    operands in one list, the name in one string).

    Iterative, so any depth is measured. The depth is exact when it is above
    ``exact_above``; below it, single-line expressions too short to nest past it are
    not entered (a character holds at most two levels), which keeps this cheap.
    """
    best, best_line = 0, 0
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 0)]
    pop, push, expr, iter_child_nodes = stack.pop, stack.append, ast.expr, ast.iter_child_nodes
    while stack:
        node, depth, line = pop()
        line = getattr(node, "lineno", line)
        kind = type(node)
        if kind is ast.alias or kind is ast.ImportFrom:
            depth += (node.name if kind is ast.alias else node.module or "").count(".")
        if depth > best:
            best, best_line = depth, line
        if isinstance(node, expr) and node.end_lineno == line \
                and depth + 2 * (node.end_col_offset - node.col_offset) + 2 <= exact_above:
            continue
        step = len(node.values) if kind is ast.BoolOp else 1
        for child in iter_child_nodes(node):
            push((child, depth + step, line))
    return best, best_line


def longest_statement_line(source: str) -> int:
    """The first line of the statement with the most tokens: where a file that CPython's
    parser found too deeply nested most likely is (0 if the tokens cannot be read)."""
    best, best_line, count, start = 0, 0, 0, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if count > best:
                    best, best_line = count, start
                count = 0
            elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                if count == 0:
                    start = token.start[0]
                count += 1
    except (tokenize.TokenError, SyntaxError, MemoryError):
        pass
    if count > best:
        best_line = start
    return best_line


def call_with_deep_stack(function: Callable[..., T], *args) -> T:
    """``function(*args)`` on a thread with a large stack and a high recursion limit; its
    exception is raised here. Calls are one at a time (the limit is process-wide and is
    restored after). If no such thread can be started, it runs here, under the usual limit."""
    if getattr(_on_deep_stack, "active", False):
        return function(*args)  # already there
    outcome: dict[str, object] = {}

    def target() -> None:
        _on_deep_stack.active = True
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    with _deep_lock:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))  # before the thread runs
        try:
            worker = _start_deep_thread(target)
            if worker is not None:
                worker.join()
        finally:
            sys.setrecursionlimit(limit)
    if worker is None:
        return function(*args)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _start_deep_thread(target: Callable[[], None]) -> threading.Thread | None:
    """A started thread with a ``DEEP_STACK_BYTES`` stack (the size is read when the
    thread starts), or None where the platform refuses that size or the thread."""
    try:
        previous = threading.stack_size(DEEP_STACK_BYTES)
    except (ValueError, RuntimeError):
        return None
    try:
        worker = threading.Thread(target=target, name="transpile-deep-stack", daemon=True)
        worker.start()
        return worker
    except (RuntimeError, MemoryError):
        return None
    finally:
        threading.stack_size(previous)
