# Seed 002 "Parameters Management" (prose only; the page shows no code): a Parameter
# that is trained and a Buffer that is not ("any data object that doesn't perform
# Parameter update in PyTorch can be declared as a Tensor in MindSpore").
import torch
import torch.nn as nn

class Scale(nn.Module):
    def __init__(self):
        super(Scale, self).__init__()
        self.weight = nn.Parameter(torch.ones(3))
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        return x * self.weight * self.scale
