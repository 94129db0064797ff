"""Hooks of tables/data.toml: torch.utils.data -> a mindspore.dataset pipeline.

A ``DataLoader`` becomes ``GeneratorDataset(...)`` (``NumpySlicesDataset`` over a
``TensorDataset`` written in the call) and ``.batch(...)``. Iterating the pipeline gives a
list of MindSpore tensors per batch, as torch's loader gives a list of tensors for tuple
samples, and ``len()`` counts its batches, so the loops over a loader stay as written.

Facts these follow (MindSpore 2.10, run: /work/briefs/i17/data/findings.md):
- GeneratorDataset shuffles a random-access source unless told ``shuffle=False``;
  torch's default is not to shuffle.
- A new iterator (each ``for`` over the pipeline) restarts the shuffle from the dataset
  seed: with ``mindspore.set_seed`` every epoch had the same order. The order here comes
  from a sampler drawing a permutation from numpy's generator at each pass (set_seed seeds
  it too): a new order each epoch, the same from run to run once seeded; never torch's.
- GeneratorDataset passes indices as numpy integers, which a MindSpore tensor refuses as
  an index, and wants numpy columns: the source adapter makes an int of the index and
  arrays of the sample's tensors.
- A collate_fn of MindSpore gets one list per column; torch's gets the list of samples.

The classes and functions the pipeline calls are the run-time helpers of
rewrites/runtime/data.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, keyword_call, literal, literal_value
from .registry import hook


def dataset_ref(ctx, name: str) -> cst.BaseExpression:
    """``mindspore.dataset.<name>``, spelled through the file's mindspore binding
    (``ms.dataset.X``: a bare ``dataset`` alias would clash with the usual variable)."""
    return ctx.reference(f"mindspore.dataset.{name}")


def _given(args: dict, name: str):
    """The argument, or None where it is absent or the literal None."""
    value = args.get(name)
    if value is None or (isinstance(value, cst.Name) and value.value == "None"):
        return None
    return value


# ---- how many columns a dataset's samples have ------------------------------------------

def _class_named(module: cst.Module, name: str) -> cst.ClassDef | None:
    """The file's class of that name (any depth; the first one)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            if node.name.value == name and not found:
                found.append(node)

    module.visit(Finder())
    return found[0] if found else None


def _returned_values(method: cst.FunctionDef) -> list[cst.BaseExpression | None]:
    """What the method's return (or yield) statements give, not those of nested functions."""
    values = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is method

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            values.append(node.value)

        def visit_Yield(self, node: cst.Yield) -> None:
            values.append(node.value if not isinstance(node.value, cst.From) else None)

    method.visit(Finder())
    return values


@dataclass(frozen=True)
class Samples:
    """What a dataset's samples are, as the file shows them: ``kind`` "tuple", "dict" (its
    keys name the columns) or "lone" (one tensor: torch's batch is the tensor itself)."""

    kind: str
    columns: tuple[str, ...]


def _samples_of_value(ctx, value: cst.BaseExpression | None) -> Samples | None:
    """The samples a returned value makes: a tuple (or list) literal, a dict of string keys,
    or a torch call (a lone tensor); None when the code does not show it (a name may hold a
    tuple)."""
    if isinstance(value, (cst.Tuple, cst.List)) and value.elements and \
            not any(isinstance(e, cst.StarredElement) for e in value.elements):
        return Samples("tuple", tuple(f"column_{i}" for i in range(len(value.elements))))
    if isinstance(value, cst.Dict) and value.elements and all(
            isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements):
        return Samples("dict", tuple(e.key.evaluated_value for e in value.elements))
    if _makes_tensor(ctx, value):
        return Samples("lone", ("column_0",))
    return None


def _makes_tensor(ctx, node: cst.BaseExpression | None) -> bool:
    """A torch call (``torch.arange(4)``), a method called on one (``.float()``) or
    arithmetic with one: a tensor."""
    if isinstance(node, cst.BinaryOperation):
        return _makes_tensor(ctx, node.left) or _makes_tensor(ctx, node.right)
    if isinstance(node, cst.UnaryOperation):
        return _makes_tensor(ctx, node.expression)
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        return _makes_tensor(ctx, node.func.value)
    qual = ctx.imports.qualify(node.func) or ""
    return qual.startswith("torch.") and not qual.startswith("torch.utils.")


def class_samples(ctx, class_name: str) -> Samples | None:
    """The samples of a dataset class the file defines: what every return of its
    __getitem__ (else every yield of its __iter__) gives, when they agree."""
    cls = _class_named(ctx.facts.module, class_name)
    if cls is None:
        return None
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    method = methods.get("__getitem__") or methods.get("__iter__")
    if method is None:
        return None
    shapes = [_samples_of_value(ctx, v) for v in _returned_values(method)]
    if not shapes or any(s is None for s in shapes) or any(s != shapes[0] for s in shapes):
        return None
    return shapes[0]


def _assigned_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    """The value of the file's one assignment to ``name`` (None unless exactly one); for
    ``a, b = random_split(...)``, the random_split call (each part has its samples)."""
    values = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                names = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target]
                if any(isinstance(n.target if isinstance(n, cst.AssignTarget) else n.value, cst.Name)
                       and (n.target if isinstance(n, cst.AssignTarget) else n.value).value == name for n in names):
                    values.append(node.value)

    module.visit(Finder())
    return values[0] if len(values) == 1 else None


# calls whose samples are those of their first argument (the converted spellings too)
SAMPLES_OF_FIRST = {"torch.utils.data.Subset", "torch.utils.data.random_split", "_Subset", "_random_split"}


def _tensor_dataset_arity(ctx, call: cst.Call) -> int | None:
    """How many tensors a torch TensorDataset(...) call (as the file has it) or its
    conversion, a _TensorRows(...) call, is given."""
    func = call.func
    is_rows = isinstance(func, cst.Name) and func.value == "_TensorRows"
    if not is_rows and ctx.imports.qualify(func) != "torch.utils.data.TensorDataset":
        return None
    if not call.args or any(a.star or a.keyword for a in call.args):
        return None
    return len(call.args)


def dataset_samples(ctx, dataset: cst.BaseExpression) -> Samples | None:
    """The samples of a dataset expression, where the file shows them: a TensorDataset's
    tensors, the __getitem__ of a class it defines, directly or through a name assigned once."""
    if isinstance(dataset, cst.Name):
        value = _assigned_value(ctx.facts.module, dataset.value)
        if value is None:
            return None
        dataset = value
    if not isinstance(dataset, cst.Call):
        return None
    arity = _tensor_dataset_arity(ctx, dataset)
    if arity is not None:
        return Samples("tuple", tuple(f"column_{i}" for i in range(arity)))
    qual = dataset.func.value if isinstance(dataset.func, cst.Name) and dataset.func.value.startswith("_") \
        else ctx.imports.qualify(dataset.func)
    if qual in SAMPLES_OF_FIRST and dataset.args and dataset.args[0].keyword is None and not dataset.args[0].star:
        return dataset_samples(ctx, dataset.args[0].value)
    if isinstance(dataset.func, cst.Name):
        return class_samples(ctx, dataset.func.value)
    return None


# ---- the hooks -------------------------------------------------------------------------

def _order(ctx, args: dict) -> dict[str, cst.BaseExpression]:
    """The order keywords of the MindSpore dataset: torch's sampler, else shuffle written
    out (MindSpore shuffles by default), a shuffle decided at run time by a sampler."""
    sampler = _given(args, "sampler")
    if sampler is not None:
        return {"sampler": sampler}
    shuffle = _given(args, "shuffle")
    if shuffle is None or literal_value(shuffle) is False:
        return {"shuffle": literal(False)}
    if literal_value(shuffle) is True:
        return {"sampler": cst.Call(func=runtime_helper(ctx, "_EpochShuffle"))}
    return {"sampler": cst.IfExp(test=shuffle, body=cst.Call(func=runtime_helper(ctx, "_EpochShuffle")),
                                 orelse=cst.Call(func=dataset_ref(ctx, "SequentialSampler")))}


def _numpy_slices(ctx, rows: cst.Call, order: dict) -> cst.Call:
    """``NumpySlicesDataset((_column_value(a), ...), column_names=[...], ...)`` over the
    tensors of an inline TensorDataset, as numpy arrays (NumpySlicesDataset slices them in C++)."""
    arrays = cst.Tuple([cst.Element(cst.Call(func=runtime_helper(ctx, "_column_value"), args=[cst.Arg(a.value)]))
                        for a in rows.args])
    names = [f"column_{i}" for i in range(len(rows.args))]
    return keyword_call(dataset_ref(ctx, "NumpySlicesDataset"),
                        {"data": arrays, "column_names": _names_list(names), **order})


def _names_list(names: list[str]) -> cst.List:
    """``["column_0", ...]``: GeneratorDataset's column_names is a list."""
    return cst.List([cst.Element(cst.SimpleString(repr(n))) for n in names])


def _is_tensor_rows(node: cst.BaseExpression) -> bool:
    """An inline TensorDataset, converted: ``_TensorRows(a, b)`` with plain arguments."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "_TensorRows" \
        and bool(node.args) and not any(a.star or a.keyword for a in node.args)


def _slices_loader(call: cst.Call) -> bool:
    """A DataLoader(...) call (as the file has it) whose first argument is a call and that
    has no batch_sampler or collate_fn (the 5th and 7th parameters): a NumpySlicesDataset
    where that call is a TensorDataset."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return bool(positional) and isinstance(call.args[0].value, cst.Call) and len(positional) < 5 \
        and not keywords & {"batch_sampler", "collate_fn"} and not any(a.star for a in call.args)


def _tensor_datasets_all_in_loaders(ctx) -> bool:
    """Every TensorDataset(...) of the file is written as the first argument of a DataLoader
    that becomes a NumpySlicesDataset."""
    module, imports = ctx.facts.module, ctx.imports
    counts = {"all": 0, "in_loader": 0}

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            qual = imports.qualify(node.func)
            if qual == "torch.utils.data.TensorDataset":
                counts["all"] += 1
            elif qual == "torch.utils.data.DataLoader" and _slices_loader(node) \
                    and imports.qualify(node.args[0].value.func) == "torch.utils.data.TensorDataset":
                counts["in_loader"] += 1

    module.visit(Finder())
    return counts["all"] == counts["in_loader"]


def _collate_adapter(ctx, collate: cst.BaseExpression, samples: Samples | None) -> cst.Call:
    """``_torch_collate(f, ...)``: the samples given to ``f`` shaped as the dataset's are
    (tuples, dicts of their keys; lone or unknown: one column is a lone value)."""
    args = {"collate_fn": collate}
    if samples is not None and samples.kind != "lone":
        args["keys"] = literal(True) if samples.kind == "tuple" else _names_list(list(samples.columns))
    return keyword_call(runtime_helper(ctx, "_torch_collate"), args)


def _loader_batches(ctx, args: dict, size: cst.BaseExpression) -> cst.Call:
    """``_LoaderBatches(batch_size, drop_last=, shuffle=, sampler=)``: the loader's batches
    of indices, for a collate_fn."""
    options = {"batch_size": size}
    if args.get("drop_last") is not None and literal_value(args["drop_last"]) is not False:
        options["drop_last"] = args["drop_last"]
    if _given(args, "sampler") is not None:
        options["sampler"] = args["sampler"]
    elif _given(args, "shuffle") is not None and literal_value(args["shuffle"]) is not False:
        options["shuffle"] = args["shuffle"]
    return keyword_call(runtime_helper(ctx, "_LoaderBatches"), options)


LOADER_ARGS = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "collate_fn", "drop_last", "generator")


@hook(consumes=LOADER_ARGS, not_a_value="a DataLoader becomes a pipeline built from its arguments where it is called")
def data_loader(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``DataLoader(ds, batch_size=4, shuffle=True, drop_last=True)`` ->
    ``ms.dataset.GeneratorDataset(_torch_source(ds), column_names=[...],
    sampler=_EpochShuffle()).batch(4, drop_remainder=True)``."""
    dataset = args["dataset"]
    if _given(args, "generator") is not None:
        ctx.report(args["generator"], "MS201",
                        "DataLoader generator= dropped: the shuffle order comes from numpy's generator "
                        "(seeded by mindspore.set_seed), never torch's", Severity.WARNING)
    batch_sampler = _given(args, "batch_sampler")
    collate = _given(args, "collate_fn")
    size = args.get("batch_size", literal(1))
    unbatched = isinstance(size, cst.Name) and size.value == "None"
    if collate is not None and batch_sampler is None:
        if unbatched:
            raise Unconvertible("collate_fn with batch_size=None (called on each sample) has no counterpart here yet")
        batch_sampler = _loader_batches(ctx, args, size)
    order = {"batch_sampler": batch_sampler} if batch_sampler is not None else _order(ctx, args)
    samples = dataset_samples(ctx, dataset)
    columns = list(samples.columns) if samples is not None else None
    if collate is not None:
        order["collate_fn"] = _collate_adapter(ctx, collate, samples)
    if _is_tensor_rows(dataset) and batch_sampler is None:
        pipeline = _numpy_slices(ctx, dataset, order)
        if _tensor_datasets_all_in_loaders(ctx):
            ctx.withdraw_definition("_TensorRows")  # emitted for this call alone, now unused
    elif columns is not None:
        pipeline = keyword_call(dataset_ref(ctx, "GeneratorDataset"), {
            "source": cst.Call(func=runtime_helper(ctx, "_torch_source"), args=[cst.Arg(dataset)]),
            "column_names": _names_list(columns), **order})
    else:
        ctx.report(dataset, "MS201", "DataLoader: the file does not show this dataset's samples: their "
                        "columns are counted from the first sample at run time, and a batch is a list of columns "
                        "(torch's batch of a lone tensor is the tensor, of dicts a dict)", Severity.WARNING)
        pipeline = cst.Call(func=runtime_helper(ctx, "_generator_dataset"), args=[cst.Arg(dataset)] + [
            cst.Arg(value, keyword=cst.Name(key)) for key, value in order.items()])
    if samples is not None and samples.kind != "tuple" and collate is None:
        ctx.report(dataset, "MS201", f"DataLoader over {samples.kind} samples: a MindSpore batch is a "
                        "list of columns; the loops over a loader the file assigns get torch's batch (MS212)",
                        Severity.INFO)
    if batch_sampler is not None or unbatched:
        return pipeline  # batched by the sampler; batch_size=None: one sample at a time
    batch = {"batch_size": size}
    if args.get("drop_last") is not None and literal_value(args["drop_last"]) is not False:
        batch["drop_remainder"] = args["drop_last"]
    return keyword_call(cst.Attribute(value=pipeline, attr=cst.Name("batch")), batch)


@hook(consumes=("*",))
def tensor_rows(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``TensorDataset(x, y)`` -> ``_TensorRows(x, y)``."""
    tensors = args.get("*", [])
    if not tensors:
        raise Unconvertible("TensorDataset of no tensors")
    return cst.Call(func=runtime_helper(ctx, "_TensorRows"), args=[
        cst.Arg(t.value, star="*") if isinstance(t, cst.StarredElement) else cst.Arg(t) for t in tensors])


def _helper_call(ctx, name: str, args: dict, params: tuple[str, ...]) -> cst.Call:
    """``name(<the given params, in order>)``, ``name`` emitted."""
    return cst.Call(func=runtime_helper(ctx, name), args=[cst.Arg(args[p]) for p in params if p in args])


@hook(consumes=("dataset", "indices"))
def subset(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``Subset(ds, idx)`` -> ``_Subset(ds, idx)``."""
    return _helper_call(ctx, "_Subset", args, ("dataset", "indices"))


@hook(consumes=("dataset", "lengths"))
def random_split(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``random_split(ds, [8, 2])`` -> ``_random_split(ds, [8, 2])``."""
    return _helper_call(ctx, "_random_split", args, ("dataset", "lengths"))


@hook(consumes=("datasets",))
def concat_dataset(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``ConcatDataset([a, b])`` -> ``_ConcatDataset([a, b])``."""
    return _helper_call(ctx, "_ConcatDataset", args, ("datasets",))


@hook(consumes=("batch",))
def default_collate(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``default_collate(samples)`` -> ``_default_collate(samples)``."""
    return _helper_call(ctx, "_default_collate", args, ("batch",))


@hook(consumes=("sampler", "batch_size", "drop_last"))
def batch_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``BatchSampler(s, 4, False)`` -> ``_BatchSampler(s, 4, False)``."""
    return _helper_call(ctx, "_BatchSampler", args, ("sampler", "batch_size", "drop_last"))


@hook(consumes=("data_source",))
def random_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``RandomSampler(ds)`` -> ``_EpochShuffle(range(len(ds)))``: a new order per pass."""
    length = cst.Call(func=cst.Name("len"), args=[cst.Arg(args["data_source"])])
    return cst.Call(func=runtime_helper(ctx, "_EpochShuffle"), args=[
        cst.Arg(cst.Call(func=cst.Name("range"), args=[cst.Arg(length)]))])


@hook(consumes=("weights", "num_samples", "replacement"))
def weighted_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``WeightedRandomSampler(w, n)`` -> ``_WeightedSampler(w, n)``."""
    return _helper_call(ctx, "_WeightedSampler", args, ("weights", "num_samples", "replacement"))


@hook(consumes=("indices",))
def subset_random_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``SubsetRandomSampler(idx)`` -> ``_EpochShuffle(idx)``."""
    return cst.Call(func=runtime_helper(ctx, "_EpochShuffle"), args=[cst.Arg(args["indices"])])


@hook(consumes=("data_source",))
def sequential_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``SequentialSampler(ds)`` -> ``range(len(ds))``: a GeneratorDataset takes any
    iterable of indices as its sampler, and a BatchSampler iterates it in Python."""
    length = cst.Call(func=cst.Name("len"), args=[cst.Arg(args["data_source"])])
    return cst.Call(func=cst.Name("range"), args=[cst.Arg(length)])
