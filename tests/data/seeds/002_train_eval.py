# Seed 002 "Training and Evaluation Mode Switching" (prose only; the page shows no
# code): train(mode=True) and eval() on a model with Dropout and BN layers.
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)
        self.dropout = nn.Dropout(p=0.5)

    def forward(self, x):
        return self.dropout(self.bn(self.fc(x)))

model = Net()
model.train(mode=True)
model.eval()
