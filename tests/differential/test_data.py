"""Differential tests for tables/data.toml and MS212: torch.utils.data code and its
converted mindspore.dataset pipeline, run on the same data: the batches (values, dtypes,
order without shuffle, count with drop_last) over two epochs; with shuffle, the samples
of each epoch and a new order per epoch."""
from __future__ import annotations

import numpy as np

from transpile import convert_code

from .harness import DEFAULT_HEADER, Case, Suite, arr, ints, table_tests

HEADER = DEFAULT_HEADER + ("from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, Subset, "
                           "ConcatDataset, random_split, default_collate, RandomSampler, SequentialSampler, "
                           "SubsetRandomSampler, BatchSampler, WeightedRandomSampler\nimport torch.utils.data\n")
X, Y, L = arr(10, 3), ints(10), arr(10, dtype="float64")
TWO_EPOCHS = "[[list(batch) for batch in loader] for epoch in range(2)]"
SQUARES = ("class Squares(Dataset):\n"
           "        def __init__(self, x, y):\n            self.x, self.y = x, y\n"
           "        def __len__(self):\n            return len(self.x)\n"
           "        def __getitem__(self, i):\n            return self.x[i] * 2, self.y[i]\n")
STREAM = ("class Stream(IterableDataset):\n"
          "        def __init__(self, x):\n            self.x = x\n"
          "        def __iter__(self):\n            for i in range(len(self.x)):\n                yield self.x[i], i\n")
TOKENS = ("class Tokens(Dataset):\n"
          "        def __init__(self, x):\n            self.x = x\n"
          "        def __len__(self):\n            return len(self.x)\n"
          "        def __getitem__(self, i):\n            return torch.tanh(self.x[i]) + 1\n")
RECORDS = ("class Records(Dataset):\n"
           "        def __init__(self, x, y):\n            self.x, self.y = x, y\n"
           "        def __len__(self):\n            return len(self.x)\n"
           "        def __getitem__(self, i):\n            return {'x': self.x[i], 'y': self.y[i]}\n")
PAIRS = ("class Pairs(torch.utils.data.Dataset):\n"
         "        def __len__(self):\n            return 7\n"
         "        def __getitem__(self, i):\n            return float(i), i * 3\n")


# integer columns come out int32, MindSpore's label type, where torch's are int64: the
# cases with integers compare values only, test_batch_dtypes the dtypes
INT32 = dict(check_dtype=False, why="integer columns are int32 (MindSpore's labels), torch's int64")


def loader_case(form: str, loader: str, inputs=(X, Y), before: str = "", result: str = TWO_EPOCHS, **opts) -> Case:
    """A DataLoader built by ``loader`` (after the statements ``before``), its batches over
    two epochs compared."""
    prefix = f"{before}\n    " if before else ""
    return Case("torch.utils.data.DataLoader", f"{prefix}loader = {loader}\n    return {result}", inputs, form,
                method="helper", **{**INT32, **opts})


# the samples of each epoch, sorted, and whether two epochs came in different orders
SHUFFLED = ("[sorted(float(v) for batch in loader for v in batch[1]) for epoch in range(2)], "
            "[[float(v) for batch in loader for v in batch[1]] for epoch in range(2)] != "
            "[[float(v) for batch in loader for v in batch[1]]] * 2, len(loader)")

CASES: list[Case] = [
    loader_case("positional", "DataLoader(TensorDataset(a, b), 4, False)"),
    loader_case("keyword", "DataLoader(dataset=TensorDataset(a, b), batch_size=3, shuffle=False, drop_last=True, "
                "num_workers=0, pin_memory=False)"),
    loader_case("defaults", "DataLoader(TensorDataset(a, b))"),
    loader_case("mixed", "DataLoader(TensorDataset(a, b), batch_size=4, drop_last=True)", result="len(loader), " + TWO_EPOCHS),
    loader_case("dataset-class", "DataLoader(Squares(a, b), batch_size=4)", before=SQUARES),
    loader_case("dataset-name", "DataLoader(data, batch_size=3, drop_last=False)",
                before="data = TensorDataset(a, b, c)", inputs=(X, Y, L)),
    Case("torch.utils.data.DataLoader", f"{TOKENS}\n    tokens_part, rest = random_split(Tokens(a), [7, 3])\n"
         "    part_loader = DataLoader(tokens_part, batch_size=3)\n"
         "    return [tuple(batch.shape) for batch in part_loader], len(part_loader)",
         (X,), "split-parts", method="helper"),
    loader_case("iterable", "DataLoader(Stream(a), batch_size=3)", before=STREAM, inputs=(X,)),
    loader_case("python-values", "DataLoader(Pairs(), batch_size=2)", before=PAIRS, inputs=()),
    loader_case("unknown-columns", "DataLoader(data, batch_size=4)",
                before="data = [(a[i], b[i]) for i in range(len(a))]"),
    loader_case("batch-none", "DataLoader(TensorDataset(a, b), batch_size=None)", inputs=(X[:3], Y[:3])),
    loader_case("collate", "DataLoader(TensorDataset(a, b), batch_size=4, "
                "collate_fn=lambda batch: (torch.stack([x for x, _ in batch]) * 2, torch.stack([y for _, y in batch])))"),
    loader_case("collate-lone", "DataLoader(Rows(a), batch_size=3, collate_fn=lambda rows: (torch.stack(rows).sum(1),))",
                before="class Rows(Dataset):\n        def __init__(self, x):\n            self.x = x\n"
                "        def __len__(self):\n            return len(self.x)\n"
                "        def __getitem__(self, i):\n            return self.x[i]\n",
                inputs=(X,), result="[[list(batch) for batch in loader] for epoch in range(2)]"),
    loader_case("shuffle", "DataLoader(TensorDataset(a, b), batch_size=4, shuffle=True)", inputs=(X, arr(10)),
                result=SHUFFLED),
    loader_case("shuffle-drop", "DataLoader(TensorDataset(a, b), batch_size=4, shuffle=True, drop_last=True)",
                inputs=(X, arr(10)), result="[sum(len(batch[1]) for batch in loader) for epoch in range(2)], len(loader)"),
    loader_case("shuffle-variable", "DataLoader(TensorDataset(a, b), batch_size=4, shuffle=flag)",
                before="flag = len(a) > 0", inputs=(X, arr(10)), result=SHUFFLED),
    loader_case("sampler", "DataLoader(TensorDataset(a, b), batch_size=3, sampler=[4, 2, 0, 9, 7])"),
    loader_case("batch-sampler", "DataLoader(TensorDataset(a, b), batch_sampler=[[0, 1, 2], [5, 6], [9]])"),
    loader_case("next-iter", "DataLoader(TensorDataset(a, b), batch_size=4)", result="list(next(iter(loader)))"),
    loader_case("dataset-attribute", "DataLoader(Squares(a, b), batch_size=4)", before=SQUARES,
                result="len(loader.dataset), len(loader)"),
    Case("torch.utils.data.DataLoader", f"{TOKENS}\n    lone_loader = DataLoader(Tokens(a), batch_size=3, shuffle=False)\n"
         "    return [[batch * 1 for batch in lone_loader] for epoch in range(2)], "
         "[[i, batch] for i, batch in enumerate(lone_loader)], next(iter(lone_loader))", (X,), "lone-samples",
         method="helper"),
    Case("torch.utils.data.DataLoader", f"{RECORDS}\n    dict_loader = DataLoader(Records(a, b), batch_size=4)\n"
         "    out = []\n    for epoch in range(2):\n        for step, batch in enumerate(dict_loader):\n"
         "            out.append([step, batch['x'], batch['y']])\n"
         "    return out, sorted(next(iter(dict_loader)))", (X, Y), "dict-samples", method="helper", **INT32),
    Case("torch.utils.data.Dataset", f"{SQUARES}\n    return [list(b) for b in DataLoader(Squares(a, b), batch_size=6)]",
         (X, Y), "subclass", method="helper", **INT32),
    Case("torch.utils.data.IterableDataset", f"{STREAM}\n    return [list(b) for b in DataLoader(Stream(a), batch_size=4)]",
         (X,), "subclass", method="helper", **INT32),
    Case("torch.utils.data.TensorDataset", "TensorDataset(a, b)[3]", (X, Y), "index", method="helper"),
    Case("torch.utils.data.TensorDataset", "len(TensorDataset(a))", (X,), "len", method="helper"),
    Case("torch.utils.data.TensorDataset", "list(TensorDataset(*[a, b])[-1])", (X, Y), "starred", method="helper"),
    Case("torch.utils.data.Subset", "Subset(TensorDataset(a, b), [2, 0, 7])[1]", (X, Y), "positional", method="helper"),
    Case("torch.utils.data.Subset", "len(Subset(dataset=TensorDataset(a), indices=range(4)))", (X,), "keyword",
         method="helper"),
    Case("torch.utils.data.Subset", "[list(batch) for batch in DataLoader(Subset(TensorDataset(a, b), [9, 1, 4]), "
         "batch_size=2)]", (X, Y), "loader", method="helper", **INT32),
    Case("torch.utils.data.ConcatDataset", "ConcatDataset([TensorDataset(a), TensorDataset(b)])[12]", (X, X * 3),
         "positional", method="helper"),
    Case("torch.utils.data.ConcatDataset", "len(ConcatDataset(datasets=[TensorDataset(a), TensorDataset(b[:4])]))",
         (X, X), "keyword", method="helper"),
    Case("torch.utils.data.ConcatDataset", "ConcatDataset([TensorDataset(a), TensorDataset(b)])[-1]", (X, X * 3),
         "negative", method="helper"),
    Case("torch.utils.data.random_split", "parts = random_split(TensorDataset(a), [6, 4])\n"
         "    return [len(p) for p in parts], sorted(i for p in parts for i in p.indices)", (X,), "positional",
         method="helper"),
    Case("torch.utils.data.random_split", "parts = random_split(dataset=TensorDataset(a), lengths=[0.7, 0.3])\n"
         "    return [len(p) for p in parts], sorted(i for p in parts for i in p.indices)", (X,), "keyword",
         method="helper"),
    Case("torch.utils.data.random_split", "parts = random_split(TensorDataset(a, b), [0.5, 0.25, 0.25])\n"
         "    return [len(p) for p in parts], sorted(float(v) for p in parts for i in range(len(p)) for v in p[i][1:])",
         (X, arr(10)), "fractions", method="helper"),
    Case("torch.utils.data.default_collate", "default_collate([(a[0], b[0]), (a[1], b[1])])", (X, Y), "tuples",
         method="helper"),
    Case("torch.utils.data.default_collate", "sorted(default_collate(batch=[{'x': a[0], 'n': 2.5}, {'x': a[1], 'n': 1.0}]).items())",
         (X,), "dicts", method="helper"),
    Case("torch.utils.data.default_collate", "default_collate([a[0], a[2], a[4]])", (X,), "tensors", method="helper"),
    # the module path DataLoader's own code names it by
    Case("torch.utils.data.default_collate", "torch.utils.data.dataloader.default_collate([(a[0], 1), (a[1], 2)])", (X,),
         "dataloader-path", method="helper"),
    Case("torch.utils.data.RandomSampler", "sorted(RandomSampler(TensorDataset(a)))", (X,), "positional",
         method="helper"),
    Case("torch.utils.data.RandomSampler", "sorted(RandomSampler(data_source=TensorDataset(a), replacement=False))",
         (X,), "keyword", method="helper"),
    Case("torch.utils.data.RandomSampler", "[sorted(float(v) for batch in loader for v in batch[1]) for _ in range(2)]"
         if False else "data = TensorDataset(a, b)\n    loader = DataLoader(data, batch_size=3, sampler=RandomSampler(data))"
         "\n    return [sorted(float(v) for batch in loader for v in batch[1]) for _ in range(2)], len(loader)",
         (X, arr(10)), "loader", method="helper"),
    Case("torch.utils.data.SubsetRandomSampler", "sorted(SubsetRandomSampler([1, 3, 5, 8]))", (), "positional",
         method="helper"),
    Case("torch.utils.data.SubsetRandomSampler", "sorted(SubsetRandomSampler(indices=range(2, 6)))", (), "keyword",
         method="helper"),
    Case("torch.utils.data.SubsetRandomSampler", "loader = DataLoader(TensorDataset(a, b), batch_size=2, "
         "sampler=SubsetRandomSampler([0, 4, 6]))\n"
         "    return [sorted(float(v) for batch in loader for v in batch[1]) for _ in range(2)]",
         (X, arr(10)), "loader", method="helper"),
    Case("torch.utils.data.WeightedRandomSampler", "sorted(set(WeightedRandomSampler([0.0, 2.0, 0.0, 1.0], 30))), "
         "len(WeightedRandomSampler([1, 1], 7))", (), "positional", method="helper"),
    Case("torch.utils.data.WeightedRandomSampler", "sorted(WeightedRandomSampler(weights=[1.0, 1.0, 1.0, 1.0], "
         "num_samples=4, replacement=False))", (), "keyword", method="helper"),
    Case("torch.utils.data.WeightedRandomSampler", "loader = DataLoader(TensorDataset(a, b), batch_size=4, "
         "sampler=WeightedRandomSampler([0.0] * 9 + [1.0], 8))\n"
         "    return [[batch[1] for batch in loader] for _ in range(2)], len(loader)", (X, arr(10)), "loader",
         method="helper"),
    Case("torch.utils.data.SequentialSampler", "list(SequentialSampler(TensorDataset(a)))", (X,), "positional",
         method="helper"),
    Case("torch.utils.data.SequentialSampler", "list(SequentialSampler(data_source=[7, 8, 9]))", (), "keyword",
         method="helper"),
    Case("torch.utils.data.SequentialSampler", "[list(batch) for batch in DataLoader(TensorDataset(a, b), "
         "batch_size=4, sampler=SequentialSampler(range(10)))]", (X, Y), "loader", method="helper", **INT32),
    Case("torch.utils.data.BatchSampler", "list(BatchSampler(range(10), 4, False))", (), "positional",
         method="helper"),
    Case("torch.utils.data.BatchSampler", "len(BatchSampler(sampler=range(10), batch_size=3, drop_last=True))", (),
         "keyword", method="helper"),
    Case("torch.utils.data.BatchSampler", "[list(batch) for batch in DataLoader(TensorDataset(a, b), "
         "batch_sampler=BatchSampler(SequentialSampler(range(10)), 4, drop_last=True))]", (X, Y), "loader",
         method="helper", **INT32),
]
SUITE = Suite(CASES, header=HEADER)

test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["data.toml"])


def _converted_namespace(torch_source: str) -> dict:
    """The namespace of the converted ``torch_source``, run."""
    result = convert_code(torch_source, filename="<data>")
    assert "import torch" not in result.code and "# transpile:" not in result.code, result.code
    namespace: dict = {}
    exec(compile(result.code, "<converted data>", "exec"), namespace)
    return namespace


SEEDED_SCRIPT = """import torch
from torch.utils.data import DataLoader, TensorDataset

def epochs(x, y, count):
    loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
    return [[int(v) for _, labels in loader for v in labels] for _ in range(count)]
"""


def test_a_seeded_shuffle_gives_a_new_order_each_epoch_and_the_same_orders_each_run() -> None:
    """MindSpore's own shuffle restarts from the seed at each new iterator (every epoch the
    same order once mindspore.set_seed ran); the converted loader reshuffles like torch's."""
    import mindspore

    epochs = _converted_namespace(SEEDED_SCRIPT)["epochs"]
    x, y = mindspore.Tensor(X), mindspore.Tensor(np.arange(10))
    mindspore.set_seed(7)
    first = epochs(x, y, 3)
    mindspore.set_seed(7)
    again = epochs(x, y, 3)
    assert first == again
    assert all(sorted(order) == list(range(10)) for order in first)
    assert len({tuple(order) for order in first}) == 3, first


TRAINING_SCRIPT = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def batches(x, y):
    loader = DataLoader(Points(x, y), batch_size=4, shuffle=False, drop_last=False)
    net = nn.Linear(3, 2)
    seen = []
    for epoch in range(2):
        for step, (inputs, labels) in enumerate(loader):
            seen.append((epoch, step, tuple(net(inputs).shape), labels.dtype, len(loader), len(loader.dataset)))
    return seen
"""


def test_a_loop_over_a_loader_of_a_dataset_class_trains_a_layer() -> None:
    """Batches from a Dataset class of MindSpore tensors reach a layer, epoch after epoch."""
    import mindspore

    seen = _converted_namespace(TRAINING_SCRIPT)["batches"](mindspore.Tensor(X), mindspore.Tensor(Y))
    assert [(e, s, shape, n, size) for e, s, shape, _, n, size in seen] == [
        (e, s, (4 if s < 2 else 2, 2), 3, 10) for e in range(2) for s in range(3)]
    assert all(dtype == mindspore.int32 for *_, dtype, _, _ in seen)


DTYPES_SCRIPT = """import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Mixed(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return np.float32(i), np.float64(i), np.int64(i), i, torch.tensor([i, i]), torch.tensor(0.5)


def batches(x, y):
    return next(iter(DataLoader(Mixed(), batch_size=2))), next(iter(DataLoader(TensorDataset(x, y), batch_size=2)))
"""


def test_batch_dtypes() -> None:
    """Floats keep their dtype (float64 too, as torch's collate keeps it); integers, torch's
    int64, come out int32."""
    import mindspore
    import torch
    from torch.utils.data import DataLoader

    mixed, tensors = _converted_namespace(DTYPES_SCRIPT)["batches"](mindspore.Tensor(X), mindspore.Tensor(Y))
    torch_ns: dict = {}
    exec(DTYPES_SCRIPT, torch_ns)
    expected = [str(t.dtype).removeprefix("torch.") for t in next(iter(DataLoader(torch_ns["Mixed"](), batch_size=2)))]
    assert expected == ["float32", "float64", "int64", "int64", "int64", "float32"]
    assert [str(t.dtype).lower() for t in mixed] == ["float32", "float64", "int32", "int32", "int32", "float32"]
    assert [str(t.dtype).lower() for t in tensors] == ["float32", "int32"]
