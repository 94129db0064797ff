"""MS319: ``sqrt(n)`` of ``from math import sqrt`` in compiled code -> ``math.sqrt(n)``.

GRAPH_MODE (MindSpore 2.10) compiles ``math.sqrt(n)`` on the constants it knows (a shape,
an element count), but a math function called by the bare name a ``from math import``
bound runs in Python when the graph runs (JIT fallback): its result has no value at
compile time, nor has whatever it scales. denoising-diffusion's Karras U-Nets scale their
weight by ``sqrt(weight.numel() / weight.shape[0])``, so the convolution's weight had no
static shape and Conv2D could not be built ("all arguments are required to be constants,
but input 0 is a variable, which is AbstractAny"); measured the same for ``log`` and
``ceil``. The call is the same function under its module's name, in every mode. Only calls
of a name the file's imports bind to a ``math`` function (a local of that name is no
import), in compiled code (forward, construct, what they call on ``self``) and in the
module's functions those call by name (``normalize_weight`` there).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from .called_by_compiled import CompiledOrCalled


class GraphMathNames(CompiledOrCalled, Pass):
    id = "MS319"
    name = "graph-math-names"
    reads = frozenset({"compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = "sqrt(n) of from math import sqrt in compiled code -> math.sqrt(n) (GRAPH_MODE runs the bare name in Python)."
    examples = (
        Example(
            "from math import sqrt\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, w):\n"
            "        return w * sqrt(w.shape[0])\n",
            "from math import sqrt\nimport mindspore.nn as nn\nimport math\nclass M(nn.Cell):\n    def construct(self, w):\n"
            "        return w * math.sqrt(w.shape[0])\n",
        ),
    )

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if type(original.func) is not cst.Name or type(updated.func) is not cst.Name:
            return updated
        qual = self.ctx.imports.qualify(original.func)
        if not qual or not qual.startswith("math.") or qual.count(".") != 1 or not self._compiled():
            return updated
        self.ctx.report(original, self.id, f"{original.func.value}() of from math import is {qual}() in compiled code: "
                        "GRAPH_MODE runs a math function called by its bare name in Python, so its result is no "
                        "constant", Severity.INFO)
        return updated.with_changes(func=self.ctx.reference(qual))
