"""The graph-mode lint names each finding at its line, in construct only."""
from __future__ import annotations

from pathlib import Path

from transpile import convert_code

FIXTURE = Path(__file__).parent / "fixtures" / "graph-lint" / "findings.py"


def test_every_finding_at_its_line() -> None:
    result = convert_code(FIXTURE.read_text(), filename="findings.py")
    found = sorted((d.line, d.code) for d in result.diagnostics if d.code.startswith("MS5"))
    assert found == [
        (20, "MS501"), (21, "MS502"), (22, "MS503"), (23, "MS503"), (26, "MS504"),
        (27, "MS507"), (28, "MS505"), (31, "MS506"), (33, "MS508"), (42, "MS509"), (52, "MS510"), (63, "MS504"),
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


def test_ms501_names_the_users_third_party_calls_not_the_conversions() -> None:
    """torch.finfo becomes numpy's finfo (a numpy call the tool wrote: no MS501); an einops
    call lowered to MindSpore ops is no third-party call any more; np.exp stays one."""
    src = (
        "import numpy as np\nimport torch\nimport torch.nn as nn\nfrom einops import rearrange\n"
        "class M(nn.Module):\n    def forward(self, x):\n"
        "        m = torch.finfo(x.dtype).max\n"
        "        y = rearrange(x, 'b c -> c b')\n"
        "        return np.exp(y) * m\n"
    )
    found = [(d.line, d.message.split()[0]) for d in convert_code(src).diagnostics if d.code == "MS501"]
    assert found == [(9, "numpy.exp")]


def test_ms501_leaves_calls_graph_mode_runs_and_the_trees_own_modules() -> None:
    """warnings, logging and random in construct, and numpy's array builders, compile and
    compute in GRAPH mode (MindSpore 2.10, measured); a function of the package being converted is converted
    too (subLSTM's ``from subLSTM.functional import SubLSTMCell``): neither is MS501's.
    A call into another package still is."""
    from transpile.engine.package_index import PackageFacts

    src = (
        "import logging\nimport random\nimport warnings\nimport scipy.special\nimport torch.nn as nn\n"
        "from pkg.functional import cell\n"
        "log = logging.getLogger(__name__)\n"
        "class M(nn.Module):\n    def forward(self, x):\n"
        "        warnings.warn('deprecated')\n"
        "        logging.warning('odd size')\n"
        "        rand = random.Random(0)\n"
        "        y = cell(x)\n"
        "        s = np.ones((x.shape[0], 3)) + np.arange(3)\n"
        "        return scipy.special.expit(y) + np.exp(s)\n"
    )
    src = "import numpy as np\n" + src
    found = [(d.line, d.message.split()[0]) for d in convert_code(src, package=PackageFacts(module="pkg.nn.rnn")).diagnostics
             if d.code == "MS501"]
    assert found == [(16, "scipy.special.expit"), (16, "numpy.exp")]
    alone = [d.message.split()[0] for d in convert_code(src).diagnostics if d.code == "MS501"]
    assert alone == ["pkg.functional.cell", "scipy.special.expit", "numpy.exp"]  # converted alone: pkg is another package


def test_ms503_leaves_a_parameter_list_construct_reads_itself() -> None:
    """``x.append(f(x))`` on construct's own list parameter, then ``x`` read (effdet's FPN):
    GRAPH mode computes it (measured); appending to a parameter never read again, or to
    an attribute, is a side effect the graph drops: MS503."""
    src = (
        "import torch.nn as nn\n"
        "class M(nn.Module):\n    def forward(self, x, out, extra):\n"
        "        for i in range(2):\n            x.append(x[-1] * 2.0)\n"
        "        out.append(x[0])\n"
        "        self.seen.append(x[1])\n"
        "        extra.append(x[0])\n"
        "        return x[-2:], extra\n"
    )
    found = [d.line for d in convert_code(src).diagnostics if d.code == "MS503"]
    assert found == [6, 7]


def test_ms511_a_list_changed_under_a_tensors_value() -> None:
    """Measured on 2.10: after ``if n.sum() > 0: hs.pop()`` GRAPH_MODE read another item of
    ``hs`` than Python, with no error; a condition on a shape is a Python number (no finding)."""
    path = FIXTURE.parent / "list_branches.py"
    result = convert_code(path.read_text(), filename=path.name)
    found = sorted((d.line, d.code) for d in result.diagnostics if d.code.startswith("MS5"))
    assert found == [(9, "MS511"), (13, "MS511")]


def test_ms512_a_pop_in_a_conditional_expression_inside_a_larger_one() -> None:
    """MS318 writes ``y = xs.pop() if xs else x`` as an if statement (no finding); a pop in a
    conditional expression deeper in a statement is reported, in compiled code only."""
    src = (
        "import torch.nn as nn\n"
        "class M(nn.Module):\n    def forward(self, x):\n"
        "        xs = [x, x]\n"
        "        y = xs.pop() if xs else x\n"
        "        z = (xs.pop() if xs else x) + 1\n"
        "        return y + z, [xs.pop(0) if len(xs) > 0 else y]\n"
        "def helper(xs):\n    return (xs.pop() if xs else None), xs\n"
    )
    result = convert_code(src)
    assert sorted((d.line, d.code) for d in result.diagnostics if d.code in ("MS318", "MS512")) == [
        (5, "MS318"), (6, "MS512"), (7, "MS512")]


def test_a_buffer_written_again_in_compiled_code_is_a_warning() -> None:
    """MS103 registers a reassigned buffer again (PYNATIVE's answer); GRAPH_MODE refuses
    register_buffer in compiled code, so there the line gets a warning, elsewhere a note."""
    src = (FIXTURE.parent.parent / "module-methods" / "buffer_reassigned.py").read_text()
    src += ("\n    def reset(self, n):\n        self.rel = torch.zeros(1, n)\n")
    found = {(d.line, d.severity.name) for d in convert_code(src).diagnostics if d.code == "MS103"
             and "registered buffer" in d.message}
    assert found == {(17, "WARNING"), (23, "INFO")}, found


def test_ms513_and_ms325_name_their_lines() -> None:
    """MS513: each write another name sees in torch (fixtures/graph-view-writes); MS325: the
    generators compiled code calls, made lists (info) or left (a warning: GRAPH_MODE compiles
    no yield)."""
    fixtures = FIXTURE.parent.parent
    path = fixtures / "graph-view-writes" / "shared_writes.py"
    result = convert_code(path.read_text(), filename=path.name)
    assert sorted(d.line for d in result.diagnostics if d.code == "MS513") == [10, 15, 26, 31, 33, 57]
    path = fixtures / "graph-generators" / "generators.py"
    result = convert_code(path.read_text(), filename=path.name)
    found = sorted((d.line, d.severity.name) for d in result.diagnostics if d.code == "MS325")
    assert found == [(5, "INFO"), (14, "WARNING"), (19, "WARNING"), (29, "INFO"), (35, "WARNING")]


def test_ms508_a_registered_buffer_assigned_in_construct() -> None:
    """timm's ConViT recomputes a buffer in forward when the length changes: the converted code
    registers it again there (MS103), which GRAPH_MODE refuses ("'register_buffer' is not
    supported in 'construct'"): the lint names the line. A plain attribute, the buffer read,
    and __init__ give no MS508."""
    src = (
        "import torch\nimport torch.nn as nn\n"
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('rel', torch.zeros(1, 3), persistent=False)\n"
        "        self.rel = torch.zeros(1, 2)\n"
        "    def forward(self, x):\n"
        "        if self.rel.shape[1] != x.shape[1]:\n"
        "            self.rel = torch.ones(1, x.shape[1]) * x.shape[1]\n"
        "        self.other = x\n"
        "        return x + self.rel\n"
    )
    found = [(d.line, d.code) for d in convert_code(src).diagnostics if d.code == "MS508"]
    assert found == [(10, "MS508")]


def test_ms514_an_attribute_set_in_compiled_code_and_read_by_another_method() -> None:
    """Measured on 2.10 (GRAPH_MODE, no error): ``self.t = x * 2`` in construct, then a helper
    returning ``self.t * 3``, gave zeros (the value __init__ set); set in a helper and read in
    construct the same. Set and read in one method it is right (no finding); a reader forward
    never reaches is no finding either."""
    src = (
        "import torch\nimport torch.nn as nn\n"
        "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.t = torch.zeros(2, 3)\n"
        "    def read(self):\n        return self.t * 3\n"
        "    def forward(self, x):\n        self.t = x * 2\n        return self.read()\n"
        "class D(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.t = torch.zeros(2, 3)\n"
        "    def show(self):\n        return self.t\n"
        "    def forward(self, x):\n        self.t = x * 2\n        return self.t * 3\n"
        "class E(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.t = torch.zeros(2, 3)\n"
        "    def build(self, x):\n        self.t = x * 2\n"
        "    def forward(self, x):\n        self.build(x)\n        return self.t * 3\n"
    )
    found = [(d.line, d.code) for d in convert_code(src).diagnostics if d.code == "MS514"]
    assert found == [(10, "MS514"), (26, "MS514")]


def test_ms514_through_a_layer_handed_to_init() -> None:
    """torchvision's RAFT: ``self.corr_block`` is handed to ``__init__`` (the type index cannot
    tell its class), and forward calls ``build_pyramid``, which sets ``self.corr_pyramid``, then
    ``index_pyramid``, which reads it. The methods are found by name (one class of the file
    defines them), so they are compiled code and the assignment is reported; a name two
    classes define is no finding (which one runs is unknown)."""
    src = (
        "import torch\nimport torch.nn as nn\n"
        "class Corr(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.pyramid = [torch.tensor(0)]\n"
        "    def build(self, x):\n        self.pyramid = [x]\n"
        "    def index(self, y):\n        return self.pyramid[0] + y\n"
        "class Twin(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.t = None\n"
        "    def setup(self, x):\n        self.t = x\n    def get(self):\n        return self.t\n"
        "class Twin2(Twin):\n    def setup(self, x):\n        self.t = x\n    def get(self):\n        return self.t\n"
        "class Net(nn.Module):\n    def __init__(self, corr, twin):\n        super().__init__()\n"
        "        self.corr = corr\n        self.twin = twin\n"
        "    def forward(self, x):\n        self.corr.build(x)\n        self.twin.setup(x)\n"
        "        return self.corr.index(x) + self.twin.get()\n"
    )
    found = [(d.line, d.code) for d in convert_code(src).diagnostics if d.code == "MS514"]
    assert found == [(8, "MS514")]


def test_no_finding_in_a_branch_graph_mode_drops() -> None:
    """``if torch.jit.is_scripting():`` (MS206 makes it ``if False:``) is not compiled: torchvision's
    Inception3 builds its namedtuple only there, and compiles. Its else branch is linted."""
    src = (
        "from collections import namedtuple\nimport torch\nimport torch.nn as nn\n"
        "Out = namedtuple('Out', 'x aux')\n"
        "class N(nn.Module):\n    def forward(self, x):\n"
        "        if torch.jit.is_scripting():\n            return Out(x, x)\n"
        "        if torch.jit.is_scripting(): return Out(x, x)\n"
        "        if False:\n            print(x)\n        else:\n            print(x)\n"
        "        return x, Out(x, x)\n"
    )
    found = sorted((d.line, d.code) for d in convert_code(src).diagnostics if d.code.startswith("MS5"))
    assert found == [(13, "MS503"), (14, "MS504")]
