"""MS215 (a param group's lr), differential: each case is a torch training function that
reads and writes ``optimizer.param_groups[...]["lr"]`` (a manual warm-up, a decay in place,
a scheduler built before or after the writes) and logs the lr as formatted text. The tool
converts it (``convert_code``); both run the same steps from the same initial weights on
the same batches. The logs must be equal, the losses within 1e-4 relative, the final
weights within 1e-5.

Each case's source defines ``build()`` (a model and its optimizer) and ``train(model,
optimizer, batches)`` returning ``(losses, log)``.
"""
from __future__ import annotations

import numpy as np
import pytest

from transpile import convert_code

from .test_training_step import BUILD_SGD, TrainingCase, _assert_close, _batches, _copy_weights, _exec

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

BUILD_ADAMW_GROUPS = """
def build():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = torch.optim.AdamW([{"params": model[0].parameters()},
                                   {"params": model[2].parameters(), "lr": 0.0047}], lr=0.02, weight_decay=0.1)
    return model, optimizer
"""


def LrCase(name: str, train: str, build: str = BUILD_SGD) -> TrainingCase:
    """A case of nine steps: the warm-up, then a few scheduler periods."""
    return TrainingCase(name, train, build, steps=9)


CASES = [
    LrCase("warm-up-writes-then-step-lr-built-after", """
        def train(model, optimizer, batches, warmup=3):
            losses, log = [], []
            scheduler = None
            for step, (x, y) in enumerate(batches):
                if step < warmup:
                    for group in optimizer.param_groups:
                        group["lr"] = 0.1 * (step + 1) / warmup
                elif scheduler is None:
                    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                if scheduler is not None:
                    scheduler.step()
                log.append(f"step {step} lr {optimizer.param_groups[0]['lr']:.6f}")
                losses.append(loss.item())
            return losses, log
        """),
    LrCase("groups-decayed-in-place-enumerate-and-comprehension", """
        def train(model, optimizer, batches):
            losses, log = [], []
            for x, y in batches:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                for i, g in enumerate(optimizer.param_groups):
                    g["lr"] *= 0.8 if i == 0 else 0.9
                log.append(" ".join(f"{g['lr']:.6f}" for g in optimizer.param_groups))
                log.append(f"{sum(g['lr'] for g in optimizer.param_groups) * 100:.4f}")
                losses.append(loss.item())
            return losses, log
        """, build=BUILD_ADAMW_GROUPS),
    LrCase("step-lr-built-before-a-write-through-a-bound-group", """
        def train(model, optimizer, batches):
            losses, log = [], []
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
            head = optimizer.param_groups[0]
            for step, (x, y) in enumerate(batches):
                if step == 3:
                    optimizer.param_groups[0]["lr"] = 0.08
                if step == 6:
                    head["lr"] = head["lr"] + 0.01
                optimizer.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                scheduler.step()
                lr = head["lr"]
                log.append(f"{lr:.6f} {lr * 10:.5f} {head['initial_lr']:.4f} {float(head['lr']):.6f}")
                losses.append(loss.item())
            return losses, log
        """),
]


def _run(case: TrainingCase):
    """(torch's result, the converted code's result, torch's and MindSpore's models)."""
    source = case.source()
    result = convert_code(source, filename=f"{case.name}.py")
    assert not result.errors, [d.format() for d in result.errors]
    assert "# transpile:" not in result.code, result.code
    batches = _batches(case.steps)
    torch.manual_seed(0)
    ours = _exec(source, "torch_case")
    t_model, t_opt = ours["build"]()
    converted = _exec(result.code, "converted_case")
    m_model, m_opt = converted["build"]()
    _copy_weights(t_model, m_model)
    expected = ours["train"](
        t_model, t_opt, [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches])
    actual = converted["train"](m_model, m_opt, [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches])
    return expected, actual, t_model, m_model


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_param_group_lr_matches_torch(case):
    (t_losses, t_log), (m_losses, m_log), t_model, m_model = _run(case)
    assert len(set(t_log)) > 3, t_log  # the lr changes along the run: the log can tell conversions apart
    assert m_log == t_log
    _assert_close(t_losses, m_losses, "losses")
    for p, t in zip(m_model.trainable_params(), t_model.parameters()):
        np.testing.assert_allclose(p.asnumpy(), t.detach().numpy(), atol=1e-5, rtol=1e-4, err_msg=p.name)


def test_every_case_reads_and_writes_through_the_pass():
    """The cases exercise the pass: each converted train() calls the emitted writer and reads with float()."""
    for case in CASES:
        code = convert_code(case.source(), filename=f"{case.name}.py").code
        assert "_torch_set_group_lr(" in code and "float(" in code, code
