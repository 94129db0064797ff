"""The tables against the installed frameworks: symbols exist, defaults and keywords match."""
from __future__ import annotations


import pytest

from transpile.rewrites.table_calls import LEGACY_REDUCTION_ARGS, TABLE_DIR, tables
from transpile.rewrites.hooks import HOOKS
from transpile.tables import TableError, load_tables

from differential.symbols import resolve, signature

ENTRIES = tables().all_entries()


def source_object(entry):
    import torch

    if entry.kind == "method":
        return getattr(torch.Tensor, entry.source.removeprefix("Tensor."))
    if entry.kind == "module_method":  # torch.nn.Module.parameters, torch.nn.RNNBase.flatten_parameters
        owner, name = entry.source.rsplit(".", 1)
        return getattr(resolve(owner), name)
    return resolve(entry.source)


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


@pytest.mark.framework
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.params or e.defaults], ids=lambda e: e.source)
def test_recorded_params_and_defaults_match_torch(entry) -> None:
    sig = signature(source_object(entry))
    if sig is None:
        pytest.skip("no Python signature to compare with")
    params = {n: p for n, p in sig.parameters.items() if n != "self"}
    if any(p.kind is p.VAR_KEYWORD for p in params.values()) and len(params) <= 2:
        pytest.skip("signature is *args/**kwargs only")
    positional = [
        ("*" + n) if p.kind is p.VAR_POSITIONAL else n
        for n, p in params.items()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    assert list(entry.params) == positional[: len(entry.params)], f"torch order is {positional}"
    for name, value in entry.defaults.items():
        assert name in params, f"{name} is not a parameter of {entry.source}"
        assert params[name].default == value, f"torch default of {name} is {params[name].default!r}"


@pytest.mark.framework
@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.target and not e.target.startswith(".") and e.params], ids=lambda e: e.source
)
def test_emitted_keywords_exist_in_the_target(entry) -> None:
    sig = signature(resolve(entry.target))
    if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        pytest.skip("target takes **kwargs or has no signature")
    names = set(sig.parameters)
    emitted = {entry.rename.get(p.lstrip("*"), p.lstrip("*")) for p in entry.params}
    emitted |= {entry.rename.get(k, k) for k in entry.kwonly} | set(entry.set)
    emitted -= set(entry.drop) | set(entry.unsupported_args) | set(LEGACY_REDUCTION_ARGS) | {"*"}
    if entry.receiver:
        emitted.add(entry.receiver)
    if entry.hook:
        emitted = (emitted - HOOKS[entry.hook].consumes) | HOOKS[entry.hook].adds
    assert emitted <= names, f"not parameters of {entry.target}: {sorted(emitted - names)}"


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
