"""Parity specs: how to build, feed and compare one model (a TOML file or flags).

A sample's spec sits next to it (``samples/lenet.py`` + ``samples/lenet.parity.toml``);
the general command reads the same fields from ``--config parity.toml`` and from its
flags (flags win)::

    entry = "LeNet()"            # (alias: model) evaluated in the source's namespace, torch and
                                 # converted: call names the source defines (a class, a factory)
    kind = "module"              # or "function": entry is then the function's name
    source = "lenet.py"          # the torch file (default: <sample>.py); relative to the spec
    converted = "out/lenet.py"   # optional: the converted file (default: convert on the fly)
    tolerance = 1e-5             # atol: |torch - mindspore| <= tolerance + rtol * |torch|
    rtol = 0.0
    compare = "allclose"         # or "mask_rows" (see below)
    seed = 0                     # numpy seed for the inputs

    [[inputs]]                   # one table per positional argument of forward
    shape = [2, 1, 32, 32]
    dtype = "float32"            # float*, int*, uint*, bool
    low = -1.0                   # ints: low <= v < high; bool ignores the range
    high = 1.0

    [[inputs]]
    expr = "np.arange(6).reshape(2, 3)"   # any Python expression over np and rng

Inputs can also be strings in the flag syntax: ``inputs = ["float32[2,3]", "int64[4]:0..10",
"bool[4]", "expr:np.arange(6).reshape(2, 3)"]``. An ``expr`` that gives an array (or a
list) becomes a tensor; a Python scalar, None or a string is passed as it is.

``compare = "mask_rows"`` is for boolean row selection (``box[mask]``), which the
converter turns into a mask multiply that keeps the full shape. The spec names the
rule that makes the mask, and the comparison recomputes it from the inputs::

    [mask]
    input = 1                    # index into inputs
    op = ">"                     # > >= < <= == !=
    value = 0.3

The torch result must have exactly the rows the mask keeps; the converted result
must have every row, equal to torch's on the kept rows and zero on the others.

``gradients = true`` also compares the gradients: d(sum of the floating-point outputs)
/ d(each floating-point input), torch's autograd against ``mindspore.grad`` over the
converted model (a custom backward, ``torch.autograd.Function`` -> ``bprop``, is then
checked too). An input whose gradient torch leaves None counts as zeros on both sides.
``graph_gradients = "reason"`` records why GRAPH mode cannot take the gradients: GRAPH
then compares the outputs only, and a note gives the reason.

``graph = "reason"`` records why a sample cannot run in GRAPH mode; the GRAPH
column then shows the reason instead of a number (and the sample does not match).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

SUFFIX = ".parity.toml"
COMPARES = ("allclose", "mask_rows")
KINDS = ("module", "function")
MASK_OPS = (">", ">=", "<", "<=", "==", "!=")
_DTYPE = re.compile(r"^(float(16|32|64)|u?int(8|16|32|64)|bool)$")
_KNOWN = {"entry", "model", "kind", "source", "converted", "inputs", "tolerance", "rtol", "compare", "seed",
          "mask", "graph", "description", "gradients", "graph_gradients", "root"}
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_INPUT_FLAG = re.compile(rf"^\s*(?P<dtype>\w+)\s*\[(?P<shape>[\d\s,]*)\]\s*(?::\s*(?P<low>{_NUMBER})\s*\.\.\s*(?P<high>{_NUMBER}))?\s*$")


class SpecError(ValueError):
    """A parity spec that cannot be used."""


@dataclass(frozen=True)
class InputSpec:
    """One positional argument: a random array (shape, dtype, range) or an expression."""

    shape: tuple[int, ...] = ()
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0
    expr: str | None = None  # a Python expression over ``np`` and ``rng``; wins over the rest

    def code(self, rng: str = "rng") -> str:
        """The numpy expression that draws this input from the generator named ``rng``
        (the child evaluates it; an emitted test embeds it, so both draw the same)."""
        if self.expr is not None:
            return self.expr
        shape = repr(tuple(self.shape))
        if self.dtype == "bool":
            return f"{rng}.uniform(0.0, 1.0, {shape}) < 0.5"
        if self.dtype.startswith("float"):
            return f"{rng}.uniform({self.low!r}, {self.high!r}, {shape}).astype({self.dtype!r})"
        return f"{rng}.randint({int(self.low)}, {int(self.high)}, {shape}).astype({self.dtype!r})"

    def label(self) -> str:
        """The flag syntax: ``float32[2,3]:-1.0..1.0``, ``bool[4]``, ``expr:...``."""
        if self.expr is not None:
            return f"expr:{self.expr}"
        base = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.dtype == "bool":
            return base
        if self.dtype.startswith("float"):
            return f"{base}:{self.low:g}..{self.high:g}"
        return f"{base}:{int(self.low)}..{int(self.high)}"


@dataclass(frozen=True)
class MaskRule:
    input: int
    op: str
    value: float


@dataclass(frozen=True)
class ParitySpec:
    name: str  # the sample's name: the spec file's stem without .parity (or the source's stem)
    path: Path | None  # the spec file (None: the spec came from flags only)
    source: Path  # the torch file
    entry: str
    kind: str = "module"
    inputs: tuple[InputSpec, ...] = ()
    tolerance: float = 1e-5  # atol
    compare: str = "allclose"
    seed: int = 0
    mask: MaskRule | None = None
    graph: str | None = None  # why GRAPH mode cannot run this sample, if it cannot
    description: str = field(default="", compare=False)
    rtol: float = 0.0
    converted: Path | None = None  # the converted file, when the spec names one
    gradients: bool = False  # also compare d(sum of outputs)/d(inputs)
    graph_gradients: str | None = None  # why GRAPH mode cannot take the gradients, if it cannot
    # The package root the source belongs to (--root): the source is imported as a module of
    # it, and the converted file as the same module of the converted tree (see module_root)
    root: Path | None = None

    def to_dict(self) -> dict:
        """JSON-ready (the child process gets the spec this way)."""
        data = paths_out({f.name: getattr(self, f.name) for f in fields(self)})
        data["inputs"] = [vars(i).copy() | {"shape": list(i.shape)} for i in self.inputs]
        data["mask"] = None if self.mask is None else vars(self.mask).copy()
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "ParitySpec":
        data = paths_in(data)
        data["inputs"] = tuple(InputSpec(**(d | {"shape": tuple(d["shape"])})) for d in data["inputs"])
        data["mask"] = None if data.get("mask") is None else MaskRule(**data["mask"])
        return cls(**data)


_PATHS = ("path", "source", "converted", "root")


def paths_out(data: dict) -> dict:
    """A spec's fields with its paths as strings (JSON for the child process)."""
    return {**data, **{key: None if data[key] is None else str(data[key]) for key in _PATHS if key in data}}


def paths_in(data: dict) -> dict:
    """The inverse of ``paths_out``: a copy of ``data`` with its paths as Paths."""
    return {**data, **{key: None if data[key] is None else Path(data[key]) for key in _PATHS if key in data}}


def as_float(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{where}: expected a number, got {value!r}")
    return float(value)


def check_expr(expr, where: str, what: str = "expr") -> str:
    """``expr`` stripped, when it is a Python expression (else SpecError, naming the field ``what``)."""
    if not isinstance(expr, str) or not expr.strip():
        raise SpecError(f"{where}: {what} must be a Python expression")
    try:
        compile(expr.strip(), where, "eval")
    except SyntaxError as exc:
        raise SpecError(f"{where}: {what} {expr!r} is not an expression: {exc.msg}") from exc
    return expr.strip()


def _input(data, where: str) -> InputSpec:
    if isinstance(data, InputSpec):
        return data
    if isinstance(data, str):
        return parse_input(data, where)
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected a table or an input string")
    if "expr" in data:
        if set(data) != {"expr"}:
            raise SpecError(f"{where}: expr stands alone (no shape, dtype, low or high)")
        return InputSpec(expr=check_expr(data["expr"], where))
    unknown = set(data) - {"shape", "dtype", "low", "high"}
    if unknown:
        raise SpecError(f"{where}: unknown fields {sorted(unknown)}")
    shape = data.get("shape")
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise SpecError(f"{where}: shape must be a list of non-negative integers")
    dtype = data.get("dtype", "float32")
    if not isinstance(dtype, str) or not _DTYPE.match(dtype):
        raise SpecError(f"{where}: dtype {dtype!r} is not a float, int or bool type name")
    low = as_float(data.get("low", -1.0 if dtype.startswith("float") else 0), where)
    high = as_float(data.get("high", 1.0 if dtype.startswith("float") else 10), where)
    if dtype != "bool" and not low < high:
        raise SpecError(f"{where}: low must be below high")
    if dtype.startswith(("int", "uint")) and (low != int(low) or high != int(high)):
        raise SpecError(f"{where}: an integer input's range takes integers")
    return InputSpec(tuple(shape), dtype, low, high)


def parse_input(text: str, where: str = "--input") -> InputSpec:
    """``float32[2,3,32,32]``, ``float32[4]:-2..2``, ``int64[4]:0..10`` (high excluded),
    ``bool[4]`` or ``expr:np.arange(6).reshape(2, 3)``."""
    if text.strip().startswith("expr:"):
        return InputSpec(expr=check_expr(text.strip()[len("expr:"):], where))
    m = _INPUT_FLAG.match(text)
    if not m:
        raise SpecError(f"{where}: {text!r} is not an input spec: DTYPE[SHAPE] with an optional :LOW..HIGH "
                        "(float32[2,3], int64[4]:0..10, bool[4]) or expr:PYTHON")
    shape = [int(d) for d in m["shape"].replace(" ", "").split(",") if d]
    data: dict = {"shape": shape, "dtype": m["dtype"]}
    if m["low"] is not None:
        if m["dtype"] == "bool":
            raise SpecError(f"{where}: {text!r}: a bool input takes no range")
        data["low"], data["high"] = float(m["low"]), float(m["high"])
    return _input(data, f"{where} {text!r}")


def spec_from_dict(data: dict, *, where: str, base: Path, name: str | None = None,
                   path: Path | None = None) -> ParitySpec:
    """Validate spec fields (from a TOML file, flags, or both merged) into a ParitySpec.

    Relative ``source`` and ``converted`` paths are taken from ``base``; ``name``
    defaults to the source's stem; the source defaults to ``<name>.py``.
    """
    unknown = set(data) - _KNOWN
    if unknown:
        raise SpecError(f"{where}: unknown fields {sorted(unknown)}")
    if "entry" in data and "model" in data and data["entry"] != data["model"]:
        raise SpecError(f"{where}: give entry or model (its alias), not both")
    entry = data.get("entry", data.get("model"))
    if not isinstance(entry, str) or not entry.strip():
        raise SpecError(f"{where}: entry is required (alias: model): a constructor expression such as "
                        "'ResNet18(num_classes=10)', or the name of a function with kind = 'function'")
    kind = data.get("kind", "module")
    if kind not in KINDS:
        raise SpecError(f"{where}: kind must be one of {KINDS}")
    if kind == "function" and not entry.strip().isidentifier():
        raise SpecError(f"{where}: for kind = 'function', entry is the function's name")
    try:
        compile(entry.strip(), where, "eval")
    except SyntaxError as exc:
        raise SpecError(f"{where}: entry {entry.strip()!r} is not an expression: {exc.msg}") from exc
    source_name = data.get("source", f"{name}.py" if name else None)
    if not isinstance(source_name, (str, Path)) or not str(source_name).endswith(".py"):
        raise SpecError(f"{where}: source must name a .py file (the original torch code)")
    source = base / source_name
    converted = data.get("converted")
    if converted is not None:
        if not isinstance(converted, (str, Path)) or not str(converted).strip():
            raise SpecError(f"{where}: converted must name the converted file")
        converted = base / converted
    root = data.get("root")
    if root is not None:
        root = base / root
        if not root.is_dir():
            raise SpecError(f"{where}: root {root}: not a directory")
        if not source.resolve().is_relative_to(root.resolve()):
            raise SpecError(f"{where}: the source {source} is not inside --root {root}")
        if converted is None:
            raise SpecError(f"{where}: --root needs --converted OUT, the tree `transpile convert {root} -o OUT` "
                            "wrote (its modules import each other; one file converted alone would not run)")
    raw_inputs = data.get("inputs")
    if not isinstance(raw_inputs, (list, tuple)) or not raw_inputs:
        raise SpecError(f"{where}: inputs must be a non-empty list ([[inputs]] tables, or --input SPEC)")
    inputs = tuple(_input(d, f"{where}: inputs[{i}]") for i, d in enumerate(raw_inputs))
    tolerance = as_float(data.get("tolerance", 1e-5), f"{where}: tolerance")
    rtol = as_float(data.get("rtol", 0.0), f"{where}: rtol")
    if tolerance < 0 or rtol < 0:
        raise SpecError(f"{where}: tolerance and rtol must not be negative")
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
        if not isinstance(m["input"], int) or not 0 <= m["input"] < len(inputs) or inputs[m["input"]].expr:
            raise SpecError(f"{where}: mask.input must index a random (not expr) input")
        if m["op"] not in MASK_OPS:
            raise SpecError(f"{where}: mask.op must be one of {MASK_OPS}")
        mask = MaskRule(m["input"], m["op"], as_float(m["value"], f"{where}: mask.value"))
    elif data.get("mask") is not None:
        raise SpecError(f"{where}: [mask] is only used with compare = 'mask_rows'")
    graph = data.get("graph")
    if graph is not None and (not isinstance(graph, str) or not graph.strip()):
        raise SpecError(f"{where}: graph, when given, is the reason GRAPH mode cannot run the sample")
    gradients = data.get("gradients", False)
    if not isinstance(gradients, bool):
        raise SpecError(f"{where}: gradients must be true or false")
    if gradients and compare != "allclose":
        raise SpecError(f"{where}: gradients are compared with compare = 'allclose' only")
    graph_gradients = data.get("graph_gradients")
    if graph_gradients is not None and (not gradients or not isinstance(graph_gradients, str)
                                        or not graph_gradients.strip()):
        raise SpecError(f"{where}: graph_gradients, with gradients = true, is the reason GRAPH mode cannot take them")
    return ParitySpec(
        name=name or Path(source_name).stem, path=path, source=source, entry=entry.strip(), kind=kind,
        inputs=inputs, tolerance=tolerance, compare=compare, seed=seed, mask=mask, graph=graph,
        description=str(data.get("description", "")), rtol=rtol, converted=converted, gradients=gradients,
        graph_gradients=graph_gradients, root=root,
    )


def module_name(source: Path, root: Path) -> str:
    """The dotted name ``source`` has as a module of the package root ``root``
    (``root/models/net.py``: ``models.net``; a package's ``__init__.py``: the package)."""
    parts = list(source.resolve().relative_to(root.resolve()).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def read_spec_file(path: str | Path) -> dict:
    """The raw fields of a TOML spec file (raises SpecError)."""
    try:
        with Path(path).open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"{path}: {exc}") from exc


def load_spec(path: str | Path) -> ParitySpec:
    """Read and validate one sample spec, ``<sample>.parity.toml`` (raises SpecError)."""
    path = Path(path)
    if not path.name.endswith(SUFFIX):
        raise SpecError(f"{path}: a spec file is named <sample>{SUFFIX}")
    name = path.name[: -len(SUFFIX)]
    return spec_from_dict(read_spec_file(path), where=str(path), base=path.parent, name=name, path=path)


def make_spec(*, config: str | Path | None = None, **overrides) -> ParitySpec:
    """A spec from an optional TOML file (any name) and overrides (flags), which win.

    Overrides that are None are ignored; paths in overrides are taken as they are
    (relative to the working directory), paths in the file relative to the file.
    """
    data: dict = {}
    base = Path(".")
    path = None
    if config is not None:
        path = Path(config)
        data = read_spec_file(path)
        base = path.parent
        if "source" not in data and path.name.endswith(SUFFIX):
            data["source"] = path.name[: -len(SUFFIX)] + ".py"
        for key in ("source", "converted", "root"):  # file paths are relative to the file
            if isinstance(data.get(key), str):
                data[key] = str(base / data[key])
    given = {k: v for k, v in overrides.items() if v is not None and v != ()}
    if "entry" in given or "model" in given:
        data.pop("entry", None)
        data.pop("model", None)
    data.update(given)
    for key in ("source", "converted", "root"):
        if data.get(key) is not None:
            data[key] = str(data[key])
    where = str(path) if path is not None else "command line"
    if data.get("source") is None:
        raise SpecError(f"{where}: name the original torch file (ORIGINAL.py, or source = ... in the config)")
    return spec_from_dict(data, where=where, base=Path("."), path=path)


def find_specs(directory: str | Path) -> list[Path]:
    """Every ``*.parity.toml`` under ``directory``, sorted."""
    return sorted(Path(directory).rglob(f"*{SUFFIX}"))
