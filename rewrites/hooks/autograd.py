"""Hooks of tables/autograd.toml: torch.autograd's functional API onto MindSpore's function
transforms (the run-time helpers of rewrites/runtime/autograd.py), Variable as its tensor."""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, keyword_call, literal_value
from .registry import hook


@hook()
def autograd_functional(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.autograd.functional.jacobian(f, x)`` -> ``_autograd_jacobian(func=f, inputs=x)``
    (emitted; likewise hessian, jvp, vjp). The Hessian's compiled transforms read the
    function from its source, which a lambda written inside the call is not."""
    name = entry.source.rsplit(".", 1)[1]
    if name == "hessian" and type(args.get("func")) is cst.Lambda:
        raise Unconvertible("MindSpore's jacfwd/jacrev compile the function from its source and refuse a lambda "
                            "written inside a call: define it on a line of its own (f = lambda ...) or with def")
    return keyword_call(runtime_helper(ctx, "_autograd_" + name), args)


@hook(consumes=("data", "requires_grad", "volatile"))
def variable(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``Variable(x, requires_grad=True)`` -> ``x``: torch's Variable is its tensor, and
    MindSpore keeps no requires_grad flag on a tensor to set (it differentiates functions)."""
    flag = args.get("requires_grad")
    if flag is not None and literal_value(flag) is not False:
        ctx.report(args["data"], "MS201", "torch.autograd.Variable: requires_grad dropped: MindSpore differentiates "
                   "functions (mindspore.grad), not tensors marked beforehand", Severity.INFO)
    return args["data"]
