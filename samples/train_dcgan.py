"""Train a small DCGAN on synthetic 16x16 images.

The loop of PyTorch's DCGAN example: a generator of transposed convolutions with BatchNorm,
a discriminator of strided convolutions with LeakyReLU, ``BCELoss``, two Adam optimizers
with ``betas=(0.5, 0.999)``, and per batch the discriminator's two backwards (a real batch,
then a fake one through ``fake.detach()``) before its step, each model's own
``zero_grad()``, the label tensor refilled in place, then the generator's step through the
same fake batch. The images and the noise come from numpy, so every run sees the same data.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

NZ = 8
NGF = 8
NDF = 8
BATCH_SIZE = 8
STEPS = 20
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # NZ x 1 x 1 -> (NGF*2) x 4 x 4
            nn.ConvTranspose2d(NZ, NGF * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            # -> NGF x 8 x 8
            nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NGF),
            nn.ReLU(True),
            # -> 3 x 16 x 16
            nn.ConvTranspose2d(NGF, 3, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # 3 x 16 x 16 -> NDF x 8 x 8
            nn.Conv2d(3, NDF, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (NDF*2) x 4 x 4
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # -> 1 x 1 x 1
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


class DCGAN(nn.Module):
    """Both networks in one Module, so that one state dict holds them."""

    def __init__(self):
        super().__init__()
        self.netG = Generator()
        self.netD = Discriminator()


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def build_model():
    model = DCGAN()
    model.apply(weights_init)
    return model


def synthetic_batches(steps, seed):
    """Real images (smooth blobs in [-1, 1]) and the generator's noise for every step."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
    batches = []
    for _ in range(steps):
        centres = rng.uniform(-0.5, 0.5, (BATCH_SIZE, 3, 2)).astype(np.float32)
        images = np.tanh(2.0 - 8.0 * ((grid[None, None, :, None] - centres[..., :1, None]) ** 2
                                      + (grid[None, None, None, :] - centres[..., 1:, None]) ** 2))
        noise = rng.standard_normal((BATCH_SIZE, NZ, 1, 1)).astype(np.float32)
        batches.append((torch.from_numpy(images.astype(np.float32)), torch.from_numpy(noise)))
    return batches


def train(model, steps=STEPS):
    """``steps`` rounds of the discriminator's step and the generator's; returns the
    discriminator's loss plus the generator's, per round."""
    netG, netD = model.netG, model.netD
    criterion = nn.BCELoss()
    real_label = 1.0
    fake_label = 0.0
    optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    losses = []
    for real_cpu, noise in synthetic_batches(steps, seed=0):
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = real_cpu.to(device)
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        fake = netG(noise.to(device))
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        # (2) Update G network: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        losses.append(errD.item() + errG.item())
    return losses


def main():
    torch.manual_seed(0)
    model = build_model().to(device)
    losses = train(model)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    torch.save(model.netG.state_dict(), "netG.pt")


if __name__ == "__main__":
    main()
