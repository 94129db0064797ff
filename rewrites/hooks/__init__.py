"""Hooks, one module per table: the hook named by an entry of ``tables/X.toml`` is
defined in ``hooks/X.py``, or imported there when two tables share it (``torch.where``
and ``Tensor.where``). ``registry.py`` holds the ``@hook`` decorator and ``HOOKS``."""
from __future__ import annotations

from . import functional, module_methods, nn_init, nn_layers, nn_utils, tensor_methods, torch_functions  # noqa: F401  (they register)
from .registry import HOOKS, Hook, hook

__all__ = ["HOOKS", "Hook", "hook"]
