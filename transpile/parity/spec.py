"""Parity specs: how to build, feed and compare one sample (``<name>.parity.toml``).

A spec sits next to its sample (``samples/lenet.py`` + ``samples/lenet.parity.toml``)::

    entry = "LeNet()"            # evaluated in the sample's namespace, torch and converted:
                                 # call names the sample defines (a class, a factory), not torch's
    kind = "module"              # or "function": entry is then the function's name
    tolerance = 1e-5             # max abs diff allowed, per output
    compare = "allclose"         # or "mask_rows" (see below)
    seed = 0                     # numpy seed for the inputs

    [[inputs]]
    shape = [2, 1, 32, 32]
    dtype = "float32"            # float*, int*, bool
    low = -1.0
    high = 1.0

``compare = "mask_rows"`` is for boolean row selection (``box[mask]``), which the
converter turns into a mask multiply that keeps the full shape. The spec names the
rule that makes the mask, and the comparison recomputes it from the inputs::

    [mask]
    input = 1                    # index into inputs
    op = ">"                     # > >= < <= == !=
    value = 0.3

The torch result must have exactly the rows the mask keeps; the converted result
must have every row, equal to torch's on the kept rows and zero on the others.

``graph = "reason"`` records why a sample cannot run in GRAPH mode; the GRAPH
column then shows the reason instead of a number (and the sample does not match).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SUFFIX = ".parity.toml"
COMPARES = ("allclose", "mask_rows")
KINDS = ("module", "function")
MASK_OPS = (">", ">=", "<", "<=", "==", "!=")
_DTYPE = re.compile(r"^(float(16|32|64)|u?int(8|16|32|64)|bool)$")
_KNOWN = {"entry", "kind", "source", "inputs", "tolerance", "compare", "seed", "mask", "graph", "description"}


class SpecError(ValueError):
    """A parity spec that cannot be used."""


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0


@dataclass(frozen=True)
class MaskRule:
    input: int
    op: str
    value: float


@dataclass(frozen=True)
class ParitySpec:
    name: str  # the sample's name: the spec file's stem without .parity
    path: Path  # the spec file
    source: Path  # the torch sample
    entry: str
    kind: str = "module"
    inputs: tuple[InputSpec, ...] = ()
    tolerance: float = 1e-5
    compare: str = "allclose"
    seed: int = 0
    mask: MaskRule | None = None
    graph: str | None = None  # why GRAPH mode cannot run this sample, if it cannot
    description: str = field(default="", compare=False)


def _float(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _input(data, where: str) -> InputSpec:
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected a table")
    unknown = set(data) - {"shape", "dtype", "low", "high"}
    if unknown:
        raise SpecError(f"{where}: unknown fields {sorted(unknown)}")
    shape = data.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise SpecError(f"{where}: shape must be a list of non-negative integers")
    dtype = data.get("dtype", "float32")
    if not isinstance(dtype, str) or not _DTYPE.match(dtype):
        raise SpecError(f"{where}: dtype {dtype!r} is not a float, int or bool type name")
    low = _float(data.get("low", -1.0 if dtype.startswith("float") else 0), where)
    high = _float(data.get("high", 1.0 if dtype.startswith("float") else 10), where)
    if dtype != "bool" and not low < high:
        raise SpecError(f"{where}: low must be below high")
    return InputSpec(tuple(shape), dtype, low, high)


def load_spec(path: str | Path) -> ParitySpec:
    """Read and validate one spec file (raises SpecError)."""
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        raise SpecError(f"{path}: a spec file is named <sample>{SUFFIX}")
    name = path.name[: -len(SUFFIX)]
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"{path}: {exc}") from exc
    where = str(path)
    unknown = set(data) - _KNOWN
    if unknown:
        raise SpecError(f"{where}: unknown fields {sorted(unknown)}")
    entry = data.get("entry")
    if not isinstance(entry, str) or not entry.strip():
        raise SpecError(f"{where}: entry is required (a constructor expression or a function name)")
    kind = data.get("kind", "module")
    if kind not in KINDS:
        raise SpecError(f"{where}: kind must be one of {KINDS}")
    if kind == "function" and not entry.isidentifier():
        raise SpecError(f"{where}: for kind = 'function', entry is the function's name")
    try:
        compile(entry, where, "eval")
    except SyntaxError as exc:
        raise SpecError(f"{where}: entry is not an expression: {exc.msg}") from exc
    source_name = data.get("source", f"{name}.py")
    if not isinstance(source_name, str) or not source_name.endswith(".py"):
        raise SpecError(f"{where}: source must name a .py file")
    source = path.parent / source_name
    raw_inputs = data.get("inputs")
    if not isinstance(raw_inputs, list) or not raw_inputs:
        raise SpecError(f"{where}: inputs must be a non-empty list of tables ([[inputs]])")
    inputs = tuple(_input(d, f"{where}: inputs[{i}]") for i, d in enumerate(raw_inputs))
    tolerance = _float(data.get("tolerance", 1e-5), f"{where}: tolerance")
    if tolerance < 0:
        raise SpecError(f"{where}: tolerance must not be negative")
    compare = data.get("compare", "allclose")
    if compare not in COMPARES:
        raise SpecError(f"{where}: compare must be one of {COMPARES}")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SpecError(f"{where}: seed must be a non-negative integer")
    mask = None
    if compare == "mask_rows":
        m = data.get("mask")
        if not isinstance(m, dict) or set(m) != {"input", "op", "value"}:
            raise SpecError(f"{where}: compare = 'mask_rows' needs [mask] with input, op and value")
        if not isinstance(m["input"], int) or not 0 <= m["input"] < len(inputs):
            raise SpecError(f"{where}: mask.input must index inputs")
        if m["op"] not in MASK_OPS:
            raise SpecError(f"{where}: mask.op must be one of {MASK_OPS}")
        mask = MaskRule(m["input"], m["op"], _float(m["value"], f"{where}: mask.value"))
    elif "mask" in data:
        raise SpecError(f"{where}: [mask] is only used with compare = 'mask_rows'")
    graph = data.get("graph")
    if graph is not None and (not isinstance(graph, str) or not graph.strip()):
        raise SpecError(f"{where}: graph, when given, is the reason GRAPH mode cannot run the sample")
    return ParitySpec(
        name=name, path=path, source=source, entry=entry.strip(), kind=kind, inputs=inputs,
        tolerance=tolerance, compare=compare, seed=seed, mask=mask, graph=graph,
        description=str(data.get("description", "")),
    )


def find_specs(directory: str | Path) -> list[Path]:
    """Every ``*.parity.toml`` under ``directory``, sorted."""
    return sorted(Path(directory).rglob(f"*{SUFFIX}"))
