"""What a file of a converted tree receives through ``from <sibling> import *``.

A module such as ``layers/create_act.py`` may never import torch itself and still use
``nn.SELU``: its ``nn`` comes from ``from .activations import *``. Converted alone, the
file looks torch-free and is left as it is, while its ``nn`` becomes MindSpore's once the
sibling is converted. ``convert_paths`` therefore indexes the module-level imports of
every file of a tree first (CPython's parser: cheap), and hands each file the import
bindings its star imports bring in, so it converts as if it had written them.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class _ModuleImports:
    bindings: dict[str, str] = field(default_factory=dict)  # name -> qualified name
    stars: list[Path] = field(default_factory=list)  # files star-imported (inside the tree)
    public: frozenset[str] | None = None  # __all__, when it is a literal


def _module_file(base: Path, dotted: str) -> Path | None:
    """``a.b`` under ``base``: ``a/b.py`` or ``a/b/__init__.py``."""
    stem = base.joinpath(*dotted.split(".")) if dotted else base
    for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _scan(path: Path, root: Path) -> _ModuleImports:
    info = _ModuleImports()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
        return info

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
                if node.level:  # relative: from the file's package
                    base = path.parent
                    for _ in range(node.level - 1):
                        base = base.parent
                    target = _module_file(base, node.module or "")
                    if star and target is not None:
                        info.stars.append(target)
                elif star and node.module and node.module.split(".")[0] == root.name:
                    target = _module_file(root.parent, node.module)
                    if target is not None:
                        info.stars.append(target)
                elif not star and node.module:
                    for alias in node.names:
                        info.bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"
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
    return info


class PackageIndex:
    """The module-level imports of every ``.py`` file under a root, by resolved path."""

    def __init__(self, root: Path, files: list[Path]):
        root = root.resolve()
        self._modules = {f.resolve(): _scan(f.resolve(), root) for f in files if f.suffix == ".py"}

    def _exported(self, path: Path, seen: set[Path]) -> dict[str, str]:
        """The import bindings ``from <path> import *`` brings in (transitively)."""
        if path in seen or path not in self._modules:
            return {}
        seen.add(path)
        info = self._modules[path]
        out: dict[str, str] = {}
        for star in info.stars:
            out.update(self._exported(star, seen))
        out.update(info.bindings)
        if info.public is not None:
            return {k: v for k, v in out.items() if k in info.public}
        return {k: v for k, v in out.items() if not k.startswith("_")}

    def inherited(self, path: Path) -> dict[str, str]:
        """Bindings this file gets from its star imports and does not bind itself."""
        info = self._modules.get(path.resolve())
        if info is None or not info.stars:
            return {}
        out: dict[str, str] = {}
        for star in info.stars:
            out.update(self._exported(star, {path.resolve()}))
        return {k: v for k, v in sorted(out.items()) if k not in info.bindings}
