"""Run-time helpers: torch.utils.data (tables/data.toml) on mindspore.dataset: a torch Dataset
as the source of a GeneratorDataset, its samples as columns, the loader's batches, shuffling
per epoch, subsets, splits, concatenation, collation and samplers.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import numpy as np
import mindspore as ms


def _column_value(value):
    """One value of a sample as a MindSpore dataset takes it (transpile MS212): a tensor
    as a numpy array; integers (int64, torch's default) as int32, MindSpore's type for
    labels and indices (nn.CrossEntropyLoss refuses int64 labels)."""
    if isinstance(value, ms.Tensor):
        value = value.asnumpy()
    if isinstance(value, int) and not isinstance(value, bool):
        return np.int32(value)
    if isinstance(value, (np.ndarray, np.integer)) and value.dtype == np.int64:
        return value.astype(np.int32)
    return value


def _sample_columns(sample):
    """A torch sample as MindSpore dataset columns (transpile MS212): a tuple of numpy
    arrays (a dict gives its values, a lone value one column)."""
    if isinstance(sample, dict):
        sample = tuple(sample.values())
    elif not isinstance(sample, (tuple, list)):
        sample = (sample,)
    return tuple(_column_value(value) for value in sample)


class _TorchSamples:
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


class _TorchStream:
    """A torch iterable dataset as a GeneratorDataset source (transpile MS212): each
    sample as numpy columns, a new pass over the dataset per epoch."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        return (_sample_columns(sample) for sample in self.dataset)


def _torch_source(dataset):
    """The GeneratorDataset source of a torch dataset (transpile MS212): random access
    where it has __getitem__ and __len__, else its iteration."""
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return _TorchSamples(dataset)
    return _TorchStream(dataset)


def _generator_dataset(dataset, **options):
    """A GeneratorDataset over a torch dataset whose samples the converter did not see
    (transpile MS212): one column per value of its first sample (a dict's keys name them)."""
    source = _torch_source(dataset)
    first = next(iter(dataset)) if isinstance(source, _TorchStream) else dataset[0]
    if isinstance(first, dict):
        names = [str(key) for key in first]
    else:
        names = [f"column_{i}" for i in range(len(_sample_columns(first)))]
    return ms.dataset.GeneratorDataset(source, column_names=names, **options)


class _EpochShuffle(ms.dataset.Sampler):
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
        order = np.random.permutation(count).tolist()
        if self.indices is None:
            return iter(order)
        return iter([self.indices[i] for i in order])

    def __len__(self):
        return self.dataset_size if self.indices is None else len(self.indices)


class _TensorRows:
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


def _torch_collate(collate_fn, keys=None):
    """torch's collate_fn as a GeneratorDataset's (transpile MS212): MindSpore passes one
    list per column; torch's takes the list of samples, as tensors: tuples (keys=True),
    dicts of the ``keys`` given, or (keys=None and one column) the values themselves. Its
    result becomes a tuple of columns, as a sample's do."""

    def collate(*columns):
        columns = [[ms.Tensor(v) if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" else v
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


class _LoaderBatches(ms.dataset.Sampler):
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
            order = np.random.permutation(self.dataset_size).tolist()
        else:
            order = list(range(self.dataset_size))
        stop = len(order) - len(order) % self.batch_size if self.drop_last else len(order)
        return iter([order[i:i + self.batch_size] for i in range(0, stop, self.batch_size)])


class _Subset:
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


def _random_split(dataset, lengths):
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
    order = np.random.permutation(total).tolist()
    parts, start = [], 0
    for n in lengths:
        parts.append(_Subset(dataset, order[start:start + n]))
        start += n
    return parts


class _ConcatDataset:
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


def _default_collate(batch):
    """torch's default_collate (transpile MS212): samples stacked along a new first axis,
    tuples and dicts collated field by field; numbers become a tensor (floats float64, as
    torch makes them)."""
    first = batch[0]
    if isinstance(first, ms.Tensor):
        return ms.ops.stack(list(batch))
    if isinstance(first, np.ndarray):
        return ms.Tensor(np.stack(batch))
    if isinstance(first, dict):
        return {key: _default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)) and not isinstance(first, str):
        return [_default_collate(list(field)) for field in zip(*batch)]
    if isinstance(first, (bool, int, float)):
        return ms.Tensor(np.asarray(batch))
    return batch


class _BatchSampler:
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


class _WeightedSampler:
    """torch's WeightedRandomSampler (transpile MS212): num_samples indices drawn with the
    given weights (with replacement unless told), new ones at each pass, from numpy's
    generator (mindspore.set_seed seeds it; never torch's draws)."""

    def __init__(self, weights, num_samples, replacement=True):
        weights = np.asarray([float(w) for w in weights], dtype=np.float64)
        self.p = weights / weights.sum()
        self.num_samples = num_samples
        self.replacement = replacement

    def __iter__(self):
        drawn = np.random.choice(len(self.p), self.num_samples, replace=self.replacement, p=self.p)
        return iter(drawn.tolist())

    def __len__(self):
        return self.num_samples
