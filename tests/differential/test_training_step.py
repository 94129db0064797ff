"""MS211 (training step), differential: each case is a torch training function; the tool
converts it (``convert_code``), and both run the same steps from the same initial weights on
the same batches. The loss after every step must match within 1e-4 relative, the final
weights within 1e-5.

Each case's source defines ``build()`` (a model and its optimizer) and ``train(model,
optimizer, batches)`` returning whatever the training loop gives back (losses, counts).
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

import numpy as np
import pytest

from transpile import convert_code

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
BUILD_SGD = """
def build():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer
"""
BUILD_ADAMW = """
def build():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    return model, optimizer
"""


@dataclass
class TrainingCase:
    name: str
    train: str
    build: str = BUILD_SGD
    steps: int = 8

    def source(self) -> str:
        return HEADER + textwrap.dedent(self.build) + "\n\n" + textwrap.dedent(self.train)


CASES = [
    TrainingCase("zero-forward-backward-step", """
        def train(model, optimizer, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
        """),
    TrainingCase("zero-grad-between-loss-and-backward", """
        def train(model, optimizer, batches):
            losses = []
            for x, y in batches:
                out = model(x)
                loss = F.mse_loss(out, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
        """),
    TrainingCase("zero-grad-after-step-outputs-read-later", """
        def train(model, optimizer, batches):
            losses, total = [], 0.0
            for x, y in batches:
                x = x * 1.0
                out = model(x)
                loss = ((out - y) ** 2).mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                total += out.sum().item()
                losses.append(loss.item())
            return losses, total
        """),
    TrainingCase("accumulation-with-clip-norm", """
        def train(model, optimizer, batches, accumulation=2):
            losses = []
            optimizer.zero_grad()
            for i, (x, y) in enumerate(batches):
                loss = F.mse_loss(model(x), y) / accumulation
                loss.backward()
                losses.append(loss.item())
                if (i + 1) % accumulation == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
                    optimizer.step()
                    optimizer.zero_grad()
            return losses
        """),
    TrainingCase("clip-norm-total-returned", """
        def train(model, optimizer, batches):
            losses, norms = [], []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.3)
                optimizer.step()
                losses.append(loss.item())
                norms.append(float(norm))
            return losses, norms
        """, build=BUILD_ADAMW),
    TrainingCase("clip-norm-inf-and-value", """
        from torch.nn.utils import clip_grad_value_


        def train(model, optimizer, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.2, norm_type=float("inf"))
                clip_grad_value_(model.parameters(), 0.05)
                optimizer.step()
                losses.append(loss.item())
            return losses
        """),
    TrainingCase("step-in-a-trainer-method", """
        class Trainer:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def step(self, x, y):
                self.optimizer.zero_grad()
                loss = F.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                return loss.item()


        def train(model, optimizer, batches):
            trainer = Trainer(model, optimizer)
            return [trainer.step(x, y) for x, y in batches]
        """, build=BUILD_ADAMW),
    TrainingCase("loss-expression-backward", """
        def train(model, optimizer, batches):
            outs = []
            for x, y in batches:
                optimizer.zero_grad()
                out = model(x)
                F.mse_loss(out, y).backward()
                optimizer.step()
                outs.append(out.sum().item())
            return outs
        """),
    TrainingCase("gradient-norms-read-from-parameters", """
        def train(model, optimizer, batches):
            losses, norms = [], []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                total = 0.0
                for name, p in model.named_parameters():
                    if p.grad is not None:
                        total += p.grad.norm().item() ** 2
                norms.append(total ** 0.5)
                losses.append(loss.item())
            return losses, norms
        """),
    TrainingCase("gradients-clamped-in-place-on-parameters", """
        def train(model, optimizer, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y) * 10
                loss.backward()
                for p in model.parameters():
                    p.grad.data.clamp_(-0.5, 0.5)
                optimizer.step()
                losses.append(loss.item())
            return losses
        """),
    TrainingCase("phase-guard-under-set-grad-enabled", """
        def train(model, optimizer, batches):
            # the transfer-learning tutorial's loop: one loop for both phases
            losses, correct = [], 0
            for phase in ["train", "val"]:
                if phase == "train":
                    model.train()
                else:
                    model.eval()
                for x, y in batches:
                    optimizer.zero_grad()
                    with torch.set_grad_enabled(phase == "train"):
                        out = model(x)
                        _, preds = torch.max(out, 1)
                        loss = F.mse_loss(out, y)
                        if phase == "train":
                            loss.backward()
                            optimizer.step()
                    losses.append(loss.item())
                    correct += int((preds == y.argmax(1)).sum())
            return losses, correct
        """),
    TrainingCase("flag-guard-with-else", """
        def run_epoch(model, optimizer, batches, training):
            total, seen = 0.0, 0
            for x, y in batches:
                out = model(x)
                loss = F.mse_loss(out, y)
                if training:
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                else:
                    seen += 1
                total += loss.item()
            return total, seen


        def train(model, optimizer, batches):
            return [run_epoch(model, optimizer, batches, True), run_epoch(model, optimizer, batches, False)]
        """, build=BUILD_ADAMW),
    TrainingCase("accumulation-under-a-guard", """
        def train(model, optimizer, batches, accumulation=2):
            losses = []
            optimizer.zero_grad()
            for i, (x, y) in enumerate(batches):
                loss = F.mse_loss(model(x), y) / accumulation
                if model.training:
                    loss.backward()
                    if (i + 1) % accumulation == 0:
                        optimizer.step()
                        optimizer.zero_grad()
                losses.append(loss.item())
            return losses
        """),
]


GAN = TrainingCase("two-optimizers-gan", """
    def build():
        generator = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3))
        discriminator = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
        models = nn.ModuleList([generator, discriminator])
        return models, (torch.optim.Adam(generator.parameters(), lr=0.01),
                        torch.optim.SGD(discriminator.parameters(), lr=0.05))


    def train(models, optimizers, batches):
        generator, discriminator = models[0], models[1]
        opt_g, opt_d = optimizers
        losses = []
        for noise, real in batches:
            fake = generator(noise[:, :2])
            opt_d.zero_grad()
            loss_d = ((discriminator(real) - 1) ** 2).mean() + (discriminator(fake.detach()) ** 2).mean()
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = ((discriminator(generator(noise[:, :2])) - 1) ** 2).mean()
            loss_g.backward()
            opt_g.step()
            losses.append((loss_d.item(), loss_g.item()))
        return losses
    """, build="")
CASES.append(GAN)
# the DCGAN example's step: two backwards into D's optimizer before its step, each model's
# own zero_grad(), a label tensor refilled in place
# the generator's output made before D's step and used by G's: its gradient path is kept
CASES.append(TrainingCase("gan-fake-made-first", """
    def build():
        generator = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3))
        discriminator = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
        return nn.ModuleList([generator, discriminator]), (torch.optim.SGD(generator.parameters(), lr=0.05),
                                                           torch.optim.SGD(discriminator.parameters(), lr=0.05))


    def train(models, optimizers, batches):
        netG, netD = models[0], models[1]
        optimizerG, optimizerD = optimizers
        losses = []
        for noise, real in batches:
            fake = netG(noise[:, :2])
            optimizerD.zero_grad()
            loss_d = ((netD(real) - 1) ** 2).mean() + (netD(fake.detach()) ** 2).mean()
            loss_d.backward()
            optimizerD.step()
            optimizerG.zero_grad()
            loss_g = ((netD(fake) - 1) ** 2).mean()
            loss_g.backward()
            optimizerG.step()
            losses.append((loss_d.item(), loss_g.item()))
        return losses
    """, build=""))
CASES.append(TrainingCase("dcgan-model-zero-grad-two-backwards", """
    def build():
        generator = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh())
        discriminator = nn.Sequential(nn.Linear(3, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1), nn.Sigmoid())
        models = nn.ModuleList([generator, discriminator])
        return models, (torch.optim.Adam(generator.parameters(), lr=0.01, betas=(0.5, 0.999)),
                        torch.optim.Adam(discriminator.parameters(), lr=0.01, betas=(0.5, 0.999)))


    def train(models, optimizers, batches):
        netG, netD = models[0], models[1]
        optimizerG, optimizerD = optimizers
        criterion = nn.BCELoss()
        history = []
        for noise, real in batches:
            # (1) update D
            netD.zero_grad()
            label = torch.full((real.size(0),), 1.0)
            output = netD(real).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            fake = netG(noise[:, :2])
            label.fill_(0.0)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            optimizerD.step()
            # (2) update G
            netG.zero_grad()
            label.fill_(1.0)
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            optimizerG.step()
            history.append((errD_real.item() + errD_fake.item(), errG.item(), D_x))
        return history
    """, build=""))


def _batches(steps: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((6, 3)).astype(np.float32))
            for _ in range(steps)]


def _copy_weights(torch_model, ms_model) -> None:
    """The torch model's initial weights into the MindSpore one (same parameter order)."""
    mine = ms_model.trainable_params()
    theirs = list(torch_model.parameters())
    assert [tuple(p.shape) for p in mine] == [tuple(p.shape) for p in theirs]
    for p, t in zip(mine, theirs):
        p.set_data(ms.Tensor(t.detach().numpy().copy()))


def _exec(source: str, name: str) -> dict:
    namespace: dict = {"__name__": name}
    exec(compile(source, name, "exec"), namespace)
    return namespace


def _assert_close(expected, actual, where: str) -> None:
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), where
        for i, (e, a) in enumerate(zip(expected, actual)):
            _assert_close(e, a, f"{where}[{i}]")
        return
    e, a = float(expected), float(actual)
    assert abs(e - a) <= 1e-4 * max(abs(e), 1e-3), f"{where}: torch {e!r}, converted {a!r}"


def _check(case: TrainingCase, converted_code: str) -> None:
    """Run ``case`` in torch and ``converted_code`` in MindSpore from the same weights on the
    same batches: the returned values and the final weights must match."""
    source = case.source()
    batches = _batches(case.steps)

    torch.manual_seed(0)
    ours = _exec(source, "torch_case")
    t_model, t_opt = ours["build"]()
    converted = _exec(converted_code, "converted_case")
    m_model, m_opt = converted["build"]()
    _copy_weights(t_model, m_model)

    expected = ours["train"](t_model, t_opt, [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches])
    actual = converted["train"](m_model, m_opt, [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches])
    _assert_close(expected, actual, "returned")
    for p, t in zip(m_model.trainable_params(), t_model.parameters()):
        np.testing.assert_allclose(p.asnumpy(), t.detach().numpy(), atol=1e-5, rtol=1e-4, err_msg=p.name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_training_step_matches_torch(case):
    result = convert_code(case.source(), filename=f"{case.name}.py")
    assert not result.errors, [d.format() for d in result.errors]
    assert "# transpile:" not in result.code, result.code
    assert ".backward(" not in result.code and ".step()" not in result.code, result.code
    assert "torch" not in {n.id for n in ast.walk(ast.parse(result.code)) if isinstance(n, ast.Name)}, result.code
    _check(case, result.code)


# Wrong conversions a training-step rewrite could make, applied to the tool's real output of
# the first case: the gradients computed but never applied, the momentum dropped (only the
# steps after the first differ), the update applied twice.
WRONG = {
    "update-not-applied": ("        optimizer(grads)\n", ""),
    "momentum-dropped": (", momentum=0.9", ""),
    "update-applied-twice": ("        optimizer(grads)\n", "        optimizer(grads)\n        optimizer(grads)\n"),
}


@pytest.mark.parametrize("wrong", WRONG, ids=list(WRONG))
def test_a_wrong_conversion_is_caught(wrong):
    """The real check (``_check``) fails on a converted loop that differs from torch's."""
    case = CASES[0]
    code = convert_code(case.source(), filename=f"{case.name}.py").code
    old, new = WRONG[wrong]
    assert code.count(old) == 1, code  # the tool's output still has the spot to break
    with pytest.raises(AssertionError):
        _check(case, code.replace(old, new))
