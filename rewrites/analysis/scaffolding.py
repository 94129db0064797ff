"""The TorchScript/FX/tracing scaffolding MS206 resolves: read by MS206, by MS201 (which
leaves those names to it) and by MS213 (autocast blocks switched off, which MS206 flattens)."""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def scaffolding_data() -> dict:
    """rewrites/passes/scaffolding.toml: the names MS206 resolves, kept beside its pass."""
    with (Path(__file__).parent.parent / "passes" / "scaffolding.toml").open("rb") as fh:
        return tomllib.load(fh)


def scaffolding_names() -> frozenset[str]:
    """Every name MS206 resolves (ApiCalls leaves them alone)."""
    data = scaffolding_data()
    return frozenset([*data["constant"], *data["identity"], *data["decorator"]["drop"],
                      *data["decorator"]["overload_stub"], *data["statement"]["drop"], *data["check"],
                      *data["build"]])


def build_modules() -> frozenset[str]:
    """The modules whose attributes say how torch was built (``torch.version``): MS206 answers
    ``getattr(torch, "version").cuda`` whole, so MS205 leaves its ``getattr`` to it."""
    return frozenset(name.rsplit(".", 1)[0] for name in scaffolding_data()["build"])
