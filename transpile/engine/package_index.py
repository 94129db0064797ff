"""What a file of a converted tree needs to know about the rest of the tree.

A module such as ``layers/create_act.py`` may never import torch itself and still use
``nn.SELU``: its ``nn`` comes from ``from .activations import *``. Converted alone, the
file looks torch-free and is left as it is, while its ``nn`` becomes MindSpore's once the
sibling is converted. Likewise ``class GluMlp(Mlp)`` with ``from .mlp import Mlp`` is a
Module only because of what ``mlp.py`` defines. ``convert_paths`` therefore indexes every
file of a tree first (CPython's parser: cheap): its dotted module name, its module-level
imports (relative ones resolved), star imports, ``__all__`` and top-level classes with
their bases resolved to qualified names (through imports, star imports and re-exports in
``__init__.py``). Each file is handed a :class:`PackageFacts`: the import bindings its
star imports bring in, the tree classes it names and their bases (transitively), and the
packages it imports from outside the tree. The engine knows nothing of torch: which
bases make a class a Module is for the rewrites to decide.
"""
from __future__ import annotations

import ast
import builtins
import hashlib
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .collector import collector_paused
from .nesting import nesting_depth
from .type_index import ModuleTypes, TypeIndex, resolve_module, scan_types, shape_names

UNKNOWN = "?"  # prefix of a base whose origin the index cannot tell (``?make_base()``)


@dataclass(frozen=True)
class PackageFacts:
    """What one file is handed about its tree (all plain data: it crosses processes and
    goes into the cache key)."""

    module: str = ""  # the file's dotted module name ("pkg.layers.mlp")
    inherited: dict[str, str] = field(default_factory=dict)  # name -> qualified, from star imports
    names: dict[str, str] = field(default_factory=dict)  # spelling in the file -> tree class it names
    class_bases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # tree class -> qualified bases
    outside: tuple[str, ...] = ()  # top-level packages imported from outside the tree (not stdlib)
    # names that files star-importing this one (directly or through another star import)
    # use without binding them: what its imports hand on, even where the file itself no
    # longer uses them
    star_used: tuple[str, ...] = ()
    # names other files of the tree import from this one by name (``from .utils import
    # load_state_dict_from_url``, ``utils.load_state_dict_from_url``): its imports of them
    # are re-exports
    imported_elsewhere: tuple[str, ...] = ()
    types: TypeIndex = field(default_factory=TypeIndex)  # what attributes and names hold (type_index.py)
    # (digest of the text indexed, nesting depth, its line): CPython parsed the file for the
    # index; the pipeline takes the depth from here when it converts that same text. Not in
    # the fingerprint: the cache key holds the source itself.
    measured: tuple[str, int, int] | None = None

    def fingerprint(self) -> str:
        """A stable text of everything handed over (for the result cache's key)."""
        return json.dumps([self.module, sorted(self.inherited.items()), sorted(self.names.items()),
                           sorted((k, list(v)) for k, v in self.class_bases.items()), list(self.outside),
                           list(self.star_used), list(self.imported_elsewhere), self.types.fingerprint()])

    def base_roots(self) -> set[str]:
        """Top-level packages of the bases, outside the tree, of the tree classes the file
        names: a file whose classes derive from a framework's through the tree is about it."""
        return {b.split(".")[0] for bases in self.class_bases.values() for b in bases
                if b not in self.class_bases and not b.startswith(UNKNOWN)}


@dataclass
class _ModuleInfo:
    module: str  # dotted name
    package: str  # the package relative imports start from
    bindings: dict[str, str] = field(default_factory=dict)  # absolute imports: name -> qualified name
    local: dict[str, str] = field(default_factory=dict)  # relative imports, resolved: name -> qualified
    stars: list[str] = field(default_factory=list)  # modules star-imported (absolute names)
    classes: dict[str, list[str | None]] = field(default_factory=dict)  # class -> dotted base spellings
    spellings: set[str] = field(default_factory=set)  # dotted names the file uses
    imported_roots: set[str] = field(default_factory=set)  # top-level packages of absolute imports
    public: frozenset[str] | None = None  # __all__, when it is a literal
    types: ModuleTypes = field(default_factory=ModuleTypes)  # what its code builds (type_index.py)
    measured: tuple[str, int, int] | None = None  # see PackageFacts.measured


def source_digest(text: str) -> str:
    """A digest of a file's text: what a measurement made on it was made on."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def module_name(path: Path, root: Path) -> tuple[str, str]:
    """(dotted module name, its package) of ``path`` in the tree at ``root``: a root
    holding ``__init__.py`` is a package named after its directory."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if (root / "__init__.py").is_file():
        parts.insert(0, root.name)
    is_package = parts and parts[-1] == "__init__"
    if is_package:
        parts.pop()
    name = ".".join(parts)
    return name, name if is_package else name.rpartition(".")[0]


def _relative(package: str, level: int, module: str | None) -> str | None:
    """The absolute module ``from <level dots><module> import ...`` names, or None above the tree."""
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _base_spelling(node: ast.expr) -> str | None:
    """``nn.Module`` for ``nn.Module`` and for ``Generic[T]``'s ``Generic``."""
    return _dotted(node.value if isinstance(node, ast.Subscript) else node)


def _scan(path: Path, root: Path, text: str | None = None) -> _ModuleInfo:
    """What ``path`` (its ``text`` when given, else read) says of itself."""
    module, package = module_name(path, root)
    try:
        text = path.read_text(encoding="utf-8-sig") if text is None else text
    except (UnicodeDecodeError, OSError, ValueError):
        return _ModuleInfo(module, package)
    return _scan_text(text, module, package)


def scan_files(tasks: list[tuple[Path, Path, str | None]]) -> list[_ModuleInfo]:
    """``_scan`` of each (path, root, text) task, in order (the trees CPython's parser builds
    hold no cycles: the collector is paused)."""
    with collector_paused():
        return [_scan(*task) for task in tasks]


def _scan_text(text: str, module: str, package: str) -> _ModuleInfo:
    """What the module ``module`` of package ``package`` with source ``text`` says of itself."""
    info = _ModuleInfo(module, package)
    try:
        tree = ast.parse(text.removeprefix("\ufeff"))
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError, RecursionError, MemoryError):
        return info
    try:  # the pipeline's own measure of the file, from this parse (it would parse the file again)
        info.measured = (source_digest(text), *nesting_depth(tree))
    except RecursionError:
        pass

    def visit(body) -> None:  # module level, including top-level if/try blocks
        for node in body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        info.bindings[alias.asname] = alias.name
                    else:
                        root_name = alias.name.split(".")[0]
                        info.bindings[root_name] = root_name
            elif isinstance(node, ast.ImportFrom):
                star = any(a.name == "*" for a in node.names)
                source = _relative(package, node.level, node.module) if node.level else node.module
                if source is None:
                    continue
                if star:
                    info.stars.append(source)
                for alias in node.names:
                    if alias.name != "*":
                        target = info.local if node.level else info.bindings
                        target[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.ClassDef):
                info.classes[node.name] = [_base_spelling(b) for b in node.bases]
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", ()):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                      for t in node.targets):
                try:
                    info.public = frozenset(ast.literal_eval(node.value))
                except (ValueError, TypeError, SyntaxError):
                    pass

    visit(tree.body)
    # Every node, in no particular order (the results are sets): a stack over the fields,
    # without ast.walk's generators (which cost half of a scan).
    stack, node_type = [tree], ast.AST
    try:
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Import:
                info.imported_roots.update(a.name.split(".")[0] for a in node.names)
            elif kind is ast.ImportFrom:
                if not node.level and node.module:
                    info.imported_roots.add(node.module.split(".")[0])
            elif kind is ast.Attribute or kind is ast.Name:
                spelled = _dotted(node)
                if spelled is not None:
                    info.spellings.add(spelled)
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    stack.extend(item for item in value if isinstance(item, node_type))
                elif isinstance(value, node_type):
                    stack.append(value)
    except RecursionError:  # a pathologically deep file: the pipeline reports it
        pass
    try:
        info.types = scan_types(tree)
    except RecursionError:
        pass
    return info


class PackageIndex:
    """Every ``.py`` file under a root: imports, classes and module names, by resolved path."""

    def __init__(self, root: Path, files: list[Path], texts: dict[Path, str] | None = None,
                 scan_all: Callable[[list[tuple[Path, Path, str | None]]], list[_ModuleInfo]] | None = None):
        """``texts``: resolved path -> the text to index instead of the file's (the sources
        a run recorded before overwriting them, so that facts come from their first form).
        ``scan_all``: what scans the files (``scan_files`` here, or the same in worker processes)."""
        root = root.resolve()
        texts = texts or {}
        paths = [f.resolve() for f in files if f.suffix == ".py"]
        tasks = [(path, root, texts.get(path)) for path in paths]
        self._files = dict(zip(paths, (scan_all or scan_files)(tasks)))
        self._modules = {info.module: info for info in self._files.values() if info.module}
        self._tree_roots = {name.split(".")[0] for name in self._modules}
        self._star_used: dict[str, frozenset[str]] | None = None
        self._imported_elsewhere: dict[str, frozenset[str]] | None = None
        self._resolved: dict[str, tuple[dict, dict]] = {}  # module -> resolve_module's answer

    @classmethod
    def of_text(cls, text: str, module: str = "__main__") -> "PackageIndex":
        """The index of one module given as text (a file converted on its own)."""
        index = cls.__new__(cls)
        info = _scan_text(text, module, module.rpartition(".")[0])
        index._files = {}
        index._modules = {module: info}
        index._tree_roots = {module.split(".")[0]}
        index._resolved = {}
        index._star_used = None
        index._imported_elsewhere = None
        return index

    # -- star-imported import bindings (unchanged behaviour) -------------------
    def _exported(self, module: str, seen: set[str]) -> dict[str, str]:
        """The import bindings ``from <module> import *`` brings in (transitively)."""
        info = self._modules.get(module)
        if info is None or module in seen:
            return {}
        seen.add(module)
        out: dict[str, str] = {}
        for star in info.stars:
            out.update(self._exported(star, seen))
        out.update(info.bindings)
        if info.public is not None:
            return {k: v for k, v in out.items() if k in info.public}
        return {k: v for k, v in out.items() if not k.startswith("_")}

    def inherited(self, path: Path) -> dict[str, str]:
        """Bindings this file gets from its star imports and does not bind itself."""
        info = self._files.get(path.resolve())
        if info is None or not info.stars:
            return {}
        out: dict[str, str] = {}
        for star in info.stars:
            out.update(self._exported(star, {info.module}))
        return {k: v for k, v in sorted(out.items()) if k not in info.bindings}

    # -- names and classes ------------------------------------------------------
    def _lookup(self, module: str, name: str, seen: set[tuple[str, str]], values: bool = False) -> str | None:
        """The qualified name ``name`` holds at the top of tree module ``module`` (with
        ``values``, its functions and variables count as well as its classes)."""
        info = self._modules.get(module)
        if info is None or (module, name) in seen:
            return None
        seen.add((module, name))
        if name in info.classes or values and (name in info.types.functions or name in info.types.variables):
            return f"{module}.{name}"
        for table in (info.local, info.bindings):
            if name in table:
                return self._canonical(table[name], seen, values)
        if f"{module}.{name}" in self._modules:  # a submodule of a package
            return f"{module}.{name}"
        for star in info.stars:
            star_info = self._modules.get(star)
            if star_info is None or (star_info.public is not None and name not in star_info.public):
                continue
            if not name.startswith("_"):
                found = self._lookup(star, name, seen, values)
                if found is not None:
                    return found
        return None

    def _canonical(self, qualified: str, seen: set[tuple[str, str]], values: bool = False) -> str | None:
        """``qualified`` followed into the tree (re-exports, submodules) to where it is
        defined; a name outside the tree stays as written; None when the tree module
        does not define it."""
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module not in self._modules:
                continue
            if cut == len(parts):
                return module
            found = self._lookup(module, parts[cut], seen, values)
            if found is None:
                return None
            rest = parts[cut + 1:]
            return self._canonical(".".join([found, *rest]), seen, values) if rest else found
        return qualified

    def resolve(self, module: str, spelled: str) -> str | None:
        """The qualified name a dotted spelling means at the top of tree module ``module``
        (``nn.Module`` -> ``torch.nn.Module``, ``Mlp`` -> ``pkg.layers.mlp.Mlp``)."""
        head, _, rest = spelled.partition(".")
        found = self._lookup(module, head, set())
        if found is None:
            if head in vars(builtins) and not rest:
                return f"builtins.{head}"
            return None
        return self._canonical(f"{found}.{rest}", set()) if rest else found

    def _is_class(self, qualified: str | None) -> bool:
        if qualified is None:
            return False
        module, _, name = qualified.rpartition(".")
        return module in self._modules and name in self._modules[module].classes

    def _bases(self, qualified: str) -> tuple[str, ...]:
        module, _, name = qualified.rpartition(".")
        out = []
        for spelled in self._modules[module].classes[name]:
            resolved = self.resolve(module, spelled) if spelled else None
            out.append(resolved if resolved is not None else UNKNOWN + (spelled or ""))
        return tuple(out)

    def star_used(self, module: str) -> frozenset[str]:
        """The names files star-importing ``module`` (directly or through another star
        import) use and do not bind themselves."""
        if self._star_used is None:
            used: dict[str, set[str]] = {}
            for info in self._files.values():
                if not info.stars:
                    continue
                own = info.bindings.keys() | info.local.keys() | info.classes.keys()
                heads = {spelled.partition(".")[0] for spelled in info.spellings} - own
                reached, todo = set(), list(info.stars)
                while todo:
                    star = todo.pop()
                    if star in reached:
                        continue
                    reached.add(star)
                    used.setdefault(star, set()).update(heads)
                    if star in self._modules:
                        todo.extend(self._modules[star].stars)
            self._star_used = {name: frozenset(names) for name, names in used.items()}
        return self._star_used.get(module, frozenset())
    def imported_elsewhere(self, module: str) -> frozenset[str]:
        """The names other files of the tree take from ``module`` by name: ``from module
        import name`` (absolute or relative) and ``alias.name`` where ``alias`` is the module."""
        if self._imported_elsewhere is None:
            taken: dict[str, set[str]] = {}
            for info in self._files.values():
                imported = {**info.bindings, **info.local}
                for qualified in imported.values():
                    source, _, name = qualified.rpartition(".")
                    # (a submodule of the tree imported by name is no name the module binds)
                    if source in self._modules and source != info.module and qualified not in self._modules:
                        taken.setdefault(source, set()).add(name)
                for spelled in info.spellings:
                    head, _, rest = spelled.partition(".")
                    source = imported.get(head)
                    if rest and source in self._modules and source != info.module:
                        taken.setdefault(source, set()).add(rest.partition(".")[0])
            self._imported_elsewhere = {name: frozenset(names) for name, names in taken.items()}
        return self._imported_elsewhere.get(module, frozenset())

    # -- the type index ---------------------------------------------------------------
    def _value(self, module: str, spelled: str) -> tuple | None:
        """The shape a dotted spelling at the top of ``module`` stands for: ``("ref",
        qualified)``, or a module variable's ``("var", module, name)`` with the attributes
        after it; None when the tree does not define it."""
        head, _, rest = spelled.partition(".")
        found = self._lookup(module, head, set(), values=True)
        if found is None:
            return ("ref", f"builtins.{head}") if head in vars(builtins) and not rest else None
        if rest:
            found = self._canonical(f"{found}.{rest}", set(), values=True)
            if found is None:
                return None
        parts = found.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            owner = ".".join(parts[:cut])
            info = self._modules.get(owner)
            if info is None:
                continue
            name = parts[cut]
            if name in info.types.variables and name not in info.classes and name not in info.types.functions:
                shape: tuple = ("var", owner, name)
                for attr in parts[cut + 1:]:
                    shape = ("get", shape, attr)
                return shape
            break
        return ("ref", found)

    def _module_types(self, module: str) -> tuple[dict, dict]:
        if module not in self._resolved:
            info = self._modules[module]
            self._resolved[module] = resolve_module(
                info.types, module, lambda spelled: self._value(module, spelled),
                lambda cls: self._bases(cls) if self._is_class(cls) else ())
        return self._resolved[module]

    def _owner_module(self, qualified: str) -> str | None:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module in self._modules:
                return module
        return None

    def types(self, module: str) -> TypeIndex:
        """The type index a tree module is handed: its own classes and functions whole;
        of the rest of the tree what their shapes reach, transitively: a class's
        attributes and its methods' returns, a function's return and the locals it (or
        another shape) names."""
        if module not in self._modules:
            return TypeIndex(module)
        own_classes, own_functions = self._module_types(module)
        classes: dict = dict(own_classes)
        functions: dict = dict(own_functions)
        needed: dict[str, set[str]] = {}  # a function of another module -> the locals needed
        todo: list = []
        for info in own_classes.values():
            todo.extend(self._class_needs(info))
        for info in own_functions.values():
            todo.append(info.returns)
            todo.extend(b.value for b in info.locals.values())
            todo.extend(m for b in info.locals.values() for m in b.mutations)
        done: set = set()
        while todo:
            names = shape_names(todo.pop(), set())
            for name in names - done:
                done.add(name)
                if type(name) is tuple and len(name) == 3:  # self.m: a method of the class or a base
                    method = self._method(name[1], name[2], set())
                    if method is not None and method not in functions:
                        todo.append(("ref", method))
                    continue
                if type(name) is tuple:  # (scope, local)
                    scope, local = name
                    if scope in own_functions:
                        continue
                    found = self._function(scope)
                    if found is not None and local in found.locals:
                        needed.setdefault(scope, set()).add(local)
                        binding = found.locals[local]
                        todo.append(binding.value)
                        todo.extend(binding.mutations)
                        todo.extend(self._returns_need(scope, found, needed))
                    continue
                if name in classes or name in functions or name in needed:
                    continue
                owner = self._owner_module(name)
                if owner is None:
                    continue
                found_classes, found_functions = self._module_types(owner)
                if name in found_classes:
                    classes[name] = found_classes[name]
                    todo.extend(self._class_needs(found_classes[name]))
                elif name in found_functions:
                    todo.extend(self._returns_need(name, found_functions[name], needed))
        for scope, locals_ in needed.items():
            info = self._function(scope)
            functions[scope] = replace(info, locals={k: v for k, v in info.locals.items() if k in locals_})
        return TypeIndex(module, dict(sorted(classes.items())), dict(sorted(functions.items())))

    def _method(self, cls: str, name: str, seen: set[str]) -> str | None:
        """The qualified function ``cls.name`` runs in the tree (its own or a base's)."""
        owner = self._owner_module(cls)
        if owner is None or cls in seen:
            return None
        seen.add(cls)
        found_classes, found_functions = self._module_types(owner)
        info = found_classes.get(cls)
        if info is None:
            return None
        if name in info.methods:
            return f"{cls}.{name}"
        for base in info.bases:
            found = self._method(base, name, seen)
            if found is not None:
                return found
        return None

    def _function(self, qualified: str):
        owner = self._owner_module(qualified)
        return self._module_types(owner)[1].get(qualified) if owner is not None else None

    @staticmethod
    def _returns_need(name: str, info, needed: dict[str, set[str]]) -> list:
        """What a function of another module's return needs (once)."""
        if name in needed:
            return []
        needed[name] = set()
        return [info.returns]

    @staticmethod
    def _class_needs(info) -> list:
        """The shapes a class's attributes are read through: its bindings, setters, bases
        and its methods (as references: their returns)."""
        shapes: list = [("ref", b) for b in info.bases]
        for binding in info.attributes.values():
            shapes.append(binding.value)
            shapes.extend(binding.mutations)
        shapes.extend(info.setters)
        return shapes

    def facts(self, path: Path) -> PackageFacts:
        """What ``path`` is handed: see :class:`PackageFacts`."""
        info = self._files.get(path.resolve())
        if info is None:
            return PackageFacts()
        names = {}
        for spelled in sorted(info.spellings):
            head = spelled.partition(".")[0]
            if head in info.bindings or head in info.local or head in info.classes or info.stars:
                qualified = self.resolve(info.module, spelled)
                if self._is_class(qualified):
                    names[spelled] = qualified
        bases: dict[str, tuple[str, ...]] = {}
        todo = sorted(set(names.values()) | {f"{info.module}.{c}" for c in info.classes})
        while todo:
            cls = todo.pop()
            if cls in bases or not self._is_class(cls):
                continue
            bases[cls] = self._bases(cls)
            todo.extend(b for b in bases[cls] if self._is_class(b))
        outside = sorted(r for r in info.imported_roots
                         if r not in self._tree_roots and r not in sys.stdlib_module_names)
        return PackageFacts(info.module, self.inherited(path), names,
                            dict(sorted(bases.items())), tuple(outside),
                            star_used=tuple(sorted(self.star_used(info.module))),
                            imported_elsewhere=tuple(sorted(self.imported_elsewhere(info.module))), types=self.types(info.module),
                            measured=info.measured)


# A file importing a package from outside the tree that it cannot run without once the
# tree is converted: one diagnostic per file and package (the rewrites decide which
# packages), grouped per package for the run by ``PathReport.outside_packages``.
OUTSIDE_CODE = "MS902"
_OUTSIDE_PREFIX = "imports "


_OUTSIDE_CONSEQUENCE = ("from outside the converted tree: {it} cannot run until {package} is converted too "
                        "(convert it with this tree); counted as one unconverted use {per}")


def outside_message(package: str, what: str) -> str:
    """The message of an ``OUTSIDE_CODE`` diagnostic (``outside_package`` reads it back)."""
    return f"{_OUTSIDE_PREFIX}{package} ({what}) " + _OUTSIDE_CONSEQUENCE.format(
        it="the file", package=package, per="in this file")


def outside_summary(package: str, diagnostics: list) -> str:
    """One line for the whole run about ``package``: where it is first imported, and by
    how many files (the report prints it instead of one line per file)."""
    first = diagnostics[0]
    files = sorted({d.filename for d in diagnostics})
    if len(files) == 1:
        return first.format()
    what = first.message[len(_OUTSIDE_PREFIX) + len(package):].split(") ", 1)[0] + ")"
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    text = (f"{len(files)} files import {package}{what} "
            + _OUTSIDE_CONSEQUENCE.format(it="they", package=package, per="per file")
            + f": {shown}")
    return replace(first, message=text).format()


def outside_package(diagnostic) -> str | None:
    """The package an ``OUTSIDE_CODE`` diagnostic is about, else None."""
    if diagnostic.code != OUTSIDE_CODE or not diagnostic.message.startswith(_OUTSIDE_PREFIX):
        return None
    return diagnostic.message[len(_OUTSIDE_PREFIX):].split(" ", 1)[0]
