"""Convolutions that pad their input by reflection, replication or wrapping around.

Image-to-image networks (CycleGAN's ResNet generator, style transfer) pad with
``padding_mode="reflect"``; periodic signals use ``"circular"``. MindSpore's Conv has no
such mode: the converted layer pads as torch does, then convolves without padding,
keeping ``weight`` and ``bias`` under torch's names.
"""
import torch
import torch.nn as nn


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, padding_mode="reflect", bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, padding_mode="reflect")

    def forward(self, x):
        y = torch.relu(self.norm1(self.conv1(x)))
        return x + self.conv2(y)


class ReflectPadConvNet(nn.Module):
    def __init__(self, channels=6):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 5, padding=2, padding_mode="reflect")
        self.down = nn.Conv2d(channels, channels, 3, stride=2, padding=1, padding_mode="replicate")
        self.blocks = nn.Sequential(ResidualBlock(channels), ResidualBlock(channels))
        self.ring = nn.Conv1d(channels, channels, 3, padding="same", padding_mode="circular")
        self.out = nn.Conv2d(channels, 3, (3, 1), padding=(1, 0), padding_mode="reflect")

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = self.blocks(torch.relu(self.down(h)))
        b, c, height, width = h.shape
        rows = self.ring(h.permute(0, 2, 1, 3).reshape(b * height, c, width))
        h = h + rows.reshape(b, height, c, width).permute(0, 2, 1, 3)
        return torch.tanh(self.out(h))
