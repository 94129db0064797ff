"""Hooks of tables/fft.toml: torch.fft.* and torch's window functions."""
from __future__ import annotations

import libcst as cst

from ..syntax import Unconvertible, code, entry_call, keyword_call, literal, literal_value, mindspore_ref
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
    from .linalg import _helper

    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(_helper(ctx, "_istft", ISTFT), args)


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
    from .linalg import _helper

    if entry.source.endswith("rfftfreq"):
        args["onesided"] = literal(True)
    return keyword_call(_helper(ctx, "_fftfreq", FFTFREQ), args)
