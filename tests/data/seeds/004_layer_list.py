# Seed 004 "Considerations for MindSpore Network Authoring", item 8: a list of layers
# held in a plain Python list. The page shows the MindSpore form
# (self.layer = [nn.Conv2d(1, 3), nn.BatchNorm(3), nn.ReLU()] -> nn.CellList); this
# is the same pattern as PyTorch code writes it (torch spells the layers
# nn.Conv2d(1, 3, kernel_size) and nn.BatchNorm2d(3)).
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        # Define the required layers for graph construction in init
        self.layer = [nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU()]

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x
