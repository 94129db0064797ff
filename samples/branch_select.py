"""Seed 000's last example: a branch on a tensor condition whose arms differ in shape.

torch returns the selected values (a dynamic shape) or zeros. The converted code
multiplies by the mask instead (MS301), so both arms have x's shape and the branch
compiles in GRAPH_MODE.
"""
import torch


def select_or_zero(x):
    cond = (x > 0.5).any()
    if cond:
        y = x[x > 0.5]
    else:
        y = torch.zeros_like(x)
    return y
