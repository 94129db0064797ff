"""Weight-normed and spectral-normed layers, as audio and GAN models use them.

wav2vec2's positional convolution is a grouped Conv1d under
``nn.utils.parametrizations.weight_norm(..., dim=2)``; WaveNet/HiFi-GAN style stacks
use the older ``nn.utils.weight_norm``; a GAN discriminator's head uses
``spectral_norm``. The converted layers keep torch's tensor names (``weight_g``,
``weight_v``, ``parametrizations.weight.original0/1``, ``weight_orig``, ``weight_u``,
``weight_v``), so torch's weights map name for name.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, spectral_norm, weight_norm


class PositionalConv(nn.Module):
    def __init__(self, channels=8, kernel=4, groups=2):
        super().__init__()
        conv = nn.Conv1d(channels, channels, kernel, padding=kernel // 2, groups=groups)
        self.conv = parametrizations.weight_norm(conv, name="weight", dim=2)
        self.trim = 1 if kernel % 2 == 0 else 0

    def forward(self, x):
        y = self.conv(x)
        if self.trim:
            y = y[:, :, : -self.trim]
        return x + F.gelu(y)


class WeightNormConvNet(nn.Module):
    def __init__(self, channels=8, classes=3):
        super().__init__()
        self.inp = weight_norm(nn.Conv1d(4, channels, 3, padding=1))
        self.pos = PositionalConv(channels)
        self.blocks = nn.ModuleList(
            [weight_norm(nn.Conv1d(channels, channels, 3, padding=d, dilation=d)) for d in (1, 2)]
        )
        self.head = spectral_norm(nn.Linear(channels, classes))

    def forward(self, x):
        h = F.leaky_relu(self.inp(x), 0.1)
        h = self.pos(h)
        for block in self.blocks:
            h = h + F.leaky_relu(block(h), 0.1)
        return self.head(h.mean(dim=-1))
