"""The sampled benchmark (issue 29), in one command:

    .venv/bin/python benchmarks/sampled/run.py [--only NAME ...] [--jobs N] [--timeout S] [--reuse-torch]

The harness of ``benchmarks/models`` (its ``run.py``, ``torch_side.py``, ``ms_side.py`` and
``verdict.py``, imported or run from there), on the models of ``models.toml`` beside this
file: the packages ``draw.py`` drew, in draw order. The differences are places only: the
torch side's virtualenv is ``benchmarks/.venv-sampled``, the scratch directory
``benchmarks/.sampled/work``, the MindSpore side's pure-Python packages
``benchmarks/.sampled/deps``; the results are ``results.md``/``results.json`` beside this
file and the table between the ``bench-sampled`` markers of ``benchmarks/README.md``.

First contact: a model's first run records its verdict in each mode (match, mismatch,
convert error, build error, run error; the first line of the error) in
``first_contact.toml``, with the commit of the converter that produced it. A model
already there keeps its entry: first contact is what the converter did on code it had
never been fixed for, and later runs do not rewrite it.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH / "models"))  # models/run.py imports verdict from its folder
from loader import converter_commit, load_harness  # noqa: E402


harness = load_harness(BENCH / ".sampled" / "work", BENCH / ".venv-sampled", BENCH / ".sampled" / "deps")
README_START = "<!-- bench-sampled:start -->"
README_END = "<!-- bench-sampled:end -->"
FIRST_CONTACT = HERE / "first_contact.toml"


def copy_package_data(py: str, config: dict) -> int:
    """The non-Python files of each package (a version.txt read at import, shipped configs)
    beside the converted code, as an installed package has them; the harness converts and
    copies only ``*.py``. Returns how many files were copied."""
    import shutil

    count = 0
    for pkg, where in harness.package_dirs(py, list(config["packages"])).items():
        dest = harness.WORK / "converted" / pkg
        for path in Path(where).rglob("*"):
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            target = dest / path.relative_to(where)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                count += 1
    return count + copy_distribution_metadata(py, list(config["packages"]))


def copy_distribution_metadata(py: str, packages: list[str]) -> int:
    """Each package's distribution metadata (its ``*.dist-info`` folder) beside the converted
    code, as an installed package has it: a package that reads its own version at import
    (``importlib.metadata.version("torch_uncertainty")``) finds it on the MindSpore side too.
    Returns how many files were copied."""
    import shutil

    code = ("import importlib.metadata as m, json, sys; d = m.packages_distributions(); "
            "print(json.dumps({p: [str(m.distribution(n)._path) for n in d.get(p, [])] for p in sys.argv[1:]}))")
    proc = subprocess.run([py, "-c", code, *packages], check=True, capture_output=True, text=True)
    count = 0
    for folders in json.loads(proc.stdout.strip().splitlines()[-1]).values():
        for folder in map(Path, folders):
            target = harness.WORK / "converted" / folder.name
            if folder.is_dir() and folder.name.endswith(".dist-info") and not target.exists():
                shutil.copytree(folder, target)
                count += sum(1 for f in target.rglob("*") if f.is_file())
    return count


def with_converted_dependencies(config: dict) -> dict:
    """The config with each package's torch-based dependencies (its ``converted_with``:
    torchvision, torchaudio, timm, monai) added as packages of their own, converted from the
    torch venv's installed source alongside it, as a migration engineer would convert them.
    Their settings (``blank_init``) are benchmarks/models' ``[packages.X]``, which already
    converts them: one set of rules for both benchmarks, except where this config's
    ``[dependencies.X]`` replaces them (a drawn package uses what benchmarks/models blanks) or
    configures one benchmarks/models never converts (hyper-connections)."""
    wanted = sorted({dep for entry in config["packages"].values() for dep in entry.get("converted_with", [])}
                    - set(config["packages"]))
    if not wanted:
        return config
    shared = tomllib.loads((BENCH / "models" / "models.toml").read_text(encoding="utf-8"))["packages"]
    own = config.get("dependencies", {})
    unknown = [dep for dep in wanted if dep not in shared and dep not in own]
    if unknown:
        raise SystemExit(f"converted_with names packages neither benchmarks/models/models.toml nor [dependencies] "
                         f"configures: {unknown}")
    return {**config, "packages": {**config["packages"], **{dep: own[dep] if dep in own else shared[dep] for dep in wanted}}}


def verdict_kind(row: dict, mode: str) -> tuple[str, str]:
    """One model in one mode: (match | mismatch | convert error | build error | run error |
    torch error | not run, the first line of the error)."""
    if row["torch_error"]:
        return "torch error", row["torch_error"]
    res = row["results"].get(mode)
    if res is None:
        return "not run", ""
    err = res.get("error")
    if not err:
        if res.get("match"):
            return "match", ""
        return "mismatch", f"max abs diff {harness._fmt(res.get('max_abs_diff'))}, tolerance {harness._fmt(row['tolerance'])}"
    where = harness._where(res.get("detail", ""))
    if not row["converted"]:
        return "convert error", err + where
    stage = err.split(":", 1)[0]
    if stage.startswith("run") or stage == "compare":
        return "run error", err + where
    return "build error", err + where  # import converted module, build, copy weights, child process died


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def record_first_contact(rows: list[dict], models: list[dict], modes: list[str], commit: str) -> int:
    """Add the models not yet in first_contact.toml (both modes run), measured with the
    converter at ``commit``; returns how many."""
    known = tomllib.loads(FIRST_CONTACT.read_text(encoding="utf-8")) if FIRST_CONTACT.exists() else {}
    have = {m["name"] for m in known.get("model", [])}
    spec = {m["name"]: m for m in models}
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    new = []
    for row in rows:
        if row["name"] in have or set(modes) != set(harness.MODES):
            continue
        lines = ["[[model]]", f"name = {_toml_str(row['name'])}",
                 f"package = {_toml_str(spec[row['name']].get('package', ''))}",
                 f"family = {_toml_str(row['family'])}", f"commit = {_toml_str(commit)}", f"date = {_toml_str(stamp)}"]
        for mode in harness.MODES:
            kind, why = verdict_kind(row, mode)
            lines.append(f"{mode.lower()} = {_toml_str(kind)}")
            if why:
                lines.append(f"{mode.lower()}_error = {_toml_str(why.splitlines()[0][:600])}")
        new.append("\n".join(lines))
    if new:
        head = "" if FIRST_CONTACT.exists() else (
            "# Written by benchmarks/sampled/run.py: each model's verdict the first time it ran (see its docstring).\n\n")
        with FIRST_CONTACT.open("a", encoding="utf-8") as fh:
            fh.write(head + "\n\n".join(new) + "\n\n")
    return len(new)


KINDS = ("match", "mismatch", "convert error", "build error", "run error", "torch error")
FC_START = "<!-- sampled-first-contact:start -->"
FC_END = "<!-- sampled-first-contact:end -->"


def first_contact_tables(entries: list[dict]) -> str:
    """Per family and overall: models, and per mode how many fell in each verdict kind."""
    def pct(k, n):
        return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"

    lines = []
    for mode in harness.MODES:
        key = mode.lower()
        lines += [f"**{mode}**", "", "| family | models | " + " | ".join(KINDS) + " |",
                  "| --- | --- | " + " | ".join("---" for _ in KINDS) + " |"]
        for fam in sorted({e["family"] for e in entries}) + ["all"]:
            rs = [e for e in entries if fam in ("all", e["family"])]
            counts = [sum(e.get(key) == k for e in rs) for k in KINDS]
            label = f"**{fam}**" if fam == "all" else fam
            lines.append(f"| {label} | {len(rs)} | " + " | ".join(
                pct(c, len(rs)) if k == "match" else str(c) for k, c in zip(KINDS, counts)) + " |")
        lines.append("")
    return "\n".join(lines)


def write_first_contact_md() -> str:
    """first_contact.md: the tables, then each model's verdicts and first error line."""
    entries = tomllib.loads(FIRST_CONTACT.read_text(encoding="utf-8")).get("model", [])
    commits = sorted({e["commit"] for e in entries})
    packages = sorted({e["package"] for e in entries})
    head = (f"# Sampled benchmark: first contact\n\nWritten by `benchmarks/sampled/run.py` from "
            f"`first_contact.toml`: each model's verdict the first time it ran, with the converter "
            f"at {', '.join(commits)}. {len(entries)} models from {len(packages)} packages.\n\n")
    rows = ["| model | package | family | PYNATIVE | GRAPH | first error (PYNATIVE, else GRAPH) |",
            "| --- | --- | --- | --- | --- | --- |"]
    for e in entries:
        why = (e.get("pynative_error") or e.get("graph_error") or "").replace("|", "\\|")
        rows.append(f"| {e['name']} | {e['package']} | {e['family']} | {e.get('pynative')} | {e.get('graph')} "
                    f"| {why[:300]} |")
    tables = first_contact_tables(entries)
    (HERE / "first_contact.md").write_text(head + tables + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return tables


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(HERE / "models.toml"))
    ap.add_argument("--only", nargs="*", default=[], help="model names (default: all)")
    ap.add_argument("--package", nargs="*", default=[], help="the models of these draw entries")
    ap.add_argument("--modes", nargs="*", default=list(harness.MODES), choices=harness.MODES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per (model, mode)")
    ap.add_argument("--torch-python", default=None)
    ap.add_argument("--reuse-torch", action="store_true", help="keep torch-side results from an earlier run")
    ap.add_argument("--work", default=None,
                    help="scratch directory (default benchmarks/.sampled/work): a run beside another one "
                         "gets its own; a subset's results.md/json go there")
    ap.add_argument("--deps", default=None,
                    help="the MindSpore side's dependency folder (default benchmarks/.sampled/deps)")
    ap.add_argument("--report", action="store_true",
                    help="only rewrite first_contact.md and the README's first-contact tables from first_contact.toml")
    args = ap.parse_args(argv)
    if args.report:
        tables = write_first_contact_md()
        readme = BENCH / "README.md"
        doc = readme.read_text(encoding="utf-8")
        if FC_START in doc and FC_END in doc:
            head, rest = doc.split(FC_START, 1)
            _, tail = rest.split(FC_END, 1)
            readme.write_text(f"{head}{FC_START}\n{tables}{FC_END}{tail}", encoding="utf-8")
        print(tables)
        return 0
    if args.work:
        harness.WORK = Path(args.work).resolve()
    if args.deps:
        harness.DEPS = Path(args.deps).resolve()
    harness.WORK.mkdir(parents=True, exist_ok=True)
    config_path = Path(args.config)
    drawn = tomllib.loads(config_path.read_text(encoding="utf-8"))
    models = [m for m in drawn["models"]
              if (not args.only or m["name"] in args.only) and (not args.package or m.get("package") in args.package)]
    if not models:
        print("no such model")
        return 2
    if args.only or args.package:  # a subset converts only the packages its models import
        drawn = {**drawn, "packages": {pkg: entry for pkg, entry in drawn["packages"].items()
                                       if any(m["module"].split(".")[0] == pkg for m in models)}}
    config = with_converted_dependencies(drawn)
    start = time.perf_counter()
    commit = converter_commit()  # now: the code converting is what is on disk when the run starts
    py = harness.torch_python(args, config)
    harness.run_torch_side(py, config_path, [m["name"] for m in models], args.reuse_torch)
    torch_meta = {m["name"]: json.loads((harness.WORK / "torch" / f"{m['name']}.json").read_text()) for m in models}
    conv = harness.convert_packages(py, config)
    # the drawn packages' data files only: their dependencies are converted as benchmarks/models does (*.py)
    print(f"copied {copy_package_data(py, drawn)} package data files beside the converted code")
    deps = harness.ms_deps(config)
    results = harness.run_ms_modes(models, torch_meta, args.modes, args.jobs, args.timeout, deps, width=36)
    rows = harness.build_rows(models, torch_meta, conv, results)
    added = record_first_contact(rows, models, args.modes, commit)
    fc_tables = write_first_contact_md() if FIRST_CONTACT.exists() else ""
    text = harness.table(rows)
    summ = harness.family_table(rows) + "\n\n" + harness.summary(rows)
    lint = harness.lint_agreement.report(rows, conv, harness.WORK / "src")
    print("\n" + text + "\n\n" + summ + "\n\nLint and GRAPH mode:\n" + lint)
    subset = bool(args.only or args.package)
    out = harness.WORK if subset else HERE
    body = (f"# Sampled benchmark results ({time.strftime('%Y-%m-%d')}, converter at {commit})\n\n"
            f"Produced by `benchmarks/sampled/run.py`; see benchmarks/README.md.\n\n"
            f"{text}\n\n{summ}\n\n## Lint and GRAPH mode\n\n{harness.LINT_NOTE}\n\n{lint}\n\n"
            f"## Failures\n\n{harness.failures(rows, conv)}\n")
    (out / "results.md").write_text(body, encoding="utf-8")
    (out / "results.json").write_text(json.dumps({
        "commit": commit,
        "rows": rows,
        "torch": {k: {kk: vv for kk, vv in v.items() if kk != "mapping"} for k, v in torch_meta.items()},
        "conversion": harness.conversion_record(rows, conv),
    }, indent=1, default=str), encoding="utf-8")
    readme = BENCH / "README.md"
    if not subset and set(args.modes) == set(harness.MODES):
        doc = readme.read_text(encoding="utf-8")
        if README_START in doc and README_END in doc:
            head, rest = doc.split(README_START, 1)
            _, tail = rest.split(README_END, 1)
            doc = f"{head}{README_START}\n{text}\n\n{summ}\n{README_END}{tail}"
        if FC_START in doc and FC_END in doc and fc_tables:
            head, rest = doc.split(FC_START, 1)
            _, tail = rest.split(FC_END, 1)
            doc = f"{head}{FC_START}\n{fc_tables}{FC_END}{tail}"
        readme.write_text(doc, encoding="utf-8")
    breakers = harness.invariant_breakers(rows)
    print(f"\nfailed runs with no warning on the statement that broke: {len(breakers)}"
          + "".join(f"\n  {b}" for b in breakers))
    print(f"\n{time.perf_counter() - start:.0f} s; {added} first-contact verdicts recorded; details in {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
