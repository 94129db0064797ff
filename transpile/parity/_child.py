"""One parity run, (sample, mode), in its own process: ``python -m transpile.parity._child REQUEST``.

REQUEST is a JSON file naming the spec, the torch source, the converted source, the
mode and where to write the JSON result. The user's code may print freely: the
result never goes through stdout. Exit status 0 means a result was written (its
verdict may still be an error).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")  # MindSpore: errors only
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


class ParityFailure(Exception):
    """A step failed for a reason worth one line in the table."""


def import_path(path: Path, name: str):
    """Import a source file as a module under ``name``, registered in sys.modules
    (GRAPH mode reads ``construct``'s source through its module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ParityFailure(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _build(spec, module, label: str):
    namespace = dict(vars(module))
    try:
        if spec.kind == "function":
            obj = namespace.get(spec.entry)
            if not callable(obj):
                raise ParityFailure(f"{label} source has no function {spec.entry!r}")
            return obj
        return eval(spec.entry, namespace)  # the spec's constructor expression
    except ParityFailure:
        raise
    except Exception as exc:
        raise ParityFailure(f"building {label} entry {spec.entry!r}: {type(exc).__name__}: {exc}") from exc


def _torch_outputs(value) -> list:
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        return [value.detach().cpu().numpy()]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _torch_outputs(v)]
    if isinstance(value, (int, float, bool)):
        return [np.asarray(value)]
    raise ParityFailure(f"torch returned a {type(value).__name__}, not tensors")


def _ms_outputs(value) -> list:
    import mindspore
    import numpy as np

    if isinstance(value, mindspore.Tensor):
        return [value.asnumpy()]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _ms_outputs(v)]
    if isinstance(value, (int, float, bool)):
        return [np.asarray(value)]
    raise ParityFailure(f"MindSpore returned a {type(value).__name__}, not tensors")


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


def run(request: dict) -> dict:
    from transpile.parity.compare import ComparisonError, compare, make_inputs
    from transpile.parity.spec import load_spec

    spec = load_spec(request["spec"])
    mode = request["mode"]
    stage = "import torch source"
    notes: list[str] = []
    try:
        import numpy as np
        import torch

        torch.manual_seed(spec.seed)
        torch_mod = import_path(Path(request["torch_source"]), f"_parity_torch_{spec.name}")
        stage = "build torch entry"
        torch_obj = _build(spec, torch_mod, "torch")

        import mindspore

        mindspore.set_device("CPU")
        mindspore.set_context(mode=mindspore.GRAPH_MODE if mode == "GRAPH" else mindspore.PYNATIVE_MODE)
        mindspore.set_seed(spec.seed)
        stage = "import converted source"
        ms_mod = import_path(Path(request["converted"]), f"_parity_ms_{spec.name}")
        stage = "build MindSpore entry"
        ms_obj = _build(spec, ms_mod, "MindSpore")

        if spec.kind == "module":
            if not isinstance(torch_obj, torch.nn.Module):
                raise ParityFailure(f"torch entry gave a {type(torch_obj).__name__}, not an nn.Module")
            if not isinstance(ms_obj, mindspore.nn.Cell):
                raise ParityFailure(f"converted entry gave a {type(ms_obj).__name__}, not an nn.Cell")
            stage = "copy weights"
            _refill_constants(torch_obj, spec.seed)
            notes = _copy_all_weights(torch_obj, ms_obj)
            torch_obj.eval()
            ms_obj.set_train(False)
            ms_call = ms_obj
        else:
            ms_call = _function_runner(ms_obj, mode == "GRAPH")

        inputs = make_inputs(spec)
        stage = "run torch"
        with torch.no_grad():
            torch_out = _torch_outputs(torch_obj(*[torch.from_numpy(np.array(a)) for a in inputs]))
        stage = f"run MindSpore ({mode})"
        ms_out = _ms_outputs(ms_call(*[mindspore.Tensor(a) for a in inputs]))
        stage = "compare"
        diffs = compare(spec, inputs, torch_out, ms_out)
    except (ParityFailure, ComparisonError) as exc:
        return {"error": f"{stage}: {exc}", "diffs": [], "notes": notes}
    except Exception as exc:  # user code, frameworks: one line for the table, the trace for the detail
        return {"error": f"{stage}: {type(exc).__name__}: {_first_line(exc)}",
                "detail": traceback.format_exc(limit=8), "diffs": [], "notes": notes}
    return {
        "error": None,
        "notes": notes,
        "diffs": [{"index": d.index, "torch_shape": list(d.torch_shape), "ms_shape": list(d.ms_shape),
                   "max_abs_diff": d.max_abs_diff} for d in diffs],
    }


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def _refill_constants(torch_obj, seed: int) -> None:
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


def _copy_all_weights(torch_obj, ms_obj) -> list[str]:
    """Copy torch -> MindSpore; every tensor on each side must find its counterpart.
    Returns notes on what copied but deserves a look."""
    from transpile.parity.weights import copy_weights, weight_map

    missing = copy_weights(torch_obj, ms_obj)
    if missing:
        raise ParityFailure(f"torch weights with no MindSpore parameter of that name and size: {', '.join(missing)}")
    assigned = set(weight_map(torch_obj).mapping.values())
    paths = dict(ms_obj.parameters_and_names())
    unset = [path for path in paths if path not in assigned]
    if unset:
        raise ParityFailure(f"MindSpore parameters no torch weight was copied into: {', '.join(unset)}")
    misnamed = [f"{p.name} (at {path})" for path, p in paths.items() if p.name != path]
    if misnamed:
        return [
            "MindSpore parameter names differ from their paths, so a checkpoint saved by path "
            f"will not load into them with load_param_into_net: {', '.join(misnamed)}"
        ]
    return []


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m transpile.parity._child REQUEST.json\n")
        return 2
    warnings.filterwarnings("ignore")
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    start = time.perf_counter()
    result = run(request)
    result["seconds"] = round(time.perf_counter() - start, 3)
    Path(request["result"]).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
