"""The run-time helpers (rewrites/runtime/) as the converter reads them, without MindSpore:
every name a helper uses resolves where the helper is copied, the registry's cheap name
scan agrees with its parse, and a copy spells the module names as the file binds them.
(tests/test_runtime.py imports the modules and calls the helpers on MindSpore.)
"""
from __future__ import annotations

import ast
import builtins
import subprocess
import symtable
import sys

import libcst as cst
import pytest

from transpile import convert_code
from transpile.rewrites.runtime.registry import (closure, families, family_helpers, helper_names, helpers, module_imports,
                                                 runtime_helper)
from transpile.rewrites.syntax import is_emitted_name

HELPERS = sorted({h.name: h for h in helpers().values()}.values(), key=lambda h: h.name)
TREES = {path.stem: ast.parse(path.read_text(encoding="utf-8")) for path in families()}
IMPORTS = {family: module_imports(tree) for family, tree in TREES.items()}
# the helpers of other families a family's module imports (``from .indexing import _torch_number``)
SIBLINGS = {family: {a.asname or a.name for s in tree.body if isinstance(s, ast.ImportFrom) and s.level == 1
                     for a in s.names} for family, tree in TREES.items()}


def _tables(table: symtable.SymbolTable):
    yield table
    for child in table.get_children():
        yield from _tables(child)


def _global_uses(source: str) -> set[str]:
    """The names ``source`` reads from the module it is defined in (not bound in it)."""
    return {s.get_name() for t in _tables(symtable.symtable(source, "<helper>", "exec"))
            for s in t.get_symbols() if s.is_referenced() and s.is_global() and not s.is_local()}


def _local_bindings(source: str) -> set[str]:
    """Names ``source`` binds inside its functions and classes (parameters, assignments, imports)."""
    return {s.get_name() for t in _tables(symtable.symtable(source, "<helper>", "exec")) if t.get_type() != "module"
            for s in t.get_symbols() if s.is_parameter() or s.is_assigned() or s.is_imported()}


def test_the_families_define_helpers() -> None:
    assert {p.stem for p in families()} >= {"indexing", "tensor_math", "rnn_cells", "special", "nn_utils",
                                            "distributions", "nn_ops"}
    assert len(HELPERS) > 100


@pytest.mark.parametrize("helper", HELPERS, ids=lambda h: h.name)
def test_every_name_a_helper_uses_resolves(helper) -> None:
    """A builtin, an import of its module (spelled as the file binds it), another helper
    of its module or one its module imports from another family (copied with it), or its
    own: anything else would be a NameError in the converted file or in its module."""
    own_family = {n for n, h in helpers().items() if h.family == helper.family}
    allowed = set(dir(builtins)) | set(IMPORTS[helper.family]) | own_family | SIBLINGS[helper.family]
    assert _global_uses(helper.source) - allowed == set()


@pytest.mark.parametrize("family", sorted(SIBLINGS))
def test_a_family_imports_only_helpers_from_the_others(family: str) -> None:
    assert all(helpers().get(name) and helpers()[name].family != family for name in SIBLINGS[family])


@pytest.mark.parametrize("helper", HELPERS, ids=lambda h: h.name)
def test_no_helper_rebinds_a_module_import(helper) -> None:
    """The copy respells every use of an imported name: a local of that name would be respelled too."""
    assert _local_bindings(helper.source) & set(IMPORTS[helper.family]) == set()


@pytest.mark.parametrize("helper", HELPERS, ids=lambda h: h.name)
def test_every_helper_is_recognised_as_the_tools_own(helper) -> None:
    assert all(is_emitted_name(name) for name in helper.defines)


def test_the_name_scan_agrees_with_the_parse() -> None:
    assert helper_names() == set(helpers())


def test_no_name_is_defined_by_two_families() -> None:
    defined = [name for family in IMPORTS for name in family_helpers(family)]
    assert len(defined) == len(set(defined))


class _File:
    """What ``runtime_helper`` asks of a file's context: its spellings and its definitions."""

    def __init__(self, spellings: dict[str, str]):
        self.spellings, self.definitions, self.requested = spellings, {}, []

    def reference(self, target: str) -> cst.BaseExpression:
        module, _, name = target.rpartition(".")
        self.requested.append(module)
        return cst.parse_expression(f"{self.spellings[module]}.{name}")

    def define(self, name: str, source: str) -> None:
        self.definitions.setdefault(name, source)


def test_a_copy_spells_the_modules_as_the_file_binds_them() -> None:
    file = _File({"mindspore": "mindspore", "mindspore.ops": "mindspore.ops"})
    assert runtime_helper(file, "_torch_index_add").value == "_torch_index_add"
    assert set(file.definitions) == {"_torch_index_add", "_torch_scatter_reduce", "_torch_expand_index", "_torch_number"}
    assert "return mindspore.ops.broadcast_to(" in file.definitions["_torch_expand_index"]
    assert "mindspore.Tensor(value, like.dtype)" in file.definitions["_torch_number"]
    # names that only contain a module's name, attributes and strings are not respelled
    assert "input.ndim" in file.definitions["_torch_index_add"]
    assert set(file.requested) == {"mindspore", "mindspore.ops"}


def test_the_copy_is_made_once_per_file() -> None:
    file = _File({"mindspore": "ms", "mindspore.ops": "ops"})
    runtime_helper(file, "_torch_index_copy")
    first = dict(file.definitions)
    file.spellings = {"mindspore": "other", "mindspore.ops": "other_ops"}
    runtime_helper(file, "_torch_index_add")
    assert {k: file.definitions[k] for k in first} == first


def test_dependencies_are_followed_through_other_families() -> None:
    """tensor_math's broadcast_tensors uses indexing's broadcast_shapes."""
    assert set(closure("_torch_broadcast_tensors")) == {"_torch_broadcast_tensors", "_torch_broadcast_shapes"}


def test_statements_after_a_helper_are_copied_with_it() -> None:
    """kthvalue returns a named tuple whose type is defined after the function."""
    helper = helpers()["_torch_kthvalue_result"]
    assert helper.name == "_torch_kthvalue"
    assert "_torch_kthvalue_result = " in helper.source


def test_a_constant_table_is_a_helper_of_its_own() -> None:
    """setattr's helper reads the parameter-name table that get_parameter reads too: it
    gets the table, not get_parameter and the helpers that one needs."""
    table = helpers()["_TORCH_PARAMETER_NAMES"]
    assert table.name == "_TORCH_PARAMETER_NAMES" and table.source.startswith("_TORCH_PARAMETER_NAMES = {")
    assert "_TORCH_PARAMETER_NAMES = " not in helpers()["_get_parameter"].source
    assert set(closure("_torch_setattr")) == {"_torch_setattr", "_torch_set_layer_attribute", "_TORCH_PARAMETER_NAMES",
                                             "_torch_rnn_weight_slot", "_TORCH_RNN_WEIGHT"}
    assert "_TORCH_PARAMETER_NAMES" in closure("_get_parameter")


def test_a_converted_file_carries_the_helper_it_calls() -> None:
    result = convert_code("import torch\n\ny = torch.index_fill(x, 1, i, 0.0)\n", filename="f.py")
    tree = ast.parse(result.code)
    assert "_torch_index_fill" in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "y = _torch_index_fill(" in result.code


def test_the_converter_imports_no_helper_module_nor_mindspore() -> None:
    """The helpers are read as text: converting a file that calls one loads neither
    MindSpore nor the helpers' modules."""
    script = ("import sys\nfrom transpile import convert_code\n"
              "r = convert_code('import torch\\ny = torch.special.entr(x)\\nd = torch.distributions.Normal(0, 1)\\n')\n"
              "assert '_special_entr' in r.code and '_TorchNormal' in r.code, r.code\n"
              "loaded = [m for m in sys.modules if m.split('.')[0] in ('mindspore', 'torch')\n"
              "          or (m.startswith('transpile.rewrites.runtime.') and m != 'transpile.rewrites.runtime.registry')]\n"
              "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_precomputed_helper_layouts_are_current_and_used():
    """rewrites/runtime/layouts.json is black's layout of every helper (``make docs``
    writes it); a helper whose source changed is laid out by black again, never stale."""
    import json

    from transpile.engine.formatting import black_layout
    from transpile.rewrites.runtime import registry

    recorded = json.loads(registry.LAYOUTS.read_text(encoding="utf-8"))
    assert recorded == registry.layouts(), "regenerate rewrites/runtime/layouts.json: make docs"
    name, (digest, layout) = next(iter(recorded.items()))
    source = registry.helper(name).source
    assert registry._layout(name, source) == layout == black_layout(source)
    changed = source + "\n\nX = 1\n"
    assert registry._layout(name, changed) == black_layout(changed)


# how a file may spell each module a helper imports, shortest to longest
_SPELLINGS = {"mindspore": ("ms", "mindspore", "mindspore_"), "mindspore.ops": ("F", "ops", "ms.ops", "mindspore.ops"),
              "mindspore.nn": ("nn", "ms.nn", "mindspore.nn"), "numpy": ("np", "numpy"), "functools": ("ft", "functools")}


def test_a_respelled_layout_is_blacks():
    """A helper spelled otherwise than its module (``F`` for ``ops``, ``ms.ops``) takes its
    precomputed layout respelled where each name stands on a line of its own logical line
    that still fits: black's layout of the respelled source, checked on every helper with
    the shortest and longest spellings and two mixes."""
    from transpile.engine.formatting import black_layout
    from transpile.rewrites.runtime import registry

    derived = declined = 0
    for name, found in sorted(registry.helpers().items()):
        if name != found.name or not found.targets:
            continue
        options = [_SPELLINGS.get(t, (t.rsplit(".", 1)[-1], t)) for t in found.targets]
        picks = {tuple(o[0] for o in options), tuple(o[-1] for o in options),
                 tuple(o[i % 2 and -1] for i, o in enumerate(options)), tuple(o[(i + 1) % 2 and -1] for i, o in enumerate(options))}
        for pick in sorted(picks):
            spellings = tuple(zip(found.targets, pick))
            got = registry._respelled_layout(name, spellings)
            if got is None:
                declined += 1
                continue
            derived += 1
            assert got == black_layout(registry.spelled(name, spellings)), (name, spellings)
    assert derived > 200 and declined > 50  # both ways were taken
