"""The tables against the installed frameworks: symbols exist, defaults and keywords match."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import pytest

from transpile.rewrites.table_calls import LEGACY_REDUCTION_ARGS, OUT_ARG, TABLE_DIR, tables
from transpile.rewrites.hooks import HOOKS
from transpile.engine.tables import TableError, load_tables

from differential.symbols import resolve, signature

ENTRIES = tables().all_entries()

# The entries of test_recorded_params_and_defaults_match_torch that torch describes nowhere
# (no Python signature, no override lambda, no ATen schema) or describes wrongly (its
# tables disagree with what its Python binding takes, checked by calling torch 2.13),
# each with the reason. Their params are exercised by the differential tests only.
_LEGACY_TYPE = "a legacy tensor type (torch.FloatTensor(*data)): a C type with no signature in any torch table"
_UNREDUCED = ("the ATen schema says reduction=Mean (1); the Python binding's default is 0, unreduced "
              "(checked: torch.<loss>(a, b) keeps the batch shape)")
_CORRECTION = ("the recorded params are the dim overload's; correction's default is None in torch's schema, "
               "which torch documents as 1 (Bessel's correction), the value the table writes out")
UNCHECKED_SIGNATURES: dict[str, str] = {
    **{f"torch.{t}Tensor": _LEGACY_TYPE for t in ("BFloat16", "Bool", "Byte", "Char", "Double", "Float",
                                                   "Half", "Int", "Long", "Short")},
    "torch.finfo": "a C type taking one dtype: no signature in any torch table",
    "torch.sparse.mm": "C function, in neither torch's override tables nor the ATen schemas (its signature: "
                       "sparse, dense, reduce; keywords checked by its cases)",
    "torch.sparse.addmm": "C function, in neither torch's override tables nor the ATen schemas (its documented "
                          "signature: input, mat1, mat2, *, beta=1., alpha=1.; keywords checked by its cases)",
    "torch.autograd.Variable": "a legacy C type: (data, requires_grad, volatile) by position and keyword (checked)",
    "torch.iinfo": "a C type taking one dtype: no signature in any torch table",
    "torch.from_numpy": "C function, in neither torch's override tables nor the ATen schemas",
    "torch.frombuffer": "C function, in neither torch's override tables nor the ATen schemas (its documented "
                        "signature: buffer, *, dtype, count=-1, offset=0, requires_grad=False; checked)",
    "torch.utils.dlpack.to_dlpack": "C function taking one tensor by position, in no torch table (checked)",
    "Tensor.new_tensor": "C method, in neither torch's override tables nor the ATen schemas",
    "Tensor.new": "torch's legacy constructor, a C method: in neither torch's override tables nor the ATen schemas",
    "Tensor.to": "overloads (dtype / device, dtype / other tensor) the table records as *args",
    "Tensor.cuda": ("the override table gives (memory_format); the binding takes device, non_blocking, "
                    "memory_format (checked: the keywords parse; this machine has no CUDA to run it)"),
    "Tensor.map_": "the override table names (tensor, callable); the binding takes (other, callable) (checked)",
    "torch.Generator": "the override table makes device keyword-only; the binding takes it by position (checked)",
    "torch.linalg.vector_norm": "the override table and schema say input; the binding takes the documented x= too (checked)",
    "Tensor.nan_to_num": "torch's schema default nan=None means 0.0, the value the table writes out",
    **{f"torch.{loss}": _UNREDUCED for loss in ("binary_cross_entropy_with_logits", "cosine_embedding_loss",
                                                "ctc_loss", "hinge_embedding_loss", "kl_div", "margin_ranking_loss")},
    **{name: _CORRECTION for name in ("torch.std", "torch.var", "torch.std_mean", "torch.var_mean",
                                      "Tensor.std", "Tensor.var")},
    **{f"torch.nn.{rnn}": ("__init__(*args, **kwargs) dispatching on overloads; RNNBase.__init__ adds mode "
                           "(and RNN's nonlinearity is its own)") for rnn in ("RNN", "GRU", "LSTM")},
}
# Entries torch's tables prove wrong: the test fails until rewrites/tables is mended (strict xfail).
TABLE_ERRORS: dict[str, str] = {
    "Tensor.to_sparse": "the table records sparseDims; torch 2.13 takes sparse_dim (to_sparse(sparseDims=1) raises)",
}


def source_object(entry):
    import torch

    if entry.kind == "method":
        return getattr(torch.Tensor, entry.source.removeprefix("Tensor."))
    if entry.kind == "module_method":  # torch.nn.Module.parameters, torch.nn.RNNBase.flatten_parameters
        owner, name = entry.source.rsplit(".", 1)
        return getattr(resolve(owner), name)
    obj = resolve(entry.source)
    if inspect.ismodule(obj):  # torch.nn.utils.weight_norm: the package binds the function over its module
        owner, name = entry.source.rsplit(".", 1)
        obj = getattr(resolve(owner), name)
    return obj


# -- torch's signatures, where the object itself has no Python one ------------------------
# C-implemented torch functions and Tensor methods have no ``inspect.signature``. torch's
# own tables give one: ``torch.overrides.get_testing_overrides()`` (a lambda with the
# Python signature of most of them), then the ATen operator schemas (every overload of
# ``aten::<name>``: in-place variants, factories, ``_foreach_*``). An entry must agree with
# one of them (torch.max(input) / max(input, dim, keepdim) / max(input, other) are overloads).
_ATEN_PREFIXES = {"torch.fft.": "fft_", "torch.linalg.": "linalg_", "torch.special.": "special_",
                  "torch.nn.functional.": "", "torch.": "", "Tensor.": ""}
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class Param:
    """A parameter of a torch signature (``from`` is one: inspect.Parameter refuses it)."""

    name: str
    kind: inspect._ParameterKind
    default: object = inspect.Parameter.empty


def _params(sig: inspect.Signature) -> list[Param]:
    return [Param(n, p.kind, p.default) for n, p in sig.parameters.items() if n != "self"]


@functools.lru_cache(maxsize=None)
def _testing_overrides() -> dict:
    import torch

    return torch.overrides.get_testing_overrides()


def _aten_signatures(entry) -> list[list[Param]]:
    """The overloads of ``entry``'s ATen operator as Python signatures, as torch's argument
    parser reads them: a ``Tensor self`` is ``input`` for a torch function and dropped for a
    method; an int list first may be given as separate arguments (``x.view(2, 3)``)."""
    import torch

    prefix = next(p for p in _ATEN_PREFIXES if entry.source.startswith(p))
    op = "aten::" + _ATEN_PREFIXES[prefix] + entry.source.removeprefix(prefix)
    out = []
    for schema in torch._C._jit_get_schemas_for_operator(op):
        params, types = [], []
        for arg in schema.arguments:
            tensor_self = arg.name == "self" and str(arg.type) == "Tensor"
            if tensor_self and entry.kind == "method":
                continue
            kind = inspect.Parameter.KEYWORD_ONLY if arg.kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            default = arg.default_value if arg.has_default_value() else inspect.Parameter.empty
            params.append(Param("input" if tensor_self else arg.name, kind, default))
            types.append(str(arg.type))
        out.append(params)
        if params and params[0].kind in _POSITIONAL and types[0] == "List[int]":
            rest = [Param(p.name, inspect.Parameter.KEYWORD_ONLY, p.default) for p in params[1:]]
            out.append([Param(params[0].name, inspect.Parameter.VAR_POSITIONAL)] + rest)
    return out


def _python_signature(entry, obj) -> inspect.Signature | None:
    """The object's own signature, seen through torch's Python wrappers: a class built in
    ``__new__`` (Parameter, Buffer), a ``boolean_dispatch`` (F.max_pool2d: its two functions
    share the parameters), a deprecated ``torch.nn.init`` alias (``normal`` for ``normal_``)."""
    sig = signature(obj)
    if sig is not None and not _args_kwargs_only(sig):
        return sig
    if inspect.isclass(obj):
        try:
            return inspect.signature(obj)
        except (TypeError, ValueError):
            return None
    closure = inspect.getclosurevars(obj).nonlocals if inspect.isfunction(obj) else {}
    if "if_false" in closure:
        return signature(closure["if_false"])
    if entry.source.startswith("torch.nn.init.") and not entry.source.endswith("_"):
        return signature(resolve(entry.source + "_"))
    return None


def torch_signatures(entry) -> tuple[str, list[list[Param]]]:
    """Where the signatures come from and the candidates: the object's own (one), else
    torch's testing overrides and the ATen schemas (every overload)."""
    obj = source_object(entry)
    sig = _python_signature(entry, obj)
    if sig is not None and not _args_kwargs_only(sig):
        return "python", [_params(sig)]
    found = []
    override = _testing_overrides().get(obj)
    if override is not None:
        found.append(_params(inspect.signature(override)))
    if entry.kind in ("function", "method"):
        found += _aten_signatures(entry)
    return ("torch tables", found) if found else ("none", [])


def _args_kwargs_only(sig: inspect.Signature) -> bool:
    params = [p for n, p in sig.parameters.items() if n != "self"]
    return any(p.kind is p.VAR_KEYWORD for p in params) and len(params) <= 2


def _disagreement(entry, params: list[Param]) -> str | None:
    """Why ``entry``'s recorded parameters and defaults disagree with ``params`` (None: they agree)."""
    named = {p.name: p for p in params}
    positional = [("*" + p.name) if p.kind is inspect.Parameter.VAR_POSITIONAL else p.name
                  for p in params if p.kind in (*_POSITIONAL, inspect.Parameter.VAR_POSITIONAL)]
    if list(entry.params) != positional[: len(entry.params)]:
        return f"torch order is {positional}"
    for name, value in entry.defaults.items():
        if name not in named:
            return f"{name} is not a parameter"
        if named[name].default != value:
            return f"torch default of {name} is {named[name].default!r}"
    return None


def _show(params: list[Param]) -> str:
    return "(" + ", ".join(("*" if p.kind is inspect.Parameter.VAR_POSITIONAL else "") + p.name
                           + ("" if p.default is inspect.Parameter.empty else f"={p.default!r}")
                           for p in params) + ")"


@pytest.mark.framework
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.source)
def test_source_symbol_exists(entry) -> None:
    source_object(entry)


@pytest.mark.framework
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.target], ids=lambda e: e.source)
def test_target_symbol_exists(entry) -> None:
    import mindspore

    if entry.target.startswith("."):
        owner = mindspore.nn.Cell if entry.kind == "module_method" else mindspore.Tensor
        assert hasattr(owner, entry.target[1:])
    elif "." not in entry.target:  # a Python builtin (torch.Size -> tuple)
        import builtins

        assert hasattr(builtins, entry.target)
    else:
        resolve(entry.target)


def _params_cases():
    for e in ENTRIES:
        if not (e.params or e.defaults):
            continue
        marks = [pytest.mark.xfail(reason=TABLE_ERRORS[e.source], strict=True)] if e.source in TABLE_ERRORS else []
        yield pytest.param(e, id=e.source, marks=marks)


@pytest.mark.framework
@pytest.mark.parametrize("entry", list(_params_cases()))
def test_recorded_params_and_defaults_match_torch(entry) -> None:
    """Against the object's Python signature, else torch's override tables and ATen schemas;
    the entries none of them describes are listed in UNCHECKED_SIGNATURES with the reason."""
    if entry.source in UNCHECKED_SIGNATURES:
        pytest.skip(UNCHECKED_SIGNATURES[entry.source])
    origin, candidates = torch_signatures(entry)
    assert origin != "none", f"{entry.source}: no signature in torch's tables: list it in UNCHECKED_SIGNATURES"
    why = [_disagreement(entry, params) for params in candidates]
    assert None in why, f"{entry.source} ({origin}): " + "; ".join(f"{_show(p)}: {w}" for p, w in zip(candidates, why))


@pytest.mark.framework
def test_unchecked_signatures_are_still_unchecked() -> None:
    """A listed entry that torch's tables now describe (or that left the tables) is listed no more."""
    by_source = {e.source: e for e in ENTRIES}
    stale = [s for s in UNCHECKED_SIGNATURES if s not in by_source
             or (torch_signatures(by_source[s])[0] != "none"
                 and None in [_disagreement(by_source[s], p) for p in torch_signatures(by_source[s])[1]])]
    assert not stale, f"checkable now, remove from UNCHECKED_SIGNATURES: {stale}"


def target_signature(target: str) -> inspect.Signature | None:
    """The target's signature; for MindSpore's generated ``def less(*args, **kwargs)`` the one
    its docstring opens with (``less(input, other) -> Tensor``)."""
    obj = resolve(target)
    sig = signature(obj)
    if sig is not None and _args_kwargs_only(sig):
        name = target.rsplit(".", 1)[1]
        first = (inspect.getdoc(obj) or "").lstrip().split("\n", 1)[0]
        if first.startswith(f"{name}(") and ") ->" in first:
            namespace: dict = {}
            exec(f"def {name}({first[len(name) + 1:first.index(') ->')]}): pass", namespace)
            return inspect.signature(namespace[name])
    return sig


# Targets whose keywords no signature tells (a C constructor, a generic (*args, **kwargs)),
# by target, with the reason; the differential tests call them with the emitted keywords.
UNCHECKED_TARGETS: dict[str, str] = {
    "mindspore.Tensor": "mindspore.Tensor's constructor is C: (self, /, *args, **kwargs)",
    "numpy.finfo": "numpy.finfo is a C type: (self, /, *args, **kwargs)",
    **{f"mindspore.nn.{c}": "its __init__ is (*args, **kwargs), behind an argument-checking decorator"
       for c in ("GRU", "LSTM", "RNN", "CellList")},
    **{f"mindspore.common.initializer.{c}": "an initializer taking only **kwargs: the hook writes no keyword"
       for c in ("Identity", "One", "Zero")},
}


@pytest.mark.framework
@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.target and not e.target.startswith(".") and e.params], ids=lambda e: e.source
)
def test_emitted_keywords_exist_in_the_target(entry) -> None:
    if entry.target in UNCHECKED_TARGETS:
        pytest.skip(UNCHECKED_TARGETS[entry.target])
    sig = target_signature(entry.target)
    assert sig is not None, f"{entry.target} has no signature: list it in UNCHECKED_TARGETS"
    # named parameters only: a **kwargs beside them takes any keyword and proves nothing
    names = {n for n, p in sig.parameters.items() if p.kind is not p.VAR_KEYWORD}
    assert names, f"{entry.target} takes only **kwargs: list it in UNCHECKED_TARGETS"
    emitted = {entry.rename.get(p.lstrip("*"), p.lstrip("*")) for p in entry.params}
    emitted |= {entry.rename.get(k, k) for k in entry.kwonly} | set(entry.set)
    emitted -= set(entry.drop) | set(entry.unsupported_args) | set(LEGACY_REDUCTION_ARGS) | {"*", OUT_ARG}
    if entry.receiver:
        emitted.add(entry.receiver)
    if entry.hook:
        emitted = (emitted - HOOKS[entry.hook].consumes) | HOOKS[entry.hook].adds
    assert emitted <= names, f"not parameters of {entry.target}: {sorted(emitted - names)}"


@pytest.mark.framework
def test_unchecked_targets_are_still_unchecked() -> None:
    named = [t for t in UNCHECKED_TARGETS
             if (sig := target_signature(t)) is not None
             and any(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for n, p in sig.parameters.items() if n != "self")]
    assert not named, f"these have a signature now, remove from UNCHECKED_TARGETS: {named}"


def test_no_duplicates_across_files(tmp_path) -> None:
    for path in TABLE_DIR.glob("*.toml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "zz_dup.toml").write_text('kind = "class"\n["torch.nn.Linear"]\ntarget = "mindspore.nn.Dense"\n')
    with pytest.raises(TableError, match="defined twice"):
        load_tables(tmp_path)


def test_unknown_fields_are_rejected(tmp_path) -> None:
    (tmp_path / "bad.toml").write_text('kind = "function"\n["torch.abs"]\ntarget = "mindspore.ops.abs"\ntypo = 1\n')
    with pytest.raises(TableError, match="unknown fields"):
        load_tables(tmp_path)


def test_unsupported_entries_carry_a_reason() -> None:
    for e in ENTRIES:
        if e.status == "unsupported":
            assert len(e.unsupported.strip()) > 10, e.source


def test_docs_apis_md_is_current() -> None:
    """docs/apis.md is generated: `transpile apis --format markdown > docs/apis.md`."""
    from pathlib import Path

    from transpile.api import apis_markdown, list_apis

    docs = Path(__file__).parent.parent / "docs" / "apis.md"
    assert docs.read_text() == apis_markdown(list_apis()), "regenerate docs/apis.md"


@pytest.mark.framework
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.kind == "module_method" and e.target and (e.params or e.set)],
                         ids=lambda e: e.source)  # (a hook composes the others: m.requires_grad_)
def test_module_method_keywords_exist_on_the_cell(entry) -> None:
    import mindspore

    names = set(signature(getattr(mindspore.nn.Cell, entry.target[1:])).parameters)
    emitted = {entry.rename.get(p, p) for p in entry.params if p not in entry.unsupported_args} | set(entry.set)
    assert emitted <= names, f"not parameters of Cell{entry.target}: {sorted(emitted - names)}"


# Values a tensor_only method must not be a method of (numpy's view takes a dtype; the
# converter converts .view() on an unknown receiver only when no argument looks like one).
_NOT_TENSORS = ("numpy array", "list", "dict", "str", "tuple", "set", "int", "float", "nn.Module")
_TENSOR_ONLY_EXCEPTIONS = {"view": ("numpy array",)}


def _non_tensor_values():
    import numpy as np
    import torch

    return dict(zip(_NOT_TENSORS, (np.zeros(2), [], {}, "", (), set(), 0, 0.0, torch.nn.Module())))


@pytest.mark.framework
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.tensor_only], ids=lambda e: e.source)
def test_tensor_only_methods_belong_to_tensors_only(entry) -> None:
    name = entry.source.removeprefix("Tensor.")
    owners = [kind for kind, value in _non_tensor_values().items()
              if callable(getattr(value, name, None)) and kind not in _TENSOR_ONLY_EXCEPTIONS.get(name, ())]
    assert entry.kind == "method" and not owners, f"{entry.source} is also a method of {owners}"


@pytest.mark.framework
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.call_rename or e.call_drop], ids=lambda e: e.source)
def test_call_keywords_match_both_forwards(entry) -> None:
    """call_rename: a torch forward keyword -> a MindSpore construct keyword; call_drop:
    torch forward keywords MindSpore's construct does not take."""
    torch_names = set(signature(source_object(entry).forward).parameters)
    ms_names = set(signature(resolve(entry.target).construct).parameters)
    assert set(entry.call_rename) | set(entry.call_drop) <= torch_names
    assert set(entry.call_rename.values()) <= ms_names
    assert not (set(entry.call_drop) | set(entry.call_rename)) & ms_names


def test_every_table_has_a_differential_test_module() -> None:
    """Each table file is named by a module of tests/differential, whose coverage test
    (``coverage_gaps``/``uncovered``) holds every converted entry to a case."""
    from pathlib import Path

    texts = "\n".join(p.read_text() for p in (Path(__file__).parent / "differential").glob("test_*.py"))
    orphans = [p.name for p in TABLE_DIR.glob("*.toml")
               if p.name != "modules.toml" and f'"{p.name}"' not in texts]
    assert not orphans, f"tables no differential test module covers: {orphans}"


@pytest.mark.framework
def test_the_torch_version_package_queries_answer_is_the_installed_torch() -> None:
    """MS216's helper tells the converted code it runs on the torch whose API the tables map
    (rewrites/runtime/packages.py): the torch these tests check the tables against."""
    import ast

    import torch

    from transpile.rewrites.runtime.registry import RUNTIME

    tree = ast.parse((RUNTIME / "packages.py").read_text(encoding="utf-8"))
    answered = next(ast.literal_eval(s.value) for s in tree.body
                    if isinstance(s, ast.Assign) and s.targets[0].id == "_TORCH_VERSION_MAPPED")
    assert answered == torch.__version__.split("+")[0]
