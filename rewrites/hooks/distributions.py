"""Hooks of tables/distributions.toml: torch.distributions.

A distribution converts to a small class emitted beside the code (once per file) that
keeps torch's interface (``d.log_prob(x)``, ``d.mean``, ``d.sample((n,))``,
``d.batch_shape``), written with MindSpore ops: the calls on the object need no
conversion. MindSpore's own nn.probability classes name their methods and arguments
otherwise, and a method call on a value of unknown type cannot be rewritten reliably.

The formulas are torch's (same order of operations), so values match to float rounding.
Sampling draws from MindSpore's generator: same distribution, other numbers. The classes
are the run-time helpers of rewrites/runtime/distributions.py.

    d = Normal(mu, sigma)       ->  d = _TorchNormal(loc=mu, scale=sigma)
    kl_divergence(p, q)         ->  _torch_kl_divergence(p=p, q=q)
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call
from .registry import hook


def _emitted_name(entry) -> str:
    last = entry.source.rsplit(".", 1)[-1]
    return f"_torch_{last}" if last[:1].islower() else f"_Torch{last}"


@hook(not_a_value="a distribution becomes a class emitted beside the code: call it where it is built")
def distribution(ctx, entry, args: dict[str, Any], receiver) -> cst.BaseExpression:
    """A torch.distributions class (or kl_divergence) as the class (function) emitted
    beside the code, called with the same keywords: ``Normal(mu, s)`` ->
    ``_TorchNormal(loc=mu, scale=s)``."""
    return keyword_call(runtime_helper(ctx, _emitted_name(entry)), args)
