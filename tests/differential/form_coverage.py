"""Which call forms the differential cases give each table entry, read from the cases the
tests run (never typed by hand).

Every module-level ``Suite`` (or list of them) of ``tests/differential/test_*.py``, every
module-level list of ``LayerCase`` and every module-level list of ``Case`` (a module running
them by a harness of its own: test_optim) is read; each case counts for the entry it names (``Case.api``,
``LayerCase.entry``) in the forms its code shows:

* ``out``: a call with an ``out=`` keyword;
* ``keyword``: a call of the entry's own name with a keyword argument other than ``out``;
* ``integer``: an integer or bool array among the inputs;
* ``bool``: a bool array among the inputs;
* ``module-path``: the entry spelled through a module path other than its public name
  (``torch.nn.modules.loss.L1Loss`` for ``torch.nn.L1Loss``), dotted or imported by the
  case's code (``from torch.optim.adam import Adam``);

and, not a form but what says an entry computes on numbers, ``float``: a floating-point
array among the inputs (such an entry owes an ``integer`` case, or a reason in
``form_gaps.toml``). Only names that are table entries are kept.

The result is written to ``rewrites/tables/differential_coverage.json`` (``make docs``), which
``transpile apis`` reads to print the shares without importing a test, torch or MindSpore;
``tests/differential/test_form_coverage.py`` fails when the file is not what the cases give.
Run ``python -m tests.differential.form_coverage`` to rewrite it.
"""
from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from pathlib import Path

import numpy as np

from . import harness, layer_harness

COVERAGE_FILE = harness.TABLE_DIR / "differential_coverage.json"
FORMS = ("out", "keyword", "integer", "bool", "module-path", "float")
# the names a case's header binds (harness.DEFAULT_HEADER, layer_harness.HEADER)
HEADER_ALIASES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "init": "torch.nn.init"}


def _dotted(node: ast.expr, imported: dict[str, str]) -> str | None:
    """``F.relu`` -> ``torch.nn.functional.relu``, a name the code imports (``from
    torch.optim.adam import Adam``) -> where it comes from; None for what is not a dotted name."""
    spelled = ast.unparse(node)
    if not all(part.isidentifier() for part in spelled.split(".")):
        return None
    head, dot, rest = spelled.partition(".")
    return imported[head] + dot + rest if head in imported else qualified(spelled)


def _imported(nodes: list[ast.AST]) -> dict[str, str]:
    """The names the code of ``nodes`` (a tree's, walked) binds by ``from M import N [as
    A]``: A -> ``M.N``."""
    return {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in nodes
            if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}


def qualified(api: str) -> str:
    """A case's entry name with the header's aliases spelled out (``F.relu``)."""
    head, _, rest = api.partition(".")
    return f"{HEADER_ALIASES[head]}.{rest}" if rest and head in HEADER_ALIASES else api


def calls_of(code: str, api: str) -> list[tuple[ast.Call, str | None]]:
    """The calls in ``code`` of the entry's own name (its last component), with the
    dotted path they are spelled by (None for a method call on a value)."""
    try:
        nodes = list(ast.walk(ast.parse(code)))
    except SyntaxError:
        return []
    return _calls_in(nodes, _imported(nodes), api, {})


def _calls_in(nodes: list[ast.AST], imported: dict[str, str], api: str, spelled: dict) -> list:
    """``calls_of`` on a tree's walked ``nodes``; ``spelled`` keeps each call's dotted path
    (``_dotted`` of its function) for the caller that reads them again."""
    name = api.rsplit(".", 1)[-1]
    found = []
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if last == name:
                found.append((node, _spelled(node, imported, spelled)))
    return found


def _spelled(call: ast.Call, imported: dict[str, str], spelled: dict) -> str | None:
    """``_dotted`` of the call's function, computed once per call in ``spelled``."""
    if call not in spelled:
        spelled[call] = _dotted(call.func, imported)
    return spelled[call]


def _reexports() -> dict[str, str]:
    from transpile.rewrites.table_calls import tables

    return tables().reexports


def input_kinds(value) -> set[str]:
    """The numpy dtype kinds of the arrays in an input (also inside lists and tuples)."""
    if isinstance(value, np.ndarray):
        return {value.dtype.kind}
    if isinstance(value, (list, tuple)):
        return set().union(*(input_kinds(v) for v in value))
    return set()


def code_forms(api: str, code: str, kinds: set[str]) -> set[str]:
    """The forms one case's code shows for ``api``, given its inputs' dtype kinds."""
    forms = ({"integer"} if kinds & set("iub") else set()) | ({"bool"} if "b" in kinds else set()) \
        | ({"float"} if kinds & set("fc") else set())
    try:
        nodes = list(ast.walk(ast.parse(code)))  # parsed and walked once, read below in walk order
    except SyntaxError:
        return forms
    if any(isinstance(n, ast.keyword) and n.arg == "out" for n in nodes):
        forms.add("out")
    imported, spelled_calls = _imported(nodes), {}
    for call, spelled in _calls_in(nodes, imported, api, spelled_calls):
        if any(k.arg not in (None, "out") for k in call.keywords):
            forms.add("keyword")
        if spelled and not api.startswith("Tensor.") and spelled != api and spelled.startswith("torch."):
            forms.add("module-path")
    name = api.rsplit(".", 1)[-1]
    # a call by a path re-exporting the entry under another name (``torch.nested.Device``)
    reexports = _reexports()
    if any(reexports.get(_spelled(node, imported, spelled_calls) or "") == api
           for node in nodes if isinstance(node, ast.Call)):
        forms.add("module-path")
    # a class deriving from the entry by another path (``class S(torch.utils.data.dataset.Dataset)``)
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                spelled = _dotted(base, imported)
                if spelled and spelled.rsplit(".", 1)[-1] == name and spelled != api and spelled.startswith("torch."):
                    forms.add("module-path")
    return forms


def case_code(case) -> tuple[str | None, str, list]:
    """A case's entry (qualified), its code as one parsable text, and its inputs (a layer
    case's drawn as it draws them)."""
    if isinstance(case, harness.Case):
        code = _body(case.code) if isinstance(case.code, str) else _parts(case.code)
        return qualified(case.api), code, list(case.inputs)
    rng = np.random.default_rng(0)
    return case.entry, case.prelude + "\n" + case.expr, [i.make(rng) for i in case.inputs]


def _case_forms(case) -> tuple[str | None, set[str]]:
    api, code, inputs = case_code(case)
    forms = code_forms(api or "", code, input_kinds(inputs))
    if isinstance(case, harness.Case):
        derived_bool = case.form == "bool"
    else:
        derived_bool = any(i.label.startswith("bools(") for i in case.inputs)
    # a bool case derived from a float one (test_generated_forms) shows the bool form only:
    # the integer form of such an entry asks for its int64 measurement
    return api, forms - {"integer"} if derived_bool else forms


def _parts(code: tuple[str, ...]) -> str:
    """A case whose code is several parts (test_nn_utils: the layer's set-up, then its
    forward) as one text of its lines unindented (a part holding a block may then not
    parse: it shows its input forms only)."""
    return "\n".join(line.strip() for part in code for line in part.splitlines() if line.strip())


def _body(code: str) -> str:
    """A case's code as a function body (its later lines may be indented)."""
    return "def case():\n" + harness.Case("", code).body() + "\n"


def differential_sources(skip: frozenset[str] = frozenset()) -> tuple[list, list[list]]:
    """The module-level ``Suite``s and ``LayerCase`` lists of the differential modules (but
    the modules named in ``skip``), in the modules' order."""
    suites, layer_lists = [], []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not info.name.startswith("test_") or info.name in skip:
            continue
        # this package's name as it was imported (pytest and ``python -m`` name it alike
        # only by chance): the harness classes must be the ones the modules import
        module = importlib.import_module(f"{__package__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, harness.Suite):
                suites.append(value)
            elif isinstance(value, list) and value and all(isinstance(s, harness.Suite) for s in value):
                suites += value  # suites built per header (test_generated_forms)
            elif isinstance(value, list) and value and all(isinstance(c, layer_harness.LayerCase) for c in value):
                layer_lists.append(value)
    return suites, layer_lists


def case_lists() -> list[list]:
    """The module-level lists of ``harness.Case`` of the differential modules: the cases of a
    module running its own harness (test_optim's builders), given as Cases to be counted."""
    lists = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name.startswith("test_"):
            module = importlib.import_module(f"{__package__}.{info.name}")
            lists += [v for v in vars(module).values() if isinstance(v, list) and v
                      and all(isinstance(c, harness.Case) for c in v)]
    return lists


def differential_cases() -> list:
    """Every case the differential modules run: their Suites' cases, their LayerCase lists
    and their lists of Cases run by a harness of their own."""
    suites, layer_lists = differential_sources()
    in_suites = [case for suite in suites for case in suite.cases]
    run = {id(case) for case in in_suites}
    # a list of Cases a Suite is made of (``CASES = [...]; SUITE = Suite(CASES)``) counts once
    return in_suites + [case for cases in layer_lists for case in cases] \
        + [case for cases in case_lists() for case in cases if id(case) not in run]


def coverage(cases) -> dict[str, dict]:
    """entry -> {"cases": how many cases name it, "forms": the forms they show, sorted}."""
    from transpile.rewrites.table_calls import tables

    entries = {e.source for e in tables().all_entries()}
    out: dict[str, dict] = {}
    for case in cases:
        api, forms = _case_forms(case)
        if api not in entries:
            continue
        row = out.setdefault(api, {"cases": 0, "forms": set()})
        row["cases"] += 1
        row["forms"] |= forms
    return {api: {"cases": row["cases"], "forms": [f for f in FORMS if f in row["forms"]]}
            for api, row in sorted(out.items())}


def coverage_text(cases) -> str:
    """The file's text: one entry a line (a change shows as the lines of its entries)."""
    rows = [f"{json.dumps(api)}: {json.dumps(row)}" for api, row in coverage(cases).items()]
    return "{\n" + ",\n".join(rows) + "\n}\n"


def write(path: Path = COVERAGE_FILE) -> None:
    path.write_text(coverage_text(differential_cases()), encoding="utf-8")


if __name__ == "__main__":
    write()
