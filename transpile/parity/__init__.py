"""Parity: run the original and the converted model on the same weights and inputs.

    from transpile.parity import load_specs, run_samples
    for r in run_samples(load_specs("samples")):
        r.sample, r.converted, r.max_abs_diff_pynative, r.max_abs_diff_graph, r.verdict

Each (sample, mode) runs in a child process (``_child``); this package itself never
imports torch or MindSpore and never prints.
"""
from .runner import MODES, ModeResult, SampleResult, load_specs, run_mode, run_sample, run_samples
from .spec import InputSpec, MaskRule, ParitySpec, SpecError, find_specs, load_spec

__all__ = [
    "MODES", "ModeResult", "SampleResult", "load_specs", "run_mode", "run_sample", "run_samples",
    "InputSpec", "MaskRule", "ParitySpec", "SpecError", "find_specs", "load_spec",
]
