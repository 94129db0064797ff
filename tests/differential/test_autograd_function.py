"""Differential tests of MS104 (rewrites/passes/autograd_function.py): torch.autograd.Function
subclasses become Cells with bprop. Forward values AND input gradients are compared.

One torch source defines the Functions and a function per case; the tool converts it
once (only its output runs). torch: ``loss = sum(out * w)`` (w fixed per output, so a
sparsemax whose outputs sum to 1 still has a gradient), ``loss.backward()``, the
inputs' ``.grad``. MindSpore: ``mindspore.grad`` of the same loss over the converted
function, PYNATIVE mode (the converted bprop runs Python: forward again on a ctx
object, then backward). GRAPH mode: the forward values (construct) are compared;
its gradients are not (GRAPH_MODE types what the ctx object holds as Any and refuses
such a bprop: "output should be a tuple, but got AbstractAny").
"""
from __future__ import annotations

import ast

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from transpile import convert_code

warnings.filterwarnings("ignore")

# sparsemax (sort-based, saves its output, a dim argument) and memory-efficient swish
# (saves its input) with a straight-through rounding come from the two samples
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SOURCE = "\n\n".join((SAMPLES / f).read_text(encoding="utf-8") for f in ("sparsemax.py", "swish_memory_efficient.py")) + '''
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class Entmax15Function(Function):
    """entmax-1.5 (bisection-free, sort-based); saves its output."""

    @staticmethod
    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        max_val, _ = x.max(dim=dim, keepdim=True)
        x = (x - max_val) / 2
        xs, _ = torch.sort(x, dim=dim, descending=True)
        d = x.size(dim)
        shape = [1] * x.dim()
        shape[dim] = d
        rho = torch.arange(1, d + 1, dtype=x.dtype).view(shape)
        mean = xs.cumsum(dim) / rho
        mean_sq = (xs ** 2).cumsum(dim) / rho
        ss = rho * (mean_sq - mean ** 2)
        delta = (1 - ss) / rho
        delta_nz = torch.clamp(delta, 0)
        tau = mean - torch.sqrt(delta_nz)
        support_size = (tau <= xs).sum(dim).unsqueeze(dim)
        tau_star = tau.gather(dim, support_size - 1)
        y = torch.clamp(x - tau_star, min=0) ** 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dY):
        Y, = ctx.saved_tensors
        gppr = Y.sqrt()
        dX = dY * gppr
        q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dX -= q * gppr
        return dX, None


class SquarePlus(torch.autograd.Function):
    """saves its input; its backward is marked to run once."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x + torch.sqrt(x * x + 4)) / 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (1 + x / torch.sqrt(x * x + 4)) / 2


class ScaleGrad(Function):
    """a float argument (gradient None), needs_input_grad, a tensor input given None."""

    @staticmethod
    def forward(ctx, x, y, alpha):
        ctx.alpha = alpha
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        grad_x = grad_output * y * ctx.alpha if ctx.needs_input_grad[0] else None
        return grad_x, None, None


class SortValues(Function):
    """two outputs, the second not differentiable; dout is one gradient per output."""

    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)


class MulAdd(Function):
    """two tensor inputs, two outputs that both carry gradients."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx, g_prod, g_sum):
        a, b = ctx.saved_tensors
        return g_prod * b + g_sum, g_prod * a + g_sum


class Exp(Function):
    """the newer style: forward without ctx, setup_context keeps the output."""

    @staticmethod
    def forward(x):
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LeakyGrad(Function):
    """typed: ctx annotated with FunctionCtx."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad_output * ((x > 0).to(grad_output.dtype) * 0.9 + 0.1)


class SumAll(Function):
    """*args inputs."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.count = len(tensors)
        return sum(tensors)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(grad_output * (k + 1) for k in range(ctx.count))


round_ste = RoundSTE.apply


def case_sparsemax_last(a):
    return SparsemaxFunction.apply(a, -1)


def case_sparsemax_dim0(a):
    return SparsemaxFunction.apply(a, 0)


def case_sparsemax_default_dim(a):
    return SparsemaxFunction.apply(a)


def case_entmax15(a):
    return Entmax15Function.apply(a, -1)


def case_swish(a):
    return SwishImplementation.apply(a) * 2


def case_round_ste(a):
    return round_ste(a * 3) + a


def case_scale_grad(a, b):
    return ScaleGrad.apply(a, b, 0.5)


def case_sort_values(a):
    values, indices = SortValues.apply(a)
    return values * 2, indices.to(a.dtype)  # int64 here, int32 converted (the sort note)


def case_mul_add(a, b):
    return MulAdd.apply(a, b)


def case_exp(a):
    return Exp.apply(a)


def case_square_plus(a):
    return SquarePlus.apply(a)


def case_leaky_grad(a):
    return LeakyGrad.apply(a)


def case_sum_all(a, b, c):
    return SumAll.apply(a, b, c)


class Block(nn.Module):
    """a Function inside a Module's forward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        return SparsemaxFunction.apply(SwishImplementation.apply(self.fc(x)), -1)


def case_in_module(a):
    torch.manual_seed(0)
    return Block()(a)
'''

_RNG = np.random.default_rng(7)


def _arr(*shape, low=-2.0, high=2.0):
    return _RNG.uniform(low, high, shape).astype(np.float32)


CASES = {
    "sparsemax_last": (_arr(3, 6),),
    "sparsemax_dim0": (_arr(5, 4),),
    "sparsemax_default_dim": (_arr(2, 3, 5),),
    "entmax15": (_arr(3, 7),),
    "swish": (_arr(4, 5),),
    "round_ste": (_arr(6),),
    "scale_grad": (_arr(2, 3), _arr(2, 3)),
    "sort_values": (_arr(3, 5),),
    "mul_add": (_arr(4), _arr(4)),
    "exp": (_arr(5),),
    "square_plus": (_arr(2, 4),),
    "sum_all": (_arr(3), _arr(3), _arr(3)),
    "leaky_grad": (_arr(3, 4),),
    "in_module": (_arr(2, 5),),
}


def _import(path, name: str) -> dict:
    """The file as a module (GRAPH_MODE reads construct's source through it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return vars(module)


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """(torch namespace, converted namespace, converted code)."""
    result = convert_code(SOURCE, filename="functions.py")
    code = result.code
    tree = ast.parse(code)  # no torch left (emitted helpers' names and docstrings say torch)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "torch"
                or isinstance(n, (ast.Import, ast.ImportFrom)) and "torch" in ast.unparse(n)], code
    assert "# transpile:" not in code
    assert not result.errors
    where = tmp_path_factory.mktemp("autograd_function")
    (where / "torch_functions.py").write_text(SOURCE, encoding="utf-8")
    (where / "converted_functions.py").write_text(code, encoding="utf-8")
    return (_import(where / "torch_functions.py", "_ms104_torch"),
            _import(where / "converted_functions.py", "_ms104_converted"), code)


def _weights(shapes):
    rng = np.random.default_rng(99)
    return [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in shapes]


def _outputs(value):
    return list(value) if isinstance(value, tuple) else [value]


def _torch_run(fn, inputs):
    import torch

    tensors = [torch.tensor(x, requires_grad=True) for x in inputs]
    outs = _outputs(fn(*tensors))
    floats = [o for o in outs if o.is_floating_point()]
    weights = _weights([tuple(o.shape) for o in floats])
    loss = sum((o * torch.from_numpy(w)).sum() for o, w in zip(floats, weights))
    loss.backward()
    grads = [np.zeros_like(x) if t.grad is None else t.grad.numpy() for x, t in zip(inputs, tensors)]
    return [o.detach().numpy() for o in outs], grads


def _ms_run(fn, inputs):
    import mindspore

    tensors = [mindspore.Tensor(x) for x in inputs]
    outs = _outputs(fn(*tensors))
    floats = [i for i, o in enumerate(outs) if o.is_floating_point()]
    weights = _weights([tuple(outs[i].shape) for i in floats])

    def loss(*args):
        values = _outputs(fn(*args))
        return sum((values[i] * mindspore.Tensor(w)).sum() for i, w in zip(floats, weights))

    grads = mindspore.grad(loss, grad_position=tuple(range(len(inputs))))(*tensors)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return [o.asnumpy() for o in outs], [np.zeros_like(x) if g is None else g.asnumpy() for x, g in zip(inputs, grads)]


def _copy_block_weights(torch_ns, ms_ns):
    """case_in_module builds its Block afresh: both sides get the same Linear weights."""
    import mindspore
    import torch

    torch_block, ms_block = torch_ns["Block"], ms_ns["Block"]
    torch.manual_seed(0)
    state = torch_block().state_dict()
    ms_ns["case_in_module"] = lambda a, _b=ms_block(): _b(a)
    for p in ms_ns["case_in_module"].__defaults__[0].get_parameters():
        p.set_data(mindspore.Tensor(state[p.name.replace("dense", "fc")].numpy()))


def _check(expected, got, atol=1e-5):
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        assert e.shape == g.shape
        assert e.dtype == g.dtype
        np.testing.assert_allclose(g, e, atol=atol, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_gradients_pynative(modules, name):
    import mindspore

    mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    torch_ns, ms_ns, _ = modules
    if name == "in_module":
        _copy_block_weights(torch_ns, ms_ns)
    inputs = CASES[name]
    t_out, t_grads = _torch_run(torch_ns[f"case_{name}"], inputs)
    m_out, m_grads = _ms_run(ms_ns[f"case_{name}"], inputs)
    _check(t_out, m_out)
    _check(t_grads, m_grads)
    assert any(np.abs(g).sum() > 0 for g in t_grads), "a case whose gradients are all zero tests nothing"


@pytest.mark.parametrize("name", ["sparsemax_last", "swish", "round_ste", "mul_add", "exp"])
def test_forward_graph(modules, name):
    """construct compiles in GRAPH_MODE (a Cell built and called inside another's construct)."""
    import mindspore
    from mindspore import nn

    torch_ns, ms_ns, _ = modules
    fn = ms_ns[f"case_{name}"]

    class Wrapper(nn.Cell):
        def construct(self, *args):
            return fn(*args)

    inputs = CASES[name]
    t_out, _ = _torch_run(torch_ns[f"case_{name}"], inputs)
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    try:
        m_out = [o.asnumpy() for o in _outputs(Wrapper()(*[mindspore.Tensor(x) for x in inputs]))]
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    _check(t_out, m_out)


def test_converted_code_has_cells_with_bprop(modules):
    _, _, code = modules
    for name in ("SparsemaxFunction", "SwishImplementation", "RoundSTE", "Exp", "SumAll"):
        assert f"class {name}(nn.Cell):" in code
    assert "def bprop(self, input, dim, out, dout):" in code
    assert "def bprop(self, *args):" in code
    assert "once_differentiable" not in code and ".apply" not in code
    assert "round_ste = RoundSTE()" in code


# -- the samples' gradient parity (transpile/parity: gradients = true) -------------------

def test_a_broken_backward_is_caught(tmp_path):
    """gradients = true is not vacuous: the converted sparsemax with the mean over the
    support left out of backward matches forward and mismatches the input gradient."""
    from transpile.parity import load_spec, run_mode

    spec = load_spec(SAMPLES / "sparsemax.parity.toml")
    assert spec.gradients
    code = convert_code(spec.source.read_text(encoding="utf-8"), filename="sparsemax.py").code
    broken = code.replace("grad_input = nonzero * (grad_output - v_hat)", "grad_input = nonzero * grad_output")
    assert broken != code
    path = tmp_path / "sparsemax.py"
    path.write_text(broken, encoding="utf-8")
    mr = run_mode(spec, path, "PYNATIVE", timeout=240)
    assert mr.verdict == "mismatch", (mr.verdict, mr.detail)
    assert [d.allclose for d in mr.outputs] == [True, False]
    assert mr.outputs[1].name == "d(sum of outputs)/d(input 0)"


def test_an_emitted_test_does_not_claim_gradients(tmp_path):
    """--emit-test writes an outputs-only test: a spec comparing gradients is refused."""
    from transpile.parity import EmitError, SampleResult, load_spec, render_test

    spec = load_spec(SAMPLES / "swish_memory_efficient.parity.toml")
    with pytest.raises(EmitError, match="gradients"):
        render_test(SampleResult(spec.name, spec, True, {}), tmp_path / "t.py")
