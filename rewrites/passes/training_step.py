"""MS211: the training step: ``zero_grad()``, ``loss.backward()``, gradient clipping,
``optimizer.step()`` -> a forward function, ``mindspore.value_and_grad`` and ``optimizer(grads)``.

torch records the forward computation and ``backward()`` leaves the gradients in each
parameter's ``.grad``, where ``step()`` reads them; MindSpore differentiates a function and
returns the gradients. So the statements that compute the loss (those just before
``backward()``, back to the previous training statement) move into a function defined in
place, which returns the loss and every name the code after it reads; its gradients with
respect to ``optimizer.parameters`` are computed by ``value_and_grad``.

- Where ``step()`` follows ``backward()`` in the same block (clips between), the gradients
  are a local: ``zero_grad()`` goes, ``clip_grad_norm_`` clips the local, ``step()`` is
  ``optimizer(grads)``.
- Elsewhere (accumulation: ``step()`` under an ``if``, or in another function) the
  optimizer holds the sum of the gradients since ``zero_grad()`` as torch's ``.grad`` does
  (``_torch_accumulate_grads``); ``step()`` applies them.
- Where the backward opens an ``if`` body (``if phase == "train": loss.backward()``, the
  loss computed before the ``if``), the code before the ``if`` becomes the function: the
  ``if`` differentiates it and an ``else`` calls it, so both branches bind what it returns.
- Where the file reads a parameter's ``.grad`` (gradient norms logged, ``if p.grad is not
  None``), every step keeps its gradients as in accumulation, and they are put on the
  parameters as ``.grad`` too (``zero_grad()`` clears them).
- A GradScaler's loss is scaled inside the function, the gradients unscaled after it;
  ``scaler.step()`` skips a step whose gradients are not finite and ``update()`` adjusts the
  scale, as torch's does (``mindspore.amp.all_finite``; the constructor is MS213's).
The statements are found once per file (``rewrites/training_plan.py``).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.formatting import format_statement
from transpile.engine.passes import Example, Pass

from ..runtime.registry import runtime_helper
from ..syntax import code, free_name
from ..training_plan import TrainingPlan, TrainingStatement, code_of

CLIP_NORM_HELPER = "_torch_clip_grad_norm"
CLIP_VALUE_HELPER = "_torch_clip_grad_value"
ACCUMULATE_HELPER = "_torch_accumulate_grads"
# where the file reads a parameter's .grad, the sums are put there too (and zero_grad clears them)
ACCUMULATE_ON_PARAMETERS_HELPER = "_torch_accumulate_param_grads"
ZERO_GRAD_HELPER = "_torch_zero_grad"
STEP_HELPER = "_torch_optimizer_step"
HELD = "accumulated_grads"
MARKER = "# transpile:"  # the comments passes leave on statements they could not convert


class TrainingStep(Pass):
    id = "MS211"
    name = "training-step"
    reads = frozenset({"identifiers", "training_plan"})
    summary = ("zero_grad / loss.backward() / clip_grad_norm_ / optimizer.step() -> a forward function, "
               "mindspore.value_and_grad and optimizer(grads).")
    examples = (
        Example(
            "import torch\n"
            "def train(model, loader, optimizer, criterion):\n"
            "    for x, y in loader:\n"
            "        optimizer.zero_grad()\n"
            "        loss = criterion(model(x), y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n",
            "import mindspore as ms\n"
            "def train(model, loader, optimizer, criterion):\n"
            "    for x, y in loader:\n"
            "        def forward_fn():\n"
            "            loss = criterion(model(x), y)\n"
            "            return loss\n\n"
            "        loss, grads = ms.value_and_grad(forward_fn, None, optimizer.parameters)()\n"
            "        optimizer(grads)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.plan: TrainingPlan | None = None
        self.problems: dict[int, str] = {}
        self.depth = 0  # blocks open around the statements being rewritten

    def visit_IndentedBlock(self, node) -> None:
        self.depth += 1

    def visit_Module(self, node: cst.Module) -> None:
        self.plan = self.ctx.facts.training_plan()
        if self.plan is None:
            return
        for key, part in self.plan.statements.items():
            if part.kind == "backward" and (part.problem or part.optimizer is None):
                self.problems[key] = part.problem or "the optimizer of this backward() is unknown"
            elif part.kind not in ("guard", "backward"):
                # rewritten with its block, never on its own (an if's body holds other code,
                # and a backward's loss expression is converted as usual: the function returns it)
                self.ctx.freeze(part.stmt)
        self._names: dict[str, tuple[str, str, str]] = {}
        self.guard_calls: dict[int, TrainingStatement] = {}  # id(the else's call) -> its guard
        # id(a backward's original loss) -> the loss as the other passes converted it, and the
        # markers they left on the backward's line (they go on the function's return)
        self._losses: dict[int, tuple[cst.BaseExpression, list]] = {}

    def leave_SimpleStatementLine(self, original, updated):
        why = self.problems.get(id(original))
        if why is not None:
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"backward(): {why}")
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        try:
            if self.plan is None or id(original.body) not in self.plan.blocks:
                return updated
            body, trailing = self._rewrite(original.body, list(updated.body))
            return updated.with_changes(body=body, footer=[*trailing, *updated.footer])
        finally:
            self.depth -= 1

    def leave_Module(self, original: cst.Module, updated: cst.Module):
        if self.plan is None or id(original.body) not in self.plan.blocks:
            return updated
        body, trailing = self._rewrite(original.body, list(updated.body))
        return updated.with_changes(body=body, footer=[*trailing, *updated.footer])

    # -- a block ---------------------------------------------------------------------
    def _rewrite(self, original_body, body: list) -> tuple[list, list]:
        """The block's statements rewritten, and the comments left after its last statement
        (those of a training statement at its end that converts to nothing)."""
        parts = [p for p in self.plan.in_block(original_body) if id(p.stmt) not in self.problems]
        if not parts:
            return body, []
        self._choose_names(parts[0])
        by_stmt = {id(p.stmt): p for p in parts}
        by_stmt.update(self._backwards_converted(original_body, body, by_stmt))
        out: list = []
        pending: list = []  # statements since the last training statement (a backward's region candidates)
        zeros: list = []  # zero_grad statements met among them
        for stmt in body:
            part = by_stmt.get(id(stmt)) or self._guard_of(stmt)
            if part is None:
                pending.append(stmt)
                continue
            if part.kind == "zero_grad":
                zeros.append((len(pending), part))
                continue
            if part.kind in ("backward", "guard"):
                start = len(pending) - self._region_length(part, pending)
                out.extend(self._flush(pending[:start], [z for z in zeros if z[0] <= start]))
                later_zeros = [z for _, z in zeros if _ > start]
                if part.kind == "guard":  # the function before the if
                    out.append(self._forward_function(part, pending[start:]))
                    for zero in later_zeros:
                        out.extend(self._commented(zero, self._zero_grad(zero)))
                    out.append(stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False), *stmt.leading_lines]))
                else:
                    out.extend(self._backward(part, pending[start:], later_zeros))
            else:
                out.extend(self._flush(pending, zeros))
                out.extend(self._commented(part, self._statement(part)))
            pending, zeros = [], []
        out.extend(self._flush(pending, zeros))
        return _settle_comments(out)

    def _backwards_converted(self, original_body, body: list, by_stmt: dict) -> dict:
        """The backward statements as the other passes left them (their loss converted),
        paired in order with the original ones: id(updated) -> its part; each part's converted
        loss and markers are kept for the function that returns it."""
        originals = [stmt for stmt in original_body if _backward_loss(stmt) is not None]
        updated = [stmt for stmt in body if _backward_loss(stmt) is not None]
        found = {}
        for before, after in zip(originals, updated):
            part = by_stmt.get(id(before))
            if part is None or part.kind != "backward":
                continue
            markers = [line for line in after.leading_lines
                       if line.comment is not None and line.comment.value.startswith(MARKER)]
            self._losses[id(part.loss)] = (_backward_loss(after), markers)
            found[id(after)] = part
        return found

    def _commented(self, part: TrainingStatement, lines: list) -> list:
        """``lines`` (what ``part`` converts to) with the comments above the training statement:
        on the first line, or carried to the next statement where it converts to nothing."""
        comments = list(part.stmt.leading_lines)
        if not any(line.comment is not None for line in comments):
            return lines
        if not lines:
            return [_Carried(comments)]
        return [lines[0].with_changes(leading_lines=[*lines[0].leading_lines, *comments]), *lines[1:]]

    def _choose_names(self, part: TrainingStatement) -> None:
        """The names the pass binds: locals of the function, so only its own code can clash."""
        scope = part.scope
        if id(scope) not in self._names:
            taken = self.facts.identifiers(scope)
            self._names[id(scope)] = tuple(free_name(taken, n) for n in ("grads", "forward_fn", "grads_finite"))
        self.grads, self.forward, self.finite = self._names[id(scope)]

    def _line(self, text: str, deeper: int = 0) -> cst.BaseStatement:
        """A statement the pass writes, laid out by black at the block's depth (plus ``deeper``)."""
        stmt = cst.parse_statement(text)
        return format_statement(stmt, 4 * (self.depth + deeper)) if isinstance(stmt, cst.SimpleStatementLine) else stmt

    def _flush(self, statements: list, zeros: list) -> list:
        """``statements`` with the zero_grad calls met among them converted in place."""
        out: list = []
        for i, stmt in enumerate(statements + [None]):
            for _, zero in [z for z in zeros if z[0] == i]:
                out.extend(self._commented(zero, self._zero_grad(zero)))
            if stmt is not None:
                out.append(stmt)
        return out

    def _region_length(self, part: TrainingStatement, pending: list) -> int:
        """How many of the updated statements since the previous training statement are the
        backward's region: all where the region was all, else as many as the original region
        had, counted back from the backward (other passes remove statements left without
        effect, such as ``x = x.to(device)``; what they remove in the region is gone)."""
        if len(part.region) == part.span:
            return len(pending)
        return min(len(part.region), len(pending))

    def _backward(self, part: TrainingStatement, region: list, zeros) -> list:
        """The forward function (unless the backward trains under an ``if`` that defines it),
        the zero_grads met in its region, and the gradients computed."""
        lines = [] if part.guard is not None else [self._forward_function(part, region)]
        for zero in zeros:
            lines.extend(self._commented(zero, self._zero_grad(zero)))
        gradients = self._commented(part, self._gradients(part))
        if part.guard is None:  # a blank line after the function
            gradients[0] = gradients[0].with_changes(
                leading_lines=[cst.EmptyLine(indent=False), *gradients[0].leading_lines])
        return lines + gradients

    def leave_If(self, original: cst.If, updated: cst.If):
        """A guard (``if phase == "train": loss.backward() ...`` with the loss computed before
        the ``if``) gets an ``else`` that calls the forward function, so both branches bind
        what it returns; the function itself is written before the ``if`` by the block."""
        part = self.plan.statements.get(id(original)) if self.plan is not None else None
        if part is None or part.kind != "guard" or id(part.stmt) in self.problems:
            return updated
        self._choose_names(part)
        target, _ = self._binding(part)
        call = self._line(f"{target} = {self.forward}()\n", deeper=1)
        if updated.orelse is None:
            self.guard_calls[id(call)] = part  # how the block finds the if, whatever later passes make of it
            return updated.with_changes(orelse=cst.Else(body=cst.IndentedBlock(body=[call])))
        first, *rest = updated.orelse.body.body
        # the comments above the else's first statement stay at the top of the else
        call = call.with_changes(leading_lines=first.leading_lines)
        self.guard_calls[id(call)] = part
        return updated.with_changes(orelse=updated.orelse.with_changes(body=updated.orelse.body.with_changes(
            body=[call, first.with_changes(leading_lines=[]), *rest])))

    def _guard_of(self, stmt) -> TrainingStatement | None:
        orelse = getattr(stmt, "orelse", None)
        if not isinstance(stmt, cst.If) or not isinstance(orelse, cst.Else):
            return None
        # popped: a block flattened into its parent (a with MS213 drops) is met again there
        return next((self.guard_calls.pop(id(s)) for s in orelse.body.body if id(s) in self.guard_calls), None)

    def _binding(self, part: TrainingStatement) -> tuple[str, list[str]]:
        """What the function's results are bound to, and what it returns."""
        loss_code = code(self._losses.get(id(part.loss), (part.loss,))[0])
        loss_name = part.loss.value if isinstance(part.loss, cst.Name) else None
        returned = [f"{part.scaler}.scale({loss_code})" if part.scaler else loss_code]
        bound = ["_" if part.scaler or loss_name is None else loss_name]
        if part.scaler and loss_name:
            returned.append(loss_name)
            bound.append(loss_name)
        returned += list(part.outputs)
        bound += list(part.outputs)
        return (f"({', '.join(bound)})" if len(bound) > 1 else bound[0]), returned

    def _forward_function(self, part: TrainingStatement, region: list) -> cst.FunctionDef:
        _, returned = self._binding(part)
        defaults = ", ".join(f"{n}={n}" for n in part.params)
        markers = self._losses.get(id(part.loss), (None, []))[1]  # on the loss's line, where a second run puts them
        body = list(region) + [self._line(f"return {', '.join(returned)}\n").with_changes(leading_lines=markers)]
        forward = cst.FunctionDef(
            name=cst.Name(self.forward), params=cst.parse_expression(f"lambda {defaults}: 0").params,
            body=cst.IndentedBlock(body=body),
            leading_lines=[cst.EmptyLine(indent=False)] if not region or not region[0].leading_lines else [],
        )
        if region:
            # the region's leading comments and blank lines stay above the function; the
            # markers stay on their statement (converting the output again finds them there)
            lines = region[0].leading_lines
            markers = [line for line in lines if line.comment is not None and line.comment.value.startswith(MARKER)]
            forward = forward.with_changes(
                leading_lines=[line for line in lines if not any(line is m for m in markers)],
                body=forward.body.with_changes(body=[region[0].with_changes(leading_lines=markers), *body[1:]]))
        return forward

    def _gradients(self, part: TrainingStatement) -> list:
        """value_and_grad's call, the unscale and the accumulation, in the backward's place."""
        ctx = self.ctx
        ctx.count_converted()
        opt = part.optimizer
        target, returned = self._binding(part)
        value_and_grad = code(ctx.reference("mindspore.value_and_grad"))
        aux = ", has_aux=True" if len(returned) > 1 else ""
        lines = [self._line(f"{target}, {self.grads} = {value_and_grad}({self.forward}, None, {opt}.parameters{aux})()\n")]
        if part.scaler:
            lines.append(self._line(f"{self.grads} = {part.scaler}.unscale({self.grads})\n"))
        if not part.simple:
            if self.plan.reads_grads:
                helper = code(runtime_helper(ctx, ACCUMULATE_ON_PARAMETERS_HELPER))
            else:
                helper = code(runtime_helper(ctx, ACCUMULATE_HELPER))
            lines.append(self._line(f"{helper}({opt}, {self.grads})\n"))
        ctx.report(part.stmt, self.id, f"loss.backward(): the forward code before it is the function "
                   f"{self.forward}, differentiated by value_and_grad with respect to {opt}.parameters",
                   Severity.INFO)
        return lines

    def _grads_of(self, part: TrainingStatement) -> str:
        return self.grads if part.simple else f"{part.optimizer}.{HELD}"

    def _zero_grad(self, part: TrainingStatement) -> list:
        self.ctx.count_converted()
        if part.simple or part.optimizer is None:
            return []  # the gradients are computed afresh: nothing to zero
        if self.plan.reads_grads:
            helper = code(runtime_helper(self.ctx, ZERO_GRAD_HELPER))
            return [self._line(f"{helper}({part.optimizer})\n")]
        return [self._line(f"{part.optimizer}.{HELD} = None\n")]

    def _statement(self, part: TrainingStatement) -> list:
        ctx = self.ctx
        ctx.count_converted()
        grads = self._grads_of(part)
        if part.kind == "step":
            if part.simple:
                apply = f"{part.optimizer}({grads})"
            else:
                apply = f"{code(runtime_helper(ctx, STEP_HELPER))}({part.optimizer})"
            if part.scaler:
                all_finite = code(ctx.reference("mindspore.amp.all_finite"))
                return [self._line(f"{self.finite} = {all_finite}({grads})\n"),
                        self._line(f"if {self.finite}:\n    {apply}\n")]
            return [self._line(f"{apply}\n")]
        if part.kind == "update":
            return [self._line(f"{part.scaler}.adjust({self.finite})\n")]
        if part.kind == "unscale":
            return []  # the gradients were unscaled where they were computed
        return [self._clip(part, grads)]

    def _clip(self, part: TrainingStatement, grads: str) -> cst.BaseStatement:
        args = {}
        names = ("parameters", "max_norm", "norm_type") if part.clip == "norm" else ("parameters", "clip_value")
        for i, arg in enumerate(part.call.args):
            key = arg.keyword.value if arg.keyword is not None else names[i] if i < len(names) else None
            if key is not None:
                args[key] = code(arg.value)
        if part.clip == "norm":
            helper = code(runtime_helper(self.ctx, CLIP_NORM_HELPER))
            extra = f", {args['norm_type']}" if "norm_type" in args else ""
            total = code_of(part.result) if part.result is not None else None
            value = f"{helper}({grads}, {args.get('max_norm', '1.0')}{extra})"
            if total:
                return self._line(f"{grads}, {total} = {value}\n")
            return self._line(f"{grads} = {value}[0]\n")
        helper = code(runtime_helper(self.ctx, CLIP_VALUE_HELPER))
        return self._line(f"{grads} = {helper}({grads}, {args.get('clip_value', '1.0')})\n")


def _backward_loss(stmt) -> cst.BaseExpression | None:
    """``L`` of a line ``L.backward(...)`` (``scaler.scale(L).backward()``: ``L``)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"):
        return None
    receiver = call.func.value
    if (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale" and len(receiver.args) == 1):
        return receiver.args[0].value
    return receiver


class _Carried:
    """Comments of a training statement that converts to nothing, for the next statement."""

    def __init__(self, lines: list) -> None:
        self.lines = lines


def _settle_comments(out: list) -> tuple[list, list]:
    """``out`` with each ``_Carried`` run of comments moved onto the statement after it; the
    comments after the last statement, apart. A block left empty holds ``pass``."""
    body: list = []
    carried: list = []
    for item in out:
        if isinstance(item, _Carried):
            carried.extend(item.lines)
            continue
        if carried:
            item = item.with_changes(leading_lines=[*carried, *item.leading_lines])
            carried = []
        body.append(item)
    if not body:
        return [cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried)], []
    return body, carried

