"""MS212: what a torch user reads off a DataLoader that a MindSpore pipeline lacks.

MS201 (tables/data.toml, hooks/data.py) makes each ``DataLoader(...)`` a
``GeneratorDataset(...).batch(...)``: iterating it gives a list of tensors per batch and
``len()`` counts its batches, as torch's loader does, so loops, ``next(iter(loader))`` and
``len(loader)`` stay as written. ``loader.dataset`` has no counterpart: it becomes
``_torch_dataset_of(loader)``, a function emitted in the file that finds the torch dataset
the pipeline's source wraps (the MindSpore dataset at the pipeline's root when there is none).

Which values are loaders: those the file assigns a ``DataLoader(...)`` to (names and
attributes such as ``self.train_loader``), and, where the loader comes from elsewhere (a
function parameter), a name or attribute with ``loader`` in it. The emitted function
gives any other object's ``.dataset`` unchanged, so a wrong guess changes nothing.
"""
from __future__ import annotations

import libcst as cst

from transpile.diagnostics import Severity
from transpile.passes import Example, Pass

from ..syntax import code, emitted_spelled

HELPER = "_torch_dataset_of"
HELPER_SOURCE = '''
def {name}(loader):
    """torch's loader.dataset for a MindSpore pipeline (transpile MS212): the dataset
    its source wraps, else its root dataset; other objects' own .dataset."""
    if not isinstance(loader, MS.dataset.Dataset):
        return loader.dataset
    root = loader
    while root.children:
        root = root.children[0]
    return getattr(getattr(root, "source", None), "dataset", root)
'''
LOADER_CLASS = "torch.utils.data.DataLoader"
WRITES = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del)


class DataPipeline(Pass):
    id = "MS212"
    name = "data-pipeline"
    summary = "loader.dataset of a DataLoader (now a MindSpore pipeline) -> the torch dataset it wraps."
    examples = (
        Example(
            "import torch\ndef report(train_loader):\n    return len(train_loader.dataset)\n",
            "import mindspore as ms\n\n\ndef _torch_dataset_of(loader):\n"
            '    """torch\'s loader.dataset for a MindSpore pipeline (transpile MS212): the dataset\n'
            '    its source wraps, else its root dataset; other objects\' own .dataset."""\n'
            "    if not isinstance(loader, ms.dataset.Dataset):\n        return loader.dataset\n"
            "    root = loader\n    while root.children:\n        root = root.children[0]\n"
            '    return getattr(getattr(root, "source", None), "dataset", root)\n\n\n'
            "def report(train_loader):\n    return len(_torch_dataset_of(train_loader))\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._facts: tuple[set[str], set[int]] | None = None

    def _file_facts(self) -> tuple[set[str], set[int]]:
        """The code of every name or attribute the file assigns a DataLoader(...) to, and
        the ids of the expressions it writes to (assignment and del targets)."""
        if self._facts is None:
            imports, loaders, written = self.ctx.imports, set(), set()

            class Finder(cst.CSTVisitor):
                def on_visit(self, node: cst.CSTNode) -> bool:
                    if isinstance(node, WRITES):
                        written.add(id(node.target))
                    if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                            and imports.qualify(node.value.func) == LOADER_CLASS:
                        loaders.update(code(t.target) for t in node.targets)
                    return True

            self.facts.module.visit(Finder())
            self._facts = (loaders, written)
        return self._facts

    def _is_loader(self, receiver: cst.BaseExpression) -> bool:
        """A loader the file builds, or a name or attribute called a loader."""
        if not isinstance(receiver, (cst.Name, cst.Attribute)):
            return False
        if code(receiver) in self._file_facts()[0]:
            return True
        last = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value
        return "loader" in last.lower()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "dataset" or id(original) in self._file_facts()[1] \
                or not self._is_loader(original.value):
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, "a MindSpore pipeline has no .dataset: the torch dataset it wraps is "
                            f"found by {HELPER}", Severity.INFO)
        self.ctx.stats.converted += 1
        return cst.Call(func=emitted_spelled(self.ctx, HELPER, HELPER_SOURCE), args=[cst.Arg(updated.value)])
