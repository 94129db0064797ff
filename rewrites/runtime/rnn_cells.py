"""Run-time helpers: one step of a recurrent cell from explicit weights
(tables/torch_rnn_cells.toml).

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

from mindspore import ops


# x @ w.T (+ b): the affine map every cell applies to its input and its state
def _torch_rnn_affine(x, w, b):
    out = ops.matmul(x, w.swapaxes(0, 1))
    return out if b is None else out + b


def _torch_lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: gates i, f, g, o; returns (h, c)."""
    h, c = hx
    gates = _torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(h, w_hh, b_hh)
    i, f, g, o = ops.chunk(gates, 4, 1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    return ops.sigmoid(o) * ops.tanh(c), c


def _torch_gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.gru_cell: r, z, n; the state's part of n is gated by r after its bias."""
    i_r, i_z, i_n = ops.chunk(_torch_rnn_affine(input, w_ih, b_ih), 3, 1)
    h_r, h_z, h_n = ops.chunk(_torch_rnn_affine(hx, w_hh, b_hh), 3, 1)
    r = ops.sigmoid(i_r + h_r)
    z = ops.sigmoid(i_z + h_z)
    n = ops.tanh(i_n + r * h_n)
    return (1 - z) * n + z * hx


def _torch_rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_tanh_cell."""
    return ops.tanh(_torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(hx, w_hh, b_hh))


def _torch_rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_relu_cell."""
    return ops.relu(_torch_rnn_affine(input, w_ih, b_ih) + _torch_rnn_affine(hx, w_hh, b_hh))
