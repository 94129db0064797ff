"""The name index (transpile/engine/names.py) against CPython's own: every ``ast.Name`` with its
``ctx`` is a reference of the same role, and no label is one."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from transpile.engine.names import DEL, LOAD, STORE, NameRoles, identifiers
from transpile.engine.walk import ScopeIndex, iter_nodes

ROOT = Path(__file__).resolve().parent.parent
_CTX = {ast.Load: LOAD, ast.Store: STORE, ast.Del: DEL}

TRICKY = '''
import os.path as osp, a.b.c
from .x import (y as z, w)
from m import *
global_value = 1
@decorate(arg=value)
class C(Base, metaclass=Meta):
    attr: int = other.attr
    def method(self, p: Ann = default, *args: A, k=kd, **kw) -> Ret:
        global gg
        x, (y, *z) = q = self.f(key=v)[i]
        x.a.b = y[j] = 3
        del x.a, z[0], y
        for i, (j, k2) in items:
            x += i
        with open(f) as (fa, fb), g() as gh:
            pass
        try:
            pass
        except (E1, E2) as err:
            raise Other from err
        lam = lambda a, b=bd, *c, d=dd, **e: a + b + outer
        comp = [u for u in us if (w := u)]
        d = {kk: vv for kk, vv in pairs}
        match subject:
            case Point(x=px, y=0) | [first, *rest] as whole:
                pass
            case {"key": kv, **others}:
                pass
            case mod.CONST:
                pass
        return f"{x!r:{width}}" + ("a" "b")
async def g():
    async for ai in aiter_():
        await ai
    async with ctx() as cm:
        nonlocal_value = [*spread, {**mapping}] if cond else None
'''


def _sources():
    yield "tricky", TRICKY
    for path in sorted((ROOT / "samples").glob("*.py"))[:12]:
        yield path.name, path.read_text()
    inputs = [p for p in sorted((ROOT / "tests" / "fixtures").glob("*/*.py")) if not p.name.endswith(".expected.py")]
    for path in inputs[::4]:
        yield f"{path.parent.name}/{path.name}", path.read_text()


def _cst_roles(module: cst.Module, roles: NameRoles) -> Counter:
    return Counter((n.value, roles.role(n)) for n in iter_nodes(module)
                   if type(n) is cst.Name and roles.role(n) is not None)


@pytest.mark.parametrize("label,source", list(_sources()), ids=lambda v: v if len(v) < 60 else "")
def test_roles_are_cpython_s(label, source):
    module = cst.parse_module(source)
    expected = Counter((n.id, _CTX[type(n.ctx)]) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name))
    indexed = NameRoles()
    ScopeIndex(module, (cst.Call,), indexed)  # filled by the scope walk
    assert _cst_roles(module, indexed) == expected
    assert _cst_roles(module, NameRoles.of(module)) == expected  # and by its own walk
    attributes = {n.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)}
    assert indexed.attributes == attributes == NameRoles.of(module).attributes


def test_queries():
    module = cst.parse_module("def f(a, *, key=k):\n    b = a.key + g(key=c)\n    del b\n    return b\n")
    roles = NameRoles.of(module)
    fn = module.body[0]
    assert [n.value for n in roles.loads(fn)] == ["k", "a", "g", "c", "b"]
    assert roles.load_counts(fn) == {"k": 1, "a": 1, "g": 1, "c": 1, "b": 1}
    assert roles.stored(fn) == {"b"}
    assert roles.referenced(fn.body) == {"a", "b", "g", "c"}
    assert identifiers(fn) == {"f", "a", "key", "k", "b", "g", "c"}
    key_param = fn.params.kwonly_params[0].name
    assert not roles.is_reference(key_param) and roles.role(key_param) is None
