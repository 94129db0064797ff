"""Names a file gets through ``from <sibling> import *`` convert as if imported there."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from transpile import convert_paths
from transpile.engine.package_index import PackageIndex


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


FILES = {
    "pkg/__init__.py": "",
    "pkg/acts.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import numpy as _np
    """,
    "pkg/again.py": "from .acts import *\n",  # transitive
    "pkg/only.py": """\
        import torch.nn as nn
        import torch.nn.functional as F
        __all__ = ["F"]
    """,
    "pkg/sub/relative.py": """\
        from ..again import *

        LAYERS = dict(relu=nn.ReLU, tanh=nn.Tanh)

        def act(x):
            return F.relu(x)
    """,
    "pkg/sub/absolute.py": """\
        from pkg.acts import *

        def seq():
            return nn.Sequential(nn.Linear(2, 3))
    """,
    "pkg/sub/restricted.py": """\
        from pkg.only import *

        def act(x):
            return F.relu(x)
    """,
}


def test_index_gives_star_imported_bindings(tmp_path):
    root = _tree(tmp_path, FILES) / "pkg"
    index = PackageIndex(root, sorted(root.rglob("*.py")))
    assert index.inherited(root / "sub" / "relative.py") == {
        "F": "torch.nn.functional", "nn": "torch.nn", "torch": "torch"}
    assert index.inherited(root / "sub" / "absolute.py")["nn"] == "torch.nn"
    # __all__ limits what a star import brings; private names never come
    assert index.inherited(root / "sub" / "restricted.py") == {"F": "torch.nn.functional"}
    assert "_np" not in index.inherited(root / "again.py")
    assert index.inherited(root / "acts.py") == {}


def test_index_gives_names_other_files_import_by_name(tmp_path):
    root = _tree(tmp_path, {
        "pkg/__init__.py": "from .utils import Tensor\n",
        "pkg/utils.py": "import torch\nfrom torch import Tensor\nfrom torch.hub import load_state_dict_from_url\n",
        "pkg/model.py": "from .utils import load_state_dict_from_url\nfrom . import utils\nx = utils.torch.zeros(1)\n",
        "pkg/other.py": "from pkg.model import x\nimport torch.nn as nn\n",
    }) / "pkg"
    index = PackageIndex(root, sorted(root.rglob("*.py")))
    assert index.facts(root / "utils.py").imported_elsewhere == ("Tensor", "load_state_dict_from_url", "torch")
    assert index.facts(root / "model.py").imported_elsewhere == ("x",)
    assert index.facts(root / "__init__.py").imported_elsewhere == ()  # from . import utils: a submodule
    assert index.facts(root / "other.py").imported_elsewhere == ()  # nn comes from torch, not from a tree file


def test_star_imported_torch_names_convert(tmp_path):
    root = _tree(tmp_path, FILES) / "pkg"
    report = convert_paths([root], output=tmp_path / "out", jobs=1, cache=False)
    assert report.count("failed") == 0
    relative = (tmp_path / "out" / "sub" / "relative.py").read_text()
    assert "nn.ReLU" in relative and "nn.Tanh" in relative  # same names in mindspore.nn, as values
    assert "ops.relu" in relative or "F.relu(input=x)" in relative
    absolute = (tmp_path / "out" / "sub" / "absolute.py").read_text()
    assert "nn.SequentialCell" in absolute and "nn.Dense" in absolute
    assert "import torch" not in absolute


def test_imports_star_importers_use_are_kept_converted_where_they_are_bound(tmp_path):
    """``acts.py`` uses none of its imports: modules star-importing it use ``nn`` and ``F``.
    Dropping them (as unused) left those modules without the names."""
    root = _tree(tmp_path, FILES) / "pkg"
    index = PackageIndex(root, sorted(root.rglob("*.py")))
    assert {"nn", "F"} <= set(index.facts(root / "acts.py").star_used)
    assert "nn" not in index.facts(root / "only.py").star_used  # __all__ = ["F"]: restricted.py uses F
    report = convert_paths([root], output=tmp_path / "out", jobs=1, cache=False)
    assert report.count("failed") == 0
    acts = (tmp_path / "out" / "acts.py").read_text()
    assert "import mindspore.nn as nn" in acts and "torch" not in acts  # no star importer uses torch itself


@pytest.mark.framework
def test_star_imported_names_run_after_conversion(tmp_path):
    import subprocess
    import sys

    root = _tree(tmp_path / "src", FILES) / "pkg"
    out = tmp_path / "out" / "pkg"
    convert_paths([root], output=out, jobs=1, cache=False)
    script = ("import numpy as np, mindspore as ms\n"
              "from pkg.sub.relative import act, LAYERS\n"
              "from pkg.sub.absolute import seq\n"
              "x = ms.Tensor(np.array([[-1.0, 2.0]], np.float32))\n"
              "print(act(x).asnumpy().tolist(), seq()(x).shape, sorted(LAYERS))\n")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", script], cwd=out.parent,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[[0.0, 2.0]] (1, 3) ['relu', 'tanh']" in proc.stdout


def test_single_file_without_the_tree_is_left(tmp_path):
    """Alone, the file cannot know what the star import brings: nothing is guessed."""
    root = _tree(tmp_path, FILES) / "pkg"
    report = convert_paths([root / "sub" / "absolute.py"], write=False, cache=False, jobs=1)
    assert report.files[0].status == "unchanged"


# -- the package-wide class index: Modules defined in another file of the tree -----------

MLP = """\
    import torch
    import torch.nn as nn


    class Mlp(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)

        def forward(self, x):
            return torch.tanh(self.fc(x))


    class Plain:
        def forward(self, x):
            return x
"""

CLASS_TREE = {
    "pkg/__init__.py": "",
    "pkg/layers/__init__.py": "from .mlp import Mlp, Plain\n",  # re-exports
    "pkg/layers/mlp.py": MLP,
    "pkg/layers/glu.py": """\
        from .mlp import Mlp


        class GluMlp(Mlp):
            def forward(self, x):
                y = super().forward(x)
                return y * 2 + x
    """,
    "pkg/models/__init__.py": "",
    "pkg/models/wide.py": """\
        from pkg.layers import Mlp


        class Wide(Mlp):
            def __init__(self, d):
                super().__init__(d)
                self.extra = Mlp(d)

            def forward(self, x):
                return self.extra.forward(super().forward(x)) - x
    """,
    "pkg/models/gated.py": """\
        from ..layers.glu import GluMlp


        class Gated(GluMlp):
            def forward(self, x):
                return super().forward(x) * 0.5


        def build(d):
            net = Gated(d)
            net.eval()
            return net
    """,
    "pkg/models/spelled.py": """\
        from pkg import layers
        from pkg.layers import mlp as m


        class ViaModule(layers.Mlp):
            def forward(self, x):
                return layers.Mlp.forward(self, x)


        class NotAModule(m.Plain):
            def forward(self, x):
                return x
    """,
}


def _converted(tmp_path, files=CLASS_TREE, **kwargs):
    root = _tree(tmp_path / "src", files) / "pkg"
    out = tmp_path / "out" / "pkg"
    report = convert_paths([root], output=out, jobs=1, **kwargs)
    return root, out, report


def test_index_resolves_relative_absolute_and_reexported_bases(tmp_path):
    root = _tree(tmp_path, CLASS_TREE) / "pkg"
    index = PackageIndex(root, sorted(root.rglob("*.py")))
    wide = index.facts(root / "models" / "wide.py")
    assert wide.module == "pkg.models.wide"
    assert wide.names["Mlp"] == "pkg.layers.mlp.Mlp"  # through pkg/layers/__init__.py
    assert wide.class_bases["pkg.layers.mlp.Mlp"] == ("torch.nn.Module",)
    gated = index.facts(root / "models" / "gated.py")
    # two levels, three files: Gated -> GluMlp (relative ..layers.glu) -> Mlp (relative .mlp)
    assert gated.class_bases["pkg.models.gated.Gated"] == ("pkg.layers.glu.GluMlp",)
    assert gated.class_bases["pkg.layers.glu.GluMlp"] == ("pkg.layers.mlp.Mlp",)
    spelled = index.facts(root / "models" / "spelled.py")
    assert spelled.names["layers.Mlp"] == "pkg.layers.mlp.Mlp" and spelled.names["m.Plain"] == "pkg.layers.mlp.Plain"
    assert index.facts(root / "layers" / "__init__.py").module == "pkg.layers"


def test_subclasses_of_a_module_in_another_file_are_cells(tmp_path):
    _, out, report = _converted(tmp_path, cache=False)
    assert report.count("failed") == 0, [d.format() for d in report.diagnostics]
    for rel, cls in (("layers/glu.py", "GluMlp"), ("models/wide.py", "Wide"), ("models/gated.py", "Gated"),
                     ("models/spelled.py", "ViaModule")):
        code = (out / rel).read_text()
        body = code.split(f"class {cls}(", 1)[1].split("\nclass ", 1)[0]
        assert "def construct(self, x)" in body and "def forward" not in body, code
        assert "construct = forward" not in body, code  # the base's origin is known: no alias
    assert "super().construct(x)" in (out / "layers" / "glu.py").read_text()
    assert "self.extra.construct(" in (out / "models" / "wide.py").read_text()  # self.extra = Mlp(d): a Cell
    assert "layers.Mlp.construct(self, x)" in (out / "models" / "spelled.py").read_text()
    assert "net.set_train(False)" in (out / "models" / "gated.py").read_text()  # net = Gated(d): a Cell
    plain = (out / "models" / "spelled.py").read_text().split("class NotAModule(", 1)[1]
    assert "def forward(self, x)" in plain and "construct" not in plain  # known not to be a Module


_RUN_TREE = """\
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
framework, weights = sys.argv[2], sys.argv[3]
from pkg.layers.glu import GluMlp
from pkg.models.wide import Wide
from pkg.models.gated import Gated
from pkg.models.spelled import ViaModule
classes = {"GluMlp": GluMlp, "Wide": Wide, "Gated": Gated, "ViaModule": ViaModule}
x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
if framework == "torch":
    import torch
    torch.manual_seed(0)
    saved = {}
    for name, cls in classes.items():
        net = cls(4)
        saved.update({f"{name}/{k}": v.numpy() for k, v in net.state_dict().items()})
        saved[f"{name}:y"] = net(torch.tensor(x)).detach().numpy()
    np.savez(weights, **saved)
else:
    import mindspore as ms
    data = np.load(weights)
    for name, cls in classes.items():
        net = cls(4)
        params = dict(net.parameters_and_names())
        keys = sorted(k.split("/", 1)[1] for k in data.files if k.startswith(name + "/"))
        assert sorted(params) == keys, (name, sorted(params), keys)
        for k in keys:
            params[k].set_data(ms.Tensor(data[f"{name}/{k}"]))
        np.testing.assert_allclose(net(ms.Tensor(x)).asnumpy(), data[f"{name}:y"], rtol=1e-5, atol=1e-6)
    print("same outputs")
"""


@pytest.mark.framework
@pytest.mark.slow
def test_converted_tree_runs_like_torch(tmp_path):
    """Each subclass, built from the converted tree with torch's weights, gives torch's output."""
    import subprocess
    import sys

    root, out, report = _converted(tmp_path, cache=False)
    assert report.count("failed") == 0
    script, weights = tmp_path / "run_tree.py", tmp_path / "weights.npz"
    script.write_text(_RUN_TREE)
    for tree, framework in ((root.parent, "torch"), (out.parent, "mindspore")):
        proc = subprocess.run([sys.executable, str(script), str(tree), framework, str(weights)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert "same outputs" in proc.stdout


def test_a_sibling_change_reaches_the_file_through_the_cache(tmp_path):
    """The cache key holds what the tree hands a file: Mlp no longer a Module changes
    glu.py's key (and its output), an unrelated sibling does not."""
    from transpile.io.cache import cache_key

    root = _tree(tmp_path / "src", CLASS_TREE) / "pkg"
    glu = root / "layers" / "glu.py"

    def key():
        index = PackageIndex(root, sorted(root.rglob("*.py")))
        return cache_key(glu.read_text(), str(glu), index.facts(glu))

    before = key()
    (root / "models" / "unrelated.py").write_text("class Other:\n    pass\n")
    assert key() == before
    cache_dir = tmp_path / "cache"
    convert_paths([root], output=tmp_path / "out1", jobs=1, cache_dir=cache_dir)
    assert "def construct" in (tmp_path / "out1" / "layers" / "glu.py").read_text()
    mlp = root / "layers" / "mlp.py"
    mlp.write_text(mlp.read_text().replace("class Mlp(nn.Module):", "class Mlp(Plain):"))
    assert key() != before
    convert_paths([root], output=tmp_path / "out2", jobs=1, cache_dir=cache_dir)
    assert "def forward" in (tmp_path / "out2" / "layers" / "glu.py").read_text()


# -- torch-based packages imported from outside the converted tree ------------------------

OUTSIDE_TREE = {
    "timm/__init__.py": "",
    "timm/layers/__init__.py": "from .mlp import Mlp\n",
    "timm/layers/mlp.py": MLP,
    "timm/models/__init__.py": "",
    "timm/models/a.py": """\
        import torchvision.models
        from timm.layers import Mlp


        class A(Mlp):
            def forward(self, x):
                return x
    """,
    "timm/models/b.py": """\
        from timm.layers import Mlp
        from timm.layers.mlp import Plain


        class B(Mlp):
            def forward(self, x):
                return x
    """,
    "timm/models/c.py": """\
        import torch

        try:  # optional: the file runs without it
            from apex import amp
        except ImportError:
            amp = None
    """,
}


def _outside(report):
    return {pkg: sorted(Path(d.filename).name for d in found) for pkg, found in report.outside_packages.items()}


def test_packages_inside_the_tree_are_not_outside(tmp_path):
    root = _tree(tmp_path, OUTSIDE_TREE) / "timm"
    report = convert_paths([root], write=False, jobs=1, cache=False)
    assert _outside(report) == {"torchvision": ["a.py"]}
    a = next(f for f in report.files if f.source.name == "a.py").result
    assert "def construct" in a.code and "construct = forward" not in a.code


def test_outside_package_reported_once_per_file_and_counted(tmp_path, capsys):
    from transpile.cli.main import main

    models = _tree(tmp_path, OUTSIDE_TREE) / "timm" / "models"
    report = convert_paths([models], write=False, jobs=1, cache=False)
    assert _outside(report) == {"timm": ["a.py", "b.py"], "torchvision": ["a.py"]}
    b = next(f for f in report.files if f.source.name == "b.py").result
    # nothing torch left in b.py, yet it cannot run: one unconverted use, not 100%
    assert b.stats.unconverted == 1 and [d.code for d in b.diagnostics] == ["MS902"]
    assert report.unconverted_uses == 3 and report.conversion_rate < 1
    assert "construct = forward" in b.code  # timm's Mlp: origin unknown without timm/layers
    main(["convert", str(models), "--check", "--no-cache", "-j", "1"])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "MS902" in ln]
    assert len(lines) == 2, lines  # one line per package for the run
    assert any("2 files import timm" in ln for ln in lines)
    main(["convert", str(models), "--check", "--no-cache", "-j", "1", "--format", "json"])
    payload = json.loads(capsys.readouterr().out)
    assert {p: [Path(f).name for f in files] for p, files in payload["outside_packages"].items()} == {
        "timm": ["a.py", "b.py"], "torchvision": ["a.py"]}


def test_installed_distribution_requiring_torch_is_torch_based(monkeypatch):
    import importlib.metadata

    from transpile.rewrites import outside_packages

    requirements = {"fancy-lib": ["numpy", "torch>=2.0"], "maybe-lib": ['torch ; extra == "torch"']}
    monkeypatch.setattr(outside_packages, "_distributions", lambda: {"fancylib": ["fancy-lib"], "maybelib": ["maybe-lib"]})
    monkeypatch.setattr(importlib.metadata, "requires", lambda dist: requirements[dist])
    outside_packages.builds_on_torch.cache_clear()
    try:
        assert outside_packages.builds_on_torch("fancylib")
        assert not outside_packages.builds_on_torch("maybelib")  # torch only as an extra
        assert outside_packages.builds_on_torch("timm")  # the table
        assert not outside_packages.builds_on_torch("torch") and not outside_packages.builds_on_torch("os")
    finally:
        outside_packages.builds_on_torch.cache_clear()


# -- the type index: what attributes hold, across the tree ----------------------------------

TYPED_TREE = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": """\
        import torch.nn as nn

        NORMS = dict(bn=nn.BatchNorm2d)


        def make_norm(dim):
            return nn.LayerNorm(dim)


        def unused(dim):
            return nn.Linear(dim, dim)
    """,
    "pkg/blocks.py": """\
        import torch.nn as nn
        from .helpers import make_norm


        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = make_norm(dim)
                layers = []
                for _ in range(2):
                    layers.append(nn.Linear(dim, dim))
                self.body = nn.Sequential(*layers, nn.ReLU())
                for i in range(3):
                    setattr(self, f"extra{i}", nn.Linear(dim, dim))
                self.add_module("named", nn.Embedding(3, dim))
    """,
    "pkg/model.py": """\
        import torch.nn as nn
        from pkg.blocks import Block


        class Model(Block):
            def forward(self, x):
                return self.norm.weight
    """,
}


def test_type_index_hands_a_file_what_its_classes_reach(tmp_path):
    """Plain data (it crosses processes and goes into the cache key): a class of another
    file with its attributes, the helper function it calls (its return only), names as
    qualified names; a function nothing reaches is left out."""
    import pickle

    from transpile.engine.type_index import Binding

    root = _tree(tmp_path, TYPED_TREE) / "pkg"
    index = PackageIndex(root, sorted(root.rglob("*.py")))
    types = index.facts(root / "model.py").types
    assert types.module == "pkg.model"
    assert sorted(types.classes) == ["pkg.blocks.Block", "pkg.model.Model"]
    assert types.classes["pkg.model.Model"].bases == ("pkg.blocks.Block",)
    block = types.classes["pkg.blocks.Block"]
    assert block.attributes["norm"].value == ("call", ("ref", "pkg.helpers.make_norm"), (("?",),), ())
    assert block.attributes["body"].value[1] == ("ref", "torch.nn.Sequential")
    assert ("setattr", (("?",), ("call", ("ref", "torch.nn.Linear"), (("?",), ("?",)), ()))) in block.setters
    assert ("add_module", (("str", "named"), ("call", ("ref", "torch.nn.Embedding"), (("int", 3), ("?",)), ()))) \
        in block.setters
    assert types.functions["pkg.helpers.make_norm"].returns == ("call", ("ref", "torch.nn.LayerNorm"), (("?",),), ())
    assert "pkg.helpers.unused" not in types.functions
    init = types.functions["pkg.blocks.Block.__init__"]  # the local the Sequential is built from
    assert init.locals["layers"] == Binding(("seq", (), False), (
        ("append", (("call", ("ref", "torch.nn.Linear"), (("?",), ("?",)), ()),)),))
    assert pickle.loads(pickle.dumps(types)) == types
    json.loads(index.facts(root / "model.py").fingerprint())


def test_type_index_change_in_another_file_changes_the_cache_key(tmp_path):
    """model.py's key holds what Block's attributes hold (blocks.py) and what make_norm
    returns (helpers.py): changing either changes it; a function it never reaches does not."""
    from transpile.io.cache import cache_key

    root = _tree(tmp_path, TYPED_TREE) / "pkg"
    model = root / "model.py"

    def key():
        index = PackageIndex(root, sorted(root.rglob("*.py")))
        return cache_key(model.read_text(), str(model), index.facts(model))

    before = key()
    helpers = root / "helpers.py"
    helpers.write_text(helpers.read_text().replace("nn.Linear(dim, dim)", "nn.Identity()"))
    assert key() == before
    helpers.write_text(helpers.read_text().replace("nn.LayerNorm(dim)", "nn.BatchNorm2d(dim)"))
    changed = key()
    assert changed != before
    out = tmp_path / "out"
    convert_paths([root], output=out, jobs=1, cache=False)
    assert "self.norm.gamma" in (out / "model.py").read_text()


def test_type_index_of_one_file():
    """A file converted on its own is indexed alone, under the module name ``__main__``."""
    text = textwrap.dedent("""\
        import torch.nn as nn

        net = nn.ModuleDict({"a": nn.Linear(1, 1)})
    """)
    types = PackageIndex.of_text(text).types("__main__")
    assert types.functions["__main__"].locals["net"].value == (
        "call", ("ref", "torch.nn.ModuleDict"),
        (("map", ((("str", "a"), ("call", ("ref", "torch.nn.Linear"), (("int", 1), ("int", 1)), ())),), False),), ())



def test_a_tree_run_parses_each_file_once_with_cpython_and_keeps_the_nesting_limit(tmp_path, monkeypatch):
    """The index's parse measures each file; the pipeline does not parse it again, and a
    file past the nesting limit still fails as it does converted alone."""
    from transpile import convert_code
    from transpile.engine import pipeline

    deep = "import torch\nx = " + " + ".join(["torch.zeros(1)"] * (pipeline.MAX_NESTING + 50)) + "\n"
    root = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "import torch\ny = torch.zeros(2)\n",
                            "pkg/deep.py": deep}) / "pkg"
    alone = convert_code(deep)
    assert alone.failed
    parsed = []
    real = pipeline._parse
    monkeypatch.setattr(pipeline, "_parse", lambda source, filename: parsed.append(filename) or real(source, filename))
    report = convert_paths([root], output=tmp_path / "out", jobs=1, cache=False)
    by_name = {f.source.name: f for f in report.files}
    assert by_name["a.py"].status == "converted"
    assert by_name["deep.py"].status == "failed"
    assert [d.message for d in by_name["deep.py"].result.diagnostics] == [d.message for d in alone.diagnostics]
    assert all(not name.endswith("a.py") for name in parsed)  # measured by the index's parse


def test_the_scan_in_worker_processes_gives_the_same_facts(tmp_path):
    # enough files that a run with two jobs scans the tree in its workers
    files = {**FILES, **{f"pkg/gen/m{i}.py": f"from ..acts import *\nclass Block{i}(nn.Module):\n    pass\n"
                         for i in range(24)}}
    root = _tree(tmp_path, files)
    from transpile.io.files import _Workers

    paths = sorted(root.rglob("*.py"))
    here = PackageIndex(root, paths)
    with _Workers(2) as workers:
        assert len(paths) >= workers.MIN_SCANS_PER_WORKER * 2
        there = PackageIndex(root, paths, scan_all=workers.scan_all)
        assert workers._pool is not None  # the scan did run in the workers
    assert [here.facts(p).fingerprint() for p in paths] == [there.facts(p).fingerprint() for p in paths]
    assert [here.facts(p).measured for p in paths] == [there.facts(p).measured for p in paths]
