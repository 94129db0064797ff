"""Which torch layer an expression holds, asked of the tree's type index.

The engine's type index (``transpile/engine/type_index.py``) describes values by how the
code builds them, knowing nothing of torch. This module reads those shapes as torch
does: ``nn.Sequential(a, b)`` and ``nn.ModuleList([...])`` hold their arguments in
order, ``nn.ModuleDict(dict(wte=...))`` by key (read as an attribute too),
``self.add_module(name, layer)`` sets an attribute, ``.modules()`` gives layers of any
class, a helper's call gives what it returns. The answer for ``receiver.attr`` is the
MindSpore name of ``attr`` when the index decides it, or ``RUN_TIME`` when the receiver
is a layer whose class the index cannot tell (the converted code asks the layer itself).
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpile.engine.type_index import UNKNOWN_SHAPE, TypeIndex

RUN_TIME = "<run time>"  # the name is chosen when the code runs

_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
_MODULE_LIST = frozenset({"torch.nn.ModuleList", "torch.nn.modules.container.ModuleList"})
_MODULE_DICT = frozenset({"torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"})
_ORDERED_DICT = frozenset({"collections.OrderedDict", "typing.OrderedDict"})
_NAMING_SETTERS = frozenset({"add_module", "register_module", "setattr"})  # (name, layer)
_MODULE_ITERATORS = frozenset({"modules", "children"})  # layers of any class
_MAX_DEPTH = 30


@dataclass(frozen=True)
class Instance:
    cls: str  # qualified: a torch class, or a class of the tree


@dataclass(frozen=True)
class Container:
    """A torch container or a Python list/dict: items by place, by key, and at unknown places."""

    items: tuple = ()
    keys: tuple = ()  # ((key, value), ...)
    others: tuple = ()  # values at places or keys not known
    module: bool = False  # a torch container (its items are layers)
    tail: tuple = ()  # the last items, after those at unknown places (known by negative index)


@dataclass(frozen=True)
class OneOf:
    values: tuple


@dataclass(frozen=True)
class Reference:
    name: str  # a qualified name used as a value (a class, a function)


@dataclass(frozen=True)
class Method:
    function: str  # the qualified function a bound method runs


class _Unknown:
    pass


UNKNOWN = _Unknown()
_MISSING = _Unknown()  # an attribute no code of the class sets
ANY_LAYER = Instance("?")  # a layer of a class not known here


def attribute_renames(entry) -> dict[str, str]:
    """A torch layer's parameters, and the attributes holding its constructor arguments
    (``m.out_features`` -> ``m.out_channels``), under MindSpore's names."""
    renames = {k: v for k, v in entry.weights.items() if v and v != k}
    renames.update({k: v for k, v in entry.rename.items()
                    if k not in ("weight", "bias") and k not in renames and v != k and v != "*" and not v.startswith("has_")})
    return renames


_BY_TARGET: dict[int, tuple[object, dict]] = {}  # id(tables) -> (tables, target -> entry)


def converted_layer_entry(tables, cls: str):
    """The torch layer entry a MindSpore layer class stands for (``mindspore.nn.Embedding``
    -> ``torch.nn.Embedding``): code converted already (a class converted by hand beside
    torch code) builds MindSpore's layers, read with torch's names by the rest. None when
    no torch layer converts to it, or those that do name their attributes differently."""
    cached = _BY_TARGET.get(id(tables))
    by_target = cached[1] if cached is not None and cached[0] is tables else None
    if by_target is None:
        grouped: dict[str, list] = {}
        for entry in tables.entries.values():
            if entry.kind == "class" and entry.target and entry.target.startswith("mindspore."):
                grouped.setdefault(entry.target, []).append(entry)
        by_target = {target: entries[0] for target, entries in grouped.items()
                     if all(attribute_renames(e) == attribute_renames(entries[0]) for e in entries)}
        _BY_TARGET[id(tables)] = (tables, by_target)
    return by_target.get(cls)


def _converted(entry, args: tuple, kwargs: tuple) -> bool:
    """Whether a construction is converted (as ``table_calls.accepts_arguments`` says of the
    call, from its shape): a layer built with an argument MindSpore's cannot take stays
    torch's, with torch's attribute names. Starred arguments are converted when it runs."""
    if entry.unsupported:
        return False
    if any(a[0] == "*" for a in args) or any(k == "**" for k, _ in kwargs):
        return True
    params = tuple(p for p in entry.params if not p.startswith("*"))
    if len(args) > len(params):
        return False
    bound = dict(zip(params, args))
    for key, value in kwargs:
        if key in bound or (key not in entry.params and key not in entry.kwonly):
            return False
        bound[key] = value
    for key, value in bound.items():
        if key in entry.unsupported_args:
            allowed = entry.allowed.get(key)
            if allowed is None or value[0] not in ("int", "str") or value[1] != allowed:
                return False
    return True


def _one_of(values) -> object:
    flat: list = []
    for v in values:
        for each in (v.values if isinstance(v, OneOf) else (v,)):
            if each not in flat:
                flat.append(each)
    if not flat:
        return UNKNOWN
    return flat[0] if len(flat) == 1 else OneOf(tuple(flat))


class LayerTypes:
    """Values of the type index's shapes, and the MindSpore names of layer attributes."""

    def __init__(self, index: TypeIndex, tables):
        self.index, self.tables = index, tables
        self._active: set = set()

    # -- values ----------------------------------------------------------------------
    def value(self, shape: tuple, depth: int = 0):
        if depth > _MAX_DEPTH or shape in self._active:
            return UNKNOWN
        self._active.add(shape)
        try:
            return self._value(shape, depth + 1)
        finally:
            self._active.discard(shape)

    def _value(self, shape: tuple, d: int):
        kind = shape[0]
        if kind == "self":
            return Instance(shape[1])
        if kind == "str":
            return _Text(shape[1])
        if kind == "ref":
            return Reference(shape[1])
        if kind == "var":
            scope = self.index.functions.get(shape[1])
            binding = scope.locals.get(shape[2]) if scope is not None else None
            return UNKNOWN if binding is None else self._bound(binding, d)
        if kind == "get":
            return self.attribute(self.value(shape[1], d), shape[2], d)
        if kind == "item":
            return self.item(self.value(shape[1], d), shape[2], d)
        if kind == "iter":
            return self._each(self.value(shape[1], d))
        if kind == "call":
            return self._call(shape, d)
        if kind == "seq":
            items, others, tail = self._items(shape[1], d)
            if shape[2]:  # a comprehension: its items at unknown places
                return Container((), (), items + others + tail)
            return Container(items, (), others, tail=tail)
        if kind == "map":
            keys = tuple((k[1], self.value(v, d)) for k, v in shape[1] if k[0] == "str")
            others = tuple(self.value(v, d) for k, v in shape[1] if k[0] != "str")
            return Container((), keys, others + ((UNKNOWN,) if shape[2] else ()))
        if kind == "any":
            return _one_of(self.value(s, d) for s in shape[1])
        if kind == "typed":  # a parameter annotated with a Module class: an instance of it
            inner = shape[1]
            return Instance(inner[1]) if inner[0] == "ref" and self._is_module(inner[1]) else UNKNOWN
        return UNKNOWN

    def _items(self, shapes, d: int) -> tuple[tuple, tuple, tuple]:
        """(items at known places, items at unknown places, the items after those) of a
        display or argument list."""
        items: list = []
        others: list = []
        tail: list = []
        for s in shapes:
            if s[0] == "*":
                inner = self.value(s[1], d)
                if isinstance(inner, Container) and not others and not inner.others:
                    items.extend(inner.items)
                else:
                    others.extend(tail)
                    tail = list(inner.tail) if isinstance(inner, Container) else []
                    others.extend(inner.items + inner.others if isinstance(inner, Container) else (UNKNOWN,))
            elif others:
                tail.append(self.value(s, d))
            else:
                items.append(self.value(s, d))
        return tuple(items), tuple(others), tuple(tail)

    def _bound(self, binding, d: int, setters: tuple = ()):
        """A name's value with the calls made on it applied (appends in loops, stores)."""
        value = self.value(binding.value, d)
        for method, args in binding.mutations:
            value = self._mutated(value, method, args, d)
        return value

    def _mutated(self, value, method: str, args: tuple, d: int):
        if not isinstance(value, Container):
            return value
        if method == "append" and args:  # appended after everything, at a place not known
            return Container(value.items, value.keys, value.others + value.tail + (self.value(args[-1], d),), value.module)
        if method == "insert" and args:
            return Container(value.items, value.keys, value.others + value.tail + (self.value(args[-1], d),), value.module)
        if method == "extend" and args:
            extra = self.value(args[0], d)
            more = (extra.items + extra.others + extra.tail + tuple(v for _, v in extra.keys)
                    if isinstance(extra, Container) else (UNKNOWN,))
            return Container(value.items, value.keys, value.others + value.tail + more, value.module)
        if method in ("add_module", "register_module", "__setitem__", "update") and args:
            key = args[0]
            new = self.value(args[1], d) if len(args) > 1 else UNKNOWN
            if method == "update":
                extra = self.value(args[0], d)
                if isinstance(extra, Container):
                    return Container(value.items, value.keys + extra.keys, value.others + extra.others + extra.items
                                     + extra.tail, value.module, value.tail)
                return Container(value.items, value.keys, value.others + (UNKNOWN,), value.module, value.tail)
            if key[0] == "str":
                return Container(value.items, value.keys + ((key[1], new),), value.others, value.module, value.tail)
            return Container(value.items, value.keys, value.others + value.tail + (new,), value.module)
        return value

    def _each(self, value):
        if isinstance(value, Container):
            return _one_of(value.items + value.others + value.tail + tuple(v for _, v in value.keys))
        if isinstance(value, _ModuleIteration):
            return ANY_LAYER
        return UNKNOWN

    def _call(self, shape: tuple, d: int):
        func = self.value(shape[1], d)
        if isinstance(func, Method):
            return self._returns(func.function, d)
        if isinstance(func, _ModuleIterator):
            return _ModuleIteration()
        if not isinstance(func, Reference):
            return UNKNOWN
        name = func.name
        args, kwargs = shape[2], shape[3]
        if name in _SEQUENTIAL:
            if len(args) == 1 and args[0][0] == "call":  # Sequential(OrderedDict([...]))
                inner = self.value(args[0], d)
                if isinstance(inner, Container) and inner.keys:
                    return Container((), inner.keys, inner.others, True)
            items, others, tail = self._items(args, d)
            return Container(items, (), others, True, tail)
        if name in _MODULE_LIST:
            inner = self.value(args[0], d) if args else Container()
            return self._as_module_container(inner)
        if name in _MODULE_DICT:
            inner = self.value(args[0], d) if args else Container()
            return self._as_module_container(inner)
        if name in _ORDERED_DICT:
            inner = self.value(args[0], d) if args else Container()
            if isinstance(inner, Container):  # OrderedDict([("name", layer), ...])
                keys, others = [], list(inner.others)
                for pair in inner.items:
                    if isinstance(pair, Container) and len(pair.items) == 2 and isinstance(pair.items[0], _Text):
                        keys.append((pair.items[0].text, pair.items[1]))
                    else:
                        others.append(UNKNOWN)
                return Container((), tuple(keys), tuple(others))
            return Container((), (), (UNKNOWN,))
        if name in self.index.functions:
            return self._returns(name, d)
        if name in self.index.classes:
            return Instance(name)
        entry = self.tables.lookup(name)
        if entry is not None and entry.kind == "class" and _converted(entry, args, kwargs):
            return Instance(name)
        if converted_layer_entry(self.tables, name) is not None:
            return Instance(name)
        return UNKNOWN

    def _as_module_container(self, inner):
        if isinstance(inner, Container):
            return Container(inner.items, inner.keys, inner.others, True, inner.tail)
        return Container((), (), (ANY_LAYER,), True)

    def _returns(self, function: str, d: int):
        info = self.index.functions.get(function)
        return UNKNOWN if info is None else self.value(info.returns, d)

    def attribute(self, base, attr: str, d: int):
        if isinstance(base, OneOf):
            return _one_of(self.attribute(b, attr, d) for b in base.values)
        if isinstance(base, Container):
            if base.module and attr in _MODULE_ITERATORS:
                return _ModuleIterator()
            found = [v for k, v in base.keys if k == attr]
            if found:
                return found[-1]
            rest = base.others + base.tail
            return _one_of(rest) if base.module and rest else UNKNOWN
        if not isinstance(base, Instance):
            return UNKNOWN
        if attr in _MODULE_ITERATORS and self._is_module(base.cls):
            return _ModuleIterator()
        found = self._class_attribute(base.cls, attr, d, frozenset())
        if found is _MISSING:  # set by a name computed at run time, if at all
            unnamed = self._unnamed(base.cls, d, frozenset())
            return _one_of(unnamed) if unnamed else UNKNOWN
        return found

    def _class_attribute(self, cls: str, attr: str, d: int, seen: frozenset):
        """What ``attr`` holds on an instance of ``cls`` by the class's code or its bases';
        ``_MISSING`` when none of them sets it by that name."""
        info = self.index.classes.get(cls)
        if info is None or cls in seen:
            return _MISSING
        if attr in info.attributes:
            found = self._bound(info.attributes[attr], d)
            if found is UNKNOWN and self._outside_layer(info.attributes[attr].value) and self._is_module(cls):
                return ANY_LAYER
            return found
        if attr in info.methods:
            return Method(f"{cls}.{attr}")
        named = [self.value(args[-1], d) for method, args in info.setters
                 if method in _NAMING_SETTERS and len(args) >= 2 and args[0] == ("str", attr)]
        if named:
            return _one_of(named)
        for base in info.bases:
            found = self._class_attribute(base, attr, d, seen | {cls})
            if found is not _MISSING:
                return found
        return _MISSING

    @staticmethod
    def _outside_layer(shape: tuple) -> bool:
        """A Module's attribute built by a package outside the tree that builds on torch
        (effdet's ``self.conv_dw = create_conv2d(...)``, timm's): a layer, of a class not
        known here."""
        from ..outside_packages import builds_on_torch

        return (shape[0] == "call" and shape[1][0] == "ref"
                and builds_on_torch(shape[1][1].split(".")[0]) and shape[1][1].split(".")[0] != "torch")

    def _unnamed(self, cls: str, d: int, seen: frozenset) -> list:
        """The layers the class and its bases set by names computed at run time."""
        info = self.index.classes.get(cls)
        if info is None or cls in seen:
            return []
        found = [self.value(args[-1], d) for method, args in info.setters
                 if method in _NAMING_SETTERS and len(args) >= 2 and args[0][0] != "str"]
        for base in info.bases:
            found += self._unnamed(base, d, seen | {cls})
        return found

    def item(self, base, key: tuple, d: int):
        if isinstance(base, OneOf):
            return _one_of(self.item(b, key, d) for b in base.values)
        if not isinstance(base, Container):
            return UNKNOWN
        if key[0] == "slice":
            return Container((), (), base.items + base.others + base.tail, base.module)
        if key[0] == "int":
            i = key[1]
            if 0 <= i < len(base.items):
                return base.items[i]
            if i < 0 and -i <= len(base.tail):
                return base.tail[i]
            if i < 0 and not base.others and not base.tail and -i <= len(base.items):
                return base.items[i]
            if i < 0 and (base.others or base.tail):  # items at unknown places come after the known ones
                return _one_of(base.others + base.tail)
        if key[0] == "str":
            found = [v for k, v in base.keys if k == key[1]]
            if found:
                return found[-1]
        everything = base.items + base.others + base.tail + tuple(v for _, v in base.keys)
        return _one_of(everything) if everything else UNKNOWN

    def _is_module(self, cls: str, seen: frozenset = frozenset()) -> bool:
        if cls.startswith("torch.nn."):
            return True
        info = self.index.classes.get(cls)
        if info is None or cls in seen:
            return False
        return any(self._is_module(b, seen | {cls}) for b in info.bases)

    def tree_module(self, value) -> bool:
        """Whether ``value`` is an instance of a Module class of the tree (each of several)."""
        if isinstance(value, OneOf):
            return all(self.tree_module(v) for v in value.values)
        return (isinstance(value, Instance) and value.cls in self.index.classes
                and self._is_module(value.cls))

    @staticmethod
    def known(value) -> bool:
        """Whether the index says anything of ``value``."""
        return value is not UNKNOWN

    def module_defining(self, name: str) -> bool:
        """Whether a Module class the index knows sets attribute ``name`` or defines a
        method of that name."""
        return any((name in info.attributes or name in info.methods) and self._is_module(cls)
                   for cls, info in self.index.classes.items())

    def module_value(self, value) -> bool:
        """Whether ``value`` is a Module: a torch layer, a Module class of the tree, a layer
        of a class not known (each of several)."""
        if isinstance(value, OneOf):
            return all(self.module_value(v) for v in value.values)
        return (value is ANY_LAYER or (isinstance(value, Instance) and self._is_module(value.cls))
                or (isinstance(value, Container) and value.module))

    def defines(self, cls: str, name: str, seen: frozenset = frozenset()) -> bool:
        """Whether the tree's class ``cls`` or a base of it in the tree defines method ``name``."""
        info = self.index.classes.get(cls)
        if info is None or cls in seen:
            return False
        return name in info.methods or any(self.defines(b, name, seen | {cls}) for b in info.bases)

    def call_entry(self, value, seen: frozenset = frozenset()):
        """The torch layer entry whose call an instance of ``value`` answers: its class's,
        or, for a class of the tree that defines no ``forward``, its bases' (a subclass of
        ``nn.Transformer`` is called with torch's keywords). None when not known, or when
        several classes answer otherwise."""
        if isinstance(value, OneOf):
            entries = {id(e): e for e in (self.call_entry(v, seen) for v in value.values)}
            return next(iter(entries.values())) if len(entries) == 1 else None
        if not isinstance(value, Instance) or value.cls in seen:
            return None
        info = self.index.classes.get(value.cls)
        if info is None:
            entry = self.tables.lookup(value.cls)
            return entry if entry is not None and entry.kind == "class" else None
        if "forward" in info.methods or "__call__" in info.methods:
            return None
        for base in info.bases:
            found = self.call_entry(Instance(base), seen | {value.cls})
            if found is not None:
                return found
        return None

    # -- the question -------------------------------------------------------------------
    def rename(self, value, attr: str, defined_by_tree: bool = False) -> str | None:
        """MindSpore's name of ``attr`` read on ``value``: the new name, ``RUN_TIME`` when
        only the running code can tell, None when it stays ``attr``."""
        if isinstance(value, OneOf):
            names = {self.rename(v, attr) for v in value.values}
            if len(names) == 1:
                return names.pop()
            return RUN_TIME
        if value is ANY_LAYER:
            return RUN_TIME
        if not isinstance(value, Instance):
            return None
        entry = self._layer_entry(value.cls, attr, frozenset())
        if entry is None:
            return None
        if entry is RUN_TIME:
            return RUN_TIME
        new = attribute_renames(entry).get(attr)
        return new if new and new != attr else None

    def _layer_entry(self, cls: str, attr: str, seen: frozenset):
        """The torch layer entry whose attribute ``attr`` an instance of ``cls`` has. A class
        of the tree has what its code sets (even one the tables name: converting torch's own
        source, ``torch.nn.modules.linear.Linear`` is the tree's); its bases answer for the rest."""
        info = self.index.classes.get(cls)
        if info is None:
            entry = self.tables.lookup(cls)
            if entry is not None and entry.kind == "class":
                return entry
            return converted_layer_entry(self.tables, cls)
        if cls in seen:
            return None
        if attr in info.attributes or attr in info.methods or any(
                method in _NAMING_SETTERS or method.startswith("register_") for method, _ in info.setters):
            return None  # the class sets it itself (or sets attributes by names only known at run time)
        for base in info.bases:
            found = self._layer_entry(base, attr, seen | {cls})
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class _Text:
    text: str


class _ModuleIterator:
    """``layer.modules`` / ``layer.children``: calling it gives layers of any class."""


class _ModuleIteration:
    """What ``layer.modules()`` gives."""


def index_place(scopes, index: TypeIndex) -> tuple:
    """(qualified function, class, that function's locals, module) of the index where the
    traversal is (``scopes``: the open classes and functions, outermost first): module
    code, a top-level function or a method of a top-level class; (None, None, {}, module)
    elsewhere. The first arguments of ``shape_of``."""
    module = index.module
    kinds = [type(s) for s in scopes]
    if not scopes:
        scope, owner = module, None
    elif kinds == [cst.FunctionDef]:
        scope, owner = f"{module}.{scopes[0].name.value}", None
    elif kinds == [cst.ClassDef, cst.FunctionDef]:
        owner = f"{module}.{scopes[0].name.value}"
        scope = f"{owner}.{scopes[1].name.value}"
    else:
        return None, None, {}, module
    function = index.functions.get(scope)
    return scope, owner, function.locals if function is not None else {}, module


def shape_of(node: cst.BaseExpression, scope: str | None, owner: str | None, locals_: dict, module: str,
             loops: dict | None = None) -> tuple:
    """The index's shape of an expression of the converted file at a place: ``scope`` the
    qualified name of the function it is in (None: not one the index knows), ``owner``
    the class whose method that is, ``locals_`` that function's locals, ``loops`` the
    names the enclosing ``for`` loops bind -> what they iterate over (a name bound by
    several loops of a function holds, in each, what that loop gives)."""
    kind = type(node)
    if kind is cst.Name:
        name = node.value
        if loops and name in loops:
            inner = {k: v for k, v in loops.items() if k != name}
            return ("iter", shape_of(loops[name], scope, owner, locals_, module, inner))
        if owner is not None and name == "self":
            return ("self", owner)
        if scope is not None and name in locals_:
            return ("var", scope, name)
        return UNKNOWN_SHAPE
    if kind is cst.Attribute:
        return ("get", shape_of(node.value, scope, owner, locals_, module, loops), node.attr.value)
    if kind is cst.Subscript and len(node.slice) == 1 and isinstance(node.slice[0].slice, (cst.Index, cst.Slice)):
        index = node.slice[0].slice
        if isinstance(index, cst.Slice):
            key: tuple = ("slice",)
        else:
            key = _key(index.value)
        return ("item", shape_of(node.value, scope, owner, locals_, module, loops), key)
    if kind is cst.Call and isinstance(node.func, cst.Attribute) and not node.args:
        return ("call", shape_of(node.func, scope, owner, locals_, module, loops), (), ())
    if kind in (cst.List, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return ("seq", tuple(shape_of(e.value, scope, owner, locals_, module, loops) for e in node.elements), False)
    return UNKNOWN_SHAPE


def _key(value: cst.BaseExpression) -> tuple:
    if isinstance(value, cst.Integer):
        return ("int", int(value.value, 0))
    if (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
            and isinstance(value.expression, cst.Integer)):
        return ("int", -int(value.expression.value, 0))
    if isinstance(value, cst.SimpleString):
        return ("str", value.evaluated_value) if isinstance(value.evaluated_value, str) else UNKNOWN_SHAPE
    return UNKNOWN_SHAPE
