"""Value transforms named by the tables (``transform = { momentum = "one_minus" }``).

Each takes the argument's expression and, where the call site is known, the context."""
from __future__ import annotations

import libcst as cst

from .syntax import Unconvertible, literal, literal_value


def one_minus(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """BatchNorm momentum: torch's 0.1 is MindSpore's 0.9."""
    v = literal_value(value)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return literal(round(1 - v, 12))
    if v is None:
        raise Unconvertible("momentum=None (cumulative average) has no MindSpore equivalent")
    return cst.parse_expression(f"1 - ({cst.Module(body=[]).code_for_node(value)})")


def as_tuple(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """An int or list shape as a tuple (LayerNorm's normalized_shape)."""
    v = literal_value(value)
    if isinstance(v, int):
        return literal([v])
    if isinstance(v, (list, tuple)):
        return literal(list(v))
    src = cst.Module(body=[]).code_for_node(value)
    return cst.parse_expression(f"({src},) if isinstance({src}, int) else tuple({src})")


TRANSFORMS = {"one_minus": one_minus, "as_tuple": as_tuple}


def gelu_approximate(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """GELU: torch's approximate='none'/'tanh' is MindSpore nn.GELU's approximate=False/True."""
    v = literal_value(value)
    if v == "none":
        return literal(False)
    if v == "tanh":
        return literal(True)
    if isinstance(v, str):
        raise Unconvertible(f"approximate={v!r} is not a GELU mode")
    return cst.parse_expression(f"({cst.Module(body=[]).code_for_node(value)}) == 'tanh'")


TRANSFORMS.update({"gelu_approximate": gelu_approximate})


def bool_to_ddof(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """torch.std/var ``unbiased=True/False`` is MindSpore's ``ddof=1/0``."""
    v = literal_value(value)
    if isinstance(v, bool):
        return literal(int(v))
    return cst.parse_expression(f"int({cst.Module(body=[]).code_for_node(value)})")


TRANSFORMS.update({"bool_to_ddof": bool_to_ddof})


def none_is_false(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """torch's align_corners=None means False (with a warning); MindSpore wants a bool."""
    v = literal_value(value)
    if v is None:
        return literal(False)
    return value


TRANSFORMS.update({"none_is_false": none_is_false})


def ckpt_file(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """A checkpoint path with MindSpore's ``.ckpt`` suffix: save_checkpoint appends it to a
    name without it, load_checkpoint rejects a name without it. A literal gets it here; a
    name or attribute (``args.ckpt``) gets it at run time when it lacks it."""
    v = literal_value(value)
    if isinstance(v, str):
        return value if v.endswith(".ckpt") else literal(v + ".ckpt")
    if isinstance(value, cst.Name) or (isinstance(value, cst.Attribute) and _attr_chain(value)):
        src = cst.Module(body=[]).code_for_node(value)
        return cst.parse_expression(f'str({src}) if str({src}).endswith(".ckpt") else str({src}) + ".ckpt"')
    raise Unconvertible("the file is neither a literal path nor a variable: MindSpore checkpoints are "
                        "files whose name ends with .ckpt (assign the path to a name first)")


def _attr_chain(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


TRANSFORMS.update({"ckpt_file": ckpt_file})


def size_tuple(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """Kernel size, stride, dilation: torch also takes a list, MindSpore only an int or a
    tuple; a one-entry sequence stands for every axis in torch, MindSpore wants the int.
    Literals are rewritten, names known to hold lists (``kernel: List[int]``,
    ``kernel = [s + 1 for s in stride]``) get ``tuple()``, and attributes some class of
    the file declares as lists (``cnf.stride_q``) are converted when they hold one;
    another variable is nearly always an int, and a list in it fails loudly when the
    layer is built."""
    facts = ctx.facts if ctx is not None else None
    if isinstance(value, cst.Name) and facts is not None \
            and value.value in facts.list_names(ctx.innermost(cst.FunctionDef)):
        return cst.parse_expression(f"tuple({value.value})")
    if isinstance(value, cst.Attribute) and facts is not None and value.attr.value in facts.list_attributes() \
            and _attr_chain(value):
        src = cst.Module(body=[]).code_for_node(value)
        return cst.parse_expression(f"tuple({src}) if isinstance({src}, list) else {src}")
    v = literal_value(value)
    if isinstance(v, (list, tuple)) and len(v) == 1:
        return literal(v[0])
    if isinstance(v, list):
        return literal(v)
    if isinstance(value, cst.List) and all(isinstance(e, cst.Element) for e in value.elements):
        items = [e.value for e in value.elements]
        if len(items) == 1:
            return items[0]
        return cst.Tuple([cst.Element(item) for item in items])
    return value


def size_tuple_at_run_time(target: str) -> list[str]:
    """``size_tuple`` as statements on ``target`` (a generated converter's ``kwargs[key]``)."""
    return [
        f"if isinstance({target}, (list, tuple)):",
        f"    {target} = {target}[0] if len({target}) == 1 else tuple({target})",
    ]


TRANSFORMS.update({"size_tuple": size_tuple})
# Generated converters see every argument as a variable: these write statements that
# decide at run time, once for all the arguments a transform applies to.
RUNTIME_TRANSFORMS = {"size_tuple": size_tuple_at_run_time}
