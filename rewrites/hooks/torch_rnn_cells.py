"""Hooks of tables/torch_rnn_cells.toml: one step of a recurrent cell from explicit
weights, emitted beside the code through the indexing table's ``run_time_helper``."""
from __future__ import annotations

from .torch_indexing import HELPERS, NEEDS, run_time_helper  # noqa: F401  (the entries' hook)

# x @ w.T (+ b): the affine map every cell applies to its input and its state
HELPERS["rnn_affine"] = '''
def {name}(x, w, b):
    out = OPS.matmul(x, w.swapaxes(0, 1))
    return out if b is None else out + b
'''

HELPERS["lstm_cell"] = '''
def {name}(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: gates i, f, g, o; returns (h, c)."""
    h, c = hx
    gates = _torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(h, w_hh, b_hh)
    i, f, g, o = OPS.chunk(gates, 4, 1)
    c = OPS.sigmoid(f) * c + OPS.sigmoid(i) * OPS.tanh(g)
    return OPS.sigmoid(o) * OPS.tanh(c), c
'''

HELPERS["gru_cell"] = '''
def {name}(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.gru_cell: r, z, n; the state's part of n is gated by r after its bias."""
    i_r, i_z, i_n = OPS.chunk(_torch_rnn_affine(input, w_ih, b_ih), 3, 1)
    h_r, h_z, h_n = OPS.chunk(_torch_rnn_affine(hx, w_hh, b_hh), 3, 1)
    r = OPS.sigmoid(i_r + h_r)
    z = OPS.sigmoid(i_z + h_z)
    n = OPS.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx
'''

HELPERS["rnn_tanh_cell"] = '''
def {name}(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_tanh_cell."""
    return OPS.tanh(_torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(hx, w_hh, b_hh))
'''

HELPERS["rnn_relu_cell"] = '''
def {name}(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_relu_cell."""
    return OPS.relu(_torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(hx, w_hh, b_hh))
'''

for _cell in ("lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"):
    NEEDS[_cell] = ("rnn_affine",)
