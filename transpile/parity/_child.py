"""Runs the user's code in its own process: ``python -m transpile.parity._child REQUEST``.

REQUEST is a JSON file: the task (``parity`` for one (model, mode) run, ``weights``
for a checkpoint conversion, ``training`` for a training sample), its inputs, where to
write the JSON result, and a progress file where each step is written as it starts (so a
time limit can say where the run hung). The user's code may print freely: nothing goes through
stdout. Exit status 0 means a result was written (it may still report an error).
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")  # MindSpore: errors only
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

TORCH, MS = "torch side", "MindSpore side"


class ParityFailure(Exception):
    """A step failed for a reason worth one line in the table."""


class Steps:
    """The current step, mirrored to the progress file."""

    def __init__(self, progress: str | None):
        self.progress = Path(progress) if progress else None
        self.current = "start"

    def __call__(self, name: str) -> None:
        self.current = name
        if self.progress is not None:
            self.progress.write_text(name, encoding="utf-8")


def import_path(path: Path, name: str):
    """Import a source file as a module under ``name``, registered in sys.modules
    (GRAPH mode reads ``construct``'s source through its module)."""
    if not path.is_file():
        raise ParityFailure(f"{path} not found")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ParityFailure(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def import_side(request: dict, side: str, path: Path, name: str):
    """One side's module: with a package root (``--root``), imported by its dotted name
    with that side's root first on sys.path, so that the package's absolute and relative
    imports work; the torch side's modules are then forgotten (and its root taken off the
    path), so that the converted side's imports of the same names find the converted
    tree. Without a root: the file alone, as ``import_path``."""
    root = request.get(f"{side}_root")
    if root is None:
        return import_path(path, name)
    sys.path.insert(0, root)
    try:
        module = importlib.import_module(request["module"])
    except ImportError as exc:
        raise ParityFailure(f"cannot import {request['module']} from {root}: {exc}") from exc
    if side == "torch":
        sys.path.remove(root)
        for loaded, mod in list(sys.modules.items()):
            if Path(getattr(mod, "__file__", None) or "/").resolve().is_relative_to(root):
                del sys.modules[loaded]
    return module


def _defined(module) -> list[str]:
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == module.__name__)


def _build(kind: str, entry: str, module, path: Path):
    namespace = dict(vars(module))
    if kind == "function":
        obj = namespace.get(entry)
        if not callable(obj):
            raise ParityFailure(f"{path.name} has no function {entry!r} (it defines: {', '.join(_defined(module)) or 'nothing'})")
        return obj
    try:
        return eval(entry, namespace)  # the constructor expression
    except NameError as exc:
        raise ParityFailure(f"{exc} in {path.name} (it defines: {', '.join(_defined(module)) or 'nothing'})") from exc


def _function_runner(fn, graph: bool):
    """A function runs as it is in PYNATIVE mode; in GRAPH mode it is compiled by
    wrapping it in a Cell (set_context(mode=GRAPH_MODE) compiles Cells only)."""
    if not graph:
        return fn
    from mindspore import nn

    class FunctionCell(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fn = fn

        def construct(self, *args):
            return self.fn(*args)

    return FunctionCell()


def _bytecode_runner(target):
    """``target`` (a Cell or a function) compiled by ``mindspore.jit(capture_mode="bytecode")``:
    the Cell's construct, as GRAPH mode would compile it."""
    import mindspore
    from mindspore import nn

    return mindspore.jit(target.construct if isinstance(target, nn.Cell) else target, capture_mode="bytecode")


def _call_seconds(call, inputs: list, repeats: int = 3) -> float:
    """The fastest of a few calls (after the first, which compiled)."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call(*_ms_args(inputs))
        best = min(best, time.perf_counter() - start)
    return best


def _torch_numpy(value):
    from transpile.parity.weights import as_numpy

    return as_numpy(value)


def ms_numpy(value):
    import mindspore

    if value.dtype == mindspore.bfloat16:
        value = value.astype(mindspore.float32)
    return value.asnumpy().copy()


def _is_torch(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _is_ms(value) -> bool:
    import mindspore

    return isinstance(value, mindspore.Tensor)


def _torch_args(inputs):
    import numpy as np
    import torch

    return [torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in inputs]


def _ms_args(inputs):
    import mindspore
    import numpy as np

    return [mindspore.Tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]


def build_both(request: dict, step: Steps, mode: str | None):
    """Import both files and build both objects; returns (torch_obj, ms_obj, modules)."""
    import torch

    kind, entry, seed = request["kind"], request["entry"], request.get("seed", 0)
    source, converted = Path(request["torch_source"]), Path(request["converted"])
    torch.manual_seed(seed)
    step(f"{TORCH}: import {source.name}")
    torch_mod = import_side(request, "torch", source, f"_parity_torch_{request['name']}")
    step(f"{TORCH}: build {entry}")
    torch_obj = _build(kind, entry, torch_mod, source)

    import mindspore

    mindspore.set_device("CPU")
    if mode is not None:
        mindspore.set_context(mode=mindspore.GRAPH_MODE if mode == "GRAPH" else mindspore.PYNATIVE_MODE)
    mindspore.set_seed(seed)
    step(f"{MS}: import {converted.name}")
    ms_mod = import_side(request, "converted", converted, f"_parity_ms_{request['name']}")
    step(f"{MS}: build {entry}")
    ms_obj = _build(kind, entry, ms_mod, converted)
    if kind == "module":
        if not isinstance(torch_obj, torch.nn.Module):
            raise ParityFailure(f"{TORCH}: {entry} gave a {type(torch_obj).__name__}, not an nn.Module")
        if not isinstance(ms_obj, mindspore.nn.Cell):
            raise ParityFailure(f"{MS}: {entry} gave a {type(ms_obj).__name__}, not an nn.Cell")
    return torch_obj, ms_obj


def run_parity(request: dict, step: Steps) -> dict:
    from transpile.parity.compare import ComparisonError, compare, make_inputs, to_tree
    from transpile.parity.spec import ParitySpec

    spec = ParitySpec.from_dict(request["spec"])
    mode = request["mode"]
    # "bytecode": the GRAPH run's other compiled path, construct under
    # jit(capture_mode="bytecode") in PYNATIVE mode (what it cannot compile runs as Python)
    bytecode = request.get("compiled") == "bytecode"
    files = [Path(request["torch_source"]), Path(request["converted"])]
    out: dict = {"error": None, "notes": [], "outputs": [], "localisation": None, "cells": None, "weights": None}
    try:
        import torch

        torch_obj, ms_obj = build_both({**request, "kind": spec.kind, "entry": spec.entry, "seed": spec.seed,
                                         "name": spec.name}, step, "PYNATIVE" if bytecode else mode)
        if spec.kind == "module":
            step("copy weights")
            refill_constants(torch_obj, spec.seed)
            out["notes"], out["weights"] = copy_all_weights(torch_obj, ms_obj)
            torch_obj.eval()
            ms_obj.set_train(False)
            ms_call = ms_obj
        else:
            ms_call = _function_runner(ms_obj, mode == "GRAPH" and not bytecode)
        plain_call = ms_call
        if bytecode:
            ms_call = _bytecode_runner(ms_call)

        step("inputs")
        inputs = make_inputs(spec)
        step(f"{TORCH}: forward")
        with torch.no_grad():
            torch_tree = to_tree(torch_obj(*_torch_args(inputs)), _is_torch, _torch_numpy, "torch")
        step(f"{MS}: construct in {mode} mode")
        localise = request.get("localise") and spec.kind == "module"
        try:
            ms_tree = to_tree(ms_call(*_ms_args(inputs)), _is_ms, ms_numpy, "MindSpore")
        except Exception:
            if localise:  # which submodule differed first, or raised?
                try:
                    loc, _ = _localise(spec, torch_obj, ms_obj, inputs, mode, files, compare_ms=True)
                    out["localisation"] = loc.to_dict()
                except Exception:
                    pass  # the error itself says more than a failed localisation
            raise
        step("compare")
        diffs = compare(spec, inputs, torch_tree, ms_tree)
        if bytecode:  # is the compiled path worth taking: a call, compiled, against one as Python
            step("time the calls")
            out["call_seconds"] = {"compiled": _call_seconds(ms_call, inputs),
                                   "uncompiled": _call_seconds(plain_call, inputs)}
        if spec.gradients and mode == "GRAPH" and spec.graph_gradients:
            out["notes"].append(f"gradients not compared in GRAPH mode: {spec.graph_gradients}")
        elif spec.gradients:
            step(f"gradients in {mode} mode")
            diffs += _compare_gradients(spec, torch_obj, ms_call, inputs, torch_tree)
        out["outputs"] = [d.to_dict() for d in diffs]
        differs = not all(d.allclose for d in diffs)
        if differs and mode == "GRAPH" and not bytecode and spec.kind == "module":
            step("each submodule alone in GRAPH mode")
            out["graph_divergence"] = graph_divergence_search(spec, ms_obj, inputs)
        if spec.kind == "module" and (request.get("cells") or (localise and differs)):
            step("localise (PYNATIVE hooks)")
            loc, cells = _localise(spec, torch_obj, ms_obj, inputs, mode, files, compare_ms=localise and differs)
            out["localisation"] = loc.to_dict() if loc else None
            if request.get("cells"):
                out["cells"] = cells
    except (ParityFailure, ComparisonError) as exc:
        out["error"] = _located(step.current, str(exc), exc, files)
    except Exception as exc:  # user code, frameworks: one line for the table, the trace for the detail
        out["error"] = _located(step.current, f"{type(exc).__name__}: {first_line(exc)}", exc, files)
        out["detail"] = traceback.format_exc(limit=12)
    return out


def _compare_gradients(spec, torch_obj, ms_call, inputs: list, torch_tree) -> list:
    """d(sum of the floating-point outputs)/d(each floating-point input), torch's autograd
    against ``mindspore.grad``; one diff per input, named after it."""
    import numpy as np
    import torch
    from mindspore import grad

    from transpile.parity.compare import diff_leaves, flatten

    positions = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
    if not positions:
        raise ParityFailure("gradients = true, but no input is a floating-point array")
    leaves = flatten(torch_tree)
    if isinstance(torch_tree, list) and any(isinstance(v, (list, dict)) for v in torch_tree) \
            or isinstance(torch_tree, dict):
        raise ParityFailure("gradients = true takes a tensor or a flat tuple of tensors as the output")
    floating = tuple(isinstance(v, np.ndarray) and v.dtype.kind == "f" for _, v in leaves)
    t_args = _torch_args(inputs)
    for i in positions:
        t_args[i].requires_grad_(True)
    outputs = torch_obj(*t_args)
    outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
    sum(o.sum() for o, keep in zip(outputs, floating) if keep).backward()
    t_grads = [np.zeros_like(inputs[i]) if t_args[i].grad is None else _torch_numpy(t_args[i].grad) for i in positions]
    m_grads = grad(_output_sum(ms_call, floating), grad_position=tuple(positions))(*_ms_args(inputs))
    m_grads = m_grads if isinstance(m_grads, tuple) else (m_grads,)
    m_grads = [np.zeros_like(inputs[i]) if g is None else ms_numpy(g) for i, g in zip(positions, m_grads)]
    return [diff_leaves(t, m, index=len(leaves) + k, name=f"d(sum of outputs)/d(input {i})", atol=spec.tolerance,
                        rtol=spec.rtol) for k, (i, t, m) in enumerate(zip(positions, t_grads, m_grads))]


def _output_sum(fn, floating: tuple[bool, ...]):
    """A Cell whose construct is the sum of ``fn``'s floating-point outputs (the Cell
    ``mindspore.grad`` differentiates, in either mode)."""
    from mindspore import nn

    class OutputSum(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fn = fn
            self.floating = floating

        def construct(self, *args):
            outputs = self.fn(*args)
            if not isinstance(outputs, (tuple, list)):
                return outputs.sum()
            total = 0
            for output, keep in zip(outputs, self.floating):
                if keep:
                    total = total + output.sum()
            return total

    return OutputSum()


def _located(stage: str, message: str, exc: BaseException, files: list[Path]) -> str:
    from transpile.parity.localise import user_frame

    where = user_frame(exc, files)
    return f"{stage}: {message}" + (f" (at {where})" if where else "")


def _localise(spec, torch_obj, ms_obj, inputs, mode: str, files: list[Path], compare_ms: bool):
    """Hooks on both sides in PYNATIVE mode; returns (Localisation or None, cells)."""
    import mindspore
    import torch

    from transpile.parity.localise import Localisation, Recorder, find_divergence, with_lines
    from transpile.parity.weights import torch_modules

    modules = torch_modules(torch_obj)
    cells = dict(ms_obj.cells_and_names())
    rec_t = Recorder(_is_torch, _torch_numpy).attach(modules)
    try:
        with torch.no_grad():
            torch_obj(*_torch_args(inputs))
    finally:
        rec_t.detach()
    t_cls = {p: type(m).__name__ for p, m in modules.items()}
    m_cls = {p: type(c).__name__ for p, c in cells.items()}
    cell_info = _cell_inputs(rec_t.events, cells, t_cls, m_cls)
    if not compare_ms:
        return None, cell_info
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    rec_m = Recorder(_is_ms, ms_numpy).attach({p: c for p, c in cells.items() if p in modules})
    raised = None
    try:
        ms_obj(*_ms_args(inputs))
    except Exception as exc:  # compare what was recorded before it
        raised = (rec_m.open_path(), f"{type(exc).__name__}: {first_line(exc)}")
    finally:
        rec_m.detach()
    div, compared, unmatched = find_divergence(rec_t.events, rec_m.events, set(cells), spec.tolerance, spec.rtol,
                                               (t_cls, m_cls), raised)
    note = ""
    if div is not None:
        div = with_lines(div, modules, cells, files[0], files[1])
    elif mode == "GRAPH":
        note = "in PYNATIVE mode every submodule and the output match: the problem is in GRAPH mode only"
    else:
        note = "every submodule matches within the tolerance: the difference builds up across them"
    return Localisation("PYNATIVE", div, compared, unmatched, note), cell_info


GRAPH_SEARCH_SECONDS = 120.0  # the search below stops after this, saying how far it got


def graph_divergence_search(spec, ms_obj, inputs) -> dict:
    """A GRAPH run differs from torch: which submodule gives, run alone in GRAPH mode on the
    inputs it got in PYNATIVE mode, other results than in PYNATIVE mode. Submodules are
    tried in the order their calls end (a layer before the block that calls it, the model
    itself last), each once (its first call); the first that differs is named. Every
    submodule alone agreeing while the model does not puts the difference in the model's
    own construct, between submodules."""
    import mindspore

    from transpile.parity.compare import to_tree
    from transpile.parity.localise import Recorder, differs as trees_differ

    cells = dict(ms_obj.cells_and_names())
    recorder = Recorder(_is_ms, ms_numpy, keep_arguments=True).attach(cells)
    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    try:
        ms_obj(*_ms_args(inputs))
    finally:
        recorder.detach()
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
    ends = [e for e in recorder.events if e.kind == "output" and e.call == 0]  # first calls, as they end
    outputs = {e.path: e.tree for e in ends}
    order = [e.path for e in ends]
    start, checked, failed = time.perf_counter(), 0, []
    for path in order:
        if time.perf_counter() - start > GRAPH_SEARCH_SECONDS:
            return {"path": None, "checked": checked, "failed": failed, "total": len(order),
                    "summary": f"stopped after {GRAPH_SEARCH_SECONDS:g} s"}
        if isinstance(outputs[path], str):  # "<object>": Recorder could not read it
            continue  # an output that is no tensor tree: nothing to compare
        args, kwargs = recorder.arguments[path]
        try:
            got = to_tree(cells[path](*args, **kwargs), _is_ms, ms_numpy, "MindSpore")
        except Exception as exc:  # this submodule alone does not compile: go on with the others
            failed.append(f"{path or '(the model)'}: {type(exc).__name__}: {first_line(exc)[:120]}")
            continue
        checked += 1
        bad, _, summary = trees_differ(outputs[path], got, spec.tolerance, spec.rtol)
        if bad:
            return {"path": path, "class": type(cells[path]).__name__, "summary": summary, "checked": checked,
                    "failed": failed, "total": len(order)}
    return {"path": None, "checked": checked, "failed": failed, "total": len(order), "summary": ""}


def _cell_inputs(events, cells: dict, t_cls: dict, m_cls: dict) -> list[dict]:
    """One submodule per torch class (its first call), with inputs like those it got:
    what an emitted test needs for a unit test per Cell."""
    seen: set[str] = set()
    out = []
    for e in events:
        if e.kind != "inputs" or not e.path or e.call or e.path not in cells or e.arg_specs is None:
            continue
        if t_cls[e.path] in seen:
            continue
        seen.add(t_cls[e.path])
        out.append({"path": e.path, "torch_class": t_cls[e.path], "ms_class": m_cls.get(e.path, ""),
                    "inputs": [s.code("rng") for s in e.arg_specs], "labels": [s.label() for s in e.arg_specs]})
    return out


def first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def refill_constants(torch_obj, seed: int) -> None:
    """Refill the tensors torch initialises to a constant (BatchNorm's weight, bias and
    running statistics) with seeded values in [0.5, 1.5): MindSpore's initial values are
    the same constants, so a tensor copied to the wrong place would otherwise go unseen."""
    import torch

    from transpile.parity.weights import torch_state

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for tensor in torch_state(torch_obj, keep_vars=True).values():
            if tensor.is_floating_point() and tensor.numel() > 1 and bool((tensor == tensor.flatten()[0]).all()):
                tensor.copy_(torch.rand(tensor.shape, generator=generator, dtype=tensor.dtype) + 0.5)


def copy_all_weights(torch_obj, ms_obj) -> tuple[list[str], list]:
    """Copy torch -> MindSpore; every tensor on each side must find its counterpart.
    Returns notes on what copied but deserves a look, and the copies made."""
    from transpile.parity.weights import apply_transfer, plan_for_model, torch_state

    plan, targets = plan_for_model(torch_obj, ms_obj)
    if plan.unmapped:
        raise ParityFailure("torch weights with no MindSpore parameter of that name and size: "
                            + ", ".join(f"{k} ({why})" for k, why in plan.unmapped))
    if plan.unfilled:
        raise ParityFailure(f"MindSpore parameters no torch weight was copied into: {', '.join(plan.unfilled)}")
    apply_transfer(plan, torch_state(torch_obj), targets)
    misnamed = [f"{t.name} (at {path})" for path, t in targets.items() if t.kind == "parameter" and t.name != path]
    notes = []
    if misnamed:
        notes.append("MindSpore parameter names differ from their paths, so a checkpoint saved by path "
                     f"will not load into them with load_param_into_net: {', '.join(misnamed)}")
    return notes, plan.copies


def run_weights(request: dict, step: Steps) -> dict:
    """Convert a torch checkpoint into a MindSpore .ckpt for the converted model."""
    from transpile.parity.weights import CheckpointError, checkpoint_entries, load_torch_checkpoint, plan_for_model

    files = [Path(request["torch_source"]), Path(request["converted"])]
    out: dict = {"error": None, "notes": [], "plan": None, "written": False}
    try:
        torch_obj, ms_obj = build_both({**request, "kind": "module"}, step, None)
        step(f"read {Path(request['checkpoint']).name}")
        model_keys = torch_obj.state_dict().keys()
        state, out["notes"] = load_torch_checkpoint(request["checkpoint"], model_keys)
        step("map the checkpoint")
        plan, targets = plan_for_model(torch_obj, ms_obj, {k: tuple(v.shape) for k, v in state.items()})
        out["plan"] = plan.to_dict()
        out["names"] = {path: targets[path].name for _, path in plan.copies if targets[path].name != path}
        buffers = [path for _, path in plan.copies if targets[path].kind == "buffer"]
        if buffers:
            out["notes"].append("buffers written to the checkpoint (load_param_into_net loads parameters only; "
                                f"set them with register_buffer): {', '.join(buffers)}")
        if plan.complete or request.get("allow_partial"):
            step(f"write {Path(request['output']).name}")
            import mindspore

            target = Path(request["output"])
            tmp = target.with_name(f".{target.stem}.partial.ckpt")  # save_checkpoint wants .ckpt
            try:
                mindspore.save_checkpoint(checkpoint_entries(plan, state, targets), str(tmp))
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            out["written"] = True
    except (ParityFailure, CheckpointError) as exc:
        out["error"] = _located(step.current, str(exc), exc, files)
    except Exception as exc:
        out["error"] = _located(step.current, f"{type(exc).__name__}: {first_line(exc)}", exc, files)
        out["detail"] = traceback.format_exc(limit=12)
    return out


def run_training(request: dict, step: Steps) -> dict:
    """Train the torch script and its conversion side by side (see ``transpile.parity.training``):
    build both models, copy the weights, train both, compare."""
    from transpile.parity.training import TrainingSpec

    spec = TrainingSpec.from_dict(request["spec"])
    torch_file, ms_file = Path(request["torch_source"]), Path(request["converted"])
    out: dict = {"error": None, "notes": [], "torch_losses": None, "ms_losses": None, "weights": [], "frozen": []}
    try:
        torch_model, ms_model = build_both({**request, "kind": "module", "entry": spec.model, "seed": spec.seed,
                                             "name": spec.name}, step, None)
        torch_train = _train_function(f"_parity_torch_{spec.name}", spec.train, torch_file)
        ms_train = _train_function(f"_parity_ms_{spec.name}", spec.train, ms_file)
        step("copy weights")
        refill_constants(torch_model, spec.seed)
        out["notes"], copies = copy_all_weights(torch_model, ms_model)
        initial = _weights(torch_model, ms_model, copies)
        step(f"{TORCH}: train {spec.steps} steps")
        out["torch_losses"] = _losses(torch_train(torch_model, spec.steps), spec.steps, TORCH)
        step(f"{MS}: train {spec.steps} steps")
        out["ms_losses"] = _losses(ms_train(ms_model, spec.steps), spec.steps, MS)
        step("compare")
        final = _weights(torch_model, ms_model, copies)
        out.update(_compare_training(spec, out["torch_losses"], out["ms_losses"], initial, final, copies))
    except ParityFailure as exc:
        out["error"] = f"{step.current}: {exc}"
    except Exception as exc:  # the scripts, the frameworks: one line, and the trace for the detail
        out["error"] = f"{step.current}: {type(exc).__name__}: {first_line(exc)}{_where(exc, torch_file, ms_file)}"
        out["detail"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-12))
    return out


def _where(exc: BaseException, torch_file: Path, ms_file: Path) -> str:
    """`` (at converted train_x.py:73 in train: loss.backward())``: the innermost frame in
    either script, with its code."""
    labels = {str(torch_file.resolve()): torch_file.name, str(ms_file.resolve()): f"converted {ms_file.name}"}
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        label = labels.get(str(Path(frame.filename).resolve()))
        if label is not None:
            code = (frame.line or "").strip()
            found = f" (at {label}:{frame.lineno} in {frame.name}{': ' + code if code else ''})"
    return found


def _train_function(module_name: str, name: str, path: Path):
    """The train function of a script ``_build_both`` imported."""
    fn = getattr(sys.modules[module_name], name, None)
    if not callable(fn):
        raise ParityFailure(f"{path.name} has no function {name!r} to call as {name}(model, steps)")
    return fn


def _losses(value, steps: int, side: str) -> list[float]:
    """The per-step losses a train function returned, as floats (there must be ``steps`` of them)."""
    if not isinstance(value, (list, tuple)):
        raise ParityFailure(f"{side}: train returned a {type(value).__name__}, not the list of per-step losses")
    if len(value) != steps:
        raise ParityFailure(f"{side}: train returned {len(value)} losses for {steps} steps")
    try:
        return [float(v) for v in value]
    except (TypeError, ValueError) as exc:
        raise ParityFailure(f"{side}: a loss is not a number ({exc})") from exc


def _target_numpy(target):
    """The current value of a MindSpore parameter or buffer."""
    value = target.ref if target.kind == "parameter" else target.ref[0]._buffers[target.ref[1]]
    return ms_numpy(value)


def _weights(torch_model, ms_model, copies) -> dict[str, tuple]:
    """torch key -> (torch value, MindSpore value in torch's shape), both numpy copies."""
    from transpile.parity.weights import as_numpy, ms_targets, torch_state

    state, targets = torch_state(torch_model), ms_targets(ms_model)
    out = {}
    for key, path in copies:
        t = as_numpy(state[key]).copy()
        out[key] = (t, _target_numpy(targets[path]).reshape(t.shape))
    return out


def _compare_training(spec: TrainingSpec, torch_losses, ms_losses, initial: dict, final: dict, copies) -> dict:
    """Losses step by step, final weights, frozen weights; JSON-ready."""
    import numpy as np

    from transpile.parity.compare import diff_leaves

    t_loss, m_loss = np.array(torch_losses), np.array(ms_losses)
    loss_diff = diff_leaves(t_loss, m_loss, name="loss per step", rtol=spec.loss_rtol)
    off = ~(np.abs(t_loss - m_loss) <= spec.loss_rtol * np.abs(t_loss))
    weights = [diff_leaves(t, m, name=key, atol=spec.weight_atol, rtol=spec.weight_rtol)
               for key, (t, m) in final.items()]
    frozen, frozen_keys = [], set()
    for prefix in spec.frozen:
        keys = [key for key, _ in copies if key.startswith(prefix)]
        if not keys:
            raise ParityFailure(f"frozen = [{prefix!r}] matches no weight of the model")
        for key in keys:
            frozen_keys.add(key)
            frozen.append({"name": key, "torch_unchanged": bool(np.array_equal(initial[key][0], final[key][0])),
                           "ms_unchanged": bool(np.array_equal(initial[key][1], final[key][1]))})
    unmoved = [key for key in final if key not in frozen_keys and np.array_equal(initial[key][0], final[key][0])]
    return {"loss_diff": loss_diff.to_dict(), "first_loss_mismatch": int(np.argmax(off)) if off.any() else None,
            "weights": [w.to_dict() for w in weights], "frozen": frozen, "unmoved": unmoved}


TASKS = {"parity": run_parity, "weights": run_weights, "training": run_training}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m transpile.parity._child REQUEST.json\n")
        return 2
    warnings.filterwarnings("ignore")
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    start = time.perf_counter()
    result = TASKS[request.get("task", "parity")](request, Steps(request.get("progress")))
    result["seconds"] = round(time.perf_counter() - start, 3)
    Path(request["result"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
