"""MS304: ``map(f, xs)`` inside construct becomes a comprehension.

GRAPH_MODE compiles the builtin ``map`` only for functions without free variables:
``map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), qkv)`` fails with "The Map
operator don't support Closure with free variable yet". A comprehension compiles (its
free variables are fine) and gives the same items in PYNATIVE and GRAPH:

    q, k, v = map(lambda t: f(t, h), qkv)      ->  q, k, v = tuple(f(t, h) for t in qkv)
    a, b = map(self.norm, (a, b))              ->  a, b = tuple(self.norm(t) for t in (a, b))
    k, v = map(partial(cat, dim=-2), pairs)    ->  k, v = tuple(partial(cat, dim=-2)(t) for t in pairs)
    ys = map(lambda a, b: a + b, xs, zs)       ->  ys = tuple(a + b for a, b in zip(xs, zs))
    list(map(f, xs))                           ->  [f(t) for t in xs]

``map`` returns a one-pass iterator; the tuple holds the same items in the same order
and serves every use an iterator does (unpacking, iterating, passing on) except
``next()``, whose argument is left alone. The function is written once per item: only
a lambda (without defaults or star parameters), a name or attribute chain, or a
``functools.partial(...)`` call (no side effects) is rewritten. The rule applies in
forward/construct, the methods it calls on ``self`` (compiled with it), the module's
functions they call by name (logavgexp's ``calc_conv_output``) and functions nested in
them; ``__init__`` and other Python-only code keep ``map``.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.names import identifiers

from ...syntax import Unconvertible, name_chain
from ...table_calls import convert_call, tables
from .called_by_compiled import CompiledOrCalled

BUILTINS = ("map", "zip", "tuple", "list", "next")
PARTIAL = "functools.partial"


class GraphMaps(CompiledOrCalled, Pass):
    id = "MS304"
    name = "graph-maps"
    reads = frozenset({"empty_1d_tensor", "compiled_callees", "forward_helpers", "submodule_helpers"})
    summary = "map(f, xs) in construct -> a comprehension (GRAPH_MODE rejects map over closures)."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, q, k, h):\n"
            "        q, k = map(lambda t: t * h, (q, k))\n        return q + k\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, q, k, h):\n"
            "        q, k = tuple(t * h for t in (q, k))\n        return q + k\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._keep: set[int] = set()  # map calls left as they are (next(map(...)))
        self._made: set[int] = set()  # map calls this pass rewrote (original nodes)
        self.tables = tables()

    def _builtin(self, func, name: str) -> bool:
        return isinstance(func, cst.Name) and func.value == name and name not in self.ctx.imports.bindings

    def visit_Call(self, node: cst.Call) -> None:
        if self._builtin(node.func, "next") and node.args:
            self._keep.add(id(node.args[0].value))

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not self._compiled():
            return updated
        if self._builtin(original.func, "map"):
            return self._map(original, updated)
        # list(map(...)) -> [...]; tuple(map(...)) -> tuple(...) (not tuple(tuple(...)))
        if (len(original.args) == 1 and id(original.args[0].value) in self._made
                and any(self._builtin(original.func, n) for n in ("list", "tuple"))):
            genexp = updated.args[0].value.args[0].value
            if original.func.value == "list":
                return cst.ListComp(elt=genexp.elt, for_in=genexp.for_in)
            return updated.with_changes(args=[cst.Arg(genexp)])
        return updated

    def _map(self, original: cst.Call, updated: cst.Call):
        args = updated.args
        if (len(args) < 2 or id(original) in self._keep or any(a.keyword or a.star for a in args)
                or not all(n not in self.ctx.imports.bindings for n in BUILTINS)):
            return updated
        fn, iterables = args[0].value, [a.value for a in args[1:]]
        if isinstance(fn, cst.Lambda):
            names = _plain_params(fn.params)
            if names is None or len(names) != len(iterables):
                return updated
            element = fn.body
        elif name_chain(fn):
            names = _fresh(identifiers(fn), len(iterables))
            element = cst.Call(func=fn, args=[cst.Arg(cst.Name(n)) for n in names])
        elif self._partial(original.args[0].value):
            names = _fresh(identifiers(fn), len(iterables))
            element = self._inline_partial(original.args[0].value, fn, names)
        else:
            return updated
        if len(names) == 1:
            target, source = cst.Name(names[0]), iterables[0]
        else:
            target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
            source = cst.Call(func=cst.Name("zip"), args=[cst.Arg(i) for i in iterables])
        if isinstance(source, (cst.IfExp, cst.Lambda, cst.NamedExpr)):
            source = source.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        if isinstance(element, (cst.Lambda, cst.NamedExpr)) and not element.lpar:
            element = element.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        genexp = cst.GeneratorExp(elt=element, for_in=cst.CompFor(target=target, iter=source), lpar=[], rpar=[])
        self._made.add(id(original))
        self.ctx.report(original, self.id, "map() in construct is a comprehension (GRAPH_MODE compiles map "
                        "only over functions without free variables)", Severity.INFO)
        return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(genexp)])

    def _partial(self, fn) -> bool:
        """``functools.partial(f, ...)`` of a function written as a name or attribute chain."""
        return (isinstance(fn, cst.Call) and self.ctx.imports.qualify(fn.func) == PARTIAL and bool(fn.args)
                and not fn.args[0].keyword and not fn.args[0].star and name_chain(fn.args[0].value))

    def _inline_partial(self, original: cst.Call, updated: cst.Call, names: list[str]) -> cst.BaseExpression:
        """``partial(f, a, k=v)`` applied to the items: ``f(a, t, k=v)``. A torch function
        is converted as that call (its value form takes torch's arguments through a
        generated wrapper, which GRAPH_MODE cannot compile)."""
        def call(partial: cst.Call, func) -> cst.Call:
            rest = [cst.Arg(a.value, keyword=a.keyword, star=a.star) for a in partial.args[1:]]
            positional = [a for a in rest if not a.keyword and a.star != "**"]
            keywords = [a for a in rest if a.keyword or a.star == "**"]
            return cst.Call(func=func, args=[*positional, *(cst.Arg(cst.Name(n)) for n in names), *keywords])

        qual = self.ctx.imports.qualify(original.args[0].value)
        entry = self.tables.lookup(qual) if qual and qual.split(".")[0] in self.tables.source_roots else None
        if entry is not None and entry.called_as:
            entry = self.tables.lookup(entry.called_as)
        if entry is not None:
            try:
                return convert_call(self.ctx, entry, call(updated, original.args[0].value), self.id,
                                    original=call(original, original.args[0].value))
            except Unconvertible:
                return cst.Call(func=updated, args=[cst.Arg(cst.Name(n)) for n in names])
        return call(updated, updated.args[0].value)


def _plain_params(params: cst.Parameters) -> list[str] | None:
    """The parameter names of a lambda that takes only plain positional parameters."""
    if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None:
        return None
    if params.kwonly_params or params.star_kwarg or params.posonly_params:
        return None
    if any(p.default is not None for p in params.params):
        return None
    return [p.name.value for p in params.params]


def _fresh(used: set[str], count: int) -> list[str]:
    """``count`` names for the comprehension's items that the function does not use."""
    if count == 1 and "t" not in used:
        return ["t"]
    out, i = [], 0
    while len(out) < count:
        if f"t{i}" not in used:
            out.append(f"t{i}")
        i += 1
    return out
