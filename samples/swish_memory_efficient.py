"""Memory-efficient Swish (EfficientNet-PyTorch's MemoryEfficientSwish).

The Function saves only its INPUT and recomputes the sigmoid in backward:
d/dx [x * sigmoid(x)] = s * (1 + x * (1 - s)). A straight-through rounding sits
beside it: round in forward, identity gradient in backward.
"""
import torch
from torch import nn


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class SwishBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.swish = MemoryEfficientSwish()
        self.fc2 = nn.Linear(12, 4)

    def forward(self, x):
        h = self.swish(self.fc1(x))
        h = h + RoundSTE.apply(h * 4) / 4
        return self.fc2(h)
