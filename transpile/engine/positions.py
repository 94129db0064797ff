"""Where nodes start in the code of a module, for the few nodes diagnostics name.

LibCST's PositionProvider stores a position for every node of the file, through a
metadata traversal that rebuilds the tree; that cost an eighth of a conversion. This
runs one code generation of the module and records only the wanted nodes, with the
same rules: a node's syntactic start where its code generation marks one (a statement
starts after its leading blank lines and comments), else where its code begins. The
code generation is engine/codegen.py's, which hands each wanted node (and so everything
a wanted node's start may depend on: its own children) to LibCST's path with this state's
hooks; a wanted node of a type codegen writes inline makes the whole module go LibCST's way.
"""
from __future__ import annotations

import re
from contextlib import nullcontext

import libcst as cst
from libcst._nodes.internal import CodegenState

from . import codegen

_NEWLINE = re.compile(r"\r\n?|\n")
_NOTHING = nullcontext()


class _AllFound(Exception):
    """Every wanted node's position is known: code generation stops."""


class _Mark:
    """Context of one wanted node's syntactic position."""

    __slots__ = ("state", "node", "start_node")

    def __init__(self, state: "_WantedPositions", node: cst.CSTNode, start_node: cst.CSTNode | None) -> None:
        self.state, self.node, self.start_node = state, node, start_node

    def __enter__(self) -> None:
        if self.start_node is None:
            self.state.found[id(self.node)] = self.state.position()
        else:  # the start is the start of a child: find that child too
            self.state.wanted.add(id(self.start_node))

    def __exit__(self, *exc) -> None:
        if self.start_node is not None:
            self.state.found[id(self.node)] = self.state.found[id(self.start_node)]


class _WantedPositions(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self._asked = frozenset(wanted)  # (``wanted`` grows by the children syntactic starts name)
        self.found: dict[int, tuple[int, int]] = {}
        self._starts: list[tuple[int, int]] = []
        self._scanned = 0
        self._line, self._column = 1, 0

    def position(self) -> tuple[int, int]:
        """(line, column) after the tokens written so far; tokens are scanned once."""
        tokens = self.tokens
        text = "".join(tokens[self._scanned:])
        if "\r" in text:  # (token by token: a token ending in \r and one starting with \n are two newlines)
            for token in tokens[self._scanned:]:
                segments = _NEWLINE.split(token)
                if len(segments) == 1:
                    self._column += len(token)
                else:
                    self._line += len(segments) - 1
                    self._column = len(segments[-1])
        else:
            newlines = text.count("\n")
            if newlines:
                self._line += newlines
                self._column = len(text) - text.rfind("\n") - 1
            else:
                self._column += len(text)
        self._scanned = len(tokens)
        return self._line, self._column

    def syntactic_start(self, node: cst.CSTNode, before: str = "") -> None:
        """A wanted node the fast generation writes starts here (``before``: text still to
        come on this line first, an indentation)."""
        line, column = self.position()
        self.found[id(node)] = (line, column + len(before))

    def generated(self, node: cst.CSTNode) -> None:
        if not self._starts and self._asked <= self.found.keys():
            raise _AllFound

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self._starts.append(self.position())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            start = self._starts.pop()
            self.found.setdefault(id(node), start)
            if not self._starts and self._asked <= self.found.keys():
                raise _AllFound  # no wanted node is open: the rest of the code changes nothing

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) not in self.wanted:
            return _NOTHING
        return _Mark(self, node, start_node)


def start_positions(module: cst.Module, nodes) -> dict[int, tuple[int, int]]:
    """``id(node)`` -> (1-based line, 0-based column) of each of ``nodes`` in ``module``."""
    nodes = list(nodes)
    state = _WantedPositions(module, {id(n) for n in nodes})
    try:
        if any(type(n) in codegen.INLINED for n in nodes):
            module._codegen(state)
        else:
            codegen.generate(module, state, wanted=True)
    except _AllFound:  # the code after the last wanted node is not generated
        pass
    return state.found
