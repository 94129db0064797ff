"""Does the graph lint predict compilation? (issue 32, point 3)

    .venv/bin/python benchmarks/models/lint_vs_compile.py --work DIR [--torch-python PY] [--results JSON]

For every model of a finished ``run.py`` run (``DIR`` is its ``--work`` folder, holding
``src/``, the package sources it converted, and ``results.json``):

1. The classes the model is made of: the torch side builds each model again (no forward)
   and lists the source file and line range of every ``nn.Module`` subclass among its
   modules, in the packages ``models.toml`` converts (``classes`` below, in the torch venv).
2. The lint's findings on those classes: each package's source tree is converted again
   as a whole (``transpile.convert_paths``, as ``run.py`` does) and the MS5xx findings whose
   line falls inside one of the model's classes are the model's findings.
3. Prediction against the run: "the lint finds no MS5xx" against "GRAPH ran without an
   error" (a match or a mismatch: the model compiled and ran). MS506 and MS507 (slow
   compilation, a constant built on every call) say nothing of whether a model compiles;
   they are counted apart.

Prints the table of agreements and every disagreement, with the findings; ``--out`` writes
the same as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from lint_agreement import is_blocking  # this file's folder (benchmarks/models): one rule for both comparisons

HERE = Path(__file__).resolve().parent

CLASSES = r'''
import importlib, inspect, json, sys, tomllib, warnings
import torch
warnings.filterwarnings("ignore")
config = tomllib.loads(open(sys.argv[1], encoding="utf-8").read())
roots = {p: None for p in config["packages"]}
out = {}
for spec in config["models"]:
    try:
        torch.manual_seed(0)
        module = importlib.import_module(spec["module"])
        model = eval(spec["build"], dict(vars(module)))
        spans = set()
        for m in model.modules():
            for cls in type(m).__mro__:
                if cls.__module__.split(".")[0] not in roots:
                    continue
                try:
                    lines, first = inspect.getsourcelines(cls)
                    path = inspect.getsourcefile(cls)
                except (OSError, TypeError):
                    continue
                spans.add((cls.__module__, path, first, first + len(lines) - 1, cls.__qualname__))
        out[spec["name"]] = {"classes": sorted(spans), "error": None}
    except Exception as exc:
        out[spec["name"]] = {"classes": [], "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    print(spec["name"], len(out[spec["name"]]["classes"]), out[spec["name"]]["error"] or "", file=sys.stderr, flush=True)
print(json.dumps(out))
'''


def model_classes(py: str, config_path: Path) -> dict:
    """Model name -> its classes (module, source file, first line, last line, qualname) in
    the converted packages (the torch side, in ``py``)."""
    with tempfile.TemporaryDirectory(prefix="lint-vs-compile-") as tmp:
        proc = subprocess.run([py, "-c", CLASSES, str(config_path)], check=True, capture_output=True, text=True,
                              cwd=tmp, env=dict(os.environ, PYTHONWARNINGS="ignore", CUDA_VISIBLE_DEVICES=""))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def lint_findings(src_root: Path) -> dict[str, list[tuple[int, str, str]]]:
    """Source file (relative to ``src_root``) -> its MS5xx findings (line, code, message),
    each package tree converted as a whole."""
    from transpile import convert_paths

    found: dict[str, list[tuple[int, str, str]]] = {}
    for pkg in sorted(p for p in src_root.iterdir() if p.is_dir()):
        with tempfile.TemporaryDirectory(prefix="lint-vs-compile-") as tmp:
            report = convert_paths([pkg], output=Path(tmp) / pkg.name)
        for f in report.files:
            if f.result is None:
                continue
            rel = f.source.relative_to(src_root).as_posix()
            found[rel] = [(d.line, d.code, d.message) for d in f.result.diagnostics if d.code.startswith("MS5")]
    return found


def package_relative(path: str, module: str) -> str | None:
    """A source file of the torch venv as ``pkg/...`` (the top package of ``module``)."""
    parts = Path(path).parts
    top = module.split(".")[0]
    if top not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index(top)
    return "/".join(parts[i:])


def compare(classes: dict, findings: dict, rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        name = row["name"]
        graph = row["results"].get("GRAPH")
        if graph is None:
            continue
        compiled = not graph.get("error")
        mine, blocking = [], []
        for module, path, first, last, qual in classes.get(name, {}).get("classes", []):
            rel = package_relative(path, module)
            for line, code, message in findings.get(rel, []):
                if first <= line <= last:
                    item = f"{rel}:{line} {code} ({qual}): {message}"
                    if item not in mine:
                        mine.append(item)
                        if is_blocking(code):
                            blocking.append(item)
        out.append({"name": name, "family": row["family"], "compiled": compiled,
                    "graph": "match" if graph.get("match") else (graph.get("error") or "mismatch").splitlines()[0][:160],
                    "lint_clean": not blocking, "findings": blocking,
                    "slow_only": [f for f in mine if f not in blocking],
                    "classes_error": classes.get(name, {}).get("error")})
    return out


def render(items: list[dict]) -> str:
    n = len(items)
    cell = {(a, b): [i for i in items if i["lint_clean"] is a and i["compiled"] is b]
            for a in (True, False) for b in (True, False)}
    agree = len(cell[True, True]) + len(cell[False, False])
    lines = [
        f"models with a GRAPH run: {n}; lint and compilation agree on {agree}, disagree on {n - agree}",
        "",
        "| | GRAPH ran without an error | GRAPH failed |",
        "| --- | --- | --- |",
        f"| lint: no MS5xx (MS506, MS507 not counted) | {len(cell[True, True])} | {len(cell[True, False])} |",
        f"| lint: an MS5xx finding | {len(cell[False, True])} | {len(cell[False, False])} |",
        "",
        "Lint clean but GRAPH failed (the lint misses these):",
    ]
    for i in cell[True, False]:
        lines.append(f"  {i['name']}: {i['graph']}")
    lines.append("")
    lines.append("Lint finding but GRAPH ran (the lint is wrong or the construct is on a path not taken):")
    for i in cell[False, True]:
        lines.append(f"  {i['name']} ({i['graph']}):")
        lines.extend(f"    {f}" for f in i["findings"])
    lines.append("")
    lines.append("Agreeing failures (finding and GRAPH failed):")
    for i in cell[False, False]:
        lines.append(f"  {i['name']}: {i['graph']}")
        lines.extend(f"    {f}" for f in i["findings"])
    errors = [i for i in items if i["classes_error"]]
    if errors:
        lines.append("")
        lines.append("Models whose classes could not be listed (counted as lint clean):")
        lines.extend(f"  {i['name']}: {i['classes_error']}" for i in errors)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="the run.py --work folder of a finished run")
    ap.add_argument("--config", default=str(HERE / "models.toml"))
    ap.add_argument("--torch-python", default=str(HERE.parent / ".venv-tv" / "bin" / "python"))
    ap.add_argument("--results", default=None, help="results.json (default: WORK/results.json)")
    ap.add_argument("--out", default=None, help="write the comparison as JSON here")
    args = ap.parse_args(argv)
    work = Path(args.work)
    rows = json.loads(Path(args.results or work / "results.json").read_text(encoding="utf-8"))["rows"]
    tomllib.loads(Path(args.config).read_text(encoding="utf-8"))  # fail early on a bad config
    cached = work / "model_classes.json"  # the torch side's listing, kept for the next comparison
    if cached.exists():
        classes = json.loads(cached.read_text(encoding="utf-8"))
    else:
        classes = model_classes(args.torch_python, Path(args.config).resolve())
        cached.write_text(json.dumps(classes), encoding="utf-8")
    cached = work / "lint_findings.json"  # the converter's findings on these sources
    if cached.exists():
        findings = json.loads(cached.read_text(encoding="utf-8"))
    else:
        findings = lint_findings(work / "src")
        cached.write_text(json.dumps(findings), encoding="utf-8")
    items = compare(classes, findings, rows)
    print(render(items))
    if args.out:
        Path(args.out).write_text(json.dumps(items, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
