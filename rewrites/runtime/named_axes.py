"""Run-time helpers: einx's elementwise functions (``einx.add('b n d, b d', x, y)``) on
MindSpore tensors (transpile MS208): einx has no MindSpore backend, and a MindSpore tensor
given to it fails ("Failed to determine which backend to use").

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _einx_elementwise(op, description, *operands):
    """``op`` on the operands with their axes matched by name, as einx's elementwise
    functions do: ``"b n d, b d"`` adds ``y`` to every ``n`` of ``x``. Each tensor's axes
    are put in the output's order, with length 1 for those it lacks, and ``op`` broadcasts.
    Without ``->``, the output is the operand whose axes include all the others'. ``...``
    stands for the operand's remaining axes, matched from the right as broadcasting does;
    composed axes ``(h d)`` and reductions ``[d]`` are not einx's elementwise forms here.
    The plan is made from the description and the shapes only (``_einx_elementwise_plan``)."""
    shapes = tuple(x.shape if isinstance(x, ms.Tensor) else None for x in operands)
    plan = _einx_elementwise_plan(description, shapes)
    aligned = []
    for (order, shape), x in zip(plan, operands):
        if shape is None:
            aligned.append(x)
            continue
        if order is not None:
            x = ops.permute(x, order)
        aligned.append(x.reshape(shape))
    return op(*aligned)


# The plan is Python on strings and shapes: in MindSpore's constexpr, GRAPH mode computes it
# while compiling (its comprehensions and sorted/next over names do not compile in a graph).
@ms.constexpr
def _einx_elementwise_plan(description, shapes):
    """Per operand of ``_einx_elementwise``: (the permutation that puts its axes in the
    output's order, or None; the shape to reshape it to), or (None, None) for an operand
    that is not a tensor (``shapes`` holds None for it)."""
    if "(" in description or "[" in description:
        raise ValueError(f"_einx_elementwise: composed or bracketed axes in {description!r}")
    inputs, arrow, output = description.partition("->")
    expressions = [e.split() for e in inputs.split(",")]
    if len(expressions) != len(shapes):
        raise ValueError(f"_einx_elementwise: {len(shapes)} operands for {description!r}")
    axes = [_einx_axes(e, len(e) if shape is None else len(shape)) for e, shape in zip(expressions, shapes)]
    if arrow:
        out = output.split()
        extra = max((len(a) - len(e) + 1 for a, e in zip(axes, expressions) if "..." in e), default=0)
        out = _einx_axes(out, len(out) - 1 + extra if "..." in out else len(out))
    else:
        out = next((a for a in sorted(axes, key=len, reverse=True) if all(set(b) <= set(a) for b in axes)), None)
        if out is None:
            raise ValueError(f"_einx_elementwise: no operand of {description!r} has every axis: give '->'")
    plan = []
    for names, shape in zip(axes, shapes):
        if shape is None:
            plan.append((None, None))
            continue
        missing = [n for n in names if n not in out]
        if missing:
            raise ValueError(f"_einx_elementwise: axes {missing} of {description!r} are not in the output")
        sizes = dict(zip(names, shape))
        order = sorted(range(len(names)), key=lambda i: out.index(names[i]))
        plan.append((tuple(order) if order != list(range(len(names))) else None,
                     tuple(sizes.get(n, 1) for n in out)))
    return tuple(plan)


def _einx_axes(expression, ndim):
    """The axis names of one operand, ``...`` spelled out as ``...k`` (k counted from the
    ellipsis' last axis, so that operands of different ranks line up from the right)."""
    if "..." not in expression:
        if len(expression) != ndim:
            raise ValueError(f"_einx_elementwise: {' '.join(expression)!r} names {len(expression)} axes of {ndim}")
        return list(expression)
    at = expression.index("...")
    count = ndim - (len(expression) - 1)
    return expression[:at] + [f"...{count - j}" for j in range(count)] + expression[at + 1:]
