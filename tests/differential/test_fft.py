"""Differential tests for torch.fft.* and torch's window functions (tables/fft.toml).

Every converted entry of "fft.toml" is called in at least three forms (all positional,
all keyword, defaults omitted), real and complex inputs, and every ``norm=`` mode.
"""
from __future__ import annotations

import numpy as np

from .harness import Case, Suite, arr, case_builders, table_tests

CASES: list[Case] = []
TABLES = ["fft.toml"]
HEADER = "import torch\nimport torch.fft\nimport torch.signal\n"


forms, case = case_builders(CASES)


X = arr(4, 6)
V = arr(8)
XC = (arr(4, 6) + 1j * arr(4, 6)).astype("complex64")
VC = (arr(8) + 1j * arr(8)).astype("complex64")
X64 = arr(3, 5, dtype="float64")

# -- one-dimensional transforms: real and complex inputs, n=, dim=, every norm ---------------
REAL_IN = {"fft", "ifft", "rfft", "ihfft"}
for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    x, v = (X, V) if name in REAL_IN else (XC, VC)
    forms(f"torch.fft.{name}", "input=a, n=8, dim=0, norm='ortho'", (x,), req=1,
          extra=("a, 6, -1, 'forward'", "a, norm='backward'", "a, dim=1, out=None"))
    case(f"torch.fft.{name}", f"torch.fft.{name}(a)", (v,), "vector")
    case(f"torch.fft.{name}", f"torch.fft.{name}(a, n=5)", (X64 if name in REAL_IN else XC.astype('complex128'),), "n-odd")
case("torch.fft.fft", "torch.fft.fft(a)", (XC,), "complex")
for name in ("hfft", "ihfft", "hfft2", "ihfftn"):  # a norm known only when it runs: swapped then
    case(f"torch.fft.{name}", f"m = 'ortho'\n    return torch.fft.{name}(a, norm=m)", (XC if name[0] == "h" else X,), "norm-variable")
case("torch.fft.ifft", "torch.fft.ifft(a, norm='ortho')", (XC,), "complex")

# -- two- and n-dimensional transforms: s=, dim= --------------------------------------------
for name in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"):
    real = name.startswith(("rfft", "ihfft", "fft", "ifft"))
    x = X if real else XC
    dims = "(0, 1)" if name.endswith("2") else "(1, 0)"
    forms(f"torch.fft.{name}", f"input=a, s=(4, 6), dim={dims}, norm='ortho'", (x,), req=1,
          extra=("a, (3, 5)", "a, None, (-2, -1), 'forward'", "a, out=None"))
    case(f"torch.fft.{name}", f"torch.fft.{name}(a)", (XC if not name.startswith(("rfft", "ihfft")) else X,), "complex-or-real")
case("torch.fft.fftn", "torch.fft.fftn(a, dim=(0,))", (X,), "one-dim")
case("torch.fft.rfftn", "torch.fft.rfftn(a, s=(4, 4, 4))", (arr(3, 4, 5),), "three-dims")

# -- frequencies and shifts -----------------------------------------------------------------
for name in ("fftfreq", "rfftfreq"):
    forms(f"torch.fft.{name}", "n=8, d=0.5", (), req=1, kw="dtype=torch.float64", extra=("9", "7, 2.0, out=None"))
    case(f"torch.fft.{name}", f"torch.fft.{name}(5, requires_grad=False)", (), "requires-grad")
    case(f"torch.fft.{name}", f"torch.fft.{name}(9, 0.3, dtype=torch.float64)", (), "f64", atol=1e-15, rtol=1e-15)
    case(f"torch.fft.{name}", f"torch.fft.{name}(a.shape[0], d=0.1)", (arr(6),), "from-shape")
for name in ("fftshift", "ifftshift"):
    forms(f"torch.fft.{name}", "input=a, dim=1", (X,), req=1, extra=("a, (0, 1)", "a, dim=-1"))
    case(f"torch.fft.{name}", f"torch.fft.{name}(torch.fft.fftfreq(7))", (), "fftfreq")
    case(f"torch.fft.{name}", f"torch.fft.{name}(a)", (arr(3, 5),), "odd")

# -- windows (torch's default dtype is float32; a length of 1 is [1.]) -----------------------
WINDOW_ARGS = {"hann": "", "hamming": ", alpha=0.5, beta=0.5", "blackman": "", "bartlett": "", "kaiser": ", beta=5.0"}
for name, more in WINDOW_ARGS.items():
    api = f"torch.{name}_window"
    forms(api, f"window_length=8, periodic=False{more}", (), req=1, kw="dtype=torch.float64", extra=("7", "1", "5, True", "6, requires_grad=False"))
    case(api, f"{api}(a.shape[-1], dtype=a.dtype) * a", (X,), "scaled")
    case(api, f"{api}(9, False{more}, dtype=torch.float64)", (), "f64", atol=1e-12, rtol=1e-12)
case("torch.hamming_window", "p = False\n    return torch.hamming_window(6, p)", (), "periodic-variable")

# -- torch.signal.windows ------------------------------------------------------------------
SIGNAL_KW = {"exponential": "tau=2.0, ", "gaussian": "std=1.5, ", "general_cosine": "a=[0.5, 0.3, 0.2], ",
             "general_hamming": "alpha=0.6, ", "kaiser": "beta=4.0, "}
for name in ("bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming", "hann", "kaiser", "nuttall"):
    api, more = f"torch.signal.windows.{name}", SIGNAL_KW.get(name, "")
    needs_a = name == "general_cosine"
    case(api, f"{api}(8, {more}sym=False)", (), "positional")
    case(api, f"{api}(M=7, {more}sym=True, dtype=torch.float64)", (), "keyword", atol=1e-12, rtol=1e-12)
    case(api, f"{api}(9{', a=[0.5, 0.5]' if needs_a else ''})", (), "defaults")
    case(api, f"{api}(1{', a=[0.5, 0.5]' if needs_a else ''}, requires_grad=False)", (), "one")
    case(api, f"{api}(0{', a=[0.5, 0.5]' if needs_a else ''})", (), "empty")
case("torch.signal.windows.exponential", "torch.signal.windows.exponential(6, center=1.0, sym=False)", (), "center")

# -- short-time Fourier transform (torch wants return_complex= for a real signal) ------------
SIGNAL, SIGNALS, HANN = arr(64), arr(2, 50), np.hanning(12).astype("float32")
case("torch.stft", "torch.stft(a, 16, 4, 12, b, True, 'constant', False, True, True)", (SIGNAL, HANN), "positional")
case("torch.stft", "torch.stft(input=a, n_fft=16, hop_length=4, win_length=12, window=b, center=False, pad_mode='reflect', "
     "normalized=True, onesided=False, return_complex=True, align_to_window=None)", (SIGNAL, HANN), "keyword")
case("torch.stft", "torch.stft(a, 16, return_complex=True)", (SIGNALS,), "defaults")
case("torch.stft", "torch.stft(a, 16, window=torch.hann_window(16), return_complex=True)", (SIGNALS,), "hann")
case("torch.stft", "torch.view_as_real(torch.stft(a, 8, hop_length=2, return_complex=True))", (SIGNAL,), "as-real")
case("torch.stft", "m = 'constant'\n    return torch.stft(a, 16, pad_mode=m, return_complex=True)", (SIGNAL,), "mode-variable")
# -- inverse STFT (the spectrograms made by torch: inputs only) ------------------------------
def spectrogram(signal, n_fft=16, **kwargs):
    import torch

    if "window" in kwargs:
        kwargs["window"] = torch.from_numpy(kwargs["window"])
    return torch.stft(torch.from_numpy(signal), n_fft, return_complex=True, **kwargs).numpy()


HANN16 = np.hanning(17)[:16].astype("float32")  # torch.hann_window(16): periodic
SPEC = spectrogram(arr(2, 200))
SPEC_HOP = spectrogram(arr(200), hop_length=5)
case("torch.istft", "torch.istft(a, 16, 4, 16, b, True, False, True, 200, False)", (SPEC, np.ones(16, "float32")), "positional")
case("torch.istft", "torch.istft(input=a, n_fft=16, hop_length=5, win_length=16, window=None, center=True, normalized=False, "
     "onesided=None, length=None, return_complex=False)", (SPEC_HOP,), "keyword")
case("torch.istft", "torch.istft(a, 16)", (SPEC,), "defaults")
case("torch.istft", "torch.istft(a, 16, window=torch.hann_window(16), length=190)", (spectrogram(arr(200), window=HANN16),), "hann-length")
case("torch.istft", "torch.istft(a, 16, 2, win_length=12, window=torch.hann_window(12), length=190)",
     (spectrogram(arr(200), hop_length=2, win_length=12, window=np.hanning(13)[:12].astype("float32")),), "short-window")
case("torch.istft", "torch.istft(a, 16, normalized=True)", (spectrogram(arr(2, 100), normalized=True),), "normalized")
case("torch.istft", "torch.istft(a, 16, onesided=False)", (spectrogram(arr(100), onesided=False),), "two-sided")
case("torch.istft", "torch.istft(torch.stft(a, 32, 8, window=torch.hann_window(32), return_complex=True), 32, 8, window=torch.hann_window(32))",
     (arr(300),), "round-trip")

SUITE = Suite(CASES, header=HEADER)


test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, TABLES)
