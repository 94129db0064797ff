"""Train a tiny decoder-only transformer language model on synthetic token streams.

Causal self-attention is written out (query/key/value projections, a lower-triangular
mask, softmax), with pre-LayerNorm blocks and an MLP. The optimizer is AdamW with two
parameter groups (no weight decay for biases, LayerNorm weights and other 1-d
parameters), a linear warm-up through ``LambdaLR`` and gradient-norm clipping at 1.0.
The token streams come from numpy, so every run sees the same batches.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB_SIZE = 32
CONTEXT = 16
BATCH_SIZE = 8
STEPS = 20
WARMUP_STEPS = 5
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        # no biases: softmax ignores a key bias, so its gradient is rounding noise that AdamW would amplify
        self.query = nn.Linear(width, width, bias=False)
        self.key = nn.Linear(width, width, bias=False)
        self.value = nn.Linear(width, width, bias=False)
        self.proj = nn.Linear(width, width)
        mask = torch.tril(torch.ones(context, context)).view(1, 1, context, context)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        head = c // self.heads
        q = self.query(x).view(b, t, self.heads, head).transpose(1, 2)
        k = self.key(x).view(b, t, self.heads, head).transpose(1, 2)
        v = self.value(x).view(b, t, self.heads, head).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head)
        scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, context)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab_size=VOCAB_SIZE, width=32, heads=4, layers=2, context=CONTEXT):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.position_embedding = nn.Embedding(context, width)
        self.blocks = nn.ModuleList([Block(width, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab_size)

    def forward(self, idx):
        t = idx.shape[1]
        positions = torch.arange(t, device=idx.device)
        x = self.token_embedding(idx) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def synthetic_tokens(count, seed):
    """Arithmetic token streams (start + i * stride mod vocab): learnable, and fixed by the seed."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, VOCAB_SIZE, size=(count, 1))
    strides = rng.integers(1, 4, size=(count, 1))
    return ((starts + strides * np.arange(CONTEXT + 1)) % VOCAB_SIZE).astype(np.int64)


def get_batch(tokens, step):
    """Inputs and next-token targets of the step's batch."""
    start = (step * BATCH_SIZE) % len(tokens)
    chunk = torch.from_numpy(tokens[start:start + BATCH_SIZE])
    return chunk[:, :-1].to(device), chunk[:, 1:].to(device)


def build_model():
    return TinyLM()


def configure_optimizer(model, lr=3e-3, weight_decay=0.1):
    """AdamW with weight decay on matrices only (embeddings and Linear weights)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def train(model, steps=STEPS):
    """Train for ``steps`` optimizer steps; returns the loss of every step."""
    tokens = synthetic_tokens(64, seed=0)
    optimizer = configure_optimizer(model)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / WARMUP_STEPS))
    model.train()
    losses = []
    for step in range(steps):
        inputs, targets = get_batch(tokens, step)
        logits = model(inputs)
        loss = F.cross_entropy(logits.view(-1, VOCAB_SIZE), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def generate(model, idx, new_tokens):
    """Greedy decoding: append the most likely next token ``new_tokens`` times."""
    model.eval()
    for _ in range(new_tokens):
        logits = model(idx[:, -CONTEXT:])
        next_token = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_token], dim=1)
    return idx


def main():
    torch.manual_seed(0)
    model = build_model().to(device)
    losses = train(model)
    prompt = torch.tensor([[1, 3, 5]], device=device)
    sample = generate(model, prompt, 8)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; 1 3 5 continues as {sample[0].tolist()}")
    torch.save(model.state_dict(), "tiny_lm.pt")


if __name__ == "__main__":
    main()
