"""Import rules of the engine and the rewrites, read from the source with ``ast``:

- no pass imports another pass (what two passes share is an analysis: rewrites/analysis/,
  rewrites/syntax.py, rewrites/facts.py, ...), so a pass can be read, moved or dropped alone;
- no module of transpile/ or rewrites/ imports a name starting with ``_`` from another
  module (dunders such as ``__version__`` excepted): a name another module needs is public;
- which names are references is known in one place, the name index
  (transpile/engine/names.py): no other module marks attribute or keyword names as no
  references (``id(node.attr)``), visits CPython's ``ast`` names, searches code for a name
  with a regex, and no rewrite parses code with ``ast.parse`` (the run-time helpers'
  registry excepted: it reads the helpers' own modules, not the file converted);
- each pass declares the facts it reads (``Pass.reads``), checked from its source here and
  from what it really reads in tests/test_fact_reads.py.
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


# -- one name analysis -------------------------------------------------------------------
NAME_INDEX = "transpile/engine/names.py"
PARSES_CODE = {"rewrites/runtime/registry.py"}  # reads the run-time helpers' modules


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def name_analysis_copies(root: Path) -> list[str]:
    """Places outside the name index that work out name uses on their own."""
    found = []
    for _module, _init, path in modules(root):
        where = path.relative_to(root).as_posix()
        if where == NAME_INDEX or where.startswith("transpile/parity/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and _dotted(node.func) == "ast.parse" and where.startswith("rewrites/")
                    and where not in PARSES_CODE):
                found.append(f"{where}:{node.lineno}: parses code with ast")
            elif (isinstance(node, ast.Call) and _dotted(node.func) == "id" and len(node.args) == 1
                  and isinstance(node.args[0], ast.Attribute) and node.args[0].attr in ("attr", "keyword")):
                found.append(f"{where}:{node.lineno}: marks {_dotted(node.args[0])} as no reference")
            elif (isinstance(node, ast.ClassDef) and any(_dotted(b).startswith("ast.Node") for b in node.bases)
                  and any(isinstance(f, ast.FunctionDef) and f.name == "visit_Name" for f in node.body)):
                found.append(f"{where}:{node.lineno}: visits ast names ({node.name})")
            elif (isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name == "visit_Name"
                                                         for f in node.body)
                  and not any(_dotted(b) == "Pass" or _dotted(b).endswith("Transformer") for b in node.bases)):
                found.append(f"{where}:{node.lineno}: collects names ({node.name})")
            elif (isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant)
                  and str(node.values[0].value).startswith("\\b")):
                found.append(f"{where}:{node.lineno}: searches code for a name with a regex")
    return found


def test_names_are_worked_out_in_one_place() -> None:
    found = name_analysis_copies(REPO)
    assert not found, ("name uses worked out outside transpile/engine/names.py (ask the file's "
                       "FileFacts.names, or names.scoped_references / identifiers):\n" + "\n".join(found))


def test_the_name_rule_sees_every_copy(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "transpile/__init__.py": "",
        "transpile/engine/names.py": "def f(node, s):\n    s.add(id(node.attr))\n",
        "rewrites/__init__.py": "",
        "rewrites/runtime/registry.py": "import ast\ntree = ast.parse(text)\n",
        "rewrites/passes/a.py": (
            "import ast, re\n"
            "class Skip:\n    def visit_Arg(self, node):\n        self.skip.add(id(node.keyword))\n"
            "class Loads(ast.NodeVisitor):\n    def visit_Name(self, node):\n        pass\n"
            "class Uses(cst.CSTVisitor):\n    def visit_Name(self, node):\n        pass\n"
            "class Rule(Pass):\n    def visit_Name(self, node):\n        pass\n"
            "def free(source, name):\n    return re.search(rf\"\\b{name}\\b\", source)\n"
            "tree = ast.parse(source)\n"
        ),
    })
    assert sorted(f.split(": ", 1)[1] for f in name_analysis_copies(root)) == [
        "collects names (Uses)", "marks node.keyword as no reference", "parses code with ast",
        "searches code for a name with a regex", "visits ast names (Loads)",
    ]


# -- the facts a pass reads ----------------------------------------------------------------
def _facts_object(node: ast.AST) -> bool:
    """``facts``, ``self.facts``, ``ctx.facts``, ``self.ctx.facts``: the file's facts."""
    return (isinstance(node, ast.Name) and node.id == "facts") or (isinstance(node, ast.Attribute) and node.attr == "facts")


def facts_read_in(source: str) -> set[str]:
    """The facts ``source`` reads by name: ``X.facts.name`` and ``getattr(X.facts, "name")``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _facts_object(node.value):
            found.add(node.attr)
        elif (isinstance(node, ast.Call) and _dotted(node.func) == "getattr" and len(node.args) >= 2
              and _facts_object(node.args[0]) and isinstance(node.args[1], ast.Constant)):
            found.add(node.args[1].value)
    return found


def test_each_pass_declares_the_facts_its_source_reads() -> None:
    import inspect

    from transpile.rewrites import ALL_PASSES

    undeclared = {}
    for pass_type in ALL_PASSES:
        missing = facts_read_in(inspect.getsource(inspect.getmodule(pass_type))) - pass_type.reads
        if missing:
            undeclared[f"{pass_type.id} {pass_type.name}"] = sorted(missing)
    assert not undeclared, f"facts a pass reads but does not list in its reads: {undeclared}"


def test_the_facts_rule_sees_every_spelling() -> None:
    source = ("def f(self, ctx):\n    a = self.facts.list_names(fn)\n    b = ctx.facts.module\n"
              "    c = self.ctx.facts.target_cells\n    facts = ctx.facts\n    d = facts.nodes(s, k)\n"
              "    e = getattr(ctx.facts, 'emitted_definitions', ())\n    g = self.other.names\n")
    assert facts_read_in(source) == {"list_names", "module", "target_cells", "nodes", "emitted_definitions"}
