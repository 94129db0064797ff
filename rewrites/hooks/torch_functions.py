"""Hooks of tables/torch_functions.toml: torch.* functions (several also
serve the Tensor method of the same name, see tensor_methods.py).

Every composition here is exact: where it would not be, the hook refuses.
"""
from __future__ import annotations

import re

import libcst as cst

from transpile.engine.diagnostics import Severity

from ..runtime.registry import runtime_helper
from ..syntax import (NOT_LITERAL, Unconvertible, code, entry_call, first_param, keyword_call, literal, literal_value, mindspore_ref, name_chain, operand_code, target_call)
from .registry import hook
from .torch_indexing import run_time_helper  # noqa: F401  (scatter, unique: composed beside the code)


@hook(consumes=("dtype",))
def cast_input_dtype(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``dtype=`` casts the input first (torch.sum(x, dtype=...) and friends). Without it, a
    comparison's cumsum (``(ids != 1).cumsum(-1)``: transformers' packed-sequence mask) is
    counted in int64, as torch does: MindSpore's CumSum takes no bool."""
    dtype = args.pop("dtype", None)
    if dtype is None and entry.source.rsplit(".", 1)[-1] == "cumsum":
        dtype = _counted_comparison(ctx, entry, args, receiver)
    if dtype is not None and literal_value(dtype) is not None:
        cast = ctx.reference("mindspore.ops.cast")
        if receiver is not None:
            receiver = keyword_call(cast, {"input": receiver, "dtype": dtype})
        else:
            first = first_param(entry)
            args[first] = keyword_call(cast, {"input": args[first], "dtype": dtype})
    return entry_call(ctx, entry, args, receiver)


def softmax_rows_guarded(ctx, call: cst.Call) -> cst.Call:
    """``call`` (a converted softmax) through ``_torch_softmax`` in a file that writes an
    infinity: a row that is -inf everywhere would spoil MindSpore's softmax of the others."""
    if not ctx.facts.writes_infinity():
        return call
    return call.with_changes(func=runtime_helper(ctx, "_torch_softmax"))


@hook(consumes=("dtype",))
def softmax_cast_rows(ctx, entry, args, receiver) -> cst.BaseExpression:
    """torch.softmax and Tensor.softmax: ``dtype=`` casts the input (``cast_input_dtype``);
    through ``_torch_softmax`` where the file writes an infinity (``softmax_rows_guarded``)."""
    return softmax_rows_guarded(ctx, cast_input_dtype(ctx, entry, args, receiver))


def _counted_comparison(ctx, entry, args, receiver) -> cst.BaseExpression | None:
    """``ms.int64`` where the input is a comparison (a bool tensor), else None."""
    value = receiver if receiver is not None else args.get(first_param(entry))
    return mindspore_ref(ctx, "int64") if type(value) is cst.Comparison else None


@hook(consumes=("dtype",))
def cast_result_dtype(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``dtype=`` casts the result (torch.linspace(..., dtype=...))."""
    dtype = args.pop("dtype", None)
    result = entry_call(ctx, entry, args, receiver)
    if dtype is None or literal_value(dtype) is None:
        return result
    return keyword_call(ctx.reference("mindspore.ops.cast"), {"input": result, "dtype": dtype})


@hook()
def int64_result(ctx, entry, args, receiver) -> cst.BaseExpression:
    """MindSpore gives int32 indices here; torch gives int64."""
    result = entry_call(ctx, entry, args, receiver)
    return keyword_call(ctx.reference("mindspore.ops.cast"), {"input": result, "dtype": mindspore_ref(ctx, "int64")})


@hook()
def int64_dtype(ctx, entry, args, receiver) -> dict:
    """The target takes a result dtype and defaults to int32; torch gives int64."""
    args["dtype"] = mindspore_ref(ctx, "int64")
    return args


def zero_dim_dtype_at_run_time(entry) -> list[str]:
    return ['if kwargs.get("dtype") is None and tuple(kwargs.get("size", (1,))) == ():',
            '    kwargs["dtype"] = __import__("mindspore").float32']


@hook(at_run_time=zero_dim_dtype_at_run_time)
def zero_dim_dtype(ctx, entry, args, receiver) -> dict:
    """``torch.ones(())``: MindSpore's ones/zeros of a 0-d shape find no CPU kernel unless
    given a dtype (torch's default, float32, written out for that shape only)."""
    shape = args.get("shape", args.get("size"))
    if "dtype" not in args and isinstance(shape, (cst.Tuple, cst.List)) and not shape.elements:
        args["dtype"] = mindspore_ref(ctx, "float32")
    return args


def _builtin_number(ctx, node: cst.BaseExpression) -> type | None:
    """The type of a call to Python's ``float``, ``int`` or ``bool`` (``float("-inf")``,
    ``-float(x)``), when the file does not rebind that name; None otherwise."""
    if type(node) is cst.UnaryOperation and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    if (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in ("float", "int", "bool")
            and node.func.value not in ctx.imports.bindings):
        return {"float": float, "int": int, "bool": bool}[node.func.value]
    return None


@hook()
def full_dtype(ctx, entry, args, receiver) -> dict:
    """torch.full infers the dtype from the fill value; ops.full defaults to int64."""
    if "dtype" in args and literal_value(args["dtype"]) is not None:
        return args
    value = args.get("fill_value")
    if value is None:
        raise Unconvertible("fill_value is missing")
    v = literal_value(value)
    if isinstance(v, bool):
        args["dtype"] = mindspore_ref(ctx, "bool_")
    elif isinstance(v, int):
        args["dtype"] = mindspore_ref(ctx, "int64")
    elif isinstance(v, float):
        args["dtype"] = mindspore_ref(ctx, "float32")
    elif _builtin_number(ctx, value) is not None:
        args["dtype"] = mindspore_ref(ctx, {bool: "bool_", int: "int64", float: "float32"}[_builtin_number(ctx, value)])
    elif v is NOT_LITERAL and name_chain(value):
        src = code(value)
        b, i, f = (code(mindspore_ref(ctx, n)) for n in ("bool_", "int64", "float32"))
        args["dtype"] = cst.parse_expression(f"{b} if isinstance({src}, bool) else {i} if isinstance({src}, int) else {f}")
    else:
        raise Unconvertible("cannot tell the fill value's type: give dtype=")
    size = args.get("size")
    if size is not None and isinstance(literal_value(size), int):
        args["size"] = literal([literal_value(size)])
    return args


def _is_dim(ctx, node: cst.BaseExpression) -> bool | None:
    """True: plainly a dim; False: plainly not (a MindSpore op's result, converted from a
    torch function: ``torch.min(x, torch.full_like(x, n))``, a tensor); None: cannot tell."""
    if isinstance(node, cst.Call):
        ops_ = code(ctx.reference("mindspore.ops.abs")).rsplit(".", 1)[0]
        if code(node.func).startswith(ops_ + "."):
            return False
    v = literal_value(node)
    if isinstance(v, int) and not isinstance(v, bool):
        return True
    if v is not NOT_LITERAL:
        return False
    if isinstance(node, (cst.Name, cst.Attribute)):
        last = code(node).rsplit(".", 1)[-1].lower()
        if re.search(r"(^|_)(dim|axis|d|ax)($|_)|^dim|^axis", last):
            return True
    return None


@hook()
def narrow_start(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.narrow(x, 0, -2, 2)``: torch counts a negative start from the end of the dim,
    ops.narrow refuses it: a negative number becomes ``x.shape[0] - 2``."""
    start = literal_value(args.get("start"))
    if isinstance(start, int) and not isinstance(start, bool) and start < 0 and "axis" in args:
        tensor = receiver if receiver is not None else args["input"]
        args["start"] = cst.parse_expression(f"{operand_code(tensor)}.shape[{code(args['axis'])}] - {-start}")
    return entry_call(ctx, entry, args, receiver)


@hook()
def cartesian_prod(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.cartesian_prod(a)`` of one tensor is that tensor (1-D); ops.cartesian_prod
    gives a column. Several tensors, or a starred list, are ops.cartesian_prod's."""
    parts = args.get("*")
    if isinstance(parts, list) and len(parts) == 1 and not isinstance(parts[0], (cst.StarredElement, cst.Arg)):
        return parts[0]
    return entry_call(ctx, entry, args, receiver)


@hook()
def round_decimals(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.round(x)`` -> ``ops.round(x)``; with ``decimals=`` other than 0 ->
    ``_torch_round(input=x, decimals=d)`` (MindSpore's Round kernel takes 0 only on CPU)."""
    decimals = args.get("decimals")
    if decimals is None or literal_value(decimals) == 0:
        args.pop("decimals", None)
        return entry_call(ctx, entry, args, receiver)
    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(runtime_helper(ctx, "_torch_round"), args)


@hook()
def max_min(ctx, entry, args, receiver) -> cst.BaseExpression:
    """torch.max/min (and Tensor.max/min) are three functions:

    - ``max(x)`` -> ``ops.amax(x)`` (``ops.max(x)`` is a tuple);
    - ``max(x, dim, keepdim)`` -> ``ops.max(x, axis, keepdims)`` (values, int64 indices);
    - ``max(x, other)`` -> ``ops.maximum(x, other)``.

    When the second argument could be either (a plain name), torch decides at run time
    by its type, and so does the converted code.
    """
    kind = entry.source.rsplit(".", 1)[-1]  # "max" / "min"
    x = receiver if receiver is not None else args.pop("input")
    dim, keepdim, other = args.pop("dim", None), args.pop("keepdim", None), args.pop("other", None)
    if args:
        raise Unconvertible(f"unexpected arguments {sorted(args)}")
    if dim is not None and other is not None:
        raise Unconvertible("both dim and other")

    def elementwise(o):
        return keyword_call(ctx.reference(f"mindspore.ops.{kind}imum"), {"input": x, "other": o})

    def reduce(d):
        out = {"input": x, "axis": d}
        if keepdim is not None:
            out["keepdims"] = keepdim
        return keyword_call(ctx.reference(f"mindspore.ops.{kind}"), out)

    if other is not None:
        if keepdim is not None:
            raise Unconvertible("keepdim with a tensor argument")
        return elementwise(other)
    if dim is None:
        if keepdim is not None:
            raise Unconvertible("keepdim without dim")
        return keyword_call(ctx.reference(f"mindspore.ops.a{kind}"), {"input": x})
    verdict = True if keepdim is not None else _is_dim(ctx, dim)
    if verdict is True:
        return reduce(dim)
    if verdict is False:
        return elementwise(dim)
    if not name_chain(dim):
        # an expression: evaluated once, its type read when the code runs
        return keyword_call(runtime_helper(ctx, f"_torch_{kind}"), {"input": x, "second": dim})
    tensor = code(ctx.reference("mindspore.Tensor"))
    return cst.parse_expression(
        f"{code(elementwise(dim))} if isinstance({code(dim)}, {tensor}) else {code(reduce(dim))}"
    )


def _cat_at_run_time(entry) -> list[str]:
    return []  # a cat passed as a value (partial(torch.cat, dim=1)) is left unfiltered


@hook(at_run_time=_cat_at_run_time)
def cat_operands(ctx, entry, args, receiver) -> dict:
    """In a file that makes 1-D empty tensors (``torch.empty(0)``, ``torch.Tensor()``,
    ...: a file fact), the operands of each cat go through ``_skip_empty_1d`` when it
    runs, unless they are one literal operand. The note is reported once, at the first
    such tensor."""
    facts = getattr(ctx, "facts", None)
    empty = facts.empty_1d_tensor() if facts is not None else None
    tensors = args.get("tensors")
    if empty is None or tensors is None:
        return args
    if isinstance(tensors, (cst.List, cst.Tuple)) and len(tensors.elements) == 1 \
            and not isinstance(tensors.elements[0], cst.StarredElement):
        return args
    name = "_skip_empty_1d"
    if name not in ctx.definitions:
        ctx.report(empty, "MS201", "a 1-D empty tensor: torch.cat skips such operands beside tensors of another "
                   f"rank, MindSpore's concat refuses them; this file's cats drop them when they run ({name})",
                   Severity.INFO)
    args["tensors"] = cst.Call(func=runtime_helper(ctx, name), args=[cst.Arg(tensors)])
    return args


@hook()
def median(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``median(x)`` is the lower median of all elements; ``median(x, dim)`` a (values, indices) pair."""
    x = receiver if receiver is not None else args.pop("input")
    if "axis" not in args or literal_value(args["axis"]) is None:
        if "keepdims" in args:
            raise Unconvertible("keepdim without dim")
        flat = keyword_call(ctx.reference("mindspore.ops.reshape"), {"input": x, "shape": literal([-1])})
        call = keyword_call(ctx.reference("mindspore.ops.median"), {"input": flat, "axis": literal(0)})
        return cst.Subscript(value=call, slice=[cst.SubscriptElement(cst.Index(literal(0)))])
    return keyword_call(ctx.reference("mindspore.ops.median"), {"input": x, **args})


@hook()
def where(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.where(cond)`` is ``nonzero(cond, as_tuple=True)``."""
    if receiver is None and "input" not in args and "other" not in args:
        matrix = keyword_call(ctx.reference("mindspore.ops.nonzero"), {"input": args["condition"]})
        return keyword_call(ctx.reference("mindspore.ops.unbind"), {"input": matrix, "dim": literal(1)})
    if (receiver is None and "input" not in args) or "other" not in args:
        raise Unconvertible("where needs the condition and both values")
    return entry_call(ctx, entry, args, receiver)


@hook()
def randint(ctx, entry, args, receiver) -> dict:
    """``randint(high, size)``: torch's low is optional in front."""
    if "size" not in args:
        if "high" not in args:
            raise Unconvertible("size is missing")
        args = {"low": literal(0), "high": args.pop("low"), "size": args.pop("high"), **args}
    elif "low" not in args:
        args = {"low": literal(0), **args}
    if "dtype" not in args:
        args["dtype"] = mindspore_ref(ctx, "int64")
    return args


@hook()
def randint_like(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``randint_like(x, high)``: torch's low is optional in front, and the result has
    x's dtype (MindSpore wants an integer dtype: draw int64, then cast)."""
    if "high" not in args:
        args = {**args, "low": literal(0), "high": args.pop("low")}
    elif "low" not in args:
        args = {"low": literal(0), **args}
    if "dtype" in args and literal_value(args["dtype"]) is not None:
        return entry_call(ctx, entry, args, receiver)
    x = receiver if receiver is not None else args["input"]
    if not name_chain(x):
        raise Unconvertible("the input is used twice (for its dtype): give it a name first")
    args["dtype"] = mindspore_ref(ctx, "int64")
    drawn = entry_call(ctx, entry, args, receiver)
    return keyword_call(ctx.reference("mindspore.ops.cast"), {"input": drawn, "dtype": cst.Attribute(value=x, attr=cst.Name("dtype"))})


@hook()
def bernoulli(ctx, entry, args, receiver) -> dict:
    """``torch.bernoulli(probs)`` draws with the probabilities in ``probs``: ``p=probs``."""
    if "p" not in args:
        args["p"] = receiver if receiver is not None else args["input"]
    return args


@hook(consumes=("alpha",))
def add_alpha(ctx, entry, args, receiver) -> dict:
    """``add(x, y, alpha=a)`` is ``x + a * y``."""
    alpha = args.pop("alpha", None)
    if alpha is not None and literal_value(alpha) != 1:
        args["other"] = cst.parse_expression(f"{operand_code(args['other'])} * {operand_code(alpha)}")
    return args


@hook()
def allclose(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.allclose`` -> ``bool(ops.isclose(...).all())``."""
    close = entry_call(ctx, entry, args, receiver)
    return cst.parse_expression(f"bool({code(close)}.all())")


@hook()
def equal(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.equal(a, b)``: same shape and same values, as a Python bool."""
    a = receiver if receiver is not None else args["input"]
    b = args["other"]
    if not (name_chain(a) and name_chain(b)):
        raise Unconvertible("both arguments are used twice: give them names first")
    eq = keyword_call(ctx.reference("mindspore.ops.equal"), {"input": a, "other": b})
    return cst.parse_expression(f"({code(a)}.shape == {code(b)}.shape and bool({code(eq)}.all()))")


@hook()
def diag(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.diag``: builds a matrix from a vector, takes the diagonal of a matrix."""
    x = receiver if receiver is not None else args.pop("input")
    offset = args.get("diagonal", literal(0))
    if not name_chain(x):  # the rank is tested where it runs, the input evaluated once
        return keyword_call(runtime_helper(ctx, "_torch_diag"), {"input": x, "diagonal": offset})
    build = keyword_call(ctx.reference("mindspore.ops.diagflat"), {"input": x, "offset": offset})
    take = keyword_call(ctx.reference("mindspore.ops.diagonal"), {"input": x, "offset": offset})
    return cst.parse_expression(f"{code(build)} if {code(x)}.ndim == 1 else {code(take)}")


@hook()
def select(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.select(x, dim, i)`` -> ``x[:, ..., i]`` (dim must be a literal; ops.select is where)."""
    x = receiver if receiver is not None else args.pop("input")
    dim = literal_value(args.get("dim", NOT_LITERAL))
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise Unconvertible("dim must be an integer literal")
    index = args["index"]
    if dim >= 0:
        parts = [":"] * dim + [code(index)]
    else:
        parts = ["..."] + [code(index)] + [":"] * (-dim - 1)
    return cst.parse_expression(f"{operand_code(x)}[{', '.join(parts)}]")


@hook()
def method_on_first(ctx, entry, args, receiver) -> cst.BaseExpression:
    """Functions whose MindSpore form is a Tensor method: ``f(x, ...)`` -> ``x.f(...)``."""
    x = receiver if receiver is not None else args.pop(first_param(entry))
    return keyword_call(cst.Attribute(value=x, attr=cst.Name(entry.target.lstrip("."))), args)


@hook()
def take(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.take(x, idx)`` indexes the flattened input: ``ops.gather(x.reshape(-1), idx, 0)``."""
    x = receiver if receiver is not None else args.pop("input")
    flat = keyword_call(ctx.reference("mindspore.ops.reshape"), {"input": x, "shape": literal([-1])})
    return keyword_call(ctx.reference("mindspore.ops.gather"), {"input_params": flat, "input_indices": args["index"], "axis": literal(0)})


@hook()
def meshgrid(ctx, entry, args, receiver) -> cst.BaseExpression:
    """torch.meshgrid's indexing (None: the deprecated default) means 'ij'; ops.meshgrid's
    is 'xy'. torch also takes the tensors as one list (ops.meshgrid only as varargs)."""
    indexing = args.get("indexing")
    if indexing is None or literal_value(indexing) is None:
        indexing = literal("ij")
    tensors = list(args.get("*", []))
    if len(tensors) == 1 and isinstance(tensors[0], (cst.List, cst.Tuple)):
        tensors = [el.value for el in tensors[0].elements]
        if any(isinstance(el, cst.StarredElement) for el in args["*"][0].elements):
            raise Unconvertible("starred elements in the tensor list")
    elif len(tensors) == 1 and isinstance(tensors[0], cst.StarredElement):
        pass  # torch.meshgrid(*grids): the same varargs
    elif len(tensors) == 1:
        one = code(tensors[0])
        if not name_chain(tensors[0]):
            raise Unconvertible("a single argument that may be a list of tensors: give it a name first")
        spread = cst.parse_expression(f"{one} if isinstance({one}, (list, tuple)) else ({one},)")
        return keyword_call(ctx.reference(entry.target), {"*": [cst.StarredElement(spread)], "indexing": indexing})
    return keyword_call(ctx.reference(entry.target), {"*": tensors, "indexing": indexing})


@hook()
def polygamma(ctx, entry, args, receiver) -> dict:
    """ops.polygamma wants the order as a tensor; an integer or bool input is computed in
    float32 as torch does (MindSpore's CPU kernel refuses it: ``_torch_float_input``)."""
    n = args.get("n")
    if n is not None and not (isinstance(n, cst.Call) and code(n.func).endswith("Tensor")):
        args["n"] = keyword_call(ctx.reference("mindspore.Tensor"), {"input_data": n, "dtype": mindspore_ref(ctx, "int64")})
    source = args.get("input")
    if source is not None and not floating_arithmetic(source) and not _floating_layer_call(ctx, source):
        args["input"] = keyword_call(runtime_helper(ctx, "_torch_float_input"), {"input": source})
    return args


@hook()
def bincount(ctx, entry, args, receiver) -> cst.BaseExpression:
    """Counts are int64 in torch (MindSpore: float32) when there are no weights."""
    weights = args.get("weights")
    result = entry_call(ctx, entry, args, receiver)
    if weights is not None and literal_value(weights) is not None:
        return result
    return keyword_call(ctx.reference("mindspore.ops.cast"), {"input": result, "dtype": mindspore_ref(ctx, "int64")})


@hook(consumes=("n",))
def diff_n(ctx, entry, args, receiver) -> cst.BaseExpression:
    """ops.diff only takes n=1: torch's n-th difference is n first differences,
    prepend/append applied before the first."""
    n = args.pop("n", None)
    v = 1 if n is None else literal_value(n)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise Unconvertible("n must be a non-negative integer literal")
    if v == 0:
        return receiver if receiver is not None else args[first_param(entry)]
    result = entry_call(ctx, entry, args, receiver)
    first = entry.receiver or first_param(entry)
    rest = {k: val for k, val in args.items() if k not in (first, "prepend", "append")}
    for _ in range(v - 1):
        result = keyword_call(ctx.reference(entry.target), {first: result, **rest})
    return result


@hook(consumes=("as_tuple",))
def nonzero(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``as_tuple=True`` has no CPU kernel: the columns of the (N, ndim) index matrix."""
    as_tuple = args.pop("as_tuple", None)
    v = False if as_tuple is None else literal_value(as_tuple)
    if v is False:
        return entry_call(ctx, entry, args, receiver)
    if v is not True:
        raise Unconvertible("as_tuple must be a literal True or False")
    matrix = entry_call(ctx, entry, args, receiver)
    return keyword_call(ctx.reference("mindspore.ops.unbind"), {"input": matrix, "dim": literal(1)})


@hook()
def norm(ctx, entry, args, receiver) -> dict | cst.BaseExpression:
    """torch.norm is a vector norm (over all elements when dim is None) for a numeric p
    (``float('inf')`` too) and for p='fro' (= ord 2); p='nuc', the nuclear norm of the
    matrices over dim (the last two by default), is ``_matrix_norm`` (emitted)."""
    p = args.get("ord")
    v = "fro" if p is None else literal_value(p)
    if v in ("fro", None):
        args["ord"] = literal(2)
    elif v == "nuc":
        return keyword_call(runtime_helper(ctx, "_matrix_norm"), {
            "A": receiver if receiver is not None else args["x"], "ord": p, "dim": args.get("axis", literal((-2, -1))),
            **({"keepdim": args["keepdims"]} if "keepdims" in args else {})})
    elif isinstance(v, bool) or not (isinstance(v, (int, float)) or name_chain(p) or _float_of_a_literal(p)):
        raise Unconvertible(f"p={code(p)} is not understood")
    return args


def _float_of_a_literal(node: cst.BaseExpression) -> bool:
    """``float('inf')``, ``float("-inf")``: a number written as a call."""
    return (type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "float"
            and len(node.args) == 1 and type(node.args[0].value) is cst.SimpleString)


@hook(consumes=("input",))
def ndtr(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.special.ndtr(x)``, the standard normal CDF, as ``0.5 * erfc(-x / sqrt(2))``:
    MindSpore has no ndtr (erfc keeps the lower tail accurate, as torch's ndtr does)."""
    x = args.pop("input")
    erfc = code(ctx.reference(entry.target))
    return cst.parse_expression(f"0.5 * {erfc}(-{operand_code(x)} * 0.7071067811865476)")


@hook()
def normal(ctx, entry, args, receiver) -> dict:
    """torch.normal(mean, std, size): ops.normal(shape, mean, stddev). The tensor forms
    (one draw per element of mean/std, no size) are refused."""
    if "shape" not in args:
        raise Unconvertible("without size, torch.normal draws one sample per element of mean/std: "
                            "write mindspore.ops.normal(shape, mean, stddev)")
    return args


def _einsum_spec(equation: str, count: int) -> tuple[list[str], str]:
    """Operand subscripts and output subscript of a literal equation (implicit output:
    the letters used once, in alphabetical order, as torch does)."""
    eq = equation.replace(" ", "")
    if "." in eq:
        raise Unconvertible("einsum with an ellipsis is not converted")
    lhs, arrow, out = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != count or not all(s.isalpha() for s in inputs) or (arrow and out and not out.isalpha()):
        raise Unconvertible(f"einsum equation {equation!r} does not match {count} operand(s)")
    if not arrow:
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    if any(len(set(s)) != len(s) for s in [*inputs, out]):
        raise Unconvertible("einsum with a repeated index in one operand (a diagonal) is not converted")
    if set(out) - set("".join(inputs)):
        raise Unconvertible(f"einsum output {out!r} names an index no operand has")
    return inputs, out


def _permuted(ctx, node: str, have: str, want: str) -> str:
    if have == want:
        return node
    return f"{code(ctx.reference('mindspore.ops.permute'))}({node}, {tuple(have.index(c) for c in want)})"


def _summed(ctx, node: str, have: str, keep: str) -> tuple[str, str]:
    """Sum away the indices of ``have`` not in ``keep``: (expression, remaining subscript)."""
    axes = tuple(i for i, c in enumerate(have) if c not in keep)
    if not axes:
        return node, have
    return (f"{code(ctx.reference('mindspore.ops.sum'))}({node}, dim={axes})",
            "".join(c for c in have if c in keep))


def _einsum_broadcast(ctx, a: tuple[str, str], b: tuple[str, str], free: str, summed: str, out: str) -> str:
    """Both operands laid out over every index (size-1 axes where one lacks it), multiplied
    and summed: exact like the matmul form, but it holds the whole product in memory."""
    expand = code(ctx.reference("mindspore.ops.expand_dims"))
    union = free + summed
    spread = []
    for node, have in (a, b):
        node = _permuted(ctx, node, have, "".join(c for c in union if c in have))
        for axis, c in enumerate(union):
            if c not in have:
                node = f"{expand}({node}, {axis})"
        spread.append(node)
    product = f"{spread[0]} * {spread[1]}"
    if summed:
        axes = tuple(range(len(free), len(union)))
        product = f"{code(ctx.reference('mindspore.ops.sum'))}({product}, dim={axes})"
    return _permuted(ctx, product, free, out)


def einsum_at_run_time(ctx, equation: cst.BaseExpression, operands: list, named: bool) -> cst.Call:
    """``_einsum_at_run_time(equation, (a, b, ...), named)``, the function emitted beside the code."""
    fn = runtime_helper(ctx, "_einsum_at_run_time")
    elements = [o if isinstance(o, cst.StarredElement) else cst.Element(o) for o in operands]
    if len(elements) == 1 and not isinstance(elements[0], cst.StarredElement):
        elements[0] = elements[0].with_changes(comma=cst.Comma())
    args = [cst.Arg(equation), cst.Arg(cst.Tuple(elements))]
    if named:
        args.append(cst.Arg(cst.Name("True")))
    return cst.Call(func=fn, args=args)


@hook(consumes=("args",))
def einsum(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.einsum`` with a literal equation and one or two operands, as permute,
    sum and one broadcasting matmul (MindSpore's ops.einsum has no CPU kernel) where
    each group of indices (free in the first operand, free in the second, summed) has at
    most one; otherwise as a broadcast product and a sum. An equation known only when it
    runs, an ellipsis, or more than two operands: a call of ``_einsum_at_run_time``,
    emitted beside the code, which reads the equation when it runs."""
    packed = args.get("args")  # torch's einsum(*args): the equation, then the operands
    items = [e if isinstance(e, cst.StarredElement) else e.value for e in packed.elements] \
        if isinstance(packed, cst.Tuple) else [packed]
    equation, operands = literal_value(items[0]), items[1:]
    if len(operands) == 1 and isinstance(operands[0], (cst.List, cst.Tuple)):  # einsum(eq, [a, b])
        operands = [e if isinstance(e, cst.StarredElement) else e.value for e in operands[0].elements]
    if not operands:
        raise Unconvertible("einsum without operands")
    if not isinstance(equation, str) or len(operands) > 2 or any(isinstance(o, cst.StarredElement) for o in operands):
        return einsum_at_run_time(ctx, items[0], operands, named=False)
    try:
        inputs, out = _einsum_spec(equation, len(operands))
    except Unconvertible:
        if "." not in equation:  # a diagonal, a wrong count: refused as written
            raise
        return einsum_at_run_time(ctx, items[0], operands, named=False)
    srcs = [operand_code(o) for o in operands]
    if len(operands) == 1:
        node, have = _summed(ctx, srcs[0], inputs[0], out)
        return cst.parse_expression(_permuted(ctx, node, have, out))
    (a, la), (b, lb) = [_summed(ctx, s, sub, out + other) for s, sub, other in
                        ((srcs[0], inputs[0], inputs[1]), (srcs[1], inputs[1], inputs[0]))]
    batch = "".join(c for c in out if c in la and c in lb)
    left = "".join(c for c in out if c in la and c not in lb)
    right = "".join(c for c in out if c in lb and c not in la)
    summed = "".join(c for c in la if c in lb and c not in out)
    if max(len(left), len(right), len(summed)) > 1:
        return cst.parse_expression(_einsum_broadcast(ctx, (a, la), (b, lb), batch + left + right, summed, out))
    expand = code(ctx.reference("mindspore.ops.expand_dims"))
    a = _permuted(ctx, a, la, batch + left + summed)
    b = _permuted(ctx, b, lb, batch + summed + right)
    n = len(batch)
    if not left:
        a = f"{expand}({a}, {n})"
    if not summed:
        a, b = f"{expand}({a}, -1)", f"{expand}({b}, {n})"
    if not right:
        b = f"{expand}({b}, -1)"
    result = f"{code(ctx.reference('mindspore.ops.matmul'))}({a}, {b})"
    drop = tuple(i for i, group in ((n, left), (n + 1, right)) if not group)
    if drop:
        result = f"{code(ctx.reference('mindspore.ops.squeeze'))}({result}, {drop})"
    return cst.parse_expression(_permuted(ctx, result, batch + left + right, out))


# expressions that are data, never a size (a tuple literal too: torch.FloatTensor((2, 3)) is [2., 3.])
def _items_call(ctx, node: cst.BaseExpression, dtype: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """A list or tuple written out, as nested ``_torch_tensor_items`` calls (one per list: the
    nesting is the code's, so GRAPH mode compiles it), or None where it holds no expression
    that may be a tensor (numbers only), a starred item, or items and lists side by side."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    if any(isinstance(e, cst.StarredElement) for e in node.elements):
        return None
    values = [e.value for e in node.elements]
    inner = [isinstance(v, (cst.List, cst.Tuple)) for v in values]
    if any(inner) and not all(inner):
        return None
    if all(inner):
        rows = [_items_call(ctx, v, dtype) for v in values]
        if all(r is None for r in rows):
            return None
        values = [r if r is not None else v for r, v in zip(rows, values)]
    elif all(literal_value(v) is not NOT_LITERAL for v in values):
        return None
    args = {"items": cst.List([cst.Element(v) for v in values])}
    if dtype is not None:
        args["dtype"] = dtype
    if all(inner):
        args["rows"] = cst.Name("True")
    return keyword_call(runtime_helper(ctx, "_torch_tensor_items"), args)


@hook()
def tensor_items(ctx, entry, args, receiver) -> dict | cst.BaseExpression:
    """``torch.tensor([[c, s, 0], [-s, c, 0]], dtype=...)``: a list written out whose items
    may be tensors (names, expressions) is stacked by ``_torch_tensor_items`` (torch reads a
    one-element tensor there as its number; MindSpore's Tensor refuses a tensor in a list);
    numbers only, or data given by name, stay ``ms.Tensor(data)``."""
    data = args.get("input_data")
    built = _items_call(ctx, data, args.get("dtype")) if data is not None else None
    if built is None:
        return args
    ctx.report(data, "MS201", f"{entry.source}([...]): items that may be tensors are stacked "
               "(_torch_tensor_items): MindSpore's Tensor refuses a tensor inside a list", Severity.INFO)
    return built


_DATA_EXPRESSIONS = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.Float, cst.Call, cst.Subscript)


@hook(not_a_value="a typed tensor class as a value (isinstance(x, torch.FloatTensor) also tests the dtype): "
                   "test x.dtype instead")
def legacy_constructor(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.FloatTensor(data)`` -> ``ms.Tensor(data, dtype=ms.float32)``;
    ``torch.FloatTensor(2, 3)`` and ``torch.FloatTensor(n)`` with an int are a shape
    (torch leaves the memory uninitialised; zeros here); ``torch.FloatTensor()`` is empty.
    One argument whose kind is not known here is told apart at run time (an int is a size):
    a name by a conditional expression, any other expression (``torch.Tensor(3 * k - 1)``,
    evaluated once) by ``_torch_legacy_tensor``."""
    values = list(args.get("*", ()))  # the positional arguments as written (the table renames them to "*")
    dtype = mindspore_ref(ctx, literal_value(args["dtype"]))
    zeros = ctx.reference("mindspore.ops.zeros")
    if not values:
        return keyword_call(zeros, {"size": literal([0]), "dtype": dtype})
    if any(isinstance(v, cst.StarredElement) for v in values):
        raise Unconvertible("sizes passed with *: write ops.zeros(size, dtype) by hand")
    one = values[0]
    data = keyword_call(ctx.reference(entry.target), {"input_data": one, "dtype": dtype})
    if len(values) > 1 or (isinstance(literal_value(one), int) and not isinstance(literal_value(one), bool)):
        return keyword_call(zeros, {"size": cst.Tuple([cst.Element(v) for v in values]), "dtype": dtype})
    if isinstance(one, _DATA_EXPRESSIONS):
        return data
    if not name_chain(one):
        ctx.report(one, "MS201", f"{entry.source}({code(one)}): a size if it is an int, else data; "
                   "_torch_legacy_tensor tells them apart when it runs", Severity.INFO)
        return cst.Call(func=runtime_helper(ctx, "_torch_legacy_tensor"), args=[cst.Arg(one), cst.Arg(dtype)])
    shape = keyword_call(zeros, {"size": cst.Tuple([cst.Element(one)]), "dtype": dtype})
    return cst.IfExp(test=cst.parse_expression(f"isinstance({code(one)}, int)"), body=shape, orelse=data)


def _complex_of(ctx, parts: cst.BaseExpression) -> cst.Call:
    """``ops.Complex()(*parts)``: the primitive is MindSpore's only constructor of a
    complex tensor from its real and imaginary parts (there is no ops.complex)."""
    return cst.Call(func=cst.Call(func=ctx.reference("mindspore.ops.Complex")), args=[cst.Arg(parts, star="*")])


@hook(consumes=("real", "imag", "abs", "angle"))
def broadcast_parts(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.complex(re, im)`` / ``torch.polar(abs, angle)`` broadcast their two parts;
    MindSpore does not: the Complex primitive raises on (2, 3) with (1, 3), and ops.polar
    silently gives zeros past the first row. Broadcast them first."""
    parts = [args.pop(entry.rename.get(p, p)) for p in entry.params]
    both = keyword_call(ctx.reference("mindspore.numpy.broadcast_arrays"), {"*": parts})
    if entry.target == "mindspore.ops.Complex":
        return _complex_of(ctx, both)
    return keyword_call(ctx.reference(entry.target), {"*": [cst.StarredElement(both)]})


@hook(consumes=("input",))
def view_as_complex(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.view_as_complex(x)`` -> ``ops.Complex()(*ops.unbind(x, -1))``: the last axis
    holds (real, imaginary); unbinding it gives Complex two arguments only when its size
    is 2, so any other size raises as torch does. x is evaluated once."""
    parts = keyword_call(ctx.reference("mindspore.ops.unbind"), {"input": args.pop("input"), "dim": literal(-1)})
    return _complex_of(ctx, parts)


@hook()
def numpy_type_info(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.finfo(t.dtype)`` -> ``_torch_finfo(t.dtype)``: numpy's finfo of the dtype's
    name, and the limits of bfloat16 and float8, which numpy lacks (often read when a
    module is imported: transformers' ``torch.finfo(torch.float8_e4m3fn).max``).
    ``torch.iinfo(t.dtype)`` -> ``numpy.iinfo(str(t.dtype).lower())``: a MindSpore dtype
    prints as its name (Int32). ``torch.finfo()`` is float32's."""
    kind = next(iter(args.values()), None)  # the one argument (dtype / int_type)
    if entry.source == "torch.finfo":
        return cst.Call(func=runtime_helper(ctx, "_torch_finfo"), args=[cst.Arg(kind)] if kind is not None else [])
    if kind is None:
        return target_call(ctx, entry.target, {}, (ctx.reference("numpy.float32"),))
    name = cst.parse_expression(f"str({code(kind)}).lower()")
    return target_call(ctx, entry.target, {}, (name,))


@hook()
def constant(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A call giving a constant in MindSpore (``torch.get_default_dtype()``): the target itself."""
    return ctx.reference(entry.target)


def _state_dict_call(value: cst.BaseExpression) -> bool:
    """``m.state_dict()``: what save_checkpoint takes as it is."""
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "state_dict")


@hook()
def torch_save(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.save(m.state_dict(), p)`` -> ``save_checkpoint``; any other object (a checkpoint
    dict with an optimizer's state and the epoch) -> ``_torch_save``, which keeps its structure."""
    if _state_dict_call(args["save_obj"]):
        return keyword_call(ctx.reference(entry.target), args)
    return cst.Call(func=runtime_helper(ctx, "_torch_save"),
                    args=[cst.Arg(args["save_obj"]), cst.Arg(args["ckpt_file_name"])])


@hook()
def torch_load(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.load(p)`` -> ``load_checkpoint`` where every load of the file goes straight into
    ``load_state_dict`` (a state_dict); else ``_torch_load``, which also reads back what
    ``_torch_save`` stored."""
    if _loads_state_dicts_only(ctx):
        return keyword_call(ctx.reference(entry.target), args)
    return cst.Call(func=runtime_helper(ctx, "_torch_load"), args=[cst.Arg(args["ckpt_file_name"])])


def _loads_state_dicts_only(ctx) -> bool:
    """Each ``torch.load`` call of the file is the argument of a ``load_state_dict`` call."""
    calls = list(ctx.facts.nodes(ctx.facts.module, (cst.Call,)))
    loads = {id(c) for c in calls if ctx.imports.qualify(c.func) == "torch.load"}
    into_modules = {id(c.args[0].value) for c in calls if c.args and isinstance(c.func, cst.Attribute)
                    and c.func.attr.value == "load_state_dict"}
    return loads <= into_modules


@hook()
def float_input(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.log(x)`` / ``x.log()`` -> ``ops.log(input=_torch_float_input(input=x))``:
    torch computes an integer or bool tensor's float-only math (log, exp, sin, sigmoid,
    erf, ...) in float32; MindSpore's CPU kernels refuse it, or (sinc) compute a bool
    otherwise (the helper passes a float tensor as it is). The tensor is the target's
    ``input`` argument, or the one the entry renames torch's first parameter to."""
    if receiver is not None:
        name, source = entry.receiver or "input", receiver
    else:
        name = entry.rename.get(entry.params[0], entry.params[0])
        source = args.pop(name)
    if not floating_arithmetic(source) and not _floating_layer_call(ctx, source):
        source = keyword_call(runtime_helper(ctx, "_torch_float_input"), {"input": source})
    return keyword_call(ctx.reference(entry.target), {name: source, **args})


def _no_statements(entry) -> list[str]:
    """A value (``act=F.relu6``): converted at run time as the entry's arguments say, the
    target called as it is (an integer input is not cast there)."""
    return []


@hook(at_run_time=_no_statements)
def integer_via_float(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.floor(x)`` -> ``_torch_via_float(op=ops.floor, input=x)``: torch computes an
    integer or bool tensor in its own dtype where MindSpore's CPU kernel takes floats only; the
    helper casts it in (float64, or float32 for NO_FLOAT64_KERNEL) and the result back. An input floating whatever its tensors
    (``torch.floor(x / 2)``) is called as the target directly."""
    source = receiver if receiver is not None else args[first_param(entry)]
    if floating_arithmetic(source) or _floating_layer_call(ctx, source):
        return entry_call(ctx, entry, args, receiver)
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    via = {"via": mindspore_ref(ctx, "float32")} if entry.target in NO_FLOAT64_KERNEL else {}
    return keyword_call(runtime_helper(ctx, "_torch_via_float"), {"op": ctx.reference(entry.target), **via, **args})


@hook(at_run_time=_no_statements)
def bool_via_float(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.sort(x)`` -> ``_torch_bool_via_float(op=ops.sort, input=x)``: torch sorts,
    reduces and compares bool tensors in bool where MindSpore's CPU kernel has no bool; the
    helper casts them in as float32 and the values back. An input floating whatever its
    tensors (``torch.sort(x / 2)``) is called as the target directly."""
    return _through_bool_helper(ctx, entry, args, receiver, "_torch_bool_via_float")


def _through_bool_helper(ctx, entry, args, receiver, helper: str) -> cst.BaseExpression:
    """``helper(op=target, **args)``, the receiver passed as the entry's first argument; the
    target called directly where the input is floating whatever its tensors."""
    source = receiver if receiver is not None else args[first_param(entry)]
    if never_bool(source) or _floating_layer_call(ctx, source):
        return entry_call(ctx, entry, args, receiver)
    if receiver is not None:
        args = {entry.receiver or "input": receiver, **args}
    return keyword_call(runtime_helper(ctx, helper), {"op": ctx.reference(entry.target), **args})


def never_bool(node: cst.BaseExpression) -> bool:
    """The expression is no bool tensor whatever its tensors' dtypes: floating arithmetic,
    a difference or a negation (torch refuses both on bool), or a sum or product with a
    number literal (bool is promoted: ``mask + 1`` is int64): ``clamp(x - tau, min=0)``."""
    if floating_arithmetic(node):
        return True
    if type(node) is cst.UnaryOperation:
        return type(node.operator) is cst.Minus
    if type(node) is not cst.BinaryOperation:
        return False
    if type(node.operator) in (cst.Subtract, cst.Divide):
        return True
    return type(node.operator) in FLOAT_KEEPING_OPERATORS and any(
        type(side) in (cst.Integer, cst.Float) or never_bool(side) for side in (node.left, node.right))


@hook(at_run_time=_no_statements)
def bool_as_int64(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.clamp(x, 0, 1)`` -> ``_torch_bool_as_int64(op=ops.clamp, input=x, ...)``: torch
    promotes a bool tensor to int64 there (clamp, square), MindSpore's CPU kernel has no bool.
    An input floating whatever its tensors is called as the target directly."""
    return _through_bool_helper(ctx, entry, args, receiver, "_torch_bool_as_int64")


@hook()
def integer_coefficients(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.addmm(c, a, b, beta=0.5)`` -> ``ops.addmm(..., beta=_torch_coefficient(c, 0.5))``:
    torch truncates a float factor to an integer for integer tensors (beta=0.5 scales an
    int64 ``c`` by 0), MindSpore computes the product in float32. An integer literal factor
    means the same in both and is passed as it is."""
    tensor = receiver if receiver is not None else args[first_param(entry)]
    for name in ("beta", "alpha"):
        if name in args and not isinstance(literal_value(args[name]), int):
            args[name] = cst.Call(func=runtime_helper(ctx, "_torch_coefficient"),
                                  args=[cst.Arg(tensor), cst.Arg(args[name])])
    return entry_call(ctx, entry, args, receiver)


# targets whose MindSpore 2.10 CPU kernel refuses float64 too: integers go through float32
NO_FLOAT64_KERNEL = frozenset({"mindspore.ops.relu6", "mindspore.ops.nan_to_num"})


FLOAT_KEEPING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply)
# torch layers that compute in their float weights' dtype (they refuse an integer input) or
# look up float rows (Embedding): what they return is floating
FLOAT_OUTPUT_LAYERS = re.compile(r"torch\.nn\.(Lazy)?(Linear|Bilinear|Conv(Transpose)?[123]d|BatchNorm[123]d|LayerNorm|"
                                 r"GroupNorm|InstanceNorm[123]d|RMSNorm|Embedding|EmbeddingBag)")


FLOAT_DTYPE_NAMES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "float", "double"})


def _float_cast(node: cst.BaseExpression) -> bool:
    """``x.astype(dtype=ms.float32)``, ``x.to(ms.float64)`` (a converted ``x.float()``,
    ``x.to(torch.float64)``), or ``x.float()``, ``x.double()``, ``x.half()`` left as they
    are: a tensor cast to a floating dtype."""
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
        return False
    method = node.func.attr.value
    if method in ("float", "double", "half", "bfloat16"):
        return not node.args
    if method not in ("astype", "to") or len(node.args) != 1:
        return False
    dtype = node.args[0].value
    return type(dtype) is cst.Attribute and dtype.attr.value in FLOAT_DTYPE_NAMES


def _floating_layer_call(ctx, node: cst.BaseExpression) -> bool:
    """``self.fc(x)`` where the class sets ``self.fc`` to one of FLOAT_OUTPUT_LAYERS."""
    from ..table_calls import tables  # (table_calls imports the hooks)

    if type(node) is not cst.Call or type(node.func) is not cst.Attribute or type(node.func.value) is not cst.Name \
            or node.func.value.value != "self" or ctx.current_class is None:
        return False
    entry = ctx.facts.layer_attributes(ctx.current_class, tables()).get(node.func.attr.value)
    return entry is not None and FLOAT_OUTPUT_LAYERS.fullmatch(entry.source) is not None


def floating_arithmetic(node: cst.BaseExpression) -> bool:
    """The expression is floating whatever its tensors' dtypes, in torch and in MindSpore
    alike: a true division, a cast to a floating dtype, or a sum, difference or product with
    a float literal (or with such an expression), or its negation: ``x / n``,
    ``0.5 * logvar``, ``-(x * 2.0)``, ``x.astype(ms.float32) * -emb``."""
    if type(node) is cst.UnaryOperation and type(node.operator) in (cst.Minus, cst.Plus):
        return floating_arithmetic(node.expression)
    if _float_cast(node):
        return True
    if type(node) is not cst.BinaryOperation:
        return False
    if type(node.operator) is cst.Divide:
        return True
    return type(node.operator) in FLOAT_KEEPING_OPERATORS and any(
        type(side) is cst.Float or floating_arithmetic(side) for side in (node.left, node.right))
