"""MS901: torch imports become MindSpore imports; unused ones go; needed ones stay.

Runs last, alone: it needs to know which names the converted code still uses.
A source import whose name is still used by unconverted code is kept, with a
diagnostic, so nothing still needed is silently dropped.
"""
from __future__ import annotations

import functools
import re

import libcst as cst

from transpile.engine.diagnostics import Safety, Severity
from transpile.engine.import_table import build_dotted, dotted_name
from transpile.engine.passes import Example, Pass
from transpile.engine.names import scoped_references

from ..syntax import code
from ..table_calls import LOWERED_ROOTS, tables
from ..analysis.annotations import forward_reference_names


def used_names(module: cst.Module, imports) -> tuple[set[str], dict[int, set[str]]]:
    """The names the code uses, except where a function or class binds the name itself
    (its ``one_hot = ...`` uses no imported ``one_hot``); a quoted annotation's names too.
    And, per function (by ``id``), every name used anywhere in it: what an import inside the
    function can be used by."""
    used: set[str] = set()
    in_functions: dict[int, set[str]] = {}
    for node, scopes in scoped_references(module, also=(cst.Annotation,)):
        names = forward_reference_names(node) if type(node) is cst.Annotation else {node.value}
        for scope in scopes:
            if type(scope) is cst.FunctionDef:
                in_functions.setdefault(id(scope), set()).update(names)
        if type(node) is cst.Annotation:
            used |= names  # "ms.Tensor" uses ms (MS210 writes it)
        elif node.value not in used and (not scopes or not imports.hidden(node.value, list(scopes))):
            used.add(node.value)  # (the scope lookup is the costly part: once per name found)
    return used, in_functions


@functools.lru_cache(maxsize=1024)
def import_statement(binding: str, module: str) -> cst.SimpleStatementLine:
    """``import module as binding`` (or ``from`` form), parsed once a run: the same few
    imports go into every file, and a tree's nodes may be shared (they never change)."""
    parent, _, last = module.rpartition(".")
    if not parent:
        text = f"import {module}" if binding == module else f"import {module} as {binding}"
    else:
        text = f"from {parent} import {last}" + ("" if binding == last else f" as {binding}")
    return cst.parse_statement(text + "\n")


class Imports(Pass):
    id = "MS901"
    name = "imports"
    summary = "Rewrite torch imports to MindSpore; drop the unused, keep what is still needed."
    derived_edits = True  # the imports the other passes' code needs
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    pass\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    pass\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.modules = tables().modules
        # einops imports go too once nothing uses them (its calls are lowered, not mapped)
        self.roots = tables().source_roots | LOWERED_ROOTS
        self.used: set[str] = set()
        self.used_in_function: dict[int, set[str]] = {}
        self._depth = 0
        self._first_source_import: int | None = None
        self.exported: set[str] = set()  # names listed in __all__
        self.star_exported: set[str] = set()  # without __all__: names files star-importing this one use
        self.taken_elsewhere: frozenset[str] = frozenset()  # names other files import from this one
        self._reexport = False  # the import line being converted re-exports on purpose
        self._import_fallback = 0  # inside a try whose handler catches ImportError

    def visit_Module(self, node: cst.Module) -> None:
        self.used, self.used_in_function = used_names(node, self.ctx.imports)
        self.exported = _all_names(node)
        package = self.ctx.package
        self.taken_elsewhere = frozenset(package.imported_elsewhere) if package is not None else frozenset()
        if not self.exported and package is not None:  # without __all__ a star import hands on every public name
            self.exported = self.star_exported = {name for name in package.star_used if not name.startswith("_")}
        for i, stmt in enumerate(node.body):
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                self._is_source_import(s) for s in stmt.body
            ):
                self._first_source_import = i
                break

    def _is_source_import(self, node) -> bool:
        if isinstance(node, cst.Import):
            return any((dotted_name(a.name) or "").split(".")[0] in self.roots for a in node.names)
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            return (dotted_name(node.module) or "").split(".")[0] in self.roots
        return False

    def visit_IndentedBlock(self, node) -> None:
        self._depth += 1

    def _moved_to_module(self, binding: str, module: str) -> bool:
        """The converted import of a MindSpore module inside a function goes to the
        module's level: ImportTable reads lazy imports as bindings of the whole file, so a
        converted call in another function may use the name too."""
        inside = self.ctx.current_function is not None
        if inside:
            self.ctx.request_import(binding, module)
        return inside

    def visit_Try(self, node: cst.Try) -> None:
        if _catches_import_error(node):
            self._import_fallback += 1

    def leave_Try(self, original: cst.Try, updated):
        if _catches_import_error(original):
            self._import_fallback -= 1
        return updated

    def _unused(self, binding: str, to_module: bool = False) -> bool:
        """Not used in this file and not re-exported either: a re-export is a name in
        ``__all__`` (without one, a name files star-importing this one use), a name other
        files of the tree import from this one, an import marked ``# noqa``, or one inside
        ``try: ... except ImportError:`` (a fallback import is there for other modules to
        import). An import inside a function binds a name of that function alone: it is
        unused when the function no longer uses the name (the conversion took its uses),
        whatever the rest of the file does (an import that only probes whether torch is
        there goes too: the converted function runs on MindSpore). Not one whose converted
        import goes to the module's level (``to_module``: ``_moved_to_module``), which other
        functions' converted calls may spell through."""
        function = None if to_module else self._binding_function(binding)
        if function is not None:
            return binding not in self.used_in_function.get(id(function), ())
        if binding in self.used:
            return False
        return not (binding in self.exported or binding in self.taken_elsewhere or self._reexport
                    or self._import_fallback)

    def _binding_function(self, binding: str) -> cst.FunctionDef | None:
        """The function an import being converted binds ``binding`` in: the innermost open
        definition when it is a function that does not declare the name ``global`` or
        ``nonlocal``; None at module level or in a class body."""
        scope = next((n for n in reversed(self.ctx.open_scopes) if type(n) in (cst.FunctionDef, cst.ClassDef)), None)
        if type(scope) is not cst.FunctionDef or binding in _declared_outside(scope):
            return None
        return scope

    def _reexport_target(self, binding: str, qual: str):
        """A re-exported torch symbol the tables convert: import its MindSpore target."""
        entry = tables().lookup(qual)
        if binding in self.used or entry is None or entry.unsupported or not entry.target:
            return None
        if entry.target.startswith(".") or entry.hook or entry.params:
            return None  # a call with converted arguments: the re-exported name would not take torch's
        return import_statement(binding, entry.target)

    def _keep(self, binding: str, qual: str, small) -> None:
        why = (f"{binding!r} is still used by code that was not converted" if binding in self.used
               else f"{binding!r} is used by modules of the tree that star-import this one and has no drop-in "
                    "MindSpore counterpart" if binding in self.star_exported
               else f"{binding!r} is imported from this module by other files of the tree and has no drop-in "
                    "MindSpore counterpart" if binding in self.taken_elsewhere and binding not in self.exported
               else f"{binding!r} is re-exported (__all__, # noqa or an ImportError fallback) and has no drop-in MindSpore counterpart")
        self.ctx.report_text(
            code(small), self.id, f"import of {qual} kept: {why}", Severity.WARNING,
        )

    def _convert_import(self, node: cst.Import):
        """(the import with what stays, extra statements)."""
        names = []
        for alias in node.names:
            full = dotted_name(alias.name) or ""
            binding = alias.asname.name.value if alias.asname else full.split(".")[0]
            qual = full if alias.asname else binding
            to_module = bool(alias.asname) and qual in self.modules and "." in qual
            if qual.split(".")[0] not in self.roots:
                names.append(alias)
            elif self._unused(binding, to_module):
                continue
            elif to_module:
                if not self._moved_to_module(binding, self.modules[qual]):
                    names.append(alias.with_changes(name=build_dotted(self.modules[qual])))
            else:
                self._keep(binding, qual, node)
                names.append(alias)
        return self._rebuild(node, names), []

    def _convert_import_from(self, node: cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar):
            # The names it brings in are not known here (no table lists a module's names):
            # the code using them is left as it is, and the user is told so.
            self.ctx.report(node, self.id, f"`from {dotted_name(node.module)} import *`: the names it brings in "
                            "cannot be resolved, so the code using them is left unconverted (import them by name, "
                            "or the module, and convert again)", Severity.WARNING, Safety.MANUAL)
            self.ctx.count_unconverted()
            return node, []
        module = dotted_name(node.module)
        kept, moved = [], []
        for alias in node.names:
            name = alias.name.value
            binding = alias.asname.name.value if alias.asname else name
            qual = f"{module}.{name}"
            if self._unused(binding, qual in self.modules):
                continue
            if qual in self.modules:
                if not self._moved_to_module(binding, self.modules[qual]):
                    moved.append(import_statement(binding, self.modules[qual]))
            elif (target := self._reexport_target(binding, qual)) is not None:
                moved.append(target)
            else:
                self._keep(binding, qual, node)
                kept.append(alias)
        return self._rebuild(node, kept), moved

    @staticmethod
    def _rebuild(node, names):
        if not names:
            return None
        last = len(names) - 1
        names = [n.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == last else n for i, n in enumerate(names)]
        return node.with_changes(names=names)

    def leave_SimpleStatementLine(self, original, updated: cst.SimpleStatementLine):
        if not any(self._is_source_import(s) for s in updated.body):
            return updated
        body, extra = [], []
        comment = updated.trailing_whitespace.comment
        self._reexport = comment is not None and _NOQA_UNUSED.search(comment.value) is not None
        for small in updated.body:
            if not self._is_source_import(small):
                body.append(small)
                continue
            convert = self._convert_import if isinstance(small, cst.Import) else self._convert_import_from
            kept, moved = convert(small)
            if kept is not None:
                body.append(kept)
            extra.extend(moved)
        lines = []
        if body:
            lines.append(updated.with_changes(body=body))
        for stmt in extra:
            lines.append(stmt.with_changes(leading_lines=() if lines else updated.leading_lines))
        if not lines:
            # A placeholder, dropped by the enclosing block, which hands its comments on.
            comments = list(updated.leading_lines)
            if updated.trailing_whitespace.comment is not None:
                comments.append(cst.EmptyLine(comment=updated.trailing_whitespace.comment))
            return updated.with_changes(
                body=[cst.Pass()], leading_lines=comments,
                trailing_whitespace=cst.TrailingWhitespace(cst.SimpleWhitespace("  "), cst.Comment(_REMOVED)),
            )
        return lines[0] if len(lines) == 1 else cst.FlattenSentinel(lines)

    def _drop_placeholders(self, body) -> list:
        """Remove emptied import lines; their comments move to the next statement."""
        out, carried = [], []
        for stmt in body:
            if _is_placeholder(stmt):
                carried.extend(line for line in stmt.leading_lines if line.comment is not None)
                continue
            if carried:
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
                carried = []
            out.append(stmt)
        return out

    def leave_IndentedBlock(self, original, updated):
        self._depth -= 1
        body = self._drop_placeholders(updated.body)
        if len(body) == len(updated.body):
            return updated
        if body and _is_placeholder(updated.body[0]):  # no blank line opens a block (black)
            lines = list(body[0].leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            body[0] = body[0].with_changes(leading_lines=lines)
        return updated.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        updated = updated.with_changes(body=self._drop_placeholders(updated.body))
        # Only the imports the converted code names: a pass may ask for a reference and
        # then give its rewrite up, and which binding it asks for depends on the file's
        # imports (``F.x`` reuses ``F``; once ``F`` is gone, ``ops`` is asked for), so an
        # unused one would appear only when converting the output again.
        new = [import_statement(b, m) for b, m in sorted(self.ctx.new_imports.items()) if b in self.used]
        bound = {b for b, q in self.ctx.imports.bindings.items()}
        for root in sorted(self.ctx.kept_source_modules & self.used):
            if root not in bound or self.ctx.imports.bindings.get(root) != root:
                new.insert(0, import_statement(root, root))
        if not new:
            return _no_leading_blank_lines(updated)
        body = list(updated.body)
        index = self._insertion_index(body)
        return _no_leading_blank_lines(updated.with_changes(body=[*body[:index], *new, *body[index:]]))

    def _insertion_index(self, body) -> int:
        # after the docstring, __future__ imports and every leading import
        index = 0
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) or (i == 0 and isinstance(s, cst.Expr))
                for s in stmt.body
            ):
                index = i + 1
            else:
                break
        return index


_REMOVED = "# transpile-removed-import"
# ``# noqa`` alone, or naming the unused-import check (F401; torchvision writes ``401``)
_NOQA_UNUSED = re.compile(r"noqa(?!\s*:)|noqa\s*:[^#]*\bF?401\b", re.IGNORECASE)


def _all_names(module: cst.Module) -> set[str]:
    """The string literals assigned or added to ``__all__`` at the top level."""
    names: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                targets = [small.target]
            else:
                continue
            if not any(isinstance(t, cst.Name) and t.value == "__all__" for t in targets):
                continue
            value = small.value
            if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
                for el in value.elements:
                    if isinstance(el.value, cst.SimpleString):
                        names.add(el.value.evaluated_value)
    return names


def _declared_outside(function: cst.FunctionDef) -> set[str]:
    """The names a function's body declares ``global`` or ``nonlocal`` (not in nested definitions)."""
    names: set[str] = set()

    def scan(body) -> None:
        for stmt in body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if type(small) in (cst.Global, cst.Nonlocal):
                        names.update(n.name.value for n in small.names)
            elif type(stmt) not in (cst.FunctionDef, cst.ClassDef):
                for block in _blocks(stmt):
                    scan(block.body)

    if type(function.body) is cst.IndentedBlock:
        scan(function.body.body)
    return names


def _blocks(stmt) -> list:
    """The indented blocks of a compound statement (if/elif/else, loops, with, try)."""
    out = []
    body = getattr(stmt, "body", None)
    if type(body) is cst.IndentedBlock:
        out.append(body)
    orelse = getattr(stmt, "orelse", None)
    if type(orelse) is cst.If:
        out.extend(_blocks(orelse))
    elif orelse is not None and type(orelse.body) is cst.IndentedBlock:
        out.append(orelse.body)
    for handler in getattr(stmt, "handlers", ()):
        if type(handler.body) is cst.IndentedBlock:
            out.append(handler.body)
    final = getattr(stmt, "finalbody", None)
    if final is not None and type(final.body) is cst.IndentedBlock:
        out.append(final.body)
    return out


def _catches_import_error(node: cst.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type
        items = kinds.elements if isinstance(kinds, cst.Tuple) else [kinds] if kinds is not None else []
        for item in items:
            value = item.value if isinstance(item, cst.Element) else item
            if isinstance(value, cst.Name) and value.value in ("ImportError", "ModuleNotFoundError"):
                return True
    return False


def _is_placeholder(stmt) -> bool:
    trailing = getattr(stmt, "trailing_whitespace", None)
    return trailing is not None and trailing.comment is not None and trailing.comment.value == _REMOVED


def _no_leading_blank_lines(module: cst.Module) -> cst.Module:
    """Blank lines left at the top by a removed import would move into the header."""
    if not module.body:
        return module
    first = module.body[0]
    lines = list(first.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    if len(lines) == len(first.leading_lines):
        return module
    return module.with_changes(body=[first.with_changes(leading_lines=lines), *module.body[1:]])
