"""A small LLaMA-style decoder with complex rotary position embeddings.

Rotary embeddings turn each pair of query/key features by an angle that grows with the
token's position. The pairs are read as complex numbers and multiplied by unit complex
numbers computed once in ``__init__`` (``torch.polar``) and held as a non-persistent
buffer, so they are not weights: the MindSpore side computes its own. Queries are turned
with ``view_as_complex``/``view_as_real`` as LLaMA does; keys with the same turn spelled
through ``torch.complex``, ``.real``/``.imag`` and ``torch.stack``, so both spellings are
checked against each other as well as against torch.

Each block: RMSNorm, causal attention (``F.scaled_dot_product_attention`` with
``is_causal=True``), RMSNorm, SwiGLU feed-forward; residual connections around both.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def rotation_table(head_dim, max_len, base=10000.0):
    """e^(i * position * frequency): (max_len, head_dim // 2) unit complex numbers."""
    freqs = 1.0 / (base ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    positions = torch.arange(max_len, device=freqs.device)
    angles = torch.outer(positions, freqs).float()
    return torch.polar(torch.ones_like(angles), angles)


def rotate(x, freqs_cis):
    """x: (batch, time, heads, head_dim); freqs_cis: (time, head_dim // 2)."""
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, pairs.shape[1], 1, pairs.shape[-1])
    return torch.view_as_real(pairs * freqs_cis).flatten(3).type_as(x)


def rotate_by_parts(x, freqs_cis):
    """The same turn, the complex numbers built from their parts and taken apart again."""
    pairs = x.float().reshape(*x.shape[:-1], -1, 2)
    turned = torch.complex(pairs[..., 0], pairs[..., 1]) * freqs_cis[None, :, None, :]
    return torch.stack((turned.real, turned.imag), -1).flatten(3).type_as(x)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Attention(nn.Module):
    def __init__(self, dim, heads, max_len):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.register_buffer("freqs_cis", rotation_table(self.head_dim, max_len), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.heads, self.head_dim)
        v = self.wv(x).view(b, t, self.heads, self.head_dim)
        freqs_cis = self.freqs_cis[:t]
        q = rotate(q, freqs_cis).transpose(1, 2)
        k = rotate_by_parts(k, freqs_cis).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v.transpose(1, 2), is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden, max_len):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, heads, max_len)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = SwiGLU(dim, hidden)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class RotaryLlama(nn.Module):
    def __init__(self, vocab=50, dim=32, heads=4, hidden=64, layers=2, max_len=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([Block(dim, heads, hidden, max_len) for _ in range(layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))
