"""MS212: what a torch user reads off a DataLoader that a MindSpore pipeline lacks.

MS201 (tables/data.toml, hooks/data.py) makes each ``DataLoader(...)`` a
``GeneratorDataset(...).batch(...)``: iterating it gives a list of tensors per batch and
``len()`` counts its batches, as torch's loader does, so loops, ``next(iter(loader))`` and
``len(loader)`` stay as written. ``loader.dataset`` has no counterpart: it becomes
``_torch_dataset_of(loader)``, a function emitted in the file that finds the torch dataset
the pipeline's source wraps (the MindSpore dataset at the pipeline's root when there is none).

A loader the file builds over samples that are a lone tensor (its ``__getitem__`` returns a
torch call) or a dict literal gives torch's batches as that tensor or dict; MindSpore's are
lists of columns: ``for x in loader`` becomes ``for (x,) in loader``, a dict loader is read
through ``create_dict_iterator(num_epochs=1)`` (also in ``enumerate(...)`` and
``next(iter(loader))``).

Which values are loaders: those the file assigns a ``DataLoader(...)`` to (names and
attributes such as ``self.train_loader``), and, where the loader comes from elsewhere (a
function parameter), a name or attribute with ``loader`` in it. The emitted function
gives any other object's ``.dataset`` unchanged, so a wrong guess changes nothing.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.walk import iter_nodes

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..hooks.data import dataset_samples
from ..syntax import code, emitted_spelled, keyword_call

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


def _batch_kind(ctx, loader: cst.Call) -> str | None:
    """"lone" or "dict" where torch's batches of this DataLoader(...) call (as the file has
    it) are a tensor or a dict: its dataset's samples are, and no collate_fn reshapes them."""
    if not loader.args or loader.args[0].keyword is not None or loader.args[0].star:
        return None
    if any(a.keyword is not None and a.keyword.value == "collate_fn" for a in loader.args) or \
            len([a for a in loader.args if a.keyword is None]) >= 7:
        return None
    samples = dataset_samples(ctx, loader.args[0].value)
    return samples.kind if samples is not None and samples.kind != "tuple" else None


class DataPipeline(Pass):
    id = "MS212"
    name = "data-pipeline"
    reads = frozenset({"module"})
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
        self._loader_kinds: dict[str, str | None] | None = None
        self._written_ids: set[int] | None = None
        self._taken: set[int] = set()  # next(...) calls already indexed with [0]

    def _loaders(self) -> dict[str, str | None]:
        """The code of every name or attribute the file assigns a DataLoader(...) to, with
        the kind of its batches where they are not lists ("lone", "dict")."""
        if self._loader_kinds is None:
            # qualify() gives DataLoader for a dotted name ending in ``.DataLoader`` (a
            # word of the source, which the walked tree was parsed from) or for a name
            # bound to it: without either, the walk finds no loader and is skipped.
            if "DataLoader" in self.ctx.source or LOADER_CLASS in self.ctx.imports.bindings.values():
                self._loader_kinds, self._written_ids = self._walk_file()
            else:
                self._loader_kinds = {}
        return self._loader_kinds

    def _written(self) -> set[int]:
        """The ids of the expressions the file writes to (assignment and del targets)."""
        if self._written_ids is None:
            self._written_ids = {id(node.target) for node in iter_nodes(self.facts.module) if isinstance(node, WRITES)}
        return self._written_ids

    def _walk_file(self) -> tuple[dict[str, str | None], set[int]]:
        """The loaders and the written targets, in one walk of the file."""
        imports, loaders, written, ctx = self.ctx.imports, {}, set(), self.ctx

        class Finder(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                if isinstance(node, WRITES):
                    written.add(id(node.target))
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                        and imports.qualify(node.value.func) == LOADER_CLASS:
                    kind = _batch_kind(ctx, node.value)
                    for t in node.targets:
                        loaders.setdefault(code(t.target), set()).add(kind)
                return True

        finder = Finder()
        for node in iter_nodes(self.facts.module):
            finder.on_visit(node)
        # a name given loaders of different batches (in two functions) is left as it is
        kinds = {name: next(iter(found)) if len(found) == 1 else None for name, found in loaders.items()}
        return kinds, written

    def _kind(self, loader: cst.BaseExpression) -> str | None:
        """"lone" or "dict" for a loader the file builds whose batches torch gives as a
        tensor or a dict (MindSpore: a list of columns); None otherwise."""
        if not isinstance(loader, (cst.Name, cst.Attribute)):
            return None
        loaders = self._loaders()
        return loaders.get(code(loader)) if loaders else None

    def _dict_batches(self, loader: cst.BaseExpression) -> cst.BaseExpression:
        """The iterable a loop over a dict-sample loader takes: its dict iterator."""
        self.ctx.count_converted()
        return keyword_call(cst.Attribute(value=loader, attr=cst.Name("create_dict_iterator")),
                            {"num_epochs": cst.Integer("1")})

    def leave_For(self, original: cst.For, updated: cst.For):
        return self._loop(original, updated)

    def leave_CompFor(self, original: cst.CompFor, updated: cst.CompFor):
        return self._loop(original, updated)

    def _loop(self, original, updated):
        """``for x in loader`` over lone samples -> ``for (x,) in loader``; dict samples ->
        ``for b in loader.create_dict_iterator(num_epochs=1)``; also through enumerate()."""
        it, target = original.iter, original.target
        counted = isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" \
            and len(it.args) == 1 and isinstance(target, cst.Tuple) and len(target.elements) == 2
        loader = it.args[0].value if counted else it
        kind = self._kind(loader)
        if kind == "dict":
            batches = self._dict_batches(updated.iter.args[0].value if counted else updated.iter)
            if counted:
                return updated.with_changes(iter=updated.iter.with_changes(args=[cst.Arg(batches)]))
            return updated.with_changes(iter=batches)
        if kind == "lone":
            batch = updated.target.elements[1].value if counted else updated.target
            if not isinstance(batch, cst.Name):
                return updated
            self.ctx.count_converted()
            one = cst.Tuple([cst.Element(batch)])  # MindSpore's one-column list, unpacked
            if counted:
                return updated.with_changes(target=updated.target.with_changes(
                    elements=[updated.target.elements[0], updated.target.elements[1].with_changes(value=one)]))
            return updated.with_changes(target=one)
        return updated

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # next(iter(loader))[0]: a lone batch taken already (a file converted before)
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Integer) and node.slice[0].slice.value.value == "0":
            self._taken.add(id(node.value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """``next(iter(loader))``: the first batch as torch gives it."""
        if not (isinstance(original.func, cst.Name) and original.func.value == "next" and len(original.args) == 1) \
                or id(original) in self._taken:
            return updated
        inner = original.args[0].value
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter"
                and len(inner.args) == 1):
            return updated
        kind = self._kind(inner.args[0].value)
        if kind == "dict":
            loader = updated.args[0].value.args[0].value
            return updated.with_changes(args=[cst.Arg(self._dict_batches(loader))])
        if kind == "lone":
            self.ctx.count_converted()
            return cst.Subscript(value=updated, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        return updated

    def _is_loader(self, receiver: cst.BaseExpression) -> bool:
        """A loader the file builds, or a name or attribute called a loader."""
        if not isinstance(receiver, (cst.Name, cst.Attribute)):
            return False
        loaders = self._loaders()
        if loaders and code(receiver) in loaders:
            return True
        last = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value
        return "loader" in last.lower()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value != "dataset" or not self._is_loader(original.value) \
                or id(original) in self._written():
            return updated
        if HELPER not in self.ctx.definitions:
            self.ctx.report(original, self.id, "a MindSpore pipeline has no .dataset: the torch dataset it wraps is "
                            f"found by {HELPER}", Severity.INFO)
        self.ctx.count_converted()
        return cst.Call(func=emitted_spelled(self.ctx, HELPER, HELPER_SOURCE), args=[cst.Arg(updated.value)])
