"""Run parity (and checkpoint conversion) in child processes, with a time limit.

Each (model, mode) run is one child: it imports the torch source and the converted
source, builds both from the spec's entry, copies the weights, feeds the same
inputs, compares the outputs and, when they differ, finds the first submodule that
diverges (see ``_child``). A child per run isolates the user's code and
MindSpore's global mode; a time limit stops a run that hangs, and the child's
progress file says which step it hung in. Nothing here prints.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..engine.diagnostics import Diagnostic
from .compare import OutputDiff
from .forkserver import start_child
from .localise import Localisation
from .modes import DEFAULT_TIMEOUT, MODES, memory_limit
from .spec import ParitySpec, SpecError, find_specs, load_spec, module_name
from .weights import Transfer

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors")


@dataclass(frozen=True)
class ModeResult:
    """One model in one MindSpore mode."""

    mode: str  # "PYNATIVE" or "GRAPH"
    verdict: str  # "match", "mismatch", "error: ...", "not run: ..."
    max_abs_diff: float | None = None  # over all outputs; None when nothing was compared
    diffs: tuple[float, ...] = ()  # max abs diff per output
    detail: str = ""  # a traceback or the child's stderr, for errors
    seconds: float = 0.0
    notes: tuple[str, ...] = ()  # what ran and compared but deserves a look (parameter names)
    outputs: tuple[OutputDiff, ...] = ()  # every metric per output
    localisation: Localisation | None = None  # on a mismatch: the first submodule that diverges
    cells: tuple[dict, ...] | None = None  # submodules and their inputs, for an emitted test
    weights: tuple[tuple[str, str], ...] = ()  # the copies made: (torch key, MindSpore path)
    compiled_path: str = ""  # GRAPH run through another compiled path than GRAPH_MODE's (BYTECODE_PATH)
    call_seconds: dict | None = None  # a bytecode run's timing: {"compiled": s, "uncompiled": s}
    # a GRAPH mismatch: the first submodule whose GRAPH result alone differs from its PYNATIVE one
    graph_divergence: dict | None = None

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
    converted_path: Path | None = None  # the converted file that ran (None: converted on the fly)

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
    def localisation(self) -> Localisation | None:
        return next((r.localisation for r in self.results.values() if r.localisation), None)

    @property
    def cells(self) -> tuple[dict, ...] | None:
        return next((r.cells for r in self.results.values() if r.cells is not None), None)

    @property
    def weights(self) -> tuple[tuple[str, str], ...]:
        return next((r.weights for r in self.results.values() if r.weights), ())

    @property
    def verdict(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if not self.results:
            return "error: no mode was run"
        verdicts = {r.verdict for r in self.results.values()}
        for r in self.results.values():  # errors first: they say the most
            if r.verdict.startswith(("error", "not run")):
                return r.verdict if len(verdicts) == 1 else f"{r.verdict} ({r.mode})"
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


# -- the converted source ------------------------------------------------------------

def converted_file(spec: ParitySpec, converted_dir: Path) -> Path:
    """Where ``transpile convert SAMPLES -o OUT`` put the sample: the tree is mirrored."""
    if spec.path is not None:
        try:
            return converted_dir / spec.source.resolve().relative_to(spec.path.parent.resolve())
        except ValueError:  # a source outside the spec's directory: look for it by name
            pass
    return converted_dir / spec.source.name


@dataclass
class _Source:
    path: Path | None  # None: cannot run
    error: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    on_the_fly: bool = False


def converted_source(source: Path, workdir: Path, *, converted: Path | None = None,
                     root: Path | None = None) -> _Source:
    """The converted file: ``converted`` when given (a file, or a directory holding
    one of the source's name, or with ``root`` the converted tree of ``root``), else
    ``source`` converted on the fly into ``workdir``."""
    if not source.is_file():
        return _Source(None, f"original source {source} not found")
    if converted is not None:
        if converted.is_dir():  # a tree convert wrote: mirrored from the root, else flat
            path = converted / (source.resolve().relative_to(root.resolve()) if root is not None else source.name)
        else:
            path = converted
        if not path.is_file():
            return _Source(None, f"converted file {path} not found")
        return _Source(path)
    from ..api import convert_code

    result = convert_code(source.read_text(encoding="utf-8"), filename=str(source))
    diagnostics = list(result.diagnostics)
    if result.failed or result.errors:
        first = result.errors[0].format() if result.errors else "conversion failed"
        return _Source(None, f"conversion: {first}", diagnostics)
    path = workdir / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.code, encoding="utf-8")
    return _Source(path, None, diagnostics, on_the_fly=True)


def _prepare(spec: ParitySpec, converted_dir: Path | None, workdir: Path) -> tuple[SampleResult, Path | None]:
    """The sample's result so far and the converted source's path (None: cannot run)."""
    explicit = spec.converted
    if explicit is None and converted_dir is not None:
        explicit = converted_file(spec, converted_dir)
    src = converted_source(spec.source, workdir / spec.name, converted=explicit, root=spec.root)
    result = SampleResult(spec.name, spec, src.path is not None, diagnostics=src.diagnostics, error=src.error,
                          converted_path=None if src.on_the_fly else src.path)
    return result, src.path


# -- child processes -------------------------------------------------------------------

@dataclass
class ChildRun:
    data: dict | None  # the child's JSON result; None when it wrote none
    error: str | None = None  # why there is no result (time limit, the child died)
    detail: str = ""


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


class _Children:
    """The child process groups running now, so that an interrupted run can kill them all
    (they run in their own sessions: a terminal's Ctrl-C and a signal to this process do
    not reach them). Once stopped, no new child starts until ``allow``."""

    def __init__(self) -> None:
        self.running: set = set()  # subprocess.Popen or forkserver.ForkedChild
        self.stopped = False

    def stop(self) -> None:
        """Kill every running child's group; start no more (safe in a signal handler: no lock)."""
        self.stopped = True
        for proc in list(self.running):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)


_CHILDREN = _Children()


def stop_children() -> None:
    """Kill the child processes of every run in progress, and start none until ``allow_children``."""
    _CHILDREN.stop()


def allow_children() -> None:
    """Children may start again (after ``stop_children``)."""
    _CHILDREN.stopped = False


def run_child(request: dict, *, timeout: float, python: str | None = None) -> ChildRun:
    """Run ``_child`` on ``request`` in its own process group, within ``memory_limit()``;
    kill the group at the time limit and report the step it was in, or when the run is
    stopped (``stop_children``: Ctrl-C, SIGTERM)."""
    limit = memory_limit()
    if _CHILDREN.stopped:
        return ChildRun(None, "not run: the run was interrupted")
    with tempfile.TemporaryDirectory(prefix="transpile-child-") as tmp:
        tmpdir = Path(tmp)
        result_path, progress = tmpdir / "result.json", tmpdir / "progress.txt"
        request_path = tmpdir / "request.json"
        request_path.write_text(json.dumps({**request, "result": str(result_path), "progress": str(progress)}),
                                encoding="utf-8")
        env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
        proc = start_child("module", "transpile.parity._child", [str(request_path)], python=python, cwd=tmp,
                           stdout=tmpdir / "stdout", stderr=tmpdir / "stderr", env=env, memory_limit=limit)
        _CHILDREN.running.add(proc)
        if _CHILDREN.stopped:  # stopped while it started
            kill_group(proc)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            step = progress.read_text(encoding="utf-8") if progress.is_file() else "start-up"
            return ChildRun(None, f"timed out after {timeout:g} s in step '{step}' "
                                  "(does it hang? raise the limit with --timeout)")
        finally:
            if proc.poll() is None:
                kill_group(proc)
            _CHILDREN.running.discard(proc)
        stderr = (tmpdir / "stderr").read_text(encoding="utf-8", errors="replace")
        if proc.returncode != 0 or not result_path.is_file():
            why = tail(stderr) or f"exit status {proc.returncode}"
            step = progress.read_text(encoding="utf-8") if progress.is_file() else "start-up"
            last = why.splitlines()[-1] if why else ""
            return ChildRun(None, f"child process died in step '{step}' ({last})", why)
        data = json.loads(result_path.read_text(encoding="utf-8"))
        if data.get("error") and not data.get("detail"):
            data["detail"] = tail(stderr)
        return ChildRun(data)


def kill_group(proc) -> None:
    """Kill a child's process group (a child not yet in a group of its own: the child)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


# -- parity ------------------------------------------------------------------------

def graph_lint_findings(spec: ParitySpec, limit: int = 3) -> list[str]:
    """What the graph-mode lint (MS5xx) says of the original source: the likely reason
    a sample cannot compile or match in GRAPH_MODE."""
    from ..api import convert_code

    try:
        result = convert_code(spec.source.read_text(encoding="utf-8"), filename=spec.source.name)
    except OSError:
        return []
    found = [f"{d.code} line {d.line}: {d.message}" for d in result.diagnostics if d.code.startswith("MS5")]
    return found[:limit]


BYTECODE_PATH = 'jit(capture_mode="bytecode")'


def run_mode(spec: ParitySpec, converted: Path, mode: str, **kwargs) -> ModeResult:
    """One (model, mode) run in a child process (see ``_run_mode``). A GRAPH run that
    does not match cites the graph-mode lint findings in its verdict, and tries the other
    compiled path (``compiled_path``)."""
    result = _run_mode(spec, converted, mode, **kwargs)
    if mode == "GRAPH" and not result.ok:
        findings = graph_lint_findings(spec)
        if findings:
            result = replace(result, verdict=f"{result.verdict} [GRAPH_MODE lint: {'; '.join(findings)}]")
        if not result.verdict.startswith("not run"):
            result = compiled_path(spec, converted, result, **kwargs)
    return result


def compiled_path(spec: ParitySpec, converted: Path, graph: ModeResult, **kwargs) -> ModeResult:
    """Where GRAPH_MODE's whole-graph compile fails or differs (``graph``), MindSpore 2.10
    compiles construct by bytecode capture instead (what it cannot compile runs as
    Python). That path stands for the GRAPH run only where it gives torch's results and
    a call is faster than the uncompiled one; either way the notes say what it gave."""
    bytecode = _run_mode(spec, converted, "GRAPH", compiled="bytecode", **kwargs)
    timing = bytecode.call_seconds
    if not bytecode.ok or timing is None:
        return replace(graph, notes=(*graph.notes, f"{BYTECODE_PATH} in PYNATIVE mode did not help: {bytecode.verdict}"))
    speed = (f"a call takes {timing['compiled'] * 1e3:.3g} ms compiled, "
             f"{timing['uncompiled'] * 1e3:.3g} ms uncompiled")
    if timing["compiled"] > timing["uncompiled"]:
        return replace(graph, notes=(*graph.notes, f"{BYTECODE_PATH} in PYNATIVE mode matches torch, but {speed}: "
                                     "no faster than not compiling"))
    why = "does not compile" if graph.verdict.startswith("error") else "differs from torch"
    note = (f"GRAPH_MODE {why} ({graph.verdict}); {BYTECODE_PATH} in PYNATIVE mode matches torch and is "
            f"faster ({speed}): the GRAPH result is its")
    return replace(bytecode, compiled_path=BYTECODE_PATH, notes=(*bytecode.notes, note), call_seconds=None)


def _run_mode(spec: ParitySpec, converted: Path, mode: str, *, timeout: float = DEFAULT_TIMEOUT,
              python: str | None = None, localise: bool = False, cells: bool = False,
              compiled: str | None = None) -> ModeResult:
    """One (model, mode) run in a child process. ``localise``: on a mismatch, find the
    first submodule that diverges; ``cells``: record the submodules' inputs; ``compiled``:
    "bytecode" for GRAPH's other compiled path."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    if mode == "GRAPH" and spec.graph:
        return ModeResult(mode, f"not run: {spec.graph}")
    start = time.perf_counter()
    run = run_child({
        "task": "parity", "spec": spec.to_dict(), "torch_source": str(spec.source.resolve()),
        "converted": str(Path(converted).resolve()), "mode": mode, "localise": localise, "cells": cells,
        "compiled": compiled,
        **_package_roots(spec, Path(converted)),
    }, timeout=timeout, python=python)
    if run.data is None:
        return ModeResult(mode, f"error: {run.error}", detail=run.detail, seconds=time.perf_counter() - start)
    data = run.data
    seconds = float(data.get("seconds", 0.0))
    notes = tuple(data.get("notes", ()))
    localisation = Localisation.from_dict(data.get("localisation"))
    if data.get("error"):
        return ModeResult(mode, f"error: {data['error']}", detail=data.get("detail", ""), seconds=seconds, notes=notes,
                          localisation=localisation)
    outputs = tuple(OutputDiff.from_dict(d) for d in data["outputs"])
    diffs = tuple(d.max_abs_diff for d in outputs)
    worst = max(diffs, key=lambda v: math.inf if math.isnan(v) else v) if diffs else 0.0
    ok = all(d.allclose for d in outputs)
    return ModeResult(
        mode, "match" if ok else "mismatch", worst, diffs, seconds=seconds, notes=notes, outputs=outputs,
        localisation=localisation,
        cells=tuple(data["cells"]) if data.get("cells") is not None else None,
        weights=tuple(tuple(c) for c in data.get("weights") or ()),
        call_seconds=data.get("call_seconds"),
        graph_divergence=data.get("graph_divergence"),
    )


def _package_roots(spec: ParitySpec, converted: Path) -> dict:
    """With --root: the module both files are imported as and the root of each side (the
    converted one: the directory that holds the converted file where the root holds the
    source; a converted file placed otherwise: its own directory, as the import's base)."""
    if spec.root is None:
        return {}
    module = module_name(spec.source, spec.root)
    converted = converted.resolve()
    relative = spec.source.resolve().relative_to(spec.root.resolve())
    converted_root = converted.parents[len(relative.parts) - 1]
    if converted_root / relative != converted:
        converted_root, module = converted.parent, converted.stem
    return {"module": module, "torch_root": str(spec.root.resolve()), "converted_root": str(converted_root)}


def _relabel(mr: ModeResult, tmp_path: Path, label: str) -> ModeResult:
    """Lines in a file converted on the fly name the source it came from."""
    loc = mr.localisation
    if loc is None or loc.divergence is None:
        return mr
    d = loc.divergence
    lines = tuple(replace(s, file=label) if Path(s.file) == tmp_path else s for s in d.converted)
    return replace(mr, localisation=replace(loc, divergence=replace(d, converted=lines)))


def run_samples(
    specs: Sequence[ParitySpec],
    *,
    converted_dir: str | os.PathLike | None = None,
    modes: Sequence[str] = MODES,
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    python: str | None = None,
    localise: bool = True,
    cells: bool = False,
) -> list[SampleResult]:
    """Parity for every spec in every mode; results in the specs' order.

    The converted file is the spec's own ``converted`` if it names one, else the
    file under ``converted_dir`` (the layout ``transpile convert SAMPLES -o DIR``
    writes), else the sample converted on the fly. Up to ``jobs`` child processes
    run at once. The first mode's run also localises a mismatch (``localise``) and
    records the submodules' inputs (``cells``).
    """
    modes = [m for m in MODES if m in modes]
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
            futures = [pool.submit(run_mode, r.spec, path, mode, timeout=timeout, python=python,
                                   localise=localise and mode == modes[0], cells=cells and mode == modes[0])
                       for r, path, mode in tasks]
            for (r, path, mode), fut in zip(tasks, futures):
                mr = fut.result()
                if r.converted_path is None:
                    mr = _relabel(mr, path, f"{r.spec.source.name} (converted on the fly)")
                r.results[mode] = mr
    for r in out:  # the table lists modes in a fixed order
        r.results = {m: r.results[m] for m in MODES if m in r.results}
    return out


def run_sample(spec: ParitySpec | str | os.PathLike, **kwargs) -> SampleResult:
    """Parity for one sample (a spec or a spec file); see ``run_samples``."""
    if not isinstance(spec, ParitySpec):
        spec = load_spec(spec)
    return run_samples([spec], **kwargs)[0]


def run_parity(spec: ParitySpec, **kwargs) -> SampleResult:
    """Parity for one model (a spec from ``make_spec``); both modes run at once.
    The keywords are ``run_samples``'s."""
    kwargs.setdefault("jobs", 2)
    return run_samples([spec], **kwargs)[0]


# -- checkpoints ------------------------------------------------------------------------

@dataclass
class WeightsResult:
    """``transpile weights``: what was mapped, what was not, and whether OUT was written."""

    checkpoint: Path
    output: Path
    plan: Transfer | None = None
    written: bool = False
    error: str | None = None
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # path -> checkpoint name where they differ
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.written

    @property
    def refused(self) -> bool:
        return self.error is None and not self.written and self.plan is not None and not self.plan.complete


def convert_weights(
    checkpoint: str | os.PathLike,
    output: str | os.PathLike,
    *,
    source: str | os.PathLike,
    model: str,
    converted: str | os.PathLike | None = None,
    allow_partial: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    python: str | None = None,
) -> WeightsResult:
    """Convert a torch checkpoint (``.pt``, ``.pth``, ``.bin`` or ``.safetensors``) into
    a MindSpore ``.ckpt`` for the converted model, with the mapping parity uses.

    ``model`` is the constructor expression, evaluated in both files (the torch model
    gives the names and layer types, the converted one the parameters). Nothing is
    written when anything is left unmapped, unless ``allow_partial``; OUT is written
    whole or not at all. Raises SpecError for unusable arguments.
    """
    checkpoint, output, source = Path(checkpoint), Path(output), Path(source)
    result = WeightsResult(checkpoint, output)
    if checkpoint.suffix not in CHECKPOINT_SUFFIXES:
        raise SpecError(f"{checkpoint}: a checkpoint is one of {', '.join(CHECKPOINT_SUFFIXES)}")
    if not checkpoint.is_file():
        raise SpecError(f"{checkpoint}: not found")
    if checkpoint.suffix == ".safetensors":
        import importlib.util

        if importlib.util.find_spec("safetensors") is None:
            raise SpecError(f"{checkpoint}: reading .safetensors needs the safetensors package "
                            "(pip install safetensors)")
    if output.suffix != ".ckpt":
        raise SpecError(f"{output}: the output is a MindSpore .ckpt file")
    if not output.parent.is_dir():
        raise SpecError(f"{output.parent}: no such directory")
    try:
        compile(model, "--model", "eval")
    except SyntaxError as exc:
        raise SpecError(f"--model {model!r} is not an expression: {exc.msg}") from exc
    with tempfile.TemporaryDirectory(prefix="transpile-weights-src-") as tmp:
        src = converted_source(source, Path(tmp), converted=Path(converted) if converted is not None else None)
        result.diagnostics = src.diagnostics
        if src.path is None:
            result.error = src.error
            return result
        run = run_child({
            "task": "weights", "name": source.stem, "entry": model, "torch_source": str(source.resolve()),
            "converted": str(src.path.resolve()), "checkpoint": str(checkpoint.resolve()),
            "output": str(output.resolve()), "allow_partial": allow_partial,
        }, timeout=timeout, python=python)
    if run.data is None:
        result.error, result.detail = run.error, run.detail
        return result
    data = run.data
    result.error, result.detail = data.get("error"), data.get("detail", "")
    result.notes = list(data.get("notes", ()))
    result.names = dict(data.get("names") or {})
    result.plan = Transfer.from_dict(data["plan"]) if data.get("plan") else None
    result.written = bool(data.get("written"))
    return result
