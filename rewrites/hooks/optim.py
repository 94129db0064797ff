"""Hooks of tables/optim.toml: optimizers' parameters, Adam's variants, and the
schedulers MindSpore lacks or runs otherwise (OneCycleLR, CyclicLR's momentum)."""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..runtime.registry import runtime_helper
from ..syntax import NOT_LITERAL, Unconvertible, code, keyword_call, literal, literal_value
from .registry import hook


# Module.parameters() / named_parameters() as MS103 writes them (get_parameters(),
# parameters_and_names()), and as torch does (this pass alone sees them so)
_ALL_PARAMETERS = ("get_parameters", "parameters")
_PAIRS = ("parameters_and_names", "named_parameters")


def trainable_params(ctx, value: cst.BaseExpression) -> cst.BaseExpression:
    """An optimizer's ``params`` as MindSpore needs them: the trainable parameters.
    ``m.get_parameters()`` (torch's ``m.parameters()``) becomes ``m.trainable_params()``
    wherever the expression shows it (param groups, filter, chain, comprehensions); an
    expression it cannot see through is filtered when the optimizer is built."""
    seen = _seen_through(ctx, value)
    if seen is not None:
        return seen
    return keyword_call(runtime_helper(ctx, "_torch_optimizer_params"), {"params": value})


def _seen_through(ctx, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``node`` giving trainable parameters only, or None when its parameters are not
    visible in the code (a variable, another function's result)."""
    if isinstance(node, cst.Call):
        return _call_seen_through(ctx, node)
    if isinstance(node, (cst.List, cst.Tuple)):
        return _elements_seen_through(ctx, node)
    if isinstance(node, cst.Dict):
        return _group_seen_through(ctx, node)
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return _comprehension_seen_through(ctx, node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = _seen_through(ctx, node.left), _seen_through(ctx, node.right)
        return None if left is None or right is None else node.with_changes(left=left, right=right)
    return None


def _call_seen_through(ctx, call: cst.Call) -> cst.BaseExpression | None:
    """``m.get_parameters(expand=r)`` -> ``m.trainable_params(recurse=r)``; ``filter``,
    ``list``, ``tuple`` and ``itertools.chain`` of such calls."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "trainable_params":
        return call
    if isinstance(func, cst.Attribute) and func.attr.value in _ALL_PARAMETERS:
        args = [a.with_changes(keyword=cst.Name("recurse")) if a.keyword is not None and a.keyword.value == "expand"
                else a for a in call.args]
        return call.with_changes(func=func.with_changes(attr=cst.Name("trainable_params")), args=args)
    name = ctx.imports.qualify(func) or (func.value if isinstance(func, cst.Name) else None)
    if name in ("filter", "builtins.filter") and len(call.args) == 2:
        inner = _seen_through(ctx, call.args[1].value)
        return None if inner is None else call.with_changes(args=[call.args[0], call.args[1].with_changes(value=inner)])
    if name in ("list", "tuple", "itertools.chain") and call.args and not any(a.keyword for a in call.args):
        inner = [_seen_through(ctx, a.value) for a in call.args]
        if any(i is None for i in inner):
            return None
        return call.with_changes(args=[a.with_changes(value=i) for a, i in zip(call.args, inner)])
    return None


def _elements_seen_through(ctx, node) -> cst.BaseExpression:
    """A list of param groups or parameters: each group's params seen through (or
    filtered); a parameter named alone stays (it was chosen by name)."""
    elements = []
    for element in node.elements:
        value = element.value
        if isinstance(value, (cst.Dict, cst.Call, cst.ListComp, cst.GeneratorExp)):
            value = _seen_through(ctx, value) or value
        elements.append(element.with_changes(value=value))
    return node.with_changes(elements=elements)


def _group_seen_through(ctx, group: cst.Dict) -> cst.Dict:
    """A param group: its ``"params"`` seen through, else filtered when built."""
    elements = []
    for element in group.elements:
        if isinstance(element, cst.DictElement) and literal_value(element.key) == "params":
            element = element.with_changes(value=trainable_params(ctx, element.value))
        elements.append(element)
    return group.with_changes(elements=elements)


def _comprehension_seen_through(ctx, node) -> cst.BaseExpression | None:
    """``[p for n, p in m.named_parameters() if ...]``: the frozen ones left out
    (``and p.requires_grad``); ``(p for p in m.parameters() ...)`` over trainable_params."""
    fors = []
    part = node.for_in
    while part is not None:
        fors.append(part)
        part = part.inner_for_in
    rebuilt = None
    for part in reversed(fors):
        it = part.iter
        ifs = list(part.ifs)
        pairs = isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in _PAIRS
        if pairs:
            target = part.target
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                    and isinstance(target.elements[1].value, cst.Name)):
                return None
            flag = cst.parse_expression(f"{target.elements[1].value.value}.requires_grad")
            if ifs:  # [... if "bias" not in n and p.requires_grad]
                test = ifs[-1].test
                if isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)):
                    test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                ifs[-1] = ifs[-1].with_changes(test=cst.BooleanOperation(left=test, operator=cst.And(), right=flag))
            else:
                ifs.append(cst.CompIf(test=flag))
        else:
            seen = _seen_through(ctx, it)
            if seen is None:
                return None
            it = seen
        rebuilt = part.with_changes(iter=it, ifs=ifs, inner_for_in=rebuilt)
    return node.with_changes(for_in=rebuilt)


@hook()
def optimizer(ctx, entry, args, receiver) -> dict:
    """``SGD(model.parameters(), lr=0.1)`` -> ``SGD(params=model.trainable_params(), lr=0.1)``."""
    if "params" in args:
        args = {**args, "params": trainable_params(ctx, args["params"])}
    return args


ADAMW = "mindspore.experimental.optim.AdamW"


@hook(consumes=("decoupled_weight_decay",))
def adam(ctx, entry, args, receiver) -> cst.BaseExpression | dict:
    """torch's Adam as MindSpore's AdamW wherever no L2 weight decay is asked for:
    ``Adam(p, lr=0.01)`` -> ``AdamW(params=p, lr=0.01, weight_decay=0.0)``. MindSpore's
    Adam runs a kernel adding eps inside the bias correction (off by 1e-4 at eps=1e-6)
    and ignores amsgrad; its AdamW follows torch's formula, and without decay it is
    Adam. ``decoupled_weight_decay=True`` is AdamW by torch's definition (torch's Adam
    default of 0 kept). An L2 decay keeps MindSpore's Adam (noted); with amsgrad too
    there is no faithful target. A decay (of the call or of its groups) the code does
    not show is decided when the optimizer is built (``_torch_adam``)."""
    args = dict(optimizer(ctx, entry, args, receiver))
    decoupled = _flag(args.pop("decoupled_weight_decay", None), "decoupled_weight_decay")
    if decoupled:
        args.setdefault("weight_decay", literal(0))
        return keyword_call(ctx.reference(ADAMW), args)
    l2 = _l2_decay(args.get("weight_decay"), args.get("params"))
    if l2 is None:
        return keyword_call(runtime_helper(ctx, "_torch_adam"), args)
    if not l2:
        args["weight_decay"] = literal(0.0)
        return keyword_call(ctx.reference(ADAMW), args)
    amsgrad = args.get("amsgrad")
    if amsgrad is not None and literal_value(amsgrad) is not False:
        raise Unconvertible("amsgrad with an L2 weight_decay: MindSpore's Adam ignores amsgrad and its AdamW "
                            "decays the weights decoupled (no faithful target)")
    ctx.report_text("Adam(", "MS201", "torch.optim.Adam with an L2 weight_decay: MindSpore's Adam, "
                    "which adds eps inside the bias correction (torch adds it to sqrt(v) after): the updates differ "
                    "where eps is not small beside the gradients' scale", Severity.INFO)
    return args


def _l2_decay(decay, params) -> bool | None:
    """Whether the call asks for an L2 weight decay (its own or a group's); None when
    the code does not show it (a variable)."""
    if decay is not None:
        value = literal_value(decay)
        if value is NOT_LITERAL:
            return None
        if value not in (0, 0.0):
            return True
    return _groups_decay(params)


def _flag(value, name: str) -> bool:
    """A literal bool argument's value (absent: False); a variable cannot decide the class."""
    if value is None:
        return False
    flag = literal_value(value)
    if flag is NOT_LITERAL or not isinstance(flag, bool):
        raise Unconvertible(f"{name}={code(value)}: Adam or AdamW is decided where the call is written")
    return flag


def _groups_decay(params) -> bool | None:
    """Param groups that set a weight_decay other than 0: written out (a list of dicts),
    or not shown (None: a variable, filtered by _torch_optimizer_params, or groups built
    by a comprehension)."""
    if isinstance(params, cst.Call) and isinstance(params.func, cst.Name) \
            and params.func.value == "_torch_optimizer_params":
        return None
    if isinstance(params, (cst.ListComp, cst.GeneratorExp)) and isinstance(params.elt, cst.Dict):
        return None
    if not isinstance(params, (cst.List, cst.Tuple)):
        return False
    for element in params.elements:
        if isinstance(element.value, cst.Dict):
            for item in element.value.elements:
                if not isinstance(item, cst.DictElement):
                    return None  # {**group}
                if literal_value(item.key) == "weight_decay":
                    value = literal_value(item.value)
                    if value is NOT_LITERAL:
                        return None
                    if value not in (0, 0.0):
                        return True
    return False


@hook()
def one_cycle_lr(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``OneCycleLR(opt, max_lr=0.1, total_steps=100)`` -> ``_TorchOneCycleLR(optimizer=opt, max_lr=0.1, total_steps=100)``."""
    return keyword_call(runtime_helper(ctx, "_TorchOneCycleLR"), args)


@hook(consumes=("cycle_momentum", "base_momentum", "max_momentum"))
def cyclic_lr(ctx, entry, args, receiver) -> cst.BaseExpression | dict:
    """``CyclicLR(opt, 0.01, 0.1)``: torch cycles the momentum by default, MindSpore's
    never: ``_TorchCyclicLR`` does; with ``cycle_momentum=False`` MindSpore's class."""
    if literal_value(args.get("cycle_momentum", literal(True))) is False:
        return {k: v for k, v in args.items() if k not in ("cycle_momentum", "base_momentum", "max_momentum")}
    return keyword_call(runtime_helper(ctx, "_TorchCyclicLR"), args)


@hook()
def step_as_int(ctx, entry, args, receiver) -> dict:
    """``LambdaLR(opt, f)`` -> ``LambdaLR(optimizer=opt, lr_lambda=_torch_step_as_int(f))``."""
    if "lr_lambda" not in args:
        return args
    wrapped = cst.Call(func=runtime_helper(ctx, "_torch_step_as_int"), args=[cst.Arg(args["lr_lambda"])])
    return {**args, "lr_lambda": wrapped}
