"""Parity: run the original and the converted model on the same weights and inputs.

    from transpile.parity import make_spec, run_parity
    spec = make_spec(source="model.py", entry="ResNet18(num_classes=10)", inputs=["float32[2,3,32,32]"])
    r = run_parity(spec, converted="out/model.py")
    r.verdict, r.results["PYNATIVE"].outputs, r.localisation

    from transpile.parity import load_specs, run_samples       # the samples and their specs
    for r in run_samples(load_specs("samples")):
        r.sample, r.converted, r.max_abs_diff_pynative, r.max_abs_diff_graph, r.verdict

    from transpile.parity import convert_weights                # a torch checkpoint -> .ckpt
    convert_weights("model.pt", "model.ckpt", source="model.py", model="Net()")

Every run of user code happens in a child process (``_child``) with a time limit;
this package itself never imports torch or MindSpore in the caller's process and
never prints.
"""
import importlib

# Each public name and the module that defines it, imported on first use: the command line
# imports this package for its options, and numpy (the comparisons) is slow to import.
_HOMES = {
    "ComparisonError": "compare", "OutputDiff": "compare",
    "EmitError": "emit", "emit_test": "emit", "render_test": "emit",
    "Divergence": "localise", "Localisation": "localise", "SourceLine": "localise",
    "MODES": "modes",
    "ModeResult": "runner", "SampleResult": "runner", "WeightsResult": "runner", "convert_weights": "runner",
    "load_specs": "runner", "run_mode": "runner", "run_parity": "runner", "run_sample": "runner",
    "run_samples": "runner",
    "InputSpec": "spec", "MaskRule": "spec", "ParitySpec": "spec", "SpecError": "spec", "find_specs": "spec",
    "load_spec": "spec", "make_spec": "spec", "parse_input": "spec",
    "Transfer": "weights",
}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


__all__ = [
    "MODES", "ModeResult", "SampleResult", "WeightsResult", "convert_weights", "load_specs", "run_mode",
    "run_parity", "run_sample", "run_samples",
    "InputSpec", "MaskRule", "ParitySpec", "SpecError", "find_specs", "load_spec", "make_spec", "parse_input",
    "ComparisonError", "OutputDiff", "Divergence", "Localisation", "SourceLine", "Transfer",
    "EmitError", "emit_test", "render_test",
]
