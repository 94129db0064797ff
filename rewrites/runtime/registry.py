"""The one registry of run-time helpers: every top-level function and class of
``rewrites/runtime/<family>.py``.

A helper is MindSpore code the converted file calls where no MindSpore op means what the
torch call means (``torch.index_add`` -> ``_torch_index_add(...)``). The converter copies
its source into the file, once, beside the converted code (``ctx.definitions``; the
layer-values pass writes them after the imports, sorted by name). The source is read
from the module file with ``ast`` when a file first needs one of the module's helpers
(once per process): the converter never imports the helpers' modules, so it needs
neither MindSpore nor torch.

- A helper is a ``def`` or ``class`` at the top of its module; the assignments that
  follow it (a named tuple type it returns) belong to it and are copied with it, and
  so do the definitions the module's ``COPIED_WITH`` names as its parts (one
  definition of the converted file: today's outputs have them together).
- A top-level assignment of one upper-case name after the first helper (a constant
  table several helpers read: ``_TORCH_PARAMETER_NAMES``) is a helper of its own, copied
  only into the files whose helpers name it.
- The other helpers it names (of any family) are its dependencies, copied with it.
- The module's imports (``import mindspore as ms``, ``from mindspore import ops``) name
  what the helper's names stand for: in the copy, each such name is spelled as the
  converted file binds that module or object (``ops.where`` -> ``ops.where`` or
  ``mindspore.ops.where``), the import requested from the file's import table.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from transpile.engine.formatting import black_layout

RUNTIME = Path(__file__).resolve().parent
_CODE = cst.Module(body=())
NOT_FAMILIES = frozenset({"__init__", "registry"})


@dataclass(frozen=True)
class Helper:
    name: str
    family: str  # the module's name (rewrites/runtime/<family>.py)
    source: str  # as written in its module: the definition and the statements that belong to it
    defines: frozenset[str]  # its name and those of the statements that belong to it
    needs: tuple[str, ...]  # the other helpers it names, by name
    # where it names an import of its module: (line, first byte, end byte, what the name imports)
    imported: tuple[tuple[int, int, int, str], ...]

    @property
    def targets(self) -> tuple[str, ...]:
        """What it names through its module's imports (``mindspore.ops``), sorted."""
        return tuple(sorted({target for *_, target in self.imported}))


def families() -> list[Path]:
    return sorted(p for p in RUNTIME.glob("*.py") if p.stem not in NOT_FAMILIES)


def module_imports(tree: ast.Module) -> dict[str, str]:
    """Name bound by a top-level import -> what it imports: ``ms`` -> ``mindspore``,
    ``ops`` -> ``mindspore.ops`` (``from mindspore import ops``)."""
    bound = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    bound[root] = root
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                bound[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return bound


def copied_with(tree: ast.Module) -> dict[str, str]:
    """The module's ``COPIED_WITH``: a definition -> the helper it is part of (written
    next to it; the helper's definitions are one definition of the converted file)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["COPIED_WITH"]:
            return ast.literal_eval(stmt.value)
    return {}


def _groups(tree: ast.Module) -> list[tuple[str, list[ast.stmt]]]:
    """Each helper: its name and its top-level definitions (one, or those ``COPIED_WITH``
    joins to it, consecutive) with the plain statements following them (not imports,
    not the module docstring)."""
    part_of = copied_with(tree)
    groups: list[tuple[str, list[ast.stmt]]] = []
    for stmt in tree.body:
        constant = _constant_table(stmt)
        if constant is not None and groups:
            groups.append((constant, [stmt]))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            key = part_of.get(stmt.name, stmt.name)
            if groups and groups[-1][0] == key:
                groups[-1][1].append(stmt)
            else:
                groups.append((key, [stmt]))
        elif groups and not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            groups[-1][1].append(stmt)
    for key, group in groups:
        if key not in set().union(*map(_bound_names, group)):
            raise ValueError(f"COPIED_WITH names {key}, which is not defined beside its parts")
    return groups


def _constant_table(stmt: ast.stmt) -> str | None:
    """The name of ``NAME = ...`` (one upper-case target), else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        name = stmt.targets[0].id
        if name.isupper() and name != "COPIED_WITH":
            return name
    return None


def _bound_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


@functools.cache
def _names_by_family() -> dict[str, str]:
    """Every name a helper defines -> its family, read without parsing the modules: the
    top-level ``def``/``class`` names and the names assigned at the top after the first
    of them (tests/test_runtime_registry.py checks that the parse finds the same)."""
    names = {}
    for path in families():
        text = path.read_text(encoding="utf-8")
        first = re.search(r"^(?:def|class) ", text, re.M)
        found = re.findall(r"^(?:def|class) (\w+)", text, re.M)
        found += re.findall(r"^(\w+)\s*(?::[^=\n]*)?=[^=]", text[first.start():] if first else "", re.M)
        names.update(dict.fromkeys(found, path.stem))
    return names


@functools.cache
def helper_names() -> frozenset[str]:
    """Every name a helper defines: a top-level definition of a converted file with such
    a name is the tool's own output (every file converted asks: no module is parsed)."""
    return frozenset(_names_by_family())


@functools.cache
def family_helpers(family: str) -> dict[str, Helper]:
    """The helpers of ``rewrites/runtime/<family>.py`` by each name they define (the
    module parsed once per process, when a file first needs one of its helpers)."""
    path = RUNTIME / f"{family}.py"
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    lines = text.splitlines(keepends=True)
    elsewhere = _names_by_family()
    imports = module_imports(tree)
    found: dict[str, Helper] = {}
    for key, group in _groups(tree):
        first = group[0]
        start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        source = "".join(lines[start - 1:group[-1].end_lineno])
        defines = frozenset(set().union(*map(_bound_names, group)))
        loads = [n for stmt in group for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        needs = tuple(sorted({n.id for n in loads if n.id in elsewhere and n.id not in defines}))
        imported = tuple(sorted((n.lineno - start, n.col_offset, n.end_col_offset, imports[n.id])
                                for n in loads if n.id in imports and n.id not in elsewhere))
        helper = Helper(key, family, source, defines, needs, imported)
        for name in defines:
            found[name] = helper
    return found


def helper(name: str) -> Helper:
    """The helper defining ``name`` (KeyError: no helper does)."""
    return family_helpers(_names_by_family()[name])[name]


def helpers() -> dict[str, Helper]:
    """Every helper by each name it defines (every module parsed)."""
    return {name: h for family in sorted(set(_names_by_family().values())) for name, h in family_helpers(family).items()}


@functools.lru_cache(maxsize=None)
def spelled(name: str, spellings: tuple[tuple[str, str], ...]) -> str:
    """The source of helper ``name`` with the names of its module's imports written as
    ``spellings`` says (what the name imports -> how the file spells it)."""
    found = helper(name)
    spelling = dict(spellings)
    lines = found.source.splitlines(keepends=True)
    for line, first, end, target in reversed(found.imported):  # right to left: the offsets stay true
        raw = lines[line].encode("utf-8")
        lines[line] = (raw[:first] + spelling[target].encode("utf-8") + raw[end:]).decode("utf-8")
    return "".join(lines)


def closure(name: str) -> list[str]:
    """``name`` and every helper it needs, directly or not (each once)."""
    order, todo = [], [helper(name).name]
    while todo:
        current = todo.pop()
        if current not in order:
            order.append(current)
            todo.extend(helper(current).needs)
    return order


# Black's layout of each helper's source as its module spells it, computed ahead
# (``make docs`` writes it; a test checks it is current): black took about 6 ms a helper,
# the first time each process copied it. Each entry holds a digest of the source it lays
# out: an entry that no longer matches is not used.
LAYOUTS = RUNTIME / "layouts.json"


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def layouts() -> dict[str, list[str]]:
    """helper name -> [digest of its source, black's layout of it], for every helper."""
    return {name: [_digest(h.source), black_layout(h.source)] for name, h in sorted(helpers().items())
            if name == h.name}


def write_layouts() -> None:
    """Write ``layouts.json`` (``make docs``)."""
    LAYOUTS.write_text(json.dumps(layouts(), indent=1, sort_keys=True) + "\n", encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _laid_out() -> dict[str, list[str]]:
    try:
        return json.loads(LAYOUTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _layout(name: str, source: str, spellings: tuple[tuple[str, str], ...] = ()) -> str:
    """Black's layout of ``source``, helper ``name`` spelled as ``spellings`` says."""
    known = _laid_out().get(name)
    if known is not None and known[0] == _digest(source):
        return known[1]
    respelled = _respelled_layout(name, spellings) if spellings else None
    return respelled if respelled is not None else black_layout(source)


# black_layout's line length (black's default)
_LINE_LENGTH = 88


def _whole_lines(text: str) -> frozenset[int]:
    """The lines (1-based) of ``text`` that each hold one whole logical line."""
    whole, start = set(), None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if start is not None and start == token.start[0]:
                whole.add(start)
            start = None
            continue
        if start is None:
            start = token.start[0]
        if token.end[0] != start:  # (a string over several lines)
            start = -1
    return frozenset(whole)


@functools.lru_cache(maxsize=None)
def _uses_in_layout(name: str) -> tuple[tuple[int, int, int, str], ...] | None:
    """Where the precomputed layout of helper ``name`` names its module's imports, as
    ``Helper.imported`` for its source: when each such name stands on a line that holds a
    whole logical line with no power operator (black lays out each logical line alone; one
    that fits on its line is left as it is, but for hugging ``**``); else None."""
    found = helper(name)
    known = _laid_out().get(name)
    if known is None or known[0] != _digest(found.source) or not found.imported:
        return None
    layout = known[1]
    lines = found.source.splitlines(keepends=True)
    imports = {lines[line].encode("utf-8")[first:end].decode("utf-8"): target
               for line, first, end, target in found.imported}
    tree = ast.parse(layout)
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in imports]
    powers = {line for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
              for line in range(n.lineno, n.end_lineno + 1)}
    whole = _whole_lines(layout)
    if len(loads) != len(found.imported) or any(n.lineno not in whole or n.lineno in powers for n in loads):
        return None
    return tuple(sorted((n.lineno - 1, n.col_offset, n.end_col_offset, imports[n.id]) for n in loads))


@functools.lru_cache(maxsize=None)
def _respelled_layout(name: str, spellings: tuple[tuple[str, str], ...]) -> str | None:
    """Black's layout of helper ``name`` spelled as ``spellings`` says, from its precomputed
    layout: the names respelled there, when each stands on a line holding a whole logical
    line that still fits (black leaves such a line as it is); else None (black decides).
    tests/test_runtime_registry.py compares it with black on every helper."""
    uses = _uses_in_layout(name)
    if uses is None:
        return None
    spelling = dict(spellings)
    lines = _laid_out()[name][1].splitlines(keepends=True)
    for line, first, end, target in reversed(uses):  # right to left: the offsets stay true
        raw = lines[line].encode("utf-8")
        lines[line] = (raw[:first] + spelling[target].encode("utf-8") + raw[end:]).decode("utf-8")
    for line in {use[0] for use in uses}:
        text = lines[line].rstrip("\n")
        if not text.isascii() or len(text) > _LINE_LENGTH:
            return None
    return "".join(lines)


def define(ctx, name: str, source: str, spellings: tuple[tuple[str, str], ...] = ()) -> None:
    """``source`` (defining ``name``, spelled as ``spellings`` says) written once per file
    beside the code, as black lays it out."""
    if name not in ctx.definitions:
        ctx.define(name, _layout(name, source, spellings))


def runtime_helper(ctx, name: str) -> cst.Name:
    """``name``, its source and those of the helpers it needs copied into the file (once;
    ``ctx.definitions``), spelled as the file binds what they import."""
    needed = closure(name)
    targets = sorted({t for n in needed for t in helper(n).targets})
    spellings = tuple((t, _CODE.code_for_node(ctx.reference(f"{t}.x"))[:-2]) for t in targets)
    for each in needed:
        define(ctx, each, spelled(each, spellings), spellings)
    return cst.Name(name)
