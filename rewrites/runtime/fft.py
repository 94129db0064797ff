"""Run-time helpers: torch.fft, torch.istft and torch.signal.windows (tables/fft.toml) where
MindSpore has no function or computes in float32.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import math

import mindspore as ms
from mindspore import ops


# MindSpore has no istft: the inverse FFT of each frame, windowed, overlap-added (a scatter-add
# along time) and divided by the overlap-added squared window, as torch does
def _istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
           onesided=None, length=None, return_complex=False):
    """torch.istft: the signal (..., time) from its complex STFT (..., freq, frames)."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        window = ops.ones(win, ms.float64 if input.dtype == ms.complex128 else ms.float32)
    if win < n_fft:
        left = (n_fft - win) // 2
        window = ops.pad(window, (left, n_fft - win - left))
    if normalized:
        input = input * ms.Tensor(math.sqrt(n_fft), input.dtype)
    if onesided is None:
        onesided = input.shape[-2] != n_fft
    frames = ops.swapaxes(input, -1, -2)
    frames = ops.irfft(frames, n=n_fft, dim=-1) if onesided else ops.ifft(frames, n=n_fft, dim=-1)
    if not return_complex and frames.dtype in (ms.complex64, ms.complex128):
        frames = ops.real(frames)
    frames = frames * window
    batch, count = frames.shape[:-2], frames.shape[-2]
    total = n_fft + hop * (count - 1)
    index = (ops.arange(count).reshape(-1, 1) * hop + ops.arange(n_fft).reshape(1, -1)).reshape(-1, 1)
    flat = frames.reshape((-1, count * n_fft)).swapaxes(0, 1)
    y = ops.tensor_scatter_add(ops.zeros((total, flat.shape[1]), flat.dtype), index, flat).swapaxes(0, 1)
    envelope = ops.tensor_scatter_add(ops.zeros((total,), window.dtype), index, ops.tile(window * window, (count,)))
    start = n_fft // 2 if center else 0
    end = min(total - start if length is None else start + length, total)
    y = y[:, start:end] / envelope[start:end]
    if length is not None and y.shape[-1] < length:
        y = ops.pad(y, (0, length - y.shape[-1]))
    return y.reshape(batch + (y.shape[-1],))


# ops.fftfreq / rfftfreq compute in float32 (a float64 result is off by 1e-8): torch's
# arange times 1 / (n * d), in the result's dtype
def _fftfreq(n, d=1.0, dtype=None, onesided=False):
    """torch.fft.fftfreq (rfftfreq when onesided): the sample frequencies of an n-point FFT."""
    dtype = ms.float32 if dtype is None else dtype
    if onesided:
        k = ops.arange(0, n // 2 + 1)
    else:
        k = ops.cat((ops.arange(0, (n - 1) // 2 + 1), ops.arange(-(n // 2), 0)))
    return k.astype(dtype) * ms.Tensor(1.0 / (n * d), dtype)


# torch.signal.windows: scipy's formulas, computed once in float64 by numpy (a window is a
# constant), then a tensor of the asked dtype; not sym: the symmetric window of M + 1, its
# last point dropped
def _signal_window(kind, M, sym=True, dtype=None, **params):
    """torch.signal.windows.<kind>(M, sym=..., ...)."""
    import numpy as np

    dtype = ms.float32 if dtype is None else dtype
    if M <= 1:
        return ops.ones(M, dtype)
    n = M if sym else M + 1
    k = np.arange(n, dtype=np.float64)
    cosines = {"hann": [0.5, 0.5], "hamming": [0.54, 0.46], "blackman": [0.42, 0.5, 0.08],
               "nuttall": [0.3635819, 0.4891775, 0.1365995, 0.0106411]}
    if kind == "general_hamming":
        alpha = params.get("alpha", 0.54)
        kind, cosines[kind] = "general_cosine", [alpha, 1.0 - alpha]
    if kind in cosines or kind == "general_cosine":
        a = cosines.get(kind) or list(params["a"])
        w = sum((-1) ** i * c * np.cos(2 * np.pi * i * k / (n - 1)) for i, c in enumerate(a))
    elif kind == "bartlett":
        w = 1 - np.abs(2 * k / (n - 1) - 1)
    elif kind == "cosine":
        w = np.sin(np.pi * (k + 0.5) / n)
    elif kind == "gaussian":
        w = np.exp(-0.5 * ((k - (n - 1) / 2) / params.get("std", 1.0)) ** 2)
    elif kind == "exponential":
        center = (n - 1) / 2 if params.get("center") is None else params["center"]
        w = np.exp(-np.abs(k - center) / params.get("tau", 1.0))
    else:  # kaiser
        beta = params.get("beta", 12.0)
        w = np.i0(beta * np.sqrt(1 - (2 * k / (n - 1) - 1) ** 2)) / np.i0(beta)
    return ms.Tensor(np.asarray(w[:M], dtype=np.float64)).astype(dtype)
