"""MS903: a torch import the converted module keeps where it runs at import -> tried.

MS901 keeps a torch import whose names code left as torch's still uses (marked where it
is: ``torch.classes.xielu.XIELU()`` in a CUDA-only branch of transformers'
``activations.py``). Run as written, it makes the whole module need torch: without torch
every model importing it fails at its first line, though the code that needs torch may
never run. Each such import among the module's top-level statements, and in the branches
of a top-level ``if`` (they run at import too), is tried::

    import torch          ->   try:
                                   import torch
                               except ImportError:  # only the code left as torch's needs it
                                   torch = None

so the module imports where torch is missing and only code left as torch's fails, where
it runs. Every import that needs torch is tried, each name it binds set to None (a name
the module uses as a class, given to ``isinstance`` as the type or a base of its classes: a
fresh class, which no value is an instance of and a class can derive from):
``import torch.distributed as dist``, ``from torch.utils.checkpoint import checkpoint``,
and a torch flavour of a package that does not need torch (``from safetensors.torch import
save_file``: ``optional_imports.toml``), and one in a handler of such a ``try`` (it runs
where the ``try``'s own import failed). Imports inside functions, classes and the body of
a ``try`` are left (they run only where they stand, or are guarded already).

Two more things would still need torch at import, and are changed with it:

- a MindSpore import the conversion left in a top-level ``if`` (``if is_torch_available():
  import torch.nn as nn`` -> ``import mindspore.nn as nn``): the condition asked for torch,
  while the converted code needs MindSpore wherever it runs; the import is moved before
  the ``if`` (``pass`` where the branch is left empty). ``if TYPE_CHECKING:`` is left.
- an annotation evaluated where a function or class is defined (no ``from __future__
  import annotations``) that names a tried import (``-> torch.cuda.CUDAGraph``): it is
  written as a string, which Python does not evaluate.

Runs after MS901, in its stage: it reads the imports MS901 kept and those it added.
"""
from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import libcst as cst

from transpile.engine.names import NameRoles
from transpile.engine.passes import Example, Pass

from ..table_calls import tables

_FALLBACK = """try:
    {statement}
except ImportError:  # only the code left as {root}'s needs it (transpile MS903)
{fallbacks}"""
_CODE = cst.Module(body=[])
TORCH_FLAVOURS: frozenset[str] = frozenset(
    tomllib.loads((Path(__file__).with_suffix(".toml")).read_text(encoding="utf-8"))["torch_flavours"])


def _dotted(node) -> str:
    return _CODE.code_for_node(node)


def _type_checking(test) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``: a branch that never runs."""
    return (type(test) is cst.Name and test.value == "TYPE_CHECKING") or (
        type(test) is cst.Attribute and test.attr.value == "TYPE_CHECKING")


@functools.lru_cache(maxsize=256)
def _statement(text: str) -> cst.BaseStatement:
    """``text`` parsed (the same few fallbacks recur in every file; LibCST's nodes are
    immutable, and this pass, the last, only puts them in the module it leaves)."""
    return cst.parse_statement(text)


class OptionalImports(Pass):
    id = "MS903"
    name = "optional-imports"
    summary = "A torch import the converted module keeps where it runs at import is tried: the module imports without torch."
    runs_after = {"MS901": "it reads the imports MS901 kept and the ones it added"}
    reads = frozenset({"names_used_as_classes"})
    examples = (
        Example(
            "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return torch.classes.ext.Op()(x)\n",
            "try:\n    import torch\n"
            "except ImportError:  # only the code left as torch's needs it (transpile MS903)\n    torch = None\n"
            "import mindspore.nn as nn\n"
            "class M(nn.Cell):\n    def construct(self, x):\n"
            "        # transpile: MS201 torch.classes.ext.Op: no MindSpore mapping yet\n"
            "        return torch.classes.ext.Op()(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.roots = tables().source_roots
        self.targets = tables().framework_roots - self.roots

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        tried: set[str] = set()  # the names the tried imports bind
        body: list = []
        for stmt in updated.body:
            if type(stmt) is cst.If and not _type_checking(stmt.test):
                hoisted, stmt = self._if_imports(stmt, tried)
                body += hoisted
                body.append(stmt)
            elif type(stmt) is cst.Try:
                body.append(self._tried_handlers(stmt, tried))
            else:
                body.append(self._tried(stmt, tried))
        if tried and not self._future_annotations(updated):
            body = [self._quoted_annotations(stmt, tried, evaluated=True) for stmt in body]
        if len(body) == len(updated.body) and all(new is old for new, old in zip(body, updated.body)):
            return updated
        return updated.with_changes(body=body)

    # -- imports ---------------------------------------------------------------------------
    def _tried(self, stmt, tried: set[str]):
        """The statement, or a try of it when it imports something that needs torch."""
        if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
            return stmt
        bound = self._bound(stmt.body[0])
        if not bound:
            return stmt
        names = list(dict.fromkeys(bound))
        tried.update(names)
        types = self.facts.names_used_as_classes()
        text = _FALLBACK.format(statement="pass", root=sorted(self.roots)[0], fallbacks="\n".join(
            f'    {name} = type("{name}", (), {{}})' if name in types else f"    {name} = None" for name in names))
        tried_stmt = _statement(text + "\n")
        # the import itself goes in the try, with its line's comment
        body = tried_stmt.body.with_changes(body=[stmt.with_changes(leading_lines=())])
        return tried_stmt.with_changes(body=body, leading_lines=stmt.leading_lines)

    def _tried_handlers(self, stmt: cst.Try, tried: set[str]) -> cst.Try:
        """A ``try`` whose handlers' imports that need torch are tried: a handler runs at
        import where the ``try`` failed (``except ImportError: from torch.fx... import``),
        which without torch is where its own torch import fails too."""
        handlers = []
        for handler in stmt.handlers:
            block = handler.body
            if type(block) is not cst.IndentedBlock:
                handlers.append(handler)
                continue
            lines = [self._tried(inner, tried) for inner in block.body]
            same = all(a is b for a, b in zip(lines, block.body))
            handlers.append(handler if same else handler.with_changes(body=block.with_changes(body=lines)))
        if all(a is b for a, b in zip(handlers, stmt.handlers)):
            return stmt
        return stmt.with_changes(handlers=handlers)

    def _needs_torch(self, module: str) -> bool:
        return module.split(".")[0] in self.roots or any(
            module == f or module.startswith(f + ".") for f in TORCH_FLAVOURS)

    def _bound(self, small) -> list[str]:
        """The names an import binds when every module it imports needs torch (``import
        torch`` and ``import torch.nn.functional`` bind ``torch``, ``import torch.distributed
        as dist`` binds ``dist``, ``from safetensors.torch import save_file as f`` binds
        ``f``); [] for anything else (a star import binds names no one can list)."""
        if type(small) is cst.Import:
            out = []
            for alias in small.names:
                dotted = _dotted(alias.name)
                if not self._needs_torch(dotted):
                    return []
                out.append(alias.asname.name.value if alias.asname else dotted.split(".")[0])
            return out
        if type(small) is cst.ImportFrom and not small.relative and small.module is not None:
            if not self._needs_torch(_dotted(small.module)) or type(small.names) is cst.ImportStar:
                return []
            return [alias.asname.name.value if alias.asname else _dotted(alias.name) for alias in small.names]
        return []

    def _target_import(self, stmt) -> bool:
        if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
            return False
        small = stmt.body[0]
        if type(small) is cst.Import:
            return all(_dotted(a.name).split(".")[0] in self.targets for a in small.names)
        return (type(small) is cst.ImportFrom and not small.relative and small.module is not None
                and _dotted(small.module).split(".")[0] in self.targets)

    def _if_imports(self, stmt: cst.If, tried: set[str]) -> tuple[list, cst.If]:
        """The MindSpore imports of a top-level ``if``'s branches (moved before it), and the
        ``if`` with its torch imports tried."""
        hoisted: list = []

        def branch(block):
            if type(block) is not cst.IndentedBlock:
                return block
            kept = []
            for inner in block.body:
                if self._target_import(inner):  # once, when several branches import it
                    if not any(inner.body[0].deep_equals(h.body[0]) for h in hoisted):
                        hoisted.append(inner.with_changes(leading_lines=()))
                elif type(inner) is cst.If and not _type_checking(inner.test):  # a guard in a guard
                    inner_hoisted, new_inner = self._if_imports(inner, tried)
                    hoisted.extend(h for h in inner_hoisted if not any(h.body[0].deep_equals(o.body[0]) for o in hoisted))
                    kept.append(new_inner)
                elif type(inner) is cst.Try:
                    kept.append(self._tried_handlers(inner, tried))
                else:
                    kept.append(self._tried(inner, tried))
            if len(kept) == len(block.body) and all(a is b for a, b in zip(kept, block.body)):
                return block
            return block.with_changes(body=kept or [cst.SimpleStatementLine(body=[cst.Pass()])])

        def chain(node):
            orelse = node.orelse
            if type(orelse) is cst.If:
                orelse = chain(orelse)
            elif type(orelse) is cst.Else:
                orelse = orelse.with_changes(body=branch(orelse.body))
            return node.with_changes(body=branch(node.body), orelse=orelse)

        new = chain(stmt)  # the imports moved go just before the ``if``, which keeps its blank lines
        return hoisted, (new if hoisted or _CODE.code_for_node(new) != _CODE.code_for_node(stmt) else stmt)

    # -- annotations -----------------------------------------------------------------------
    @staticmethod
    def _future_annotations(module: cst.Module) -> bool:
        for stmt in module.body:
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if (type(small) is cst.ImportFrom and small.module is not None and _dotted(small.module) == "__future__"
                            and type(small.names) is not cst.ImportStar
                            and any(_dotted(a.name) == "annotations" for a in small.names)):
                        return True
        return False

    def _quoted(self, annotation: cst.Annotation | None, tried: set[str]):
        """The annotation written as a string when it names a tried import (else itself)."""
        if annotation is None or type(annotation.annotation) in (cst.SimpleString, cst.ConcatenatedString):
            return annotation
        expr = annotation.annotation
        if not (NameRoles.of(expr).referenced(expr) & tried):
            return annotation
        code = _CODE.code_for_node(expr)
        quote = next((q for q in ('"', "'") if q not in code), None)
        if quote is None or "\n" in code or "\\" in code:
            return annotation
        return annotation.with_changes(annotation=cst.SimpleString(f"{quote}{code}{quote}"))

    def _quoted_annotations(self, stmt, tried: set[str], evaluated: bool):
        """``stmt`` with the annotations Python evaluates as it runs it (a function's
        parameters and return; a variable's in a module or class body, ``evaluated``)
        quoted where they name a tried import; the statements in its blocks likewise."""
        t = type(stmt)
        if t is cst.SimpleStatementLine:
            if not evaluated:
                return stmt
            small = [s.with_changes(annotation=self._quoted(s.annotation, tried)) if type(s) is cst.AnnAssign else s
                     for s in stmt.body]
            return stmt if all(a is b or a.deep_equals(b) for a, b in zip(small, stmt.body)) else stmt.with_changes(body=small)
        if t is cst.FunctionDef:
            params = stmt.params
            changes = {}
            for field in ("params", "kwonly_params", "posonly_params"):
                old = getattr(params, field)
                new = [self._with_annotation(p, tried) for p in old]
                if any(a is not b for a, b in zip(new, old)):
                    changes[field] = new
            for field in ("star_arg", "star_kwarg"):
                p = getattr(params, field)
                if type(p) is cst.Param and self._with_annotation(p, tried) is not p:
                    changes[field] = self._with_annotation(p, tried)
            new_params = params.with_changes(**changes) if changes else params
            returns = self._quoted(stmt.returns, tried)
            body = self._block(stmt.body, tried, evaluated=False)
            if new_params is params and returns is stmt.returns and body is stmt.body:
                return stmt  # (rebuilt, every definition of a file cost a millisecond a file)
            return stmt.with_changes(params=new_params, returns=returns, body=body)
        if t is cst.ClassDef:
            body = self._block(stmt.body, tried, evaluated=True)
            return stmt if body is stmt.body else stmt.with_changes(body=body)
        if t in (cst.If, cst.For, cst.While, cst.With, cst.Try):
            return self._compound(stmt, tried, evaluated)
        return stmt

    def _with_annotation(self, param: cst.Param, tried: set[str]) -> cst.Param:
        quoted = self._quoted(param.annotation, tried)
        return param if quoted is param.annotation else param.with_changes(annotation=quoted)

    def _block(self, block, tried: set[str], evaluated: bool):
        if type(block) is not cst.IndentedBlock:
            return block
        body = [self._quoted_annotations(s, tried, evaluated) for s in block.body]
        return block if all(a is b for a, b in zip(body, block.body)) else block.with_changes(body=body)

    def _compound(self, stmt, tried: set[str], evaluated: bool):
        changes = {}
        body = self._block(stmt.body, tried, evaluated)
        if body is not stmt.body:
            changes["body"] = body
        orelse = getattr(stmt, "orelse", None)
        if type(orelse) is cst.If:
            new = self._compound(orelse, tried, evaluated)
        elif orelse is not None:
            block = self._block(orelse.body, tried, evaluated)
            new = orelse if block is orelse.body else orelse.with_changes(body=block)
        if orelse is not None and new is not orelse:
            changes["orelse"] = new
        if type(stmt) is cst.Try:
            handlers = [h if (b := self._block(h.body, tried, evaluated)) is h.body else h.with_changes(body=b)
                        for h in stmt.handlers]
            if any(a is not b for a, b in zip(handlers, stmt.handlers)):
                changes["handlers"] = handlers
            if stmt.finalbody is not None:
                block = self._block(stmt.finalbody.body, tried, evaluated)
                if block is not stmt.finalbody.body:
                    changes["finalbody"] = stmt.finalbody.with_changes(body=block)
        return stmt.with_changes(**changes) if changes else stmt
