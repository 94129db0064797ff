"""Per-file state shared by the passes of one conversion."""
from __future__ import annotations

import re

from dataclasses import dataclass, field

import libcst as cst

from .diagnostics import Diagnostic, Safety, Severity
from .facts import Facts
from .names import NameRoles
from .import_table import dotted_name, ImportTable, build_dotted
from .positions import start_positions


@dataclass
class PendingDiagnostic:
    node: cst.CSTNode | None
    code: str
    severity: Severity
    message: str
    safety: Safety
    line: int = 0
    col: int = 0


@dataclass
class Stats:
    converted: int = 0  # framework uses rewritten
    unconverted: int = 0  # framework uses left in place (marked)
    # framework types left in annotations (marked): they document, they run nothing, so
    # they are counted apart from the code and not in the rate
    annotations: int = 0

    def rate(self) -> float:
        total = self.converted + self.unconverted
        return 1.0 if total == 0 else self.converted / total


# spaces just inside brackets: "f( a, b, )" and "f(a, b)" quote the same code
_BRACKET_SPACE = re.compile(r"([(\[{]) | (?=[)\]}])")
_QUOTED = re.compile(r"'(\(.*?\))'")  # code quoted in a message, in parentheses


def _without_outer_parentheses(code: str) -> str:
    """``(a if c else b)`` -> ``a if c else b``: parentheses around the whole quote are
    layout (the converted code wraps a replaced operand in them, the first run did not)."""
    depth = 0
    for i, char in enumerate(code):
        depth += (char == "(") - (char == ")")
        if depth == 0 and i < len(code) - 1:
            return code  # the first parenthesis closes before the end: (a)(b)
    return code[1:-1] if depth == 0 else code


class FileContext:
    """Diagnostics, the import table, requested imports and statistics of one file.

    ``module_map`` says which source module becomes which target module
    (``torch.nn`` -> ``mindspore.nn``); it comes from the tables, so the engine
    itself stays framework-agnostic.
    """

    def __init__(self, source: str, filename: str, module_map: dict[str, str], aliases: dict[str, str] | None = None):
        self.source = source
        self.filename = filename
        self.module_map = module_map
        self.aliases = aliases or {}  # target module -> preferred name for a new import of it
        self.imports = ImportTable()
        self.pending: list[PendingDiagnostic] = []
        self.markers: list[list[str]] = []  # one list per open statement
        self.stats = Stats()
        self.new_imports: dict[str, str] = {}  # binding -> target module it must hold
        self.kept_source_modules: set[str] = set()  # source modules still referenced
        # Module-level definitions the rewrites emit beside the code (name -> source: a
        # small class or function a converted call names); a pass inserts them.
        self.definitions: dict[str, str] = {}
        # What the rewrites' analysis knows about this file (built by the pipeline's
        # ``analyse``, read by the passes; the engine never looks inside).
        self.facts: Facts | None = None
        # The functions, classes and lambdas the traversal is inside, outermost first
        # (original nodes).
        self.open_scopes: list[cst.CSTNode] = []
        # What the file's tree says about it (``package_index.PackageFacts``), if converted in one.
        self.package = None
        # ids of original nodes no pass may touch or enter (the rewrites' analysis fills it:
        # code the tool itself emitted on an earlier run stays as it was written)
        self.frozen: set[int] = set()
        # Where the traversal is, kept by the engine as it enters and leaves nodes (passes
        # read ``compiled``, ``current_class``, ``in_annotation``, ... instead of keeping stacks):
        # per open class or function, whether its code is compiled (``Pipeline``'s
        # ``compiled_method`` says it for a class's methods; nested functions inherit it)
        self.compiled_scopes: list[bool] = []
        self.annotation_depth = 0
        self.import_depth = 0
        # ids of original nodes a pass rewrites whole -> that pass's id (``claim``)
        self.claimed: dict[int, str] = {}
        self.source_roots: set[str] = set()  # top-level modules of the source framework
        # Edits (``transpile.engine.edits``): recorded when asked for, declined by key or by an
        # ignore comment in the file.
        self.recording = False
        self.declined: frozenset = frozenset()
        self.edit_records: list = []
        self.edit_counts: dict = {}  # (pass id, code) -> edits proposed so far

    @property
    def watching_edits(self) -> bool:
        """Whether edits are looked at one by one (recorded, or some may be declined)."""
        return self.recording or bool(self.declined) or "transpile: ignore" in self.source

    def snapshot(self) -> tuple:
        """What a pass's handler may add to the shared state, to take back a declined edit."""
        return (self.stats.converted, self.stats.unconverted, self.stats.annotations, len(self.pending),
                len(self.markers[-1]) if self.markers else 0, set(self.definitions), dict(self.new_imports),
                set(self.kept_source_modules))

    def restore(self, snap: tuple) -> list[PendingDiagnostic]:
        """Back to ``snap``; the diagnostics reported since, which are dropped."""
        converted, unconverted, annotations, pending, markers, definitions, new_imports, kept = snap
        dropped = self.pending[pending:]
        del self.pending[pending:]
        if self.markers:
            del self.markers[-1][markers:]
        for name in set(self.definitions) - definitions:
            del self.definitions[name]
        self.new_imports = new_imports
        self.kept_source_modules = kept
        # the uses the pass converted there are uses left unconverted
        self.stats.unconverted = unconverted + max(0, self.stats.converted - converted)
        self.stats.converted, self.stats.annotations = converted, annotations
        return dropped

    def keep_source_references(self, node: cst.CSTNode, original: cst.CSTNode) -> cst.CSTNode:
        """``node`` with every name of a source-framework symbol left from ``original``
        spelled so that it still names it once the imports are converted (code left as it
        was must still run). Names other edits wrote inside it name the target already."""
        return node.visit(_SourceRespeller(self, original))

    # -- where the traversal is ------------------------------------------------
    @property
    def compiled(self) -> bool:
        """Whether the code being visited is compiled (in GRAPH mode, by the rewrites' rule)."""
        return bool(self.compiled_scopes) and self.compiled_scopes[-1]

    @property
    def current_class(self) -> cst.ClassDef | None:
        return self.innermost(cst.ClassDef)

    @property
    def current_function(self) -> cst.FunctionDef | None:
        return self.innermost(cst.FunctionDef)

    @property
    def in_annotation(self) -> bool:
        return self.annotation_depth > 0

    @property
    def in_import(self) -> bool:
        return self.import_depth > 0

    def innermost(self, kind: type) -> cst.CSTNode | None:
        """The innermost open scope of type ``kind`` (``cst.FunctionDef``), if any."""
        for node in reversed(self.open_scopes):
            if type(node) is kind:
                return node
        return None

    # -- the write interface: the only way passes change the shared state ----
    # (tests/test_write_interface.py fails on a pass that writes an attribute itself)
    def count_converted(self, uses: int = 1) -> None:
        """``uses`` framework uses rewritten."""
        self.stats.converted += uses

    def count_unconverted(self, uses: int = 1) -> None:
        """``uses`` framework uses left in place (each also marked or reported)."""
        self.stats.unconverted += uses

    def count_annotation(self) -> None:
        """A framework type left in an annotation (counted apart from the rate)."""
        self.stats.annotations += 1

    def define(self, name: str, source: str) -> None:
        """Emit the run-time helper ``name`` (its ``source``) beside the code, once per file."""
        self.definitions.setdefault(name, source)

    def withdraw_definition(self, name: str) -> None:
        """Take back a helper emitted for one call that no longer needs it."""
        self.definitions.pop(name, None)

    def freeze(self, node: cst.CSTNode) -> None:
        """No pass touches or enters ``node`` (an original node) from now on."""
        self.frozen.add(id(node))

    def claim(self, node: cst.CSTNode, pass_id: str) -> None:
        """The pass ``pass_id`` rewrites ``node`` (an original node) whole: the passes after it
        skip their handlers of ``node`` itself but still visit and convert its children."""
        self.claimed[id(node)] = pass_id

    def bind_import(self, node: cst.Import | cst.ImportFrom) -> None:
        """An import statement met inside the code: its names are bound from here on."""
        self.imports.add(node)

    def request_import(self, binding: str, target_module: str) -> None:
        """``binding`` must hold ``target_module`` at the module's level."""
        self.new_imports.setdefault(binding, target_module)

    # -- diagnostics -------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode | None,
        code: str,
        message: str,
        severity: Severity = Severity.WARNING,
        safety: Safety = Safety.SAFE,
    ) -> None:
        self.pending.append(PendingDiagnostic(node, code, severity, message, safety))

    def report_text(self, snippet: str, code: str, message: str, severity: Severity = Severity.WARNING) -> None:
        """Report at the first place ``snippet`` occurs in the original source."""
        offset = self.source.find(snippet)
        line = self.source.count("\n", 0, offset) + 1 if offset >= 0 else 0
        col = offset - (self.source.rfind("\n", 0, offset) + 1) if offset >= 0 else 0
        self.pending.append(PendingDiagnostic(None, code, severity, message, Safety.SAFE, line, col))

    def mark(self, node: cst.CSTNode, code: str, message: str, severity: Severity = Severity.WARNING) -> None:
        """Leave a ``# transpile:`` comment on the enclosing statement and report it."""
        # a comment is one line, whatever code it quotes, and the same whether the code was
        # quoted compact or as black laid it out (converting the output again finds it equal)
        # (code quoted with repr keeps its line breaks as "\n": they are layout too)
        message = " ".join(message.replace("\\n", " ").split())
        message = _BRACKET_SPACE.sub(r"\1", message).replace(",)", ")").replace(",]", "]")
        message = _QUOTED.sub(lambda m: f"'{_without_outer_parentheses(m.group(1))}'", message)
        self.report(node, code, message, severity, Safety.MANUAL)
        if self.markers:
            text = f"# transpile: {code} {message}"
            if len(text) > 200:
                text = text[:197] + "..."
            if text not in self.markers[-1]:
                self.markers[-1].append(text)

    # -- spelling target symbols ------------------------------------------
    def module_binding(self, target_module: str) -> str:
        """A name in this file that will hold ``target_module`` after conversion.

        Reuses the user's alias of the source module that maps to it (``nn`` from
        ``import torch.nn as nn``), else asks for a new import.
        """
        for binding, target in self.new_imports.items():
            if target == target_module:
                return binding
        for binding, qual in sorted(self.imports.bindings.items()):
            if binding in self.imports.type_checking_only:
                continue  # bound under ``if TYPE_CHECKING:`` only: nothing when the code runs
            # Reuse aliases of submodules (nn, F); a bare ``torch`` is never reused as
            # a name for the target framework.
            if "." in qual and self.module_map.get(qual) == target_module:
                return binding
            # A module imported as it is (numpy) is reused only where the module binds it:
            # ``import numpy as np`` inside one function names nothing in the others
            if qual == target_module and binding not in self.imports.local_only:
                return binding
        if "." in target_module:
            root, short = target_module.split(".", 1)[0], target_module.rsplit(".", 1)[-1]
            prefix = self.aliases.get(root, root)
            candidates = [short, f"{prefix}_{short}", f"_{short}"]
        elif target_module in self.aliases:
            candidates = [self.aliases[target_module], target_module]
        else:
            candidates = [target_module, f"_{target_module}"]
        for name in candidates:
            if name in self.imports.relative:  # the package's own name (from . import ops)
                continue
            if name not in self.imports.bindings or self.imports.bindings[name] == target_module:
                self.new_imports[name] = target_module
                return name
        raise RuntimeError(f"no free name for {target_module}")

    def reference(self, target: str) -> cst.BaseExpression:
        """Expression naming ``target`` (``mindspore.nn.Dense`` -> ``nn.Dense``)."""
        module, _, name = target.rpartition(".")
        if not module:
            return cst.Name(target)
        # Walk up until a module we can bind: mindspore.ops.functional.x -> ops.functional.x
        parts = module.split(".")
        for cut in range(len(parts), 0, -1):
            mod = ".".join(parts[:cut])
            if cut == 1 or mod in set(self.module_map.values()) | set(self.new_imports.values()):
                rest = ".".join(parts[cut:] + [name])
                binding = self.module_binding(mod)
                return build_dotted(f"{binding}.{rest}")
        raise AssertionError("unreachable")

    def keep_source(self, qualname: str, original: cst.BaseExpression | None = None) -> cst.BaseExpression:
        """Spell an unconverted source symbol so that it still names the source symbol.

        A name bound by ``from torch.x import y`` stays as written: the import pass keeps
        that import while the name is used (other modules may import it from here too).
        Otherwise, as the module aliases are rewritten (``nn`` becomes MindSpore's), the
        symbol is spelled fully qualified and its root stays imported."""
        head = dotted_name(original).split(".")[0] if original is not None and dotted_name(original) else None
        bound = self.imports.bindings.get(head) if head else None
        if bound is not None and bound not in self.module_map and bound != head and "." in bound:
            return original
        root = qualname.split(".")[0]
        self.kept_source_modules.add(root)
        return build_dotted(qualname)

    # -- results -------------------------------------------------------------
    def resolve(self, module: cst.Module) -> list[Diagnostic]:
        if not self.pending:
            return []
        if all(p.node is None for p in self.pending):
            return sorted(
                (Diagnostic(p.code, p.severity, p.message, self.filename, p.line, p.col, p.safety) for p in self.pending),
                key=lambda d: (d.line, d.col, d.code, d.message),
            )
        positions = start_positions(module, [p.node for p in self.pending if p.node is not None])
        out = []
        for p in self.pending:
            pos = positions.get(id(p.node)) if p.node is not None else None
            line, col = pos if pos else (p.line, p.col)
            out.append(Diagnostic(p.code, p.severity, p.message, self.filename, line, col, p.safety))
        out.sort(key=lambda d: (d.line, d.col, d.code, d.message))
        return out


class _SourceRespeller(cst.CSTTransformer):
    """Spells the source-framework references of a subtree with ``keep_source``."""

    def __init__(self, ctx: FileContext, original: cst.CSTNode) -> None:
        super().__init__()
        self.ctx = ctx
        # the original's names (a declined edit: the one subtree read, not the file's index,
        # which a later stage's originals are not in)
        self.names = NameRoles.of(original)
        self.left: set[int] = set()  # the nodes of ``original``: code no edit replaced
        stack = [original]
        while stack:
            node = stack.pop()
            self.left.add(id(node))
            stack.extend(node.children)

    def _qualified(self, node: cst.BaseExpression) -> str | None:
        if id(node) not in self.left:
            return None
        qual = self.ctx.imports.qualify(node)
        return qual if qual and qual.split(".")[0] in self.ctx.source_roots else None

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._qualified(node) is None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        qual = self._qualified(original)
        return self.ctx.keep_source(qual, original) if qual else updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if not self.names.is_reference(original):
            return updated
        qual = self._qualified(original)
        return self.ctx.keep_source(qual, original) if qual else updated
