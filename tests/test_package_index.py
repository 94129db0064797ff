"""Names a file gets through ``from <sibling> import *`` convert as if imported there."""
from __future__ import annotations

import textwrap
from pathlib import Path

from transpile import convert_paths
from transpile.package_index import PackageIndex


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


def test_single_file_without_the_tree_is_left(tmp_path):
    """Alone, the file cannot know what the star import brings: nothing is guessed."""
    root = _tree(tmp_path, FILES) / "pkg"
    report = convert_paths([root / "sub" / "absolute.py"], write=False, cache=False, jobs=1)
    assert report.files[0].status == "unchanged"
