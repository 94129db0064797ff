"""MyCell from the MindSpore migration guide ("Network Construction", unit test).

A cell that wraps another network and applies a ReLU to its output; the wrapped
network is a 4x4 convolution without bias.
"""
import torch.nn as torch_nn


class MyCell_pt(torch_nn.Module):
    def __init__(self, forward_net):
        super(MyCell_pt, self).__init__()
        self.net = forward_net
        self.relu = torch_nn.ReLU()

    def forward(self, x):
        y = self.net(x)
        return self.relu(y)


def build_mycell():
    inner_net_pt = torch_nn.Conv2d(120, 240, kernel_size=4, bias=False)
    return MyCell_pt(inner_net_pt)
