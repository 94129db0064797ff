"""A multi-layer perceptron whose hidden layers are kept in a plain Python list.

A common pattern in research code: the layers are built in a loop, appended to a
list and applied in a loop in ``forward``. (PyTorch does not register layers held
in a plain list, so they are missing from ``parameters()`` and ``state_dict()``;
the converter turns the list into ``nn.CellList``.)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, in_features=32, hidden=(64, 64, 32), num_classes=10):
        super().__init__()
        self.layers = []
        width = in_features
        for size in hidden:
            self.layers.append(nn.Linear(width, size))
            width = size
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x)
