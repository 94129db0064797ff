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
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..syntax import Unconvertible, code, emitted, keyword_call, literal, literal_value, spelled
from .registry import hook

SAMPLE_COLUMNS = '''
def {name}(sample):
    """A torch sample as MindSpore dataset columns (transpile MS212): a tuple of numpy
    arrays (a dict gives its values, a lone value one column)."""
    if isinstance(sample, dict):
        sample = tuple(sample.values())
    elif not isinstance(sample, (tuple, list)):
        sample = (sample,)
    return tuple(_column_value(value) for value in sample)
'''

COLUMN_VALUE = '''
def {name}(value):
    """One value of a sample as a MindSpore dataset takes it (transpile MS212): a tensor
    as a numpy array; integers (int64, torch's default) as int32, MindSpore's type for
    labels and indices (nn.CrossEntropyLoss refuses int64 labels)."""
    if isinstance(value, MS.Tensor):
        value = value.asnumpy()
    if isinstance(value, int) and not isinstance(value, bool):
        return NP.int32(value)
    if isinstance(value, (NP.ndarray, NP.integer)) and value.dtype == NP.int64:
        return value.astype(NP.int32)
    return value
'''

MAP_SOURCE = '''
class {name}:
    """A torch map-style dataset as a GeneratorDataset source (transpile MS212): the index
    MindSpore gives (a numpy integer, which a MindSpore tensor refuses) as an int, the
    sample as numpy columns."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        if hasattr(self.dataset, "numpy_sample"):  # a TensorDataset's rows, read from numpy
            return self.dataset.numpy_sample(int(index))
        return _sample_columns(self.dataset[int(index)])
'''

STREAM_SOURCE = '''
class {name}:
    """A torch iterable dataset as a GeneratorDataset source (transpile MS212): each
    sample as numpy columns, a new pass over the dataset per epoch."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        return (_sample_columns(sample) for sample in self.dataset)
'''

TORCH_SOURCE = '''
def {name}(dataset):
    """The GeneratorDataset source of a torch dataset (transpile MS212): random access
    where it has __getitem__ and __len__, else its iteration."""
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return _TorchSamples(dataset)
    return _TorchStream(dataset)
'''

GENERATOR_DATASET = '''
def {name}(dataset, **options):
    """A GeneratorDataset over a torch dataset whose samples the converter did not see
    (transpile MS212): one column per value of its first sample (a dict's keys name them)."""
    source = _torch_source(dataset)
    first = next(iter(dataset)) if isinstance(source, _TorchStream) else dataset[0]
    if isinstance(first, dict):
        names = [str(key) for key in first]
    else:
        names = [f"column_{i}" for i in range(len(_sample_columns(first)))]
    return MS.dataset.GeneratorDataset(source, column_names=names, **options)
'''

EPOCH_SHUFFLE = '''
class {name}(MS.dataset.Sampler):
    """torch's shuffling (transpile MS212): a new random order at each pass over the data,
    drawn from numpy's generator, which mindspore.set_seed seeds. (A GeneratorDataset's own
    shuffle restarts from the dataset seed at each new iterator: once seeded, every epoch
    had the same order.) Over the dataset's indices, or over the ``indices`` given."""

    def __init__(self, indices=None):
        self.indices = indices
        super().__init__()
        if indices is None:
            self.num_samples = None  # all of the dataset, whose size MindSpore tells later

    def __iter__(self):
        count = self.dataset_size if self.indices is None else len(self.indices)
        order = NP.random.permutation(count).tolist()
        if self.indices is None:
            return iter(order)
        return iter([self.indices[i] for i in order])

    def __len__(self):
        return self.dataset_size if self.indices is None else len(self.indices)
'''

TENSOR_ROWS = '''
class {name}:
    """torch's TensorDataset (transpile MS212): row i of each tensor. A pipeline reads the
    rows from numpy copies (numpy_sample): indexing a MindSpore tensor row by row took
    4 ms a row."""

    def __init__(self, *tensors):
        if any(len(t) != len(tensors[0]) for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors
        self.arrays = None

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, index):
        return tuple(t[int(index)] for t in self.tensors)

    def numpy_sample(self, index):
        if self.arrays is None:
            self.arrays = [_column_value(t) for t in self.tensors]
        return tuple(a[index] for a in self.arrays)
'''

TORCH_COLLATE = '''
def {name}(collate_fn, keys=None):
    """torch's collate_fn as a GeneratorDataset's (transpile MS212): MindSpore passes one
    list per column; torch's takes the list of samples, as tensors: tuples (keys=True),
    dicts of the ``keys`` given, or (keys=None and one column) the values themselves. Its
    result becomes a tuple of columns, as a sample's do."""

    def collate(*columns):
        columns = [[MS.Tensor(v) if isinstance(v, NP.ndarray) and v.dtype.kind in "biuf" else v
                    for v in column] for column in columns]
        if isinstance(keys, (list, tuple)):
            samples = [dict(zip(keys, row)) for row in zip(*columns)]
        elif keys is None and len(columns) == 1:
            samples = columns[0]
        else:
            samples = [tuple(row) for row in zip(*columns)]
        batch = collate_fn(samples)
        if isinstance(batch, dict):
            batch = tuple(batch.values())
        elif not isinstance(batch, (tuple, list)):
            batch = (batch,)
        return tuple(_column_value(column) for column in batch)

    return collate
'''

LOADER_BATCHES = '''
class {name}(MS.dataset.Sampler):
    """A DataLoader's batches of indices as a GeneratorDataset batch_sampler (transpile
    MS212), for a collate_fn: MindSpore runs a GeneratorDataset's collate_fn where it reads
    the samples, while a per_batch_map of .batch() runs where MindSpore operators fail.
    The order: the ``sampler``'s, else a new random one per pass (``shuffle``, from numpy's
    generator, which mindspore.set_seed seeds), else the dataset's."""

    def __init__(self, batch_size, drop_last=False, shuffle=False, sampler=None):
        super().__init__()
        self.num_samples = None  # every batch
        self.batch_size, self.drop_last, self.shuffle, self.sampler = batch_size, drop_last, shuffle, sampler

    def __iter__(self):
        if self.sampler is not None:
            order = [int(i) for i in self.sampler]
        elif self.shuffle:
            order = NP.random.permutation(self.dataset_size).tolist()
        else:
            order = list(range(self.dataset_size))
        stop = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        return iter([order[i:i + self.batch_size] for i in range(0, stop, self.batch_size)])
'''

SUBSET = '''
class {name}:
    """torch's Subset (transpile MS212): the dataset's samples at the given indices."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[int(index)]]

    def __getattr__(self, name):
        # a TensorDataset's fast numpy_sample, through the subset's indices
        if name == "numpy_sample" and hasattr(self.dataset, "numpy_sample"):
            return lambda index: self.dataset.numpy_sample(int(self.indices[index]))
        raise AttributeError(name)
'''

RANDOM_SPLIT = '''
def {name}(dataset, lengths):
    """torch's random_split (transpile MS212): non-overlapping random subsets of the given
    lengths (fractions of the dataset, the remainder spread one by one from the first) in
    a random order from numpy's generator (mindspore.set_seed seeds it; not torch's order)."""
    total = len(dataset)
    if all(0 <= n <= 1 for n in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != total:
        counts = [int(total * n) for n in lengths]
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != total:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = NP.random.permutation(total).tolist()
    parts, start = [], 0
    for n in lengths:
        parts.append(_Subset(dataset, order[start:start + n]))
        start += n
    return parts
'''

CONCAT = '''
class {name}:
    """torch's ConcatDataset (transpile MS212): the datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.cumulative_sizes, total = [], 0
        for dataset in self.datasets:
            total += len(dataset)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index):
        index = int(index)
        if index < 0:
            index += len(self)
        start = 0
        for dataset, end in zip(self.datasets, self.cumulative_sizes):
            if index < end:
                return dataset[index - start]
            start = end
        raise IndexError("index out of range")
'''

DEFAULT_COLLATE = '''
def {name}(batch):
    """torch's default_collate (transpile MS212): samples stacked along a new first axis,
    tuples and dicts collated field by field; numbers become a tensor (floats float64, as
    torch makes them)."""
    first = batch[0]
    if isinstance(first, MS.Tensor):
        return MS.ops.stack(list(batch))
    if isinstance(first, NP.ndarray):
        return MS.Tensor(NP.stack(batch))
    if isinstance(first, dict):
        return {key: {name}([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)) and not isinstance(first, str):
        return [{name}(list(field)) for field in zip(*batch)]
    if isinstance(first, (bool, int, float)):
        return MS.Tensor(NP.asarray(batch))
    return batch
'''

BATCH_SAMPLER = '''
class {name}:
    """torch's BatchSampler (transpile MS212): the sampler's indices in lists of
    batch_size (the last one shorter unless drop_last), a GeneratorDataset batch_sampler."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(int(index))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''

WEIGHTED_SAMPLER = '''
class {name}:
    """torch's WeightedRandomSampler (transpile MS212): num_samples indices drawn with the
    given weights (with replacement unless told), new ones at each pass, from numpy's
    generator (mindspore.set_seed seeds it; never torch's draws)."""

    def __init__(self, weights, num_samples, replacement=True):
        weights = NP.asarray([float(w) for w in weights], dtype=NP.float64)
        self.p = weights / weights.sum()
        self.num_samples = num_samples
        self.replacement = replacement

    def __iter__(self):
        drawn = NP.random.choice(len(self.p), self.num_samples, replace=self.replacement, p=self.p)
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples
'''

# emitted name -> (source, the emitted names it uses)
DEFINITIONS = {
    "_column_value": (COLUMN_VALUE, ()),
    "_sample_columns": (SAMPLE_COLUMNS, ("_column_value",)),
    "_TorchSamples": (MAP_SOURCE, ("_sample_columns",)),
    "_TorchStream": (STREAM_SOURCE, ("_sample_columns",)),
    "_torch_source": (TORCH_SOURCE, ("_TorchSamples", "_TorchStream")),
    "_generator_dataset": (GENERATOR_DATASET, ("_torch_source",)),
    "_EpochShuffle": (EPOCH_SHUFFLE, ()),
    "_TensorRows": (TENSOR_ROWS, ("_column_value",)),
    "_torch_collate": (TORCH_COLLATE, ("_column_value",)),
    "_LoaderBatches": (LOADER_BATCHES, ()),
    "_Subset": (SUBSET, ()),
    "_random_split": (RANDOM_SPLIT, ("_Subset",)),
    "_ConcatDataset": (CONCAT, ()),
    "_default_collate": (DEFAULT_COLLATE, ()),
    "_BatchSampler": (BATCH_SAMPLER, ()),
    "_WeightedSampler": (WEIGHTED_SAMPLER, ()),
}


def helper(ctx, name: str) -> cst.Name:
    """The emitted definition ``name`` (and those it uses), spelled with the file's
    mindspore and numpy bindings."""
    source, uses = DEFINITIONS[name]
    for used in uses:
        helper(ctx, used)
    numpy = code(ctx.reference("numpy.x")).rsplit(".", 1)[0]
    return emitted(ctx, name, spelled(ctx, source).replace("NP.", f"{numpy}."))


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
        return {"sampler": cst.Call(func=helper(ctx, "_EpochShuffle"))}
    return {"sampler": cst.IfExp(test=shuffle, body=cst.Call(func=helper(ctx, "_EpochShuffle")),
                                 orelse=cst.Call(func=dataset_ref(ctx, "SequentialSampler")))}


def _numpy_slices(ctx, rows: cst.Call, order: dict) -> cst.Call:
    """``NumpySlicesDataset((_column_value(a), ...), column_names=[...], ...)`` over the
    tensors of an inline TensorDataset, as numpy arrays (NumpySlicesDataset slices them in C++)."""
    arrays = cst.Tuple([cst.Element(cst.Call(func=helper(ctx, "_column_value"), args=[cst.Arg(a.value)]))
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
    return keyword_call(helper(ctx, "_torch_collate"), args)


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
    return keyword_call(helper(ctx, "_LoaderBatches"), options)


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
            ctx.definitions.pop("_TensorRows", None)  # emitted for this call alone, now unused
    elif columns is not None:
        pipeline = keyword_call(dataset_ref(ctx, "GeneratorDataset"), {
            "source": cst.Call(func=helper(ctx, "_torch_source"), args=[cst.Arg(dataset)]),
            "column_names": _names_list(columns), **order})
    else:
        ctx.report(dataset, "MS201", "DataLoader: the file does not show this dataset's samples: their "
                        "columns are counted from the first sample at run time, and a batch is a list of columns "
                        "(torch's batch of a lone tensor is the tensor, of dicts a dict)", Severity.WARNING)
        pipeline = cst.Call(func=helper(ctx, "_generator_dataset"), args=[cst.Arg(dataset)] + [
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
    return cst.Call(func=helper(ctx, "_TensorRows"), args=[
        cst.Arg(t.value, star="*") if isinstance(t, cst.StarredElement) else cst.Arg(t) for t in tensors])


def _helper_call(ctx, name: str, args: dict, params: tuple[str, ...]) -> cst.Call:
    """``name(<the given params, in order>)``, ``name`` emitted."""
    return cst.Call(func=helper(ctx, name), args=[cst.Arg(args[p]) for p in params if p in args])


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
    return cst.Call(func=helper(ctx, "_EpochShuffle"), args=[
        cst.Arg(cst.Call(func=cst.Name("range"), args=[cst.Arg(length)]))])


@hook(consumes=("weights", "num_samples", "replacement"))
def weighted_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``WeightedRandomSampler(w, n)`` -> ``_WeightedSampler(w, n)``."""
    return _helper_call(ctx, "_WeightedSampler", args, ("weights", "num_samples", "replacement"))


@hook(consumes=("indices",))
def subset_random_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``SubsetRandomSampler(idx)`` -> ``_EpochShuffle(idx)``."""
    return cst.Call(func=helper(ctx, "_EpochShuffle"), args=[cst.Arg(args["indices"])])


@hook(consumes=("data_source",))
def sequential_sampler(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``SequentialSampler(ds)`` -> ``range(len(ds))``: a GeneratorDataset takes any
    iterable of indices as its sampler, and a BatchSampler iterates it in Python."""
    length = cst.Call(func=cst.Name("len"), args=[cst.Arg(args["data_source"])])
    return cst.Call(func=cst.Name("range"), args=[cst.Arg(length)])
