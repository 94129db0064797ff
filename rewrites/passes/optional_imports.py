"""MS903: a torch import the converted module keeps at its top -> imported if torch is there.

MS901 keeps a torch import whose names code left as torch's still uses (marked where it
is: ``torch.classes.xielu.XIELU()`` in a CUDA-only branch of transformers'
``activations.py``). Run as written, it makes the whole module need torch: without torch
every model importing it fails at its first line, though the code that needs torch may
never run. Each such import among the module's top-level statements is tried::

    import torch          ->   try:
                                   import torch
                               except ImportError:  # only the code left as torch's needs it
                                   torch = None

so the module imports where torch is missing and only code left as torch's fails, where
it runs. Imports inside functions, classes, ``if`` and ``try`` blocks are left (they run
only where they stand). Runs after MS901, in its stage: it reads the imports MS901 kept
and those it added.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.passes import Example, Pass

from ..table_calls import tables

_FALLBACK = """try:
    {statement}
except ImportError:  # only the code left as {root}'s needs it (transpile MS903)
{fallbacks}"""


class OptionalImports(Pass):
    id = "MS903"
    name = "optional-imports"
    summary = "A torch import the converted module keeps at its top is tried: the module imports without torch."
    runs_after = {"MS901": "it reads the imports MS901 kept and the ones it added"}
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

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        body = [self._tried(stmt) for stmt in updated.body]
        if all(new is old for new, old in zip(body, updated.body)):
            return updated
        return updated.with_changes(body=body)

    def _tried(self, stmt):
        """The statement, or a try of it when it imports the source framework's root module."""
        if type(stmt) is not cst.SimpleStatementLine or len(stmt.body) != 1:
            return stmt
        small = stmt.body[0]
        bound = self._bound(small)
        if not bound:
            return stmt
        root = bound[0][1]
        text = _FALLBACK.format(statement=cst.Module(body=[]).code_for_node(small), root=root,
                                fallbacks="\n".join(f"    {name} = None" for name in dict.fromkeys(n for n, _ in bound)))
        tried = cst.parse_statement(text + "\n")
        return tried.with_changes(leading_lines=stmt.leading_lines)

    def _bound(self, small) -> list[tuple[str, str]]:
        """(name bound, the framework's root module) for ``import torch``, ``import torch as
        t``, ``import torch.nn.functional`` (each binds the root); [] for anything else (a
        submodule or a name bound under a name of its own is an API use: MS201's)."""
        if type(small) is not cst.Import:
            return []
        out = []
        for alias in small.names:
            dotted = cst.Module(body=[]).code_for_node(alias.name)
            root = dotted.split(".")[0]
            if root not in self.roots or (alias.asname is not None and dotted != root):
                return []
            out.append((alias.asname.name.value if alias.asname else root, root))
        return out
