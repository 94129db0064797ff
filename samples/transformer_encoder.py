"""An encoder built from torch's own transformer layers.

``nn.TransformerEncoderLayer``/``nn.TransformerEncoder`` become MindSpore's layers of the
same names; their feed-forward layers are named ``dense1``/``dense2`` there (torch:
``linear1``/``linear2``), which the tables' weight renames cover. A pooling
``nn.MultiheadAttention`` reads the encoded sequence.
"""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, width=16, heads=4, layers=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=32, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(width))
        self.pool = nn.MultiheadAttention(width, heads, batch_first=True)
        self.query = nn.Parameter(torch.randn(1, 1, width))

    def forward(self, x):
        y = self.encoder(x)
        q = self.query.expand(x.shape[0], -1, -1)
        pooled, _ = self.pool(q, y, y)
        return pooled.squeeze(1)
