"""Packages built on torch that a file imports from outside the converted tree.

``from timm.layers import Mlp`` in a user's project (or in ``timm/models`` converted
without ``timm/layers``) converts without a single torch call left, yet the file cannot
run on MindSpore until ``timm`` is converted too. Which packages are built on torch is
data (``passes/outside_packages.toml``: well-known ones) and, for an installed package,
its distribution's metadata naming torch among its unconditional requirements.
"""
from __future__ import annotations

import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from .table_calls import tables

_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)(?:;(.*))?$")


@functools.lru_cache(maxsize=1)
def known_packages() -> dict[str, str]:
    """Top-level package -> what it is, from the table."""
    with (Path(__file__).parent / "passes" / "outside_packages.toml").open("rb") as fh:
        return dict(tomllib.load(fh)["packages"])


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    try:
        return importlib.metadata.packages_distributions()
    except Exception:  # a broken installation says nothing, rather than failing a file
        return {}


def _requires_torch(distribution: str) -> bool:
    """The distribution requires torch whatever extras are chosen."""
    try:
        requirements = importlib.metadata.requires(distribution) or []
    except Exception:
        return False
    for text in requirements:
        match = _REQUIREMENT.match(text)
        if match is None:
            continue
        name, marker = match.group(1), match.group(3) or ""
        if re.sub(r"[-_.]+", "-", name).lower() == "torch" and "extra" not in marker:
            return True
    return False


@functools.lru_cache(maxsize=None)
def builds_on_torch(root: str) -> bool:
    """Whether the top-level package ``root`` is built on torch (torch itself, the
    target framework and the standard library are not: they are converted or kept)."""
    if root in tables().framework_roots or root in sys.stdlib_module_names:
        return False
    if root in known_packages():
        return True
    return any(_requires_torch(dist) for dist in _distributions().get(root, ()))


def why(root: str) -> str:
    """What makes ``root`` count as built on torch, for the diagnostic."""
    known = known_packages().get(root)
    return known if known else "its installed distribution requires torch"
