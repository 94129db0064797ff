"""Hooks of tables/torch_inplace.toml: torch.* in-place functions and torch.*_copy functions."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, code, entry_call, first_param, keyword_call, literal, literal_value, operand_code
from .registry import hook
from .tensor_methods import copy_into


def _tables():
    from ..table_calls import build_call, tables  # (table_calls imports the hooks)

    return build_call, tables()


@hook()
def inplace_function(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.clamp_(x, 0, 1)`` converts as ``x.clamp_(0, 1)``, the Tensor method's entry;
    without such a method, as the out-of-place function copied into its input:
    ``torch.dropout_(x, p, train)`` -> ``x.copy_(ops.dropout(input=x, p=p, training=train))``."""
    build_call, tables = _tables()
    name = entry.source.rsplit(".", 1)[-1]
    if name in tables.methods:
        tensor = args.pop(first_param(entry))
        return build_call(ctx, tables.methods[name], args, tensor)
    return copy_into(ctx, args[first_param(entry)], build_call(ctx, tables.entries[entry.source.removesuffix("_")], args))


def _view(ctx, entry, args, receiver=None) -> cst.BaseExpression:
    """The conversion of the view op ``torch.X_copy`` copies: the entry's own target if it
    has one (split_with_sizes_copy: ops.split), else ``torch.X``'s entry, else the method
    ``Tensor.X``'s on the first argument (expand, view)."""
    build_call, tables = _tables()
    if entry.target:
        return entry_call(ctx, entry, args, None)
    name = entry.source.removesuffix("_copy")
    if name in tables.entries:
        return build_call(ctx, tables.entries[name], args)
    tensor = receiver if receiver is not None else args.pop(first_param(entry))  # x.narrow_copy(...)
    return build_call(ctx, tables.methods[name.rsplit(".", 1)[-1]], args, tensor)


def _copy(ctx, value: cst.BaseExpression) -> cst.BaseExpression:
    return keyword_call(ctx.reference("mindspore.ops.deepcopy"), {"input_x": value})


@hook()
def copied(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.t_copy(x)`` -> ``ops.deepcopy(input_x=ops.t(input=x))``."""
    return _copy(ctx, _view(ctx, entry, args, receiver))


@hook()
def slice_copy(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.slice_copy(x, 1, 0, 4, 2)`` -> ``ops.deepcopy(input_x=x[:, 0:4:2])`` (dim a literal)."""
    dim = literal_value(args.get("dim", literal(0)))
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise Unconvertible("dim must be an integer literal")
    bounds = [args.get(k) for k in ("start", "end", "step")]
    part = ":".join("" if b is None or literal_value(b) is None else code(b) for b in bounds)
    axes = [":"] * dim + [part] if dim >= 0 else ["..."] + [part] + [":"] * (-dim - 1)
    return _copy(ctx, cst.parse_expression(f"{operand_code(args['input'])}[{', '.join(axes)}]"))


@hook()
def copied_each(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.unbind_copy(x)`` -> ``tuple(ops.deepcopy(input_x=part) for part in ops.unbind(input=x))``."""
    part = cst.Name("part")
    copy = _copy(ctx, part)
    # the sole argument of tuple(): no parentheses of its own
    each = cst.GeneratorExp(elt=copy, for_in=cst.CompFor(target=part, iter=_view(ctx, entry, args)), lpar=[], rpar=[])
    return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(each)])


@hook()
def embedding_renorm_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.embedding_renorm_(w, idx, 1.0, 2.0)`` -> ``w.copy_(_torch_renormed(input=w, ...))``
    (the function emitted beside the code)."""
    renormed = runtime_helper(ctx, "_torch_renormed")
    return copy_into(ctx, args["input"], keyword_call(renormed, args))
