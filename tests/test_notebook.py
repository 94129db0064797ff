"""Notebooks: code cells converted as one module, everything else kept."""
from __future__ import annotations

import json

from transpile import convert_notebook


def notebook(*cells):
    return json.dumps({
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True),
             **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for kind, src in cells
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    })


def test_cells_share_imports_and_keep_magics_and_markdown() -> None:
    nb = notebook(
        ("code", "%matplotlib inline\nimport torch\nimport torch.nn as nn"),
        ("markdown", "# A torch model\nnn.Linear stays in prose"),
        ("code", "fc = nn.Linear(4, 2)\n!ls"),
    )
    result = convert_notebook(nb, filename="m.ipynb")
    assert result.changed and not result.failed
    out = json.loads(result.code)
    assert len(out["cells"]) == 3
    first, prose, second = ("".join(c["source"]) for c in out["cells"])
    assert first.startswith("%matplotlib inline\n") and "import mindspore.nn as nn" in first
    assert "import torch\n" not in first
    assert prose == "# A torch model\nnn.Linear stays in prose"
    assert second == "fc = nn.Dense(in_channels=4, out_channels=2, has_bias=True)\n!ls"
    assert out["metadata"] == {"kernelspec": {"name": "python3"}}


def test_diagnostics_name_the_cell() -> None:
    nb = notebook(("code", "import torch"), ("code", "x = 1\ny = torch.no_such(1)"))
    result = convert_notebook(nb, filename="m.ipynb")
    (diag,) = [d for d in result.diagnostics if d.code == "MS201"]
    assert diag.filename == "m.ipynb[cell 2]" and diag.line == 2


def test_not_a_notebook() -> None:
    result = convert_notebook("{not json", filename="bad.ipynb")
    assert result.failed and "not a notebook" in result.diagnostics[0].message
