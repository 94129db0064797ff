"""Hooks of tables/attributes.toml: names used as values."""
from __future__ import annotations

import libcst as cst

from ..syntax import literal
from .registry import hook


def _format_name(ctx, entry) -> cst.BaseExpression:
    return literal(entry.source.rsplit(".", 1)[1])


@hook(as_value=_format_name)
def memory_format_name(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A memory format is its name (``"contiguous_format"``): MindSpore's tensors have one
    layout, so the tables drop the ``memory_format=`` arguments they convert, and a helper
    taking torch's arguments (``_torch_clone``) ignores it; the formats still compare as
    torch's."""
    return _format_name(ctx, entry)
