"""MS202: what is done to receivers known to be tensors: their methods (``x.view``,
``x.size(0)``, tables/tensor_methods.toml), named-tuple fields of torch results
(``torch.max(x, 1).values``), tensor properties that are methods of MindSpore's tensor
(``x.real`` -> ``ops.real(x)``: ``torch.Tensor.<name>`` entries of tables/attributes.toml),
augmented subscript writes (``x[i] += v``), and arithmetic with a numpy scalar on the
left of a tensor (``np.log(n) * torch.arange(k)``: torch's tensor outranks numpy's
operator, MindSpore's does not and the result is a numpy array; ``ops.mul(a, t)`` gives
the tensor). Fields of ``torch.finfo(...)``/``torch.iinfo(...)`` (numpy's info in
MindSpore code) are made Python numbers, as torch's are.

The receiver's type is guessed locally: parameters of forward/construct and of the
methods forward calls on ``self`` (``self.features(x)``, ``self._forward_impl(x)``),
parameters of top-level functions the file calls with a tensor (``reduce_loss(loss, r)``),
names assigned from torch calls, einops calls or tensor methods (also each name
unpacked from ``map(lambda t: <tensor>, xs)``), names a loop or a list, set or dict comprehension binds
from a list or tuple of tensors written out (``[t.transpose(0, 1) for t in [q, k]]``), a parameter's ``.data``
(``m.weight.data``). Receivers that are plainly not tensors
are never touched. On other receivers, a method only tensors have (``tensor_only`` in
tables/tensor_methods.toml: ``size``, ``view``, ``unsqueeze``, ...) is converted with a
note; any other is left, reported, and counted as an unconverted torch use.

Members whose meaning differs in MindSpore go through ONE run-time resolver,
``_torch_tensor_member(x, name)`` (rewrites/runtime/tensor_queries.py), where the receiver
may be a tensor and the converter cannot tell (a note on the line): ``x.requires_grad``
read (a MindSpore tensor has no flag; a Parameter keeps its own: ``self.X`` and names bound
by a loop over ``parameters()`` are left), and ``x.to(a)`` with an ``a`` that is plainly
neither a dtype nor a device (``torch.arange(n).to(other)`` takes the other tensor's dtype).
``x.clone()`` on such a receiver is ``_torch_clone(x)`` (MindSpore's Tensor.clone has no CPU
kernel in either mode; the helper copies a tensor and lets anything else clone itself), and
``x.repeat(*sizes)`` is ``_torch_repeat(x, *sizes)`` (a tensor is tiled, as torch's repeat
does; MindSpore's repeats each element and has no CPU kernel; anything else repeats itself).
On anything but a MindSpore tensor the resolver reads the object's own member.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..table_calls import convert_call, tables
from ..syntax import Unconvertible, code, entry_call, free_name, literal_value, operand, repeatable
from ..analysis.devices import is_device_move
from ..runtime.registry import runtime_helper
from ..value_transforms import names_array_element_param
from ..facts import view_binding_parent, view_split_parent
from ..hooks.tensor_methods import inplace_written, item_index, looks_like_device, looks_like_dtype
from ..tensor_inference import (TensorScope, annotated_tensors, forward_params, is_tensor, mapped_tensors, plainly_not_tensor,
                                target_names, tensor_properties)

FORWARD_NAMES = ("forward", "construct")
# tensor attributes a MindSpore tensor lacks or answers otherwise, and methods whose meaning
# differs, read through the run-time resolver where the receiver may be a tensor
RESOLVED_ATTRIBUTES = frozenset({"requires_grad"})
RESOLVED_METHODS = frozenset({"to"})
# methods other values have under the same name (a dict's values(), a slice's indices(), a
# Module's requires_grad_()): converted on a tensor, an unproven receiver left as it is
# without a note (the use is not torch-looking)
SHARED_METHODS = frozenset({"values", "indices", "requires_grad_"})
# a Module's methods yielding its parameters (last in each item): names bound to them are Parameters
# torch's and, for code converted already (a second run changes nothing), MindSpore's
PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters", "get_parameters", "trainable_params",
                                 "untrainable_params", "parameters_and_names"})


class TensorMethods(Pass):
    id = "MS202"
    name = "tensor-methods"
    reads = frozenset({"array_element_params", "call_site_tensor_params", "device_names", "forward_helpers",
                       "identifiers", "layer_attributes", "loss_layers", "tensor_attributes", "writes_infinity",
                       "written_view_pieces"})
    summary = "Tensor methods, result fields and subscript updates whose MindSpore spelling or meaning differs."
    runs_after = {
        "MS301": "x[m].sum() is a masked reduction (MS301), not a method call on a selection",
        "MS201": "torch.split(o, n) whose pieces are written in place is wrapped in _torch_view_pieces once converted",
    }
    examples = (
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x.view(x.size(0), -1)\n",
            "import mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n        return x.view(x.shape[0], -1)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self.roots = self.tables.source_roots
        self.scope = TensorScope()
        self._attributes: list[set[str]] = []  # per class: "self.X" parameters and buffers
        self._helpers: list[set[str]] = []  # per class: methods forward calls (their parameters are tensors)
        self._in_class: list[bool] = []  # innermost scope is a class body
        self._converted: set[int] = set()  # ids of the calls this pass produced
        self._called_with_tensors: dict[str, set[str]] = {}  # top-level function -> tensor parameters
        self._written: set[int] = set()  # ids of attributes written to or through (x.real[i] = v)
        self.numpy_scope = TensorScope()  # names bound to numpy values (np.log(n) / 2)
        self._cast: set[int] = set()  # ids of expressions already inside float()/int()
        self._parameter_names: list[set[str]] = [set()]  # per function: names bound to a Module's parameters

    def visit_Module(self, node: cst.Module) -> None:
        self._called_with_tensors = self.facts.call_site_tensor_params(self.roots)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._helpers.append(self.facts.forward_helpers(node))
        self._attributes.append(self.facts.tensor_attributes(node))
        self._in_class.append(True)

    def leave_ClassDef(self, original, updated):
        self._helpers.pop()
        self._attributes.pop()
        self._in_class.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        method = bool(self._in_class) and self._in_class[-1]
        takes_tensors = name in FORWARD_NAMES or (method and name in self._helpers[-1])
        if not self._in_class and name in self._called_with_tensors:  # a top-level function
            self.scope.push(self._called_with_tensors[name])
        else:
            self.scope.push(forward_params(node) if takes_tensors else ())
        self.numpy_scope.push()
        for param in annotated_tensors(node, self.ctx):  # x: Tensor, bias: Optional[torch.Tensor]
            self.scope.add(param)
        if method:
            for attr in self._attributes[-1]:  # self.class_token = nn.Parameter(...)
                self.scope.add(attr)
        self._in_class.append(False)
        self._parameter_names.append(set())

    def leave_FunctionDef(self, original, updated):
        self.scope.pop()
        self.numpy_scope.pop()
        self._in_class.pop()
        self._parameter_names.pop()
        return updated

    def visit_For(self, node: cst.For) -> None:
        self._note_parameters(node.target, node.iter)
        self._note_tensor_items(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._note_parameters(node.target, node.iter)

    def _visit_comprehension(self, node) -> None:
        # the loops before the element: the element is visited first (``[t.transpose(0, 1) for t in [q, k]]``)
        loop = node.for_in
        while loop is not None:
            self._note_tensor_items(loop.target, loop.iter)
            loop = loop.inner_for_in

    # (not a generator: graph-maps writes ``map(lambda t: ..., (a, b))`` as one after this pass has run)
    visit_ListComp = visit_SetComp = visit_DictComp = _visit_comprehension

    def _note_tensor_items(self, target: cst.BaseExpression, values: cst.BaseExpression) -> None:
        """``for t in [q, k, v]`` (a list or tuple of tensors written out): ``t`` is a tensor."""
        if (type(target) is cst.Name and type(values) in (cst.List, cst.Tuple) and values.elements
                and all(type(e) is cst.Element and is_tensor(e.value, self.scope, self.ctx, self.roots)
                        for e in values.elements)):
            self.scope.add(target.value)

    def _note_parameters(self, target: cst.BaseExpression, values: cst.BaseExpression) -> None:
        """``for p in model.parameters()``, ``for n, p in m.named_parameters()``: ``p`` is a
        Parameter, which keeps its own ``requires_grad`` in MindSpore."""
        if not (type(values) is cst.Call and type(values.func) is cst.Attribute
                and values.func.attr.value in PARAMETER_ITERATORS):
            return
        if type(target) is cst.Tuple and target.elements:
            target = target.elements[-1].value
        if type(target) is cst.Name:
            self._parameter_names[-1].add(target.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._is_numpy(node.value):
            for target in node.targets:
                for name in target_names(target.target):
                    self.numpy_scope.add(name)
            return
        if is_tensor(node.value, self.scope, self.ctx, self.roots) or mapped_tensors(node.value, self.scope, self.ctx, self.roots):
            for target in node.targets:
                for name in target_names(target.target):
                    self.scope.add(name)
            return
        # q, k, v = qkv[0], qkv[1], qkv[2]: element by element
        if isinstance(node.value, cst.Tuple) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(node.value.elements):
                for t, v in zip(target.elements, node.value.elements):
                    if isinstance(t.value, cst.Name) and is_tensor(v.value, self.scope, self.ctx, self.roots):
                        self.scope.add(t.value.value)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """``z = x[:, 0:4:2]`` (or ``x.view(-1)``, ``x.transpose(0, 1)``, ...) where the
        function writes ``z`` in place: torch's write reaches ``x``, MindSpore's does not
        (CPU), so the view notes where it lies in ``x``: ``z = _torch_view(x, lambda b:
        b[:, 0:4:2])``, and the writes into ``z`` store through ``x`` (``_view_writes``;
        ``z[i] = v`` -> ``_torch_write_view_item(z, i, v)``)."""
        _, _, values, noted = self.facts.written_view_pieces(self.ctx.current_function)
        written = self._view_item_write(original.targets, updated.targets, updated.value, noted)
        if written is not None:
            return cst.Expr(written, semicolon=updated.semicolon)
        if id(original.value) not in values:
            return updated
        parent = view_binding_parent(original.value, self.ctx.imports.qualify)
        base = cst.Name(free_name(self.facts.identifiers(self.ctx.current_function), "base"))
        view = _renamed(updated.value, parent.value, base)
        self.ctx.report(original, self.id, f"{code(original.targets[0].target)!r} is a view of {parent.value!r} written "
                        f"in place: _torch_view notes where it lies, so a write reaches {parent.value!r}", Severity.INFO)
        helper = cst.Call(func=runtime_helper(self.ctx, "_torch_view"),
                          args=[cst.Arg(cst.Name(parent.value)), cst.Arg(cst.Lambda(
                              params=cst.Parameters(params=[cst.Param(base)]), body=view))])
        return updated.with_changes(value=helper)

    def _view_item_write(self, originals, targets, value, names) -> cst.Call | None:
        """``z[i] = v`` (one target) with ``z`` a view noted by ``_torch_view``:
        ``_torch_write_view_item(z, i, v)``; else None."""
        if len(originals) != 1 or type(originals[0].target) is not cst.Subscript:
            return None
        item = targets[0].target
        if not (type(originals[0].target.value) is cst.Name and originals[0].target.value.value in names
                and type(item) is cst.Subscript and type(item.value) is cst.Name):
            return None
        return cst.Call(func=runtime_helper(self.ctx, "_torch_write_view_item"),
                        args=[cst.Arg(item.value), cst.Arg(item_index(item)), cst.Arg(value)])

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        """``x[i] += v`` on a tensor -> ``x[i] = x[i] + v``: MindSpore 2.10's GRAPH mode
        miscompiled the augmented form in MViT (each block matched alone, not two in one
        graph); the spelled-out form matches in both modes. ``z += v`` with ``z`` a view
        torch writes through (``written_view_pieces``): ``z = _torch_write_view(z, z + v)``
        (MindSpore's ``+=`` binds a new tensor to ``z``; anything else than a tensor
        takes the new value)."""
        target = original.target
        binary = _BINARY_OF.get(type(original.operator))
        if binary is not None and type(target) is cst.Name \
                and target.value in self.facts.written_view_pieces(self.ctx.current_function)[0]:
            value = cst.BinaryOperation(left=updated.target, operator=binary(), right=operand(updated.value))
            return cst.Assign(targets=[cst.AssignTarget(updated.target)], semicolon=updated.semicolon,
                              value=cst.Call(func=runtime_helper(self.ctx, "_torch_write_view"),
                                             args=[cst.Arg(updated.target), cst.Arg(value)]))
        if binary is None or not isinstance(target, cst.Subscript) or not repeatable(target):
            return updated
        noted = self.facts.written_view_pieces(self.ctx.current_function)[3]
        written = self._view_item_write([cst.AssignTarget(target)], [cst.AssignTarget(updated.target)], cst.BinaryOperation(
            left=updated.target.with_changes(lpar=[], rpar=[]), operator=binary(), right=operand(updated.value)), noted)
        if written is not None:  # z[i] += v
            return cst.Expr(written, semicolon=updated.semicolon)
        if not is_tensor(target.value, self.scope, self.ctx, self.roots):
            return updated
        read = updated.target.with_changes(lpar=[], rpar=[])
        return cst.Assign(targets=[cst.AssignTarget(target=updated.target)],
                          value=cst.BinaryOperation(left=read, operator=binary(), right=operand(updated.value)),
                          semicolon=updated.semicolon)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        """``zero_center[filter_size // 2] = 0`` with ``filter_size`` a parameter the file's
        calls pass an array's element: a numpy integer, which MindSpore's tensor indexing
        refuses (torch's takes it): the index as the Python number it holds."""
        if not isinstance(updated, cst.Subscript) or len(original.slice) != len(updated.slice):
            return updated
        elements = list(updated.slice)
        changed = False
        for i, (old, new) in enumerate(zip(original.slice, updated.slice)):
            if type(old.slice) is cst.Index and names_array_element_param(old.slice.value, self.ctx):
                call = cst.Call(func=runtime_helper(self.ctx, "_torch_python_number"), args=[cst.Arg(new.slice.value)])
                elements[i] = new.with_changes(slice=new.slice.with_changes(value=call))
                changed = True
        if not changed:
            return updated
        self.ctx.count_converted()
        return updated.with_changes(slice=elements)

    def _is_numpy(self, expr: cst.BaseExpression) -> bool:
        """A numpy value (and no tensor in it): a numpy call, a name bound to one, a
        parameter the file's calls pass an array's element (crfseg's ``spacing``), and
        arithmetic on them."""
        if isinstance(expr, cst.Name):
            if expr.value in self.numpy_scope:
                return True
            function = self.ctx.current_function  # not one the tensor guess holds: a helper's tensor
            return (function is not None and expr.value in self.facts.array_element_params().get(
                function.name.value, ()) and not is_tensor(expr, self.scope, self.ctx, self.roots))
        if isinstance(expr, cst.Call):
            qual = self.ctx.imports.qualify(expr.func)
            return qual is not None and qual.split(".")[0] == "numpy"
        if isinstance(expr, cst.UnaryOperation):
            return self._is_numpy(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            sides = (expr.left, expr.right)
            return any(self._is_numpy(e) for e in sides) and not any(
                is_tensor(e, self.scope, self.ctx, self.roots) for e in sides)
        return False

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        op = NUMPY_LEFT_OPS.get(type(original.operator))
        if op is None or not self._is_numpy(original.left) or not is_tensor(original.right, self.scope, self.ctx, self.roots):
            return updated
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"numpy value {code(original.left)!r} on the left of a tensor: "
                        f"ops.{op.rsplit('.', 1)[-1]} keeps the result a tensor", Severity.INFO)
        args = [cst.Arg(updated.left.with_changes(lpar=[], rpar=[])), cst.Arg(updated.right.with_changes(lpar=[], rpar=[]))]
        return cst.Call(func=self.ctx.reference(op), args=args, lpar=updated.lpar, rpar=updated.rpar)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._note_written(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_written(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("float", "int") and len(node.args) == 1:
            self._cast.add(id(node.args[0].value))  # float(torch.finfo(d).max) is a number already
        # x.real.copy_(v), x.real.zero_(): an in-place method writes through its receiver
        if isinstance(node.func, cst.Attribute) and node.func.attr.value.endswith("_"):
            self._note_written(node.func.value)

    def _note_written(self, target: cst.BaseExpression) -> None:
        while isinstance(target, cst.Subscript):
            target = target.value
        self._written.add(id(target))

    def _tensor_property(self, original: cst.Attribute, updated: cst.Attribute):
        """``x.real`` -> ``ops.real(x)`` on a tensor; None when it is not such a property."""
        if original.attr.value not in tensor_properties() or self.ctx.imports.qualify(original) is not None:
            return None
        entry = self.tables.entries[f"torch.Tensor.{original.attr.value}"]
        if plainly_not_tensor(original.value, self.ctx):
            return None
        name = f".{original.attr.value}"
        if not is_tensor(original.value, self.scope, self.ctx, self.roots):
            # numpy arrays and Python numbers have .real too
            self.ctx.count_unconverted()
            self.ctx.report(original, self.id, f"{name}: receiver {code(original.value)!r} may not be a tensor; "
                            "left as it is", Severity.INFO)
            return updated
        if id(original) in self._written:
            # MindSpore's part is a new tensor: a write to it would not reach x
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"Tensor{name}: written through; MindSpore's {name} part is a copy")
            return updated
        self.ctx.count_converted()
        return entry_call(self.ctx, entry, {}, updated.value)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        prop = self._tensor_property(original, updated)
        if prop is not None:
            return prop
        resolved = self._resolved_member(original, updated)
        if resolved is not None:
            return resolved
        cast = self._type_info_field(original)
        if cast is not None:  # torch.finfo(d).max: numpy's field is a numpy scalar
            return cst.Call(func=cst.Name(cast), args=[cst.Arg(updated)])
        index = _named_tuple_field(original, self.ctx, self.roots)
        value = updated.value
        if index is None:
            return updated
        if self.ctx.imports.qualify(original.value.func) is not None:
            if _left_as_is(value):
                return updated
        elif id(value) not in self._converted:
            return updated
        return cst.Subscript(value=operand(value), slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(index))))])

    def _resolved_member(self, original: cst.Attribute, updated: cst.Attribute):
        """``x.requires_grad`` read -> ``_torch_tensor_member(x, "requires_grad")``: a MindSpore
        tensor has no such flag (only a Parameter does); the resolver answers torch's where
        ``x`` is a tensor and reads ``x``'s own attribute otherwise. Writes, imported modules'
        attributes and ``self.X`` (a Cell's own parameters and attributes) are left."""
        name = original.attr.value
        receiver = original.value
        if name not in RESOLVED_ATTRIBUTES or id(original) in self._written or self.ctx.imports.qualify(original) is not None:
            return None
        if plainly_not_tensor(receiver, self.ctx) or (
                type(receiver) is cst.Attribute and type(receiver.value) is cst.Name and receiver.value.value == "self") or (
                type(receiver) is cst.Name and receiver.value in self._parameter_names[-1]):
            return None
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f".{name} of {code(receiver)!r}: a MindSpore tensor has no such flag; "
                        "_torch_tensor_member answers torch's when it runs", Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, "_torch_tensor_member"),
                        args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(f'"{name}"'))])

    def _resolved_call(self, original: cst.Call, updated: cst.Call):
        """``x.to(a)`` on a receiver that may be a tensor, a Module or anything else, with
        arguments that are not plainly devices: ``_torch_tensor_member(x, "to")(a)``, torch's
        meaning on a MindSpore tensor (another tensor's dtype, a dtype), the receiver's own
        method otherwise."""
        method = original.func.attr.value
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f".{method}(): receiver {code(original.func.value)!r} may not be a tensor; "
                        "_torch_tensor_member decides when it runs", Severity.INFO)
        member = cst.Call(func=runtime_helper(self.ctx, "_torch_tensor_member"),
                          args=[cst.Arg(updated.func.value), cst.Arg(cst.SimpleString(f'"{method}"'))])
        return updated.with_changes(func=member)

    def _placement_dropped(self, original: cst.Call, updated: cst.Call, entry):
        """``x.to(dtype=d, device=dev)`` on a receiver that may not be a tensor: the placement
        arguments go (MindSpore places a tensor and a Cell alike by ``set_device``), what is
        left stays the receiver's own ``to`` (``x.to(dtype=d)``; nothing left: ``x``). A
        device read off a tensor (``y.device``) is a Python object GRAPH mode cannot type:
        kept, it makes the call's result untyped and a later ``.dtype`` of it a tensor."""
        kept = [a for a, o in zip(updated.args, original.args) if not _placement_argument(entry, o)]
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f".to(): the device arguments of {code(original.func.value)!r} dropped "
                        "(MindSpore places by set_device); the rest stays its own to()", Severity.INFO)
        if not kept:
            return updated.func.value
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=kept)

    def _resolved_clone(self, original: cst.Call, updated: cst.Call):
        """``x.clone()`` on a receiver that may be a tensor: ``_torch_clone(x)``, which copies
        a MindSpore tensor with ops.deepcopy (its Tensor.clone has no CPU kernel) and lets
        anything else clone itself."""
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f".clone(): receiver {code(original.func.value)!r} not proven a tensor; "
                        "_torch_clone copies a tensor and lets anything else clone itself", Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, "_torch_clone"), args=[cst.Arg(updated.func.value), *updated.args])

    def _resolved_repeat(self, original: cst.Call, updated: cst.Call):
        """``x.repeat(*sizes)`` on a receiver that may be a tensor: ``_torch_repeat(x, *sizes)``,
        which tiles a MindSpore tensor (its own repeat repeats each element and has no CPU
        kernel) and lets anything else (a numpy array) repeat itself."""
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f".repeat(): receiver {code(original.func.value)!r} not proven a tensor; "
                        "_torch_repeat tiles a tensor and lets anything else repeat itself", Severity.INFO)
        return cst.Call(func=runtime_helper(self.ctx, "_torch_repeat"), args=[cst.Arg(updated.func.value), *updated.args])

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        return self._view_writes(original, self._method_call(original, updated))

    def _view_writes(self, original: cst.Call, result: cst.BaseExpression) -> cst.BaseExpression:
        """Pieces of ``split``/``chunk`` the function writes in place (views of their tensor
        in torch; MindSpore's CPU kernels do not write through a view): the split's pieces
        note their tensor (``_torch_view_pieces``) and a write into one
        (``oc.copy_(src=v)``) stores through it (``_torch_write_view(oc, v)``)."""
        pieces, splits, _, noted = self.facts.written_view_pieces(self.ctx.current_function)
        if not pieces:
            return result
        if type(result) is cst.Call and type(result.func) is cst.Name and result.func.value == "_torch_write_item" \
                and type(result.args[0].value) is cst.Name and result.args[0].value.value in noted:
            return result.with_changes(func=runtime_helper(self.ctx, "_torch_write_view_item"))  # z[:, 1].mul_(2)
        if id(original) in splits:
            parent = view_split_parent(original, self.ctx.imports.qualify)
            self.ctx.report(original, self.id, f"the pieces of {parent.value!r} are written in place (views in torch): "
                            "_torch_view_pieces notes where each lies, so a write reaches it", Severity.INFO)
            return cst.Call(func=runtime_helper(self.ctx, "_torch_view_pieces"),
                            args=[cst.Arg(result), cst.Arg(cst.Name(parent.value))])
        if not (type(result) is cst.Call and type(result.func) is cst.Attribute and result.func.attr.value == "copy_"
                and len(result.args) == 1 and (result.args[0].keyword is None or result.args[0].keyword.value == "src")):
            return result
        written = inplace_written(result)
        if not (type(written) is cst.Name and written.value in pieces):
            return result
        return cst.Call(func=runtime_helper(self.ctx, "_torch_write_view"),
                        args=[cst.Arg(result.func.value), cst.Arg(result.args[0].value)])

    def _method_call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        if not isinstance(func, cst.Attribute) or self.ctx.imports.qualify(func) is not None:
            return updated
        entry = self.tables.methods.get(func.attr.value)
        if entry is None:
            return updated
        receiver = func.value
        if plainly_not_tensor(receiver, self.ctx) or self._target_result(receiver):
            return updated
        if not is_tensor(receiver, self.scope, self.ctx, self.roots) and not _safe_anyway(func.attr.value, original):
            if func.attr.value in RESOLVED_METHODS and _undecided_argument(original):  # x.to(other)
                return self._resolved_call(original, updated)
            if func.attr.value == "to" and _placement_arguments(entry, original):  # x.to(dtype=d, device=dev)
                return self._placement_dropped(original, updated, entry)
            if func.attr.value == "clone" and not any(a.star for a in original.args):
                return self._resolved_clone(original, updated)
            if func.attr.value == "repeat" and not any(a.keyword is not None for a in original.args):
                return self._resolved_repeat(original, updated)
            if func.attr.value in SHARED_METHODS and not _tensor_only(entry, original):
                return updated
            if not _tensor_only(entry, original):
                # a torch-looking use left as it is: it counts against the conversion rate
                self.ctx.count_unconverted()
                self.ctx.report(
                    original, self.id,
                    f".{func.attr.value}(): receiver {code(receiver)!r} may not be a tensor; left as it is",
                    Severity.INFO,
                )
                return updated
            self.ctx.report(
                original, self.id,
                f".{func.attr.value}(): receiver {code(receiver)!r} not proven a tensor; converted, since only "
                "tensors have this method in practice",
                Severity.INFO,
            )
        try:
            result = convert_call(self.ctx, entry, updated, self.id, receiver=updated.func.value, original=original)
        except Unconvertible as why:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"Tensor.{func.attr.value}: {why}")
            return updated
        self.ctx.count_converted()
        self._converted.add(id(result))
        return result


    def _target_result(self, receiver: cst.BaseExpression) -> bool:
        """Whether ``receiver`` is a call of the target framework (``ops.t(input=x)``): its
        methods are already MindSpore's (``ops.t(input=x).contiguous()``, written by an
        earlier run on purpose), never torch's to convert again."""
        if not isinstance(receiver, cst.Call):
            return False
        qual = self.ctx.imports.qualify(receiver.func)
        root = qual.split(".")[0] if qual else None
        return root in self.tables.framework_roots and root not in self.tables.source_roots

    def _type_info_field(self, node: cst.Attribute) -> str | None:
        """``float``/``int`` for a field of ``torch.finfo(...)``/``torch.iinfo(...)``: torch
        gives Python numbers, the numpy info the tables convert to gives numpy scalars,
        which MindSpore's ops refuse (masked_fill(value=np.float32(...)))."""
        call = node.value
        if not isinstance(call, cst.Call) or id(node) in self._cast:
            return None
        qual = self.ctx.imports.qualify(call.func)
        if qual not in ("torch.finfo", "torch.iinfo"):
            return None
        if node.attr.value == "bits" or qual == "torch.iinfo":
            return "int" if node.attr.value in ("bits", "max", "min") else None
        return "float" if node.attr.value in ("max", "min", "eps", "tiny", "resolution", "smallest_normal") else None


# torch functions/methods returning a named tuple whose MindSpore form is a plain tuple:
# ``torch.max(x, 1).values`` -> ``ops.max(x, axis=1)[0]``.
NAMED_TUPLES = {
    "max": ("values", "indices"), "min": ("values", "indices"), "sort": ("values", "indices"),
    "topk": ("values", "indices"), "median": ("values", "indices"), "cummax": ("values", "indices"),
    "cummin": ("values", "indices"), "slogdet": ("sign", "logabsdet"),
    # linear algebra (keys past ``torch.``: torch.linalg.qr(a).Q is "linalg.qr")
    "qr": ("Q", "R"), "linalg.qr": ("Q", "R"), "svd": ("U", "S", "V"), "linalg.svd": ("U", "S", "Vh"),
    "linalg.slogdet": ("sign", "logabsdet"), "geqrf": ("a", "tau"), "lu_unpack": ("P", "L", "U"),
    "triangular_solve": ("solution", "cloned_coefficient"), "linalg.eigh": ("eigenvalues", "eigenvectors"),
    "linalg.eig": ("eigenvalues", "eigenvectors"), "linalg.inv_ex": ("inverse", "info"),
    "linalg.cholesky_ex": ("L", "info"), "linalg.solve_ex": ("result", "info"),
    "linalg.lu_factor_ex": ("LU", "pivots", "info"),
}


# numpy scalar (left) op tensor (right): MindSpore's functional form, which returns a
# tensor of torch's dtype (float32 for a float64 scalar times an int tensor)
NUMPY_LEFT_OPS = {cst.Add: "mindspore.ops.add", cst.Subtract: "mindspore.ops.sub", cst.Multiply: "mindspore.ops.mul",
                  cst.Divide: "mindspore.ops.div", cst.Power: "mindspore.ops.pow",
                  cst.FloorDivide: "mindspore.ops.floor_divide"}

_BINARY_OF = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract,
              cst.MultiplyAssign: cst.Multiply, cst.DivideAssign: cst.Divide}


def _renamed(node: cst.BaseExpression, name: str, new: cst.Name) -> cst.BaseExpression:
    """``node`` with each reference to ``name`` replaced by ``new`` (attribute and keyword
    names kept)."""
    class Rename(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return new if updated.value == name else updated

        def leave_Attribute(self, original, updated):
            return updated.with_changes(attr=original.attr)

        def leave_Arg(self, original, updated):
            return updated.with_changes(keyword=original.keyword)

    return node.visit(Rename())


def _named_tuple_field(node: cst.Attribute, ctx, roots) -> int | None:
    """Index of ``.values``-like fields read off a torch call that returns a named tuple."""
    call = node.value
    if not isinstance(call, cst.Call):
        return None
    qual = ctx.imports.qualify(call.func)
    if qual is not None:
        root, _, name = qual.partition(".")
        if root not in roots:
            return None
    elif isinstance(call.func, cst.Attribute):
        name = call.func.attr.value
    else:
        return None
    fields = NAMED_TUPLES.get(name, ())
    return fields.index(node.attr.value) if node.attr.value in fields else None


def _left_as_is(new: cst.BaseExpression) -> bool:
    """The function call kept its torch spelling: unconverted calls are spelled fully qualified."""
    return isinstance(new, cst.Call) and code(new.func).split(".")[0] == "torch"


# keywords only torch's tensor methods take (numpy, pandas and jax say axis=/keepdims=)
TORCH_KEYWORDS = frozenset({"dim", "keepdim"})


def _tensor_only(entry, call: cst.Call) -> bool:
    """A method only tensors have (the table's ``tensor_only``), or any method called with
    a keyword only torch's take (``branch(x).squeeze(dim=1)``); ``view`` only with sizes
    (numpy's ``view`` takes a dtype)."""
    if any(a.keyword is not None and a.keyword.value in TORCH_KEYWORDS for a in call.args):
        return True
    if not entry.tensor_only:
        return False
    return not any(looks_like_dtype(a.value) for a in call.args)


def _undecided_argument(call: cst.Call) -> bool:
    """``x.to(a)`` with an argument by position that is plainly neither a dtype nor a device:
    it may be a tensor, whose dtype torch takes."""
    return any(a.keyword is None and not a.star and not looks_like_dtype(a.value) and not looks_like_device(a.value)
               for a in call.args)


def _placement_argument(entry, arg: cst.Arg) -> bool:
    """A device, or a flag of the move (``non_blocking``, ``memory_format``: the table's
    dropped keywords), of ``x.to(...)``; ``copy`` only with its harmless value."""
    if arg.star:
        return False
    if arg.keyword is None:
        return looks_like_device(arg.value)
    name = arg.keyword.value
    if name not in entry.drop:
        return False
    return name not in entry.allowed or name == "non_blocking" or literal_value(arg.value) == entry.allowed[name]


def _placement_arguments(entry, call: cst.Call) -> bool:
    """``x.to(...)`` with a device (``device=other.device``, ``other.device``) beside arguments
    a MindSpore ``to`` takes (a dtype), and no ``copy=True``: the placement can go whatever
    the receiver."""
    if any(a.star for a in call.args):
        return False
    if not any((a.keyword is None or a.keyword.value == "device") and _placement_argument(entry, a) for a in call.args):
        return False
    copy = [a for a in call.args if a.keyword is not None and a.keyword.value == "copy"]
    return all(_placement_argument(entry, a) for a in copy)


def _safe_anyway(method: str, call: cst.Call) -> bool:
    """Converted whatever the receiver: ``x.cpu()`` / ``x.to(other.device)`` /
    ``x.to("cuda")`` moves nothing in MindSpore, tensor or Module alike."""
    if method == "transpose":
        return _torch_only_transpose(call)
    return is_device_move(method, call)


def _torch_only_transpose(call: cst.Call) -> bool:
    """``x.transpose(1, 2)``: two literal axes that a numpy array could not take (numpy
    accepts two axes only on a 2-D array, as a full permutation) or that mean the same
    swap there ((1, 0)); only an ascending 2-D pair like (0, 1) is numpy's identity."""
    if len(call.args) != 2 or any(a.star for a in call.args):
        return False
    if any(a.keyword for a in call.args):  # dim0=/dim1= are torch's names
        return all(a.keyword is not None and a.keyword.value in ("dim0", "dim1") for a in call.args)
    axes = [literal_value(a.value) for a in call.args]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in axes):
        return False
    if any(v not in (0, 1, -1, -2) for v in axes):
        return True  # numpy raises on it: the receiver is not a numpy array
    first, second = (v % 2 for v in axes)
    return first > second  # (1, 0): a swap in both


