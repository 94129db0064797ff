"""Cheap, local guesses about what an expression is: a tensor, a layer, a mask."""
from __future__ import annotations

import functools

import libcst as cst
from transpile.walk import read

# Method names whose call on a tensor gives a tensor.
TENSOR_METHODS_RETURNING_TENSORS = frozenset(
    "view reshape permute transpose contiguous float int long bool half double flatten "
    "squeeze unsqueeze expand expand_as repeat sum mean max min abs exp log sqrt sigmoid "
    "tanh relu softmax clamp clone detach to type type_as masked_fill matmul mm bmm t "
    "narrow chunk split pow mul add sub div neg".split()
)


@functools.lru_cache(maxsize=1)
def _table_tensor_methods() -> frozenset[str]:
    """Tensor methods the tables convert and say return a tensor."""
    from .table_calls import tables

    return frozenset(name for name, e in tables().methods.items() if e.tensor_result and not e.unsupported)


class TensorScope:
    """Names known to hold tensors in the current function, innermost last."""

    def __init__(self) -> None:
        self.frames: list[set[str]] = []

    def push(self, names=()) -> None:
        self.frames.append(set(names))

    def pop(self) -> None:
        self.frames.pop()

    def add(self, name: str) -> None:
        if self.frames:
            self.frames[-1].add(name)

    def __contains__(self, name: str) -> bool:
        return bool(self.frames) and name in self.frames[-1]


def forward_params(node: cst.FunctionDef) -> list[str]:
    """Parameters of forward/construct other than self: tensors by convention."""
    names = [p.name.value for p in node.params.params]
    return names[1:] if names and names[0] == "self" else names


def tensor_attributes(class_node: cst.ClassDef, ctx) -> set[str]:
    """``self.X = nn.Parameter(...)`` and ``self.register_buffer("X", ...)`` in the class:
    ``"self.X"`` holds a tensor in its methods."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_ClassDef(self, node) -> bool:
            return node is class_node

        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if not isinstance(value, cst.Call):
                return
            qual = ctx.imports.qualify(value.func) or ""
            if qual not in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return
            for t in node.targets:
                target = t.target
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                    found.add(f"self.{target.attr.value}")

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if (isinstance(f, cst.Attribute) and f.attr.value == "register_buffer" and isinstance(f.value, cst.Name)
                    and f.value.value == "self" and node.args and isinstance(node.args[0].value, cst.SimpleString)):
                found.add(f"self.{node.args[0].value.evaluated_value}")

    read(class_node, Finder())
    return found


def annotated_tensors(node: cst.FunctionDef, ctx) -> list[str]:
    """Parameters annotated as tensors: ``x: Tensor``, ``b: torch.Tensor``,
    ``m: Optional[Tensor]``, ``m: Tensor | None``."""
    def is_tensor_type(expr) -> bool:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
            return is_tensor_type(expr.left) or is_tensor_type(expr.right)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            head = ctx.imports.qualify(expr.value) or (expr.value.value if isinstance(expr.value, cst.Name) else "")
            if head.rsplit(".", 1)[-1] == "Optional":
                return is_tensor_type(expr.slice[0].slice.value)
            return False
        return ctx.imports.qualify(expr) == "torch.Tensor"

    return [p.name.value for p in named_params(node) if p.annotation is not None and is_tensor_type(p.annotation.annotation)]


def forward_helpers(class_node: cst.ClassDef) -> set[str]:
    """Methods of the class that forward/construct calls on ``self``, directly or through
    each other (``self.features(x)``, ``self._forward_impl(x)``): their parameters take
    what forward passes on, tensors by the same convention. Properties are left out."""
    methods = {}
    for stmt in class_node.body.body:
        if isinstance(stmt, cst.FunctionDef) and not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in stmt.decorators
        ):
            methods[stmt.name.value] = stmt
    roots = [n for n in ("forward", "construct") if n in methods]
    reached = set(roots)
    todo = list(roots)
    while todo:
        called: set[str] = set()

        class Finder(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                f = call.func
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
                    called.add(f.attr.value)

        read(methods[todo.pop()], Finder())
        for name in called & set(methods):
            if name not in reached and not name.startswith("__"):
                reached.add(name)
                todo.append(name)
    return reached - set(roots)


def is_tensor(expr: cst.BaseExpression, scope: TensorScope, ctx, roots: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in scope
    if isinstance(expr, cst.Subscript):
        return is_tensor(expr.value, scope, ctx, roots)
    if isinstance(expr, cst.BinaryOperation):
        return is_tensor(expr.left, scope, ctx, roots) or is_tensor(expr.right, scope, ctx, roots)
    if isinstance(expr, cst.UnaryOperation):
        return is_tensor(expr.expression, scope, ctx, roots)
    if isinstance(expr, cst.Comparison):  # (x > 0) is a boolean tensor
        return is_tensor(expr.left, scope, ctx, roots) or any(
            is_tensor(c.comparator, scope, ctx, roots) for c in expr.comparisons)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        # a layer's own parameters (in subclasses of torch layers: self.weight.size()), and
        # attributes the class made parameters or buffers (scope holds "self.class_token")
        return expr.attr.value in ("weight", "bias") or f"self.{expr.attr.value}" in scope
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return parameter_data(expr) or is_tensor(expr.value, scope, ctx, roots)
    if isinstance(expr, cst.Call):
        qual = ctx.imports.qualify(expr.func)
        if qual is not None:
            return qual.split(".")[0] in roots and not qual.split(".")[-1][:1].isupper()
        # self.conv(x): a layer applied to a tensor gives a tensor (self.relu(x) too: a
        # layer named like a tensor method is still a layer)
        if isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self":
            return any(is_tensor(a.value, scope, ctx, roots) for a in expr.args)
        if isinstance(expr.func, cst.Attribute) and (
            expr.func.attr.value in TENSOR_METHODS_RETURNING_TENSORS or expr.func.attr.value in _table_tensor_methods()
        ):
            return is_tensor(expr.func.value, scope, ctx, roots)
    return False


def parameter_data(expr: cst.BaseExpression) -> bool:
    """``m.weight.data``, ``self.bias.data``, ``lstm.weight_ih_l0.data``: the tensor of a
    parameter, by the names torch gives parameters."""
    if not (isinstance(expr, cst.Attribute) and expr.attr.value == "data" and isinstance(expr.value, cst.Attribute)):
        return False
    name = expr.value.attr.value
    return any(name.startswith(p) or name.endswith(p) for p in ("weight", "bias"))


def plainly_not_tensor(expr: cst.BaseExpression, ctx) -> bool:
    """Receivers that are obviously something else: modules, literals, config chains."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List,
                         cst.Dict, cst.Set, cst.Integer, cst.Float, cst.ListComp, cst.DictComp)):
        return True
    if isinstance(expr, cst.Name) and (expr.value in ctx.imports.bindings or expr.value == "self"):
        return True
    if isinstance(expr, cst.Attribute):
        # self.args.device, self.config.x: attribute chains two deep off self are config
        inner = expr.value
        if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
            return not parameter_data(expr)
        if ctx.imports.qualify(expr) is not None:
            return True
    return False


def layer_attributes(class_node: cst.ClassDef, ctx, tables) -> dict:
    """``self.X = nn.Y(...)`` anywhere in a class body: attribute X -> Y's table entry."""
    found: dict = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if not isinstance(assign.value, cst.Call) or len(assign.targets) != 1:
                return
            target = assign.targets[0].target
            qual = ctx.imports.qualify(assign.value.func)
            entry = tables.lookup(qual) if qual else None
            if (entry is not None and isinstance(target, cst.Attribute)
                    and isinstance(target.value, cst.Name) and target.value.value == "self"):
                found[target.attr.value] = entry

    read(class_node.body, Finder())
    return found


def call_site_tensor_params(module: cst.Module, ctx, roots: set[str]) -> dict[str, set[str]]:
    """Parameters of the file's top-level functions that receive a tensor where the file
    calls them: ``py_sigmoid_focal_loss(torch.from_numpy(p), ...)``, or
    ``reduce_loss(loss, reduction)`` from a function in which ``loss`` is a tensor. They
    are tensors inside the function too. The calls are read in every top-level function,
    every method of a top-level class (forward/construct parameters are tensors) and the
    top level itself, to a fixed point: a parameter counts once any call passes it a tensor."""
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if not functions:
        return {}

    class Events(cst.CSTVisitor):
        """Assignments and calls of the top-level functions, in source order."""

        def __init__(self) -> None:
            self.events: list[cst.CSTNode] = []

        def visit_FunctionDef(self, node) -> bool:
            return False  # nested functions: their own scope, not read

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            self.events.append(node)

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value in functions:
                self.events.append(node)

    scopes: list[tuple[str | None, tuple[str, ...], list[cst.CSTNode]]] = []  # (function, tensors, events)

    def add_scope(owner: str | None, initial, body) -> None:
        events = Events()
        read(body, events)
        if events.events:
            scopes.append((owner, tuple(initial), events.events))

    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            add_scope(stmt.name.value, (), stmt.body)
        elif isinstance(stmt, cst.ClassDef):
            for item in stmt.body.body:
                if isinstance(item, cst.FunctionDef):
                    forward = item.name.value in ("forward", "construct")
                    add_scope(None, forward_params(item) if forward else (), item.body)
        else:
            add_scope(None, (), stmt)
    known: dict[str, set[str]] = {name: set() for name in functions}
    changed = True
    while changed:
        changed = False
        for owner, initial, events in scopes:
            scope = TensorScope()
            scope.push(set(initial) | (known[owner] if owner else set()))
            for event in events:
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


def target_names(target: cst.BaseExpression):
    """The names an assignment target binds to one value each (``a`` and ``b`` of
    ``a, (b, c.d) = ...``; not attributes, subscripts or starred names)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from target_names(el.value)


def named_params(fn: cst.FunctionDef) -> tuple[cst.Param, ...]:
    """Every parameter of ``fn`` that can be passed by position or by name (not ``*args``
    or ``**kwargs``), in order."""
    p = fn.params
    return (*p.posonly_params, *p.params, *p.kwonly_params)
