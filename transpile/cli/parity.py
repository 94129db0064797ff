"""`transpile parity` and `transpile weights`: argument parsing and printing only."""
from __future__ import annotations

import json
import os
import shlex
import sys

from ..parity.modes import DEFAULT_MEMORY_LIMIT_GB, DEFAULT_TIMEOUT, MEMORY_LIMIT_VARIABLE, MODES, memory_limit
from .exit_codes import EXIT_INTERRUPTED, EXIT_MISMATCH, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE

PARITY_EPILOG = f"""\
input specs (--input, repeat it for each positional argument of forward):
  float32[2,3,32,32]            uniform in [-1, 1)
  float32[4,8]:-5..5            uniform in [-5, 5)
  int64[4]:0..10                integers 0 <= v < 10
  bool[4]                       random booleans
  expr:np.arange(6).reshape(2,3)  any Python expression over np and rng (seeded)

exit status: {EXIT_OK} every output matches in every mode; {EXIT_MISMATCH} a mismatch or an error; {EXIT_USAGE} bad usage;
{EXIT_INTERRUPTED} interrupted (Ctrl-C), {EXIT_TERMINATED} terminated (SIGTERM): the child processes are killed first.
"""


def _set_memory_limit(args) -> str | None:
    """--memory-limit, for every child this run starts (through the environment they and
    the runner read); what is wrong with it, if anything."""
    if args.memory_limit is not None:
        if not args.memory_limit >= 0:
            return "--memory-limit must be a number of GiB >= 0 (0: no limit)"
        os.environ[MEMORY_LIMIT_VARIABLE] = repr(args.memory_limit)
    try:
        memory_limit()
    except ValueError as exc:
        return str(exc)
    return None


def _common(p, timeout_help: str) -> None:
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S", help=timeout_help)
    p.add_argument("--memory-limit", type=float, default=None, metavar="GB",
                   help=f"address space each child process may take, in GiB (default: ${MEMORY_LIMIT_VARIABLE}, "
                        f"else {DEFAULT_MEMORY_LIMIT_GB:g}; 0: no limit); past it the child fails with MemoryError")
    p.add_argument("--json", action="store_true", help="print JSON (for tools) instead of text")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks, timings and every mapping")


def add_parity_parser(sub) -> None:
    p = sub.add_parser(
        "parity", help="run the original and the converted model on the same weights and inputs",
        description="""\
Build the torch model and the converted MindSpore model, copy every weight
(with the tables' renames), run both in eval mode on the same inputs in
PYNATIVE and GRAPH mode and compare every output: allclose, share within the
tolerance, cosine similarity, max abs and max rel diff. When they differ, name
the first submodule that diverges, with its lines in both files.

  transpile parity model.py --converted out/model.py --model 'ResNet18(num_classes=10)' \\
      --input float32[2,3,32,32]
  transpile parity --config parity.toml [--json] [--emit-test out/test_model_parity.py]
  transpile parity --samples samples --converted out      # every <sample>.parity.toml
  transpile parity --training [train_mnist_cnn ...]         # every <sample>.training.toml

User code runs in child processes (one per model and mode) with a time limit.""",
        epilog=PARITY_EPILOG, formatter_class=_formatter(),
    )
    p.add_argument("targets", nargs="*", metavar="ORIGINAL.py | SPEC",
                   help="the original torch file; or sample spec files / sample names to run "
                        "(default: every spec under --samples)")
    p.add_argument("--converted", metavar="PATH",
                   help="the converted file (or a directory holding it; for samples: the directory "
                        "`transpile convert SAMPLES -o DIR` wrote); default: convert on the fly")
    p.add_argument("--root", metavar="DIR",
                   help="the package ORIGINAL.py belongs to: it is imported as a module of DIR (DIR/models/net.py "
                        "as models.net), with DIR first on the import path, so that `from models import ...` and "
                        "relative imports work; the converted side the same from the tree --converted names "
                        "(the output of `transpile convert DIR -o OUT`)")
    p.add_argument("--model", metavar="EXPR", help="constructor expression, evaluated in both files: 'ResNet18(num_classes=10)'")
    p.add_argument("--function", metavar="NAME", help="compare a function of both files instead of a model")
    p.add_argument("--input", action="append", metavar="SPEC", dest="inputs",
                   help="one positional input (repeat for several); see below")
    p.add_argument("--config", metavar="TOML", help="a parity.toml with the same fields (flags win)")
    p.add_argument("--tolerance", type=float, metavar="ATOL", help="absolute tolerance (default 1e-5)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default 0)")
    p.add_argument("--seed", type=int, help="seed of the random inputs (default 0)")
    p.add_argument("--mode", choices=("both", "pynative", "graph"), default="both", help="MindSpore mode(s) to run")
    p.add_argument("--emit-test", metavar="PATH",
                   help="also write a standalone pytest file for the converted model (needs --converted)")
    p.add_argument("--no-localise", action="store_true", help="on a mismatch, do not look for the first diverging submodule")
    p.add_argument("--training", action="store_true",
                   help="training parity: train each training sample (SPEC: <name>.training.toml or a name; default: "
                        "every one under --samples) and its conversion N steps on the same weights and batches, "
                        "compare the loss after every step and the final weights, run the converted script")
    p.add_argument("--samples", default="samples", metavar="DIR", help="directory of samples and specs (default: samples)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="child processes at once (default: 2)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="report format (--json is the same as --format json)")
    _common(p, f"seconds per child process: one per model and mode (default {DEFAULT_TIMEOUT:g})")
    p.set_defaults(func=cmd_parity)


def add_weights_parser(sub) -> None:
    p = sub.add_parser(
        "weights", help="convert a torch checkpoint into a MindSpore .ckpt for the converted model",
        description="""\
Read a torch checkpoint (.pt, .pth, .bin: torch.load with weights_only;
.safetensors: with the safetensors package), map its tensors onto the converted
model's parameters with the tables' renames (the mapping parity uses) and write
a MindSpore .ckpt for mindspore.load_checkpoint + load_param_into_net. Anything
left unmapped is listed, and no partial checkpoint is written unless
--allow-partial. The models are built in a child process with a time limit.

  transpile weights model.pt -o model.ckpt --source model.py --model 'Net()'""",
        formatter_class=_formatter(),
        epilog=f"exit status: {EXIT_OK} written; {EXIT_MISMATCH} refused (partial) or an error; {EXIT_USAGE} bad usage.",
    )
    p.add_argument("checkpoint", metavar="IN", help="the torch checkpoint: .pt, .pth, .bin or .safetensors")
    p.add_argument("-o", "--output", required=True, metavar="OUT.ckpt", help="the MindSpore checkpoint to write")
    p.add_argument("--source", required=True, metavar="MODEL.py", help="the original torch file that defines the model")
    p.add_argument("--model", required=True, metavar="EXPR", help="constructor expression, evaluated in both files")
    p.add_argument("--converted", metavar="PATH", help="the converted file (default: convert --source on the fly)")
    p.add_argument("--allow-partial", action="store_true", help="write the checkpoint even if some tensors have no home")
    _common(p, f"seconds for the child process (default {DEFAULT_TIMEOUT:g})")
    p.set_defaults(func=cmd_weights)


def _formatter():
    import argparse

    return argparse.RawDescriptionHelpFormatter


def _usage(message: str) -> int:
    print(f"transpile parity: {message}", file=sys.stderr)
    return EXIT_USAGE


def _general(args) -> bool:
    """One model (ORIGINAL.py, --config or model flags) rather than the samples."""
    return bool(args.config or args.model or args.function or args.inputs
                or any(t.endswith(".py") for t in args.targets))


def cmd_parity(args) -> int:
    if args.jobs < 1 or args.timeout <= 0:
        return _usage("--jobs and --timeout must be positive")
    if (problem := _set_memory_limit(args)) is not None:
        return _usage(problem)
    if args.json:
        args.format = "json"
    modes = MODES if args.mode == "both" else (args.mode.upper(),)
    if args.root is not None and (args.training or not _general(args)):
        return _usage("--root takes one model (ORIGINAL.py in DIR, --converted OUT, --model EXPR), not the samples")
    if args.training:
        return _parity_training(args)
    if _general(args):
        return _parity_one(args, modes)
    if args.emit_test:
        return _usage("--emit-test takes one model: give ORIGINAL.py --converted FILE --model EXPR --input SPEC")
    return _parity_samples(args, modes)


def _parity_samples(args, modes) -> int:
    from pathlib import Path

    from ..parity.report import format_samples, result_dict
    from ..parity.runner import load_specs, run_samples
    from ..parity.spec import SpecError

    try:
        if args.targets:
            specs = load_specs([t if t.endswith(".parity.toml") else Path(args.samples) / f"{t}.parity.toml"
                                for t in args.targets])
        else:
            specs = load_specs(args.samples)
    except SpecError as exc:
        return _usage(str(exc))
    if args.converted is not None and not os.path.isdir(args.converted):
        return _usage(f"--converted {args.converted}: not a directory")
    results = run_samples(specs, converted_dir=args.converted, modes=modes, jobs=args.jobs, timeout=args.timeout,
                          localise=not args.no_localise)
    if args.format == "json":
        print(json.dumps([result_dict(r) for r in results], indent=2))
    else:
        print(format_samples(results, modes, verbose=args.verbose))
    return EXIT_OK if results and all(r.ok for r in results) else EXIT_MISMATCH


def _parity_training(args) -> int:
    """``transpile parity --training [SPEC...]``: the training samples' table (or JSON)."""
    from pathlib import Path

    from ..parity.spec import SpecError
    from ..parity.training import SUFFIX, format_training, load_training_specs, run_training, training_dict

    if args.config or args.model or args.function or args.inputs or args.emit_test:
        return _usage("--training takes training specs (or sample names), not --config, --model, --function, "
                      "--input or --emit-test")
    def spec_path(target: str):  # a spec, the script beside its spec, or a sample's name
        if target.endswith(".py"):
            return Path(target).with_suffix(SUFFIX)
        return target if target.endswith(SUFFIX) else Path(args.samples) / f"{target}{SUFFIX}"

    try:
        specs = load_training_specs([spec_path(t) for t in args.targets] if args.targets else args.samples)
    except SpecError as exc:
        return _usage(str(exc))
    if args.converted is not None and not os.path.isdir(args.converted):
        return _usage(f"--converted {args.converted}: not a directory")
    results = run_training(specs, converted_dir=args.converted, jobs=args.jobs, timeout=args.timeout)
    if args.format == "json":
        print(json.dumps([training_dict(r) for r in results], indent=2))
    else:
        print(format_training(results, verbose=args.verbose))
    return EXIT_OK if results and all(r.ok for r in results) else EXIT_MISMATCH


def _parity_one(args, modes) -> int:
    from ..parity.emit import EmitError, emit_test
    from ..parity.report import format_result, result_dict
    from ..parity.runner import run_parity
    from ..parity.spec import SpecError, make_spec

    if len(args.targets) > 1:
        return _usage(f"one ORIGINAL.py at a time (got {' '.join(args.targets)})")
    if args.targets and not args.targets[0].endswith(".py"):
        return _usage(f"{args.targets[0]}: the original is a .py file")
    if args.model and args.function:
        return _usage("give --model or --function, not both")
    try:
        spec = make_spec(
            config=args.config, source=args.targets[0] if args.targets else None, converted=args.converted,
            entry=args.model or args.function, kind="function" if args.function else ("module" if args.model else None),
            inputs=tuple(args.inputs or ()), tolerance=args.tolerance, rtol=args.rtol, seed=args.seed,
            root=args.root,
        )
    except SpecError as exc:
        return _usage(str(exc))
    if args.emit_test and spec.converted is None:
        return _usage("--emit-test needs --converted FILE: the test imports the converted model from its file")
    result = run_parity(spec, modes=modes, timeout=args.timeout, localise=not args.no_localise,
                        cells=bool(args.emit_test))
    emitted = None
    if args.emit_test:
        try:
            emitted = emit_test(result, args.emit_test, command=_command(args))
        except (EmitError, OSError) as exc:
            emitted = exc
    if args.format == "json":
        data = result_dict(result)
        if args.emit_test:
            data["emitted_test"] = str(emitted) if not isinstance(emitted, Exception) else None
            data["emit_error"] = str(emitted) if isinstance(emitted, Exception) else None
        print(json.dumps(data, indent=2))
    else:
        print(format_result(result, verbose=args.verbose))
        if isinstance(emitted, Exception):
            print(f"transpile parity: --emit-test: {emitted}", file=sys.stderr)
        elif emitted is not None:
            print(f"wrote {emitted}")
    if isinstance(emitted, Exception):
        return EXIT_MISMATCH
    return EXIT_OK if result.ok else EXIT_MISMATCH


def _command(args) -> str:
    """The command that regenerates the emitted test."""
    argv = ["transpile", "parity", *args.targets]
    for flag, value in (("--config", args.config), ("--converted", args.converted), ("--root", args.root),
                        ("--model", args.model),
                        ("--function", args.function), ("--tolerance", args.tolerance), ("--rtol", args.rtol),
                        ("--seed", args.seed)):
        if value is not None:
            argv += [flag, str(value)]
    for spec in args.inputs or ():
        argv += ["--input", spec]
    argv += ["--emit-test", args.emit_test]
    return shlex.join(argv)


def cmd_weights(args) -> int:
    from ..parity.report import format_weights, weights_dict
    from ..parity.runner import convert_weights
    from ..parity.spec import SpecError

    if args.timeout <= 0:
        print("transpile weights: --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    if (problem := _set_memory_limit(args)) is not None:
        print(f"transpile weights: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = convert_weights(args.checkpoint, args.output, source=args.source, model=args.model,
                                 converted=args.converted, allow_partial=args.allow_partial, timeout=args.timeout)
    except SpecError as exc:
        print(f"transpile weights: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(weights_dict(result), indent=2))
    else:
        print(format_weights(result, verbose=args.verbose))
    return EXIT_OK if result.ok else EXIT_MISMATCH


def __getattr__(name: str):
    """``format_table`` (the samples table) stays importable from here, imported on first use."""
    if name == "format_table":
        from ..parity.report import format_table

        return format_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
