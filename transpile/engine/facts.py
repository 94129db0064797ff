"""The facts base: what an analysis knows about one file, read by every pass.

The rewrites' analysis (``Pipeline(analyse=...)``) builds one ``Facts`` per file before the
passes run; it is a frozen dataclass, so no pass can change or add a fact (an answer a fact
computes on demand is kept inside it, the same for every pass). The engine knows only the
name index (``names``: which names are references, ``transpile.engine.names``); the
rewrites' subclass (``rewrites/facts.py``) adds the rest.

A pass lists the facts it reads in ``Pass.reads``; ``tests/test_pass_rules.py`` checks the
list against what the pass's handlers really read.
"""
from __future__ import annotations

from dataclasses import dataclass

from .names import NameRoles


@dataclass(frozen=True, eq=False)
class Facts:
    names: NameRoles  # the role of every name of the original tree
