"""A residual added in place by a helper whose result the caller drops.

torchvision's MViT does this (``_add_shortcut``): the helper changes its argument
with ``x[:, 1:] += ...`` and returns it, and ``forward`` calls it as a statement.
MindSpore's PYNATIVE mode changes the caller's tensor as torch does; GRAPH mode
would not, so the converter assigns the result back (MS207).
"""
import torch
import torch.nn as nn


def _add_shortcut(x: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
    # the first row is a class token: it keeps no residual
    x[:, 1:, :] += shortcut[:, 1:, :]
    return x


class TokenBlock(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(self.norm(x))
        _add_shortcut(y, x)
        return torch.relu(y)


class TokenNet(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.first = TokenBlock(dim)
        self.second = TokenBlock(dim)

    def forward(self, x):
        return self.second(self.first(x))
