"""Differential tests: run a torch snippet and ITS CONVERTED FORM on the same inputs.

Usage (a test module)::

    import pytest
    from .harness import Case, Suite, arr, ints

    CASES = [
        Case("torch.cat", "torch.cat([a, b], 1)", (arr(2, 3), arr(2, 3)), "positional"),
        Case("torch.cat", "torch.cat(tensors=[a, b], dim=1)", (arr(2, 3), arr(2, 3)), "keyword"),
        Case("Tensor.view", "a.view(3, 2)", (arr(2, 3),)),
        Case("torch.rand", "torch.rand(2, 3)", random=True),
    ]
    SUITE = Suite(CASES)

    @pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
    def test_api(case):
        SUITE.check(case)

What happens:

* ``Suite`` builds ONE torch source file: ``import torch`` / ``import torch.nn as nn`` /
  ``import torch.nn.functional as F`` (``header=`` to change) and, per case, a class
  ``Case_<n>`` whose ``forward`` takes the inputs as ``a, b, c, ...`` (forward
  parameters count as tensors, so tensor methods on them are converted; passes that
  only act inside forward/construct apply too). ``method="helper"`` puts the code in
  a plain method instead (its parameters are then not known to be tensors).
  ``code`` is an expression (returned) or a body of statements with its own ``return``.
* The whole file is converted ONCE with ``transpile.convert_code`` (lazily, on the first
  ``check``); both modules are exec'd once. Only the tool's own output is ever run.
* ``check(case)`` fails when the converted case still mentions ``torch``, carries a
  ``# transpile:`` marker, has an error or a manual-safety diagnostic (what was left
  unconverted), or a tensor method was left because its receiver was not known to be a
  tensor. Advisory diagnostics (GRAPH_MODE lints, notes) do not fail a case. Then it
  runs both versions on the same inputs: numpy arrays become ``torch.from_numpy`` /
  ``mindspore.Tensor`` (also inside lists/tuples); anything else is passed as it is.
  If one case breaks the whole file, every case is converted and run on its own, so
  only the culprits fail.
* Results are compared recursively: tensors by shape, dtype (by name: torch.float32 ==
  mindspore.float32) and value (``np.allclose(atol, rtol, equal_nan=True)`` for floats,
  exact otherwise); numpy arrays likewise; tuples/lists elementwise; dtypes by name;
  Python scalars by value. ``random=True`` compares shape and dtype only.
  ``check_dtype=False`` skips the dtype comparison; say why in ``why``. A case with
  ``atol`` or ``rtol`` above 1e-5 without a ``why`` is refused when it is built.

Case fields: ``api`` (the table key it covers: "torch.cat", "Tensor.view",
"torch.float16"), ``code``, ``inputs``, ``form`` (label in the test id), ``random``,
``atol``/``rtol`` (1e-5), ``check_dtype``, ``why``, ``method``. Input helpers:
``arr(*shape, dtype=, low=, high=)``, ``ints``, ``pos`` (strictly positive), ``bools``;
``OwnDraws(seed)`` has ``arr``/``ints``/``bools`` drawing from a generator of its own (cases
added among others without changing the other cases' draws).

``uncovered(toml_files, apis)`` lists converted (not ``unsupported``) entries of the
given tables (names relative to rewrites/tables) that no case covers; use it in a test
that fails when it is not empty. ``table_entries(toml_files)`` gives the raw entries.
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import re
import sys
import textwrap
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

warnings.filterwarnings("ignore")

DEFAULT_HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
PARAM_NAMES = "abcdefghijklmnopqrstuvwxyz"
TABLE_DIR = Path(__file__).resolve().parents[2] / "rewrites" / "tables"

_RNG = np.random.default_rng(1234)
DEFAULT_TOL = 1e-5  # atol and rtol of a case that gives no reason to loosen them


def import_converted(code: str, name: str, folder: Path) -> dict:
    """The namespace of converted ``code`` imported as module ``name`` from a file in
    ``folder``: GRAPH mode reads a construct's source from its file."""
    (folder / f"{name}.py").write_text(code)
    sys.path.insert(0, str(folder))
    sys.modules.pop(name, None)
    try:
        return vars(importlib.import_module(name))
    finally:
        sys.path.remove(str(folder))


def converted_and_imported(source: str, name: str, folder: Path) -> tuple:
    """``source`` converted (it may keep markers: warnings the test reads) and imported as
    module ``name`` from a file in ``folder`` (GRAPH mode reads a construct's source there),
    the torch version executed: (the conversion result, the torch namespace, the converted one)."""
    from transpile import convert_code

    result = convert_code(source, filename=f"{name}.py")
    assert not result.failed, result.code
    ms_ns = import_converted(result.code, name, folder)
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    return result, torch_ns, ms_ns


def converted_and_run(source: str, filename: str) -> tuple:
    """``source`` converted (cleanly: no marker left), and both versions executed:
    (the conversion result, the torch namespace, the converted namespace)."""
    from transpile import convert_code

    result = convert_code(source, filename=filename)
    assert not result.failed and "# transpile:" not in result.code, result.code
    torch_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(result.code, "<converted>", "exec"), ms_ns)
    return result, torch_ns, ms_ns


def definition_spans(source: str, kinds: tuple = ("ClassDef",)) -> dict[str, tuple[int, int]]:
    """Name -> (first line, last line) of each top-level definition of ``kinds`` (ast node
    type names) in ``source``: where a test looks for the findings on one case."""
    import ast

    return {n.name: (n.lineno, n.end_lineno) for n in ast.parse(source).body if type(n).__name__ in kinds}


@contextlib.contextmanager
def in_mode(mode: str):
    """MindSpore in ``mode`` ("PYNATIVE_MODE" or "GRAPH_MODE") inside the block, PYNATIVE after."""
    import mindspore

    mindspore.set_context(mode=getattr(mindspore, mode))
    try:
        yield
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def outputs_in_mode(torch_cls, ms_cls, inputs, mode: str) -> tuple:
    """(torch's output, the converted Cell's output in MindSpore ``mode``: "PYNATIVE_MODE" or
    "GRAPH_MODE") of a new instance of each class, as numpy arrays, on copies of the numpy
    ``inputs``; the context goes back to PYNATIVE mode after."""
    import mindspore
    import torch

    with torch.no_grad():
        expected = torch_cls()(*(torch.from_numpy(v.copy()) for v in inputs)).numpy()
    with in_mode(mode):
        actual = ms_cls()(*(mindspore.Tensor(v.copy()) for v in inputs)).asnumpy()
    return expected, actual


def same_outputs(torch_net, ms_net, *shape: int, drawn_weights: bool = False) -> None:
    """A built torch network and its converted twin, weights copied across (with
    ``drawn_weights``, weights and float buffers drawn first, away from the initial ones),
    give the same outputs in eval mode on one random input of ``shape``."""
    import mindspore
    import torch
    from transpile.parity.weights import copy_weights

    if drawn_weights:
        with torch.no_grad():
            for p in torch_net.parameters():
                p.copy_(torch.rand_like(p) + 0.5)
            for _, b in torch_net.named_buffers():
                if b.dtype.is_floating_point:
                    b.copy_(torch.rand_like(b) + 0.5)
    assert copy_weights(torch_net, ms_net) == []
    torch_net.eval()
    ms_net.set_train(False)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = torch_net(torch.tensor(x)).numpy()
    got = ms_net(mindspore.Tensor(x)).asnumpy()
    if drawn_weights:
        assert np.ptp(expected) > 1e-3
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def reseed(seed: int) -> None:
    """Start the input draws afresh: a module whose inputs must not depend on how many
    arrays the modules collected before it drew (a distribution's support is narrow)."""
    global _RNG
    _RNG = np.random.default_rng(seed)


def arr(*shape: int, dtype: str = "float32", low: float = -2.0, high: float = 2.0) -> np.ndarray:
    """A random array (uniform in [low, high)); integer dtypes draw in [low, high)."""
    return _draw(_RNG, shape, dtype, low, high)


def _draw(rng: np.random.Generator, shape: tuple, dtype: str, low: float, high: float) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


class OwnDraws:
    """Inputs drawn from a generator of their own: cases added in the middle of a module
    leave the draws of the cases after them, and of the modules collected later, as they
    were (a case may hold inputs tuned to its draw)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def arr(self, *shape: int, dtype: str = "float32", low: float = -2.0, high: float = 2.0) -> np.ndarray:
        return _draw(self.rng, shape, dtype, low, high)

    def ints(self, *shape: int, low: int = 0, high: int = 5, dtype: str = "int64") -> np.ndarray:
        return self.arr(*shape, dtype=dtype, low=low, high=high)

    def bools(self, *shape: int) -> np.ndarray:
        return self.arr(*shape, dtype="bool")


def ints(*shape: int, low: int = 0, high: int = 5, dtype: str = "int64") -> np.ndarray:
    return arr(*shape, dtype=dtype, low=low, high=high)


def pos(*shape: int, dtype: str = "float32") -> np.ndarray:
    """Strictly positive floats (for log, sqrt, ...)."""
    return arr(*shape, dtype=dtype, low=0.1, high=3.0)


def bools(*shape: int) -> np.ndarray:
    return arr(*shape, dtype="bool")


@dataclass(frozen=True)
class Case:
    api: str  # the table key it covers: "torch.cat", "Tensor.view", "torch.float16"
    code: str  # an expression, or statements with a return, over inputs a, b, c, ...
    inputs: tuple = ()
    form: str = ""  # label in the test id: "positional", "keyword", "defaults", ...
    random: bool = False  # compare shapes and dtypes only
    atol: float = DEFAULT_TOL
    rtol: float = DEFAULT_TOL
    check_dtype: bool = True
    why: str = ""  # why a comparison is loosened (required when atol or rtol is above 1e-5)
    method: str = "forward"  # the method holding the code; forward's parameters count as tensors

    def __post_init__(self) -> None:
        if (self.atol > DEFAULT_TOL or self.rtol > DEFAULT_TOL) and not self.why.strip():
            raise ValueError(f"{self.api} {self.form or self.code!r}: atol={self.atol:g}, rtol={self.rtol:g} "
                             f"loosen the default {DEFAULT_TOL:g}: say why (why=...)")

    def body(self) -> str:
        """The forward body. Statements: the first line unindented, later lines indented
        relative to it (a dedent is applied to them), e.g. ``"v = 2\\n    return a * v"``."""
        text = self.code.strip("\n")
        if "\n" in text or re.match(r"\s*(return|raise)\b", text):
            first, *rest = text.splitlines()
            lines = [first.strip(), *textwrap.dedent("\n".join(rest)).splitlines()]
            return "\n".join("        " + l for l in lines)
        return f"        return {text}"


def _to_torch(value):
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_to_torch(v) for v in value)
    return value


def _to_ms(value):
    import mindspore

    if isinstance(value, np.ndarray):
        return mindspore.Tensor(value.copy())
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_to_ms(v) for v in value)
    return value


def _dtype_name(dtype) -> str:
    # torch.float8_e4m3fn is MindSpore's Float8E4M3FN
    return str(dtype).removeprefix("torch.").lower().replace("_", "")


class Mismatch(AssertionError):
    pass


def compare(expected, actual, case: Case, where: str = "result") -> None:
    """Raise Mismatch when the MindSpore result differs from the torch one."""
    import mindspore
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, mindspore.Tensor):
            raise Mismatch(f"{where}: torch gave a Tensor, MindSpore gave {type(actual).__name__}: {actual!r}")
        if tuple(expected.shape) != tuple(actual.shape):
            raise Mismatch(f"{where}: shape {tuple(expected.shape)} != {tuple(actual.shape)}")
        if case.check_dtype and _dtype_name(expected.dtype) != _dtype_name(actual.dtype):
            raise Mismatch(f"{where}: dtype {expected.dtype} != {actual.dtype}")
        if case.random:
            return
        e = expected.detach().resolve_conj()  # torch.conj is lazy: numpy() refuses the conjugate bit
        if e.dtype == torch.bfloat16:
            e = e.float()
        e = e.numpy()
        a = actual.float().asnumpy() if actual.dtype == mindspore.bfloat16 else actual.asnumpy()
        _compare_arrays(e, a, case, where)
        return
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise Mismatch(f"{where}: torch gave an ndarray, MindSpore gave {type(actual).__name__}")
        if expected.shape != actual.shape or (case.check_dtype and expected.dtype != actual.dtype):
            raise Mismatch(f"{where}: {expected.shape} {expected.dtype} != {actual.shape} {actual.dtype}")
        if not case.random:
            _compare_arrays(expected, actual, case, where)
        return
    if isinstance(expected, torch.dtype):
        if not isinstance(actual, mindspore.dtype.Type) or _dtype_name(expected) != _dtype_name(actual):
            raise Mismatch(f"{where}: dtype {expected} != {actual!r}")
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)):
            raise Mismatch(f"{where}: torch gave a sequence, MindSpore gave {type(actual).__name__}")
        if len(expected) != len(actual):
            raise Mismatch(f"{where}: {len(expected)} items != {len(actual)} items")
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare(e, a, case, f"{where}[{i}]")
        return
    if expected is None or isinstance(expected, (str, bool)):
        if expected != actual or type(expected) is not type(actual):
            raise Mismatch(f"{where}: {expected!r} != {actual!r}")
        return
    if isinstance(expected, (int, float, complex)):
        if isinstance(actual, (bool, mindspore.Tensor)) or not isinstance(actual, (int, float, complex, np.number)):
            raise Mismatch(f"{where}: torch gave {expected!r}, MindSpore gave {type(actual).__name__}: {actual!r}")
        if case.random:
            return
        if isinstance(expected, int) and not isinstance(actual, (int, np.integer)) and case.check_dtype:
            raise Mismatch(f"{where}: int {expected!r} != {actual!r}")
        _compare_arrays(np.asarray(expected), np.asarray(actual), case, where)
        return
    raise Mismatch(f"{where}: cannot compare a torch {type(expected).__name__} ({expected!r})")


def _compare_arrays(e: np.ndarray, a: np.ndarray, case: Case, where: str) -> None:
    if e.dtype.kind in "fc" or a.dtype.kind in "fc":
        ok = np.allclose(a.astype(np.complex128 if e.dtype.kind == "c" else np.float64), e, atol=case.atol, rtol=case.rtol, equal_nan=True)
    else:
        ok = np.array_equal(e, a)
    if not ok:
        raise Mismatch(f"{where}: values differ\ntorch:\n{e}\nmindspore:\n{a}")


@dataclass
class _Built:
    source: str
    converted: str
    torch_ns: dict
    ms_ns: dict
    problems: dict[int, list[str]] = field(default_factory=dict)  # case index -> reasons
    segments: dict[str, str] = field(default_factory=dict)  # class name -> converted source
    error: str | None = None


class Suite:
    """A list of cases converted and executed together (once, lazily).

    The whole file is converted and run at once; when that fails (one case breaks the
    file), each case is converted and run on its own, so only the culprits fail.
    """

    def __init__(self, cases: Sequence[Case], header: str = DEFAULT_HEADER, from_file: bool = False):
        self.cases = list(cases)
        self.header = header
        # run the converted code as a module imported from a file: MindSpore's function
        # transforms (ops.jvp, ops.grad, ...) compile a function from its source file
        self.from_file = from_file
        self.ids = _ids(self.cases)
        self._index = {id(c): i for i, c in enumerate(self.cases)}
        self._built: _Built | None = None

    @property
    def apis(self) -> set[str]:
        return {c.api for c in self.cases}

    def _case_source(self, i: int, case: Case) -> list[str]:
        params = ", ".join(["self", *PARAM_NAMES[: len(case.inputs)]])
        return ["", f"class Case_{i}:", f"    def {case.method}({params}):", *case.body().splitlines()]

    def torch_source(self) -> tuple[str, list[tuple[int, int]]]:
        """The torch file and, per case, its (first, last) line numbers."""
        lines = self.header.rstrip("\n").splitlines() + [""]
        spans = []
        for i, case in enumerate(self.cases):
            start = len(lines) + 2
            lines += self._case_source(i, case)
            spans.append((start, len(lines)))
        return "\n".join(lines) + "\n", spans

    @property
    def built(self) -> _Built:
        if self._built is None:
            try:
                self._built = self._build()
            except Exception as exc:  # noqa: BLE001 - reported on every case, once
                self._built = _Built("", "", {}, {}, error=f"the suite could not be built: {type(exc).__name__}: {exc}")
        return self._built

    def _build(self) -> _Built:
        from transpile import convert_code

        source, spans = self.torch_source()
        built = _Built(source, "", {}, {})
        try:
            exec(compile(source, "<torch cases>", "exec"), built.torch_ns)
        except Exception:  # noqa: BLE001
            built.torch_ns = {}
            exec(compile(self.header, "<torch header>", "exec"), built.torch_ns)
            for i, case in enumerate(self.cases):
                try:
                    exec(compile("\n".join(self._case_source(i, case)), f"<torch case {i}>", "exec"), built.torch_ns)
                except Exception as exc:  # noqa: BLE001
                    built.problems.setdefault(i, []).append(f"the torch snippet does not compile: {exc}")
        result = convert_code(source, filename="<differential>")
        built.converted = result.code
        whole_ok = not result.failed
        if whole_ok:
            try:
                self._run_converted(result.code, "converted_cases", built.ms_ns)
            except Exception:  # noqa: BLE001
                whole_ok = False
        if whole_ok:
            built.segments = _class_segments(result.code)
            for i, (first, last) in enumerate(spans):
                self._audit(built, i, built.segments.get(f"Case_{i}", ""), result.diagnostics, first, last)
            return built
        # one case broke the file: convert and run each on its own
        built.ms_ns = {}
        offset = len(self.header.rstrip("\n").splitlines()) + 1
        for i, case in enumerate(self.cases):
            single = self.header.rstrip("\n") + "\n" + "\n".join(self._case_source(i, case)) + "\n"
            res = convert_code(single, filename=f"<differential case {i}>")
            seg = _class_segments(res.code).get(f"Case_{i}", "") if not res.failed else ""
            built.segments[f"Case_{i}"] = seg or res.code
            if res.failed:
                built.problems.setdefault(i, []).append(
                    "conversion failed: " + "; ".join(d.message for d in res.diagnostics))
                continue
            try:
                self._run_converted(res.code, f"converted_case_{i}", built.ms_ns)
            except Exception as exc:  # noqa: BLE001
                built.problems.setdefault(i, []).append(f"the converted code does not run: {type(exc).__name__}: {exc}")
                continue
            self._audit(built, i, seg, res.diagnostics, offset + 3, offset + 2 + len(case.body().splitlines()))
        return built

    def _run_converted(self, code: str, name: str, namespace: dict) -> None:
        """Run converted code into ``namespace``: compiled from a string, or (``from_file``)
        imported as a module of that name from a file in a temporary directory."""
        if not self.from_file:
            exec(compile(code, f"<{name}>", "exec"), namespace)
            return
        import importlib.util
        import sys
        import tempfile

        path = Path(tempfile.mkdtemp(prefix="differential-")) / f"{name}_{id(self)}.py"
        path.write_text(code, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        namespace.update(vars(module))

    @staticmethod
    def _audit(built: _Built, i: int, seg: str, diagnostics, first: int, last: int) -> None:
        reasons = built.problems.setdefault(i, [])
        if not seg:
            reasons.append("the converted file has no class for this case")
        if re.search(r"\btorch\b", _strip_comments(seg)):
            reasons.append("converted code still uses torch")
        for marker in re.findall(r"# transpile:.*", seg):
            reasons.append(marker)
        for d in diagnostics:
            if first <= d.line <= last and (
                d.severity.name == "ERROR" or d.safety.name == "MANUAL" or "may not be a tensor" in d.message
            ):
                reasons.append(f"{d.code} {d.severity.name.lower()}: {d.message}")

    def converted_case(self, case: Case) -> str:
        return self.built.segments.get(f"Case_{self._index[id(case)]}", "")

    def check(self, case: Case) -> None:
        built = self.built
        i = self._index[id(case)]
        if built.error:
            raise AssertionError(built.error)
        converted = self.converted_case(case)
        if built.problems.get(i):
            raise AssertionError("not converted:\n  " + "\n  ".join(built.problems[i]) + "\n" + converted)
        import torch

        with torch.no_grad():
            expected = getattr(built.torch_ns[f"Case_{i}"](), case.method)(*(_to_torch(v) for v in case.inputs))
        try:
            actual = getattr(built.ms_ns[f"Case_{i}"](), case.method)(*(_to_ms(v) for v in case.inputs))
        except Exception as exc:
            raise AssertionError(f"the converted case raised {type(exc).__name__}: {exc}\n{converted}") from exc
        try:
            compare(expected, actual, case)
        except Mismatch as exc:
            raise AssertionError(f"{exc}\n--- converted:\n{converted}") from None


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def _class_segments(code: str) -> dict[str, str]:
    tree = ast.parse(code)
    lines = code.splitlines()
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = "\n".join(lines[node.lineno - 1 : node.end_lineno])
    return out


def _ids(cases: Sequence[Case]) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for c in cases:
        base = f"{c.api}[{c.form}]" if c.form else c.api
        n = seen.get(base, 0)
        seen[base] = n + 1
        ids.append(base if n == 0 else f"{base}#{n}")
    return ids


def _parse(args: str) -> list[tuple[str, str]]:
    if not args.strip():
        return []
    call = ast.parse(f"f({args})", mode="eval").body
    return [(k.arg, ast.unparse(k.value)) for k in call.keywords]


def call_forms(cases: list, api: str, args: str, inputs=(), *, req: int | None = None, kw: str = "", posonly: int = 0,
          extra: tuple[str, ...] = (), only: tuple[str, ...] | None = None, **opts) -> None:
    """Append to ``cases`` the cases for ``api`` called with ``args`` ("name=value, ...", in torch's positional order).

    ``req`` leading arguments are required (default: all); ``kw`` are keyword-only
    arguments (written in the positional and keyword forms); ``posonly`` leading
    arguments cannot be keywords. For ``Tensor.m`` the receiver is ``a``.
    ``extra`` adds more argument lists (each its own case, written as given).
    """
    pairs, kwpairs = _parse(args), _parse(kw)
    req = len(pairs) if req is None else req
    call = f"a.{api.split('.', 1)[1]}" if api.startswith("Tensor.") else api
    kws = [f"{k}={v}" for k, v in kwpairs]

    def emit(form, parts):
        if only is None or form in only:
            cases.append(Case(api, f"{call}({', '.join(parts)})", tuple(inputs), form, **opts))

    if not pairs and not kwpairs:
        emit("call", [])
    else:
        emit("positional", [v for _, v in pairs] + kws)
        emit("keyword", [v for _, v in pairs[:posonly]] + [f"{k}={v}" for k, v in pairs[posonly:]] + kws)
        if req < len(pairs) or kwpairs:
            emit("defaults", [v for _, v in pairs[:req]])
        elif len(pairs) >= 2:
            emit("mixed", [v for _, v in pairs[:1]] + [f"{k}={v}" for k, v in pairs[1:]])
    for i, e in enumerate(extra):
        emit(f"extra{i}", [e] if e else [])


def table_entries(files: Iterable[str | Path], select: Callable[[str], bool] = lambda name: True) -> dict[str, dict]:
    """Entries of the given table files (names relative to rewrites/tables) -> their data."""
    out: dict[str, dict] = {}
    for f in files:
        path = Path(f) if Path(f).is_absolute() else TABLE_DIR / f
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        data.pop("kind", None)
        data.pop("modules", None)
        for name, body in data.items():
            if select(name):
                out[name] = body
    return out


def uncovered(files: Iterable[str | Path], apis: Iterable[str], select: Callable[[str], bool] = lambda name: True) -> list[str]:
    """Converted entries of ``files`` (those without ``unsupported``) with no case."""
    apis = set(apis)
    return sorted(n for n, body in table_entries(files, select).items() if not body.get("unsupported") and n not in apis)


def coverage_gaps(files: Iterable[str | Path], cases: Sequence["Case"],
                  select: Callable[[str], bool] = lambda name: True) -> dict[str, list[str]]:
    """What a table's differential cases miss: converted entries with no case, and entries
    taking arguments called in fewer than three forms (empty lists when none)."""
    return {"converted entries with no differential case": uncovered(files, {c.api for c in cases}, select),
            "entries taking arguments with fewer than three call forms": few_forms(files, cases, select)}


def few_forms(files: Iterable[str | Path], cases: Iterable["Case"], select: Callable[[str], bool] = lambda name: True,
              wanted: int = 3) -> list[str]:
    """Converted entries of ``files`` taking arguments that fewer than ``wanted`` cases call."""
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.api] = counts.get(c.api, 0) + 1
    return sorted(n for n, body in table_entries(files, select).items()
                  if not body.get("unsupported") and body.get("params") and counts.get(n, 0) < wanted)


def table_tests(suite: Suite, tables: Sequence[str]):
    """The two tests of a table's differential module: each case run against torch, and
    every converted entry of ``tables`` covered in three forms. Use as
    ``test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["x.toml"])``."""
    import pytest

    @pytest.mark.parametrize("case", suite.cases, ids=suite.ids)
    def test_api(case: Case) -> None:
        suite.check(case)

    def test_every_entry_has_cases_in_three_forms() -> None:
        gaps = coverage_gaps(tables, suite.cases)
        assert not any(gaps.values()), gaps

    return test_api, test_every_entry_has_cases_in_three_forms


def case_builders(cases: list):
    """``forms(api, args, inputs, ...)`` (``call_forms``) and ``case(api, code, inputs,
    form, ...)``, both appending to ``cases``: how a table's test module writes its cases."""
    def forms(api: str, args: str, inputs=(), **kwargs) -> None:
        call_forms(cases, api, args, inputs, **kwargs)

    def case(api: str, code: str, inputs=(), form: str = "", **opts) -> None:
        cases.append(Case(api, code, tuple(inputs), form, **opts))

    return forms, case


def converted_markers(source: str) -> tuple[str, list[str]]:
    """The tool's output for ``source`` and its ``# transpile:`` marker lines (what a
    refused call leaves behind)."""
    from transpile import convert_code

    code = convert_code(source).code
    return code, [line for line in code.splitlines() if "# transpile:" in line]
