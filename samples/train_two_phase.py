"""Fine-tune a small classifier with one loop for both phases, train and val.

The shape of PyTorch's transfer-learning tutorial: loaders keyed by phase,
``model.train()``/``model.eval()`` per phase, the forward under
``torch.set_grad_enabled(phase == "train")``, ``backward()`` and ``step()`` under
``if phase == "train":``, a running loss and count of correct predictions per phase, and the
weights of the best validation epoch kept with ``copy.deepcopy(model.state_dict())`` and
loaded back at the end. The data are synthetic (numpy), so every run sees the same batches.
"""
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 8
STEPS = 20
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SmallClassifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((4, 4)),
        )
        self.fc = nn.Linear(8 * 4 * 4, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(x.view(x.size(0), -1))


def synthetic_images(count, seed):
    """Images and labels from a fixed random projection (so they can be learnt)."""
    images = np.random.default_rng(seed).standard_normal((count, 3, 12, 12)).astype(np.float32)
    projection = np.random.default_rng(99).standard_normal((3 * 12 * 12, 4)).astype(np.float32)
    labels = (images.reshape(count, -1) @ projection).argmax(axis=1).astype(np.int64)
    return images, labels


def make_loaders():
    loaders = {}
    for phase, count, seed in (("train", 64, 0), ("val", 24, 1)):
        images, labels = synthetic_images(count, seed)
        dataset = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
        loaders[phase] = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=False)
    return loaders


def build_model():
    return SmallClassifier()


def train_model(model, dataloaders, criterion, optimizer, scheduler, steps):
    """Epochs of a train phase and a val phase until ``steps`` optimizer steps; returns the
    loss of every step and the best validation accuracy (its weights are loaded back)."""
    best_weights = copy.deepcopy(model.state_dict())
    best_accuracy = 0.0
    losses = []
    while len(losses) < steps:
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            seen = 0
            for inputs, labels in dataloaders[phase]:
                if phase == "train" and len(losses) == steps:
                    break
                inputs = inputs.to(device)
                labels = labels.to(device)
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                        losses.append(loss.item())
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels).item()
                seen += inputs.size(0)
            if phase == "train":
                scheduler.step()
            accuracy = running_corrects / max(seen, 1)
            if phase == "val" and accuracy > best_accuracy:
                best_accuracy = accuracy
                best_weights = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_weights)
    return losses, best_accuracy


def train(model, steps=STEPS):
    """Train for ``steps`` optimizer steps; returns the loss of every step."""
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses, _ = train_model(model, make_loaders(), criterion, optimizer, scheduler, steps)
    return losses


def main():
    torch.manual_seed(0)
    model = build_model().to(device)
    losses = train(model)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    torch.save(model.state_dict(), "two_phase.pt")


if __name__ == "__main__":
    main()
