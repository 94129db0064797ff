"""Value transforms named by the tables (``transform = { momentum = "one_minus" }``).

Each takes the argument's expression and, where the call site is known, the context,
and is registered by ``@transform``: a table's ``transform`` names resolve here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from .runtime.registry import runtime_helper
from .syntax import Unconvertible, code, literal, literal_value, name_chain, operand_code, is_number


@dataclass(frozen=True)
class Transform:
    name: str
    function: Callable
    # generated converters see every argument as a variable: ``at_run_time(target)``
    # returns statements deciding at run time (one block for all the arguments it
    # applies to); without it the generated code applies ``function`` to ``kwargs[name]``
    at_run_time: Callable | None


TRANSFORMS: dict[str, Transform] = {}


def transform(name: str | None = None, *, at_run_time: Callable | None = None):
    """Register the decorated function as the value transform ``name`` (default: its name)."""
    def register(function: Callable) -> Callable:
        key = name or function.__name__
        if key in TRANSFORMS:
            raise ValueError(f"transform {key!r} registered twice")
        TRANSFORMS[key] = Transform(key, function, at_run_time)
        return function
    return register


@transform()
def range_as_list(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """Data written as ``range(...)`` (``x.new(range(n))``, ``x.new_tensor(range(n))``) is its
    list: ``ms.Tensor`` refuses a range, and GRAPH mode hands a range on as a tuple, which a
    helper telling sizes from data takes for a shape."""
    if (type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "range"
            and (ctx is None or "range" not in ctx.imports.bindings)):
        return cst.Call(func=cst.Name("list"), args=[cst.Arg(value)])
    return value


@transform()
def one_minus(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """BatchNorm momentum: torch's 0.1 is MindSpore's 0.9."""
    v = literal_value(value)
    if is_number(v):
        return literal(round(1 - v, 12))
    if v is None:
        raise Unconvertible("momentum=None (cumulative average) has no MindSpore equivalent")
    return cst.parse_expression(f"1 - ({code(value)})")


@transform()
def as_float(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """A number the target takes as a float only (ops.cdist's p: Cdist refuses p=0 or 1)."""
    v = literal_value(value)
    if is_number(v):
        return cst.Float(repr(float(v)))
    return cst.parse_expression(f"float({code(value)})")


@transform()
def shape_of(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """A tensor where the target takes its shape (MindSpore's fan computation)."""
    return cst.parse_expression(f"{operand_code(value)}.shape")


@transform()
def as_tuple(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """An int or list shape as a tuple (LayerNorm's normalized_shape)."""
    v = literal_value(value)
    if isinstance(v, int) and not isinstance(v, bool):
        return literal([v])
    if isinstance(v, (list, tuple)):
        return literal(list(v))
    src = code(value)
    return cst.parse_expression(f"({src},) if isinstance({src}, int) else tuple({src})")



@transform()
def gelu_approximate(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """GELU: torch's approximate='none'/'tanh' is MindSpore nn.GELU's approximate=False/True."""
    v = literal_value(value)
    if v == "none":
        return literal(False)
    if v == "tanh":
        return literal(True)
    if isinstance(v, str):
        raise Unconvertible(f"approximate={v!r} is not a GELU mode")
    return cst.parse_expression(f"({code(value)}) == 'tanh'")



@transform()
def bool_to_ddof(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """torch.std/var ``unbiased=True/False`` is MindSpore's ``ddof=1/0``."""
    v = literal_value(value)
    if isinstance(v, bool):
        return literal(int(v))
    return cst.parse_expression(f"int({code(value)})")



@transform()
def none_is_false(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """torch's align_corners=None means False (with a warning); MindSpore wants a bool."""
    v = literal_value(value)
    if v is None:
        return literal(False)
    return value



@transform()
def ckpt_file(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """A checkpoint path with MindSpore's ``.ckpt`` suffix: save_checkpoint appends it to a
    name without it, load_checkpoint rejects a name without it. A literal gets it here; a
    name or attribute (``args.ckpt``) gets it at run time when it lacks it."""
    v = literal_value(value)
    if isinstance(v, str):
        return value if v.endswith(".ckpt") else literal(v + ".ckpt")
    if name_chain(value):
        src = code(value)
        return cst.parse_expression(f'str({src}) if str({src}).endswith(".ckpt") else str({src}) + ".ckpt"')
    raise Unconvertible("the file is neither a literal path nor a variable: MindSpore checkpoints are "
                        "files whose name ends with .ckpt (assign the path to a name first)")



def size_tuple_at_run_time(target: str) -> list[str]:
    """``size_tuple`` as statements on ``target`` (a generated converter's ``kwargs[key]``)."""
    return [
        f"if isinstance({target}, (list, tuple)):",
        f"    {target} = {target}[0] if len({target}) == 1 else tuple({target})",
    ]


@transform(at_run_time=size_tuple_at_run_time)
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
            and name_chain(value):
        src = code(value)
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


def _python_number_at_run_time(target: str) -> list[str]:
    """The arguments of a call converted when it runs: numpy scalars as Python numbers."""
    return [f"if type({target}).__module__ == 'numpy':", f"    {target} = {target}.item()"]


@transform(at_run_time=_python_number_at_run_time)
def python_number(value: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """A bound computed from an element of an array (crfseg's ``filter_size[i] // 2``, a
    numpy int64 where ``filter_size`` is a numpy array) -> ``_torch_python_number(...)``:
    torch.arange takes numpy scalars, MindSpore's arange refuses them in PYNATIVE mode (and
    its convolutions' paddings: a tuple's items are read each).
    Literals, names, shapes (``x.shape[1]``) and calls pass as they are. A parameter of
    the function that a call in the file passes such an element (crfseg's ``filter_size
    // 2`` in a helper called with ``filter_size[i]``) is one too. Compiled code is
    converted alike: PYNATIVE runs it too, and the helper compiles in GRAPH mode
    (tests/differential/test_numpy_scalars.py runs both)."""
    if ctx is None:
        return value
    if type(value) in (cst.Tuple, cst.List):  # padding=(filter_size[i] // 2,): each item
        items = [e.with_changes(value=python_number(e.value, ctx)) if type(e) is cst.Element else e
                 for e in value.elements]
        return value.with_changes(elements=items)
    if not indexes_an_array(value) and not names_array_element_param(value, ctx):
        return value
    return cst.Call(func=runtime_helper(ctx, "_torch_python_number"), args=[cst.Arg(value)])


def names_array_element_param(node: cst.BaseExpression, ctx) -> bool:
    """Arithmetic over a parameter of the enclosing function that the file's calls pass an
    element of an array (``FileFacts.array_element_params``)."""
    function = ctx.current_function
    if function is None:
        return False
    params = ctx.facts.array_element_params().get(function.name.value)
    if not params:
        return False
    kind = type(node)
    if kind is cst.Name:
        return node.value in params
    if kind is cst.UnaryOperation:
        return names_array_element_param(node.expression, ctx)
    if kind is cst.BinaryOperation:
        return names_array_element_param(node.left, ctx) or names_array_element_param(node.right, ctx)
    return False


def indexes_an_array(node: cst.BaseExpression) -> bool:
    """Arithmetic over an element of something other than a shape or size."""
    kind = type(node)
    if kind is cst.Subscript:
        base = node.value
        return not ((type(base) is cst.Attribute and base.attr.value in ("shape", "size"))
                    or type(base) is cst.Call or (type(base) is cst.Name and "shape" in base.value))
    if kind is cst.UnaryOperation:
        return indexes_an_array(node.expression)
    if kind is cst.BinaryOperation:
        return indexes_an_array(node.left) or indexes_an_array(node.right)
    return False
