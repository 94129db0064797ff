"""The rooms of transpile and which may import which (docs/architecture.md, "The tree").

The static import graph of the package is read from the source with ``ast``: every
``import`` and ``from ... import`` of ``transpile/`` and of ``rewrites/`` (shipped as
``transpile.rewrites``, see ``package-dir`` in pyproject.toml), at the top of a module or
inside a function: an import inside a function ties two modules as much as one at the top.
An import names the module it loads (``from pkg import mod`` names ``pkg.mod``), not the
packages above it.
"""
from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each room and the rooms it may import (besides itself). A module is in the room of its
# own name, else of the nearest package above it that is named here.
ROOMS = {
    "transpile.version": "version",
    "transpile.engine": "engine",
    "transpile.rewrites": "rewrites",
    "transpile.api": "api",
    "transpile.explain": "api",
    "transpile.io": "io",
    "transpile.parity": "parity",
    "transpile.report": "report",
    "transpile.cli": "cli",
    "transpile.__main__": "cli",
    "transpile": "package",  # transpile/__init__.py: what ``from transpile import ...`` gives
    "transpile.templates": "templates",
}
MAY_IMPORT = {
    "version": set(),
    "templates": set(),
    "engine": set(),
    "rewrites": {"engine"},
    "api": {"engine", "rewrites"},
    "io": {"version", "engine", "api"},
    "parity": {"version", "engine", "rewrites", "api"},
    "report": {"engine", "io"},
    "package": {"version", "engine", "api", "io"},
    "cli": {"version", "engine", "rewrites", "api", "io", "parity", "report"},
}
FRAMEWORKS = {"torch", "torchvision", "torchaudio", "mindspore"}
# Where torch and MindSpore may be imported: the parity harness, which runs both; and the
# run-time helpers, code the converter copies into its outputs (run there, never by it).
MAY_IMPORT_FRAMEWORKS = ("transpile.parity", "transpile.rewrites.runtime")


@dataclass(frozen=True)
class Import:
    importer: str  # the module
    line: int
    target: str  # a module of the package, else the top-level name imported (torch, os, ...)


def package_modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package) for every module the project ships."""
    setup = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    modules = {}
    for package, folder in setup["package-dir"].items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            modules[".".join((package, *(parts[:-1] if is_package else parts)))] = (path, is_package)
    return modules


def imports_of(name: str, source: str, is_package: bool, modules) -> list[Import]:
    """What the module ``name`` (its ``source``) imports."""
    package = name if is_package else name.rpartition(".")[0]

    def known(dotted: str) -> str:
        """The module of the package that ``dotted`` names or is inside, else its top-level name."""
        found = dotted
        while found and found not in modules:
            found = found.rpartition(".")[0]
        return found or dotted.partition(".")[0]

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [Import(name, node.lineno, known(alias.name)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{above}.{base}" if base else above
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                out.append(Import(name, node.lineno, submodule if submodule in modules else known(base)))
    return out


def import_graph(root: Path = ROOT) -> tuple[dict[str, tuple[Path, bool]], list[Import]]:
    modules = package_modules(root)
    found = []
    for name, (path, is_package) in modules.items():
        found += [i for i in imports_of(name, path.read_text(encoding="utf-8"), is_package, modules)
                  if i.target != name]
    return modules, list(dict.fromkeys(found))  # one per line and target (``from x import a, b``)


def room_of(module: str) -> str | None:
    """The room of ``module``: its own entry, else its package's (``transpile`` alone is
    only the package's face: a new module at the top must be given a room)."""
    while module not in ROOMS:
        module = module.rpartition(".")[0]
        if module in ("", "transpile"):
            return None
    return ROOMS[module]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _where(modules, imp: Import) -> str:
    return f"{modules[imp.importer][0].relative_to(ROOT)}:{imp.line}"


def test_the_graph_reader_resolves_relative_and_absolute_imports():
    modules = {name: (Path(), name.endswith("pkg") or name.endswith("io")) for name in (
        "transpile.pkg", "transpile.io", "transpile.io.files", "transpile.engine", "transpile.engine.walk", "transpile.api")}
    source = ("from .. import api\nfrom ..engine import walk\nfrom ..engine.walk import children\n"
              "import transpile.engine.walk\nfrom . import files\nimport torch.nn as nn\n"
              "def late():\n    from mindspore import ops\n")
    found = [(i.line, i.target) for i in imports_of("transpile.io.cache", source, False, modules)]
    assert found == [(1, "transpile.api"), (2, "transpile.engine.walk"), (3, "transpile.engine.walk"),
                     (4, "transpile.engine.walk"), (5, "transpile.io.files"), (6, "torch"), (8, "mindspore")]


def test_the_cycle_finder_finds_each_cycle_once():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}) == [
        ["a", "b", "c"], ["e", "f"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_every_module_is_in_a_room():
    modules, _ = import_graph()
    assert "transpile.engine.pipeline" in modules and "transpile.rewrites.passes.imports" in modules
    assert [name for name in modules if room_of(name) is None] == []


def test_no_import_cycles():
    modules, found = import_graph()
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for imp in found:
        if imp.target in modules:
            edges[imp.importer].add(imp.target)
    problems = []
    for component in cycles(edges):
        ties = [f"    {_where(modules, i)}: {i.importer} -> {i.target}" for i in found
                if i.importer in component and i.target in component]
        problems.append(f"a cycle of {len(component)} modules:\n" + "\n".join(ties))
    assert not problems, "\n".join(problems)


def test_rooms_import_only_what_they_may():
    modules, found = import_graph()
    problems = [f"{_where(modules, i)}: {i.importer} ({room_of(i.importer)}) imports {i.target} ({room_of(i.target)}); "
                f"{room_of(i.importer)} may import: {', '.join(sorted(MAY_IMPORT[room_of(i.importer)])) or 'nothing'}"
                for i in found if i.target in modules and room_of(i.target) != room_of(i.importer)
                and room_of(i.target) not in MAY_IMPORT[room_of(i.importer)]]
    assert not problems, "\n".join(problems)


def test_no_room_imports_the_command_line():
    assert not any("cli" in allowed for room, allowed in MAY_IMPORT.items() if room != "cli")
    modules, found = import_graph()
    problems = [f"{_where(modules, i)}: {i.importer} imports {i.target}" for i in found
                if room_of(i.target) == "cli" and room_of(i.importer) != "cli"]
    assert not problems, "\n".join(problems)


def test_only_the_parity_harness_imports_torch_or_mindspore():
    """The converter runs without either framework installed: the engine, the rewrites, the
    API, the files layer and the command line never import them, not even inside a function."""
    modules, found = import_graph()
    problems = [f"{_where(modules, i)}: {i.importer} imports {i.target}" for i in found
                if i.target in FRAMEWORKS and not any(i.importer == allowed or i.importer.startswith(allowed + ".")
                                                       for allowed in MAY_IMPORT_FRAMEWORKS)]
    assert not problems, "\n".join(problems)


def test_the_cache_fingerprint_hashes_every_python_and_toml_file_of_the_tool():
    """A change to any code or table of the converter invalidates the cached results."""
    from transpile.io.cache import tool_files

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = [ROOT / setup["package-dir"][package] for package in ("transpile", "transpile.rewrites")]
    expected = {p.resolve() for folder in folders for ext in ("*.py", "*.toml") for p in folder.rglob(ext)
                if "__pycache__" not in p.parts}
    assert {ROOT / "transpile" / "engine" / "pipeline.py", ROOT / "rewrites" / "tables" / "nn_layers.toml"} <= expected
    assert set(tool_files()) == expected


def test_no_tracked_file_is_a_symbolic_link_or_a_gitignored_path():
    """What the repository tracks is its own: a symbolic link committed from a worktree
    (benchmarks/.corpora, linked to the main checkout's corpora) becomes, checked out, a link
    to itself, and a merge that brings it replaces the ignored directory it names."""
    import subprocess

    if not (ROOT / ".git").exists():
        import pytest

        pytest.skip("not a git checkout")
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in staged.splitlines() if line.startswith("120000 ")]
    assert not links, f"symbolic links tracked: {links}"
    ignored = subprocess.run(["git", "ls-files", "--cached", "--ignored", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    assert not ignored, f"tracked paths that .gitignore excludes: {ignored}"
