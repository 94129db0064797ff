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
from .compare import ComparisonError, OutputDiff
from .emit import EmitError, emit_test, render_test
from .localise import Divergence, Localisation, SourceLine
from .runner import (
    MODES, ModeResult, SampleResult, WeightsResult, convert_weights, load_specs, run_mode, run_parity, run_sample,
    run_samples,
)
from .spec import InputSpec, MaskRule, ParitySpec, SpecError, find_specs, load_spec, make_spec, parse_input
from .weights import Transfer

__all__ = [
    "MODES", "ModeResult", "SampleResult", "WeightsResult", "convert_weights", "load_specs", "run_mode",
    "run_parity", "run_sample", "run_samples",
    "InputSpec", "MaskRule", "ParitySpec", "SpecError", "find_specs", "load_spec", "make_spec", "parse_input",
    "ComparisonError", "OutputDiff", "Divergence", "Localisation", "SourceLine", "Transfer",
    "EmitError", "emit_test", "render_test",
]
