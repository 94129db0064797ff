"""Hooks of tables/fft.toml: torch.fft.* and torch's window functions."""
from __future__ import annotations

import libcst as cst

from ..syntax import Unconvertible, code, entry_call, keyword_call, literal, literal_value, mindspore_ref
from .linalg import linalg_helper, negated
from .registry import hook

# MindSpore's window kernels that take the length as a tensor, not an int
_LENGTH_AS_TENSOR = ("mindspore.ops.blackman_window", "mindspore.ops.bartlett_window")


@hook()
def window(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A window of torch's default dtype, float32 (MindSpore's hann/kaiser give float64):
    ``torch.hann_window(8)`` -> ``ops.hann_window(window_length=8, dtype=ms.float32)``;
    blackman/bartlett take the length as a tensor: ``window_length=ms.Tensor(8)``. A
    length that may be 1 casts the result too (MindSpore then gives float64 whatever the
    dtype)."""
    dtype = args.setdefault("dtype", mindspore_ref(ctx, "float32"))
    length = literal_value(args["window_length"])
    if entry.target in _LENGTH_AS_TENSOR:
        args["window_length"] = keyword_call(mindspore_ref(ctx, "Tensor"), {"input_data": args["window_length"]})
    result = entry_call(ctx, entry, args, receiver)
    if isinstance(length, int) and length > 1:
        return result
    return keyword_call(ctx.reference("mindspore.ops.cast"), {"input": result, "dtype": dtype})


# the same transform the other way round: torch's forward Hermitian FFT is the inverse real
# FFT of the conjugate, scaled the other way
_SWAPPED_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


@hook(consumes=("norm",), adds=("norm",))
def hermitian_fft(ctx, entry, args, receiver) -> cst.BaseExpression:
    """torch.fft.hfft* / ihfft* as the real FFTs of the conjugate (MindSpore 2.10's
    hfft/ihfft kernels give another result when called twice on one tensor):
    ``hfft(x, norm=m)`` -> ``ops.irfft(ops.conj(x), norm=swapped m)``,
    ``ihfft(x, norm=m)`` -> ``ops.conj(ops.rfft(x, norm=swapped m))``."""
    norm = args.get("norm", literal(None))
    value = literal_value(norm)
    if value in _SWAPPED_NORM:
        args["norm"] = literal(_SWAPPED_NORM[value])
    else:
        args["norm"] = cst.parse_expression(f"{_SWAPPED_NORM!r}.get({code(norm)}, {code(norm)})")
    conj = ctx.reference("mindspore.ops.conj")
    if entry.target.startswith("mindspore.ops.irfft"):  # hfft: conjugate the input
        args["input"] = keyword_call(conj, {"input": args["input"]})
        return entry_call(ctx, entry, args, receiver)
    return keyword_call(conj, {"input": entry_call(ctx, entry, args, receiver)})


@hook(consumes=("pad_mode",))
def stft(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.stft(x, n_fft, pad_mode="reflect")`` -> ``ops.stft(x=x, n_fft=n_fft,
    pad_mode="REFLECT")``: MindSpore spells the padding modes in capitals (a mode known
    only when it runs: upper-cased then; "replicate" and "circular" then raise)."""
    mode = args.get("pad_mode")
    if mode is not None:
        value = literal_value(mode)
        if isinstance(value, str) and value not in ("constant", "reflect"):
            raise Unconvertible(f"pad_mode={value!r}: MindSpore's stft pads only 'constant' and 'reflect' as torch does")
        args["pad_mode"] = literal(value.upper()) if isinstance(value, str) else cst.parse_expression(f"({code(mode)}).upper()")
    return entry_call(ctx, entry, args, receiver)


# MindSpore has no istft: the inverse FFT of each frame, windowed, overlap-added (a scatter-add
# along time) and divided by the overlap-added squared window, as torch does
ISTFT = '''
def {name}(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
           onesided=None, length=None, return_complex=False):
    """torch.istft: the signal (..., time) from its complex STFT (..., freq, frames)."""
    import math

    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        window = OPS.ones(win, MS.float64 if input.dtype == MS.complex128 else MS.float32)
    if win < n_fft:
        left = (n_fft - win) // 2
        window = OPS.pad(window, (left, n_fft - win - left))
    if normalized:
        input = input * MS.Tensor(math.sqrt(n_fft), input.dtype)
    if onesided is None:
        onesided = input.shape[-2] != n_fft
    frames = OPS.swapaxes(input, -1, -2)
    frames = OPS.irfft(frames, n=n_fft, dim=-1) if onesided else OPS.ifft(frames, n=n_fft, dim=-1)
    if not return_complex and frames.dtype in (MS.complex64, MS.complex128):
        frames = OPS.real(frames)
    frames = frames * window
    batch, count = frames.shape[:-2], frames.shape[-2]
    total = n_fft + hop * (count - 1)
    index = (OPS.arange(count).reshape(-1, 1) * hop + OPS.arange(n_fft).reshape(1, -1)).reshape(-1, 1)
    flat = frames.reshape((-1, count * n_fft)).swapaxes(0, 1)
    y = OPS.tensor_scatter_add(OPS.zeros((total, flat.shape[1]), flat.dtype), index, flat).swapaxes(0, 1)
    envelope = OPS.tensor_scatter_add(OPS.zeros((total,), window.dtype), index, OPS.tile(window * window, (count,)))
    start = n_fft // 2 if center else 0
    end = min(total - start if length is None else start + length, total)
    y = y[:, start:end] / envelope[start:end]
    if length is not None and y.shape[-1] < length:
        y = OPS.pad(y, (0, length - y.shape[-1]))
    return y.reshape(batch + (y.shape[-1],))
'''


@hook(consumes=("input", "n_fft", "hop_length", "win_length", "window", "center", "normalized", "onesided", "length", "return_complex"))
def istft(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.istft(spec, 16, window=w)`` -> ``_istft(input=spec, n_fft=16, window=w)`` (emitted)."""
    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(linalg_helper(ctx, "_istft", ISTFT), args)


# ops.fftfreq / rfftfreq compute in float32 (a float64 result is off by 1e-8): torch's
# arange times 1 / (n * d), in the result's dtype
FFTFREQ = '''
def {name}(n, d=1.0, dtype=None, onesided=False):
    """torch.fft.fftfreq (rfftfreq when onesided): the sample frequencies of an n-point FFT."""
    dtype = MS.float32 if dtype is None else dtype
    if onesided:
        k = OPS.arange(0, n // 2 + 1)
    else:
        k = OPS.cat((OPS.arange(0, (n - 1) // 2 + 1), OPS.arange(-(n // 2), 0)))
    return k.astype(dtype) * MS.Tensor(1.0 / (n * d), dtype)
'''


@hook(consumes=("n", "d", "dtype"), adds=("onesided",))
def fftfreq(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.fft.rfftfreq(8, 0.5)`` -> ``_fftfreq(n=8, d=0.5, onesided=True)`` (emitted)."""
    if entry.source.endswith("rfftfreq"):
        args["onesided"] = literal(True)
    return keyword_call(linalg_helper(ctx, "_fftfreq", FFTFREQ), args)


# torch.signal.windows: scipy's formulas, computed once in float64 by numpy (a window is a
# constant), then a tensor of the asked dtype; not sym: the symmetric window of M + 1, its
# last point dropped
SIGNAL_WINDOW = '''
def {name}(kind, M, sym=True, dtype=None, **params):
    """torch.signal.windows.<kind>(M, sym=..., ...)."""
    import numpy as np

    dtype = MS.float32 if dtype is None else dtype
    if M <= 1:
        return OPS.ones(M, dtype)
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
    return MS.Tensor(np.asarray(w[:M], dtype=np.float64)).astype(dtype)
'''


@hook(consumes=("M", "sym", "dtype", "alpha", "a", "beta", "std", "center", "tau"), adds=("kind",))
def signal_window(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.signal.windows.hann(8, sym=False)`` -> ``_signal_window("hann", M=8, sym=False)`` (emitted)."""
    call = keyword_call(linalg_helper(ctx, "_signal_window", SIGNAL_WINDOW), args)
    kind = cst.Arg(literal(entry.source.rsplit(".", 1)[-1]))
    return call.with_changes(args=[kind, *call.args])


@hook(consumes=("window_length", "periodic", "alpha", "beta", "dtype"), adds=("M", "sym", "a"))
def hamming_window(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.hamming_window(8, alpha=a, beta=b)`` -> ``_signal_window("general_cosine", M=8,
    sym=False, a=(a, b))`` (emitted): ops.hamming_window rounds alpha and beta to float32."""
    alpha, beta = args.pop("alpha", literal(0.54)), args.pop("beta", literal(0.46))
    args = {"M": args.pop("window_length"), "sym": negated(args.pop("periodic", literal(True))),
            "a": cst.Tuple([cst.Element(alpha), cst.Element(beta)]), **args}
    call = keyword_call(linalg_helper(ctx, "_signal_window", SIGNAL_WINDOW), args)
    return call.with_changes(args=[cst.Arg(literal("general_cosine")), *call.args])
