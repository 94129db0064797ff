# Seed 002 "Parameter Initializations APIs Comparison": torch.nn.init on a tensor.
import torch

x = torch.empty(2, 2)
torch.nn.init.uniform_(x)
