"""Looking up table symbols in the installed frameworks (shared by the table tests)."""
from __future__ import annotations

import importlib
import inspect


def resolve(qualname: str):
    """Import the longest module prefix of ``qualname``, then getattr the rest."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(qualname)


def signature(obj):
    """``inspect.signature`` of a function or of a class's ``__init__``; None for C functions."""
    try:
        return inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):
        return None
