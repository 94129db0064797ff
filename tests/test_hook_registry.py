"""Hooks and value transforms: every name a table gives resolves, every registered one
is used, and the hook of an entry of tables/X.toml is found in hooks/X.py."""
from __future__ import annotations

import importlib
import pkgutil

import pytest

import transpile.rewrites.hooks as hooks_package
from transpile.rewrites.hooks import HOOKS
from transpile.rewrites.hooks.registry import hook
from transpile.rewrites.table_calls import tables
from transpile.rewrites.value_transforms import TRANSFORMS, transform

ENTRIES = tables().all_entries()
TABLE_NAMES = {e.table for e in ENTRIES}


def _uses(attribute: str) -> dict[str, set[str]]:
    """name -> the tables whose entries name it (hook or transform)."""
    used: dict[str, set[str]] = {}
    for e in ENTRIES:
        names = [e.hook, e.call_hook] if attribute == "hook" else list(e.transform.values())
        for name in filter(None, names):
            used.setdefault(name, set()).add(e.table)
    return used


def test_every_table_hook_resolves() -> None:
    """To a hook of the right kind: ``hook`` rewrites arguments, ``call_hook`` calls of a layer."""
    wrong = []
    for e in ENTRIES:
        for field, kind in (("hook", "arguments"), ("call_hook", "layer_call")):
            name = getattr(e, field)
            if name and (name not in HOOKS or HOOKS[name].kind != kind):
                wrong.append(f"{e.table}.toml {e.source}: {field} {name!r} is not a registered {kind} hook")
    assert not wrong, wrong


def test_every_table_transform_resolves() -> None:
    missing = sorted(f"{e.table}.toml {e.source}: transform {t!r}"
                     for e in ENTRIES for t in e.transform.values() if t not in TRANSFORMS)
    assert not missing, missing


def test_every_registered_hook_is_used() -> None:
    assert sorted(set(HOOKS) - set(_uses("hook"))) == []


def test_every_registered_transform_is_used() -> None:
    assert sorted(set(TRANSFORMS) - set(_uses("transform"))) == []


def test_hook_lives_with_its_table() -> None:
    """Defined in hooks/<table>.py for a table that uses it, and importable from the
    module of every other table that uses it."""
    wrong = []
    for name, tables_using in _uses("hook").items():
        registered = HOOKS[name]
        if registered.module not in tables_using:
            wrong.append(f"{name} is defined in hooks/{registered.module}.py, used by {sorted(tables_using)}")
        for table in tables_using:
            module = importlib.import_module(f"{hooks_package.__name__}.{table}")
            if getattr(module, name, None) is not registered.function:
                wrong.append(f"{name} (used by {table}.toml) is not found in hooks/{table}.py")
    assert not wrong, wrong


def test_hook_modules_are_named_after_tables() -> None:
    modules = {m.name for m in pkgutil.iter_modules(hooks_package.__path__)} - {"registry"}
    assert modules <= TABLE_NAMES, sorted(modules - TABLE_NAMES)


def test_consumed_arguments_are_parameters() -> None:
    """Each argument a hook says it consumes is one some entry using the hook can pass."""
    passed: dict[str, set[str]] = {}
    for e in ENTRIES:
        if e.hook:
            names = {e.rename.get(p.lstrip("*"), p.lstrip("*")) for p in [*e.params, *e.kwonly]}
            passed.setdefault(e.hook, set()).update(names | {e.receiver or "input"})
    wrong = {name: sorted(HOOKS[name].consumes - given) for name, given in passed.items() if HOOKS[name].consumes - given}
    assert not wrong, wrong


def test_registering_a_name_twice_fails() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        hook("conv_padding")(lambda ctx, entry, args, receiver: args)
    with pytest.raises(ValueError, match="registered twice"):
        transform("size_tuple")(lambda value, ctx=None: value)
