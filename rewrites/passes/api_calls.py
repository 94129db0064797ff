"""MS201: calls and references to framework symbols, converted as the tables say."""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.names import STORE
from transpile.engine.passes import Example, Pass

from ..table_calls import convert_call, reference_refusal, reference_value, tables
from ..syntax import Unconvertible
from ..analysis.annotations import type_positions
from ..analysis.layer_factories import converted_at_run_time, factory_possible
from ..analysis.star_calls import bound_at_run_time, function_value, run_time_bound
from ..analysis.scaffolding import scaffolding_names


class ApiCalls(Pass):
    id = "MS201"
    name = "api-calls"
    reads = frozenset({"array_element_params", "empty_1d_tensor", "layer_attributes", "list_attributes", "list_names",
                       "module", "names", "nodes", "writes_infinity"})
    summary = "Rewrite calls and references to torch APIs using the mapping tables."
    runs_after = {
        "MS103": "MS103 drops nn.Linear.reset_parameters(self) called through the class while the layer is built, "
                 "which MS201 has no entry for and would mark",
        "MS104": "MS104 makes nn.Cell the base of an autograd Function, which MS201 has no entry for and would mark",
        "MS205": "MS205 puts a factory in place of a torch layer class used as a value or called with **kwargs",
        "MS213": "MS213 claims a with item's set_grad_enabled(flag) call (it goes; its flag stays), which MS201 would mark",
    }
    examples = (
        Example(
            "import torch.nn as nn\nfc = nn.Linear(4, 2, bias=False)\n",
            "import mindspore.nn as nn\nfc = nn.Dense(in_channels=4, out_channels=2, has_bias=False)\n",
        ),
        Example(
            "import torch\ny = torch.cat([a, b], 1)\n",
            "from mindspore import ops\ny = ops.cat(tensors=[a, b], axis=1)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self.roots = self.tables.source_roots
        self._call_funcs: set[int] = set()  # ids of nodes handled elsewhere or not references
        self._scaffolding = scaffolding_names()  # MS206 resolves these

    def _source_qualname(self, node) -> str | None:
        qual = self.ctx.imports.qualify(node)
        if qual is None or qual.split(".")[0] not in self.roots or qual in self._scaffolding:
            return None
        return qual

    # imports are the import pass's business; also keep the table current for nested ones
    def visit_Import(self, node) -> bool:
        self.ctx.bind_import(node)
        return False

    def visit_ImportFrom(self, node) -> bool:
        self.ctx.bind_import(node)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self._source_qualname(node.func) is not None:
            self._call_funcs.add(id(node.func))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qual = self._source_qualname(original.func)
        if qual is None:
            return updated
        entry = self.tables.lookup(qual)
        if entry is not None and entry.called_as:  # torch.Tensor(...) converts as torch.FloatTensor(...)
            entry = self.tables.lookup(entry.called_as)
        if entry is None and qual in self.tables.modules:
            return updated
        if any(a.star for a in updated.args) and (factory_possible(entry) or converted_at_run_time(entry, original)):
            return updated  # nn.Conv2d(cin, cout, **kwargs): MS205 converts the arguments at run time
        try:
            if entry is None:
                raise Unconvertible("no MindSpore mapping yet")
            if run_time_bound(entry, original):  # F.scaled_dot_product_attention(q, k, v, **kwargs)
                result = bound_at_run_time(self.ctx, entry, original, updated, self.id)
            else:
                result = convert_call(self.ctx, entry, updated, self.id, original=original)
        except Unconvertible as why:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"{qual}: {why}")
            return updated.with_changes(func=self.ctx.keep_source(qual, original.func))
        self.ctx.count_converted()
        if entry.note:
            self.ctx.report(original, self.id, f"{qual}: {entry.note}", Severity.INFO)
        return result

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        """A base that became ``object`` (torch's ``Dataset``) goes when another base stays:
        ``class X(object, Mixin)`` has no method resolution order (object would come before
        the mixin, which derives from it), and every class derives from object anyway."""
        updated = self._unsubscripted_objects(original, updated)
        positional = [(o, u) for o, u in zip(original.bases, updated.bases) if o.keyword is None and u.keyword is None]
        became_object = [u for o, u in positional if _is_object(u.value) and not _is_object(o.value)]
        if not became_object or len(positional) == 1:
            return updated
        drop = {id(u) for u in became_object}
        if len(became_object) == len(positional):
            drop.discard(id(became_object[0]))  # only converted bases: object alone stays
        bases = [b for b in updated.bases if id(b) not in drop]
        if updated.bases[-1] is not bases[-1]:  # the last went: its comma (or none) ends the list
            bases[-1] = bases[-1].with_changes(comma=updated.bases[-1].comma)
        return updated.with_changes(bases=bases)

    def _unsubscripted_objects(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        """A subscripted torch base that became ``object`` (``Dataset[T_co]``, ``Dataset[int]``:
        torch's Dataset is ``Generic``) is ``object``, which takes no subscript (the class is
        then no generic: ``typing.Generic`` would refuse ``Dataset[int]``'s concrete type)."""
        if len(original.bases) != len(updated.bases):
            return updated
        bases = list(updated.bases)
        for i, (before, after) in enumerate(zip(original.bases, updated.bases)):
            value = after.value
            if type(value) is cst.Subscript and _is_object(value.value) and not (
                    type(before.value) is cst.Subscript and _is_object(before.value.value)):
                bases[i] = after.with_changes(value=value.value)
        return updated.with_changes(bases=bases) if bases != list(updated.bases) else updated

    # bare references: base classes, dtypes, annotations, layers passed as values.
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.ctx.imports.qualify(node) in self._scaffolding:
            return False  # MS206's: torch.jit.is_scripting is not the module torch.jit
        return self._source_qualname(node) is None

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._call_funcs.update(type_positions(node))  # MS210 converts the types of annotations

    def leave_Attribute(self, original, updated):
        return self._reference(original, updated)

    def leave_Name(self, original, updated):
        if not self.facts.names.is_reference(original):
            return updated  # names that only look like references: x.Linear, f(bias=...), def nn()
        if self.facts.names.role(original) == STORE:
            return updated  # rebinding an imported name (`dist = None` where torch is missing) uses no API
        return self._reference(original, updated)

    def _reference(self, original, updated):
        if id(original) in self._call_funcs:
            return updated
        qual = self._source_qualname(original)
        if qual is None:
            return updated
        if updated is not original and not updated.deep_equals(original):
            return updated  # an earlier pass already rewrote it (MS205: a layer class as a value, MS104: a base)
        if qual in self.tables.modules:
            # a module as a value, spelled through its package (`dir(torch.nn.functional)`,
            # `nn.functional` after `import torch.nn as nn`): the target module; a name
            # bound to the module itself is the imports pass's
            if not isinstance(original, cst.Attribute):
                return updated
            self.ctx.count_converted()
            return self.ctx.reference(self.tables.modules[qual])
        entry = self.tables.lookup(qual)
        value = reference_value(self.ctx, entry)
        if value is not None:  # F.conv_transpose3d as a value: the helper its calls become
            self.ctx.count_converted()
            return value
        function = function_value(self.ctx, entry, original, self.id)
        if function is not None:  # init.normal_ as a value: a function taking torch's arguments
            self.ctx.count_converted()
            return function
        why = reference_refusal(entry)
        if why is not None:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"{qual}: {why}")
            return self.ctx.keep_source(qual, original)
        if entry.kind in ("class", "function") and (entry.rename or entry.defaults or entry.set or entry.hook) \
                and not factory_possible(entry):  # MS205 makes the value take torch's arguments
            self.ctx.report(
                original, self.id,
                f"{qual} used as a value: renamed to {entry.target}, but its arguments are not converted where it is called",
                Severity.WARNING,
            )
        self.ctx.count_converted()
        return self.ctx.reference(entry.target)


def _is_object(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "object"
