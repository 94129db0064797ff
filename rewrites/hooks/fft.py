"""Hooks of tables/fft.toml: torch.fft.* and torch's window functions."""
from __future__ import annotations

import libcst as cst

from ..runtime.registry import runtime_helper
from ..syntax import Unconvertible, code, entry_call, keyword_call, literal, literal_value, mindspore_ref
from .linalg import negated
from .registry import hook
from .torch_functions import bool_via_float  # noqa: F401  (a bool input: no bool FFT kernel)

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


@hook(consumes=("input", "n_fft", "hop_length", "win_length", "window", "center", "normalized", "onesided", "length", "return_complex"))
def istft(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.istft(spec, 16, window=w)`` -> ``_istft(input=spec, n_fft=16, window=w)`` (emitted)."""
    if receiver is not None:
        args = {"input": receiver, **args}
    return keyword_call(runtime_helper(ctx, "_istft"), args)


@hook(consumes=("n", "d", "dtype"), adds=("onesided",))
def fftfreq(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.fft.rfftfreq(8, 0.5)`` -> ``_fftfreq(n=8, d=0.5, onesided=True)`` (emitted)."""
    if entry.source.endswith("rfftfreq"):
        args["onesided"] = literal(True)
    return keyword_call(runtime_helper(ctx, "_fftfreq"), args)


@hook(consumes=("M", "sym", "dtype", "alpha", "a", "beta", "std", "center", "tau"), adds=("kind",))
def signal_window(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.signal.windows.hann(8, sym=False)`` -> ``_signal_window("hann", M=8, sym=False)`` (emitted)."""
    call = keyword_call(runtime_helper(ctx, "_signal_window"), args)
    kind = cst.Arg(literal(entry.source.rsplit(".", 1)[-1]))
    return call.with_changes(args=[kind, *call.args])


@hook(consumes=("window_length", "periodic", "alpha", "beta", "dtype"), adds=("M", "sym", "a"))
def hamming_window(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``torch.hamming_window(8, alpha=a, beta=b)`` -> ``_signal_window("general_cosine", M=8,
    sym=False, a=(a, b))`` (emitted): ops.hamming_window rounds alpha and beta to float32."""
    alpha, beta = args.pop("alpha", literal(0.54)), args.pop("beta", literal(0.46))
    args = {"M": args.pop("window_length"), "sym": negated(args.pop("periodic", literal(True))),
            "a": cst.Tuple([cst.Element(alpha), cst.Element(beta)]), **args}
    call = keyword_call(runtime_helper(ctx, "_signal_window"), args)
    return call.with_changes(args=[cst.Arg(literal("general_cosine")), *call.args])
