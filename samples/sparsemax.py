"""Sparsemax (Martins & Astudillo, 2016) as a custom autograd Function.

The forward sorts the input, finds the support and the threshold tau, and saves
its OUTPUT for backward; the backward is the closed form on the support:
grad_in = mask * (grad_out - mean of grad_out over the support). A Sparsemax
module applies it along one dimension (a non-tensor argument of apply).
"""
import torch
import torch.nn as nn
from torch.autograd import Function


class SparsemaxFunction(Function):
    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input = input - max_val  # same result, smaller numbers
        zs, _ = torch.sort(input, dim=dim, descending=True)
        d = input.size(dim)
        shape = [1] * input.dim()
        shape[dim] = d
        rhos = torch.arange(1, d + 1, dtype=input.dtype).view(shape)
        support = (1 + rhos * zs) > torch.cumsum(zs, dim=dim)
        support_size = support.sum(dim=dim, keepdim=True)
        tau = (torch.cumsum(zs, dim=dim).gather(dim, support_size - 1) - 1) / support_size.to(input.dtype)
        output = torch.clamp(input - tau, min=0)
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        dim = ctx.dim
        nonzero = (output > 0).to(grad_output.dtype)
        grad_sum = (grad_output * nonzero).sum(dim=dim, keepdim=True)
        v_hat = grad_sum / nonzero.sum(dim=dim, keepdim=True)
        grad_input = nonzero * (grad_output - v_hat)
        return grad_input, None


class Sparsemax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return SparsemaxFunction.apply(x, self.dim)


class SparsemaxScores(nn.Module):
    """Attention-like scores: a linear layer, then sparsemax over the last dimension,
    weighted so that the gradient of the sum of outputs is not trivially zero."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 6)
        self.sparsemax = Sparsemax(dim=-1)

    def forward(self, x):
        p = self.sparsemax(self.proj(x))
        return p * torch.arange(1, 7, dtype=x.dtype)
