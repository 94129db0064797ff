"""The Hugging Face benchmark (issue 31), in one command:

    .venv/bin/python benchmarks/hf/run.py [--only NAME ...] [--modes M ...] [--reuse-torch]
        [--reuse-conversion] [--reconvert REL ...] [--record NAME] [--import-all] [--without-torch]

``transformers`` converted from its own source as a whole, unedited, and six of its models
(``models.toml`` beside this file) compared with torch. The harness is ``benchmarks/models``'
(``run.py``, ``torch_side.py``, ``ms_side.py``, ``verdict.py``, imported or run from there);
what differs is places: the torch side's virtualenv is ``benchmarks/.venv-hf`` (torch and
transformers pinned in ``models.toml``), the scratch directory ``benchmarks/.work-hf``, the
MindSpore side's pure-Python packages ``benchmarks/.work-hf/deps``.

A whole-package conversion is minutes of CPU, so it can be kept: ``--reuse-conversion``
takes the converted tree and its record (``.work-hf/conversion.json``) from the last run;
``--reconvert REL ...`` (paths relative to the source root, ``transformers/cache_utils.py``)
converts those files again into the kept tree, each with its package's facts (the tree's
index is built once), as the whole-package run would.

A model given ``generate`` in ``models.toml`` (the causal LMs) also runs its own greedy
``generate()`` on both sides; the tokens are compared one by one. ``--without-torch``
runs each model once more (PYNATIVE), and the import of every module with
``--import-all``, in a process that finds no torch (``benchmarks/models/no_torch.py``):
the converted package as a user without torch runs it.

Written: ``results.md`` and ``results.json`` beside this file (``--record NAME`` writes
``NAME.md``/``NAME.json`` instead: ``first_contact`` is the converter at its base commit),
with the whole-package conversion's figures (files, failed files, rate, seconds), each
model's verdict per mode and its first error at file:line of the converted code.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH / "models"))  # models/run.py imports verdict from its folder
from loader import converter_commit as shared_converter_commit, load_harness  # noqa: E402


harness = load_harness(BENCH / ".work-hf", BENCH / ".venv-hf", BENCH / ".work-hf" / "deps")
RECORD = harness.WORK / "conversion.json"


def converter_commit() -> str:
    return shared_converter_commit(short=True)


def conversion_figures(conv: dict, seconds: float) -> dict:
    """Files, failed files (with their errors), the rate (converted torch uses over all
    measured), and the seconds the conversion took."""
    converted = sum(f["converted_uses"] for f in conv.values())
    left = sum(f["unconverted"] for f in conv.values())
    failed = {rel: f["errors"][:1] for rel, f in conv.items() if f["status"] == "failed"}
    return {"files": len(conv), "changed": sum(f["status"] == "converted" for f in conv.values()),
            "failed": len(failed), "failed_files": failed,
            "rate": converted / (converted + left) if converted + left else None,
            "seconds": round(seconds, 1)}


def convert(py: str, config: dict, reuse: bool) -> tuple[dict, dict]:
    """The conversion record (harness.convert_packages) and its figures (with the converter's
    commit as the conversion started), kept in RECORD."""
    if reuse and RECORD.exists():
        kept = json.loads(RECORD.read_text(encoding="utf-8"))
        return kept["files"], kept["figures"]
    figures = {"commit": converter_commit()}
    start = time.perf_counter()
    conv = harness.convert_packages(py, config)
    figures.update(conversion_figures(conv, time.perf_counter() - start))
    RECORD.write_text(json.dumps({"files": conv, "figures": figures}), encoding="utf-8")
    return conv, figures


def reconvert(rels: list[str], conv: dict) -> None:
    """Convert the given source files again into the kept converted tree, each with the
    facts its package gives it (the tree's index is built once: what a whole-package run
    hands the file), so that a file reconverted reads as the whole run would write it."""
    from transpile import convert_code
    from transpile.engine.diagnostics import Severity
    from transpile.engine.package_index import PackageIndex

    indexes: dict[str, PackageIndex] = {}
    for rel in rels:
        package = rel.split("/")[0]
        root = harness.WORK / "src" / package
        if package not in indexes:
            indexes[package] = PackageIndex(root, sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts))
        src, dest = harness.WORK / "src" / rel, harness.WORK / "converted" / rel
        r = convert_code(src.read_text(encoding="utf-8"), filename=str(src), package=indexes[package].facts(src.resolve()))
        dest.write_text(r.code, encoding="utf-8")  # the kept tree is the tool's output: never edited
        status = "failed" if r.failed else ("converted" if r.code != src.read_text(encoding="utf-8") else "unchanged")
        conv[rel] = {**conv.get(rel, {}), "status": status,
                     "errors": [d.format() for d in r.diagnostics if d.severity is Severity.ERROR],
                     "unconverted": r.stats.unconverted, "converted_uses": r.stats.converted}
        harness.say(f"reconverted {rel}: {status}")


def module_name(rel: str) -> str:
    """``transformers/models/bert/modeling_bert.py`` -> ``transformers.models.bert.modeling_bert``."""
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_all(conv: dict, deps: str, timeout: float, without_torch: bool = False) -> dict:
    """Every converted module imported in one MindSpore-side process (``import_all.py``;
    ``without_torch``: one that finds no torch): {"seconds", "modules": {name: {"ok"} or
    {"ok": False, "error", "site"}}}."""
    out = harness.WORK / ("import_all_without_torch.json" if without_torch else "import_all.json")
    out.unlink(missing_ok=True)
    names = sorted({module_name(rel) for rel in conv})
    env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
    try:
        subprocess.run([sys.executable, str(HERE / "import_all.py"), *(["--without-torch"] if without_torch else []),
                        str(harness.WORK / "converted"), deps, str(out), *names], env=env, cwd=harness.WORK, timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s", "modules": {}}
    if not out.exists():
        return {"error": "the import process died", "modules": {}}
    return json.loads(out.read_text(encoding="utf-8"))


def import_text(report: dict, shown: int = 12, what: str = "import of every converted module") -> str:
    """How many modules import; the failures grouped by where they were raised."""
    if report.get("error"):
        return f"- {what}: {report['error']}"
    mods = report["modules"]
    failed = {n: r for n, r in mods.items() if not r["ok"]}
    groups: dict[str, list[str]] = {}
    for name, r in failed.items():
        site = r.get("site")
        where = f"{site['file']}:{site['line']}" if site else "(no frame in converted code)"
        groups.setdefault(f"{where}: {r['error'][:160]}", []).append(name)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = [f"- {what}: {len(mods) - len(failed)}/{len(mods)} import "
             f"({report['seconds']:.0f} s); {len(failed)} fail, at {len(groups)} distinct places; the most common:"]
    lines += [f"  - {len(names)} modules: {where}".replace("|", "\\|") for where, names in ranked[:shown]]
    return "\n".join(lines)


def first_error(row: dict, mode: str) -> tuple[str, str]:
    """(verdict, the first error line with the converted file:line it broke at)."""
    if row["torch_error"]:
        return "torch error", row["torch_error"]
    res = row["results"].get(mode)
    if res is None:
        return "not run", ""
    if not res.get("error"):
        return ("match", "") if res.get("match") else (
            "mismatch", f"max abs diff {harness._fmt(res.get('max_abs_diff'))}, tolerance {harness._fmt(row['tolerance'])}")
    site = res.get("site") or {}
    where = f"{site['file']}:{site['line']}" if site.get("file") else ""
    stage = res["error"].split(":", 1)[0]
    kind = "run error" if stage.startswith("run") or stage == "compare" else "build error"
    return kind, (f"{where}: " if where else "") + res["error"].splitlines()[0][:300]


def verdict_table(rows: list[dict]) -> str:
    lines = ["| model | PYNATIVE | GRAPH | max abs diff PYNATIVE | first error (PYNATIVE, else GRAPH) |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        (p, pe), (g, ge) = first_error(r, "PYNATIVE"), first_error(r, "GRAPH")
        diff = harness._fmt((r["results"].get("PYNATIVE") or {}).get("max_abs_diff"))
        why = (pe or ge).replace("|", "\\|")
        lines.append(f"| {r['name']} | {p} | {g} | {diff} | {why} |")
    return "\n".join(lines)


def generate_table(rows: list[dict], modes) -> str:
    """The ``generate()`` runs: per model and mode, torch's tokens against the converted
    model's, token by token (the first row and position where they differ), or the error."""
    lines = ["| model | mode | tokens | first difference (row, position) or error |", "| --- | --- | --- | --- |"]
    for r in rows:
        if not r.get("generate_asked"):
            continue
        for mode in modes:
            res = r["results"].get(mode) or {}
            gen = res.get("generate")
            if r.get("generate_torch_error"):
                verdict, why = "torch error", r["generate_torch_error"]
            elif gen is None:
                verdict, why = "not run", (res.get("error") or "").splitlines()[0][:200] if res.get("error") else ""
            elif gen.get("error"):
                site = gen.get("site") or {}
                where = f"{site['file']}:{site['line']}: " if site.get("file") else ""
                verdict, why = "error", where + gen["error"][:300]
            else:
                n = len(gen["expected"][0]) if gen["expected"] else 0
                verdict = "match" if gen["match"] else "differ"
                why = f"{n} tokens per row, all equal" if gen["match"] else f"{gen.get('first_difference')}"
                why += f"; {generated_variety(gen)}"
            lines.append(f"| {r['name']} | {mode} | {verdict} | {why.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


# What a GRAPH-mode compile error says -> the rule of MindSpore's graph syntax the code breaks
GRAPH_RULES = (
    ("Unsupported statement 'Try'",
     "GRAPH mode compiles no try statement: a function the compiled code calls holds one"),
    ("TupleGetItem', input[0] should be Sequence, but got None",
     "a value the graph takes apart as a tuple (an item of it) is None at compile time"),
    ("Unsupported statement", "a statement GRAPH mode does not compile"),
)
_FRAME = re.compile(r"^# (\d+) In file (\S+?):(\d+)")


def graph_cause(res: dict, root: str) -> dict:
    """The GRAPH run's first error: the rule it breaks (GRAPH_RULES, else the error's first
    line), and the compiled call path MindSpore printed ("The Traceback of Net Construct
    Code"), as converted file:line from the construct down to the statement it stopped at."""
    error = " ".join((res.get("error") or "").split())
    rule = next((why for pattern, why in GRAPH_RULES if pattern in error), error.split(". ")[0][:200])
    path = []
    for line in (res.get("detail") or "").splitlines():
        m = _FRAME.match(line.strip())
        if m:
            where = f"{os.path.relpath(m.group(2), root)}:{m.group(3)}"
            if not path or path[-1] != where:
                path.append(where)
    return {"rule": rule, "path": path}


def graph_causes_table(rows: list[dict]) -> str:
    """Per model, the first GRAPH error: where it stopped in the converted code, the rule it
    breaks, and the compiled call path to it."""
    root = str(harness.WORK / "converted")
    lines = ["| model | stopped at (converted file:line: code) | rule it breaks | compiled call path |",
             "| --- | --- | --- | --- |"]
    for r in rows:
        res = r["results"].get("GRAPH") or {}
        if not res.get("error"):
            continue
        site = res.get("site") or {}
        where = f"{site.get('file')}:{site.get('line')}: `{site.get('code', '')}`" if site.get("file") else "(no frame)"
        cause = graph_cause(res, root)
        res["cause"] = cause
        cells = [r["name"], where, cause["rule"], " -> ".join(cause["path"][-6:]) or "(none printed)"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def generated_variety(gen: dict) -> str:
    """How many distinct tokens torch generated per row: a check whose rows repeat one token
    (a tiny random model's flat logits) would pass a converted model that only copies it."""
    start = gen.get("prompt_length")
    if start is None:
        return "distinct generated tokens not known"
    counts = [len(set(row[start:])) for row in gen["expected"]]
    return f"distinct generated tokens per row (torch): {', '.join(map(str, counts))} of {len(gen['expected'][0]) - start}"


def without_torch_table(rows: list[dict], results: dict) -> str:
    """Each model imported, built, given its weights and run (PYNATIVE) in a process that
    finds no torch."""
    lines = ["| model | without torch (PYNATIVE) | first error | `generate()` without torch |", "| --- | --- | --- | --- |"]
    for r in rows:
        res = results.get(r["name"])
        if res is None:
            continue
        row = {**r, "results": {"PYNATIVE": res}}
        verdict, why = first_error(row, "PYNATIVE")
        gen = res.get("generate")
        tokens = ("-" if gen is None else f"error: {gen['error'][:200]}" if gen.get("error")
                  else "match (torch's tokens)" if gen.get("match") else f"differ at {gen.get('first_difference')}")
        lines.append(f"| {r['name']} | {verdict} | {why.replace('|', chr(92) + '|')} | {tokens.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


def record_generate_sites(rows: list[dict], conv: dict) -> None:
    """Each failed ``generate()`` run gets its ``site`` (where it broke in the converted code)."""
    for r in rows:
        for res in r["results"].values():
            gen = (res or {}).get("generate")
            if gen and gen.get("error"):
                gen["site"] = harness.error_site(gen, conv)


def run_without_torch(models, torch_meta, conv: dict, jobs: int, timeout: float, deps: str) -> dict:
    """The PYNATIVE run of each model (whose torch side ran) in a process that finds no torch."""
    from concurrent.futures import ThreadPoolExecutor

    names = [m["name"] for m in models if not torch_meta[m["name"]].get("error")]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(zip(names, pool.map(lambda n: harness.run_ms(n, "PYNATIVE", timeout, deps, without_torch=True), names)))
    for name, res in done.items():
        if res.get("error"):
            res["site"] = harness.error_site(res, conv)
        harness.say(f"no torch {name:<24} {res.get('seconds', 0):7.1f}s  {res.get('error') or 'ok'}")
    return done


def figures_text(figures: dict) -> str:
    rate = "n/a" if figures["rate"] is None else f"{figures['rate']:.1%}"
    failed = "".join(f"\n  - {rel}: {(errs or ['(no error diagnostic)'])[0]}"
                     for rel, errs in sorted(figures["failed_files"].items()))
    return (f"- whole-package conversion: {figures['files']} files, {figures['changed']} changed, "
            f"{figures['failed']} failed, rate {rate}, {figures['seconds']:.0f} s" + failed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(HERE / "models.toml"))
    ap.add_argument("--only", nargs="*", default=[], help="model names (default: all)")
    ap.add_argument("--modes", nargs="*", default=list(harness.MODES), choices=harness.MODES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per (model, mode)")
    ap.add_argument("--torch-python", default=None)
    ap.add_argument("--reuse-torch", action="store_true", help="keep torch-side results from an earlier run")
    ap.add_argument("--reuse-conversion", action="store_true", help="keep the converted package of the last run")
    ap.add_argument("--reconvert", nargs="*", default=[], help="source files (relative) to convert again")
    ap.add_argument("--record", default="results", help="stem of the .md/.json written beside this file")
    ap.add_argument("--import-all", action="store_true",
                    help="also import every converted module (one process) and report where imports fail")
    ap.add_argument("--without-torch", action="store_true",
                    help="also run each model (PYNATIVE), and the import of every module with --import-all, "
                         "in a process that finds no torch")
    args = ap.parse_args(argv)
    harness.WORK.mkdir(parents=True, exist_ok=True)
    config_path = Path(args.config)
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    models = [m for m in config["models"] if not args.only or m["name"] in args.only]
    if not models:
        print("no such model")
        return 2
    start = time.perf_counter()
    py = harness.torch_python(args, config)
    harness.run_torch_side(py, config_path, [m["name"] for m in models], args.reuse_torch)
    torch_meta = {m["name"]: json.loads((harness.WORK / "torch" / f"{m['name']}.json").read_text()) for m in models}
    conv, figures = convert(py, config, args.reuse_conversion or bool(args.reconvert))
    commit = figures.get("commit", "unknown")  # the converter that made the kept tree
    if args.reconvert:
        reconvert(args.reconvert, conv)
        commit += f"; {len(args.reconvert)} files reconverted at {converter_commit()}"
    deps = harness.ms_deps(config)
    imports = import_all(conv, deps, 3600.0) if args.import_all else None
    imports_bare = import_all(conv, deps, 3600.0, without_torch=True) if args.import_all and args.without_torch else None
    results = harness.run_ms_modes(models, torch_meta, args.modes, args.jobs, args.timeout, deps, width=24)
    bare = run_without_torch(models, torch_meta, conv, args.jobs, args.timeout, deps) if args.without_torch else {}
    rows = harness.build_rows(models, torch_meta, conv, results)
    for r in rows:  # what generate() was asked on the torch side, and how it went there
        asked = torch_meta[r["name"]].get("generate")
        r["generate_asked"], r["generate_torch_error"] = bool(asked), (asked or {}).get("error")
    record_generate_sites(rows, conv)
    text = verdict_table(rows)
    if any(r["generate_asked"] for r in rows):
        text += "\n\n`generate()` (greedy), torch's tokens against the converted model's:\n\n" + generate_table(rows, args.modes)
    if "GRAPH" in args.modes and any((r["results"].get("GRAPH") or {}).get("error") for r in rows):
        text += "\n\nGRAPH causes (the first error per model; the call path's last six frames):\n\n" + graph_causes_table(rows)
    if bare:
        text += "\n\nWithout torch (a process in which `import torch` fails):\n\n" + without_torch_table(rows, bare)
    figures_md = figures_text(figures) + ("\n" + import_text(imports) if imports is not None else "")
    if imports_bare is not None:
        figures_md += "\n" + import_text(imports_bare, what="the same, in a process that finds no torch")
    print("\n" + figures_md + "\n\n" + text)
    body = (f"# Hugging Face benchmark: {args.record} ({time.strftime('%Y-%m-%d')}, converter at {commit})\n\n"
            f"Produced by `benchmarks/hf/run.py`"
            + (f" --reconvert {' '.join(args.reconvert)}" if args.reconvert else "")
            + "; see benchmarks/README.md (\"The Hugging Face benchmark\").\n\n"
            f"{figures_md}\n\n{text}\n\n{harness.table(rows)}\n\n## Failures\n\n{harness.failures(rows, conv)}\n")
    (HERE / f"{args.record}.md").write_text(body, encoding="utf-8")
    (HERE / f"{args.record}.json").write_text(json.dumps({
        "commit": commit, "conversion": figures, "imports": imports, "imports_without_torch": imports_bare,
        "without_torch": {name: {k: v for k, v in res.items() if k != "detail"} for name, res in bare.items()},
        "verdicts": {r["name"]: {m.lower(): dict(zip(("verdict", "error"), first_error(r, m))) for m in harness.MODES}
                     for r in rows},
        "rows": rows,
        "files": harness.conversion_record(rows, conv),
    }, indent=1, default=str), encoding="utf-8")
    print(f"\n{time.perf_counter() - start:.0f} s; details in {HERE / (args.record + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
