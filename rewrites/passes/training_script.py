"""MS214: the set-up lines of a training script, on MindSpore's CPU build.

- What the conversion leaves without effect goes: a statement that was a call and is now a
  bare value (``model.cuda()`` -> ``model``, ``torch.cuda.empty_cache()`` -> ``None``, the
  tables' ``no_op`` entries) and an assignment of a name to itself
  (``x, y = x.to(device), y.to(device)`` -> ``x, y = x, y``).
- ``device.type`` / ``device.index`` on a device value (a string once converted): a name
  bound to ``torch.device(...)``, the call itself, or a name, attribute or call result
  called a device (``get_device(name).type``) -> ``_torch_device_type(device)`` (MS209's
  helper: 'cpu', 'cuda') / ``_torch_index_of_device(device)`` (None, 1, ...). With
  ``torch.cuda.is_available()`` False, the converted script takes torch's CPU path.
- cuDNN and TF32 switches (``torch.backends.cudnn.benchmark = True``,
  ``torch.backends.cuda.matmul.allow_tf32 = ...``) are removed: MindSpore's CPU kernels
  have no such choice.
- Train mode: a fresh torch Module is in train mode, a fresh Cell in eval mode (BatchNorm
  would use its moving statistics, Dropout would keep everything). In a training script (a
  file that calls ``.backward()``), a model built outside a class (``model = Net()``,
  ``return nn.Sequential(...)``; not a loss) is put in train mode where it is built:
  ``Net().set_train()`` (set_train returns the Cell). A later ``model.eval()`` /
  ``model.train()`` switches it as in torch.
- ``optimizer.load_state_dict(sd)``: a MindSpore optimizer's own load_state_dict refuses
  the moment keys its state_dict gives; ``load_param_into_net`` loads them, and here
  (``_torch_load_state_dict``) a missing or unexpected key raises, as in torch.
- ``scheduler.state_dict()`` / ``load_state_dict(state)``: MindSpore's schedulers have
  neither; ``_torch_scheduler_state`` gives the attributes torch's would (the lr values are
  the optimizer's, saved with its state) and ``_torch_load_scheduler_state`` sets them back.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..cell_names import CellNames
from ..runtime.registry import runtime_helper
from ..syntax import code
from ..table_calls import tables
from ..analysis.backward import file_calls_backward

# torch settings assigned as attributes, with nothing to set in MindSpore on CPU
SWITCH_PREFIXES = ("torch.backends.cudnn.", "torch.backends.cuda.", "torch.backends.mkldnn.", "torch.backends.mps.")
# methods moving a Module or tensor to a device: they return it (or a copy) unchanged here
DEVICE_MOVES = frozenset({"to", "cuda", "cpu"})
# a torch device's fields read on its converted value (a string), by run-time helpers
DEVICE_FIELDS = {"type": "_torch_device_type", "index": "_torch_index_of_device"}


def _only(arg: cst.Arg) -> cst.Arg:
    """A call's one argument, passed by position."""
    return arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)


def _small(line: cst.SimpleStatementLine):
    return line.body[0] if len(line.body) == 1 else None


def _same_code(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    if type(b) is cst.Call and type(a) in (cst.Name, cst.Attribute, cst.Subscript) and not a.rpar:
        return False  # (most assignments: a call's code ends with ")", the target's does not)
    return "".join(code(a).split()) == "".join(code(b).split())


def _has_call(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call):
        return True
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(_has_call(e.value) for e in node.elements)
    return False


class TrainingScript(Pass):
    id = "MS214"
    name = "training-script"
    reads = frozenset({
        "calls_backward_anywhere", "device_names", "module", "nodes", "target_cells", "torch_optimizers"
    })
    summary = ("A training script's set-up on CPU: device moves and CUDA housekeeping left without effect removed, "
               "cuDNN switches removed, device.type read off a device's name, models built in train mode (a fresh "
               "Cell is in eval mode), optimizer.load_state_dict through load_param_into_net.")
    examples = (
        Example(
            "import torch\ntorch.backends.cudnn.benchmark = True\nx = torch.zeros(2)\nx.cuda()\n",
            "from mindspore import ops\nx = ops.zeros(size=2)\n",
        ),
        Example(
            "import torch\ndef tidy(model):\n    model.cuda()\n    if torch.cuda.is_available():\n"
            "        torch.cuda.empty_cache()\n    return model\n",
            "def tidy(model):\n    if False:\n        pass\n    return model\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.cells = CellNames(ctx)
        self._training = file_calls_backward(ctx.facts)
        self._classes = 0  # open classes: models built inside one are its children
        self._called: set[int] = set()  # ids of the callees of calls

    # -- what is a Module where (fed to CellNames) -------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.cells.enter_class(node)
        self._classes += 1

    def leave_ClassDef(self, original, updated):
        self.cells.leave_class()
        self._classes -= 1
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.cells.enter_function(node)

    def leave_FunctionDef(self, original, updated):
        self.cells.leave_function()
        return updated

    def visit_Assign(self, node: cst.Assign) -> None:
        self.cells.assign(node)

    # -- an optimizer's state loaded ---------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("state_dict", "load_state_dict")
                and isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)):
            return updated
        optimizers, schedulers, _ = self.facts.torch_optimizers()
        receiver = code(func.value)
        loads = func.attr.value == "load_state_dict"
        if receiver in schedulers:
            return self._scheduler_state(original, updated, loads)
        if not loads or receiver not in optimizers or len(updated.args) != 1 or updated.args[0].star:
            return updated
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{receiver}.load_state_dict(): a MindSpore optimizer's state "
                        "is loaded by load_param_into_net (_torch_load_state_dict raises on missing or unexpected "
                        "keys, as torch)", Severity.INFO)
        helper = runtime_helper(self.ctx, "_torch_load_state_dict")
        return cst.Call(func=helper, args=[cst.Arg(updated.func.value), _only(updated.args[0])])

    def _scheduler_state(self, original: cst.Call, updated: cst.Call, loads: bool):
        """``scheduler.state_dict()`` / ``scheduler.load_state_dict(state)``: MindSpore's
        schedulers have neither."""
        if len(updated.args) != (1 if loads else 0) or any(a.star for a in updated.args):
            return updated
        self.ctx.count_converted()
        if loads:
            helper = runtime_helper(self.ctx, "_torch_load_scheduler_state")
            return cst.Call(func=helper, args=[cst.Arg(updated.func.value), _only(updated.args[0])])
        helper = runtime_helper(self.ctx, "_torch_scheduler_state")
        return cst.Call(func=helper, args=[cst.Arg(updated.func.value)])

    # -- train mode where a model is built --------------------------------------------
    def _built_model(self, value: cst.BaseExpression) -> bool:
        """``Net(...)``, ``nn.Sequential(...)``, or one moved to a device (``Net().to(d)``):
        a Module built here (not a loss)."""
        while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
               and value.func.attr.value in DEVICE_MOVES):
            value = value.func.value
        if not isinstance(value, cst.Call) or not self.cells.is_cell_expr(value):
            return False
        if isinstance(value.func, cst.Attribute) and self.ctx.imports.qualify(value.func) is None:
            return False  # a method returning the Module (m.train()), not a construction
        qual = self.ctx.imports.qualify(value.func)
        if qual is None:  # a class of the file or of the converted tree
            return True
        entry = tables().lookup(qual)  # a torch layer: one the tables convert, not a loss
        return entry is not None and not entry.unsupported and entry.table != "nn_losses"

    def _in_train_mode(self, original: cst.CSTNode, value: cst.BaseExpression, updated_value):
        if not self._training or self._classes or not self._built_model(value) or not isinstance(updated_value, cst.Call):
            return None
        self.ctx.count_converted()
        self.ctx.report(original, self.id, "a fresh Cell is in eval mode, a fresh Module in train mode: "
                        "set_train() where it is built", Severity.INFO)
        return cst.Call(func=cst.Attribute(value=updated_value, attr=cst.Name("set_train")))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        value = self._in_train_mode(original, original.value, updated.value)
        return updated if value is None else updated.with_changes(value=value)

    def leave_Return(self, original: cst.Return, updated: cst.Return):
        if original.value is None:
            return updated
        value = self._in_train_mode(original, original.value, updated.value)
        return updated if value is None else updated.with_changes(value=value)

    # -- a device's type and index: the device is its name now ----------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))  # x.type(torch.float16) is the tensor method

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``device.type`` -> ``_torch_device_type(device)`` ('cpu', 'cuda'), ``device.index``
        -> ``_torch_index_of_device(device)`` (None, 0, ...) on a device: a name bound to
        ``torch.device(...)``, a ``torch.device(...)`` call, or a name, attribute or call
        result called a device (``device.type``, ``self.device.index``,
        ``get_device(name).type``; ``x.device.type`` is MS209's)."""
        helper = DEVICE_FIELDS.get(original.attr.value)
        if helper is None or id(original) in self._called or not self._a_device(original.value):
            return updated
        if helper == "_torch_device_type" and type(original.value) is cst.Attribute and original.value.attr.value == "device":
            return updated  # x.device.type: MS209's
        self.ctx.count_converted()
        return cst.Call(func=runtime_helper(self.ctx, helper), args=[cst.Arg(updated.value)])

    def _a_device(self, value: cst.BaseExpression) -> bool:
        if type(value) is cst.Call:  # torch.device(...), or the package's get_device(...)
            qual = self.ctx.imports.qualify(value.func)
            if qual is not None:
                return qual == "torch.device"
            callee = value.func.attr if type(value.func) is cst.Attribute else value.func
            return type(callee) is cst.Name and "device" in callee.value.lower()
        if type(value) is cst.Name:
            return value.value in self.facts.device_names() or "device" in value.value.lower()
        if type(value) is cst.Attribute:
            return "device" in value.attr.value.lower() and not self.ctx.imports.qualify(value)
        return False

    # -- statements left without effect; cuDNN switches ----------------------------------
    def _switch(self, line: cst.SimpleStatementLine) -> bool:
        small = _small(line)
        if not isinstance(small, (cst.Assign, cst.AugAssign)):
            return False
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        return all((self.ctx.imports.qualify(t) or "").startswith(SWITCH_PREFIXES) for t in targets)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return not self._switch(node)  # about to go: ApiCalls does not mark it

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated):
        if self._switch(original):
            self.ctx.count_converted()
            self.ctx.report(original, self.id, f"{code(original.body[0]).strip()}: a cuDNN/CUDA switch, removed "
                            "(MindSpore's CPU kernels have no such choice)", Severity.INFO)
            return self._removed(original, updated)
        if not isinstance(updated, cst.SimpleStatementLine) or updated is original:
            return updated
        before, after = _small(original), _small(updated)
        if isinstance(before, cst.Expr) and isinstance(after, cst.Expr):
            if isinstance(before.value, cst.Call) and isinstance(after.value, (cst.Name, cst.Attribute)):
                return self._removed(original, updated)  # model.cuda() -> model; empty_cache() -> None
        if (isinstance(before, cst.Assign) and isinstance(after, cst.Assign) and len(after.targets) == 1
                and _has_call(before.value) and _same_code(after.targets[0].target, after.value)):
            return self._removed(original, updated)  # x = x.to(device) -> x = x
        return updated

    def _removed(self, original: cst.SimpleStatementLine, updated):
        if any(line.comment for line in original.leading_lines) or original.trailing_whitespace.comment:
            return updated.with_changes(body=[cst.Pass()])  # keeps the comments above it and on it
        return cst.RemovalSentinel.REMOVE
