"""The graph-mode lint names each finding at its line, in construct only."""
from __future__ import annotations

from pathlib import Path

from transpile import convert_code

FIXTURE = Path(__file__).parent / "fixtures" / "graph-lint" / "findings.py"


def test_every_finding_at_its_line() -> None:
    result = convert_code(FIXTURE.read_text(), filename="findings.py")
    found = sorted((d.line, d.code) for d in result.diagnostics if d.code.startswith("MS5"))
    assert found == [
        (19, "MS501"), (20, "MS502"), (21, "MS503"), (22, "MS503"), (25, "MS504"),
        (26, "MS507"), (27, "MS505"), (30, "MS506"),
    ]
    assert all("GRAPH_MODE" in d.message for d in result.diagnostics if d.code.startswith("MS5"))


def test_init_and_plain_functions_are_not_linted() -> None:
    src = (
        "import numpy as np\nimport torch.nn as nn\n"
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.t = np.ones(3)\n        print('built')\n"
        "def helper(x):\n    return np.exp(x)\n"
    )
    assert not [d for d in convert_code(src).diagnostics if d.code.startswith("MS5")]
