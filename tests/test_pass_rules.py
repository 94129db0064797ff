"""Import rules of the engine and the rewrites, read from the source with ``ast``:

- no pass imports another pass (what two passes share is an analysis: rewrites/analysis/,
  rewrites/syntax.py, rewrites/facts.py, ...), so a pass can be read, moved or dropped alone;
- no module of transpile/ or rewrites/ imports a name starting with ``_`` from another
  module (dunders such as ``__version__`` excepted): a name another module needs is public.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# directory -> the package it ships as (rewrites/ ships inside transpile)
PACKAGES = {"transpile": "transpile", "rewrites": "transpile.rewrites"}
PASSES = "transpile.rewrites.passes"


def modules(root: Path):
    """(dotted module name, is a package's __init__, path) of every module under ``root``'s packages."""
    for directory, package in PACKAGES.items():
        for path in sorted((root / directory).rglob("*.py")):
            parts = path.relative_to(root / directory).with_suffix("").parts
            init = parts[-1] == "__init__"
            yield ".".join((package, *(parts[:-1] if init else parts))), init, path


def imports(module: str, init: bool, tree: ast.Module):
    """(line, imported module, imported name or None) of every import in ``tree``; relative
    imports resolved against ``module``. ``from a import b`` gives (a, b); ``import a.b``
    gives (a.b, None)."""
    package = module if init else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                yield node.lineno, source, alias.name


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def pass_to_pass_imports(root: Path) -> list[str]:
    found = []
    for module, init, path in modules(root):
        if not module.startswith(PASSES + ".") or init:
            continue
        for line, source, name in imports(module, init, ast.parse(path.read_text(encoding="utf-8"))):
            # ``from .x import y`` names pass x; ``from . import x`` names pass x through its package
            target = source if source.startswith(PASSES + ".") else f"{source}.{name}" if source == PASSES else None
            if target is not None and target.split(".")[:4] != module.split(".")[:4]:
                found.append(f"{path.relative_to(root)}:{line}: imports {target}")
    return found


RUNTIME = "transpile.rewrites.runtime."


def _helper_of_runtime(module: str, source: str) -> bool:
    """A run-time helper module using another's helper: helpers are named as the converted
    files name them (``_torch_number``), underscore and all."""
    return module.startswith(RUNTIME) and source.startswith(RUNTIME)


def private_name_imports(root: Path) -> list[str]:
    found = []
    for module, init, path in modules(root):
        for line, source, name in imports(module, init, ast.parse(path.read_text(encoding="utf-8"))):
            if name is not None and _private(name) and source != module and not _helper_of_runtime(module, source):
                found.append(f"{path.relative_to(root)}:{line}: imports {source}.{name}")
    return found


def test_no_pass_imports_another_pass() -> None:
    found = pass_to_pass_imports(REPO)
    assert not found, "a pass imports another pass (move what they share to a shared module):\n" + "\n".join(found)


def test_no_module_imports_a_private_name_of_another() -> None:
    found = private_name_imports(REPO)
    assert not found, "private names imported from other modules (make them public):\n" + "\n".join(found)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_rules_see_every_spelling(tmp_path: Path) -> None:
    """The checks find each way of writing the forbidden imports (and pass the allowed ones)."""
    root = _tree(tmp_path, {
        "transpile/__init__.py": "__version__ = '1'\n",
        "transpile/api.py": "from . import __version__\nfrom .cli import _summary\n",
        "transpile/cli.py": "def _summary(): pass\n",
        "rewrites/__init__.py": "from .passes.a import A\n",  # the pass list may import passes
        "rewrites/syntax.py": "from .hooks.linalg import _helper\n",
        "rewrites/passes/__init__.py": "",
        "rewrites/passes/a.py": "from .b import shared\nfrom . import c\nfrom ..syntax import code\n",
        "rewrites/passes/b.py": "from transpile.rewrites.passes.c import x\nimport transpile.rewrites.passes.a\n",
        "rewrites/passes/c.py": "from transpile.rewrites.passes import a\nfrom ..analysis.compiled import Scopes\n",
    })
    assert [f.split(": ", 1)[1] for f in pass_to_pass_imports(root)] == [
        "imports transpile.rewrites.passes.b", "imports transpile.rewrites.passes.c",
        "imports transpile.rewrites.passes.c", "imports transpile.rewrites.passes.a",
        "imports transpile.rewrites.passes.a",
    ]
    assert [f.split(": ", 1)[1] for f in private_name_imports(root)] == [
        "imports transpile.cli._summary", "imports transpile.rewrites.hooks.linalg._helper",
    ]
