"""The MindSpore side of the real-model benchmark: one (model, mode) per process.

    python ms_side.py REQUEST.json

REQUEST names the model spec, the converted source root (put first on sys.path),
the torch side's .npz/.json, the mode and where to write the JSON result (and
``without_torch``: the process finds no torch, ``no_torch.py``). Steps:
import the converted module, build the model with the same expression, copy the
torch weights by the weight map (a tensor whose element count matches is reshaped:
Conv1d's ``(out, in, k)`` is ``(out, in, 1, k)``), run in eval mode, compare
(``verdict.judge``: the rule is documented there); a model with ``generate`` on the torch
side runs its own ``generate`` and its tokens are compared with torch's.
Every torch tensor must find its parameter (or buffer) and every MindSpore
parameter must receive a tensor, or the run is an error.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from types import SimpleNamespace

from no_torch import block_torch  # this file's folder (benchmarks/models), first on sys.path when run
from verdict import judge

os.environ.setdefault("GLOG_v", "3")


class Failure(Exception):
    pass


def _flatten(value) -> list:
    import mindspore
    import numpy as np

    if value is None:  # as on the torch side: an optional output not computed
        return []
    if isinstance(value, mindspore.Tensor):
        return [value.asnumpy()]
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _flatten(v)]
    if isinstance(value, (bool, int, float)):  # a number beside the tensors (a grid size): not compared
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # an output bundle: its fields, in order
        value = tuple(getattr(value, f.name) for f in dataclasses.fields(value))
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _flatten(v)]
    raise Failure(f"the converted model returned a {type(value).__name__}, not tensors")


def copy_weights(cell, mapping: dict, arrays, ms_only: dict | None = None) -> None:
    import mindspore
    import numpy as np

    from transpile.parity.weights import ms_parameters

    params = ms_parameters(cell)
    buffers = dict(cell.named_buffers()) if hasattr(cell, "named_buffers") else {}
    missing, assigned = [], set()
    for key, name in mapping.items():
        value = arrays[f"state/{key}"]
        target = params.get(name)
        if target is None:
            target = buffers.get(name)
        if target is None:
            missing.append(f"{key} -> {name}")
            continue
        if tuple(value.shape) != tuple(target.shape):
            if value.size != int(np.prod(target.shape)):
                missing.append(f"{key} {tuple(value.shape)} -> {name} {tuple(target.shape)}")
                continue
            value = value.reshape(target.shape)
        value = value.astype(mindspore.dtype_to_nptype(target.dtype))
        if isinstance(target, mindspore.Parameter):
            target.set_data(mindspore.Tensor(value))
        else:
            target.assign_value(mindspore.Tensor(value))
        assigned.add(name)
    if missing:
        raise Failure(f"{len(missing)} torch tensors found no MindSpore parameter of that name and size: "
                      + ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else ""))
    params_by_path = dict(cell.parameters_and_names())
    unset = []
    for path, param in params_by_path.items():
        if path in assigned:
            continue
        expected = (ms_only or {}).get(path)
        if expected is not None and bool(np.all(param.asnumpy() == expected)):
            continue  # by design (InstanceNorm without affine: GroupNorm's fixed gamma/beta)
        unset.append(path)
    if unset:
        raise Failure(f"{len(unset)} MindSpore parameters received no torch tensor: "
                      + ", ".join(unset[:6]) + (" ..." if len(unset) > 6 else ""))


def generate(cell, kwargs: dict, ids, expected) -> dict:
    """The converted model's own ``generate`` on the torch side's first input, with its
    arguments (greedy, a few tokens): its tokens against torch's, token by token. The
    first (row, position) where they differ, or the error (with where it broke)."""
    import mindspore
    import numpy as np

    try:
        tokens = cell.generate(mindspore.Tensor(ids), **kwargs)
        got = np.asarray(tokens.asnumpy() if isinstance(tokens, mindspore.Tensor) else tokens)
    except Exception as exc:
        return {"match": False, "error": f"generate: {type(exc).__name__}: {' '.join(str(exc).split())[:400]}",
                "detail": traceback.format_exc(limit=-12)}
    out = {"match": got.shape == expected.shape and bool((got == expected).all()), "error": None,
           "tokens": got.tolist(), "expected": expected.tolist(), "prompt_length": int(np.shape(ids)[-1])}
    if not out["match"] and got.ndim == expected.ndim == 2 and got.shape[0] == expected.shape[0]:
        width = min(got.shape[1], expected.shape[1])
        differ = np.argwhere(got[:, :width] != expected[:, :width])
        first = differ[np.lexsort((differ[:, 0], differ[:, 1]))][0] if len(differ) else (0, width)
        out["first_difference"] = [int(first[0]), int(first[1])]  # (row, position); position = width: lengths differ
    return out


def cell_classes(cell, converted_root: str) -> list[list[str]]:
    """``[file, qualified name]`` of every class in the MRO of every cell the model holds
    that the converted code defines (file relative to ``converted_root``): the classes whose
    methods GRAPH mode compiles, for the lint's verdict (``lint_agreement.py``)."""
    root = Path(converted_root).resolve()
    found = set()
    for _, sub in cell.cells_and_names():
        for cls in type(sub).__mro__:
            path = getattr(sys.modules.get(cls.__module__), "__file__", None)
            if path and root in Path(path).resolve().parents:
                found.add((Path(path).resolve().relative_to(root).as_posix(), cls.__qualname__))
    return [list(item) for item in sorted(found)]


def run(request: dict) -> dict:
    import numpy as np

    meta = json.loads(Path(request["torch_json"]).read_text(encoding="utf-8"))
    mode = request["mode"]
    out: dict = {"built": False, "error": None}
    stage = "import mindspore"
    try:
        if request.get("without_torch"):
            block_torch()
        import mindspore

        mindspore.set_device("CPU")
        mindspore.set_context(mode=mindspore.GRAPH_MODE if mode == "GRAPH" else mindspore.PYNATIVE_MODE)
        mindspore.set_seed(0)
        sys.path.insert(0, request["converted_root"])
        if request.get("deps"):
            sys.path.append(request["deps"])
        stage = "import converted module"
        module = importlib.import_module(meta["module"])
        stage = "build"
        cell = eval(meta["build"], dict(vars(module)))
        if not isinstance(cell, mindspore.nn.Cell):
            raise Failure(f"the build expression gave a {type(cell).__name__}, not an nn.Cell")
        # eval mode before the weights, as on the torch side, whose weights are read after
        # eval(): a train(mode) override that changes weights (loralib's merge) runs once
        cell.set_train(False)
        stage = "copy weights"
        arrays = np.load(request["torch_npz"])
        copy_weights(cell, meta["mapping"], arrays, meta.get("ms_only"))
        out["built"] = True
        out["cell_classes"] = cell_classes(cell, request["converted_root"])
        inputs = [arrays[f"input_{i}"] for i in range(meta["n_inputs"])]
        stage = f"run ({mode})"
        result = _flatten(cell(*[mindspore.Tensor(a) for a in inputs]))  # int64 token ids stay int64
        stage = "compare"
        expected = [arrays[f"output_{i}"] for i in range(len(meta["outputs"]))]
        verdict = judge(result, expected, [o.get("float32_error") for o in meta["outputs"]],
                        request["rel"], request["factor"])
        out.update(verdict)
        if mode == "GRAPH" and not verdict["match"]:  # which submodule differs alone in GRAPH mode (issue 32)
            stage = "each submodule alone in GRAPH mode"
            from transpile.parity._child import graph_divergence_search

            tolerance = min(verdict["tolerances"], default=1e-4)
            out["graph_divergence"] = graph_divergence_search(SimpleNamespace(tolerance=tolerance, rtol=0.0), cell, inputs)
        if (meta.get("generate") or {}).get("error") is None and "generate_tokens" in arrays:
            out["generate"] = generate(cell, meta["generate"]["kwargs"], inputs[0], arrays["generate_tokens"])
    except Exception as exc:
        out.update(error=f"{stage}: {type(exc).__name__}: {' '.join(str(exc).split())[:400]}",
                   detail=traceback.format_exc(limit=-12))
    return out


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    start = time.perf_counter()
    result = run(request)
    result["seconds"] = round(time.perf_counter() - start, 2)
    Path(request["result"]).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
