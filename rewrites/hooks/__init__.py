"""Hooks, one module per table: the hook named by an entry of ``tables/X.toml`` is
defined in ``hooks/X.py``, or imported there when two tables share it (``torch.where``
and ``Tensor.where``). ``registry.py`` holds the ``@hook`` decorator and ``HOOKS``.

Every module of this package is imported here (importing registers its hooks), so a
new table's hooks module needs no line of its own."""
from __future__ import annotations

import importlib
import pkgutil

from .registry import HOOKS, Hook, hook

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "registry":
        importlib.import_module(f"{__name__}.{_module}")

__all__ = ["HOOKS", "Hook", "hook"]
