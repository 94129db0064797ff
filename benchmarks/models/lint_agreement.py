"""Does the GRAPH lint predict compilation? (issue 32, point 3)

For each model, the lint's verdict is read from the conversion: the MS5xx findings (warnings
of ``rewrites/passes/graph/graph_lint.py``) that lie inside the classes of the model's own
cells. Which classes those are, the MindSpore side records after building the model
(``ms_side.cell_classes``: file under the converted root and qualified name of every cell
type the model holds). The run's verdict is GRAPH mode's: it compiles and runs, or it fails
with an error. Four outcomes per model:

- agree, clean: no finding, and GRAPH runs;
- agree, refused: a finding, and GRAPH fails;
- missed: no finding, and GRAPH fails (the lint did not see what broke);
- false alarm: a finding, and GRAPH runs.

A GRAPH run that gives other numbers than torch without an error counts as a failure here
too: a lint that predicts GRAPH mode must report what computes otherwise as well.
Limits: code reached from ``construct`` outside the model's cell classes (module-level
functions, other classes' static methods) is not looked at; a finding in a method that
construct never calls counts.
"""
from __future__ import annotations

import ast
from pathlib import Path

# codes of the lint that say GRAPH mode refuses the code or computes something else; MS506
# (deep control flow) and MS507 (a constant built on every call) only slow it down
SPEED_ONLY = frozenset({"MS506", "MS507"})


def is_blocking(code: str) -> bool:
    return code.startswith("MS5") and code not in SPEED_ONLY


def findings(diagnostics) -> list[list]:
    """What convert_packages keeps of a file's lint: ``[line, code]`` of each blocking
    MS5xx finding (warnings and errors)."""
    from transpile.engine.diagnostics import Severity

    return sorted({(d.line, d.code) for d in diagnostics
                   if is_blocking(d.code) and d.severity in (Severity.WARNING, Severity.ERROR)})


def class_spans(source: str) -> dict[str, tuple[int, int]]:
    """Qualified class name -> (first line, last line), nested classes included."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    spans: dict[str, tuple[int, int]] = {}

    def visit(body, prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{prefix}{node.name}"
                spans[name] = (node.lineno, node.end_lineno or node.lineno)
                visit(node.body, f"{name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return spans


def model_findings(classes: list[list[str]], conv: dict, src_root: Path) -> list[str]:
    """The blocking findings inside the model's cell classes: ``file:line CODE``."""
    out: set[str] = set()
    spans_of: dict[str, dict] = {}
    for rel, qualname in classes:
        lint = conv.get(rel, {}).get("graph_lint") or []
        if not lint:
            continue
        if rel not in spans_of:
            src = src_root / rel
            spans_of[rel] = class_spans(src.read_text(encoding="utf-8", errors="replace")) if src.exists() else {}
        span = spans_of[rel].get(qualname)
        if span is None:
            continue
        out.update(f"{rel}:{line} {code}" for line, code in lint if span[0] <= line <= span[1])
    return sorted(out)


def outcome(row: dict, conv: dict, src_root: Path) -> dict | None:
    """The lint's and GRAPH's verdicts for one benchmark row, or None where GRAPH did not
    run on a built model (torch side failed, not built, GRAPH not measured)."""
    graph = row["results"].get("GRAPH")
    if row.get("torch_error") or not graph or not graph.get("built"):
        return None
    classes = graph.get("cell_classes")
    if classes is None:
        return None
    found = model_findings(classes, conv, src_root)
    fails = bool(graph.get("error")) or not graph.get("match")
    kind = {(False, False): "agree, clean", (True, True): "agree, refused",
            (False, True): "missed", (True, False): "false alarm"}[(bool(found), fails)]
    return {"kind": kind, "findings": found, "graph": graph.get("error") or ("match" if graph.get("match") else "mismatch")}


def report(rows: list[dict], conv: dict, src_root: Path) -> str:
    """The counts of the four outcomes and each disagreement, as markdown."""
    outcomes = {r["name"]: o for r in rows if (o := outcome(r, conv, src_root)) is not None}
    if not outcomes:
        return "GRAPH not run on a built model: nothing to compare."
    kinds = ("agree, clean", "agree, refused", "missed", "false alarm")
    counts = {k: sum(1 for o in outcomes.values() if o["kind"] == k) for k in kinds}
    agree = counts["agree, clean"] + counts["agree, refused"]
    lines = [f"- lint and GRAPH agree on {agree}/{len(outcomes)} built models "
             f"({counts['agree, clean']} clean and compile, {counts['agree, refused']} reported and fail); "
             f"missed (no finding, GRAPH fails or differs): {counts['missed']}; "
             f"false alarms (a finding, GRAPH matches): {counts['false alarm']}"]
    for name, o in sorted(outcomes.items()):
        if o["kind"] == "missed":
            lines.append(f"  - missed: {name}: {o['graph'][:160]}")
        elif o["kind"] == "false alarm":
            lines.append(f"  - false alarm: {name}: {', '.join(o['findings'][:3])}")
    return "\n".join(lines)
