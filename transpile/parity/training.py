"""Training parity: train the torch script and its conversion side by side.

A training sample is a script with a spec beside it (``samples/train_x.py`` +
``samples/train_x.training.toml``)::

    description = "MNIST-style CNN, SGD with momentum and StepLR"
    model = "build_model()"   # evaluated in the script's namespace, torch and converted
    train = "train"           # called as train(model, steps); returns the loss of every step
    steps = 20
    loss_rtol = 1e-4          # every step: |torch - mindspore| <= loss_rtol * |torch|
    weight_atol = 1e-4        # final weights: |torch - mindspore| <= weight_atol + weight_rtol * |torch|
    weight_rtol = 1e-4
    seed = 0                  # torch.manual_seed / mindspore.set_seed before the models are built
    frozen = ["backbone."]    # weights (by torch name prefix) that training must leave unchanged
    script = true             # also run the converted script end to end (its main)

The check, for each sample: convert it with ``convert_code`` (or take the converted file
given), then in a child process build both models, copy the torch model's initial weights
into the converted model (the mapping ``transpile weights`` uses), train both for
``steps`` steps, and compare the loss after every step and every final weight. The
script's own data (numpy, seeded) gives both sides the same batches. A second child
runs the converted script as ``python train_x.py`` in an empty temporary directory, so
the checkpoint it saves lands there, with a time limit.

This module is the parent's part (specs, ``run_training``, results): it never imports
torch or MindSpore. The child's task is ``run_training`` of ``_child``.
"""
from __future__ import annotations

import math
import os
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterable, Sequence

from .compare import OutputDiff
from .report import table_lines, json_safe
from .forkserver import start_child
from .runner import DEFAULT_TIMEOUT, converted_file, kill_group, tail, converted_source, run_child
from .spec import SpecError, as_float, check_expr, paths_in, paths_out, read_spec_file

SUFFIX = ".training.toml"
MARKER = "# transpile:"
_KNOWN = {"description", "model", "train", "steps", "loss_rtol", "weight_atol", "weight_rtol", "seed", "frozen",
          "source", "converted", "script"}


@dataclass(frozen=True)
class TrainingSpec:
    name: str  # the spec file's stem without .training
    path: Path | None  # the spec file
    source: Path  # the torch script
    model: str = "build_model()"
    train: str = "train"
    steps: int = 20
    loss_rtol: float = 1e-4
    weight_atol: float = 1e-4
    weight_rtol: float = 1e-4
    seed: int = 0
    frozen: tuple[str, ...] = ()
    script: bool = True
    converted: Path | None = None
    description: str = field(default="", compare=False)

    def to_dict(self) -> dict:
        """JSON-ready (the child process gets the spec this way)."""
        return paths_out({f.name: getattr(self, f.name) for f in fields(self)} | {"frozen": list(self.frozen)})

    @classmethod
    def from_dict(cls, data: dict) -> "TrainingSpec":
        return cls(**paths_in(data) | {"frozen": tuple(data.get("frozen", ()))})


def training_spec_from_dict(data: dict, *, where: str, base: Path, name: str, path: Path | None = None) -> TrainingSpec:
    """Validate the fields of a training spec (raises SpecError); paths are taken from ``base``."""
    unknown = set(data) - _KNOWN
    if unknown:
        raise SpecError(f"{where}: unknown fields {sorted(unknown)}")
    model = check_expr(data.get("model", "build_model()"), where, "model")
    train = data.get("train", "train")
    if not isinstance(train, str) or not train.strip().isidentifier():
        raise SpecError(f"{where}: train is the name of the function called as train(model, steps)")
    steps = data.get("steps", 20)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise SpecError(f"{where}: steps must be a positive integer")
    tolerances = {key: as_float(data.get(key, 1e-4), f"{where}: {key}") for key in ("loss_rtol", "weight_atol", "weight_rtol")}
    if any(v < 0 for v in tolerances.values()):
        raise SpecError(f"{where}: loss_rtol, weight_atol and weight_rtol must not be negative")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SpecError(f"{where}: seed must be a non-negative integer")
    frozen = data.get("frozen", [])
    if not isinstance(frozen, list) or not all(isinstance(p, str) and p for p in frozen):
        raise SpecError(f"{where}: frozen is a list of torch weight-name prefixes (\"backbone.\")")
    script = data.get("script", True)
    if not isinstance(script, bool):
        raise SpecError(f"{where}: script must be true or false")
    source = data.get("source", f"{name}.py")
    if not isinstance(source, str) or not source.endswith(".py"):
        raise SpecError(f"{where}: source must name a .py file (the torch training script)")
    converted = data.get("converted")
    if converted is not None and (not isinstance(converted, str) or not converted.strip()):
        raise SpecError(f"{where}: converted must name the converted file")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SpecError(f"{where}: description must be a string")
    return TrainingSpec(name=name, path=path, source=base / source, model=model, train=train.strip(), steps=steps,
                        seed=seed, frozen=tuple(frozen), script=script,
                        converted=None if converted is None else base / converted, description=description,
                        **tolerances)


def load_training_spec(path: str | os.PathLike) -> TrainingSpec:
    """Read and validate ``<sample>.training.toml`` (raises SpecError)."""
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        raise SpecError(f"{path}: a training spec is named <sample>{SUFFIX}")
    return training_spec_from_dict(read_spec_file(path), where=str(path), base=path.parent,
                                   name=path.name[: -len(SUFFIX)], path=path)


def find_training_specs(directory: str | os.PathLike) -> list[Path]:
    """Every ``*.training.toml`` under ``directory``, sorted."""
    return sorted(Path(directory).rglob(f"*{SUFFIX}"))


def load_training_specs(targets: str | os.PathLike | Iterable[str | os.PathLike]) -> list[TrainingSpec]:
    """Specs from a directory (every training spec in it) or from spec files (raises SpecError)."""
    if isinstance(targets, (str, os.PathLike)) and Path(targets).is_dir():
        paths = find_training_specs(targets)
        if not paths:
            raise SpecError(f"{targets}: no *{SUFFIX} files")
    elif isinstance(targets, (str, os.PathLike)):
        paths = [Path(targets)]
    else:
        paths = [Path(p) for p in targets]
    return [load_training_spec(p) for p in paths]


# -- results -----------------------------------------------------------------------------

@dataclass(frozen=True)
class ScriptRun:
    """The converted script run end to end: ``python train_x.py`` in an empty directory."""

    ok: bool
    seconds: float
    error: str | None = None  # the exception (and where) or the time limit
    output: str = ""  # the last lines it printed
    files: tuple[str, ...] = ()  # what it wrote into its working directory
    detail: str = ""  # the end of its stderr

    def to_dict(self) -> dict:
        return {"ok": self.ok, "seconds": round(self.seconds, 3), "error": self.error, "output": self.output,
                "files": list(self.files), "detail": self.detail}


@dataclass
class TrainingResult:
    sample: str
    spec: TrainingSpec | None
    converted: bool  # the converted source exists and the conversion reported no error
    error: str | None = None  # the training comparison could not run to its end
    detail: str = ""
    torch_losses: list[float] | None = None
    ms_losses: list[float] | None = None
    loss_diff: OutputDiff | None = None  # the losses as one array: max rel diff, allclose
    first_loss_mismatch: int | None = None  # the first step (0-based) whose loss differs
    weights: list[OutputDiff] = field(default_factory=list)  # final weights, one per torch tensor
    frozen: list[dict] = field(default_factory=list)  # {"name", "torch_unchanged", "ms_unchanged"}
    unmoved: list[str] = field(default_factory=list)  # trainable torch weights that training left as they were
    script: ScriptRun | None = None
    markers: list[str] = field(default_factory=list)  # "# transpile:" lines left in the conversion
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    converted_path: Path | None = None  # the converted file given (None: converted on the fly)

    @property
    def weight_max_abs_diff(self) -> float | None:
        if not self.weights:
            return None
        return max((d.max_abs_diff for d in self.weights), key=lambda v: math.inf if math.isnan(v) else v)

    @property
    def problems(self) -> list[str]:
        """Every way the sample fails, most telling first; empty when it matches."""
        out = []
        if self.error:
            out.append(f"error: {self.error}")
        if self.loss_diff is not None and not self.loss_diff.allclose:
            out.append(f"loss differs from step {self.first_loss_mismatch} "
                       f"(max rel diff {_num(self.loss_diff.max_rel_diff)} > {self.spec.loss_rtol:g})")
        bad = [d for d in self.weights if not d.allclose]
        if bad:
            worst = max(bad, key=lambda d: math.inf if math.isnan(d.max_abs_diff) else d.max_abs_diff)
            out.append(f"{len(bad)} of {len(self.weights)} final weights differ (worst {worst.name}: "
                       f"max abs diff {_num(worst.max_abs_diff)}{', ' + worst.note if worst.note else ''})")
        moved = [f["name"] + (" (torch)" if not f["torch_unchanged"] else "") + (" (MindSpore)" if not f["ms_unchanged"] else "")
                 for f in self.frozen if not (f["torch_unchanged"] and f["ms_unchanged"])]
        if moved:
            out.append(f"frozen weights moved: {', '.join(moved[:4])}{' ...' if len(moved) > 4 else ''}")
        if self.script is not None and not self.script.ok:
            out.append(f"converted script: {self.script.error}")
        return out

    @property
    def verdict(self) -> str:
        problems = self.problems
        return "; ".join(problems) if problems else "match"

    @property
    def ok(self) -> bool:
        return self.converted and not self.problems and self.loss_diff is not None


def _num(value: float | None, fmt: str = ".3g") -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    return "inf" if math.isinf(value) else format(value, fmt)


# -- running -----------------------------------------------------------------------------

def _markers(path: Path) -> list[str]:
    """``line N: <code>`` for every line the conversion left a ``# transpile:`` marker on."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"line {n}: {text.strip()}" for n, text in enumerate(lines, 1) if MARKER in text]


def _script_error(stderr: str, script: Path) -> str:
    """The exception a script died of, and the script's line it raised at (its last frame there)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    start = max((i for i, ln in enumerate(lines) if ln.startswith("Traceback")), default=None)
    if start is None:
        return lines[-1].strip()
    block = lines[start:]
    exception = next((ln.strip() for ln in block[1:] if not ln.startswith((" ", "\t"))), block[-1].strip())
    where = ""
    marker = f'File "{script}", line '
    for i, ln in enumerate(block):
        if marker in ln:
            number = ln.split(marker, 1)[1].split(",", 1)[0]
            code = block[i + 1].strip() if i + 1 < len(block) and block[i + 1].startswith("    ") else ""
            where = f" (at {script.name}:{number}: {code})" if code else f" (at {script.name}:{number})"
    return exception + where


def run_script(script: Path, *, timeout: float = DEFAULT_TIMEOUT, python: str | None = None) -> ScriptRun:
    """Run ``python SCRIPT`` in an empty temporary directory (what it writes goes there and
    is deleted), in its own process group, killed at the time limit."""
    script = Path(script).resolve()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="transpile-script-") as tmp:
        work, logs = Path(tmp) / "work", Path(tmp) / "logs"
        work.mkdir()
        logs.mkdir()
        env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
        proc = start_child("script", str(script), [], python=python, cwd=str(work), stdout=logs / "stdout",
                           stderr=logs / "stderr", env=env)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
        finally:
            if proc.poll() is None:
                kill_group(proc)
        seconds = time.perf_counter() - start
        stdout = tail((logs / "stdout").read_text(encoding="utf-8", errors="replace"), 5)
        stderr = (logs / "stderr").read_text(encoding="utf-8", errors="replace")
        files = tuple(sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file()))
    if timed_out:
        return ScriptRun(False, seconds, f"timed out after {timeout:g} s (raise the limit with --timeout)",
                         stdout, files, tail(stderr))
    if proc.returncode != 0:
        error = _script_error(stderr, script) if stderr.strip() else f"exit status {proc.returncode}"
        return ScriptRun(False, seconds, error, stdout, files, tail(stderr))
    return ScriptRun(True, seconds, None, stdout, files)


def _apply(result: TrainingResult, data: dict) -> None:
    """The child's JSON into the result."""
    result.error = data.get("error")
    result.detail = data.get("detail", "")
    result.notes += list(data.get("notes", ()))
    result.torch_losses = data.get("torch_losses")
    result.ms_losses = data.get("ms_losses")
    if data.get("loss_diff"):
        result.loss_diff = OutputDiff.from_dict(data["loss_diff"])
    result.first_loss_mismatch = data.get("first_loss_mismatch")
    result.weights = [OutputDiff.from_dict(d) for d in data.get("weights", ())]
    result.frozen = list(data.get("frozen", ()))
    result.unmoved = list(data.get("unmoved", ()))
    result.seconds = float(data.get("seconds", 0.0))


def _prepare(spec: TrainingSpec, converted_dir: Path | None, workdir: Path) -> tuple[TrainingResult, Path | None]:
    """The result so far and the converted script's path (None: it cannot run)."""
    explicit = spec.converted
    if explicit is None and converted_dir is not None:
        explicit = converted_file(spec, converted_dir)
    src = converted_source(spec.source, workdir / spec.name, converted=explicit)
    result = TrainingResult(spec.name, spec, src.path is not None, error=src.error,
                            converted_path=None if src.on_the_fly else src.path)
    if src.path is not None:
        result.markers = _markers(src.path)
    return result, src.path


def _compare(spec: TrainingSpec, converted: Path, timeout: float, python: str | None) -> dict:
    """The training comparison in a child process: its JSON result, or an error."""
    run = run_child({"task": "training", "spec": spec.to_dict(), "torch_source": str(spec.source.resolve()),
                     "converted": str(converted.resolve())}, timeout=timeout, python=python)
    if run.data is None:
        return {"error": run.error, "detail": run.detail}
    return run.data


def run_training(
    specs: Sequence[TrainingSpec],
    *,
    converted_dir: str | os.PathLike | None = None,
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    python: str | None = None,
    script: bool = True,
) -> list[TrainingResult]:
    """Training parity for every spec, results in the specs' order.

    The converted script is the spec's own ``converted``, else the file under
    ``converted_dir`` (as ``transpile convert SAMPLES -o DIR`` lays it out), else the
    script converted on the fly. Per sample, one child process trains both sides and one
    runs the converted script end to end (unless ``script`` is False or the spec says
    ``script = false``); up to ``jobs`` run at once, each within ``timeout`` seconds.
    """
    out: list[TrainingResult] = []
    with tempfile.TemporaryDirectory(prefix="transpile-training-src-") as tmp:
        ready = []
        for spec in specs:
            result, path = _prepare(spec, Path(converted_dir) if converted_dir is not None else None, Path(tmp))
            out.append(result)
            if path is not None:
                ready.append((result, path))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            compared = [pool.submit(_compare, r.spec, path, timeout, python) for r, path in ready]
            scripts = [pool.submit(run_script, path, timeout=timeout, python=python) if script and r.spec.script
                       else None for r, path in ready]
            for (result, _), comparison, run in zip(ready, compared, scripts):
                _apply(result, comparison.result())
                result.script = run.result() if run is not None else None
    return out


def run_training_sample(spec: TrainingSpec | str | os.PathLike, **kwargs) -> TrainingResult:
    """Training parity for one sample (a spec or a spec file); see ``run_training``."""
    if not isinstance(spec, TrainingSpec):
        spec = load_training_spec(spec)
    return run_training([spec], **kwargs)[0]


# -- reports -------------------------------------------------------------------------------

COLUMNS = ("sample", "converted", "steps", "loss max rel diff", "weights max abs diff", "frozen", "script", "verdict")
VERDICT_WIDTH = 90


def _frozen_cell(result: TrainingResult) -> str:
    if not result.frozen:
        return "-"
    kept = sum(f["torch_unchanged"] and f["ms_unchanged"] for f in result.frozen)
    return f"{kept}/{len(result.frozen)} kept"


def _script_cell(result: TrainingResult) -> str:
    if result.script is None:
        return "-"
    return f"ok {result.script.seconds:.0f} s" if result.script.ok else "FAILED"


def format_training_table(results: list[TrainingResult]) -> str:
    """sample | converted | steps | loss max rel diff | weights max abs diff | frozen | script | verdict."""
    rows = [COLUMNS]
    for r in results:
        verdict = r.verdict
        rows.append((
            r.sample, "yes" if r.converted else "no",
            str(len(r.ms_losses)) if r.ms_losses is not None else "-",
            _num(r.loss_diff.max_rel_diff) if r.loss_diff else "-",
            _num(r.weight_max_abs_diff), _frozen_cell(r), _script_cell(r),
            verdict if len(verdict) <= VERDICT_WIDTH else verdict[: VERDICT_WIDTH - 3] + "...",
        ))
    return "\n".join(table_lines(rows))


def format_training(results: list[TrainingResult], *, verbose: bool = False) -> str:
    """The table, then each sample's long verdict, markers left, notes (and with ``verbose`` the
    losses, every weight and the tracebacks), and a count."""
    lines = [format_training_table(results)]
    for r in results:
        if len(r.verdict) > VERDICT_WIDTH:
            lines.append(f"{r.sample}: {r.verdict}")
        if r.markers:
            lines.append(f"{r.sample}: the conversion left {len(r.markers)} '{MARKER}' markers, first {r.markers[0]}")
        if r.unmoved:
            lines.append(f"note: {r.sample}: training left trainable weights unchanged: {', '.join(r.unmoved)}")
        lines += [f"note: {r.sample}: {note}" for note in r.notes]
        if verbose:
            lines += _verbose_lines(r)
    lines.append(f"{sum(r.ok for r in results)} of {len(results)} training samples match")
    return "\n".join(lines)


def _verbose_lines(r: TrainingResult) -> list[str]:
    lines = [f"{r.sample}: {r.seconds:.1f} s to build and train both sides"] if r.seconds else []
    if r.torch_losses is not None:
        lines.append(f"{r.sample}: torch losses     {' '.join(f'{v:.6f}' for v in r.torch_losses)}")
    if r.ms_losses is not None:
        lines.append(f"{r.sample}: MindSpore losses {' '.join(f'{v:.6f}' for v in r.ms_losses)}")
    for d in r.weights:
        lines.append(f"{r.sample}: {d.name}: {'ok' if d.allclose else 'DIFFERS'}, max abs diff {_num(d.max_abs_diff)}")
    lines += [f"{r.sample}: marker {m}" for m in r.markers[1:]]
    if r.script is not None:
        lines.append(f"{r.sample}: script {'ok' if r.script.ok else 'failed'} in {r.script.seconds:.1f} s; "
                     f"wrote {', '.join(r.script.files) or 'nothing'}; printed: {r.script.output or '-'}")
        if r.script.detail:
            lines.append(f"--- {r.sample}: the converted script's stderr ---\n{r.script.detail}")
    if r.detail:
        lines.append(f"--- {r.sample}: training ---\n{r.detail}")
    return lines


def training_dict(result: TrainingResult) -> dict:
    """JSON-ready: every figure of one sample."""
    return json_safe({
        "sample": result.sample,
        "source": str(result.spec.source) if result.spec else None,
        "converted": result.converted,
        "converted_path": str(result.converted_path) if result.converted_path else None,
        "steps": result.spec.steps if result.spec else None,
        "tolerances": {k: getattr(result.spec, k) for k in ("loss_rtol", "weight_atol", "weight_rtol")}
        if result.spec else None,
        "torch_losses": result.torch_losses,
        "ms_losses": result.ms_losses,
        "loss_max_rel_diff": result.loss_diff.max_rel_diff if result.loss_diff else None,
        "first_loss_mismatch": result.first_loss_mismatch,
        "weights_max_abs_diff": result.weight_max_abs_diff,
        "weights": [d.to_dict() for d in result.weights],
        "frozen": result.frozen,
        "unmoved": result.unmoved,
        "script": result.script.to_dict() if result.script else None,
        "markers": result.markers,
        "notes": result.notes,
        "error": result.error,
        "detail": result.detail,
        "verdict": result.verdict,
        "ok": result.ok,
    })
