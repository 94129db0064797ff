"""rewrites/tables/reexports.toml (tests/differential/reexports.py) is what the installed torch
re-exports, and a re-exported spelling converts as the public name in every import form."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from transpile import convert_code
from transpile.rewrites.table_calls import tables

from . import reexports

ROOT = Path(__file__).resolve().parents[2]
TABLE = "reexports.toml"  # the table this module tests (test_generated_forms runs its module-path cases)


def test_reexports_file_is_what_torch_reexports() -> None:
    # a fresh interpreter: which torch modules are loaded must not depend on the tests before
    measured = subprocess.run([sys.executable, "-c", "from tests.differential import reexports as r; "
                               "print(r.text(r.measure()), end='')"],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert reexports.REEXPORTS_FILE.name == TABLE
    assert reexports.REEXPORTS_FILE.read_text(encoding="utf-8") == measured, \
        "stale: run `python -m tests.differential.reexports` (or make docs)"


def test_the_brief_spellings_are_reexports() -> None:
    reexported = tables().reexports
    for private, public in [("torch.nn.modules.loss.L1Loss", "torch.nn.L1Loss"),
                            ("torch.nn.modules.distance.PairwiseDistance", "torch.nn.PairwiseDistance"),
                            ("torch.nn.modules.batchnorm.SyncBatchNorm", "torch.nn.SyncBatchNorm"),
                            ("torch.nn.modules.GELU", "torch.nn.GELU"),
                            ("torch.functional.unique", "torch.unique"),
                            ("torch.utils.data.dataloader.default_collate", "torch.utils.data.default_collate"),
                            ("torch.utils.data._utils.collate.default_collate", "torch.utils.data.default_collate")]:
        assert reexported[private] == public
        assert tables().lookup(private) is tables().lookup(public) is not None
    # only what the module holds: loss.py imports no Conv2d
    assert tables().lookup("torch.nn.modules.loss.Conv2d") is None


def _converted(body: str) -> str:
    return convert_code("import torch\n" + body).code


def test_every_import_form_converts_as_the_public_name() -> None:
    public = _converted("def f(a, b):\n    return torch.nn.L1Loss()(a, b)\n")
    forms = ["from torch.nn.modules.loss import L1Loss\ndef f(a, b):\n    return L1Loss()(a, b)\n",
             "import torch.nn.modules.loss as L\ndef f(a, b):\n    return L.L1Loss()(a, b)\n",
             "def f(a, b):\n    return torch.nn.modules.loss.L1Loss()(a, b)\n"]
    expected = public.split("def f", 1)[1]
    for form in forms:
        out = _converted(form)
        assert "torch" not in out and out.split("def f", 1)[1] == expected, out
