"""Differential tests for containers of layers (MS102): a torch ModuleList holding None
(an absent optional layer, x-transformers' norms) converts to the emitted CellList that
keeps None entries; a ModuleDict filled by key with Sequentials (effdet) to the emitted
CellDict that takes them; weights copied by name, outputs compared in eval mode."""
from __future__ import annotations

import pytest

from .layer_harness import LayerCase, convert_cases, randn, run_case

PRELUDE = (
    "class _Optional(nn.Module):\n"
    "    def __init__(self, pre_norm, skips):\n"
    "        super().__init__()\n"
    "        pre = nn.LayerNorm(4) if pre_norm else None\n"
    "        post = None\n"
    "        self.norms = nn.ModuleList([pre, post, nn.Linear(4, 4)])\n"
    "        self.skips = nn.ModuleList([])\n"
    "        for s in skips:\n"
    "            combine = None\n"
    "            if s:\n"
    "                combine = nn.Linear(4, 4)\n"
    "            self.skips.append(combine)\n"
    "        self.blocks = nn.ModuleList([])\n"
    "        self.blocks.append(nn.ModuleList([self.norms, nn.Linear(4, 4)]))\n"
    "\n"
    "    def forward(self, x):\n"
    "        for n in self.norms:\n"
    "            if n is not None:\n"
    "                x = n(x)\n"
    "        for c in self.skips:\n"
    "            if c is not None:\n"
    "                x = c(x)\n"
    "        norms, dense = self.blocks[0]\n"
    "        present = sum(1 for n in self.norms[1:] if n is not None)\n"
    "        return dense(x) * (present + (self.norms[0] is None))\n"
)

CASES = [
    LayerCase(f"_Optional({pre}, {skips})", (randn(2, 4),), prelude=PRELUDE if i == 0 else "",
              primary="torch.nn.ModuleList")
    for i, (pre, skips) in enumerate([(True, (False, True)), (False, (True, False, True)), (True, ())])
]


# a ModuleDict filled by key with containers (effdet's ResampleFeatureMap, a Sequential):
# the emitted CellDict subclass takes them, weights copied by their paths
FILLED_PRELUDE = (
    "class _Resample(nn.Sequential):\n"
    "    def __init__(self, n):\n"
    "        super().__init__()\n"
    "        self.add_module('proj', nn.Linear(4, n))\n"
    "        self.add_module('act', nn.ReLU())\n"
    "\n"
    "class _Filled(nn.Module):\n"
    "    def __init__(self, levels):\n"
    "        super().__init__()\n"
    "        self.resample = nn.ModuleDict()\n"
    "        for level in range(levels):\n"
    "            self.resample[str(level)] = _Resample(4 + level)\n"
    "        self.heads = nn.ModuleDict()\n"
    "        self.heads['sum'] = nn.Sequential(nn.Linear(4, 2))\n"
    "\n"
    "    def forward(self, x):\n"
    "        outs = [self.resample[str(i)](x).sum(-1, keepdim=True) for i in range(len(self.resample))]\n"
    "        return self.heads['sum'](x) + torch.cat(outs, -1).sum(-1, keepdim=True)\n"
)
# a Sequential built anew in each pass of a loop and filled by add_module (effdet's
# after_combine per FPN node): each refreshed where it is filled, none runs empty
PER_LOOP_PRELUDE = (
    "class _PerNode(nn.Module):\n"
    "    def __init__(self, nodes, pre_act):\n"
    "        super().__init__()\n"
    "        self.nodes = nn.ModuleList()\n"
    "        for i in range(nodes):\n"
    "            after = nn.Sequential()\n"
    "            if pre_act:\n"
    "                after.add_module('act', nn.Tanh())\n"
    "            after.add_module('proj', nn.Linear(4, 4))\n"
    "            self.nodes.append(after)\n"
    "\n"
    "    def forward(self, x):\n"
    "        for node in self.nodes:\n"
    "            x = node(x)\n"
    "        return x\n"
)
CASES += [
    LayerCase(f"_PerNode({nodes}, {pre_act})", (randn(2, 4),), prelude=PER_LOOP_PRELUDE if i == 0 else "",
              primary="torch.nn.Sequential")
    for i, (nodes, pre_act) in enumerate(((3, True), (2, False)))
]
CASES += [
    LayerCase(f"_Filled({levels})", (randn(2, 4),), prelude=FILLED_PRELUDE if i == 0 else "",
              primary="torch.nn.ModuleDict")
    for i, levels in enumerate((1, 3))
]


@pytest.fixture(scope="module")
def converted():
    return convert_cases(CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_containers_of_layers(converted, index):
    run_case(converted, index, CASES[index])
