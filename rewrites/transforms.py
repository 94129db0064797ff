"""Value transforms named by the tables (``transform = { momentum = "one_minus" }``)."""
from __future__ import annotations

import libcst as cst

from .calls import Unconvertible, literal, literal_value


def one_minus(value: cst.BaseExpression) -> cst.BaseExpression:
    """BatchNorm momentum: torch's 0.1 is MindSpore's 0.9."""
    v = literal_value(value)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return literal(round(1 - v, 12))
    if v is None:
        raise Unconvertible("momentum=None (cumulative average) has no MindSpore equivalent")
    return cst.parse_expression(f"1 - ({cst.Module(body=[]).code_for_node(value)})")


def as_tuple(value: cst.BaseExpression) -> cst.BaseExpression:
    """An int or list shape as a tuple (LayerNorm's normalized_shape)."""
    v = literal_value(value)
    if isinstance(v, int):
        return literal([v])
    if isinstance(v, (list, tuple)):
        return literal(list(v))
    src = cst.Module(body=[]).code_for_node(value)
    return cst.parse_expression(f"({src},) if isinstance({src}, int) else tuple({src})")


TRANSFORMS = {"one_minus": one_minus, "as_tuple": as_tuple}


def gelu_approximate(value: cst.BaseExpression) -> cst.BaseExpression:
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


def bool_to_ddof(value: cst.BaseExpression) -> cst.BaseExpression:
    """torch.std/var ``unbiased=True/False`` is MindSpore's ``ddof=1/0``."""
    v = literal_value(value)
    if isinstance(v, bool):
        return literal(int(v))
    return cst.parse_expression(f"int({cst.Module(body=[]).code_for_node(value)})")


TRANSFORMS.update({"bool_to_ddof": bool_to_ddof})


def none_is_false(value: cst.BaseExpression) -> cst.BaseExpression:
    """torch's align_corners=None means False (with a warning); MindSpore wants a bool."""
    v = literal_value(value)
    if v is None:
        return literal(False)
    return value


TRANSFORMS.update({"none_is_false": none_is_false})


def ckpt_file(value: cst.BaseExpression) -> cst.BaseExpression:
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
