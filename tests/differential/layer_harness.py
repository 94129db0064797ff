"""Differential harness for torch.nn layers (classes with weights).

All cases of a test module are written into ONE torch source file, one constructor
per case::

    # --- case 3 ---
    def case_3():
        return nn.Conv2d(3, 8, 3, padding=1)

The file is converted as a whole by ``transpile.convert_code`` (the tool's own
output: no MindSpore is ever written by hand here), both files are exec'd, and for
every case:

* the converted chunk of the case must hold no ``torch`` reference and no
  ``# transpile:`` marker (an unconverted call fails the case), and the conversion must
  report no warning or error on the case's lines;
* the torch module and the MindSpore cell are constructed, the weights copied with
  ``transpile.parity.weights.copy_weights`` (a torch tensor that finds no parameter
  fails, and so does a MindSpore parameter that received nothing);
* both run in eval mode (torch ``.eval()``, MindSpore ``.set_train(False)``) on the
  same inputs, and every output is compared: shape, dtype and values
  (``atol``/``rtol`` 1e-5 unless the case says why not). Random layers compare
  shape and dtype only.
"""
from __future__ import annotations

from .symbols import resolve, signature
import ast
import functools
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

os.environ.setdefault("GLOG_v", "3")
warnings.filterwarnings("ignore")

import numpy as np

from transpile.rewrites.hooks import HOOKS

HEADER = (
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
    "import torch.nn.init as init\n"
)
SENTINEL = "# --- case {} ---"
_SENTINEL_RE = re.compile(r"^# --- case (\d+) ---$", re.M)
_ALIASES = {"nn": "torch.nn", "F": "torch.nn.functional", "init": "torch.nn.init", "torch": "torch"}


# -- inputs -----------------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    """One input array: ``make(rng)`` gives the numpy value fed to both sides."""

    make: Callable[[np.random.Generator], np.ndarray]
    label: str
    ms_dtype: str | None = None  # MindSpore gets this dtype instead (a documented trap)

    def __repr__(self) -> str:
        return self.label


def randn(*shape: int) -> Input:
    return Input(lambda r: r.standard_normal(shape).astype(np.float32), f"randn{shape}")


def rand(*shape: int, low: float = 0.0, high: float = 1.0) -> Input:
    return Input(lambda r: r.uniform(low, high, shape).astype(np.float32), f"rand{shape}")


def randint(high: int, *shape: int, dtype: str = "int64", ms_dtype: str | None = None) -> Input:
    return Input(lambda r: r.integers(0, high, shape).astype(dtype), f"randint({high}){shape}", ms_dtype)


def sign(*shape: int) -> Input:
    """+1/-1 targets (CosineEmbeddingLoss, MarginRankingLoss, ...)."""
    return Input(lambda r: np.where(r.random(shape) < 0.5, -1.0, 1.0).astype(np.float32), f"sign{shape}")


def const(value, dtype: str = "float32", ms_dtype: str | None = None) -> Input:
    arr = np.asarray(value, dtype=dtype)
    return Input(lambda r: arr.copy(), f"const{arr.shape}", ms_dtype)


def probs(*shape: int, axis: int = -1) -> Input:
    """Rows that sum to one (KLDivLoss targets)."""

    def make(r):
        x = r.random(shape).astype(np.float32) + 0.1
        return (x / x.sum(axis=axis, keepdims=True)).astype(np.float32)

    return Input(make, f"probs{shape}")


def log_probs(*shape: int, axis: int = -1) -> Input:
    def make(r):
        x = r.standard_normal(shape).astype(np.float32)
        x = x - x.max(axis=axis, keepdims=True)
        return (x - np.log(np.exp(x).sum(axis=axis, keepdims=True))).astype(np.float32)

    return Input(make, f"log_probs{shape}")


# -- cases ------------------------------------------------------------------------
@dataclass(frozen=True)
class LayerCase:
    expr: str  # torch constructor expression (names: nn, F, init, torch)
    inputs: tuple[Input, ...] = ()
    prelude: str = ""  # module-level torch source the expression needs (a class)
    train: bool = False  # run in training mode
    compare: str = "values"  # "values" | "shape" (random layers)
    atol: float = 1e-5
    rtol: float = 1e-5
    why: str = ""  # why the tolerance or comparison differs from the default
    primary: str | None = None  # the table entry the case is about (default: outermost call)
    extra_ms_params: tuple[str, ...] = ()  # MindSpore parameters with no torch counterpart (why!)
    call: str = ""  # how the layer is called, over m and inputs a, b, c...: "m(a, (b, c))"
    compare_state: bool = False  # also compare every copied tensor after the call (running stats)
    check_dtype: bool = True

    def __post_init__(self):
        loose = self.atol > 1e-5 or self.rtol > 1e-5 or self.compare != "values" or not self.check_dtype
        loose = loose or any(i.ms_dtype for i in self.inputs)
        if (loose or self.extra_ms_params) and not self.why:
            raise ValueError(f"{self.expr}: a looser comparison needs a reason (why=...)")

    @property
    def id(self) -> str:
        s = re.sub(r"\s+", "", self.expr)
        return s if len(s) <= 90 else s[:87] + "..."

    def symbols(self) -> set[str]:
        """Qualified torch names the case calls (``nn.Linear`` -> ``torch.nn.Linear``)."""
        return symbols_in(self.prelude + "\n" + self.expr)

    @property
    def entry(self) -> str:
        if self.primary:
            return self.primary
        call = ast.parse(self.expr, mode="eval").body
        assert isinstance(call, ast.Call), self.expr
        return _qualify(call.func)


def _qualify(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in _ALIASES:
        return None
    return ".".join([_ALIASES[node.id], *reversed(parts)])


def symbols_in(source: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            q = _qualify(node.func)
            if q:
                out.add(q)
    return out


def forms(
    func: str,
    args: Sequence[tuple[str, str]],
    required: int,
    inputs: Sequence[Input] = (),
    kwonly: Sequence[tuple[str, str]] = (),
    minimal: str | None = None,
    **options: Any,
) -> list[LayerCase]:
    """Three call forms of one constructor: all positional, all keyword, defaults omitted.

    ``args`` are (torch parameter name, source text) pairs in torch's positional order;
    the first ``required`` have no default. Keyword-only arguments are always keywords.
    ``minimal`` replaces the defaults-omitted argument list when torch needs one of the
    optional arguments (``nn.Upsample(scale_factor=2)``).
    """
    kw = [f"{k}={v}" for k, v in kwonly]
    positional = ", ".join([v for _, v in args] + kw)
    keyword = ", ".join([f"{k}={v}" for k, v in args] + kw)
    if minimal is None:
        minimal = ", ".join(v for _, v in args[:required])
    exprs = [f"{func}({positional})", f"{func}({keyword})", f"{func}({minimal})"]
    seen: list[str] = []
    for e in exprs:  # a constructor without optional arguments has fewer distinct forms
        if e not in seen:
            seen.append(e)
    return [LayerCase(e, tuple(inputs), **options) for e in seen]


# -- conversion -------------------------------------------------------------------
@dataclass
class Converted:
    source: str
    code: str
    chunks: dict[int, str]  # case index -> its converted text
    torch_ns: dict
    ms_ns: dict
    warnings: dict[int, list[str]] = field(default_factory=dict)  # case index -> diagnostics


def build_source(cases: Sequence[LayerCase]) -> str:
    parts = [HEADER]
    for i, case in enumerate(cases):
        parts.append(f"\n{SENTINEL.format(i)}\n")
        if case.prelude:
            parts.append(case.prelude.strip("\n") + "\n\n")
        parts.append(f"def case_{i}():\n    return {case.expr}\n")
    return "".join(parts)


def split_chunks(code: str) -> dict[int, str]:
    marks = list(_SENTINEL_RE.finditer(code))
    out = {}
    for n, m in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(code)
        out[int(m.group(1))] = code[m.end():end]
    return out


def _spans(source: str) -> dict[int, tuple[int, int]]:
    """Case index -> (first, last) line of its torch source."""
    lines = source.splitlines()
    starts = [(n + 1, int(m.group(1))) for n, line in enumerate(lines) if (m := _SENTINEL_RE.match(line))]
    return {
        idx: (first, (starts[k + 1][0] - 1) if k + 1 < len(starts) else len(lines))
        for k, (first, idx) in enumerate(starts)
    }


@functools.lru_cache(maxsize=None)
def _convert(source: str):
    from transpile import convert_code

    result = convert_code(source, filename="layer_cases.py")
    warnings: dict[int, list[str]] = {}
    for idx, (first, last) in _spans(source).items():
        for d in result.diagnostics:
            if first <= d.line <= last and d.severity.name in ("WARNING", "ERROR"):
                warnings.setdefault(idx, []).append(f"{d.code} {d.severity.name.lower()}: {d.message}")
    return result.code, result.failed, warnings


def convert_cases(cases: Sequence[LayerCase]) -> Converted:
    source = build_source(cases)
    code, failed, warnings = _convert(source)
    if failed:
        raise AssertionError("the converter failed on the whole case file")
    torch_ns: dict = {}
    exec(compile(source, "<torch cases>", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(code, "<converted cases>", "exec"), ms_ns)
    return Converted(source, code, split_chunks(code), torch_ns, ms_ns, warnings)


def unconverted(chunk: str) -> list[str]:
    """Lines of a converted chunk that still use torch or carry a transpile marker."""
    return [
        line for line in chunk.splitlines()
        if "# transpile:" in line or re.search(r"\btorch\b", line.split("#", 1)[0])
    ]


# -- running ----------------------------------------------------------------------
def _flatten(x) -> list:
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flatten(item)]
    return [x]


def _np_torch(t) -> np.ndarray:
    import torch

    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def _np_ms(t) -> np.ndarray:
    import mindspore

    if isinstance(t, mindspore.Tensor):
        return t.asnumpy()
    return np.asarray(t)


def make_inputs(case: LayerCase, seed: int = 0):
    import mindspore
    import torch

    rng = np.random.default_rng(seed)
    arrays = [inp.make(rng) for inp in case.inputs]
    t_in = [torch.from_numpy(a.copy()) for a in arrays]
    m_in = [
        mindspore.Tensor(a.astype(inp.ms_dtype) if inp.ms_dtype else a.copy())
        for a, inp in zip(arrays, case.inputs)
    ]
    return t_in, m_in


def compare_outputs(
    t_out, m_out, *, shape_only: bool, atol: float, rtol: float, what: str = "", check_dtype: bool = True
) -> None:
    t_flat, m_flat = _flatten(t_out), _flatten(m_out)
    assert len(t_flat) == len(m_flat), f"{what}: torch gave {len(t_flat)} outputs, MindSpore {len(m_flat)}"
    for n, (t, m) in enumerate(zip(t_flat, m_flat)):
        if t is None or m is None:
            assert t is None and m is None, f"{what} output {n}: torch {t!r}, MindSpore {m!r}"
            continue
        tn, mn = _np_torch(t), _np_ms(m)
        assert tn.shape == mn.shape, f"{what} output {n}: shape torch {tn.shape} != MindSpore {mn.shape}"
        if check_dtype:
            assert tn.dtype == mn.dtype, f"{what} output {n}: dtype torch {tn.dtype} != MindSpore {mn.dtype}"
        if not shape_only:
            np.testing.assert_allclose(mn, tn, atol=atol, rtol=rtol, err_msg=f"{what} output {n}")


def _ms_holder(cell):
    import mindspore

    holder = mindspore.nn.Cell()
    holder.m = cell
    return holder


def run_case(conv: Converted, index: int, case: LayerCase) -> None:
    import torch

    from transpile.parity.weights import copy_weights, weight_map

    chunk = conv.chunks.get(index, "")
    bad = unconverted(chunk)
    assert not bad, "not converted:\n" + "\n".join(bad) + "\n--- converted ---\n" + chunk
    warned = conv.warnings.get(index, [])
    assert not warned, "the conversion warned:\n" + "\n".join(warned) + "\n--- converted ---\n" + chunk
    torch.manual_seed(0)
    t_mod = conv.torch_ns[f"case_{index}"]()
    m_cell = conv.ms_ns[f"case_{index}"]()

    # Both sides are held as attribute ``m`` of a parent, as layers are in real models:
    # a bare MindSpore cell keeps its parameters' construction names ("mean" for
    # BatchNorm's moving_mean), a held one gets attribute paths ("m.moving_mean").
    t_holder = torch.nn.Module()
    t_holder.add_module("m", t_mod)
    m_holder = _ms_holder(m_cell)
    missing = copy_weights(t_holder, m_holder)
    assert not missing, f"torch weights with no MindSpore parameter: {missing}\n{chunk}"
    written = set(weight_map(t_holder).mapping.values())
    ms_params = {p.name for p in m_holder.get_parameters()}
    extra = {f"m.{name}" for name in case.extra_ms_params}
    unwritten = ms_params - written - extra
    assert not unwritten, f"MindSpore parameters no torch weight was copied to: {sorted(unwritten)}"

    if case.train:
        t_mod.train()
        m_cell.set_train(True)
    else:
        t_mod.eval()
        m_cell.set_train(False)
    t_in, m_in = make_inputs(case)
    if case.call:
        names = "abcdefgh"[: len(t_in)]
        fn = eval(f"lambda m, {', '.join(names)}: {case.call}" if names else f"lambda m: {case.call}")
        with torch.no_grad():
            t_out = fn(t_mod, *t_in)
        m_out = fn(m_cell, *m_in)
    else:
        with torch.no_grad():
            t_out = t_mod(*t_in)
        m_out = m_cell(*m_in)
    compare_outputs(
        t_out, m_out, shape_only=case.compare == "shape", atol=case.atol, rtol=case.rtol,
        what=f"{case.expr}\n{chunk.strip()}\n", check_dtype=case.check_dtype,
    )
    if case.compare_state:
        state = t_holder.state_dict()
        params = dict(m_holder.parameters_and_names())
        for key, name in weight_map(t_holder).mapping.items():
            np.testing.assert_allclose(
                params[name].asnumpy().reshape(state[key].shape), state[key].detach().numpy(),
                atol=case.atol, rtol=case.rtol, err_msg=f"{key} -> {name} after the call\n{chunk}",
            )


def coverage(cases: Sequence[LayerCase]) -> tuple[dict[str, int], set[str]]:
    """Per primary entry, the number of cases; and every symbol any case calls."""
    primary: dict[str, int] = {}
    called: set[str] = set()
    for c in cases:
        primary[c.entry] = primary.get(c.entry, 0) + 1
        called |= c.symbols()
    return primary, called


# -- table entries against the installed signatures ---------------------------------
_resolve = resolve


def _signature(obj):
    sig = signature(obj)
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.name != "self"]
    if any(p.kind is p.VAR_POSITIONAL for p in params) and len(params) <= 2:
        return None  # (*args, **kwargs): nothing to check against
    return params


def signature_problems(entries: dict, hook_targets_are_calls: bool = True) -> list[str]:
    """Differences between table entries and the installed torch / MindSpore:
    a missing symbol, ``params`` not in torch's positional order, a ``defaults`` value
    that is not torch's default, a target keyword MindSpore does not accept."""
    import inspect

    problems = []
    for name, body in entries.items():
        if body.get("unsupported"):
            try:
                _resolve(name)
            except (ImportError, AttributeError):
                problems.append(f"{name}: not in the installed torch")
            continue
        try:
            src = _resolve(name)
        except (ImportError, AttributeError):
            problems.append(f"{name}: not in the installed torch")
            continue
        target = None
        if body.get("target"):
            try:
                target = _resolve(body["target"])
            except (ImportError, AttributeError):
                problems.append(f"{name}: target {body['target']} not in the installed MindSpore")
                continue
        tparams = _signature(src)
        params = body.get("params", [])
        if tparams is not None and params:
            positional = [p.name for p in tparams if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            kwonly = [p.name for p in tparams if p.kind is p.KEYWORD_ONLY]
            if positional != list(params):
                problems.append(f"{name}: params {params} != torch's positional {positional}")
            if set(body.get("kwonly", [])) - set(kwonly):
                problems.append(f"{name}: kwonly {body.get('kwonly')} not keyword-only in torch {kwonly}")
            given = {p.name: p.default for p in tparams}
            for arg, value in body.get("defaults", {}).items():
                if arg in given and given[arg] != value:
                    problems.append(f"{name}: defaults {arg}={value!r} but torch's default is {given[arg]!r}")
        if target is None or not (inspect.isclass(target) or inspect.isfunction(target)):
            continue
        mparams = _signature(target)
        if mparams is None or any(p.kind is p.VAR_KEYWORD for p in mparams):
            continue
        accepted = {p.name for p in mparams}
        from transpile.rewrites.table_calls import LEGACY_REDUCTION_ARGS  # become reduction=

        skip = set(body.get("drop", [])) | set(body.get("unsupported_args", {})) | set(LEGACY_REDUCTION_ARGS)
        wanted = {body.get("rename", {}).get(a, a) for a in [*params, *body.get("kwonly", [])] if a not in skip}
        if body.get("hook") and "input" in wanted and "input" not in accepted:
            wanted.discard("input")  # expression hooks place the input themselves
        wanted |= set(body.get("set", {}))
        if body.get("hook"):
            wanted -= HOOKS[body["hook"]].consumes
        unknown = sorted(wanted - accepted)
        if unknown:
            problems.append(f"{name}: {body['target']} takes no {unknown} (it takes {sorted(accepted)})")
    return problems
