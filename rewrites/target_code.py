"""Definitions already written for MindSpore: half-converted files keep them as they are.

A file converted partly by hand holds classes and functions written for MindSpore beside
torch code (``class Attention(nn.Cell)`` with ``from mindspore import nn`` next to
``class MLP(tnn.Module)``). Their code must come out byte for byte: the passes that guess
from the shape of code (a ``construct`` parameter taken for a torch tensor, ``x.std()``
read as torch's unbiased ``std``, GRAPH_MODE fixes) would otherwise rewrite MindSpore's
own methods as if they were torch's.

A top-level class or function is written for MindSpore when the imported names it uses
come from MindSpore and none from a source framework (torch, einops, ...), and, for a
class, each base is MindSpore's, ``object`` or such a class of the same file (a class
deriving from a torch class of the file or the package is converted with it: its
``forward`` must become ``construct``). Such a definition names nothing torch, so the
passes that convert torch names have nothing to do in it either: it is left whole.

A class with MindSpore bases that still names torch somewhere (a converted file with a
torch use left, marked, in ``__init__``; a class half converted by hand) keeps whole each
of its methods that names no torch: a ``construct`` edited by hand after a conversion
(``x.std()`` added) is MindSpore's, whatever ``__init__`` still holds. So does a class with
MindSpore bases that defines ``forward`` and no ``construct`` (a base changed by hand,
the rest not yet): its ``forward`` is converted with the names it uses.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.names import NameRoles


def _imported_roots(node: cst.CSTNode, bindings: dict[str, str], names: NameRoles) -> set[str]:
    """The top-level packages of the imported names a definition uses (``nn`` bound to
    ``mindspore.nn``: ``mindspore``)."""
    return {bindings[name.value].split(".")[0] for name in names.references(node) if name.value in bindings}


def _bases_are_target(node: cst.ClassDef, bindings: dict[str, str], target_roots: frozenset[str],
                      target_classes: set[str]) -> bool:
    """Each base of ``node`` is a MindSpore class, ``object`` or a class of the file written for MindSpore."""
    for base in node.bases:
        value = base.value
        head = value
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name):
            return False
        if isinstance(value, cst.Name) and value.value in target_classes | {"object"}:
            continue
        if head.value not in bindings or bindings[head.value].split(".")[0] not in target_roots:
            return False
    return True


def target_definitions(module: cst.Module, bindings: dict[str, str], source_roots: set[str],
                       target_roots: frozenset[str], names: NameRoles) -> list[cst.CSTNode]:
    """The top-level classes and functions of ``module`` written for the target framework
    (see the module docstring), in file order."""
    found: list[cst.CSTNode] = []
    if not any(q.split(".")[0] in target_roots for q in bindings.values()):
        return found  # nothing imported from the target: no definition can be written for it
    target_classes: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            continue
        roots = _imported_roots(stmt, bindings, names)
        if not roots & target_roots:
            continue
        if isinstance(stmt, cst.ClassDef):
            if not _bases_are_target(stmt, bindings, target_roots, target_classes):
                continue
            target_classes.add(stmt.name.value)
            if roots & source_roots or torch_shaped(stmt):
                found.extend(_methods_naming_no(source_roots, stmt, bindings, names))
                continue
        elif roots & source_roots:
            continue
        found.append(stmt)
    return found


def _methods(class_node: cst.ClassDef) -> list[cst.FunctionDef]:
    body = class_node.body.body if isinstance(class_node.body, cst.IndentedBlock) else ()
    return [stmt for stmt in body if isinstance(stmt, cst.FunctionDef)]


def torch_shaped(class_node: cst.ClassDef) -> bool:
    """A ``forward`` and no ``construct``: a Cell base given to a Module not converted yet
    (MindSpore would never call its ``forward``; it must become ``construct``)."""
    names = {m.name.value for m in _methods(class_node)}
    return "forward" in names and "construct" not in names


def _methods_naming_no(roots: set[str], class_node: cst.ClassDef, bindings: dict[str, str],
                       names: NameRoles) -> list[cst.FunctionDef]:
    """The methods of ``class_node`` that use no imported name of ``roots`` (not ``forward``:
    torch's name, which becomes ``construct``)."""
    return [m for m in _methods(class_node)
            if m.name.value != "forward" and not _imported_roots(m, bindings, names) & roots]
