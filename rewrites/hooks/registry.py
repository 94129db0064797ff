"""The one registry of hooks: ``@hook(...)`` on a function in ``hooks/<table>.py``.

A hook finishes the conversion of a table entry where data alone cannot say it. An
entry's ``hook`` has the signature ``hook(ctx, entry, args, receiver)``: ``args`` are the
converted keyword arguments (target names), ``receiver`` the converted receiver of a
method (else None). It returns the arguments to emit, or a whole replacement
expression, and raises ``Unconvertible`` (from ``rewrites.syntax``) to leave the call.

A layer entry's ``call_hook`` (``@hook(kind="layer_call")``) rewrites each call of the
built layer instead: ``hook(ctx, entry, call)`` returns the expression in its place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Hook:
    name: str
    function: Callable
    # arguments (target names) the hook reads and does not pass on to the target
    consumes: frozenset[str]
    # keywords the hook emits that the entry's data does not name
    adds: frozenset[str]
    # for layers whose arguments are only known at run time (a layer class used as a
    # value): ``at_run_time(entry)`` returns statements over ``kwargs`` (torch names)
    # doing the same conversion inside a generated converter
    at_run_time: Callable | None
    kind: str = "arguments"  # or "layer_call"
    # why a bare reference to an entry with this hook (not a call) cannot be converted;
    # None: the reference becomes the entry's target
    not_a_value: str | None = None
    # for entries whose calls become a run-time helper taking torch's arguments: a bare
    # reference's replacement, ``as_value(ctx, entry)`` (None: refused with not_a_value)
    as_value: Callable | None = None

    @property
    def module(self) -> str:
        """The hooks module that defines it (named after a table)."""
        return self.function.__module__.rsplit(".", 1)[-1]


HOOKS: dict[str, Hook] = {}


KINDS = ("arguments", "layer_call")


def hook(name: str | None = None, *, consumes=(), adds=(), at_run_time: Callable | None = None,
         kind: str = "arguments", not_a_value: str | None = None, as_value: Callable | None = None):
    """Register the decorated function as the hook ``name`` (default: its own name)."""
    if kind not in KINDS:
        raise ValueError(f"hook kind must be one of {KINDS}, not {kind!r}")

    def register(function: Callable) -> Callable:
        key = name or function.__name__
        if key in HOOKS:
            raise ValueError(f"hook {key!r} registered twice ({HOOKS[key].function.__module__}, {function.__module__})")
        HOOKS[key] = Hook(key, function, frozenset(consumes), frozenset(adds), at_run_time, kind, not_a_value, as_value)
        return function
    return register
