"""LibCST's parse of text CPython's parser has accepted, without re-validating each node.

Every LibCST node checks its own fields when it is built (``CSTNode.__post_init__`` calls
``_validate``), which catches a hand-built node that could not be printed back. The native
parser builds only nodes of text it has just parsed, so for them the check finds nothing;
it was an eighth of the parse of a large tree (LibCST's own comment there says as much).
The passes' nodes are still validated: the check is off only while the parser runs.
"""
from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

_VALIDATE = CSTNode.__post_init__
# Skipped only while LibCST's hook does nothing but validate (a later LibCST may do more there).
_ONLY_VALIDATES = getattr(_VALIDATE, "__code__", None) is not None and _VALIDATE.__code__.co_names == ("_validate",)
_LOCK = threading.Lock()  # (other threads building nodes meanwhile go unchecked: acceptable, not wrong)


def _unchecked(self) -> None:
    pass


def parse_module(source: str) -> cst.Module:
    """``cst.parse_module(source)``, the same tree, built without per-node validation.
    Raises what ``cst.parse_module`` raises."""
    if not _ONLY_VALIDATES:
        return cst.parse_module(source)
    with _LOCK:
        CSTNode.__post_init__ = _unchecked
        try:
            return cst.parse_module(source)
        finally:
            CSTNode.__post_init__ = _VALIDATE
