"""MS103: nn.Module's tree methods -> nn.Cell's, and SequentialCells filled after construction.

The Module methods with another name on a Cell, and their arguments, are listed in
tables/module_methods.toml (``m.modules()``, ``m.add_module(name, layer)``,
``m.parameters()``, ...); ``m._modules`` is ``m._cells`` and ``m._parameters`` is
``m._params``. These names are the Module's own: no tensor has them, so the receiver
needs no inference, except for ``m.train(mode)``
and ``m.eval()``, converted only where ``m`` is known to be a Module (cell_names.py:
``self`` in a Module, names built from a Module class); other receivers
(``trainer.train()``) are reported and left.

A subclass of ``nn.ModuleDict`` with its own ``forward`` becomes a plain Cell holding its
children under their keys (``self.items()`` -> ``self._cells.items()``): MindSpore's
CellDict refuses container children and GRAPH mode cannot call one.

A SequentialCell runs the list of cells it was built with (``cell_list``); cells
added later, by ``add_module`` or by attribute assignment in a subclass of
``nn.Sequential``, are registered (their parameters load) but never run. torch runs
them: after the last such addition, the list is refreshed from the children.

Methods the Cell lacks are composed by the table's hook (``m.requires_grad_(False)``,
``m.get_submodule("a.b")``), on receivers known to be Modules.

Methods the Cell has under the same name (``state_dict``, ``register_forward_hook``)
keep their call; keywords it names otherwise are renamed (``hook=`` -> ``hook_fn=``).

Methods with nothing to do on a Cell (the table's ``no_op`` hook) are dropped with a
note: ``rnn.flatten_parameters()`` (cuDNN's weight layout), and ``reset_parameters()``
called through ``super()`` or ``self`` in a subclass of a torch layer (or on a layer
attribute, ``self.fc.reset_parameters()``) whose MindSpore counterpart draws torch's
initial distributions when it is built (``SAME_INIT``); other layers' are marked.
A call standing as a statement is removed; used as a value it is None.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.walk import iter_nodes

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, Unconvertible, code, literal, literal_value
from ..analysis.backward import file_calls_backward
from ..analysis.layer_types import index_place, shape_of
from ..hooks import HOOKS
from ..table_calls import convert_call, tables
from ..cell_names import MODULE_DICT, MODULE_LIST, SEQUENTIAL, CellNames, is_super_init
from ..facts import lambdas_only

_MODE_HELPERS = {"train": "_torch_train_mode", "eval": "_torch_eval_mode"}
# torch's private registries of a Module and the Cell's: ordered dicts of the children and of
# the own parameters, by name (a MindSpore layer names its parameters as torch's where the
# weight maps keep the name: an LSTM's weight_hh_l0)
_PRIVATE_REGISTRIES = {"_modules": "_cells", "_parameters": "_params"}

_ADDERS = ("add_module", "register_module")
# (name, value) methods whose Cell counterpart takes the two by position, and the
# keywords torch names them by
_PAIR_METHODS = {"add_module": ("name", "module"), "register_module": ("name", "module"),
                 "register_parameter": ("name", "param")}
_PARAMETER_METHODS = ("parameters", "named_parameters")
_TREE_METHODS = ("modules", "named_modules", "children", "named_children")
# Module methods no tensor or other common object has: converted on any receiver
_MODULE_ONLY = frozenset({"_register_state_dict_hook", "_register_load_state_dict_pre_hook",
                          "register_full_backward_hook", "register_full_backward_pre_hook",
                          # a dotted path through children (transformers' get_module_from_name(model, ...))
                          "get_submodule", "get_parameter"})
# torch layers whose MindSpore counterpart, built with the converted arguments, draws the
# distributions torch's reset_parameters draws (compared in tests/differential/
# test_torch_quirks.py): reset_parameters() while it is built changes nothing.
# Not nn.Embedding (MindSpore: N(0, 0.01), torch: N(0, 1)).
# torch layers whose reset_parameters a run-time helper does on the MindSpore layer
_RESET_HELPERS = {"torch.nn.Embedding": "_torch_embedding_reset_parameters"}
# Methods running while the layer is built: torch's layer __init__ calls reset_parameters.
_BUILDING = ("__init__", "reset_parameters")
SAME_INIT = frozenset("torch.nn." + n for n in (
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LSTM", "GRU", "RNN", "PReLU"))



def _is_super_call(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "super"


class ModuleMethods(Pass):
    id = "MS103"
    name = "module-methods"
    reads = frozenset({
        "assignments_and_calls", "calls_backward_anywhere", "forward_helpers", "layer_attributes", "layer_types",
        "module", "nodes",
        "registered_buffers", "target_cells"
    })
    summary = "nn.Module tree methods become Cell methods; SequentialCells filled after construction run their new cells."
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body = nn.Sequential()\n        self.body.add_module(\"act\", nn.ReLU())\n"
            "        for m in self.modules():\n            pass\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body = nn.SequentialCell()\n        self.body.insert_child_to_cell(\"act\", nn.ReLU())\n"
            "        self.body.cell_list = list(self.body.cells())\n"
            "        for m in (cell for _, cell in self.cells_and_names()):\n            pass\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._sequential_classes: set[str] = set()
        self._registry_writes: set[int] = set()  # ids of m._parameters whose item is assigned or deleted
        self._registry_assigns: set[int] = set()  # ids of the m._parameters[k] targets assigned
        self._scopes: list[str] = []  # "seqclass", "class" or "def", innermost last
        self._functions: list[tuple[set[str], bool]] = []  # (Sequential receivers built here, refresh self)
        self._namespaces: list[set[str]] = []  # per function: empty ModuleLists filled only by name
        self.cells = CellNames(ctx)  # names known to hold Modules (train/eval need one)
        self._trains = file_calls_backward(ctx.facts)  # a training script (its model is passed around)
        self.methods = tables().module_methods
        # local class -> (the torch layer it derives from, it or a local base defines reset_parameters)
        self._classes: dict[str, tuple[str | None, bool]] = {}
        self._dropped: set[int] = set()  # ids of no-op calls (original nodes)
        self._buffers: list[dict] = []  # per class: registered buffer -> its persistent argument
        # per class: forward and the methods it calls; per function: compiled with forward
        self._compiled: list[frozenset[str] | bool] = []

    # -- where we are ------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        seq = any(
            (isinstance(b.value, cst.Name) and b.value.value in self._sequential_classes)
            or self.ctx.imports.qualify(b.value) in SEQUENTIAL
            for b in node.bases
        )
        if seq:
            self._sequential_classes.add(node.name.value)
        dict_model = not seq and _is_dict_model(node, self.ctx)
        layer, _, inherited = self._layer_base(node)
        self._classes[node.name.value] = (layer, inherited or _defines(node, "reset_parameters"))
        self._scopes.append("seqclass" if seq else "dictclass" if dict_model else "class")
        self._buffers.append(self.facts.registered_buffers(node))
        self._compiled.append(self.facts.forward_helpers(node) | {"forward", "construct"})
        self.cells.enter_class(node)

    def leave_ClassDef(self, original, updated):
        kind = self._scopes.pop()
        self._buffers.pop()
        self._compiled.pop()
        self.cells.leave_class()
        if kind != "dictclass":
            return updated
        # class Getter(nn.ModuleDict) with a forward: a plain Cell holding the children
        bases = [b.with_changes(value=self.ctx.reference("mindspore.nn.Cell"))
                 if self.ctx.imports.qualify(o.value) in MODULE_DICT else b
                 for b, o in zip(updated.bases, original.bases)]
        self.ctx.count_converted()
        return updated.with_changes(bases=bases)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.cells.assign(node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._note_registry_write(node.target)
        if id(node.target.value if type(node.target) is cst.Subscript else node) in self._registry_writes:
            self._registry_assigns.add(id(node.target.value))

    def visit_Del(self, node: cst.Del) -> None:
        self._note_registry_write(node.target)

    def _note_registry_write(self, target: cst.BaseExpression) -> None:
        """``m._parameters[k] = v`` / ``del m._parameters[k]``: a parameter replaced or removed by name."""
        if type(target) is cst.Subscript and type(target.value) is cst.Attribute \
                and target.value.attr.value == "_parameters":
            self._registry_writes.add(id(target.value))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """``self.path = nn.ModuleList()`` filled only by ``add_module("pad", ...)`` and read
        as ``self.path.pad``: a namespace of named children, a plain Cell (a CellList's
        children are found by index in GRAPH mode)."""
        buffer = self._buffer_write(original, updated)
        if buffer is not None:
            return buffer
        parameter = self._parameter_write(original, updated)
        if parameter is not None:
            return parameter
        if not self._namespaces or not self._namespaces[-1] or len(original.targets) != 1:
            return updated
        if code(original.targets[0].target) not in self._namespaces[-1]:
            return updated
        if not (isinstance(original.value, cst.Call) and self.ctx.imports.qualify(original.value.func) in MODULE_LIST
                and not original.value.args):
            return updated
        self.ctx.count_converted()
        return updated.with_changes(value=cst.Call(func=self.ctx.reference("mindspore.nn.Cell")))

    def _parameter_write(self, original: cst.Assign, updated: cst.Assign):
        """``m._parameters[k] = p`` -> ``_torch_setattr(m, k, p)``:
        the parameter written under the name the layer has (an Embedding's weight is its
        embedding_table) and, on a recurrent layer, where it computes with it (an LSTM's
        w_hh_list, MS218's run-time resolver); ``_params[k] = p`` would reach neither."""
        if len(original.targets) != 1:
            return None
        target, new_target = original.targets[0].target, updated.targets[0].target
        if id(getattr(target, "value", None)) not in self._registry_assigns or len(target.slice) != 1 \
                or type(target.slice[0].slice) is not cst.Index:
            return None
        self.ctx.count_converted()
        args = [cst.Arg(new_target.value.value), cst.Arg(new_target.slice[0].slice.value), cst.Arg(updated.value)]
        return cst.Expr(cst.Call(func=runtime_helper(self.ctx, "_torch_setattr"), args=args))

    def _buffer_write(self, original: cst.Assign, updated: cst.Assign):
        """``self.rel = t`` where the class registered ``rel`` as a buffer: torch updates the
        buffer, MindSpore's Cell refuses a plain tensor for a buffer's name (TypeError), so
        it is registered again, with the persistence it was registered with (timm's ConViT
        recomputes its relative indices in forward)."""
        if not self._buffers or not self._scopes or self._scopes[-1] not in ("def", "dictmethod") \
                or len(original.targets) != 1:
            return None
        target = original.targets[0].target
        name = target.attr.value if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                                     and target.value.value == "self") else None
        if name not in self._buffers[-1] or literal_value(original.value) is None:
            return None
        args = [cst.Arg(cst.SimpleString(repr(name))), cst.Arg(updated.value)]
        persistent = self._buffers[-1][name]
        if persistent is not None:
            args.append(cst.Arg(persistent, keyword=cst.Name("persistent"),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        self.ctx.count_converted()
        if self.ctx.compiled:  # the rewrite is PYNATIVE's: GRAPH_MODE refuses register_buffer in compiled code
            self.ctx.report(original, self.id, f"self.{name} is a registered buffer: assigned by register_buffer, "
                            "which GRAPH_MODE refuses in compiled code (MS508): in GRAPH_MODE compute it in "
                            "__init__ or keep it a Parameter updated with ops.assign", Severity.WARNING)
        else:
            self.ctx.report(original, self.id, f"self.{name} is a registered buffer: assigned by register_buffer "
                            "(a MindSpore Cell refuses a plain tensor under a buffer's name)", Severity.INFO)
        return cst.Expr(cst.Call(func=cst.parse_expression("self.register_buffer"), args=args))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.cells.enter_function(node)
        outer = self._compiled[-1] if self._compiled else False
        self._compiled.append(node.name.value in outer if isinstance(outer, frozenset) else outer)
        in_seq_init = bool(self._scopes) and self._scopes[-1] == "seqclass" and node.name.value == "__init__"
        self._scopes.append("dictmethod" if self._scopes and self._scopes[-1] == "dictclass" else "def")
        receivers: set[str] = set()
        grows_self = False

        for event in self.facts.assignments_and_calls(node, enter=lambdas_only):
            if type(event) is cst.Assign:
                for t in event.targets:
                    target = t.target
                    if isinstance(event.value, cst.Call) and self.ctx.imports.qualify(event.value.func) in SEQUENTIAL:
                        receivers.add(code(target))
                    if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                            and target.value.value == "self" and isinstance(event.value, cst.Call)):
                        grows_self = True
            else:
                f = event.func
                if isinstance(f, cst.Attribute) and f.attr.value in _ADDERS and code(f.value) == "self":
                    grows_self = True
        self._functions.append((receivers, in_seq_init and grows_self))
        self._namespaces.append(_named_lists(self.facts.nodes(node, (cst.Assign, cst.Call, cst.Subscript, cst.For)), self.ctx))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self.cells.leave_function()
        self._compiled.pop()
        kind = self._scopes.pop()
        receivers, refresh_self = self._functions.pop()
        self._namespaces.pop()
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        if kind == "dictmethod" and original.name.value == "__init__":
            updated = self._dict_init(updated)
        body = list(updated.body.body)
        inserted = False
        for receiver in sorted(receivers):
            new_body = _insert_refresh(body, receiver)
            if new_body is None:
                continue
            body = new_body
            inserted = True
            self.ctx.count_converted()
        if refresh_self:
            body = _refresh_before_returns(body, "self")
            if not (body and _is_return(body[-1])):
                body.append(_refresh("self"))
            inserted = True
            self.ctx.count_converted()
        if not inserted:
            return updated
        return updated.with_changes(body=updated.body.with_changes(body=body))

    # -- the methods ------------------------------------------------------------------------
    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``m._modules`` (torch's ordered dict of children) is ``m._cells``, and
        ``m._parameters`` (of its own parameters, by name) is ``m._params``; an item assigned
        or deleted there on any receiver but ``self`` (a class's own parameters) gets a
        warning: MindSpore's recurrent layers compute with parameter lists of their own (an
        LSTM's ``w_hh_list``), which a parameter removed or replaced by name does not reach."""
        if original.attr.value not in _PRIVATE_REGISTRIES:
            return updated
        receiver = original.value
        if isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings:
            return updated
        self.ctx.count_converted()
        if id(original) in self._registry_writes and not (type(receiver) is cst.Name and receiver.value == "self") \
                and id(original) not in self._registry_assigns:
            self.ctx.mark(original, self.id, f"{code(receiver)}._parameters -> ._params, the Cell's own parameters by "
                          "name: a MindSpore layer may compute with lists of its own (an LSTM's w_hh_list), which "
                          "a parameter removed by name here does not leave until torch's name is set again")
        return updated.with_changes(attr=cst.Name(_PRIVATE_REGISTRIES[original.attr.value]))

    def _dict_init(self, fn: cst.FunctionDef) -> cst.FunctionDef:
        """``super().__init__(modules)`` of a ModuleDict turned Cell: the Cell's own
        ``__init__``, then each child inserted under its key."""
        body = []
        for stmt in fn.body.body:
            call = _super_init_call(stmt)
            if call is None or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                body.append(stmt)
                continue
            modules = code(call.args[0].value)
            body.append(stmt.with_changes(body=[cst.Expr(call.with_changes(args=[]))]))
            body.append(cst.parse_statement(
                f"for _name, _cell in dict({modules}).items():\n    self.insert_child_to_cell(_name, _cell)\n"))
            self.ctx.count_converted()
        return fn.with_changes(body=fn.body.with_changes(body=body))

    def _layer_base(self, node: cst.ClassDef) -> tuple[str | None, bool, bool]:
        """(the torch layer the class derives from, directly or through classes of the
        file; whether it defines reset_parameters itself; whether a base of the file does)."""
        layer, inherited = None, False
        for base in node.bases:
            if base.keyword is not None:
                continue
            entry = tables().lookup(self.ctx.imports.qualify(base.value) or "")
            if entry is not None and entry.kind == "class":
                layer = layer or entry.source
            elif isinstance(base.value, cst.Name) and base.value.value in self._classes:
                local_layer, defines = self._classes[base.value.value]
                layer, inherited = layer or local_layer, inherited or defines
        return layer, _defines(node, "reset_parameters"), inherited

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        """A dropped call standing alone: the statement goes (a ``pass`` keeps comments)."""
        if not (len(original.body) == 1 and isinstance(original.body[0], cst.Expr)
                and id(original.body[0].value) in self._dropped):
            return updated
        if any(line.comment for line in original.leading_lines) or original.trailing_whitespace.comment:
            return updated.with_changes(body=[cst.Pass()])
        return cst.RemovalSentinel.REMOVE

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        """A block whose only statement was a dropped call keeps a ``pass``."""
        if updated.body or not original.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])

    def _no_op(self, original: cst.Call, updated: cst.Call, method: str):
        """``flatten_parameters()`` anywhere; ``reset_parameters()`` where the layer is known
        (super()/self in a subclass of a torch layer, a layer attribute of the class)."""
        receiver = original.func.value
        through_class = self._through_layer_class(original, method)
        if through_class is None and ((isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings) or (
                self.ctx.imports.qualify(original.func) is not None) or updated.args):
            return updated
        entry = self.methods[method]
        note = entry.note
        if method == "reset_parameters":
            layer = self._reset_layer(receiver) if through_class is None else through_class
            if layer is None:
                return updated
            if layer in _RESET_HELPERS:
                return self._reset_at_run_time(original, receiver if through_class is None else original.args[0].value,
                                               layer)
            fn = self.ctx.innermost(cst.FunctionDef)
            why = ("MindSpore's layer has none and builds its parameters from other distributions than torch's"
                   if layer not in SAME_INIT else None if fn is not None and fn.name.value in _BUILDING
                   else "re-draws the initial values after construction; MindSpore's layer has no such method")
            if why:
                self.ctx.count_unconverted()
                self.ctx.mark(original, self.id, f"{layer}.reset_parameters(): {why}")
                return updated
            note = f"MindSpore's layer drew {layer}'s initial distributions when built: dropped"
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(receiver)}.{method}(): {note}", Severity.INFO)
        self._dropped.add(id(original))
        return HOOKS[entry.hook].function(self.ctx, entry, {}, updated.func.value)

    def _reset_at_run_time(self, original: cst.Call, receiver: cst.BaseExpression, layer: str):
        """``reset_parameters()`` of a layer whose MindSpore counterpart draws other
        distributions: torch's draw, made at run time on the instance (``super()`` is the
        method's first parameter)."""
        if _is_super_call(receiver):
            fn = self.ctx.innermost(cst.FunctionDef)
            if fn is None or not fn.params.params:
                return original
            receiver = fn.params.params[0].name
        helper = _RESET_HELPERS[layer]
        self.ctx.claim(original, self.id)  # MS201 has no entry for Class.method and would mark it
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{layer}.reset_parameters(): torch's distributions drawn by {helper}",
                        Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, helper), args=[cst.Arg(receiver)])

    def _through_layer_class(self, call: cst.Call, method: str) -> str | None:
        """``nn.Linear.reset_parameters(self)`` in a method of a class: the torch layer whose
        method is called on the instance through its class (loralib's form), else None."""
        qual = self.ctx.imports.qualify(call.func)
        if (qual is None or not qual.startswith("torch.nn.") or len(call.args) != 1 or call.args[0].star
                or call.args[0].keyword is not None or self.ctx.innermost(cst.ClassDef) is None):
            return None
        layer = qual.removesuffix(f".{method}")
        entry = tables().lookup(layer)
        return layer if entry is not None and entry.kind == "class" else None

    def _reset_layer(self, receiver) -> str | None:
        """The torch layer whose reset_parameters ``receiver.reset_parameters()`` runs:
        ``super()`` / ``self`` in a subclass of it (when no class of the file on the way
        defines the method), ``self.X`` holding it; else None."""
        cls = self.ctx.innermost(cst.ClassDef)
        if cls is None:
            return None
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
            layer, _, inherited = self._layer_base(cls)
            return None if inherited else layer
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            layer, own, inherited = self._layer_base(cls)
            return None if own or inherited else layer
        if (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name)
                and receiver.value.value == "self"):
            entry = self.facts.layer_attributes(cls, tables()).get(receiver.attr.value)
            return entry.source if entry is not None and entry.kind == "class" else None
        return None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = updated.func
        if not isinstance(func, cst.Attribute) or not isinstance(original.func, cst.Attribute):
            return updated
        method = func.attr.value
        receiver = original.func.value
        if method in self.methods and self.methods[method].hook == "no_op":
            return self._no_op(original, updated, method)
        if method in self.methods and self.methods[method].hook:
            return self._hooked(original, updated, self.methods[method])
        if (method in ("items", "values", "keys") and not updated.args and "dictmethod" in self._scopes[-1:]
                and isinstance(receiver, cst.Name) and receiver.value == "self"):
            # the ModuleDict's own view of its children: torch's _modules is Cell's _cells
            # (GRAPH mode cannot iterate name_cells() in construct; _cells it can)
            self.ctx.count_converted()
            return cst.parse_expression(f"self._cells.{method}()")
        if method in _PARAMETER_METHODS or method in ("train", "eval"):
            return self._cell_method(original, updated, method)
        if method in self.methods and (self.methods[method].target == f".{method}" or method in _MODULE_ONLY):
            return self._same_method(original, updated, self.methods[method])
        if method not in (*_TREE_METHODS, *_PAIR_METHODS):
            return updated
        if isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings:
            return updated  # a module's function, not a layer's method
        if self.ctx.imports.qualify(original.func) is not None:
            return updated
        new_receiver = func.value
        if method in _PAIR_METHODS:
            pair = _PAIR_METHODS[method]
            if len(updated.args) == 1 and updated.args[0].star == "*":  # add_module(*pair): same order
                self.ctx.count_converted()
                return updated.with_changes(func=func.with_changes(attr=self._target(method)))
            if len(updated.args) != 2 or any(a.star for a in updated.args):
                self.ctx.report(original, self.id, f".{method}(): expected {pair}", Severity.INFO)
                return updated
            args = [a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for a in updated.args]
            if any(a.keyword is not None for a in updated.args):
                by_name = {a.keyword.value if a.keyword else pair[i]: a for i, a in enumerate(updated.args)}
                if set(by_name) != set(pair):
                    return updated
                args = [by_name[pair[0]].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT),
                        by_name[pair[1]].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
                args[1] = args[1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            self.ctx.count_converted()
            return updated.with_changes(func=func.with_changes(attr=self._target(method)), args=args)
        if updated.args:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"Module.{method}() with arguments: Cell's counterpart takes other ones")
            return updated
        self.ctx.count_converted()
        src = code(new_receiver)
        call = f"{src}.{self._target(method).value}()"
        if method == "modules":
            return cst.parse_expression(f"(cell for _, cell in {call})")
        if method in ("children", "named_children") and self._compiled and self._compiled[-1] is True:
            # GRAPH mode fails to compile a loop over cells()/name_cells() ("The pointer[node]
            # is null"), and compiles one over the Cell's own ordered dict of children
            view = "values" if method == "children" else "items"
            return cst.parse_expression(f"{src}._cells.{view}()")
        if method == "named_children":
            return cst.parse_expression(f"{call}.items()")
        return cst.parse_expression(call)

    def _target(self, method: str) -> cst.Name:
        """The Cell method's name the table gives for a Module method."""
        return cst.Name(self.methods[method].target.removeprefix("."))


    def _indexed_module(self, receiver: cst.BaseExpression) -> bool:
        """The tree's type index says ``receiver`` holds a Module (a layer built by a helper,
        in another method or file, an item of a ModuleList)."""
        types = self.facts.layer_types()
        return types.module_value(types.value(shape_of(receiver, *index_place(self.ctx.open_scopes, types.index))))

    def _cell_method(self, original: cst.Call, updated: cst.Call, method: str):
        """``parameters()`` / ``named_parameters()`` -> ``get_parameters()`` /
        ``parameters_and_names()`` (the Module's own names: any receiver but an imported
        module); ``train(mode)`` / ``eval()`` -> ``set_train(mode)`` / ``set_train(False)``,
        only on receivers known to be Modules (``trainer.train()`` is something else)."""
        receiver = original.func.value
        if (isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings) or (
                self.ctx.imports.qualify(original.func) is not None):
            return updated
        func = updated.func
        if method in ("train", "eval"):
            known = self.cells.is_cell(receiver) or self.cells.is_cell_expr(receiver) or self._indexed_module(receiver)
            if not known and self._trains:
                # a training script passes its model around: the mode is set at run time
                self.ctx.count_converted()
                self.ctx.report(original, self.id, f".{method}(): receiver {code(receiver)!r} is not known to be a "
                                f"Module; {_MODE_HELPERS[method]} sets a Cell's mode (set_train) and calls "
                                "any other object's own method", Severity.INFO)
                helper = runtime_helper(self.ctx, _MODE_HELPERS[method])
                return cst.Call(func=helper, args=[cst.Arg(updated.func.value), *updated.args])
            if not known:
                self.ctx.report(original, self.id, f".{method}(): receiver {code(receiver)!r} is not known to be a "
                                "Module; left as it is (a Cell switches modes with set_train)", Severity.INFO)
                return updated
            if method == "eval":
                if updated.args:
                    return updated
                args = [cst.Arg(literal(v)) for v in self.methods[method].set.values()]
            else:
                args = list(updated.args)
                if len(args) > 1 or any(a.star or (a.keyword is not None and a.keyword.value != "mode") for a in args):
                    return updated
            self.ctx.count_converted()
            return updated.with_changes(func=func.with_changes(attr=self._target(method)), args=args)
        entry = self.methods[method]
        args = []
        for i, arg in enumerate(updated.args):
            name = arg.keyword.value if arg.keyword is not None else (entry.params[i] if i < len(entry.params) else None)
            if arg.star or name not in entry.params:
                self.ctx.count_unconverted()
                self.ctx.mark(original, self.id, f"Module.{method}(): arguments not understood")
                return updated
            if name in entry.unsupported_args:  # harmless only at the value the table allows
                if literal_value(arg.value) != entry.allowed.get(name, NOT_LITERAL):
                    self.ctx.count_unconverted()
                    self.ctx.mark(original, self.id, f"Module.{method}({name}={code(arg.value)}): "
                                  f"{entry.unsupported_args[name]}")
                    return updated
                continue
            args.append(arg.with_changes(keyword=cst.Name(entry.rename.get(name, name)), equal=cst.AssignEqual(
                cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.ctx.count_converted()
        return updated.with_changes(func=func.with_changes(attr=self._target(method)), args=args)


    def _hooked(self, original: cst.Call, updated: cst.Call, entry):
        """A Module method the Cell lacks, composed by the entry's hook
        (``m.requires_grad_(False)``), on receivers known to be Modules only (a tensor
        has requires_grad_ too)."""
        receiver = original.func.value
        known = entry.source.startswith("torch.optim.") or self.cells.is_cell(receiver) or (  # no Module has it
            # (a module's function of that name, torch._C.get_submodule, is no Module's method)
            entry.source.rsplit(".", 1)[1] in _MODULE_ONLY and self.ctx.imports.qualify(receiver) is None) or (
            self.cells.is_cell_expr(receiver)) or (
            # an item of a known Module (model[0], a Sequential's layer): the helper also
            # takes a parameter (an item of a ParameterList)
            entry.hook == "requires_grad_" and isinstance(receiver, cst.Subscript) and self.cells.is_cell(receiver.value))
        # in a training script, requires_grad_ on a value of unknown type is decided at run
        # time: the helper sets a Cell's parameters' flags, or a parameter's own
        if not known and not (self._trains and entry.hook == "requires_grad_"):
            self.ctx.report(original, self.id, f".{original.func.attr.value}(): receiver {code(receiver)!r} is not known "
                            "to be a Module; left as it is", Severity.INFO)
            return updated
        try:
            result = convert_call(self.ctx, entry, updated, self.id, receiver=updated.func.value, original=original)
        except Unconvertible as why:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"Module.{original.func.attr.value}(): {why}")
            return updated
        self.ctx.count_converted()
        return result

    def _same_method(self, original: cst.Call, updated: cst.Call, entry):
        """A Module method the Cell has under the same name (``m.state_dict()``,
        ``m.register_forward_hook(f)``): keywords the Cell names otherwise are renamed
        (``hook=`` -> ``hook_fn=``); an unsupported one, at another value than the
        harmless one, is marked."""
        receiver = original.func.value
        if (isinstance(receiver, cst.Name) and receiver.value in self.ctx.imports.bindings) or (
                self.ctx.imports.qualify(original.func) is not None):
            return updated
        method = original.func.attr.value
        args = []
        for i, arg in enumerate(updated.args):
            positional = arg.keyword is None
            name = arg.keyword.value if not positional else entry.params[i] if i < len(entry.params) else None
            if arg.star or (positional and name not in entry.unsupported_args):
                if name is None and not arg.star:  # state_dict's deprecated positional ones
                    self.ctx.count_unconverted()
                    self.ctx.mark(original, self.id, f"Module.{method}(): arguments by position not understood")
                    return updated
                args.append(arg)
            elif name in entry.unsupported_args:
                if literal_value(arg.value) != entry.allowed.get(name, NOT_LITERAL):
                    self.ctx.count_unconverted()
                    self.ctx.mark(original, self.id, f"Module.{method}({name}={code(arg.value)}): "
                                  f"{entry.unsupported_args[name]}")
                    return updated
            else:
                args.append(arg.with_changes(keyword=cst.Name(entry.rename[name])) if name in entry.rename else arg)
        func = updated.func
        if entry.target != f".{method}":  # register_full_backward_hook -> register_backward_hook
            func = func.with_changes(attr=self._target(method))
        elif all(a is b for a, b in zip(args, updated.args)) and len(args) == len(updated.args):
            return updated  # as written: the statement keeps its layout
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.ctx.count_converted()
        return updated.with_changes(func=func, args=args)


def _defines(node: cst.ClassDef, name: str) -> bool:
    return isinstance(node.body, cst.IndentedBlock) and any(
        isinstance(s, cst.FunctionDef) and s.name.value == name for s in node.body.body)


def _named_lists(nodes, ctx) -> set[str]:
    """Receivers assigned an empty ``nn.ModuleList()`` in the function (``nodes``: its
    assignments, calls, subscripts and loops) whose every use there is ``add_module``
    with a string name (no append, no indexing, no iteration)."""
    nodes = tuple(nodes)
    created: set[str] = set()
    named: set[str] = set()
    other: set[str] = set()
    for node in nodes:
        if type(node) is cst.Assign:
            v = node.value
            if isinstance(v, cst.Call) and not v.args and ctx.imports.qualify(v.func) in MODULE_LIST:
                created.update(code(t.target) for t in node.targets)
    if not created:
        return created  # (the uses below are spelled out only where an empty ModuleList is made)
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            continue
        elif kind is cst.Call:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value in _ADDERS:
                ok = bool(node.args) and isinstance(node.args[0].value, cst.SimpleString) \
                    and not node.args[0].value.evaluated_value.isdigit()
                (named if ok else other).add(code(f.value))
            elif isinstance(f, cst.Attribute) and f.attr.value in ("append", "extend", "insert"):
                other.add(code(f.value))
        elif kind is cst.Subscript:
            other.add(code(node.value))
        else:
            other.add(code(node.iter))
    return (created & named) - other


def _is_dict_model(node: cst.ClassDef, ctx) -> bool:
    """A subclass of nn.ModuleDict with its own forward (torchvision's
    IntermediateLayerGetter, DenseNet's blocks): MindSpore's CellDict refuses container
    children (a SequentialCell stage) and GRAPH mode cannot call one, so it becomes a
    Cell holding the children under their keys."""
    if not any(ctx.imports.qualify(b.value) in MODULE_DICT for b in node.bases):
        return False
    return any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in node.body.body)


def _super_init_call(stmt) -> cst.Call | None:
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    return call if isinstance(call, cst.Call) and is_super_init(call.func) else None


def _insert_refresh(body: list, receiver: str) -> list | None:
    """``receiver.cell_list = list(receiver.cells())`` after the last statement of ``body``
    that adds to it; when one ``if``/``with``/``try`` holds every addition, inside its
    block instead (``seq = nn.Sequential()`` may exist only there). A loop is entered
    only where its body builds the Sequential anew (effdet's ``after_combine =
    nn.Sequential()`` per node: refreshed after the loop, every Sequential but the last
    would run empty); otherwise refreshing once after the loop is enough."""
    found = [i for i, stmt in enumerate(body) if _adds_to(stmt, receiver)]
    if not found:
        return None
    last = found[-1]
    stmt = body[last]
    if isinstance(stmt, (cst.For, cst.While)) and isinstance(stmt.body, cst.IndentedBlock) \
            and _binds(stmt.body.body, receiver):
        inner = _insert_refresh(list(stmt.body.body), receiver)
        if inner is not None:
            return [*body[:last], stmt.with_changes(body=stmt.body.with_changes(body=inner)), *body[last + 1:]]
    if len(found) == 1 and isinstance(stmt, (cst.If, cst.With, cst.Try)):
        blocks = [b for b in _blocks(stmt) if isinstance(b, cst.IndentedBlock) and any(_adds_to(x, receiver) for x in b.body)]
        if len(blocks) == 1:
            inner = _insert_refresh(list(blocks[0].body), receiver)
            if inner is not None:
                new_block = blocks[0].with_changes(body=inner)
                return [*body[:last], stmt.deep_replace(blocks[0], new_block), *body[last + 1:]]
    return [*body[:last + 1], _refresh(receiver), *body[last + 1:]]


def _binds(body, receiver: str) -> bool:
    """Whether a statement of ``body`` (not nested) assigns ``receiver``."""
    return any(isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Assign) and any(code(t.target) == receiver for t in small.targets)
        for small in stmt.body) for stmt in body)


def _refresh(receiver: str) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"{receiver}.cell_list = list({receiver}.cells())\n")


def _refresh_before_returns(body: list, receiver: str) -> list:
    """The refresh before every ``return`` of the method (not of functions defined in
    it): a constructor that stops early (MONAI's ``if conv_only: return``) has added
    its cells by then too."""
    out = []
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.append(stmt)
        elif isinstance(stmt, cst.SimpleStatementLine):
            out += [_refresh(receiver), stmt] if _is_return(stmt) else [stmt]
        else:
            out.append(_refresh_in_blocks(stmt, receiver))
    return out


def _refresh_in_blocks(stmt, receiver: str):
    """``stmt`` (an if/for/while/with/try) with the refresh before the returns in its blocks."""
    def block(b):
        if isinstance(b, cst.IndentedBlock):
            return b.with_changes(body=_refresh_before_returns(list(b.body), receiver))
        if isinstance(b, cst.SimpleStatementSuite) and any(isinstance(s, cst.Return) for s in b.body):
            assign = _refresh(receiver).body[0]  # if stop: self.cell_list = ...; return
            small = [x for s in b.body for x in ((assign, s) if isinstance(s, cst.Return) else (s,))]
            return b.with_changes(body=small)
        return b

    changes = {}
    for field in ("body", "orelse", "finalbody"):
        part = getattr(stmt, field, None)
        if isinstance(part, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            changes[field] = block(part)
        elif isinstance(part, cst.If):  # elif
            changes[field] = _refresh_in_blocks(part, receiver)
        elif part is not None and hasattr(part, "body"):  # else / finally
            changes[field] = part.with_changes(body=block(part.body))
    if isinstance(stmt, cst.Try):
        changes["handlers"] = [h.with_changes(body=block(h.body)) for h in stmt.handlers]
    return stmt.with_changes(**changes) if changes else stmt


def _blocks(stmt) -> list:
    """The blocks directly under an if/with/try (elif and else included)."""
    out = [stmt.body]
    if isinstance(stmt, cst.If) and stmt.orelse is not None:
        out += _blocks(stmt.orelse) if isinstance(stmt.orelse, cst.If) else [stmt.orelse.body]
    if isinstance(stmt, cst.Try):
        out += [h.body for h in stmt.handlers]
        out += [x.body for x in (stmt.orelse, stmt.finalbody) if x is not None]
    return out


def _adds_to(stmt, receiver: str) -> bool:
    """The statement (being rewritten) adds a cell to ``receiver``."""
    for call in iter_nodes(stmt):
        f = call.func if type(call) is cst.Call else None
        if (isinstance(f, cst.Attribute) and f.attr.value in (*_ADDERS, "insert_child_to_cell")
                and code(f.value) == receiver):
            return True
    return False


def _is_return(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in stmt.body)
