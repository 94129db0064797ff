"""What the passes know about one file, gathered once and shared.

The pipeline builds one ``FileFacts`` per file before the passes run (``analyse``), from
ONE walk that lists the interesting nodes by scope (``transpile.engine.walk.ScopeIndex``).
Every fact below is computed from that index the first time a pass asks for it, once
per node, and every pass reads the same answer: no pass walks the file on its own.

Facts are about the ORIGINAL file: ask with the original nodes (``visit_*`` arguments
and ``original`` in ``leave_*``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

import libcst as cst

from transpile.engine.context import FileContext
from transpile.engine.facts import Facts
from transpile.engine.names import NameRoles, identifiers
from transpile.engine.package_index import PackageIndex
from transpile.engine.type_index import TypeIndex
from transpile.engine.walk import ScopeIndex, iter_nodes

from .syntax import code, is_emitted_name, literal_value
from .table_calls import accepts_arguments, tables
from .cell_names import target_cell_classes
from .analysis.backward import is_backward_call
from .analysis.shared_writes import OVERLAPPING_VIEWS, VIEW_METHODS, aliased_writes
from .analysis.compiled import compiled_method
from .analysis.layer_types import LayerTypes
from .target_code import target_definitions
from .training_plan import TrainingPlan, make_plan
from .value_transforms import indexes_an_array
from .tensor_inference import TensorScope, forward_params, is_tensor, named_params, target_names

# The node types the index lists (scopes are always listed).
INDEXED = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Call, cst.For, cst.WithItem, cst.NamedExpr,
           cst.ExceptHandler, cst.Global, cst.Nonlocal, cst.Import, cst.ImportFrom, cst.Return, cst.Subscript,
           cst.SimpleString)

_PARAMETER_CLASSES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
_PARAMETERS_OF = re.compile(r"([\w.]+)\.(?:named_)?parameters\(")  # the model an optimizer is given
LIST_TYPES = frozenset({"list", "List", "MutableSequence"})


def _never(scope) -> bool:
    return False


def lambdas_only(scope) -> bool:
    return type(scope) is cst.Lambda


def _not_a_class(scope) -> bool:
    return type(scope) is not cst.ClassDef


def _callback_name(expr) -> str | None:
    """``f`` of ``f`` and of ``self.f`` (a function or method handed to ``apply``)."""
    if isinstance(expr, cst.Name):
        return expr.value
    return _self_attribute(expr)


def _self_attribute(expr) -> str | None:
    """``X`` of ``self.X``."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


@dataclass(frozen=True, eq=False)
class FileFacts(Facts):
    """Facts about one file for the passes; see the module docstring. Built by ``build``;
    frozen: the facts a pass reads are those every other pass reads."""

    module: cst.Module  # the original tree
    ctx: FileContext
    index: ScopeIndex
    emitted_definitions: frozenset[str]  # top-level definitions an earlier run emitted
    target_cells: frozenset[str]  # Cells of the file written for MindSpore
    _memo: dict = field(default_factory=dict, repr=False)  # (fact, id(node)) -> the answer

    @classmethod
    def build(cls, module: cst.Module, ctx: FileContext) -> "FileFacts":
        names = NameRoles()  # which names are references, filled by the index's walk
        index = ScopeIndex(module, INDEXED, names)
        names.freeze()
        emitted = frozenset(stmt.name.value for stmt in module.body
                            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and is_emitted_name(stmt.name.value))
        for stmt in module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value in emitted:
                ctx.freeze(stmt)
        # definitions written for MindSpore (a file converted partly by hand) stay as written
        target_roots = tables().framework_roots - ctx.source_roots
        for definition in target_definitions(module, ctx.imports.bindings, ctx.source_roots, target_roots, names):
            ctx.freeze(definition)
        return cls(names, module, ctx, index, emitted, target_cell_classes(module, ctx))

    def _once(self, fact: str, node: cst.CSTNode, compute: Callable[[], object]):
        key = (fact, id(node))
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def training_plan(self) -> TrainingPlan | None:
        """Where the file trains (``rewrites/training_plan.py``); None where it calls no
        ``.backward(`` (the text settles most files at once)."""
        return self._once("training_plan", self.module, lambda: make_plan(
            self.module, self.ctx.imports.qualify, self.names, *self.torch_optimizers(), reads_grads=self._reads_grads())
            if ".backward(" in self.ctx.source else None)

    def _reads_grads(self) -> bool:
        """Whether the file reads an attribute ``grad`` (``p.grad``, ``p.grad.norm()``)."""
        return "grad" in self.names.attributes

    def calls_backward_anywhere(self) -> bool:
        """Whether the file calls ``.backward()`` anywhere (``analysis.backward.is_backward_call``):
        a training script. A file without the text is answered at once."""
        return self._once("calls_backward_anywhere", self.module, lambda: ".backward(" in self.ctx.source and any(
            map(is_backward_call, self.nodes(self.module, (cst.Call,)))))

    def torch_optimizers(self) -> tuple[frozenset[str], frozenset[str], Mapping[str, frozenset[str]]]:
        """The code of what the file binds to a torch optimizer (``optimizer``, ``self.opt``)
        and to a torch lr scheduler, anywhere in the file; and per optimizer, the models whose
        ``parameters()`` its constructor is given (``netD`` for ``Adam(netD.parameters())``)."""
        def compute():
            optimizers: set[str] = set()
            schedulers: set[str] = set()
            models: dict[str, frozenset[str]] = {}
            if "optim" not in self.ctx.source:
                return frozenset(), frozenset(), MappingProxyType(models)
            for node in self.nodes(self.module, (cst.Assign,)):
                qual = self.ctx.imports.qualify(node.value.func) if isinstance(node.value, cst.Call) else None
                if not qual or not qual.startswith("torch.optim.") or not qual.rsplit(".", 1)[-1][:1].isupper():
                    continue
                scheduler = qual.startswith("torch.optim.lr_scheduler.")
                targets = [code(t.target) for t in node.targets]
                (schedulers if scheduler else optimizers).update(targets)
                if not scheduler:
                    given = frozenset(_PARAMETERS_OF.findall(code(node.value)))
                    models.update((target, given) for target in targets)
            return frozenset(optimizers), frozenset(schedulers), MappingProxyType(models)
        return self._once("torch_optimizers", self.module, compute)

    def nodes(self, scope, kinds, enter=None):
        return self.index.nodes(scope, kinds, enter)

    def identifiers(self, scope: cst.CSTNode) -> frozenset[str]:
        """Every identifier written in ``scope`` (a function or the module), variable or label:
        a name a pass binds there avoids them all (``syntax.free_name``)."""
        return self._once("identifiers", scope, lambda: frozenset(identifiers(scope)))

    # -- classes -------------------------------------------------------------------
    def tensor_attributes(self, class_node: cst.ClassDef) -> frozenset[str]:
        """``self.X = nn.Parameter(...)`` and ``self.register_buffer("X", ...)`` in the class
        (nested classes left out): ``"self.X"`` holds a tensor in its methods."""
        def compute():
            found: set[str] = set()
            for node in self.nodes(class_node, (cst.Assign, cst.Call), _not_a_class):
                if type(node) is cst.Assign:
                    value = node.value
                    if isinstance(value, cst.Call) and (self.ctx.imports.qualify(value.func) or "") in _PARAMETER_CLASSES:
                        found.update(f"self.{a}" for t in node.targets if (a := _self_attribute(t.target)))
                else:
                    f = node.func
                    if (isinstance(f, cst.Attribute) and f.attr.value == "register_buffer" and _self_attribute(f)
                            and node.args and isinstance(node.args[0].value, cst.SimpleString)):
                        found.add(f"self.{node.args[0].value.evaluated_value}")
            return frozenset(found)
        return self._once("tensor_attributes", class_node, compute)

    def registered_buffers(self, class_node: cst.ClassDef) -> Mapping:
        """``self.register_buffer("X", t, persistent=p)`` in the class (nested classes left
        out): X -> the ``persistent`` argument as written (None: torch's default True)."""
        def compute():
            found: dict = {}
            for node in self.nodes(class_node, (cst.Call,), _not_a_class):
                f = node.func
                if not (isinstance(f, cst.Attribute) and f.attr.value == "register_buffer" and _self_attribute(f)
                        and node.args and isinstance(node.args[0].value, cst.SimpleString)):
                    continue
                persistent = next((a.value for a in node.args if a.keyword and a.keyword.value == "persistent"),
                                  node.args[2].value if len(node.args) > 2 and not node.args[2].keyword else None)
                found[node.args[0].value.evaluated_value] = persistent
            return MappingProxyType(found)
        return self._once("registered_buffers", class_node, compute)

    def self_attribute_reads(self, class_node: cst.ClassDef) -> Mapping:
        """Each method of the class -> the X of every ``self.X`` it reads (assignment targets
        left out). Asked only where compiled code assigns an attribute of self: a walk of
        that class's methods, once."""
        def compute():
            found: dict = {}
            for fn in class_node.body.body:
                if not isinstance(fn, cst.FunctionDef):
                    continue
                stores = {id(t.target) for a in self.nodes(fn, (cst.Assign,)) for t in a.targets}
                found[fn.name.value] = frozenset(
                    n.attr.value for n in iter_nodes(fn.body)
                    if type(n) is cst.Attribute and id(n) not in stores and isinstance(n.value, cst.Name)
                    and n.value.value == "self")
            return MappingProxyType(found)
        return self._once("self_attribute_reads", class_node, compute)

    def forward_helpers(self, class_node: cst.ClassDef) -> frozenset[str]:
        """Methods of the class that forward/construct calls on ``self``, directly or through
        each other (``self.features(x)``, ``self._forward_impl(x)``): their parameters take
        what forward passes on, tensors by the same convention. Properties are left out."""
        def compute():
            methods = {}
            for stmt in class_node.body.body:
                if isinstance(stmt, cst.FunctionDef) and not any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in stmt.decorators
                ):
                    methods[stmt.name.value] = stmt
            roots = [n for n in ("forward", "construct") if n in methods]
            reached, todo = set(roots), list(roots)
            while todo:
                called = {a for call in self.nodes(methods[todo.pop()], (cst.Call,))
                          if (a := _self_attribute(call.func))}
                for name in called & set(methods):
                    if name not in reached and not name.startswith("__"):
                        reached.add(name)
                        todo.append(name)
            return frozenset(reached - set(roots))
        return self._once("forward_helpers", class_node, compute)

    def submodule_helpers(self) -> frozenset[tuple[str, str]]:
        """(class, method) of the file's classes that compiled code calls on a submodule held
        by another class of the file (``self.attention.initial_weights(n)`` in a forward,
        ``self.attention`` an instance of the file's ``Attention``), and what those call on
        ``self``, directly or in turn: GRAPH mode compiles them as it compiles forward's
        own helpers. The attribute's class comes from the type index; where it cannot tell
        (a layer handed to ``__init__``: RAFT's ``self.corr_block.build_pyramid(...)``), from
        the method's name, when exactly one other class of the file defines it."""
        def compute():
            classes = {s.name.value: s for s in self.module.body if isinstance(s, cst.ClassDef)}
            if len(classes) < 2:
                return frozenset()
            index = self.type_index()
            methods = {name: {m.name.value: m for m in c.body.body if isinstance(m, cst.FunctionDef)}
                       for name, c in classes.items()}

            def held_class(owner: str, attribute: str, method: str) -> str | None:
                types = index.classes.get(f"{index.module}.{owner}")
                value = types.attributes[attribute].value if types and attribute in types.attributes else None
                if not value or value == ("?",):  # unknown: the one class of the file with that method
                    defining = [c for c in classes if c != owner and method in methods[c]]
                    return defining[0] if len(defining) == 1 else None
                if not (value[0] == "call" and value[1][0] == "ref"):
                    return None
                module, _, name = value[1][1].rpartition(".")
                return name if module == index.module and name in classes else None

            todo = [(c, m) for c, node in classes.items() for m in methods[c]
                    if m in ("forward", "construct") or m in self.forward_helpers(node)]
            seen, reached = set(todo), set()
            while todo:
                owner, method = todo.pop()
                for call in self.nodes(methods[owner][method], (cst.Call,)):
                    func = call.func
                    if not isinstance(func, cst.Attribute) or func.attr.value.startswith("__"):
                        continue
                    holder = _self_attribute(func.value)
                    target = held_class(owner, holder, func.attr.value) if holder else (owner if _self_attribute(func) else None)
                    key = (target, func.attr.value)
                    if target and key[1] in methods[target] and key not in seen:
                        seen.add(key)
                        reached.add(key)
                        todo.append(key)
            return frozenset(reached)
        return self._once("submodule_helpers", self.module, compute)

    def compiled_callees(self) -> frozenset[int]:
        """ids of the module's functions that compiled methods (``compiled_method``) call by
        name (``f(...)``), nested functions' calls included: GRAPH mode compiles them too."""
        def compute():
            functions = {s.name.value: s for s in self.module.body if isinstance(s, cst.FunctionDef)}
            if not functions:
                return frozenset()  # (no module function a method could call: the methods are not read)
            called = set()
            for cls in (s for s in self.module.body if isinstance(s, cst.ClassDef)):
                for method in cls.body.body:
                    if isinstance(method, cst.FunctionDef) and compiled_method(self.ctx, method, cls):
                        called.update(call.func.value for call in self.nodes(method, (cst.Call,))
                                      if isinstance(call.func, cst.Name))
            return frozenset(id(functions[n]) for n in called if n in functions)
        return self._once("compiled_callees", self.module, compute)

    def layer_attributes(self, class_node: cst.ClassDef, tables) -> Mapping:
        """``self.X = nn.Y(...)`` (also annotated, ``self.X: nn.Y = nn.Y(...)``, or
        ``self.add_module('X', nn.Y(...))``) anywhere in a class body: attribute X -> Y's
        table entry. A construction the tables cannot convert (an unknown argument) stays a
        torch layer, so it is left out: its calls and attributes stay torch's too."""
        def entry_of(value):
            qual = self.ctx.imports.qualify(value.func) if isinstance(value, cst.Call) else None
            entry = tables.lookup(qual) if qual else None
            return entry if entry is not None and accepts_arguments(entry, value) else None

        def compute():
            found: dict = {}
            for node in self.nodes(class_node, (cst.Assign, cst.AnnAssign, cst.Call)):
                if isinstance(node, cst.Assign):
                    if len(node.targets) != 1:
                        continue
                    attr, entry = _self_attribute(node.targets[0].target), entry_of(node.value)
                elif isinstance(node, cst.AnnAssign):
                    if node.value is None:
                        continue
                    attr, entry = _self_attribute(node.target), entry_of(node.value)
                elif (isinstance(node.func, cst.Attribute) and node.func.attr.value in ("add_module", "register_module")
                      and _self_attribute(node.func) is not None and len(node.args) == 2
                      and isinstance(node.args[0].value, cst.SimpleString) and not node.args[0].star):
                    attr, entry = node.args[0].value.evaluated_value, entry_of(node.args[1].value)
                else:
                    continue
                if entry is not None and attr is not None:
                    found[attr] = entry
            return MappingProxyType(found)
        return self._once("layer_attributes", class_node, compute)

    def type_index(self) -> TypeIndex:
        """What the attributes, locals and returns of the file's classes and functions hold,
        and of the tree's that they reach (``transpile/engine/type_index.py``): handed by
        ``convert_paths`` for a file of a tree, else indexed from the file alone."""
        package = self.ctx.package
        if package is not None and package.types.module:
            return package.types
        return self._once("type_index", self.module, lambda: PackageIndex.of_text(self.ctx.source).types("__main__"))

    def layer_types(self) -> LayerTypes:
        """The type index read as torch layers (``analysis/layer_types.py``), one per file:
        its answers are kept."""
        return self._once("layer_types", self.module, lambda: LayerTypes(self.type_index(), tables()))

    # -- functions -----------------------------------------------------------------
    def list_names(self, fn: cst.FunctionDef | None) -> frozenset[str]:
        """Names that hold a list wherever the function uses them: parameters annotated as
        lists, and local names every binding of which is a list display or comprehension
        (``padding = [k // 2 for k in kernel]``) or a call of ``list``."""
        if fn is None:
            return frozenset()
        return self._once("list_names", fn, lambda: _list_names(self, fn))

    def module_calls(self, fn: cst.FunctionDef) -> tuple[cst.Call, ...]:
        """Calls in the function, its lambdas included, nested functions and classes left out."""
        return self._once("module_calls", fn, lambda: tuple(
            self.nodes(fn, (cst.Call,), lambda s: type(s) is cst.Lambda)))

    def assignments_and_calls(self, fn: cst.FunctionDef, enter=None) -> tuple:
        """Assignments and calls anywhere in the function (nested scopes included unless
        ``enter`` says otherwise), in source order."""
        key = "assignments_and_calls" if enter is None else f"assignments_and_calls:{enter.__name__}"
        return self._once(key, fn, lambda: tuple(self.nodes(fn, (cst.Assign, cst.Call), enter)))

    def aliased_writes(self, fn: cst.FunctionDef) -> tuple[tuple[cst.CSTNode, str, str], ...]:
        """``analysis.shared_writes.aliased_writes`` of ``fn``: (write statement, written name,
        what the name shares) for each write of its own body another name sees in torch."""
        return self._once("aliased_writes", fn, lambda: tuple(aliased_writes(fn, self.names)))

    def written_view_pieces(self, fn: cst.FunctionDef | None) -> tuple[frozenset[str], frozenset[int], frozenset[int],
                                                                        frozenset[str]]:
        """Views of a named tensor that the function writes in place (``z.mul_(k)``,
        ``z[:, 1].add_(v)``, ``z += v``): the names holding them, the calls that make pieces of
        ``split``/``chunk`` (ids), the values of the assignments that bind a view whose writes
        must reach its tensor (ids), and the names bound to those pieces and views (a subset
        of the first):
        ``for qc, oc in zip(q.split(n), o.split(n)): oc.mul_(k)`` changes ``o`` in torch;
        ``a, b = x.chunk(2); a.add_(1)`` changes ``x``; so does ``z = x[:, 0:4:2]; z.mul_(2)``
        (or ``x.view(-1)``, ``x.transpose(0, 1)``, ``x.chunk(2)[0]``, ...: VIEW_METHODS) where
        another name sees the write (``aliased_writes``: ``x`` read after it, or a caller's
        tensor), and a view of such a view. Nested scopes left out."""
        if fn is None:
            return frozenset(), frozenset(), frozenset(), frozenset()
        return self._once("written_view_pieces", fn, lambda: _written_view_pieces(self, fn))

    def returns_mutated_param(self, fn: cst.FunctionDef) -> str | None:
        """The parameter ``fn`` changes in place (``n[...] = v``, ``n[...] op= v``,
        ``n op= v``, ``n.op_(...)``) and always returns; nested scopes left out."""
        def compute():
            returned: set[str | None] = set()
            mutated: set[str] = set()
            for node in self.nodes(fn, (cst.Return, cst.Assign, cst.AugAssign, cst.Call), _never):
                kind = type(node)
                if kind is cst.Return:
                    returned.add(node.value.value if isinstance(node.value, cst.Name) else None)
                elif kind is cst.Call:
                    f = node.func
                    if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name)
                            and f.attr.value.endswith("_") and not f.attr.value.endswith("__")):
                        mutated.add(f.value.value)
                else:
                    targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
                    for target in targets:
                        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                            mutated.add(target.value.value)
                        elif kind is cst.AugAssign and isinstance(target, cst.Name):
                            mutated.add(target.value)
            if len(returned) != 1:
                return None
            (name,) = returned
            if name is None or name not in mutated or name not in {p.name.value for p in named_params(fn)}:
                return None
            return name
        return self._once("returns_mutated_param", fn, compute)

    # -- the whole file --------------------------------------------------------------
    def list_attributes(self) -> frozenset[str]:
        """Attribute names some class of the file declares as lists (dataclass fields and
        class-level annotations: ``stride_q: List[int]``)."""
        def compute():
            names: set[str] = set()
            for node in self.nodes(self.module, (cst.ClassDef,)):
                for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                    if isinstance(stmt, cst.SimpleStatementLine):
                        for small in stmt.body:
                            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                                    and is_list_annotation(small.annotation):
                                names.add(small.target.value)
            return frozenset(names)
        return self._once("list_attributes", self.module, compute)

    def assigned_attributes(self) -> frozenset[str]:
        """Attribute names the file assigns to anywhere (``self.is_cuda = ...``): a name
        of the file's own objects, not a torch tensor's."""
        def compute():
            names: set[str] = set()
            for node in self.nodes(self.module, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                while targets:
                    t = targets.pop()
                    if isinstance(t, cst.Attribute):
                        names.add(t.attr.value)
                    elif isinstance(t, (cst.Tuple, cst.List)):
                        targets.extend(e.value for e in t.elements)
            return frozenset(names)
        return self._once("assigned_attributes", self.module, compute)

    def string_literals(self) -> frozenset[str]:
        """The values of the file's plain string literals: the names code may look up at
        run time (``getattr(torch.nn, config.norm_class_name)`` with ``"LayerNorm"`` in a
        config default). Not those of definitions an earlier run emitted (their dict keys
        are no names a config holds)."""
        def compute():
            found = (literal_value(node) for node in self.nodes(self.module, (cst.SimpleString,),
                                                               lambda scope: id(scope) not in self.ctx.frozen))
            return frozenset(v for v in found if type(v) is str)
        return self._once("string_literals", self.module, compute)

    def writes_infinity(self) -> bool:
        """Whether the file writes an infinity (``float("-inf")``, ``math.inf``, ``np.inf``,
        ``torch.inf``): where a softmax's row may be -inf everywhere (a filled mask)."""
        def compute():
            if any(v.strip().lstrip("+-").lower() in ("inf", "infinity") for v in self.string_literals()):
                return True
            return any(node.attr.value == "inf" for node in self.nodes(self.module, (cst.Attribute,)))
        return self._once("writes_infinity", self.module, compute)

    def qualified_calls(self) -> frozenset[str]:
        """The qualified names of the imported functions and classes the file calls
        (``torch.nn.utils.rnn.pack_padded_sequence``)."""
        def compute():
            found = (self.ctx.imports.qualify(node.func) for node in self.nodes(self.module, (cst.Call,)))
            return frozenset(q for q in found if q)
        return self._once("qualified_calls", self.module, compute)

    def names_used_as_classes(self) -> frozenset[str]:
        """The names the file uses as classes: the type given to ``isinstance``/``issubclass``,
        alone or in a tuple (``isinstance(mask, (Tensor, BlockMask))``), and the bases of its
        classes (``class Sampler(DistributedSampler)``): each must hold a class there."""
        def compute():
            found: set[str] = set()
            for node in self.nodes(self.module, (cst.Call, cst.ClassDef)):
                if type(node) is cst.ClassDef:
                    found.update(b.value.value for b in node.bases if type(b.value) is cst.Name and not b.star)
                elif (type(node.func) is cst.Name and node.func.value in ("isinstance", "issubclass")
                        and len(node.args) == 2 and not node.args[1].star):
                    kind = node.args[1].value
                    items = [e.value for e in kind.elements] if type(kind) is cst.Tuple else [kind]
                    found.update(item.value for item in items if type(item) is cst.Name)
            return frozenset(found)
        return self._once("names_used_as_classes", self.module, compute)

    def loss_layers(self) -> frozenset[str]:
        """Names the file binds to a torch loss layer (``criterion = nn.CrossEntropyLoss()``):
        calling one gives a tensor."""
        def compute():
            names: set[str] = set()
            for node in self.nodes(self.module, (cst.Assign,)):
                if isinstance(node.value, cst.Call):
                    entry = tables().lookup(self.ctx.imports.qualify(node.value.func) or "")
                    if entry is not None and entry.table == "nn_losses":
                        names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
            return frozenset(names)
        return self._once("loss_layers", self.module, compute)

    def apply_callbacks(self) -> frozenset[str]:
        """Names of the functions the file hands to ``X.apply(f)`` (a DCGAN's ``weights_init``)
        and of the methods it hands as ``self.apply(self._init_weights)``: their first
        parameter (after ``self``) is a layer of any class."""
        def compute():
            if ".apply(" not in self.ctx.source:
                return frozenset()
            return frozenset(_callback_name(node.args[0].value) for node in self.nodes(self.module, (cst.Call,))
                             if isinstance(node.func, cst.Attribute) and node.func.attr.value == "apply"
                             and len(node.args) == 1 and _callback_name(node.args[0].value)
                             and not node.args[0].keyword)
        return self._once("apply_callbacks", self.module, compute)

    def device_names(self) -> frozenset[str]:
        """Names the file binds to ``torch.device(...)`` (``dev = torch.device("cuda")``): a
        device's name, a string, once converted."""
        def compute():
            return frozenset(t.target.value for node in self.nodes(self.module, (cst.Assign,))
                             if isinstance(node.value, cst.Call)
                             and self.ctx.imports.qualify(node.value.func) == "torch.device"
                             for t in node.targets if isinstance(t.target, cst.Name))
        return self._once("device_names", self.module, compute)

    def empty_1d_tensor(self) -> cst.Call | None:
        """The first call of the file that makes a 1-D empty tensor (shape ``(0,)``):
        ``torch.empty(0)``, ``torch.zeros((0,))``, ``torch.tensor([])``, ``torch.Tensor()``,
        ``x.new_zeros(0)``, ... Sizes known only at run time are not seen."""
        return self._once("empty_1d_tensor", self.module, lambda: next(
            (c for c in self.nodes(self.module, (cst.Call,)) if _makes_empty_1d(c, self.ctx)), None))

    def array_element_params(self) -> Mapping[str, frozenset[str]]:
        """Parameters of the file's functions and methods (by function name) that a call in
        the file passes an element of an array (``f(sizes[i])``, ``self.f(n[0] // 2)``;
        not of a shape): inside, they may hold numpy scalars, which torch takes wherever it
        takes a Python number and MindSpore often refuses (``value_transforms.python_number``)."""
        return self._once("array_element_params", self.module, lambda: MappingProxyType(
            {name: frozenset(params) for name, params in _array_element_params(self).items()}))

    def call_site_tensor_params(self, roots: set[str]) -> Mapping[str, frozenset[str]]:
        """Parameters of the file's top-level functions that receive a tensor where the file
        calls them: ``py_sigmoid_focal_loss(torch.from_numpy(p), ...)``, or
        ``reduce_loss(loss, reduction)`` from a function in which ``loss`` is a tensor. They
        are tensors inside the function too. The calls are read in every top-level function,
        every method of a top-level class (forward/construct parameters are tensors) and
        each top-level statement, to a fixed point: a parameter counts once any call passes
        it a tensor."""
        return self._once("call_site_tensor_params", self.module, lambda: MappingProxyType(
            {name: frozenset(params) for name, params in _call_site_tensor_params(self, roots).items()}))


_SIZED_FACTORIES = frozenset(f"torch.{n}" for n in ("empty", "zeros", "ones", "full", "rand", "randn"))
_DATA_FACTORIES = frozenset(f"torch.{n}" for n in (
    "tensor", "as_tensor", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"))
_NEW_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"})


def _makes_empty_1d(call: cst.Call, ctx) -> bool:
    """``call`` gives a tensor of shape ``(0,)`` (literal sizes or data only)."""
    qual = ctx.imports.qualify(call.func) or ""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) and not qual else None
    if any(a.star for a in call.args):
        return False
    positional = [a.value for a in call.args if a.keyword is None]
    if qual in _DATA_FACTORIES or method == "new_tensor":
        data = positional[:1] or [a.value for a in call.args if a.keyword and a.keyword.value == "data"]
        if not data:
            return qual.endswith("Tensor")  # torch.Tensor(), torch.FloatTensor(): empty
        return literal_value(data[0]) in ([], ())
    if qual in _SIZED_FACTORIES or method in _NEW_METHODS:
        if qual == "torch.full" or method == "new_full":
            positional = positional[:1]  # (size, fill_value)
        sizes = positional or [a.value for a in call.args if a.keyword and a.keyword.value == "size"]
        if len(sizes) != 1:
            return False
        size = literal_value(sizes[0])
        return (type(size) is int and size == 0) or size in ((0,), [0])
    return False


def is_list_annotation(annotation: cst.Annotation | None) -> bool:
    """``list``, ``List[int]``, ``typing.List[int]`` or ``list[int]``."""
    if annotation is None:
        return False
    ann = annotation.annotation
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    if isinstance(ann, cst.Attribute):
        ann = ann.attr
    return isinstance(ann, cst.Name) and ann.value in LIST_TYPES


_BINDINGS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.WithItem, cst.NamedExpr, cst.ExceptHandler,
             cst.Global, cst.Nonlocal, cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef)


def _makes_list(value) -> bool:
    """A list display or comprehension, or a call of the builtin ``list`` (``list(x.shape)``)."""
    return isinstance(value, (cst.List, cst.ListComp)) or (
        type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "list")


VIEW_SPLITS = frozenset({"split", "chunk", "tensor_split"})
def view_binding_parent(value: cst.BaseExpression, qualify) -> cst.Name | None:
    """The named tensor ``value`` is a view of, through at least one step (``x[:, 0:4:2]``,
    ``x[0]``, ``x.view(-1)``, ``x.transpose(0, 1)[1]``, ``x.chunk(2, 1)[0]``): basic indexes
    only (slices, numbers, names, ``None``, ``...``: a list or tensor of indices makes a
    copy), no view whose elements may overlap, no ``view(dtype)``; else None."""
    root = view_base(value, qualify)
    return root if type(root) is cst.Name else None


def view_base(value: cst.BaseExpression, qualify) -> cst.BaseExpression | None:
    """What ``value`` is a view of, as view_binding_parent reads it (``(x + 1).t()``: ``x + 1``),
    or None (no view step)."""
    expr, steps = value, 0
    while True:
        kind = type(expr)
        if kind is cst.Subscript:
            if not all(_basic_index(e.slice) for e in expr.slice):
                return None
            expr = expr.value
            if type(expr) is cst.Call and type(expr.func) is cst.Attribute \
                    and expr.func.attr.value in (*VIEW_SPLITS, "unbind") and qualify(expr.func) is None:
                expr = expr.func.value  # x.chunk(2, 1)[0]: one piece
        elif kind is cst.Attribute and expr.attr.value in ("T", "mT"):
            expr = expr.value
        elif kind is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in VIEW_METHODS \
                and expr.func.attr.value not in OVERLAPPING_VIEWS and qualify(expr.func) is None:
            if expr.func.attr.value == "view" and len(expr.args) == 1 and type(expr.args[0].value) is cst.Attribute:
                return None  # x.view(torch.int32): another dtype
            expr = expr.func.value
        else:
            return expr if steps else None
        steps += 1


def _basic_index(part: cst.BaseSlice) -> bool:
    """A slice, a number, a name or ``None``/``...`` (torch's basic indexing: a view)."""
    if type(part) is cst.Slice:
        return True
    value = part.value
    while type(value) is cst.UnaryOperation:
        value = value.expression
    return type(value) in (cst.Integer, cst.Name, cst.Ellipsis, cst.BinaryOperation) \
        or (type(value) is cst.Attribute and type(value.value) is cst.Name and value.value.value == "self")


def view_split_parent(call: cst.BaseExpression, qualify) -> cst.Name | None:
    """The named tensor ``call`` splits into views: ``x`` of ``x.split(n, dim)``,
    ``x.chunk(2)``, ``torch.split(x, n)``; else None."""
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute or call.func.attr.value not in VIEW_SPLITS:
        return None
    if qualify(call.func) == f"torch.{call.func.attr.value}":
        first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
        first = first or next((a for a in call.args if a.keyword is not None
                               and a.keyword.value in ("input", "tensor")), None)
        parent = first.value if first is not None else None
    else:
        parent = call.func.value
    return parent if type(parent) is cst.Name else None


def _split_calls(value: cst.BaseExpression, qualify, aliases: Mapping[str, list]) -> list[cst.Call]:
    """The view splits whose pieces ``value`` yields: the call itself, an item of it, a
    local name bound to them (``aliases``), or zip/enumerate over them."""
    if view_split_parent(value, qualify) is not None:
        return [value]
    if type(value) is cst.Name:  # row_splits = zip(q.split(n), o.split(n)); for qc, oc in row_splits
        return aliases.get(value.value, [])
    if type(value) is cst.Subscript:
        return _split_calls(value.value, qualify, aliases)
    if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in ("zip", "enumerate", "list", "tuple"):
        return [c for a in value.args if not a.keyword for c in _split_calls(a.value, qualify, aliases)]
    return []


def _written_view_pieces(facts: FileFacts, fn: cst.FunctionDef) -> tuple[frozenset[str], frozenset[int], frozenset[int]]:
    written: set[str] = set()
    bound: list[tuple[set[str], list[cst.Call]]] = []
    views: list[tuple[str, cst.BaseExpression, str]] = []  # (name, the view bound to it, its tensor's name)
    aliases: dict[str, list[cst.Call]] = {}  # local name -> the splits whose pieces it holds
    qualify = facts.ctx.imports.qualify
    for node in facts.nodes(fn, (cst.Call, cst.Assign, cst.AugAssign, cst.For), _never):
        kind = type(node)
        if kind is cst.Call:
            receiver = node.func
            while type(receiver) is cst.Attribute and receiver.attr.value.endswith("_") \
                    and not receiver.attr.value.endswith("__"):
                receiver = receiver.value
                if type(receiver) is cst.Call:  # o.mul_(a).add_(b)
                    receiver = receiver.func
            while type(receiver) is cst.Subscript and receiver is not node.func:  # z[:, 1].mul_(2)
                receiver = receiver.value
            if type(receiver) is cst.Name and receiver is not node.func:
                written.add(receiver.value)
            continue
        if kind is cst.AugAssign:  # z += v: in place in torch
            if type(node.target) is cst.Name:
                written.add(node.target.value)
            continue
        value, targets = (node.iter, [node.target]) if kind is cst.For else (node.value, [t.target for t in node.targets])
        calls = _split_calls(value, qualify, aliases)
        if calls and kind is cst.Assign and len(targets) == 1 and type(targets[0]) is cst.Name:
            aliases[targets[0].value] = calls
        if calls:
            bound.append(({n for t in targets for n in target_names(t)}, calls))
        elif kind is cst.Assign and len(targets) == 1 and type(targets[0]) is cst.Name \
                and (base := view_base(value, qualify)) is not None:
            views.append((targets[0].value, value, base.value if type(base) is cst.Name else None))
    names: set[str] = set()
    calls: set[int] = set()
    values: set[int] = set()
    # the views written where another name sees it in torch (a view of a view: its tensor too)
    shared = {name for _, name, _ in facts.aliased_writes(fn)} if views else set()
    parents: set[int] = set()
    changed = True
    while changed:  # a piece of a piece written in place: the outer pieces note their tensor too
        changed = False
        for targets, made in bound:
            if targets & written and not {id(c) for c in made} <= calls:
                names |= targets & written
                calls.update(id(c) for c in made)
                written.update(view_split_parent(c, qualify).value for c in made)
                changed = True
        for at, (name, value, parent) in enumerate(views):
            if parent is not None and (name in shared or id(value) in parents) and id(value) not in values:
                names.add(name)
                values.add(id(value))
                # the view it is made from (the last binding of that name before it) notes its tensor too
                made_from = next((v for n, v, _ in reversed(views[:at]) if n == parent), None)
                if made_from is not None:
                    parents.add(id(made_from))
                changed = True
    # a view no other name sees, written in place: MindSpore's copy_ into a strided view leaves
    # it as it was (CPU), so its writes go through _torch_write_view too, which writes such a
    # view's own data
    own = {name for name, _, _ in views if name in written}
    return frozenset(names | own), frozenset(calls), frozenset(values), frozenset(names)


def _list_names(facts: FileFacts, fn: cst.FunctionDef) -> frozenset[str]:
    params = fn.params
    names = {p.name.value for p in named_params(fn) if is_list_annotation(p.annotation)}
    unannotated = {p.name.value for p in named_params(fn) if p.name.value not in names}
    if params.star_arg is not None and isinstance(params.star_arg, cst.Param):
        unannotated.add(params.star_arg.name.value)
    if params.star_kwarg is not None:
        unannotated.add(params.star_kwarg.name.value)
    list_only: set[str] = set()
    other: set[str] = set()

    def bind(target, value) -> None:
        if isinstance(target, cst.Name):
            (list_only if _makes_list(value) else other).add(target.value)
        else:  # unpacking: the names inside hold unknown values (a starred name always a list)
            other.update(target_names(target))

    for node in facts.nodes(fn, _BINDINGS, _never):
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                bind(t.target, node.value)
        elif kind in (cst.AnnAssign, cst.NamedExpr):
            bind(node.target, node.value)
        elif kind in (cst.AugAssign, cst.For):
            bind(node.target, None)
        elif kind is cst.WithItem:
            if node.asname is not None:
                bind(node.asname.name, None)
        elif kind is cst.ExceptHandler:
            if node.name is not None:
                bind(node.name.name, None)
        elif kind in (cst.Global, cst.Nonlocal):
            other.update(n.name.value for n in node.names)
        elif kind in (cst.Import, cst.ImportFrom):
            other.update(_imported_names(node))
        elif node is not fn:  # a nested function or class is a name of this scope
            other.add(node.name.value)
    locals_ = {name for name in list_only if name not in other and name not in unannotated}
    return frozenset(names | locals_)


def _imported_names(node) -> list[str]:
    if isinstance(node.names, cst.ImportStar):
        return []
    out = []
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            out.append(alias.asname.name.value)
        else:
            n = alias.name
            while isinstance(n, cst.Attribute):
                n = n.value
            out.append(n.value)
    return out


def _array_element_params(facts: FileFacts) -> dict[str, set[str]]:
    functions: dict[str, list[cst.FunctionDef]] = {}
    for node in facts.nodes(facts.module, (cst.FunctionDef,)):
        functions.setdefault(node.name.value, []).append(node)
    found: dict[str, set[str]] = {}
    for call in facts.nodes(facts.module, (cst.Call,)):
        func = call.func
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
        if name not in functions or any(a.star for a in call.args):
            continue
        for definition in functions[name]:
            params = definition.params
            positional = [p.name.value for p in (*params.posonly_params, *params.params)]
            if positional[:1] in (["self"], ["cls"]) and type(func) is cst.Attribute:
                positional = positional[1:]  # bound: self.f(a), cls.f(a)
            by_name = {p.name.value for p in (*params.params, *params.kwonly_params)}
            for i, arg in enumerate(call.args):
                if arg.keyword is not None:
                    param = arg.keyword.value if arg.keyword.value in by_name else None
                else:
                    param = positional[i] if i < len(positional) else None
                if param and indexes_an_array(arg.value):
                    found.setdefault(name, set()).add(param)
    return found


def _call_site_tensor_params(facts: FileFacts, roots: set[str]) -> dict[str, set[str]]:
    module, ctx = facts.module, facts.ctx
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if not functions:
        return {}

    def events(scope) -> list:
        return [n for n in facts.nodes(scope, (cst.Assign, cst.Call), _never)
                if type(n) is cst.Assign or (isinstance(n.func, cst.Name) and n.func.value in functions)]

    scopes: list[tuple[str | None, tuple[str, ...], list]] = []  # (function, tensors, events)

    def add_scope(owner, initial, found) -> None:
        if found:
            scopes.append((owner, tuple(initial), found))

    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            add_scope(stmt.name.value, (), events(stmt))
        elif isinstance(stmt, cst.ClassDef):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    forward = item.name.value in ("forward", "construct")
                    add_scope(None, forward_params(item) if forward else (), events(item))
        else:
            add_scope(None, (), [n for n in facts.index.top_level_statement_nodes(stmt, (cst.Assign, cst.Call), _never)
                                 if type(n) is cst.Assign or (isinstance(n.func, cst.Name) and n.func.value in functions)])
    known: dict[str, set[str]] = {name: set() for name in functions}
    changed = True
    while changed:
        changed = False
        for owner, initial, found in scopes:
            scope = TensorScope()
            scope.push(set(initial) | (known[owner] if owner else set()))
            for event in found:
                if isinstance(event, cst.Assign):
                    if is_tensor(event.value, scope, ctx, roots):
                        for target in event.targets:
                            for name in target_names(target.target):
                                scope.add(name)
                    continue
                params = functions[event.func.value].params
                positional = [p.name.value for p in (*params.posonly_params, *params.params)]
                by_name = {p.name.value for p in (*params.params, *params.kwonly_params)}
                for i, arg in enumerate(event.args):
                    if arg.star:
                        break
                    if arg.keyword is not None:
                        name = arg.keyword.value if arg.keyword.value in by_name else None
                    else:
                        name = positional[i] if i < len(positional) else None
                    target = known[event.func.value]
                    if name and name not in target and is_tensor(arg.value, scope, ctx, roots):
                        target.add(name)
                        changed = True
    return {name: params for name, params in known.items() if params}
