"""Train a small MNIST-style CNN on synthetic 28x28 digits.

The usual image-classification loop: a ``DataLoader`` over a ``TensorDataset``, SGD with
momentum and a ``StepLR`` schedule, cross-entropy, ``model.train()`` for the steps and
``model.eval()`` under ``torch.no_grad()`` for the accuracy, then the weights are saved.
The images come from numpy, so every run sees the same batches.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

BATCH_SIZE = 16
STEPS = 20
LEARNING_RATE = 0.02
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class MnistCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(16 * 7 * 7, 64),
            nn.ReLU(),
            nn.Linear(64, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def synthetic_digits(count, seed):
    """Images in [0, 1) and labels from a fixed random projection (so they can be learnt)."""
    images = np.random.default_rng(seed).random((count, 1, 28, 28), dtype=np.float32)
    projection = np.random.default_rng(1234).standard_normal((28 * 28, 10)).astype(np.float32)
    labels = ((images.reshape(count, -1) - 0.5) @ projection).argmax(axis=1).astype(np.int64)
    return images, labels


def make_loader(count, seed):
    images, labels = synthetic_digits(count, seed)
    dataset = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    return DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=False)


def build_model():
    return MnistCNN()


def train(model, steps=STEPS):
    """Train for ``steps`` optimizer steps; returns the loss of every step."""
    loader = make_loader(160, seed=0)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=8, gamma=0.5)
    model.train()
    losses = []
    step = 0
    while step < steps:
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            outputs = model(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            step += 1
            if step == steps:
                break
    return losses


def evaluate(model, loader):
    """Share of correctly classified images."""
    model.eval()
    correct = 0
    total = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            predictions = model(images).argmax(dim=1)
            correct += (predictions == labels).sum().item()
            total += labels.shape[0]
    return correct / total


def main():
    torch.manual_seed(0)
    model = build_model().to(device)
    losses = train(model)
    accuracy = evaluate(model, make_loader(64, seed=1))
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {accuracy:.3f}")
    torch.save(model.state_dict(), "mnist_cnn.pt")


if __name__ == "__main__":
    main()
