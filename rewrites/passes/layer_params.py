"""MS204: ``self.bn.weight`` -> ``self.bn.gamma``: parameter names of converted layers.

Code that touches a layer's parameters by name (tied weights, custom init,
freezing) must use MindSpore's names: BatchNorm ``gamma``/``beta``, Embedding
``embedding_table``, ... The tables' ``weights`` renames say which. The layer is
known from ``self.X = nn.Y(...)`` in the class, or from an ``isinstance`` test:
in ``if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):`` (the init loop over
``self.modules()``) ``m.weight`` is ``m.gamma`` when every class tested agrees, and so
are attributes holding constructor arguments (``m.out_features`` -> ``m.out_channels``);
where they disagree (``isinstance(m, (nn.Linear, nn.Embedding))``) the read picks the
name at run time by the class.

Where the layer is built out of sight of the access (another method, a base class, a
helper function, another file of the tree, a ModuleDict, a Sequential filled in a loop,
a local container: ``self.transformer.wte.weight``, ``net[-1].weight``) the tree's type
index answers (``FileFacts.layer_types``, ``analysis/layer_types.py``); so it does in the
branch of ``if isinstance(module, T5Attention)`` with a class of the tree (or a tuple of
them): ``module.relative_attention_bias.weight`` is what that class's attribute holds. Where it can only
say "a layer" (an init function's argument, a helper returning one of two classes, names
set at run time, a Module's attribute built by a torch-based package outside the tree:
effdet's ``self.conv_dw = create_conv2d(...)`` of timm), the read becomes
``_torch_layer_attribute(layer, "weight", (MindSpore's names))`` and a write
``_torch_set_layer_attribute(...)`` (runtime/cells.py), each with a note; so does an
attribute holding a constructor argument (``groups``: ``group``). A ``del`` or ``+=`` of
such a parameter gets a warning, counted unconverted.
"""
from __future__ import annotations

import json

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.formatting import InvalidStatement, format_statement
from transpile.engine.passes import Example, Pass
from transpile.engine.import_table import dotted_name
from transpile.engine.walk import rewrite

from ..runtime.registry import runtime_helper
from ..analysis.layer_types import RUN_TIME, attribute_renames, index_place, shape_of
from ..syntax import code, emitted
from ..table_calls import tables


# a layer's class name read where code compares it with torch's (``classname.find("Linear")``
# in an init function): MindSpore names some classes otherwise (Dense)
TORCH_CLASS_NAME = """def {name}(obj):
    \"\"\"type(obj).__name__ as torch names the class: a MindSpore layer a torch layer was
    converted to answers with the torch name (Dense: Linear) (transpile MS204).\"\"\"
    name = type(obj).__name__
    return {names}.get(name, name) if type(obj).__module__.startswith("mindspore") else name
"""


def torch_class_names(tables) -> dict[str, str]:
    """MindSpore layer class name -> the torch class converted to it, where they differ and
    only one torch class is (``Dense``: ``Linear``; not GroupNorm, which InstanceNorm is too)."""
    found: dict[str, set[str]] = {}
    for qual, entry in tables.entries.items():
        if entry.kind == "class" and qual.startswith("torch.nn.") and (entry.target or "").startswith("mindspore."):
            found.setdefault(entry.target.rsplit(".", 1)[-1], set()).add(qual.rsplit(".", 1)[-1])
    return {ms: next(iter(torch)) for ms, torch in sorted(found.items())
            if len(torch) == 1 and ms not in torch and ms[:1].isupper()}


_TABLE_NAMES: dict[int, tuple] = {}


def _table_names(tables) -> tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, str], str,
                                  dict[str, tuple[str, ...]]]:
    """``distinctive_attributes``, ``parameter_names`` and ``torch_class_names`` of
    ``tables``, those torch class names joined by NULs, and the names looked up at run time
    (``argument_names`` and ``parameter_names``): derived once per tables (each went through
    every entry, for every file). Read only."""
    known = _TABLE_NAMES.get(id(tables))
    if known is None or known[0] is not tables:
        class_names = torch_class_names(tables)
        parameters = parameter_names(tables)
        known = _TABLE_NAMES[id(tables)] = (tables, distinctive_attributes(tables), parameters, class_names,
                                            "\0".join(class_names.values()), {**argument_names(tables), **parameters})
    return known[1:]


def parameter_names(tables) -> dict[str, tuple[str, ...]]:
    """torch layer parameters that converted layers name otherwise, with every MindSpore name
    (``weight``: ``gamma``, ``embedding_table``, ...)."""
    found: dict[str, set[str]] = {}
    for qual, entry in tables.entries.items():
        if entry.kind == "class" and qual.startswith("torch.nn.") and entry.target:
            for torch_name, ms_name in entry.weights.items():
                if ms_name and ms_name != torch_name:
                    found.setdefault(torch_name, set()).add(ms_name)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def argument_names(tables) -> dict[str, tuple[str, ...]]:
    """torch layer attributes holding constructor arguments that converted layers name
    otherwise, with every MindSpore name (``groups``: ``group``); parameters left out."""
    found: dict[str, set[str]] = {}
    for qual, entry in tables.entries.items():
        if entry.kind == "class" and qual.startswith("torch.nn.") and entry.target:
            for torch_name, ms_name in attribute_renames(entry).items():
                if torch_name not in entry.weights:
                    found.setdefault(torch_name, set()).add(ms_name)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def distinctive_attributes(tables) -> dict[str, str]:
    """torch layer attributes with one MindSpore name whatever the layer, and names no
    other object is likely to have (compound: ``in_features``, ``num_embeddings``): read
    on a receiver of unknown type, they are looked up at run time."""
    found: dict[str, set[str]] = {}
    for qual, entry in tables.entries.items():
        if entry.kind != "class" or not qual.startswith("torch.nn.") or not entry.target:
            continue
        for torch_name, ms_name in [*entry.rename.items(), *entry.weights.items()]:
            if ms_name and ms_name != torch_name and ms_name != "*" and not ms_name.startswith("has_"):
                found.setdefault(torch_name, set()).add(ms_name)
    return {k: next(iter(v)) for k, v in found.items() if "_" in k and len(v) == 1 and "." not in next(iter(v))}


class LayerParams(Pass):
    id = "MS204"
    name = "layer-params"
    reads = frozenset({"apply_callbacks", "layer_attributes", "layer_types", "string_literals"})
    summary = "Parameter attributes of converted layers take MindSpore's names (bn.weight -> bn.gamma)."
    examples = (
        Example(
            "import torch.nn as nn\nclass LM(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(10, 4)\n        self.head = nn.Linear(4, 10, bias=False)\n"
            "        self.head.weight = self.embed.weight\n",
            "import mindspore.nn as nn\nclass LM(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(vocab_size=10, embedding_size=4)\n"
            "        self.head = nn.Dense(in_channels=4, out_channels=10, has_bias=False)\n"
            "        self.head.weight = self.embed.embedding_table\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self._renames: list[dict[str, dict[str, str]]] = []  # per class: attribute -> param renames
        (self._distinctive, self._parameter_names, self._class_names, torch_names,
         # looked up at run time where the layer's class is not known: its parameters and the
         # attributes holding its constructor arguments (effdet's m.conv_dw.groups: group)
         self._run_time_names) = _table_names(self.tables)
        # only a file holding a string a renamed class answers otherwise ("Linear" is no part of
        # "Dense") compares class names that need torch's (a string in no torch class name, as
        # most are, is ruled out by one search of them all)
        self._names_compared = any(
            len(text) >= 3 and text in torch_names
            and any(text in torch and text not in ms for ms, torch in self._class_names.items())
            for text in self.facts.string_literals())
        self._any_layer: list[str | None] = []  # per open function: its parameter that is a layer of any class
        self._targets: set[int] = set()  # ids of attributes assigned or deleted
        self._guarded: list[str | None] = []  # per open if: the name an isinstance test knows the layer of
        self._blocks = 0  # indented blocks open: the depth of the statement being left
        self._renamed = _renamed_attributes(self.tables)
        self._loops: list[tuple[str, cst.BaseExpression]] = []  # enclosing for loops: (name bound, iterable)
        self._layer_subclass: list[bool] = []  # per open class: whether a base is a torch layer (MS205 renames self.X)
        self._written: dict[int, str] = {}  # ids of attribute targets whose name only the running code knows
        # ids of names in the body of ``if isinstance(name, C)``, C a Module class of the tree -> C, qualified
        self._narrowed: dict[int, tuple[str, ...]] = {}

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks += 1

    def leave_IndentedBlock(self, original, updated):
        self._blocks -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        layers = self.facts.layer_attributes(node, self.tables)
        self._renames.append({attr: attribute_renames(e) for attr, e in layers.items() if attribute_renames(e)})
        self._layer_subclass.append(any(self._torch_layer(b.value) for b in node.bases))

    def leave_ClassDef(self, original, updated):
        self._renames.pop()
        self._layer_subclass.pop()
        return updated

    def _torch_layer(self, node) -> bool:
        qual = self.ctx.imports.qualify(node)
        entry = self.tables.lookup(qual) if qual and qual.startswith("torch.nn.") else None
        return entry is not None and entry.kind == "class"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params.params
        if params and params[0].name.value == "self":  # a method handed as self.apply(self._init_weights)
            params = params[1:]
        callback = node.name.value in self.facts.apply_callbacks() and params
        self._any_layer.append(params[0].name.value if callback else None)

    def leave_FunctionDef(self, original, updated):
        self._any_layer.pop()
        return updated

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name):
            self._loops.append((node.target.value, node.iter))

    def leave_For(self, original: cst.For, updated: cst.For):
        if isinstance(original.target, cst.Name):
            self._loops.pop()
        return updated

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self._targets.add(id(node.target))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if original.attr.value == "__name__":
            return self._class_name(original, updated)
        renamed = self._known_layer(original, updated)
        if renamed is updated:
            renamed = self._indexed_layer(original, updated)
        return self._unknown_receiver(original, renamed) if renamed is updated else renamed

    def _indexed_layer(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.emb.weight`` with ``emb`` built in another method, a base class, a helper or
        another file of the tree, ``self.h.wte.weight`` through a ModuleDict, ``net[-1].weight``,
        ``self.weight`` in a subclass of a tree class deriving from a torch layer (a direct
        subclass's are MS205's): the tree's type index says which layer the receiver holds. Where it says only "a
        layer" (of a class not known here, or one of several classes naming it otherwise),
        the parameter is looked up at run time, with a note; a write then becomes a call."""
        attr = original.attr.value
        receiver = original.value
        if attr not in self._renamed or (type(receiver) is cst.Name and (
                (receiver.value == "self" and (not self._layer_subclass or self._layer_subclass[-1]))
                or receiver.value in self._guarded or (self._any_layer and receiver.value == self._any_layer[-1]))):
            return updated
        types = self.facts.layer_types()
        loops = {name: iterable for name, iterable in self._loops}
        shape = _narrowed_shape(receiver, self._narrowed) or shape_of(
            receiver, *index_place(self.ctx.open_scopes, types.index), loops)
        new = types.rename(types.value(shape), attr)
        if new is None:
            return updated
        if new == "":
            self.ctx.report(original, self.id, f"{code(original)} has no MindSpore counterpart", Severity.WARNING)
            return updated
        if new != RUN_TIME:
            self.ctx.count_converted()
            if "." in new:  # a layer MindSpore wraps: bn2d.gamma
                return cst.parse_expression(f"{code(updated.value)}.{new}")
            return updated.with_changes(attr=cst.Name(new))
        if attr not in self._parameter_names and (attr not in self._run_time_names or attr in self._distinctive):
            return updated  # a distinctive name (in_features) is looked up by _torch_attribute below
        if id(original) in self._targets:
            self._written[id(original)] = attr  # leave_Assign writes it, or warns
            return updated
        return self._looked_up(original, updated)

    def _looked_up(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Call:
        """``_torch_layer_attribute(receiver, "weight", (MindSpore's names))``, with a note."""
        attr = original.attr.value
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(original)}: the layer's class is not known here: the parameter "
                        "is looked up by torch's name at run time (_torch_layer_attribute)", Severity.INFO)
        return cst.Call(runtime_helper(self.ctx, "_torch_layer_attribute"),
                        [cst.Arg(updated.value), cst.Arg(_string(attr)), cst.Arg(self._candidates(attr))])

    def _candidates(self, attr: str) -> cst.BaseExpression:
        """MindSpore's names of the torch parameter ``attr``, as a tuple display."""
        names = self._run_time_names.get(attr, ())
        return cst.Tuple([cst.Element(_string(n)) for n in names]) if names else cst.Tuple([])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        """``a.weight = b.weight`` where ``a``'s class is known only at run time: the
        parameter is set under the name the layer has (``_torch_set_layer_attribute``)."""
        written = [t for t in original.targets if id(t.target) in self._written]
        if not written:
            return updated
        if len(original.targets) != 1:
            return self._unwritable(original, updated, written[0].target)
        attr = self._written.pop(id(written[0].target))
        target = updated.targets[0].target
        self.ctx.count_converted()
        self.ctx.report(original, self.id, f"{code(original.targets[0].target)}: the layer's class is not known "
                        "here: the parameter is set under the layer's own name at run time "
                        "(_torch_set_layer_attribute)", Severity.INFO)
        call = cst.Call(runtime_helper(self.ctx, "_torch_set_layer_attribute"),
                        [cst.Arg(target.value), cst.Arg(_string(attr)), cst.Arg(self._candidates(attr)),
                         cst.Arg(updated.value)])
        return cst.Expr(call)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        if id(original.target) in self._written:
            return self._unwritable(original, updated, original.target)
        return updated

    def leave_Del(self, original: cst.Del, updated: cst.Del):
        if id(original.target) in self._written:
            return self._unwritable(original, updated, original.target)
        return updated

    def _unwritable(self, statement, updated, target):
        """A torch parameter name changed in a way no run-time lookup can stand for: a
        warning on the line (marked in the code), counted unconverted."""
        attr = self._written.pop(id(target), target.attr.value)
        self.ctx.count_unconverted()
        others = ", ".join(n for n in self._parameter_names.get(attr, ()) if "." not in n)
        self.ctx.mark(statement, self.id, f"torch.nn.Module.{attr}: {code(target)} changed on a layer of a class not "
                      f"known here, which MindSpore may name otherwise ({others}): use the layer's own name")
        return updated

    def _class_name(self, original: cst.Attribute, updated: cst.Attribute):
        """``m.__class__.__name__`` / ``type(m).__name__`` (not ``self``'s: a class of the
        file keeps its name) -> ``_torch_class_name(m)``, in a file holding a string such a
        name is compared with: code comparing it expects torch's class names, and a converted
        layer's class is MindSpore's. Not a torch use: not counted."""
        owner = original.value
        if isinstance(owner, cst.Attribute) and owner.attr.value == "__class__":
            obj, converted = owner.value, updated.value.value if isinstance(updated.value, cst.Attribute) else None
        elif (isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "type"
              and len(owner.args) == 1 and not owner.args[0].keyword and not owner.args[0].star):
            obj, converted = owner.args[0].value, updated.value.args[0].value if isinstance(updated.value, cst.Call) else None
        else:
            return updated
        if not self._names_compared or converted is None or (isinstance(obj, cst.Name) and obj.value in ("self", "cls")):
            return updated
        source = TORCH_CLASS_NAME.replace("{names}", repr(self._class_names))
        return cst.Call(emitted(self.ctx, "_torch_class_name", source), [cst.Arg(converted)])

    def _unknown_receiver(self, original: cst.Attribute, updated: cst.Attribute):
        """``net.fc.in_features`` with ``net.fc`` of unknown type: torch's name when the
        object has it, else the converted layer's (``in_channels``), chosen at run time.
        Not ``self.in_features`` (the class's own attribute), nor assignment targets.
        ``m.weight`` where ``m`` is the layer ``model.apply(init)`` hands to ``init``: the
        parameter under any of its MindSpore names."""
        ms_name = self._distinctive.get(original.attr.value)
        receiver = original.value
        if (self._any_layer and self._any_layer[-1] and isinstance(receiver, cst.Name)
                and receiver.value == self._any_layer[-1] and receiver.value not in self._guarded
                and original.attr.value in self._parameter_names):
            if id(original) in self._targets:
                self._written[id(original)] = original.attr.value  # leave_Assign writes it, or warns
                return updated
            return self._looked_up(original, updated)
        if ms_name is None or id(original) in self._targets or (isinstance(receiver, cst.Name) and (
                receiver.value in ("self", *self._guarded) or receiver.value in self.ctx.imports.bindings)):
            return updated
        helper = runtime_helper(self.ctx, "_torch_attribute")
        self.ctx.count_converted()
        return cst.Call(helper, [cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(original.attr.value))),
                                 cst.Arg(cst.SimpleString(repr(ms_name)))])

    def _known_layer(self, original: cst.Attribute, updated: cst.Attribute):
        if not self._renames or not self._renames[-1]:
            return updated
        layer = original.value
        if not (isinstance(layer, cst.Attribute) and isinstance(layer.value, cst.Name) and layer.value.value == "self"):
            return updated
        renames = self._renames[-1].get(layer.attr.value)
        new = renames.get(original.attr.value) if renames else None
        if new is None or new == original.attr.value:
            return updated
        if new == "":
            self.ctx.report(original, self.id, f"self.{layer.attr.value}.{original.attr.value} has no MindSpore counterpart", Severity.WARNING)
            return updated
        self.ctx.count_converted()
        return updated.with_changes(attr=cst.Name(new))

    def visit_If(self, node: cst.If) -> None:
        guard = _isinstance_guard(node.test, self.ctx, self.tables)
        self._guarded.append(guard[0] if guard else _target_class_test(node.test, self.ctx))
        if guard is None:
            self._narrow(node)

    def _narrow(self, node: cst.If) -> None:
        """``if isinstance(module, T5Attention):`` with a class of the tree: in the
        branch, ``module`` holds an instance of it, so the type index answers for
        ``module.relative_attention_bias.weight`` (an Embedding's: ``embedding_table``); with
        several classes (``isinstance(module, (T5Model, T5EncoderModel))``) one of them."""
        parts = _isinstance_test(node.test)
        if parts is None:
            return
        classes = tuple(self._tree_class(c) for c in parts[1])
        if None not in classes:
            self._narrowed.update(dict.fromkeys(_uses_of(node.body, parts[0]), classes))

    def _tree_class(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of the class of the tree ``expr`` names, as the type index knows
        it (whether it is a Module need not be known: what its code sets is); None for
        anything else."""
        spelled = dotted_name(expr)
        if spelled is None:
            return None
        types = self.facts.layer_types()
        package = getattr(self.ctx, "package", None)
        qual = package.names.get(spelled) if package is not None else None
        if qual is None and f"{types.index.module}.{spelled}" in types.index.classes:
            qual = f"{types.index.module}.{spelled}"
        return qual if qual in types.index.classes else None

    def leave_If(self, original: cst.If, updated: cst.If):
        self._guarded.pop()
        return self._in_isinstance_branch(original, updated)

    def _in_isinstance_branch(self, original: cst.If, updated: cst.If):
        """``if isinstance(m, nn.BatchNorm2d): init(m.weight)`` -> ``m.gamma`` in that branch;
        where the classes tested disagree (``(nn.Linear, nn.Embedding)``), the name is
        chosen at run time: ``(m.embedding_table if isinstance(m, nn.Embedding) else m.weight)``."""
        guard = _isinstance_guard(original.test, self.ctx, self.tables)
        if guard is None:
            return updated
        name, per_class = guard
        spelled = [code(c) for c in _isinstance_test(updated.test)[1]]  # as the converted code spells them
        reads = _reads(name, per_class, spelled)
        if not reads:
            return updated
        renamer = _Renamer(name, reads, depth=self._blocks)
        body = rewrite(updated.body, renamer)
        test = rewrite(updated.test, renamer) if updated.test is not _guard_call(updated.test) else updated.test
        if renamer.count:
            self.ctx.count_converted(renamer.count)
        return updated.with_changes(test=test, body=body)


def _reads(name: str, per_class: list[dict[str, str]], spelled: list[str]) -> dict[str, tuple[str, bool]]:
    """attribute -> (the code reading it, whether it is one plain attribute)."""
    out = {}
    for attr in sorted({a for renames in per_class for a in renames}):
        names = [renames.get(attr, attr) for renames in per_class]
        if len(set(names)) == 1:
            out[attr] = (f"{name}.{names[0]}", True)
            continue
        # the most common name is the fallback (on a tie, the torch name), the others are
        # tested class by class
        fallback = max(sorted(set(names)), key=lambda n: (names.count(n), n == attr))
        text = f"{name}.{fallback}"
        for other in sorted(set(names) - {fallback}):
            owners = [cls for cls, n in zip(spelled, names) if n == other]
            test = owners[0] if len(owners) == 1 else "(" + ", ".join(owners) + ")"
            text = f"{name}.{other} if isinstance({name}, {test}) else {text}"
        out[attr] = (f"({text})", False)
    return out


def _isinstance_guard(test, ctx, tables):
    """``isinstance(name, cls_or_tuple)`` with torch layer classes -> (name, the renames of
    each class, in the order tested); None when the test is something else."""
    parts = _isinstance_test(test)
    if parts is None:
        return None
    name, items = parts
    per_class: list[dict[str, str]] = []
    for item in items:
        qual = ctx.imports.qualify(item)
        entry = tables.lookup(qual) if qual else None
        if entry is None or entry.kind != "class":
            return None
        per_class.append(attribute_renames(entry))
    return name, per_class


def _guard_call(test):
    """The ``isinstance`` call of ``isinstance(m, X)`` and of ``isinstance(m, X) and ...``
    (the operands after it run only where it holds)."""
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        test = test.left
    return test


def _isinstance_test(test) -> tuple[str, list] | None:
    """(name, the class expressions) of ``isinstance(name, cls_or_tuple)`` (or of several
    such tests of one name joined by ``or``), alone or first in an ``and``."""
    test = _guard_call(test)
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        # isinstance(m, A) or isinstance(m, B): isinstance(m, (A, B))
        left, right = _isinstance_test(test.left), _isinstance_test(test.right)
        if left is None or right is None or left[0] != right[0] or test.left is not _guard_call(test.left):
            return None
        return left[0], left[1] + right[1]
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
        return None
    classes = test.args[1].value
    return test.args[0].value.value, [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]


def _target_class_test(test, ctx) -> str | None:
    """``name`` of ``isinstance(name, mindspore.nn.BatchNorm2d)`` (any class of the target
    framework in the test): code already converted, whose attribute reads are MindSpore's."""
    parts = _isinstance_test(test)
    if parts is None:
        return None
    targets = {m.split(".")[0] for m in ctx.module_map.values()}
    if any((ctx.imports.qualify(item) or "").split(".")[0] in targets for item in parts[1]):
        return parts[0]
    return None


def _uses_of(body: cst.CSTNode, name: str) -> list[int]:
    """The ids of the loads of ``name`` in ``body`` that start an attribute chain."""
    found: list[int] = []

    class Uses(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if type(node.value) is cst.Name and node.value.value == name:
                found.append(id(node.value))

    body.visit(Uses())
    return found


def _narrowed_shape(node: cst.BaseExpression, narrowed: dict[int, tuple[str, ...]]) -> tuple | None:
    """The type index's shape of an attribute chain whose first name an isinstance test
    narrowed to a class of the tree (``module.relative_attention_bias``); None otherwise."""
    if type(node) is cst.Attribute:
        inner = _narrowed_shape(node.value, narrowed)
        return ("get", inner, node.attr.value) if inner is not None else None
    if type(node) is cst.Name and id(node) in narrowed:
        return ("any", tuple(("self", cls) for cls in narrowed[id(node)]))  # an instance of one of them
    return None


def _string(text: str) -> cst.SimpleString:
    """A string literal as black writes it."""
    return cst.SimpleString(json.dumps(text))


_RENAMED: dict[int, tuple] = {}


def _renamed_attributes(tables) -> frozenset[str]:
    """torch attribute names some layer of the tables names otherwise (once per tables)."""
    known = _RENAMED.get(id(tables))
    if known is None or known[0] is not tables:
        names = {a for qual, e in tables.entries.items() if e.kind == "class" and qual.startswith("torch.nn.")
                 and e.target for a in attribute_renames(e)}
        known = _RENAMED[id(tables)] = (tables, frozenset(names))
    return known[1]


class _Renamer(cst.CSTTransformer):
    """Reads of ``name.attr`` in a branch -> the code ``reads`` gives; a read chosen at run
    time is not a target, so an assignment to it is left (and reported by nothing else)."""

    def __init__(self, name: str, reads: dict[str, tuple[str, bool]], depth: int = 0):
        self.name, self.reads, self.count = name, reads, 0
        self._targets: set[int] = set()
        self._depth = depth  # indentation level, for the width black lays lines out in
        self._counts: list[int] = []

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._depth += 1

    def leave_IndentedBlock(self, original, updated):
        self._depth -= 1
        return updated

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._counts.append(self.count)

    def leave_SimpleStatementLine(self, original, updated):
        """A line changed here gets black's layout now (the engine formatted the lines of
        the branch before this rename; the next run would lay it out)."""
        if self.count == self._counts.pop():
            return updated
        try:
            return format_statement(updated, 4 * self._depth)
        except InvalidStatement:
            return updated

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if not (isinstance(updated.value, cst.Name) and updated.value.value == self.name):
            return updated
        read = self.reads.get(updated.attr.value)
        if read is None or (not read[1] and id(original) in self._targets):
            return updated
        self.count += 1
        return cst.parse_expression(read[0])
