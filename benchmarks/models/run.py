"""The real-model benchmark, in one command:

    .venv/bin/python benchmarks/models/run.py [--only NAME ...] [--jobs N] [--timeout S]

1. The torch side runs in its own virtualenv (torchvision does not import next to the
   main venv's torch 2.13): ``benchmarks/.venv-tv``, created on first use with the
   pins of ``models.toml`` plus this project (editable, no deps). ``--torch-python``
   or ``$BENCH_TORCH_PYTHON`` names another interpreter that has them.
   ``torch_side.py`` builds every model there and saves inputs, outputs, weights and
   the weight map (``benchmarks/.work/torch/``).
2. Each package's source tree is copied from that venv (``*.py`` only) and converted
   as a whole with ``transpile.convert_paths`` (``benchmarks/.work/converted/``). The
   only change made to converted code: the ``__init__.py`` files ``models.toml`` lists
   under ``blank_init`` are replaced by empty files (package scaffolding).
3. ``ms_side.py`` runs every model in PYNATIVE and GRAPH mode, each in a child process
   of THIS interpreter (the main venv: MindSpore 2.10, and torch 2.13 for the torch
   helpers converted code still imports) with a time limit.
4. The table is printed and written to ``benchmarks/models/results.md`` (with every
   failure's reason) and ``results.json``; a full run also refreshes the table in
   ``benchmarks/README.md``.

Match, per output: ``max|mindspore - torch| <= max(1e-4 * max(1, max|torch|), 10 * e32)``
where ``e32 = max|torch float32 - torch float64|`` is the rounding error of torch's own
float32 run (the torch side runs every model once more in float64); non-finite values
must be reproduced exactly, and a model whose outputs are all constant within the
tolerance is refused. The rule lives in ``verdict.py`` (one place, unit-tested).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from transpile.parity.forkserver import start_child
from transpile.parity.report import format_graph_divergence
import lint_agreement  # this file's folder (benchmarks/models), first on sys.path when run
from verdict import tolerance

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
REPO = BENCH.parent
WORK = BENCH / ".work"
DEFAULT_VENV = BENCH / ".venv-tv"
DEPS = BENCH / ".work" / "deps"  # the MindSpore side's pure-Python packages, shared by every --work directory
REL = 1e-4  # tolerance: REL * max(1, max|torch output|) ...
FACTOR = 10.0  # ... or FACTOR * |torch float32 - torch float64|, whichever is larger
MODES = ("PYNATIVE", "GRAPH")
README_START = "<!-- bench-models:start -->"
README_END = "<!-- bench-models:end -->"


def say(msg: str) -> None:
    print(msg, flush=True)


# -- 1. the torch virtualenv ------------------------------------------------------
def torch_python(args, config) -> str:
    given = args.torch_python or os.environ.get("BENCH_TORCH_PYTHON")
    if given:  # a path is made absolute: the torch side runs with another working directory
        return os.path.abspath(given) if os.sep in given else given
    py = DEFAULT_VENV / "bin" / "python"
    stamp = DEFAULT_VENV / ".installed"
    no_deps = config["torch_venv"].get("pip_no_deps", [])
    want = json.dumps(config["torch_venv"]["pip"] + no_deps)
    if py.exists() and stamp.exists() and stamp.read_text() == want:
        return str(py)
    say(f"creating {DEFAULT_VENV} (torch, torchvision and the model packages; a few minutes)")
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DEFAULT_VENV)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run(pip + config["torch_venv"]["pip"], check=True)
    if no_deps:  # their pins name another torch release; their model code runs on this one
        subprocess.run(pip + ["--no-deps", *no_deps], check=True)
    subprocess.run(pip + ["--no-deps", "-e", str(REPO)], check=True)
    subprocess.run(pip + ["libcst>=1.1", "black>=24", "jinja2>=3.1"], check=True)
    stamp.write_text(want)
    return str(py)


def ms_deps(config) -> str:
    """The pure-Python packages converted model code still imports (yaml, einops' absence
    checks, loggers, ...) go into ``benchmarks/.work/deps`` (``pip install --target``), put
    LAST on the MindSpore side's sys.path: the main venv stays as it is (``DEPS``; the sampled
    benchmark sets its own)."""
    target = DEPS
    stamp = target / ".installed"
    want = json.dumps(config.get("ms_deps", {}).get("pip", []))
    if not (stamp.exists() and stamp.read_text() == want):
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        pins = json.loads(want)
        if pins:
            say(f"installing {len(pins)} pure-Python packages for the MindSpore side into {target}")
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *pins],
                           check=True)
        stamp.write_text(want)
    return str(target)


def run_torch_side(py: str, config_path: Path, names: list[str], reuse: bool) -> None:
    out = WORK / "torch"
    todo = [n for n in names if not (reuse and (out / f"{n}.json").exists())]
    if not todo:
        return
    say(f"torch side: {len(todo)} models ({py})")
    env = dict(os.environ, PYTHONWARNINGS="ignore", CUDA_VISIBLE_DEVICES="")
    out.mkdir(parents=True, exist_ok=True)
    # in the scratch folder: a package may write files where it is imported (lafhterlearn's log)
    subprocess.run([py, str(HERE / "torch_side.py"), str(config_path.resolve()), str(out.resolve()), *todo],
                   check=True, env=env, cwd=out)


# -- 2. convert the package trees ---------------------------------------------------
def package_dirs(py: str, packages: list[str]) -> dict[str, str]:
    code = ("import importlib.util, json, sys; print(json.dumps({p: list(importlib.util.find_spec(p)"
            ".submodule_search_locations)[0] for p in sys.argv[1:]}))")
    proc = subprocess.run([py, "-c", code, *packages], check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def imported_packages(dirs: dict[str, str], roots: set[str]) -> set[str]:
    """``roots`` and every package of ``dirs`` their sources import, directly or not (a
    subset of the models converts these alone)."""
    wanted, todo = set(roots), list(roots)
    while todo:
        text = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                         for path in Path(dirs[todo.pop()]).rglob("*.py") if "__pycache__" not in path.parts)
        for other in dirs.keys() - wanted:
            if re.search(rf"^\s*(from|import)\s+{re.escape(other)}\b", text, re.MULTILINE):
                wanted.add(other)
                todo.append(other)
    return wanted


def convert_packages(py: str, config: dict, roots: set[str] | None = None) -> dict[str, dict]:
    """Copy and convert each package (with ``roots``, only those and the packages they
    import); per source file (relative to the source root): status, error diagnostics,
    torch uses left unconverted."""
    from transpile import convert_paths
    from transpile.engine.diagnostics import Severity

    src_root, conv_root = WORK / "src", WORK / "converted"
    files: dict[str, dict] = {}
    dirs = package_dirs(py, list(config["packages"]))
    if roots is not None:
        wanted = imported_packages(dirs, roots)
        dirs = {pkg: where for pkg, where in dirs.items() if pkg in wanted}
    for pkg, where in dirs.items():
        src, dest = src_root / pkg, conv_root / pkg
        for d in (src, dest):
            if d.exists():
                shutil.rmtree(d)
        for path in Path(where).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            target = src / path.relative_to(where)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        start = time.perf_counter()
        report = convert_paths([src], output=dest)
        for f in report.files:
            rel = f.source.relative_to(src_root).as_posix()
            r = f.result
            errors = [d.format() for d in (r.diagnostics if r else []) if d.severity is Severity.ERROR]
            files[rel] = {
                "status": f.status,
                "errors": errors,
                "unconverted": r.stats.unconverted if r else 0,
                "converted_uses": r.stats.converted if r else 0,
                "marks": [d.format() for d in (r.diagnostics if r else [])
                          if d.severity is Severity.WARNING],
                # source lines a warning or an error names (the invariant of issue 29)
                "warned_lines": sorted({d.line for d in (r.diagnostics if r else [])
                                        if d.severity in (Severity.WARNING, Severity.ERROR)}),
                # the GRAPH lint's findings, to compare with what GRAPH mode does (issue 32)
                "graph_lint": lint_agreement.findings(r.diagnostics if r else []),
            }
        for item in config["packages"][pkg].get("blank_init", []):
            rel, keep = (item, []) if isinstance(item, str) else (item["path"], item.get("keep", []))
            (dest / rel).write_text("".join(f"{line}\n" for line in keep), encoding="utf-8")
        say(f"converted {pkg}: {report.count('converted')} files changed, {report.count('unchanged')} unchanged, "
            f"{report.count('failed')} failed, rate {'n/a' if report.conversion_rate is None else format(report.conversion_rate, '.1%')} ({time.perf_counter() - start:.0f} s)")
    return files


def model_file(module: str) -> str:
    rel = module.replace(".", "/")
    return f"{rel}.py" if (WORK / "src" / f"{rel}.py").exists() else f"{rel}/__init__.py"


# -- 3. the MindSpore side -------------------------------------------------------------
def run_ms(name: str, mode: str, timeout: float, deps: str, without_torch: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-ms-") as tmp:
        result = Path(tmp) / "result.json"
        request = Path(tmp) / "request.json"
        request.write_text(json.dumps({
            "torch_json": str(WORK / "torch" / f"{name}.json"),
            "torch_npz": str(WORK / "torch" / f"{name}.npz"),
            "converted_root": str(WORK / "converted"), "deps": deps,
            "mode": mode, "result": str(result), "rel": REL, "factor": FACTOR, "without_torch": without_torch,
        }), encoding="utf-8")
        env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
        start = time.perf_counter()
        stderr = Path(tmp) / "stderr.txt"
        # Forked from a process that imported MindSpore once (transpile's parity fork
        # server: a process of its own per run, without the seconds of imports each); a
        # run that must find no torch starts afresh (the server imported it).
        child = start_child("script", str(HERE / "ms_side.py"), [str(request)], python=None, cwd=tmp,
                            stdout=Path(tmp) / "stdout.txt", stderr=stderr, env=env, fresh=without_torch)
        try:
            returncode = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return {"built": None, "error": f"timed out after {timeout:g} s", "seconds": timeout}
        if returncode != 0 or not result.exists():
            tail = "\n".join(stderr.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:])
            last = tail.splitlines()[-1] if tail else f"exit status {returncode}"
            return {"built": None, "error": f"child process died: {last}", "detail": tail,
                    "seconds": round(time.perf_counter() - start, 2)}
        return json.loads(result.read_text(encoding="utf-8"))


# -- 4. the table ------------------------------------------------------------------------
def run_ms_modes(models, torch_meta, modes, jobs: int, timeout: float, deps: str, width: int = 32,
                 by_mode: bool = False, on_result=None) -> dict:
    """Each model whose torch side ran, in each mode, on ``jobs`` threads (each run is its own
    process); a line per run as it finishes. Model name -> mode -> the MindSpore side's result.
    The runs go model by model (both modes of one model, then the next), or with ``by_mode``
    mode by mode (every model in the first mode, then in the next). ``on_result(results, left)``
    is called after each run (``left``: runs still to come), e.g. to write what is known so far."""
    results: dict[str, dict] = {m["name"]: {} for m in models}
    tasks = [(m["name"], mode) for m in models if not torch_meta[m["name"]].get("error") for mode in modes]
    if by_mode:
        tasks.sort(key=lambda task: modes.index(task[1]))  # stable: models.toml order within a mode
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_ms, name, mode, timeout, deps): (name, mode) for name, mode in tasks}
        for done, fut in enumerate(futures, 1):
            name, mode = futures[fut]
            res = fut.result()
            results[name][mode] = res
            what = res.get("error") or (f"match, {_fmt(res.get('max_abs_diff'))}" if res.get("match")
                                        else f"MISMATCH, {_fmt(res.get('max_abs_diff'))}")
            say(f"{mode:<8} {name:<{width}} {res.get('seconds', 0):7.1f}s  {what}")
            if on_result is not None:
                on_result(results, len(tasks) - done)
    return results


def model_tolerance(meta: dict, results: dict) -> float | None:
    """The smallest tolerance of a model's outputs: as ms_side judged them (from the arrays),
    else from the torch side's summary (verdict.tolerance, with this run's settings)."""
    judged = [t for r in results.values() for t in r.get("tolerances", [])]
    if judged:
        return min(judged)
    return min((tolerance(o.get("max_abs"), o.get("float32_error"), REL, FACTOR)
                for o in meta.get("outputs", [])), default=None)


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if math.isnan(v):
        return "nan"
    return f"{v:.1e}"


def _verdict(r: dict | None) -> str:
    if r is None:
        return "-"
    if r.get("error"):
        return "error"
    return "yes" if r.get("match") else "NO"


def build_rows(models, torch_meta, conv, results) -> list[dict]:
    rows = []
    for spec in models:
        name = spec["name"]
        meta = torch_meta.get(name, {})
        f = model_file(spec["module"])
        c = conv.get(f, {})
        ok_conv = c.get("status") in ("converted", "unchanged") and not c.get("errors")
        res = results.get(name, {})
        built = any(r.get("built") for r in res.values())
        rows.append({
            "name": name, "family": spec["family"], "file": f, "torch_error": meta.get("error"),
            "converted": ok_conv, "unconverted": c.get("unconverted", 0),
            "builds": built, "results": res,
            "parameters": meta.get("parameters"),
            "tolerance": model_tolerance(meta, res),
        })
    record_sites(rows, conv)
    return rows


def table(rows) -> str:
    lines = [
        "| model | family | file | converted without error | builds | PYNATIVE match | GRAPH match | max abs diff PYNATIVE | max abs diff GRAPH | tolerance |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if r["torch_error"]:
            lines.append(f"| {r['name']} | {r['family']} | {r['file']} | - | - | - | - | torch side failed | | |")
            continue
        conv = "yes" if r["converted"] else "NO"
        if r["unconverted"]:
            conv += f" ({r['unconverted']} left)"
        p, g = r["results"].get("PYNATIVE"), r["results"].get("GRAPH")
        lines.append(
            f"| {r['name']} | {r['family']} | {r['file']} | {conv} | {'yes' if r['builds'] else 'NO'} | {_verdict(p)} | {_verdict(g)} "
            f"| {_fmt(p.get('max_abs_diff') if p else None)} | {_fmt(g.get('max_abs_diff') if g else None)} "
            f"| {_fmt(r['tolerance'])} |"
        )
    return "\n".join(lines)


def _matches(r, mode: str) -> bool:
    return _verdict(r["results"].get(mode)) == "yes"


def _ran(rows, mode: str) -> bool:
    """Whether any model was run in ``mode`` (a mode not asked for is not a 0%)."""
    return any(mode in r["results"] for r in rows)


def _measured(rows, mode: str) -> list:
    """The rows a ``mode`` figure counts: those run in that mode, and those whose torch side
    failed (a model that does not match). Every row, once a run is complete; fewer while it
    runs (``--by-mode`` runs one mode over every model before the next)."""
    return [r for r in rows if mode in r["results"] or r["torch_error"]]


def family_table(rows) -> str:
    """Per family (and all): models, distinct files, builds, PYNATIVE and GRAPH matches.
    A model whose torch side failed counts as a model that does not match."""
    def pct(k, n):
        return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"

    lines = ["| family | models | model files | builds | PYNATIVE match | GRAPH match |",
             "| --- | --- | --- | --- | --- | --- |"]
    groups = sorted({r["family"] for r in rows}) + ["all"]
    for fam in groups:
        rs = [r for r in rows if fam in ("all", r["family"])]
        n = len(rs)
        modes = [pct(sum(_matches(r, m) for r in rs), len(_measured(rs, m))) if _ran(rows, m) else "not run"
                 for m in ("PYNATIVE", "GRAPH")]
        lines.append(f"| {fam} | {n} | {len({r['file'] for r in rs})} | {pct(sum(r['builds'] for r in rs), n)} "
                     f"| {modes[0]} | {modes[1]} |")
    return "\n".join(lines)


def summary(rows) -> str:
    n = len(rows)
    files = {r["file"] for r in rows}

    def count(pred):
        return sum(1 for r in rows if pred(r))

    def pct(k, total=n):
        return f"{k}/{total} ({100.0 * k / total:.0f}%)" if total else "0/0"

    def files_all(mode):
        measured = _measured(rows, mode)
        ok = {r["file"] for r in measured if _matches(r, mode)}
        bad = {r["file"] for r in measured if not _matches(r, mode)}
        return len(ok - bad), len(ok), len({r["file"] for r in measured})

    def matched(mode):
        if not _ran(rows, mode):
            return f"- match in {mode}: not run"
        every, some, nfiles = files_all(mode)
        return (f"- match in {mode}: {pct(count(lambda r: _matches(r, mode)), len(_measured(rows, mode)))}; "
                f"model files with every model "
                f"matching: {every}/{nfiles} (with at least one: {some})")

    return "\n".join([
        f"- models: {n}, from {len(files)} distinct model files",
        f"- converted without error: {pct(count(lambda r: r['converted'] and not r['torch_error']))}",
        f"- builds (and takes every torch weight): {pct(count(lambda r: r['builds']))}",
        matched("PYNATIVE"),
        matched("GRAPH"),
        f"- match, per output: max abs diff <= max({REL:g} * max(1, max|torch output|), {FACTOR:g} * e32), "
        "e32 = max|torch float32 - torch float64| (torch's own rounding error); non-finite values "
        "must be the same at the same positions; outputs constant within the tolerance prove nothing "
        "(benchmarks/models/verdict.py)",
    ])


_GRAPH_FRAME = re.compile(r"In file (\S+?\.py):(\d+)")


def _innermost_frame(detail: str) -> tuple[str, int | None, str, str] | None:
    """The innermost frame in converted code of a failed run's traceback (or, with none,
    its last frame): (the file as the traceback names it, its line, the code line shown,
    the frame's own text).
    A GRAPH-mode compile error carries MindSpore's own traceback of the compiled code
    ("# 0 In file F:N", outermost first) in its message: its last entry in converted code
    is the innermost, and comes before Python's frames (which stop inside the compiler)."""
    lines = detail.splitlines()
    graph = [(i, m) for i, ln in enumerate(lines) for m in [_GRAPH_FRAME.search(ln)]
             if m and "/converted/" in m.group(1)]
    if graph:
        i, m = graph[-1]
        code = next((ln.strip() for ln in lines[i + 1:i + 3] if ln.strip() and not ln.strip().startswith("#")), "")
        return m.group(1), int(m.group(2)), code, m.group(0)
    frames = [i for i, ln in enumerate(lines) if ln.strip().startswith("File ")]
    inside = [i for i in frames if "/converted/" in lines[i]] or frames
    if not inside:
        return None
    i = inside[-1]
    code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].strip().startswith("File ") else ""
    match = re.match(r'\s*File "([^"]+)", line (\d+)', lines[i])
    if not match:
        return lines[i].strip(), None, code, lines[i].strip()
    return match.group(1), int(match.group(2)), code, lines[i].strip()


def _where(detail: str) -> str:
    """The innermost traceback frame in converted code (or the last one), with its line."""
    frame = _innermost_frame(detail)
    if frame is None:
        return ""
    code = frame[2]
    where = frame[3].replace(str(WORK) + "/", "")
    return f" — at {where}" + (f": `{code}`" if code else "")


def source_statement(source: str, converted: str, line: int) -> tuple[int, int] | None:
    """The source lines (first, last) of the statement that converted line ``line`` came from.

    The rule: the converted file's lines are aligned with the source's by difflib (lines
    compared without their indentation); a converted line in an unchanged run maps to its
    source line, one in a changed run to the line of the source run it replaced that is most
    like it (difflib's ratio); a line that only the converter wrote (an added import, an
    emitted helper) has no source line: None. That source line is then widened to the
    innermost statement of the source containing it (a compound statement to its header),
    as ``ast`` sees it."""
    import ast
    import difflib

    src_lines, conv_lines = source.splitlines(), converted.splitlines()
    matcher = difflib.SequenceMatcher(None, [ln.strip() for ln in src_lines], [ln.strip() for ln in conv_lines],
                                      autojunk=False)
    span = None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if j1 < line <= j2:
            if tag == "equal":
                span = (i1 + line - j1, i1 + line - j1)
            elif tag == "replace":  # the source line of the run most like it
                target = conv_lines[line - 1].strip()
                best = max(range(i1, i2), key=lambda i: difflib.SequenceMatcher(
                    None, src_lines[i].strip(), target, autojunk=False).ratio())
                span = (best + 1, best + 1)
            break
    if span is None:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return span
    best = None  # the statement starting last among those whose lines (a compound one's header) hold the line
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        end = max(node.lineno, body[0].lineno - 1) if isinstance(body, list) and body else node.end_lineno
        if node.lineno <= span[0] <= end and (best is None or node.lineno >= best[0]):
            best = (node.lineno, end)
    if best is None:
        return span
    return min(span[0], best[0]), max(span[1], best[1])


def error_site(res: dict, conv: dict) -> dict | None:
    """Where a failed run broke in the converted code, and whether the conversion warned
    there: the innermost converted frame of its traceback (file relative to the converted
    root, line, code), the source statement it came from (``source_statement``), and the
    source lines of that file holding a warning or error. None for a run with no traceback
    frame in converted code (weights not taken, a child that died without one)."""
    frame = _innermost_frame(res.get("detail", ""))
    if frame is None or frame[1] is None or "/converted/" not in frame[0]:
        return None
    rel = frame[0].split("/converted/", 1)[1]
    site = {"file": rel, "line": frame[1], "code": frame[2], "source_lines": None, "warned": False}
    src, out = WORK / "src" / rel, WORK / "converted" / rel
    if not (src.exists() and out.exists()):
        return site
    span = source_statement(src.read_text(encoding="utf-8", errors="replace"),
                            out.read_text(encoding="utf-8", errors="replace"), frame[1])
    if span is not None:
        site["source_lines"] = list(span)
        warned = [n for n in conv.get(rel, {}).get("warned_lines", []) if span[0] <= n <= span[1]]
        site["warned"] = bool(warned)
    return site


def record_sites(rows: list[dict], conv: dict) -> None:
    """Each failed (model, mode) run gets its ``site`` (``error_site``)."""
    for r in rows:
        for res in r["results"].values():
            if res.get("error") and not res["error"].startswith("compare"):
                res["site"] = error_site(res, conv)


def invariant_breakers(rows: list[dict]) -> list[str]:
    """The runs that failed to build or run with no warning on the statement that broke
    (issue 29: each must have one): ``model mode``."""
    return [f"{r['name']} {mode}" for r in rows for mode, res in sorted(r["results"].items())
            if res.get("error") and not res["error"].startswith("compare") and not (res.get("site") or {}).get("warned")]


LINT_NOTE = ("Whether the GRAPH lint's MS5xx findings inside the model's cell classes predict GRAPH mode "
             "(benchmarks/models/lint_agreement.py says how it is read).")


def conversion_record(rows: list[dict], conv: dict) -> dict:
    """What results.json keeps of the conversion: the model files and the files runs broke in."""
    files = {r["file"] for r in rows} | {res["site"]["file"] for r in rows for res in r["results"].values()
                                          if res.get("site")}
    return {f: conv[f] for f in sorted(files) if f in conv}


def _warned(res: dict) -> str:
    """Whether the conversion warned on the statement the run broke at (``error_site``)."""
    if "site" not in res:
        return ""
    site = res["site"]
    if site is None:
        return " (no frame in converted code)"
    lines = site.get("source_lines")
    where = f"source lines {lines[0]}-{lines[1]}" if lines else "no source line"
    return f" ({where}: {'a warning there' if site['warned'] else 'NO warning there'})"


def failures(rows, conv) -> str:
    out = []
    for r in rows:
        items = []
        if r["torch_error"]:
            items.append(f"torch side: {r['torch_error']}")
        for mode in MODES:
            res = r["results"].get(mode)
            if res and res.get("error"):
                items.append(f"{mode}: {res['error']}" + _where(res.get("detail", "")) + _warned(res))
            elif res and not res.get("match"):
                odd = sum(res.get("nonfinite_mismatches", []))
                items.append(f"{mode}: mismatch, max abs diff {_fmt(res.get('max_abs_diff'))} "
                             f"(per output: {', '.join(_fmt(d) for d in res.get('diffs', []))})"
                             + (f"; {odd} non-finite torch values not reproduced" if odd else "")
                             + "".join(f"; {line}" for line in format_graph_divergence(res.get("graph_divergence"))))
        c = conv.get(r["file"], {})
        for e in c.get("errors", []):
            items.append(f"conversion: {e}")
        if items:
            out.append(f"- **{r['name']}** ({r['file']})")
            out.extend(f"  - {i}" for i in items)
    return "\n".join(out) or "none"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(HERE / "models.toml"))
    ap.add_argument("--only", nargs="*", default=[], help="model names (default: all)")
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per (model, mode)")
    ap.add_argument("--torch-python", default=None)
    ap.add_argument("--work", default=None,
                    help="scratch directory (default benchmarks/.work); runs with their own "
                         "--work can go side by side; their results.md/json go there too")
    ap.add_argument("--reuse-torch", action="store_true", help="keep torch-side results from an earlier run")
    ap.add_argument("--by-mode", action="store_true",
                    help="run every model in the first of --modes, then in the next (default: both modes of a "
                         "model, then the next model)")
    args = ap.parse_args(argv)
    global WORK
    if args.work:
        WORK = Path(args.work).resolve()
        WORK.mkdir(parents=True, exist_ok=True)
    out = WORK if args.work else HERE

    config_path = Path(args.config)
    config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    models = [m for m in config["models"] if not args.only or m["name"] in args.only]
    if not models:
        say("no such model")
        return 2
    start = time.perf_counter()
    py = torch_python(args, config)
    run_torch_side(py, config_path, [m["name"] for m in models], args.reuse_torch)
    torch_meta = {m["name"]: json.loads((WORK / "torch" / f"{m['name']}.json").read_text()) for m in models}
    # a subset converts only the packages its models import
    conv = convert_packages(py, config, {m["module"].split(".")[0] for m in models} if args.only else None)
    deps = ms_deps(config)

    def write(rows, text, summ, left: int = 0, lint: str = "not compared until the run ends") -> None:
        stamp = time.strftime("%Y-%m-%d")
        state = "" if not left else (
            f"**NOT COMPLETE**: written while the run goes on, {left} (model, mode) runs still to come; "
            f"the table holds the models with a run so far, each figure counts the models run in its mode.\n\n")
        body = (f"# Real-model benchmark results ({stamp})\n\nProduced by `benchmarks/models/run.py`"
                f"{' --only ' + ' '.join(args.only) if args.only else ''}; see benchmarks/README.md.\n\n{state}"
                f"{text}\n\n{summ}\n\n## Lint and GRAPH mode\n\n{LINT_NOTE}\n\n{lint}\n\n"
                f"## Failures\n\n{failures(rows, conv)}\n")
        (out / "results.md").write_text(body, encoding="utf-8")
        (out / "results.json").write_text(json.dumps({
            "rows": [{k: v for k, v in r.items()} for r in rows],
            "torch": {k: {kk: vv for kk, vv in v.items() if kk not in ("mapping",)} for k, v in torch_meta.items()},
            "conversion": conversion_record(rows, conv),
            **({"runs_left": left} if left else {}),
        }, indent=1, default=str), encoding="utf-8")

    def so_far(results, left: int) -> None:
        """results.md/json of the runs done so far (a run stopped early still leaves them)."""
        if left:
            done = [m for m in models if results[m["name"]] or torch_meta[m["name"]].get("error")]
            rows = build_rows(done, torch_meta, conv, results)
            write(rows, table(rows), family_table(rows) + "\n\n" + summary(rows), left)

    results = run_ms_modes(models, torch_meta, args.modes, args.jobs, args.timeout, deps, by_mode=args.by_mode,
                           on_result=so_far)

    rows = build_rows(models, torch_meta, conv, results)
    text = table(rows)
    summ = family_table(rows) + "\n\n" + summary(rows)
    lint = lint_agreement.report(rows, conv, WORK / "src")
    say("\n" + text + "\n\n" + summ + "\n\nLint and GRAPH mode:\n" + lint)
    write(rows, text, summ, lint=lint)
    readme = BENCH / "README.md"
    if not args.only and not args.work and set(args.modes) == set(MODES) and readme.exists():
        doc = readme.read_text(encoding="utf-8")
        if README_START in doc and README_END in doc:
            head, rest = doc.split(README_START, 1)
            _, tail = rest.split(README_END, 1)
            readme.write_text(f"{head}{README_START}\n{text}\n\n{summ}\n{README_END}{tail}", encoding="utf-8")
    breakers = invariant_breakers(rows)
    say(f"\nfailed runs with no warning on the statement that broke: {len(breakers)}"
        + "".join(f"\n  {b}" for b in breakers))
    say(f"\n{time.perf_counter() - start:.0f} s; details in {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
