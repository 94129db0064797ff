"""Fine-tune a new classification head on top of a frozen convolutional backbone.

The backbone stands for a pretrained feature extractor: its parameters are frozen with
``requires_grad_(False)`` and only the head's parameters go to Adam, so the backbone's
weights come out of training unchanged. The images come from numpy, so every run sees
the same batches.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 5
BATCH_SIZE = 8
STEPS = 20


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1)
        self.out_features = 16

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return x.mean(dim=(2, 3))


class Classifier(nn.Module):
    def __init__(self, backbone, num_classes=NUM_CLASSES):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(
            nn.Linear(backbone.out_features, 32),
            nn.Tanh(),
            nn.Linear(32, num_classes),
        )

    def forward(self, x):
        return self.head(self.backbone(x))


def synthetic_images(count, seed):
    """Images and labels that depend on the images' mean colour."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((count, 3, 16, 16)).astype(np.float32)
    colour = images.mean(axis=(2, 3))
    labels = (colour @ np.array([3.0, -2.0, 1.0]) * 20).astype(np.int64) % NUM_CLASSES
    return images, labels


def build_model():
    return Classifier(Backbone())


def freeze(module):
    module.requires_grad_(False)


def train(model, steps=STEPS):
    """Train the head for ``steps`` optimizer steps; returns the loss of every step."""
    images, labels = synthetic_images(steps * BATCH_SIZE, seed=0)
    loader = DataLoader(TensorDataset(torch.from_numpy(images), torch.from_numpy(labels)),
                        batch_size=BATCH_SIZE, shuffle=False)
    freeze(model.backbone)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trainable, lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    model.train()
    losses = []
    for step, (x, y) in enumerate(loader):
        if step == steps:
            break
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    model = build_model()
    losses = train(model)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; {trainable} trainable parameters")
    torch.save(model.head.state_dict(), "head.pt")


if __name__ == "__main__":
    main()
