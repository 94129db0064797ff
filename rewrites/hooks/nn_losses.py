"""Hooks of tables/nn_losses.toml: torch.nn loss classes."""
from __future__ import annotations

from typing import Any

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import keyword_call, literal_value
from .nn_layers import runtime_cell  # noqa: F401  (losses MindSpore lacks on CPU: the entries' hook)
from .registry import hook


def bce_weight_at_run_time(entry) -> list[str]:
    return ['if kwargs.get("weight") is not None:',
            '    raise ValueError("weight: nn.BCELoss passed as a value takes no weight (MindSpore\'s CPU kernel '
            'does not broadcast it)")']


@hook(at_run_time=bce_weight_at_run_time)
def bce_weight(ctx, entry, args: dict[str, Any], receiver) -> dict[str, Any] | cst.BaseExpression:
    """``nn.BCELoss()`` is MindSpore's; with a weight (MindSpore's CPU kernel reads past
    one smaller than the input) the composed ``_TorchBCELoss(weight=..., reduction=...)``."""
    weight = args.get("weight")
    if weight is None or literal_value(weight) is None:
        return {k: v for k, v in args.items() if k != "weight"}
    return keyword_call(runtime_helper(ctx, "_TorchBCELoss"), args)
