"""What each attribute, local and return value of a converted tree holds: the type index.

``self.emb.weight`` can only be renamed for MindSpore when ``emb`` is known to be an
Embedding, and ``emb`` is often built in another method, a helper function, a base class
or another file (``self.transformer.wte`` through ``nn.ModuleDict(dict(wte=...))``,
``net[-1]`` of a Sequential filled in a loop). ``PackageIndex`` scans every file of a tree
with CPython's parser once; this module turns each file's classes and functions into
*shapes*: plain, JSON-able tuples describing a value by how the code builds it. The
engine knows nothing of torch: a shape says "the result of calling torch.nn.Embedding"
or "item -1 of attribute layers", and the rewrites decide which calls build layers,
which are containers and what their items are.

Shapes (nested tuples):

* ``("?",)`` unknown; ``("str", s)``, ``("int", n)`` literals (container keys, indices);
* ``("ref", qualified)`` a module-level name (a class, a function, a module variable);
* ``("self", class)`` the instance a method of ``class`` runs on;
* ``("var", scope, name)`` a local of a function (``scope`` is its qualified name, the
  module's for module-level code): see ``TypeIndex.functions[scope].locals``;
* ``("get", base, attr)``, ``("item", base, key)``, ``("iter", base)`` (what a loop over
  base binds), ``("call", func, args, kwargs)`` (``kwargs``: ``((name, shape), ...)``);
* ``("seq", items, open)`` a list or tuple display (``open``: more items of those kinds at
  unknown places: a comprehension); ``("map", ((key, value), ...), open)`` a dict display
  or ``dict(...)``; ``("*", shape)`` a starred item or argument; ``("any", alternatives)``.

A name bound several times holds ``("any", ...)`` of its bindings; the calls made on it
(``layers.append(x)``, ``self.blocks.add_module(name, b)``, ``seq[i] = x``) are kept
beside it as ``mutations``: ``((method, args), ...)`` (an item store is ``__setitem__``).
Calls on ``self`` naming the attribute they set (``setattr(self, f"l{i}", x)``,
``self.add_module("fc", x)``) are the class's ``setters``: ``((method, args), ...)``.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

UNKNOWN_SHAPE: tuple = ("?",)
_MAX_ITEMS = 64  # a display longer than this is summarised as open (its kinds, no places)


@dataclass(frozen=True)
class Binding:
    """What a name or attribute is bound to, and the calls that change it in place."""

    value: tuple = UNKNOWN_SHAPE
    mutations: tuple = ()  # ((method, args), ...)


@dataclass(frozen=True)
class FunctionTypes:
    """A function's (or module's top-level code's) locals and what it returns."""

    returns: tuple = UNKNOWN_SHAPE
    locals: dict[str, Binding] = field(default_factory=dict)
    owner: str = ""  # the class it is a method of ("" for functions and module code)


@dataclass(frozen=True)
class ClassTypes:
    """What the methods of a class assign to ``self``."""

    bases: tuple[str, ...] = ()  # qualified ("?..." when not known)
    attributes: dict[str, Binding] = field(default_factory=dict)
    setters: tuple = ()  # ((method, args), ...): calls on self that may name the attribute they set
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class TypeIndex:
    """The classes and functions a file can reach (its own, and those of the tree its
    shapes name, transitively), by qualified name. Plain data: it crosses processes and
    goes into the result cache's key."""

    module: str = ""
    classes: dict[str, ClassTypes] = field(default_factory=dict)
    functions: dict[str, FunctionTypes] = field(default_factory=dict)

    def fingerprint(self) -> str:
        def binding(b: Binding) -> list:
            return [b.value, b.mutations]
        return json.dumps([
            self.module,
            [[q, list(c.bases), {k: binding(v) for k, v in sorted(c.attributes.items())}, c.setters, c.methods]
             for q, c in sorted(self.classes.items())],
            [[q, f.returns, {k: binding(v) for k, v in sorted(f.locals.items())}, f.owner]
             for q, f in sorted(self.functions.items())],
        ])


# -- scanning one module ------------------------------------------------------------------

@dataclass
class _RawFunction:
    returns: list = field(default_factory=list)
    bindings: dict[str, list] = field(default_factory=dict)
    mutations: dict[str, list] = field(default_factory=dict)
    owner: str = ""


@dataclass
class _RawClass:
    bases: list = field(default_factory=list)  # base spellings
    bindings: dict[str, list] = field(default_factory=dict)
    mutations: dict[str, list] = field(default_factory=dict)
    setters: list = field(default_factory=list)
    methods: list = field(default_factory=list)


@dataclass
class ModuleTypes:
    """What one module's code builds, with names still as spelled (``("ref", "nn.Linear")``);
    ``PackageIndex`` resolves them once every module is scanned."""

    functions: dict[str, _RawFunction] = field(default_factory=dict)  # key: dotted path in the module ("" = module code)
    classes: dict[str, _RawClass] = field(default_factory=dict)
    variables: set[str] = field(default_factory=set)  # module-level names bound by assignment


def _any(shapes: list) -> tuple:
    unique = list(dict.fromkeys(shapes))
    if not unique:
        return UNKNOWN_SHAPE
    return unique[0] if len(unique) == 1 else ("any", tuple(unique))


def _bound_names(fn: ast.AST) -> set[str]:
    """The names a function body binds (its locals), from its statements' targets (nested
    definitions' own bodies excluded; names bound inside expressions, by ``:=``, are not)."""
    out: set[str] = set()
    args = fn.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            out.add(a.arg)
    declared: set[str] = set()

    def targets(node) -> None:
        kind = type(node)
        if kind is ast.Name:
            out.add(node.id)
        elif kind in (ast.Tuple, ast.List):
            for elt in node.elts:
                targets(elt)
        elif kind is ast.Starred:
            targets(node.value)

    def statements(body) -> None:
        for node in body:
            kind = type(node)
            if kind is ast.Assign:
                for target in node.targets:
                    targets(target)
            elif kind in (ast.AnnAssign, ast.AugAssign):
                targets(node.target)
            elif kind in (ast.For, ast.AsyncFor):
                targets(node.target)
                statements(node.body)
                statements(node.orelse)
            elif kind in (ast.While, ast.If):
                statements(node.body)
                statements(node.orelse)
            elif kind in (ast.With, ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars)
                statements(node.body)
            elif kind is ast.Try or kind.__name__ == "TryStar":
                statements(node.body)
                for handler in node.handlers:
                    if handler.name:
                        out.add(handler.name)
                    statements(handler.body)
                statements(node.orelse)
                statements(node.finalbody)
            elif kind is ast.Match:
                for case in node.cases:
                    statements(case.body)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                out.add(node.name)
            elif kind in (ast.Import, ast.ImportFrom):
                out.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif kind in (ast.Global, ast.Nonlocal):
                declared.update(node.names)
            elif kind is ast.Delete:
                for target in node.targets:
                    targets(target)

    statements(fn.body)
    return out - declared


class _Scope:
    """Shapes of expressions in one function (or the module's code)."""

    def __init__(self, key: str, raw, locals_: set[str], params: set[str], self_name: str | None, owner: str):
        self.key, self.raw, self.locals, self.params = key, raw, locals_, params
        self.self_name, self.owner = self_name, owner
        self.hidden: set[str] = set()  # comprehension targets: unknown
        self.cls: _RawClass | None = None  # the class whose method this is: what self.X = ... binds
        self.annotations: dict[str, str] = {}  # parameter -> its annotation, a dotted name as spelled

    def dotted(self, node) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.locals or node.id in self.hidden:
            return None
        parts.append(node.id)
        return ".".join(reversed(parts))

    def shape(self, node, depth: int = 0) -> tuple:
        if depth > 40:
            return UNKNOWN_SHAPE
        kind = type(node)
        d = depth + 1
        if kind is ast.Constant:
            if type(node.value) is str:
                return ("str", node.value)
            if type(node.value) is int:
                return ("int", node.value)
            return UNKNOWN_SHAPE
        if kind is ast.UnaryOp and isinstance(node.op, ast.USub) and type(node.operand) is ast.Constant \
                and type(node.operand.value) is int:
            return ("int", -node.operand.value)
        if kind is ast.Name:
            if node.id in self.hidden:
                return UNKNOWN_SHAPE
            if node.id == self.self_name and self.owner:
                return ("self", self.owner)
            if node.id in self.params:
                annotation = self.annotations.get(node.id)
                return ("typed", ("ref", annotation)) if annotation else UNKNOWN_SHAPE
            if node.id in self.locals:
                return ("var", self.key, node.id)
            return ("ref", node.id)
        if kind is ast.Attribute:
            spelled = self.dotted(node)
            if spelled is not None:
                return ("ref", spelled)
            return ("get", self.shape(node.value, d), node.attr)
        if kind is ast.Subscript:
            index = node.slice
            key = ("slice",) if isinstance(index, ast.Slice) else self.shape(index, d)
            return ("item", self.shape(node.value, d), key)
        if kind is ast.Call:
            args = tuple(("*", self.shape(a.value, d)) if isinstance(a, ast.Starred) else self.shape(a, d)
                         for a in node.args[:_MAX_ITEMS])
            kwargs = tuple((k.arg or "**", self.shape(k.value, d)) for k in node.keywords)
            func = self.shape(node.func, d)
            if func == ("ref", "dict") and "dict" not in self.locals:
                pairs = tuple((("str", k), v) for k, v in kwargs if k != "**")
                open_ = any(k == "**" for k, _ in kwargs) or bool(args)
                return ("map", pairs, open_)
            return ("call", func, args, kwargs)
        if kind in (ast.List, ast.Tuple, ast.Set):
            items = tuple(("*", self.shape(e.value, d)) if isinstance(e, ast.Starred) else self.shape(e, d)
                          for e in node.elts[:_MAX_ITEMS])
            return ("seq", items, len(node.elts) > _MAX_ITEMS)
        if kind is ast.Dict:
            pairs = tuple((self.shape(k, d) if k is not None else ("**",), self.shape(v, d))
                          for k, v in list(zip(node.keys, node.values))[:_MAX_ITEMS])
            return ("map", tuple(p for p in pairs if p[0] != ("**",)),
                    len(node.keys) > _MAX_ITEMS or any(k is None for k in node.keys))
        if kind in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return ("seq", (self._comprehension(node, node.elt, d),), True)
        if kind is ast.IfExp:
            return _any([self.shape(node.body, d), self.shape(node.orelse, d)])
        if kind is ast.BoolOp:
            return _any([self.shape(v, d) for v in node.values])
        if kind is ast.NamedExpr:
            return self.shape(node.value, d)
        return UNKNOWN_SHAPE

    def _comprehension(self, node, elt, depth: int) -> tuple:
        added = set()
        for gen in node.generators:
            for target in ast.walk(gen.target):
                if isinstance(target, ast.Name) and target.id not in self.hidden:
                    added.add(target.id)
        self.hidden |= added
        try:
            return self.shape(elt, depth)
        finally:
            self.hidden -= added

    # -- statements --------------------------------------------------------------------
    def bind(self, target, value: tuple) -> None:
        kind = type(target)
        if kind is ast.Name:
            if target.id in self.locals:
                self.raw.bindings.setdefault(target.id, []).append(value)
        elif kind is ast.Attribute:
            owner = self.container(target.value)
            if owner == ("self",) and self.cls is not None:  # self.X = value
                self.cls.bindings.setdefault(target.attr, []).append(value)
        elif kind is ast.Subscript:
            key = ("slice",) if isinstance(target.slice, ast.Slice) else self.shape(target.slice)
            self.mutate(target.value, "__setitem__", (key, value))
        elif kind in (ast.Tuple, ast.List):
            items = value[1] if value[0] == "seq" and len(value[1]) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.bind(elt.value, UNKNOWN_SHAPE)
                else:
                    self.bind(elt, items[i] if items is not None else ("item", value, ("int", i)))

    def container(self, node):
        """("self",) for ``self``; ("attr", X) for ``self.X``; ("var", name) for a local."""
        if isinstance(node, ast.Name):
            if node.id == self.self_name and self.owner:
                return ("self",)
            if node.id in self.locals and node.id not in self.params:
                return ("var", node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == self.self_name and self.owner:
            return ("attr", node.attr)
        return None

    def mutate(self, node, method: str, args: tuple) -> None:
        where = self.container(node)
        if where is None:
            return
        if where[0] == "attr" and self.cls is not None:
            self.cls.mutations.setdefault(where[1], []).append((method, args))
        elif where[0] == "var":
            self.raw.mutations.setdefault(where[1], []).append((method, args))

    def call(self, node: ast.Call) -> None:
        """A call as a statement: one that may change what a name or ``self`` holds."""
        func = node.func
        args = tuple(("*", self.shape(a.value)) if isinstance(a, ast.Starred) else self.shape(a) for a in node.args)
        if isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) == 3 \
                and self.container(node.args[0]) == ("self",) and self.cls is not None:
            self.cls.setters.append(("setattr", args[1:]))
        elif isinstance(func, ast.Attribute):
            where = self.container(func.value)
            if where == ("self",):
                if self.cls is not None and len(node.args) >= 2 and not node.keywords:
                    self.cls.setters.append((func.attr, args))
            elif where is not None:
                self.mutate(func.value, func.attr, args)

    def statements(self, body) -> None:
        for stmt in body:
            kind = type(stmt)
            if kind is ast.Assign:
                value = self.shape(stmt.value)
                for target in stmt.targets:
                    self.bind(target, value)
            elif kind is ast.AnnAssign:
                if stmt.value is not None:
                    self.bind(stmt.target, self.shape(stmt.value))
            elif kind is ast.AugAssign:
                if isinstance(stmt.op, ast.Add):
                    self.mutate(stmt.target, "extend", (self.shape(stmt.value),))
            elif kind is ast.Expr:
                if isinstance(stmt.value, ast.Call):
                    self.call(stmt.value)
            elif kind is ast.Return:
                if stmt.value is not None:
                    self.raw.returns.append(self.shape(stmt.value))
            elif kind in (ast.For, ast.AsyncFor):
                self.bind(stmt.target, ("iter", self.shape(stmt.iter)))
                self.statements(stmt.body)
                self.statements(stmt.orelse)
            elif kind in (ast.While, ast.If):
                self.statements(stmt.body)
                self.statements(stmt.orelse)
            elif kind in (ast.With, ast.AsyncWith):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        self.bind(item.optional_vars, UNKNOWN_SHAPE)
                self.statements(stmt.body)
            elif kind is ast.Try or kind.__name__ == "TryStar":
                self.statements(stmt.body)
                for handler in stmt.handlers:
                    self.statements(handler.body)
                self.statements(stmt.orelse)
                self.statements(stmt.finalbody)
            elif kind is ast.Match:
                for case in stmt.cases:
                    self.statements(case.body)


def scan_types(tree: ast.Module) -> ModuleTypes:
    """The shapes of one module's classes (top-level), functions (top-level and methods)
    and top-level code; names as spelled."""
    out = ModuleTypes()
    module_raw = out.functions[""] = _RawFunction()
    top_names = set()
    for node in ast.walk(ast.Module(body=[s for s in tree.body if not isinstance(
            s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))], type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            top_names.add(node.id)
    out.variables = top_names

    def function(fn, key: str, owner: str, cls: _RawClass | None) -> None:
        raw = out.functions[key] = _RawFunction(owner=owner)
        bound = _bound_names(fn)
        params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                                  fn.args.vararg, fn.args.kwarg] if a is not None}
        positional = [*fn.args.posonlyargs, *fn.args.args]
        is_static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)
        self_name = positional[0].arg if owner and positional and not is_static else None
        scope = _Scope(key, raw, bound, params, self_name, owner)
        scope.cls = cls
        # ``embeddings: nn.Embedding``: an instance of the annotated class, built elsewhere
        scope.annotations = {a.arg: _spelling(a.annotation) for a in [*fn.args.posonlyargs, *fn.args.args,
                                                                      *fn.args.kwonlyargs]
                             if a.annotation is not None and _spelling(a.annotation)}
        scope.statements(fn.body)

    def visit(body) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function(node, node.name, "", None)
            elif isinstance(node, ast.ClassDef):
                cls = out.classes[node.name] = _RawClass(bases=[_spelling(b) for b in node.bases])
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        cls.methods.append(item.name)
                        function(item, f"{node.name}.{item.name}", node.name, cls)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", ()):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))

    visit(tree.body)
    scope = _Scope("", module_raw, top_names, set(), None, "")
    scope.statements([s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))])
    return out


def _spelling(node) -> str | None:
    node = node.value if isinstance(node, ast.Subscript) else node
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# -- resolving a module's shapes --------------------------------------------------------

def resolve_shape(shape: tuple, module: str, resolve, refs: set[str]) -> tuple:
    """``shape`` with its ``ref``s qualified (``resolve(spelled)`` -> qualified or None),
    its ``var``/``self`` scopes qualified by ``module``; ``refs`` collects what it names."""
    kind = shape[0]
    if kind == "ref":  # resolve: the spelling -> ("ref", qualified), a module variable's shape, or None
        found = resolve(shape[1])
        if found is None:
            return UNKNOWN_SHAPE
        refs.add(found[1])
        return found
    if kind == "var":
        scope = f"{module}.{shape[1]}" if shape[1] else module
        refs.add(scope)
        return ("var", scope, shape[2])
    if kind == "self":
        qualified = f"{module}.{shape[1]}"
        refs.add(qualified)
        return ("self", qualified)
    if kind in ("get", "*"):
        return (kind, resolve_shape(shape[1], module, resolve, refs), *shape[2:])
    if kind == "typed":
        return ("typed", resolve_shape(shape[1], module, resolve, refs))
    if kind == "iter":
        return ("iter", resolve_shape(shape[1], module, resolve, refs))
    if kind == "item":
        return ("item", resolve_shape(shape[1], module, resolve, refs), resolve_shape(shape[2], module, resolve, refs))
    if kind == "call":
        return ("call", resolve_shape(shape[1], module, resolve, refs),
                tuple(resolve_shape(a, module, resolve, refs) for a in shape[2]),
                tuple((k, resolve_shape(v, module, resolve, refs)) for k, v in shape[3]))
    if kind == "seq":
        return ("seq", tuple(resolve_shape(s, module, resolve, refs) for s in shape[1]), shape[2])
    if kind == "map":
        return ("map", tuple((resolve_shape(k, module, resolve, refs), resolve_shape(v, module, resolve, refs))
                             for k, v in shape[1]), shape[2])
    if kind == "any":
        return ("any", tuple(resolve_shape(s, module, resolve, refs) for s in shape[1]))
    return shape


def _mutations(calls: list, module: str, resolve, refs: set[str]) -> tuple:
    return tuple((m, tuple(resolve_shape(a, module, resolve, refs) for a in args)) for m, args in calls)


def _bindings(values: dict[str, list], mutations: dict[str, list], module: str, resolve, refs) -> dict[str, Binding]:
    return {name: Binding(_any([resolve_shape(v, module, resolve, refs) for v in values.get(name, ())]),
                          _mutations(mutations.get(name, []), module, resolve, refs))
            for name in sorted(set(values) | set(mutations))}


def resolve_module(types: ModuleTypes, module: str, resolve, bases) -> tuple[dict, dict]:
    """(classes, functions) of one module, by qualified name, with their names qualified
    (``resolve(spelled)``: see ``resolve_shape``; ``bases(class)``: its qualified bases)."""
    classes: dict[str, ClassTypes] = {}
    functions: dict[str, FunctionTypes] = {}
    refs: set[str] = set()  # not needed here: PackageIndex.types follows shape_names
    for name, raw in types.classes.items():
        qualified = f"{module}.{name}"
        attrs = _bindings(raw.bindings, raw.mutations, module, resolve, refs)
        setters = _mutations(raw.setters, module, resolve, refs)
        classes[qualified] = ClassTypes(bases(qualified), attrs, setters, tuple(raw.methods))
    for key, raw in types.functions.items():
        qualified = f"{module}.{key}" if key else module
        returns = _any([resolve_shape(r, module, resolve, refs) for r in raw.returns])
        locals_ = _bindings(raw.bindings, raw.mutations, module, resolve, refs)
        owner = f"{module}.{raw.owner}" if raw.owner else ""
        functions[qualified] = FunctionTypes(returns, locals_, owner)
    return classes, functions


def shape_names(shape: tuple, found: set) -> set:
    """What a resolved shape refers to: qualified names (``ref``, ``self``),
    ``(scope, local)`` pairs (``var``) and ``("method", class, name)`` for ``self.name``,
    added to ``found``."""
    stack = [shape]
    while stack:
        item = stack.pop()
        if type(item) is not tuple or not item:
            continue
        kind = item[0]
        if type(kind) is not str:  # a tuple of shapes (arguments, items, pairs)
            stack.extend(part for part in item if type(part) is tuple)
        elif (kind == "ref" or kind == "self") and type(item[1]) is str:
            found.add(item[1])
        elif kind == "get" and len(item) == 3 and type(item[1]) is tuple and item[1][:1] == ("self",):
            found.add(item[1][1])
            found.add(("method", item[1][1], item[2]))  # self.m: the method, if it is one
        elif kind == "var" and len(item) == 3 and type(item[2]) is str:
            found.add((item[1], item[2]))
        else:
            stack.extend(part for part in item[1:] if type(part) is tuple)
    return found
