"""Where the code calls ``.backward()``: a training step (MS213 cuts gradients around it,
MS103 and MS214 treat a file that calls it as a training script)."""
from __future__ import annotations

import libcst as cst


def is_backward_call(call: cst.Call) -> bool:
    """``loss.backward()``: a tensor's backward takes at most its gradient by position, and
    nothing starred (``function.backward(ctx, *dout)`` is an autograd Function's, MS104's bprop)."""
    return (isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
            and sum(1 for a in call.args if a.keyword is None) <= 1 and not any(a.star for a in call.args))


def calls_backward(facts, scope) -> bool:
    """Whether ``scope`` (a function, or the module) calls ``.backward()`` in its own body
    (lambdas included, nested functions and classes not): code a training step differentiates."""
    return any(map(is_backward_call, facts.nodes(scope, (cst.Call,), lambda inner: isinstance(inner, cst.Lambda))))


def file_calls_backward(facts) -> bool:
    """Whether the file calls ``.backward()`` anywhere: a training script (MS103, MS213 and
    MS214 ask; the answer is kept, and a file without the text is answered at once)."""
    return facts.calls_backward_anywhere()
