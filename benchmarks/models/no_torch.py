"""A process in which torch is not installed, as far as the code run in it can tell: the
MindSpore side of the benchmarks run as a user without torch runs it (issue 31: "the
converted package imports and builds the models where ``import torch`` fails").

``block_torch()`` replaces the path finder of ``sys.meta_path`` by one that finds no
``torch`` module and no ``torch`` distribution: ``import torch`` raises
ModuleNotFoundError, ``importlib.util.find_spec("torch")`` is None and
``importlib.metadata.version("torch")`` raises PackageNotFoundError, as on a machine
without it (a finder that raised instead would break availability checks that a missing
package passes).
"""
from __future__ import annotations

import sys
from importlib.machinery import PathFinder

BLOCKED = "torch"


def _blocked(name: str | None) -> bool:
    return name == BLOCKED or (name or "").startswith(BLOCKED + ".")


class PathFinderWithoutTorch(PathFinder):
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        return None if _blocked(fullname) else super().find_spec(fullname, path, target)

    @classmethod
    def find_distributions(cls, *args, **kwargs):
        for dist in super().find_distributions(*args, **kwargs):
            if (dist.metadata["Name"] or "").lower() != BLOCKED:
                yield dist


def block_torch() -> None:
    """From now on this process finds no torch (it must not have imported it already)."""
    loaded = [name for name in sys.modules if _blocked(name)]
    if loaded:
        raise RuntimeError(f"torch is imported already ({loaded[0]}): it cannot be made absent")
    sys.meta_path[:] = [PathFinderWithoutTorch if f is PathFinder else f for f in sys.meta_path]
