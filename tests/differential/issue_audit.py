"""The audit issue 33's Done-when asks for: every API the issue names (issue_apis.toml), in
each call form and argument value it names, is converted with a differential case in that
form, or marked unsupported with a reason in its table entry.

A form is read from the cases the differential tests run (form_coverage.py reads the same
cases for ``transpile apis``). It is *marked* instead when the entry's table says why it
cannot be: ``unsupported`` (every form), ``unsupported_args`` (its ``arg:`` forms),
``integer_inputs`` (its integer and bool forms); and an integer or bool form torch itself
refuses (form_gaps.toml's ``torch_refuses``) is owed by no conversion.

An API a pass converts rather than a table entry (``loss.backward()``: the training step,
MS211) is named with the form ``pass:MSxxx``: the pass must name it and a differential
module must run code calling it; `transpile apis` lists table entries only, so these are
counted apart (verdict "pass").

``python -m tests.differential.issue_audit`` prints the per-family counts and each line not
accounted for.
"""
from __future__ import annotations

import ast
import inspect
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from transpile.rewrites import ALL_PASSES
from transpile.rewrites.table_calls import tables

from . import form_coverage

ISSUE_FILE = Path(__file__).with_name("issue_apis.toml")
GAPS_FILE = Path(__file__).with_name("form_gaps.toml")
CODE_FORMS = {"out", "keyword", "integer", "bool", "module-path"}


@dataclass(frozen=True)
class Row:
    family: str
    api: str
    form: str
    verdict: str  # "case", "pass", "marked" or "missing"
    why: str = ""  # the mark's reason, or what is missing


def named() -> dict[str, dict[str, list[str]]]:
    """family -> api -> the forms issue_apis.toml names ("*" spelled out: every converted
    entry taking out=)."""
    with ISSUE_FILE.open("rb") as fh:
        families = tomllib.load(fh)
    star = sorted(e.source for e in tables().all_entries() if not e.unsupported and "out" in e.source_args())
    return {family: {name: forms for api, forms in apis.items() for name in (star if api == "*" else [api])}
            for family, apis in families.items()}


def _torch_refuses() -> dict[str, set[str]]:
    """form (integer, bool) -> the entries on whose such inputs torch itself raises."""
    with GAPS_FILE.open("rb") as fh:
        gaps = tomllib.load(fh)
    return {form: set(gaps[form].get("torch_refuses", ())) for form in ("integer", "bool")}


def _literal(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _literal  # no literal: equal to no value


def argument(call: ast.Call, params: tuple[str, ...], name: str) -> ast.expr | None:
    """The expression ``call`` passes as ``name``: its keyword, else the positional argument
    at the parameter's place in ``params`` (torch's order; none after ``*args``)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    positional = []
    for param in params:
        if param.startswith("*"):
            break
        positional.append(param)
    if name in positional:
        place = positional.index(name)
        before = call.args[:place + 1]
        if len(call.args) > place and not any(isinstance(a, ast.Starred) for a in before):
            return call.args[place]
    return None


def _arrays(value) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    return []


def _broadcasts(arrays: list[np.ndarray]) -> bool:
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            if a.shape != b.shape:
                try:
                    np.broadcast_shapes(a.shape, b.shape)
                    return True
                except ValueError:
                    pass
    return False


def case_shows(form: str, api: str, params: tuple[str, ...], code: str, inputs: list) -> bool:
    """Whether one case's code and inputs show ``form`` (but the forms form_coverage reads)."""
    if form == "case":
        return True
    if form == "float64":
        return any(a.dtype == np.float64 for a in _arrays(inputs))
    if form == "broadcast":
        return _broadcasts(_arrays(inputs))
    calls = form_coverage.calls_of(code, api)
    if form.startswith("path:"):
        return any(spelled == form[5:] for _, spelled in calls) or _base_spelled(code, form[5:])
    if form.startswith("arg:"):
        name, has_value, value = form[4:].partition("=")
        for call, _ in calls:
            passed = argument(call, params, name)
            if passed is not None and (not has_value or _same(_literal(passed), ast.literal_eval(value))):
                return True
        return False
    raise ValueError(f"issue_apis.toml: unknown form {form!r}")


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _base_spelled(code: str, dotted: str) -> bool:
    """A class of the code deriving from the entry spelled as ``dotted``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(ast.unparse(base) == dotted for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
               for base in node.bases)


def _mark(entry, form: str, refused: dict[str, set[str]]) -> str | None:
    """Why the entry's table (or torch) owes no case in ``form``, or None."""
    if entry.unsupported:
        return entry.unsupported
    if form.startswith("arg:"):
        return entry.unsupported_args.get(form[4:].partition("=")[0])
    if form in ("integer", "bool"):
        if entry.integer_inputs:
            return entry.integer_inputs
        if entry.source in refused[form]:
            return "torch refuses such inputs (form_gaps.toml)"
    return None


def pass_converts(pass_id: str, api: str, codes: list[str]) -> str:
    """Why the pass ``pass_id`` accounts for ``api`` (it names it, and a differential case
    or module calls it), or "" when it does not."""
    name = api.rsplit(".", 1)[-1]
    owner = next((p for p in ALL_PASSES if p.id == pass_id), None)
    # the pass's module names the function by its path, a method by its call
    named_as = re.escape(f".{name}(") if api.startswith("Tensor.") else re.escape(api) + r"(?!\w)"
    if owner is None or not re.search(named_as, inspect.getsource(inspect.getmodule(owner))):
        return ""
    modules = [path.read_text(encoding="utf-8") for path in sorted(Path(__file__).parent.glob("test_*.py"))]
    if any(form_coverage.calls_of(code, api) for code in codes) or any(f"{name}(" in text for text in modules):
        return f"converted by {pass_id} {owner.name} (no table entry: `transpile apis` lists none)"
    return ""


def audit(cases: list) -> list[Row]:
    """A row per API and form issue_apis.toml names."""
    t = tables()
    entries = {e.source: e for e in t.all_entries()}
    covered = form_coverage.coverage(cases)
    by_api: dict[str, list[tuple[str, list]]] = {}
    for case in cases:
        api, code, inputs = form_coverage.case_code(case)
        by_api.setdefault(api, []).append((code, inputs))
    refused = _torch_refuses()
    rows = []
    for family, apis in named().items():
        for api, forms in apis.items():
            entry = entries.get(api)
            for form in forms:
                if form.startswith("pass:"):
                    why = pass_converts(form[5:], api, [code for codes in by_api.values() for code, _ in codes])
                    rows.append(Row(family, api, form, "pass" if why else "missing",
                                    why or f"{form[5:]} does not name it, or no differential code calls it"))
                    continue
                if entry is None:
                    rows.append(Row(family, api, form, "missing", "no table entry"))
                    continue
                if form in CODE_FORMS:
                    shown = form in covered.get(api, {}).get("forms", [])
                else:
                    shown = any(case_shows(form, api, entry.params, code, inputs) for code, inputs in by_api.get(api, []))
                mark = None if shown else _mark(entry, form, refused)
                rows.append(Row(family, api, form, "case" if shown else "marked" if mark else "missing",
                                mark or ("" if shown else "no differential case in this form")))
    return rows


def counts(rows: list[Row]) -> dict[str, dict[str, int]]:
    """family -> verdict -> lines (with "apis": the APIs named), an "all" family last."""
    out: dict[str, dict[str, int]] = {}
    seen: dict[str, set[str]] = {}
    for row in rows:
        for family in (row.family, "all"):
            c = out.setdefault(family, {"apis": 0, "case": 0, "pass": 0, "marked": 0, "missing": 0})
            c[row.verdict] += 1
            if (family, row.api) not in seen.setdefault(family, set()):
                seen[family].add((family, row.api))
                c["apis"] += 1
    out["all"] = out.pop("all")
    return out


def report(rows: list[Row]) -> str:
    lines = [f"{family}: {c['apis']} APIs, {c['case'] + c['pass'] + c['marked'] + c['missing']} forms: "
             f"{c['case']} with a case, {c['pass']} converted by a pass, {c['marked']} marked, {c['missing']} missing"
             for family, c in counts(rows).items()]
    lines += [f"  missing {r.family:15} {r.api:50} {r.form:30} {r.why}" for r in rows if r.verdict == "missing"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(audit(form_coverage.differential_cases())))
