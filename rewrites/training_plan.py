"""Where a file trains: its ``backward()``, ``step()``, ``zero_grad()`` and gradient-clip
statements, which optimizer each backward feeds, and the forward code before each backward.

torch keeps gradients in the parameters (``.grad``) between ``backward()`` and ``step()``;
MindSpore returns them from a gradient function. MS211 (``rewrites/passes/training_step.py``)
rewrites the statements this module finds. A plan is made once per file that calls
``.backward(``, from the original tree: statement lists only, plus the file's name index
(``FileFacts.names``: the names each statement reads and writes), never a walk of the whole tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from transpile.engine.names import DEL, LOAD, STORE, NameRoles
from transpile.engine.walk import children, iter_nodes

CLIP_NORM = "torch.nn.utils.clip_grad_norm_"
CLIP_VALUE = "torch.nn.utils.clip_grad_value_"
CLIPS = {CLIP_NORM: "norm", CLIP_VALUE: "value", "torch.nn.utils.clip_grad.clip_grad_norm_": "norm",
         "torch.nn.utils.clip_grad.clip_grad_value_": "value", "torch.nn.utils.clip_grad_norm": "norm"}

_EMPTY = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


@dataclass
class TrainingStatement:
    """One statement of the training step: ``kind`` is zero_grad, backward, step, clip,
    unscale or update; ``optimizer`` is the code of the optimizer it concerns."""

    kind: str
    stmt: cst.SimpleStatementLine
    block: list  # the statement list holding it (original nodes)
    optimizer: str | None = None
    loss: cst.BaseExpression | None = None  # backward: what is differentiated (torch's receiver)
    scaler: str | None = None  # backward/step/update/unscale through a GradScaler
    clip: str = ""  # clip: "norm" or "value"
    call: cst.Call | None = None
    result: cst.BaseAssignTargetExpression | None = None  # clip: the name the total norm is bound to
    # backward: the plan
    simple: bool = False  # step follows in the same block: the gradients are a local
    region: list = field(default_factory=list)  # forward statements moved into the function
    span: int = 0  # statements between the previous training statement and the backward
    scope: cst.CSTNode | None = None  # the function (or module) holding it
    params: tuple[str, ...] = ()  # names the function takes (read before it writes them)
    outputs: tuple[str, ...] = ()  # names it returns besides the loss
    problem: str = ""
    stored: tuple[str, ...] = ()  # names the region binds
    reads_before: tuple[str, ...] = ()  # names the region reads before it binds them (or never binds)
    # where the statement's block is the body of an ``if`` (no elif): that statement and the
    # block holding it, for a loss computed before the ``if`` (``if phase == "train":``)
    container: tuple | None = None
    guard: "TrainingStatement | None" = None  # backward: the ``if`` it trains under (kind "guard")
    ancestors: tuple = ()  # the compound statements holding it, in its function


@dataclass
class TrainingPlan:
    statements: dict[int, TrainingStatement]  # id(original statement) -> its part
    blocks: set[int]  # ids of the statement lists (original bodies) holding one
    trains_inside: set[int] = field(default_factory=set)  # ids of compound statements holding a converted backward
    reads_grads: bool = False  # the file reads a parameter's .grad: the gradients are put there

    def in_block(self, body) -> list[TrainingStatement]:
        return [self.statements[id(s)] for s in body if id(s) in self.statements]


def make_plan(module: cst.Module, qualify, names: NameRoles, optimizers: frozenset[str], schedulers: frozenset[str],
              models: dict[str, frozenset[str]], reads_grads: bool = False) -> TrainingPlan | None:
    """The file's training statements, or None where it has none; ``optimizers``,
    ``schedulers`` and the ``models`` each optimizer is given: as ``FileFacts.torch_optimizers``;
    ``names``: the roles of the module's names (``FileFacts.names``).
    Where the file reads a parameter's ``.grad`` (``reads_grads``), every optimizer keeps its
    gradients (accumulation mode), which puts them on the parameters too."""
    statements: dict[int, TrainingStatement] = {}
    blocks: set[int] = set()
    trains_inside: set[int] = set()
    for scope, found in _scopes(module, qualify, optimizers, schedulers):
        _pair(found, optimizers, models)
        if reads_grads:
            for s in found:
                s.simple = False
        if not any(s.kind == "backward" for s in found):
            continue
        scope_loads = names.load_counts(scope)
        for s in list(found):  # a guard found is appended
            if s.kind == "backward" and s.optimizer is not None:
                _region(s, found, scope_loads, names)
        _leave_troubled(found)
        for s in found:
            s.scope = scope
            statements[id(s.stmt)] = s
            blocks.add(id(s.block))
            if s.kind == "backward" and not s.problem:
                trains_inside.update(id(a) for a in s.ancestors)
    return TrainingPlan(statements, blocks, trains_inside, reads_grads) if statements else None


# -- finding the statements --------------------------------------------------------------
def _all_statements(body) -> Iterator[cst.CSTNode]:
    for stmt in body:
        yield stmt
        for inner in _inner_bodies(stmt):
            yield from _all_statements(inner)


def _inner_bodies(stmt) -> Iterator[list]:
    """The statement lists of a compound statement (an elif's too; class and function
    bodies included)."""
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if isinstance(part, cst.IndentedBlock):
            yield part.body
        elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
            yield part.body.body
        elif isinstance(part, cst.If):  # elif
            yield from _inner_bodies(part)
    for handler in getattr(stmt, "handlers", ()):
        if isinstance(handler.body, cst.IndentedBlock):
            yield handler.body.body
    for case in getattr(stmt, "cases", ()):
        if isinstance(case.body, cst.IndentedBlock):
            yield case.body.body


def _scopes(module, qualify, optimizers, schedulers):
    """(scope, its training statements in source order) for the module and each function."""
    pending = [(module, module.body)]
    while pending:
        scope, body = pending.pop(0)
        found: list[TrainingStatement] = []
        nested: list = []
        _collect(body, qualify, optimizers, schedulers, found, nested)
        yield scope, found
        pending.extend(nested)


def _collect(body, qualify, optimizers, schedulers, found, nested, container=None, ancestors=()) -> None:
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            if isinstance(stmt.body, cst.IndentedBlock):
                nested.append((stmt, stmt.body.body))
            continue
        if isinstance(stmt, cst.ClassDef):
            if isinstance(stmt.body, cst.IndentedBlock):
                for inner in stmt.body.body:
                    if isinstance(inner, cst.FunctionDef) and isinstance(inner.body, cst.IndentedBlock):
                        nested.append((inner, inner.body.body))
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            part = _training_statement(stmt, body, qualify, optimizers, schedulers)
            if part is not None:
                part.container, part.ancestors = container, ancestors
                found.append(part)
            continue
        for inner in _inner_bodies(stmt):
            guarded = (isinstance(stmt, cst.If) and inner is stmt.body.body
                       and not isinstance(stmt.orelse, cst.If))
            _collect(inner, qualify, optimizers, schedulers, found, nested, (stmt, body) if guarded else None,
                     ancestors + (stmt,))


def _training_statement(stmt, block, qualify, optimizers, schedulers) -> TrainingStatement | None:
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    result = None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call):
        call, result = small.value, small.targets[0].target
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
    else:
        return None
    qual = qualify(call.func)
    if qual in CLIPS:
        return TrainingStatement("clip", stmt, block, clip=CLIPS[qual], call=call, result=result)
    if result is not None or not isinstance(call.func, cst.Attribute):
        return None
    method, receiver = call.func.attr.value, call.func.value
    receiver_code = code_of(receiver)
    if qual is not None and not qual.startswith("torch.optim"):
        return None  # a module's function (torch.autograd.backward): not a receiver's method
    if method == "backward":
        scaler = None
        loss = receiver
        if (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
                and receiver.func.attr.value == "scale" and len(receiver.args) == 1):
            scaler, loss = code_of(receiver.func.value), receiver.args[0].value
        return TrainingStatement("backward", stmt, block, loss=loss, scaler=scaler, call=call)
    if method == "zero_grad":
        return TrainingStatement("zero_grad", stmt, block, optimizer=receiver_code, call=call)
    if method == "step":
        if call.args and len(call.args) == 1 and call.args[0].keyword is None:
            # scaler.step(optimizer)
            return TrainingStatement("step", stmt, block, optimizer=code_of(call.args[0].value),
                                     scaler=receiver_code, call=call)
        if receiver_code in schedulers or receiver_code in optimizers or _looks_like_optimizer(receiver_code):
            if receiver_code not in schedulers:
                return TrainingStatement("step", stmt, block, optimizer=receiver_code, call=call)
        return None
    if method in ("update", "unscale_"):
        return TrainingStatement("update" if method == "update" else "unscale", stmt, block, scaler=receiver_code,
                                 optimizer=code_of(call.args[0].value) if call.args else None, call=call)
    return None


def _looks_like_optimizer(code: str) -> bool:
    last = code.rsplit(".", 1)[-1].lower()
    return "opt" in last and "sched" not in last


# -- pairing and modes -------------------------------------------------------------------
def _pair(found: list[TrainingStatement], optimizers: set[str], models: dict[str, frozenset[str]]) -> None:
    """Each backward's optimizer (the first step after it, else the scope's first step, else
    the file's only optimizer) and whether its gradients stay a local (its step follows in
    the same block, with only clips between)."""
    scalers = {s.scaler for s in found if s.kind == "backward" and s.scaler}
    # step(x)/update()/unscale_() of a name that scaled a loss only: optimizer.step(closure)
    # (LBFGS) and other update() calls are not ours
    found[:] = [s for s in found if s.kind not in ("update", "unscale", "step") or not s.scaler or s.scaler in scalers]
    steps = [s for s in found if s.kind == "step"]
    for i, s in enumerate(found):
        if s.kind != "backward":
            continue
        after = [t for t in found[i + 1:] if t.kind == "step"]
        if after:
            s.optimizer = after[0].optimizer
        elif steps:
            s.optimizer = steps[0].optimizer
        elif len(optimizers) == 1:
            s.optimizer = next(iter(optimizers))
        else:
            s.problem = "no optimizer step() follows this backward(): the optimizer to take the gradients is unknown"
            continue
        s.simple = _followed_by_step(s, found)
    accumulated = {s.optimizer for s in found if s.kind == "backward" and s.optimizer and not s.simple}
    for s in found:
        if s.kind == "backward" and s.optimizer in accumulated:
            s.simple = False
    # a clip, unscale or zero_grad speaks of the optimizer of the step after it
    for i, s in enumerate(found):
        if s.kind in ("clip", "unscale", "update") and s.optimizer is None:
            later = [t for t in found[i + 1:] if t.kind == "step"] or [t for t in found[:i] if t.kind == "step"][-1:]
            s.optimizer = later[0].optimizer if later else None
    modes = {s.optimizer: s.simple for s in found if s.kind == "backward" and s.optimizer}
    for i, s in enumerate(found):
        # model.zero_grad() zeroes what the optimizer given that model's parameters holds, else
        # what the next backward's optimizer holds, else the scope's only optimizer, else nothing
        if s.kind == "zero_grad" and s.optimizer not in modes:
            owners = [o for o in modes if s.optimizer in models.get(o, ())]
            if len(owners) != 1:  # optimizers handed in: the one the next backward feeds
                owners = [t.optimizer for t in found[i + 1:] if t.kind == "backward" and t.optimizer][:1]
            s.optimizer = owners[0] if owners else next(iter(modes)) if len(modes) == 1 else None
    for s in found:
        if s.kind != "backward":
            s.simple = modes.get(s.optimizer, False)


def _followed_by_step(backward: TrainingStatement, found: list[TrainingStatement]) -> bool:
    """Whether the backward's own step comes next in its block (clips and unscales between)."""
    ours = {id(s.stmt): s for s in found}
    block = backward.block
    for stmt in block[_position(block, backward.stmt) + 1:]:
        part = ours.get(id(stmt))
        if part is None or part.kind not in ("step", "clip", "unscale", "zero_grad"):
            return False
        if part.kind == "step":
            return part.optimizer == backward.optimizer
    return False


# -- the forward region ------------------------------------------------------------------
_BARRIERS = ("zero_grad", "backward", "step", "clip", "unscale", "update")


def _position(block: list, stmt) -> int:
    return next(i for i, candidate in enumerate(block) if candidate is stmt)


def _region(backward: TrainingStatement, found: list[TrainingStatement], scope_loads: dict[str, int],
            names: NameRoles) -> None:
    """The statements before the backward (back to the block's start or the previous
    training statement; zero_grad calls are stepped over) that compute the loss. Where the
    backward sits in an ``if`` body and the loss is computed (wholly or partly) before the
    ``if`` (``if phase == "train": loss.backward()``), the statements before the ``if``,
    provided the body holds only training statements before the backward: the ``if`` is then
    a part of kind "guard", appended to ``found``."""
    _forward_region(backward, backward.stmt, backward.block, found, scope_loads, names)
    loss_reads = set(names.load_counts(backward.loss))
    # names computed before the region that the loss depends on: gradients do not flow
    # into a function through them
    before = (loss_reads - set(backward.stored)) | set(backward.reads_before)
    guard = _guard(backward) if backward.container is not None else None
    if guard is not None:
        _forward_region(guard, guard.stmt, guard.block, found, scope_loads, names)
        if before & set(guard.stored):
            if backward.region:
                backward.problem = ("the loss is computed partly before the 'if' holding its backward(): "
                                    "compute it in one place")
                return
            backward.guard, backward.span = guard, 0
            backward.params, backward.outputs = guard.params, guard.outputs
            found.append(guard)
            return
    if isinstance(backward.loss, cst.Name) and backward.loss.value not in backward.stored:
        backward.problem = (f"the loss '{backward.loss.value}' is computed away from its backward() (not in the "
                            f"statements just before it): move the computation next to backward()")


def _guard(backward: TrainingStatement) -> TrainingStatement | None:
    """The ``if`` whose body holds the backward, as a part of its own in the block holding
    it: the forward code before the ``if`` moves into the function, differentiated in the
    ``if`` and called in its ``else``."""
    statement, block = backward.container
    return TrainingStatement("guard", statement, block, optimizer=backward.optimizer, loss=backward.loss,
                             scaler=backward.scaler, simple=backward.simple)


def _forward_region(part: TrainingStatement, anchor, block: list, found: list[TrainingStatement],
                    scope_loads: dict[str, int], names: NameRoles) -> None:
    """``part``'s region, span, params, outputs and stored names: the statements of ``block``
    before ``anchor`` back to the previous training statement."""
    ours = {id(s.stmt): s for s in found}
    at = _position(block, anchor)
    boundary = at
    while boundary > 0 and (ours.get(id(block[boundary - 1])) is None or ours[id(block[boundary - 1])].kind == "zero_grad"):
        boundary -= 1
    part.span = sum(1 for stmt in block[boundary:at] if id(stmt) not in ours)
    # a zero_grad between the loss and its backward is stepped over; one before the loss ends it
    start = at
    while start > boundary:
        if id(block[start - 1]) in ours and _computes(part, [s for s in block[start:at] if id(s) not in ours], names):
            break
        start -= 1
    if start > boundary and _reads_from(part, [s for s in block[start:at] if id(s) not in ours],
                                        [s for s in block[boundary:start] if id(s) not in ours], names):
        start = boundary  # a value made before the zero_grad keeps its gradient path inside the function
    region = [stmt for stmt in block[start:at] if id(stmt) not in ours]
    # statements that leave the block (return, break, ...) cannot move into a function
    for i in range(len(region) - 1, -1, -1):
        if _leaves(region[i]):
            region = region[i + 1:]
            break
    loss_names = names.load_counts(part.loss) if part.loss is not None else {}
    region = _without_unused_prefix(region, set(loss_names), names)
    part.region = region
    reads = _Names(names)
    for stmt in region:
        reads.visit(stmt)
    part.stored, part.reads_before = tuple(reads.stored), tuple(reads.read_first)
    region_loads = _loads_of(region, names)
    part.params = tuple(n for n in reads.read_first if n in reads.stored)
    loss_name = part.loss.value if isinstance(part.loss, cst.Name) else None
    # returned: what the code outside the region and the loss expression reads
    part.outputs = tuple(n for n in reads.stored
                         if n != loss_name and (scope_loads.get(n, 0) - loss_names.get(n, 0) > region_loads.get(n, 0)
                                                or n in reads.read_first))


def _without_unused_prefix(region: list, loss_reads: set[str], names: NameRoles) -> list:
    """``region`` without its first statements that compute only plain numbers nothing after
    them in it (nor the loss) reads (``D_x = output.mean().item()`` logged after an earlier
    backward): they stay before the function, where they ran anyway. A tensor computed inside
    the function keeps its gradient path for a later backward (MindSpore differentiates
    through a value an earlier differentiated function returned, not through one computed
    outside), so statements binding other values stay in, and so do those that may change a
    value in place (a method ending in ``_``, a subscript or attribute assigned)."""
    first = 0
    while first < len(region) - 1 and _plain_statement(region[first]):
        later = set(loss_reads).union(*(names.load_counts(stmt) for stmt in region[first + 1:]))
        reads = _Names(names)
        reads.visit(region[first])
        if set(reads.stored) & later:
            break
        first += 1
    return region[first:]


_PLAIN_CALLS = frozenset({"float", "int", "len", "bool", "str", "print"})
_PLAIN_METHODS = frozenset({"item", "tolist"})


_CONSTANT_TYPES = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)


def _constant(expr) -> bool:
    """A literal Python folds into one constant (``3``, ``"a" "b"``, ``None``; not ``-1``)."""
    if isinstance(expr, _CONSTANT_TYPES):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("None", "True", "False")
    return isinstance(expr, cst.ConcatenatedString) and _constant(expr.left) and _constant(expr.right)


def _plain_statement(stmt) -> bool:
    """A statement binding only plain numbers (``.item()``, ``float(...)``, literals) or
    printing, and changing nothing in place."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets):
        value = small.value
    elif isinstance(small, cst.Expr):
        value = small.value
    else:
        return False
    if _constant(value):
        return True
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    plain = ((isinstance(func, cst.Attribute) and func.attr.value in _PLAIN_METHODS)
             or (isinstance(func, cst.Name) and func.value in _PLAIN_CALLS))
    return plain and not any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                             and n.func.attr.value.endswith("_") and not n.func.attr.value.startswith("_")
                             for n in iter_nodes(value))


def _reads_from(part: TrainingStatement, region: list, earlier: list, names: NameRoles) -> bool:
    """Whether ``region`` (or the loss) reads a name one of the ``earlier`` statements binds
    (``fake = netG(z)`` before ``optimizerD.zero_grad()``): MindSpore differentiates through
    it only when it is computed inside the function."""
    reads = _Names(names)
    for stmt in region:
        reads.visit(stmt)
    needed = set(reads.read_first)
    if part.loss is not None:
        needed |= set(names.load_counts(part.loss)) - set(reads.stored)
    bound = _Names(names)
    for stmt in earlier:
        bound.visit(stmt)
    return bool(needed & set(bound.stored))


def _computes(backward: TrainingStatement, statements: list, names: NameRoles) -> bool:
    """Whether ``statements`` compute the backward's loss (bind its name, or anything at all
    where the loss is an expression)."""
    if not statements:
        return False
    if not isinstance(backward.loss, cst.Name):
        return True
    reads = _Names(names)
    for stmt in statements:
        reads.visit(stmt)
    return backward.loss.value in reads.stored


def _leave_troubled(found: list[TrainingStatement]) -> None:
    """Where one backward of an optimizer cannot be converted, none of that optimizer's
    statements is: a step converted without its gradients would name gradients nobody
    computed. The backwards stay to be marked; the others are dropped from the plan."""
    troubled = {s.optimizer for s in found if s.kind == "backward" and (s.problem or s.optimizer is None)}
    if not troubled:
        return
    for s in found:
        if s.kind == "backward" and s.optimizer in troubled and not s.problem:
            s.problem = "another backward() of the same optimizer cannot be converted"
    found[:] = [s for s in found if s.kind == "backward" or s.optimizer not in troubled]


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LEAVING = (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal)


def _leaves(stmt) -> bool:
    """A return, yield, await, global/nonlocal, or a break/continue outside a loop of its own
    (nested functions, classes and lambdas left out)."""
    def leaves(node, in_loop) -> bool:
        if isinstance(node, _SCOPES):
            return False
        if isinstance(node, _LEAVING) or (isinstance(node, (cst.Break, cst.Continue)) and not in_loop):
            return True
        inside = in_loop or isinstance(node, (cst.For, cst.While))
        return any(leaves(child, inside) for child in children(node))
    return leaves(stmt, False)


def _loads_of(statements, names: NameRoles) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stmt in statements:
        for name, n in names.load_counts(stmt).items():
            counts[name] = counts.get(name, 0) + n
    return counts


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


class _Names:
    """Names a run of statements writes (in order) and those it reads before writing them,
    in Python's evaluation order (an assignment's value before its targets); nested scopes'
    own names left out. Ask with nodes of the tree ``names`` indexes."""

    def __init__(self, names: NameRoles) -> None:
        self.names = names
        self.stored: list[str] = []
        self.read_first: list[str] = []

    def _store(self, name: str) -> None:
        if name not in self.stored:
            self.stored.append(name)

    def _read(self, name: str) -> None:
        if name not in self.stored and name not in self.read_first:
            self.read_first.append(name)

    def visit(self, node) -> None:
        kind = type(node)
        if kind is cst.Name:
            role = self.names.role(node)
            if role == LOAD:
                self._read(node.value)
            elif role == STORE or role == DEL:
                self._store(node.value)
        elif kind is cst.Assign:
            self.visit(node.value)
            for target in node.targets:
                self.visit(target.target)
        elif kind is cst.AnnAssign:  # the annotation is not read
            if node.value is not None:
                self.visit(node.value)
            self.visit(node.target)
        elif kind is cst.AugAssign:
            if isinstance(node.target, cst.Name):
                self._read(node.target.value)
            self.visit(node.value)
            self.visit(node.target)
        elif kind is cst.NamedExpr:
            self.visit(node.value)
            self.visit(node.target)
        elif kind is cst.For and node.asynchronous is None:
            self.visit(node.iter)
            self.visit(node.target)
            self.visit(node.body)
            if node.orelse is not None:
                self.visit(node.orelse)
        elif kind in _COMPREHENSIONS:
            self.visit(node.for_in.iter)  # the rest is the comprehension's own scope
        elif kind is cst.Lambda:
            p = node.params
            for param in (*p.posonly_params, *p.params, *p.kwonly_params):
                if param.default is not None:
                    self.visit(param.default)
        elif kind is cst.FunctionDef or kind is cst.ClassDef:
            for decorator in node.decorators:
                self.visit(decorator)
            self._store(node.name.value)
        elif kind is cst.Import or kind is cst.ImportFrom:
            for alias in (node.names if isinstance(node.names, (tuple, list)) else ()):
                name = alias.asname.name.value if alias.asname is not None else _dotted(alias.name)
                self._store(name.split(".")[0])
            if isinstance(node.names, cst.ImportStar):
                self._store("*")
        elif kind is cst.IfExp:  # Python's order: the test first
            self.visit(node.test)
            self.visit(node.body)
            self.visit(node.orelse)
        elif kind is cst.Dict:  # every key, then every value
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self.visit(element.key)
            for element in node.elements:
                self.visit(element.value)
        elif kind is cst.Call:  # positional arguments, then keywords and **
            self.visit(node.func)
            for arg in node.args:
                if arg.keyword is None and arg.star != "**":
                    self.visit(arg.value)
            for arg in node.args:
                if arg.keyword is not None or arg.star == "**":
                    self.visit(arg.value)
        else:
            for child in children(node):
                self.visit(child)


def _dotted(node) -> str:
    return node.value if isinstance(node, cst.Name) else f"{_dotted(node.value)}.{node.attr.value}"
