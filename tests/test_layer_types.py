"""The type index read as torch layers (rewrites/analysis/layer_types.py) and MS204's use of
it: which MindSpore name a layer attribute takes where the layer is built out of sight,
when only the running code can tell, and the warning where no lookup can stand for it."""
from __future__ import annotations

import textwrap

import pytest

from transpile import convert_code
from transpile.engine.package_index import PackageIndex
from transpile.report import unconverted_api
from transpile.rewrites.analysis.layer_types import RUN_TIME, LayerTypes
from transpile.rewrites.table_calls import tables

SOURCE = textwrap.dedent("""\
    from collections import OrderedDict

    import torch.nn as nn


    def either(flag, dim):
        if flag:
            return nn.BatchNorm1d(dim)
        return nn.LayerNorm(dim)


    class Net(nn.Module):
        def __init__(self, dim, flag):
            super().__init__()
            convs = [nn.Conv2d(dim, dim, 1) for _ in range(2)]
            self.stem = nn.Sequential(nn.Embedding(4, dim), *convs, nn.BatchNorm2d(dim), nn.LayerNorm(dim))
            self.named = nn.Sequential(OrderedDict([("norm", nn.BatchNorm2d(dim)), ("proj", nn.Linear(dim, dim))]))
            self.blocks = nn.ModuleList()
            for _ in range(3):
                self.blocks.append(nn.GroupNorm(1, dim))
            self.heads = nn.ModuleDict({"cls": nn.Linear(dim, 2)})
            self.heads["emb"] = nn.Embedding(3, dim)
            self.norm = either(flag, dim)
            self.same = nn.LayerNorm(dim) if flag else nn.GroupNorm(1, dim)
            self.torch_kept = nn.Embedding(3, dim, scale_grad_by_freq=True)
""")


@pytest.fixture(scope="module")
def types():
    return LayerTypes(PackageIndex.of_text(SOURCE).types("__main__"), tables())


@pytest.mark.parametrize("path, attr, expected", [
    ((("get", "stem"), ("item", ("int", 0))), "weight", "embedding_table"),
    ((("get", "stem"), ("item", ("int", -1))), "weight", "gamma"),  # after a starred list: known from the end
    ((("get", "stem"), ("item", ("int", -2))), "bias", "beta"),
    ((("get", "stem"), ("item", ("int", 1))), "weight", RUN_TIME),  # a Conv2d, or the BatchNorm2d if convs is empty
    ((("get", "named"), ("get", "norm")), "weight", "gamma"),
    ((("get", "named"), ("get", "proj")), "weight", None),
    ((("get", "blocks"), ("item", ("int", -1))), "weight", "gamma"),
    ((("get", "blocks"), ("item", ("slice",)), ("item", ("int", 0))), "bias", "beta"),
    ((("get", "heads"), ("item", ("str", "emb"))), "weight", "embedding_table"),
    ((("get", "heads"), ("get", "cls")), "weight", None),
    ((("get", "norm"),), "weight", "gamma"),  # BatchNorm1d or LayerNorm: both gamma
    ((("get", "norm"),), "running_mean", RUN_TIME),  # moving_mean, or LayerNorm's own (none)
    ((("get", "same"),), "bias", "beta"),
    ((("get", "torch_kept"),), "weight", None),  # stays torch's Embedding
])
def test_layer_attribute_names(types, path, attr, expected):
    shape: tuple = ("self", "__main__.Net")
    for step in path:
        shape = ("get", shape, step[1]) if step[0] == "get" else ("item", shape, step[1])
    assert types.rename(types.value(shape), attr) == expected


def test_a_parameter_deleted_on_a_layer_of_unknown_class_is_a_counted_warning():
    """A write on a layer whose class only the running code knows becomes a call; a
    ``del`` cannot: a warning, marked on the line, counted unconverted, listed by the report."""
    source = SOURCE + textwrap.dedent("""\


        class Reset(Net):
            def reset(self):
                self.stem[1].weight = self.stem[0].weight
                for m in self.modules():
                    del m.weight
    """)
    result = convert_code(source)
    warnings = [d for d in result.diagnostics if d.code == "MS204" and d.severity.value == "warning"]
    assert len(warnings) == 1 and warnings[0].line == source.splitlines().index("            del m.weight") + 1
    assert unconverted_api(warnings[0]) == "torch.nn.Module.weight"
    assert "# transpile: MS204 torch.nn.Module.weight" in result.code
    assert result.stats.unconverted >= 1
    assert "_torch_set_layer_attribute(" in result.code


def test_a_mindspore_layer_is_read_with_the_torch_layer_s_names():
    """Code converted already (a class converted by hand beside torch code) builds
    MindSpore's layers; the torch rest reads them by torch's names."""
    from transpile.rewrites.analysis.layer_types import converted_layer_entry
    from transpile.rewrites.table_calls import tables

    assert converted_layer_entry(tables(), "mindspore.nn.Embedding").source == "torch.nn.Embedding"
    assert converted_layer_entry(tables(), "mindspore.nn.Dense").source == "torch.nn.Linear"
    assert converted_layer_entry(tables(), "mindspore.ops.add") is None
