# Seed 002 "Basic Logic" (prose only; the page shows no code): network definition
# (Net() inheriting nn.Module, a loss function, an optimizer), forward computation
# (logit, then loss from logit and target), backward computation (loss.backward())
# and gradient update (optim.step()).
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

net = Net()
loss_fn = nn.CrossEntropyLoss()
optim = torch.optim.SGD(net.parameters(), lr=0.1)

def train_step(data, target):
    logit = net(data)
    loss = loss_fn(logit, target)
    optim.zero_grad()
    loss.backward()
    optim.step()
    return loss
