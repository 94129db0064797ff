"""The torch side of the real-model benchmark; runs in the torch virtualenv.

    python torch_side.py MODELS_TOML OUT_DIR [NAME ...]

For each model: build it from the installed package (random init, seed 0), make its
constant tensors random (see ``_refill_constants``), set BatchNorm running
statistics from one batch of random data (``_calibrate``), switch to eval mode, run
the fixed inputs (and once more in float64, for the rounding error of float32) and write ``OUT_DIR/<name>.npz`` (``input_<i>``, ``output_<i>``,
``state/<torch key>``) and ``OUT_DIR/<name>.json`` (the weight map computed with
``transpile.parity.weights``, the dropped keys, the output structure, or the error).
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import sys
import time
import tomllib
import traceback
import warnings
from pathlib import Path

import numpy as np
import torch

SEED = 0


def input_shape(spec) -> list[int]:
    """An input is a shape (float32) or a table {shape=, dtype="int64", high=N} (token ids)."""
    return list(spec["shape"] if isinstance(spec, dict) else spec)


def make_inputs(specs, seed: int = SEED, batch: int | None = None) -> list[np.ndarray]:
    """Float inputs uniform in [-1, 1); integer inputs (token ids, lengths) uniform in [low, high)."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        shape = input_shape(spec)
        if batch is not None:
            shape = [batch, *shape[1:]]
        if isinstance(spec, dict) and spec.get("dtype", "float32").startswith("int"):
            out.append(rng.integers(spec.get("low", 0), spec["high"], size=tuple(shape)).astype(spec["dtype"]))
        else:
            out.append(rng.uniform(-1.0, 1.0, size=tuple(shape)).astype(np.float32))
    return out


def _double(a: np.ndarray):
    t = torch.from_numpy(a)
    return t.double() if t.is_floating_point() else t


def _refill_constants(model, generator) -> None:
    """Tensors torch initialises to one constant (norm weights and biases, layer scales,
    class tokens, running statistics) get random values, so a tensor copied to the
    wrong place, or a scale or shift the converted code ignores, changes the output.
    ones -> U(0.5, 1.5); zeros -> U(-0.2, 0.2); c -> c * U(0.5, 1.5), raised to at least
    0.1 in size (ConvNeXt's 1e-6 layer scale would hide its whole branch); one-value
    parameters too (denoising-diffusion's Karras U-Nets start every gain at 0, which
    makes the whole output 0 and any conversion match). Tensors left
    uninitialised (parameters with NaN, or above 1e6 in size) -> U(-0.5, 0.5)."""
    from transpile.parity.weights import torch_state

    with torch.no_grad():
        for tensor in torch_state(model, keep_vars=True).values():
            if not tensor.is_floating_point() or tensor.numel() == 0:
                continue
            if tensor.numel() == 1 and not isinstance(tensor, torch.nn.Parameter):
                continue  # a one-value buffer is a setting (a step count, a temperature), kept
            if isinstance(tensor, torch.nn.Parameter) and not float(tensor.abs().max()) <= 1e6:
                # left uninitialised (torch.empty; a checkpoint fills it: whisper's decoder
                # positional embedding): memory garbage up to 1e25 or NaN -> U(-0.5, 0.5)
                tensor.copy_(torch.rand(tensor.shape, generator=generator, dtype=tensor.dtype) - 0.5)
                continue
            first = float(tensor.flatten()[0])
            if not bool((tensor == first).all()):
                continue
            u = torch.rand(tensor.shape, generator=generator, dtype=tensor.dtype)
            if first == 0.0:
                tensor.copy_(u * 0.4 - 0.2)
            else:
                scale = first if abs(first) >= 0.1 else 0.1 * (1.0 if first > 0 else -1.0)
                tensor.copy_((u + 0.5) * scale)


_NORMS = (torch.nn.modules.batchnorm._BatchNorm,)


def _calibrate(model, shapes, seed: int) -> bool:
    """BatchNorm running statistics from one train-mode pass over a batch of 4 random
    inputs (cumulative average, momentum=None), so that eval-mode activations keep a
    sane scale through a deep net instead of growing or vanishing layer by layer.
    Each variance is then raised by a tenth of its layer's mean variance: channels that
    are nearly constant on random data (dead ReLUs) would otherwise be divided by
    sqrt(eps) and make the net so ill-conditioned that torch's own float32 result is
    off its float64 result by 1e-1 (PolyNet)."""
    norms = [m for m in model.modules() if isinstance(m, _NORMS) and m.track_running_stats]
    if not norms:
        return False
    saved = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    batch = [torch.from_numpy(a) for a in make_inputs(shapes, seed + 1, batch=4)]
    model.train()
    with torch.no_grad():
        model(*batch)
    for m, momentum in zip(norms, saved):
        m.momentum = momentum
        if m.running_var is not None:  # a channel with next to no variance would amplify rounding
            m.running_var.add_(0.1 * m.running_var.mean())  # errors a hundredfold: floor it
    return True


def _flatten(value, path: str = "") -> list[tuple[str, np.ndarray]]:
    if value is None:  # an optional output not computed (wav2vec2's lengths without lengths given)
        return []
    if isinstance(value, torch.Tensor):
        return [(path or "out", value.detach().cpu().numpy())]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _flatten(v, f"{path}[{k!r}]")]
    if isinstance(value, (bool, int, float)):  # a number beside the tensors (a grid size): not compared
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # an output bundle: its fields, in order
        value = tuple(getattr(value, f.name) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return [item for i, v in enumerate(value) for item in _flatten(v, f"{path}[{i}]")]
    raise TypeError(f"the model returned a {type(value).__name__}, not tensors")


def _float64_errors(model, inputs, outputs) -> list[float | None]:
    """How far torch's own float32 result is from the same model run in float64: the
    rounding error a float32 run cannot avoid, the yardstick of the tolerance."""
    import copy

    try:
        double = copy.deepcopy(model).double()
        with torch.no_grad():
            ref = _flatten(double(*[_double(a) for a in inputs]))
    except Exception:  # a model that does not run in float64: no yardstick
        return [None] * len(outputs)
    if len(ref) != len(outputs):
        return [None] * len(outputs)
    return [float(np.abs(a.astype(np.float64) - r).max()) if a.size and a.dtype.kind == "f" else 0.0
            for (_, a), (_, r) in zip(outputs, ref)]


def _ms_only(model) -> dict[str, float]:
    """MindSpore parameters with no torch tensor, by the tables' design, and the value
    they must keep. A normalisation layer built without its affine parameters (whatever
    its class: ``affine=False`` on BatchNorm*d, InstanceNorm*d, GroupNorm or a package's
    own norm, ``elementwise_affine=False`` on LayerNorm) holds no weight or bias in torch,
    while its MindSpore counterpart keeps a scale and a shift fixed at 1 and 0 (BatchNorm's
    gamma and beta, untrained; InstanceNorm becomes GroupNorm(C, C)). They are named as the
    tables rename the layer's weight and bias (``gamma``, BatchNorm3d's ``bn2d.gamma``)."""
    from transpile.parity.weights import _layer_renames, torch_modules

    out = {}
    for name, m in torch_modules(model).items():
        if getattr(m, "affine", None) is not False and getattr(m, "elementwise_affine", None) is not False:
            continue
        renames = _layer_renames(m)
        prefix = f"{name}." if name else ""
        out.update({prefix + renames.get("weight", "weight"): 1.0, prefix + renames.get("bias", "bias"): 0.0})
    return out


def _generate(model, spec: dict, inputs: list[np.ndarray]) -> tuple[dict, np.ndarray | None]:
    """``model.generate(first input, **spec["generate"])`` (greedy decoding of a few tokens,
    as the model's own generation loop runs it): the tokens, and what was asked, or the
    error; the forward comparison stands whatever happens here."""
    asked = dict(spec["generate"])
    try:
        with torch.no_grad():
            tokens = model.generate(torch.from_numpy(inputs[0]), **asked)
        return {"kwargs": asked, "error": None}, tokens.detach().cpu().numpy()
    except Exception as exc:
        return {"kwargs": asked, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}, None


def run_model(spec: dict, out_dir: Path) -> dict:
    from transpile.parity.weights import aliases, torch_state, weight_map

    meta: dict = {"name": spec["name"], "module": spec["module"], "build": spec["build"],
                  "family": spec["family"]}
    start = time.perf_counter()
    stage = "import"
    try:
        torch.manual_seed(SEED)
        module = importlib.import_module(spec["module"])
        stage = "build"
        model = eval(spec["build"], dict(vars(module)))
        meta["torch_source"] = str(Path(module.__file__).resolve())
        stage = "randomise constants"
        _refill_constants(model, torch.Generator().manual_seed(SEED))
        stage = "calibrate BatchNorm"
        meta["calibrated"] = _calibrate(model, spec["inputs"], SEED)
        model.eval()
        stage = "weight map"
        wm = weight_map(model)
        # a module shared by two parents (CoaT's shared conv position encodings) is one
        # tensor under two state_dict keys; MindSpore holds it once, under the first path
        tied = aliases(model)
        for key in tied:
            wm.mapping.pop(key, None)
        meta["tied"] = tied
        # copies: a CPU tensor's numpy() shares its memory, and a forward that updates a buffer
        # in eval mode (AlphaGenome's BatchRMSNorm running_var) would change the saved state
        state = {k: v.detach().cpu().numpy().copy() for k, v in torch_state(model).items()}
        stage = "run"
        inputs = make_inputs(spec["inputs"])
        with torch.no_grad():
            outputs = _flatten(model(*[torch.from_numpy(a) for a in inputs]))
        stage = "float64 reference"
        errors = _float64_errors(model, inputs, outputs)
        arrays = {f"input_{i}": a for i, a in enumerate(inputs)}
        if spec.get("generate"):
            stage = "generate"
            meta["generate"], tokens = _generate(model, spec, inputs)
            if tokens is not None:
                arrays["generate_tokens"] = tokens
        stage = "save"
        arrays.update({f"output_{i}": a for i, (_, a) in enumerate(outputs)})
        arrays.update({f"state/{k}": v for k, v in state.items() if k in wm.mapping})
        np.savez(out_dir / f"{spec['name']}.npz", **arrays)
        meta.update(
            error=None,
            n_inputs=len(inputs),
            outputs=[{"path": p, "shape": list(a.shape), "max_abs": float(np.abs(a).max()) if a.size else 0.0,
                      "float32_error": err}
                     for (p, a), err in zip(outputs, errors)],
            mapping=wm.mapping,
            dropped=wm.dropped,
            ms_only=_ms_only(model),
            parameters=sum(int(v.size) for k, v in state.items() if k in wm.mapping),
        )
    except Exception as exc:
        meta.update(error=f"{stage}: {type(exc).__name__}: {exc}".splitlines()[0],
                    detail=traceback.format_exc(limit=-8))
    meta["seconds"] = round(time.perf_counter() - start, 2)
    return meta


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    config = tomllib.loads(Path(argv[0]).read_text(encoding="utf-8"))
    out_dir = Path(argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = set(argv[2:])
    for spec in config["models"]:
        if wanted and spec["name"] not in wanted:
            continue
        meta = run_model(spec, out_dir)
        (out_dir / f"{spec['name']}.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        status = "ok" if meta["error"] is None else meta["error"]
        print(f"torch  {spec['name']:<32} {meta['seconds']:7.1f}s  {status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
