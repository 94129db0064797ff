"""Which names hold Modules (Cells once converted): a cheap, local guess, like infer.py's
for tensors.

Known to be a Module:

* ``self`` in the methods of a Module subclass (any import spelling, torch's layer
  classes, local subclasses, subclasses of a Module defined elsewhere in the converted
  tree: ``from .mlp import Mlp``, ``from pkg.layers import Mlp`` re-exported by
  ``pkg/layers/__init__.py``, followed through the tree's class index);
* a name assigned, earlier in the same function (or at the top level), a call of such a
  class (``net = Net()``, ``fc = nn.Linear(2, 1)``), or a Module method that returns
  the Module (``net = net.to(torch.float32)``, ``model = Net().eval()``);
* ``self.X`` where a method of the class assigned ``self.X`` such a call;
* a name (or ``name.attr``) whose ``parameters()``, ``named_parameters()``,
  ``state_dict()``, ``load_state_dict()`` or ``named_modules()`` the same function (or the
  top level) calls: only a Module has them (a training function's ``model``).

Anything else is unknown, never guessed.
"""
from __future__ import annotations

import functools
import sys
import tomllib
from pathlib import Path

import libcst as cst

from transpile.engine.import_table import dotted_name
from transpile.engine.package_index import UNKNOWN


def _container(name: str) -> frozenset[str]:
    """A torch container class under both spellings: torch.nn.X and its defining module."""
    return frozenset({f"torch.nn.{name}", f"torch.nn.modules.container.{name}"})


SEQUENTIAL = _container("Sequential")
MODULE_LIST = _container("ModuleList")
MODULE_DICT = _container("ModuleDict")



# The public names a MindSpore 2.10 Cell defines (methods, and properties whose setters
# check a type or are missing) that torch's Module does not: a torch Module's own attribute
# or method of that name (opacus's ``self.cells = [...]``, ``self.phase = "train"``) hides
# Cell's, and building, copying weights, set_train or compiling the Cell then fails.
# Measured by setting each of Cell's names in a Cell's __init__ and building, calling,
# saving and differentiating it (tests/differential/test_cell_api_names.py runs it again).
# ``construct`` and ``set_train`` are the converter's own names for forward and train().
CELL_API_NAMES = frozenset({
    "add_flags", "add_flags_recursive", "bprop_debug", "cell_init_args", "cells", "cells_and_names",
    "check_names_and_refresh_name", "cls_name", "compile_cache", "compile_phase", "compiled", "create_time",
    "enable_backward_hook", "exist_names", "exist_objs", "get_parameters", "init_parameters_data",
    "jit_config_dict", "name_cells", "parallel_parameter_merge_net_dict", "param_prefix",
    "parameter_layout_dict", "parameters_and_names", "phase", "phase_cache", "pipeline_segment",
    "pipeline_stage", "set_grad", "trainable_params",
})


# The private methods a MindSpore 2.10 Cell's ``__call__`` runs on itself (read from its
# source: ``self._predict(*args)`` in GRAPH mode, ``self._run_construct`` in PYNATIVE): a torch
# Module's own method of that name (drn's ``_predict(x)``, which calls ``self(x)``) would
# replace Cell's, and calling the Cell then runs it instead (a RecursionError there). Renamed
# as CELL_API_NAMES are (tests/differential/test_unseen_classes_draw9.py reads the source again).
CELL_CALL_NAMES = frozenset({
    "_check_construct_args", "_complex_call", "_init_check", "_predict", "_run_construct", "_self_check",
})


# Names torch's Module has too, which a Cell calls on itself: a Module's own method of that
# name overrides torch's and would override Cell's (GRAPH mode runs ``self.compile(*inputs)``;
# AlphaGenome's ``compile(**kwargs)`` wraps torch.compile). Measured like CELL_API_NAMES, with
# methods in PYNATIVE and GRAPH mode. Renamed where the class defining it is known.
CELL_OVERRIDDEN_NAMES = frozenset({"compile"})


def cell_api_rename(name: str) -> str:
    """The name a torch Module's own attribute or method ``name`` that a Cell defines takes
    once converted (PEP 8's trailing underscore for a name taken)."""
    return f"{name}_"


MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_NOT_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer", "_IncompatibleKeys", "_WrappedHook"})


@functools.lru_cache(maxsize=1)
def outside_module_bases() -> dict[str, str]:
    """Module bases of packages built on torch (lightning's LightningModule) -> the run-time
    Cell a converted subclass takes as its base instead (``passes/module_bases.toml``)."""
    with (Path(__file__).parent / "passes" / "module_bases.toml").open("rb") as fh:
        return dict(tomllib.load(fh)["bases"])


def is_module_class(qual: str | None) -> bool:
    """nn.Module itself or one of torch's layer classes (``nn.Sequential``, ``nn.Conv2d``,
    and the private bases packages subclass: ``torch.nn.modules.conv._ConvNd``): a subclass
    of any of them is a Module whose ``forward`` becomes ``construct``."""
    if qual is None:
        return False
    if qual in MODULE_BASES or qual in outside_module_bases():
        return True
    if not qual.startswith("torch.nn.") or qual.startswith(("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parameter.")):
        return False
    last = qual.rsplit(".", 1)[-1]
    return last.lstrip("_")[:1].isupper() and last not in _NOT_MODULES


# Roots whose classes the tables know (torch's) or that define no Module (the standard
# library): a base from one of them that is not a torch layer class is not a Module.
_KNOWN_ROOTS = frozenset({"torch", "mindspore", "typing_extensions", "builtins"}) | frozenset(sys.stdlib_module_names)


@functools.lru_cache(maxsize=1)
def _target_cells() -> frozenset[str]:
    """MindSpore's Cell classes: ``mindspore.nn.Cell`` and the containers, and each layer
    class the tables give for a torch layer class (``mindspore.nn.Dense``)."""
    from .table_calls import tables  # imports the hooks, which import this module

    layers = {e.target for e in tables().entries.values() if e.target and is_module_class(e.source)}
    return frozenset(layers | {"mindspore.nn.Cell", "mindspore.nn.SequentialCell", "mindspore.nn.CellList",
                               "mindspore.nn.CellDict"})


def is_target_cell(qual: str | None) -> bool:
    """A MindSpore Cell class (a file converted partly by hand derives from it): a
    subclass still defining ``forward`` is a Module to convert."""
    return qual in _target_cells()


def target_cell_classes(module: cst.Module, ctx) -> frozenset[str]:
    """The top-level classes of the file derived from a MindSpore Cell (directly or through
    one another): Cells written by hand in a file converted in part. The passes never enter
    those written wholly for MindSpore, yet the rest of the file builds and lists them."""
    found: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and any(
                (isinstance(b.value, cst.Name) and b.value.value in found) or is_target_cell(ctx.imports.qualify(b.value))
                for b in stmt.bases if b.keyword is None):
            found.add(stmt.name.value)
    return frozenset(found)


def _outside_base_is_module(qual: str, cells: bool = True) -> bool | None:
    """A base that is not a class of the converted tree: a Module, not one, or unknown.
    A MindSpore Cell counts (``cells``): a tree class converted by hand is derived from as before."""
    if is_module_class(qual) or (cells and is_target_cell(qual)):
        return True
    if qual.startswith(UNKNOWN) or qual.split(".")[0] not in _KNOWN_ROOTS:
        return None
    return False


def _tree_class_is_module(class_bases: dict, qual: str, seen: set[str], cells: bool = True) -> bool | None:
    """Whether a class of the tree derives from a Module, following its bases across the
    tree: True, False, or None when some base's origin is unknown (and none is a Module)."""
    if qual in seen:
        return False
    seen.add(qual)
    unknown = False
    for base in class_bases.get(qual, ()):
        found = (_tree_class_is_module(class_bases, base, seen, cells) if base in class_bases
                 else _outside_base_is_module(base, cells))
        if found:
            return True
        unknown = unknown or found is None
    return None if unknown else False


def tree_module_class(ctx, expr: cst.BaseExpression, cells: bool = True) -> bool | None:
    """Whether ``expr`` names a Module class defined in the converted tree (another file's
    ``Mlp``, however imported): True or False; None when it names no class of the tree
    or the tree's index cannot tell. ``cells``: one derived from a MindSpore Cell counts."""
    package = getattr(ctx, "package", None)
    spelled = dotted_name(expr)
    if package is None or spelled is None or spelled not in package.names:
        return None
    return _tree_class_is_module(package.class_bases, package.names[spelled], set(), cells)


# Module methods that return the Module itself.
RETURNS_SELF = frozenset({"to", "train", "eval", "float", "double", "half", "bfloat16", "cuda", "cpu",
                          "requires_grad_", "apply", "type", "zero_grad", "share_memory"})


# methods that only a Module has: a receiver calling one is a Module
MODULE_ONLY_METHODS = frozenset({"parameters", "named_parameters", "state_dict", "load_state_dict", "named_modules"})


class CellNames:
    """Feed it the pass's visits (classes, functions, assignments); ask ``is_cell``."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.classes: set[str] = set()  # local Module subclasses
        self._class_stack: list[tuple[bool, set[str]]] = []  # (is a Module, attributes holding Modules)
        self._calls_module_methods = any(f".{m}(" in ctx.source for m in MODULE_ONLY_METHODS)  # else none to find
        self._frames: list[tuple[set[str], bool]] = [(self._module_method_receivers(ctx.facts.module), False)]
        self._class_depth_at_def: list[int] = []  # classes open when each open function began

    def enter_class(self, node: cst.ClassDef) -> None:
        module = any(
            (isinstance(b.value, cst.Name) and b.value.value in self.classes | self.ctx.facts.target_cells)
            or is_module_class(self.ctx.imports.qualify(b.value)) or is_target_cell(self.ctx.imports.qualify(b.value))
            or tree_module_class(self.ctx, b.value) is True
            for b in node.bases
        )
        if module:
            self.classes.add(node.name.value)
        self._class_stack.append((module, set()))

    def leave_class(self) -> None:
        self._class_stack.pop()

    def enter_function(self, node: cst.FunctionDef) -> None:
        in_module_class = bool(self._class_stack) and self._class_stack[-1][0] and self._directly_in_class
        self._frames.append((self._module_method_receivers(node), in_module_class))
        self._class_depth_at_def.append(len(self._class_stack))

    def _module_method_receivers(self, scope) -> set[str]:
        """Names and ``name.attr`` (as code) the scope calls a Module-only method on."""
        found: set[str] = set()
        if not self._calls_module_methods:
            return found
        for call in self.ctx.facts.nodes(scope, (cst.Call,), lambda s: type(s) is cst.Lambda):
            func = call.func
            if type(func) is cst.Attribute and func.attr.value in MODULE_ONLY_METHODS:
                receiver = dotted_name(func.value)
                if receiver is not None and receiver != "self" and receiver.count(".") <= 1 \
                        and self.ctx.imports.bindings.get(receiver.split(".")[0]) is None:
                    found.add(receiver)
        return found

    def leave_function(self) -> None:
        self._frames.pop()
        self._class_depth_at_def.pop()

    @property
    def _directly_in_class(self) -> bool:
        """The function being entered is a method: no function lies between it and the class."""
        return not self._class_depth_at_def or self._class_depth_at_def[-1] < len(self._class_stack)

    def assign(self, node: cst.Assign) -> None:
        if not self.is_cell_expr(node.value):
            return
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Name):
                self._frames[-1][0].add(t.value)
            elif (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                  and self._class_stack and self._frames[-1][1]):
                self._class_stack[-1][1].add(t.attr.value)

    def is_cell_expr(self, expr: cst.BaseExpression) -> bool:
        """A call building a Module, or a Module method returning the Module."""
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Name) and func.value in self.classes | self.ctx.facts.target_cells:
                return True
            tree_class = tree_module_class(self.ctx, func)
            if tree_class is not None:
                return tree_class
            qual = self.ctx.imports.qualify(func)
            if qual is not None:
                return is_module_class(qual)
            if isinstance(func, cst.Attribute) and func.attr.value in RETURNS_SELF:
                return self.is_cell(func.value) or self.is_cell_expr(func.value)
            return False
        return self.is_cell(expr)

    def is_cell(self, expr: cst.BaseExpression) -> bool:
        names, self_is_module = self._frames[-1]
        if isinstance(expr, cst.Name):
            if expr.value == "self":
                return self_is_module
            if expr.value in names:
                return True
            # a top-level name read inside a function that does not assign it
            return len(self._frames) > 1 and expr.value in self._frames[0][0]
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value != "self":
            return f"{expr.value.value}.{expr.attr.value}" in names
        if (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"
                and self_is_module and self._class_stack):
            return expr.attr.value in self._class_stack[-1][1]
        return False


def is_super_init(func) -> bool:
    """``super().__init__`` / ``super(C, self).__init__``."""
    return (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super")
