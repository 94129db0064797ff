"""Seed 000's last example: a branch on a tensor condition whose arms differ in shape.

torch returns the selected values (a dynamic shape) or zeros. The converted code keeps
the selection (MS301 leaves a plain boolean-indexed read as it is: a mask multiply would
give x's shape, not torch's), and both modes run it.
"""
import torch


def select_or_zero(x):
    cond = (x > 0.5).any()
    if cond:
        y = x[x > 0.5]
    else:
        y = torch.zeros_like(x)
    return y
