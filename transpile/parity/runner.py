"""Run parity for samples: convert, then one child process per (sample, mode).

Each child imports the torch sample and the converted source, builds both from the
spec's entry, copies the weights, feeds the same inputs and compares the outputs
(see ``_child``). A child per run isolates the user's code and MindSpore's global
mode, and a time limit stops a run that hangs. Nothing here prints.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..diagnostics import Diagnostic
from .spec import ParitySpec, SpecError, find_specs, load_spec

MODES = ("PYNATIVE", "GRAPH")
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True)
class ModeResult:
    """One sample in one MindSpore mode."""

    mode: str  # "PYNATIVE" or "GRAPH"
    verdict: str  # "match", "mismatch", "error: ...", "not run: ..."
    max_abs_diff: float | None = None  # over all outputs; None when nothing was compared
    diffs: tuple[float, ...] = ()  # per output
    detail: str = ""  # a traceback or the child's stderr, for errors
    seconds: float = 0.0
    notes: tuple[str, ...] = ()  # what ran and compared but deserves a look (parameter names)

    @property
    def ok(self) -> bool:
        return self.verdict == "match"


@dataclass
class SampleResult:
    sample: str
    spec: ParitySpec | None
    converted: bool  # the converted source exists and the conversion reported no error
    results: dict[str, ModeResult] = field(default_factory=dict)  # mode -> result
    diagnostics: list[Diagnostic] = field(default_factory=list)  # from converting on the fly
    error: str | None = None  # the sample could not be run at all (bad spec, failed conversion)

    @property
    def pynative(self) -> ModeResult | None:
        return self.results.get("PYNATIVE")

    @property
    def graph(self) -> ModeResult | None:
        return self.results.get("GRAPH")

    @property
    def max_abs_diff_pynative(self) -> float | None:
        return self.pynative.max_abs_diff if self.pynative else None

    @property
    def max_abs_diff_graph(self) -> float | None:
        return self.graph.max_abs_diff if self.graph else None

    @property
    def notes(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.results.values():
            seen.update(dict.fromkeys(r.notes))
        return list(seen)

    @property
    def verdict(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if not self.results:
            return "error: no mode was run"
        for r in self.results.values():  # errors first: they say the most
            if r.verdict.startswith(("error", "not run")):
                return r.verdict if len(self.results) == 1 else f"{r.verdict} ({r.mode})"
        bad = [r.mode for r in self.results.values() if r.verdict != "match"]
        if bad:
            return f"mismatch ({', '.join(bad)})"
        return "match"

    @property
    def ok(self) -> bool:
        return self.verdict == "match"


def load_specs(samples: str | os.PathLike | Iterable[str | os.PathLike]) -> list[ParitySpec]:
    """Specs from a samples directory or from spec files (raises SpecError)."""
    if isinstance(samples, (str, os.PathLike)) and Path(samples).is_dir():
        paths = find_specs(samples)
        if not paths:
            raise SpecError(f"{samples}: no *.parity.toml files")
    elif isinstance(samples, (str, os.PathLike)):
        paths = [Path(samples)]
    else:
        paths = [Path(p) for p in samples]
    return [load_spec(p) for p in paths]


def _converted_path(spec: ParitySpec, converted_dir: Path) -> Path:
    """Where ``transpile convert SAMPLES -o OUT`` put the sample: the tree is mirrored."""
    try:
        return converted_dir / spec.source.resolve().relative_to(spec.path.parent.resolve())
    except ValueError:  # a source outside the spec's directory: look for it by name
        return converted_dir / spec.source.name


def _prepare(spec: ParitySpec, converted_dir: Path | None, workdir: Path) -> tuple[SampleResult, Path | None]:
    """The sample's result so far and the converted source's path (None: cannot run)."""
    if not spec.source.is_file():
        return SampleResult(spec.name, spec, False, error=f"sample source {spec.source} not found"), None
    if converted_dir is not None:
        path = _converted_path(spec, converted_dir)
        if not path.is_file():
            return SampleResult(spec.name, spec, False, error=f"converted file {path} not found"), None
        return SampleResult(spec.name, spec, True), path
    from ..api import convert_code

    result = convert_code(spec.source.read_text(encoding="utf-8"), filename=str(spec.source))
    diagnostics = list(result.diagnostics)
    if result.failed or result.errors:
        first = result.errors[0].format() if result.errors else "conversion failed"
        return SampleResult(spec.name, spec, False, diagnostics=diagnostics, error=f"conversion: {first}"), None
    path = workdir / spec.name / spec.source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.code, encoding="utf-8")
    return SampleResult(spec.name, spec, True, diagnostics=diagnostics), path


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_mode(spec: ParitySpec, converted: Path, mode: str, *, timeout: float = DEFAULT_TIMEOUT,
             python: str | None = None) -> ModeResult:
    """One (sample, mode) run in a child process."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    if mode == "GRAPH" and spec.graph:
        return ModeResult(mode, f"not run: {spec.graph}")
    with tempfile.TemporaryDirectory(prefix="transpile-parity-") as tmp:
        request = Path(tmp) / "request.json"
        result_path = Path(tmp) / "result.json"
        request.write_text(json.dumps({
            "spec": str(spec.path.resolve()), "torch_source": str(spec.source.resolve()),
            "converted": str(Path(converted).resolve()), "mode": mode, "result": str(result_path),
        }), encoding="utf-8")
        env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run(
                [python or sys.executable, "-m", "transpile.parity._child", str(request)],
                capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return ModeResult(mode, f"error: timed out after {timeout:g} s", seconds=timeout)
        if proc.returncode != 0 or not result_path.is_file():
            why = _tail(proc.stderr) or f"exit status {proc.returncode}"
            last = why.splitlines()[-1] if why else ""
            return ModeResult(mode, f"error: child process died ({last})", detail=why)
        data = json.loads(result_path.read_text(encoding="utf-8"))
    seconds = float(data.get("seconds", 0.0))
    notes = tuple(data.get("notes", ()))
    if data.get("error"):
        return ModeResult(mode, f"error: {data['error']}", detail=data.get("detail", "") or _tail(proc.stderr),
                          seconds=seconds, notes=notes)
    diffs = tuple(float(d["max_abs_diff"]) for d in data["diffs"])
    worst = max(diffs, key=lambda v: math.inf if math.isnan(v) else v) if diffs else 0.0
    ok = all(not math.isnan(d) and d <= spec.tolerance for d in diffs)
    return ModeResult(mode, "match" if ok else "mismatch", worst, diffs, seconds=seconds, notes=notes)


def run_samples(
    specs: Sequence[ParitySpec],
    *,
    converted_dir: str | os.PathLike | None = None,
    modes: Sequence[str] = MODES,
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    python: str | None = None,
) -> list[SampleResult]:
    """Parity for every spec in every mode; results in the specs' order.

    With ``converted_dir`` the converted files are read from there (the layout
    ``transpile convert SAMPLES -o DIR`` writes); without it each sample is
    converted on the fly. Up to ``jobs`` child processes run at once.
    """
    out: list[SampleResult] = []
    with tempfile.TemporaryDirectory(prefix="transpile-parity-src-") as tmp:
        work: list[tuple[SampleResult, Path]] = []
        for spec in specs:
            result, path = _prepare(spec, Path(converted_dir) if converted_dir is not None else None, Path(tmp))
            out.append(result)
            if path is not None:
                work.append((result, path))
        tasks = [(r, path, mode) for r, path in work for mode in modes]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(run_mode, r.spec, path, mode, timeout=timeout, python=python)
                       for r, path, mode in tasks]
            for (r, _, mode), fut in zip(tasks, futures):
                r.results[mode] = fut.result()
    for r in out:  # the table lists modes in a fixed order
        r.results = {m: r.results[m] for m in MODES if m in r.results}
    return out


def run_sample(spec: ParitySpec | str | os.PathLike, **kwargs) -> SampleResult:
    """Parity for one sample (a spec or a spec file); see ``run_samples``."""
    if not isinstance(spec, ParitySpec):
        spec = load_spec(spec)
    return run_samples([spec], **kwargs)[0]

