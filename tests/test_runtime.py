"""The run-time helpers (rewrites/runtime/) on MindSpore, imported as the modules they are:
every helper the registry knows is defined by its module, and a representative set
computes torch's values on its own (expected values worked out by hand or with numpy).
tests/test_runtime_registry.py checks, without MindSpore, that their names resolve."""
from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from transpile.rewrites.runtime.registry import families, helpers

pytestmark = pytest.mark.framework

ms = pytest.importorskip("mindspore")

MODULES = {path.stem: importlib.import_module(f"transpile.rewrites.runtime.{path.stem}") for path in families()}
(indexing, tensor_math, rnn_cells, special, nn_utils, distributions, nn_ops, linalg, fft, data, graph, module_methods,
 optim, inplace, training, foreach, functional) = (MODULES[m] for m in (
    "indexing", "tensor_math", "rnn_cells", "special", "nn_utils", "distributions", "nn_ops", "linalg", "fft", "data",
    "graph", "module_methods", "optim", "inplace", "training", "foreach", "functional"))


def tensor(values, dtype=ms.float32):
    return ms.Tensor(np.asarray(values), dtype)


def close(actual, expected, tol=1e-5) -> bool:
    return np.allclose(np.asarray(actual.asnumpy() if hasattr(actual, "asnumpy") else actual), expected,
                       rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(helpers()))
def test_every_registered_helper_is_defined_by_its_module(name: str) -> None:
    assert hasattr(MODULES[helpers()[name].family], name)


# -- indexing ------------------------------------------------------------------------------
def test_index_add_with_alpha() -> None:
    out = indexing._torch_index_add(ms.ops.zeros((3, 2)), 0, tensor([0, 2, 0], ms.int64), tensor([[1, 1], [2, 2], [3, 3]]),
                                    alpha=2)
    assert close(out, [[8, 8], [0, 0], [4, 4]])


@pytest.mark.parametrize("reduce, include_self, expected", [
    ("sum", True, [11, 6, 1]), ("amax", False, [6, 5, 1]), ("mean", True, [11 / 3, 3, 1]), ("mean", False, [5, 5, 1])])
def test_scatter_reduce(reduce: str, include_self: bool, expected) -> None:
    out = indexing._torch_scatter_reduce(tensor([1, 1, 1]), 0, tensor([0, 0, 1], ms.int64), tensor([4, 6, 5]), reduce,
                                         include_self)
    assert close(out, expected)


def test_scatter_of_a_number_with_a_reduction_and_a_larger_src() -> None:
    selection = MODULES["selection"]
    index = tensor([[0, 0, 1]], ms.int64)
    assert close(selection._torch_scatter(ms.ops.ones((2, 3)), 0, index, 2.0, reduce="multiply"), [[2, 2, 1], [1, 1, 2]])
    src = tensor([[5, 6, 7, 8], [9, 9, 9, 9]])  # read in index's shape, from its corner
    assert close(selection._torch_scatter(ms.ops.zeros((2, 3)), 0, index, src), [[5, 6, 0], [0, 0, 7]])


def test_unique_rows_with_inverse_and_counts() -> None:
    rows = tensor([[1, 2], [0, 1], [1, 2], [0, 0]], ms.int64)
    values, inverse, counts = MODULES["selection"]._torch_unique(rows, return_inverse=True, return_counts=True, dim=0)
    assert close(values, [[0, 0], [0, 1], [1, 2]]) and close(inverse, [2, 1, 2, 0]) and close(counts, [1, 1, 2])
    assert inverse.dtype == ms.int64


def test_round_to_decimals_and_fmin_with_nans() -> None:
    construction = MODULES["construction"]
    assert close(construction._torch_round(tensor([1.25, -2.555, 35.0]), 1), [1.2, -2.6, 35.0])
    assert close(construction._torch_round(tensor([125.0, 35.0]), -1), [120.0, 40.0])  # halves to even
    assert close(construction._torch_fmin(tensor([np.nan, 1.0, np.nan]), tensor([2.0, np.nan, np.nan])), [2.0, 1.0, np.nan])


def test_logspace_as_strided_and_frombuffer() -> None:
    construction = MODULES["construction"]
    assert close(construction._torch_logspace(0, 3, 4, base=2), [1, 2, 4, 8])
    assert close(construction._torch_as_strided(tensor(np.arange(6)), (2, 2), (1, 2), 1), [[1, 3], [2, 4]])
    raw = bytearray(np.arange(4, dtype=np.int32).tobytes())
    assert close(construction._torch_frombuffer(raw, ms.int32, count=2, offset=4), [1, 2])


def test_sparse_coo_tensors_are_kept_dense() -> None:
    construction = MODULES["construction"]
    dense = construction._torch_sparse_coo_tensor(tensor([[0, 1, 0], [2, 0, 2]], ms.int64), tensor([1.0, 2.0, 3.0]))
    assert close(dense, [[0, 0, 4], [2, 0, 0]])  # size inferred, (0, 2) summed
    assert close(construction._torch_indices(dense), [[0, 1], [2, 0]])
    assert close(construction._torch_values(dense), [4, 2])
    assert construction._torch_sparse_coo_tensor([[0], [1]], [[1.0, 2.0]], (1, 2, 2)).shape == (1, 2, 2)


def test_index_put_accumulates_repeated_indices() -> None:
    out = indexing._torch_index_put(ms.ops.zeros(3), (tensor([0, 0, 2], ms.int64),), tensor([1, 2, 3]), accumulate=True)
    assert close(out, [3, 0, 3])


def test_unravel_index_and_broadcast_shapes() -> None:
    rows, cols = indexing._torch_unravel_index(tensor([5, 1], ms.int64), (2, 3))
    assert rows.asnumpy().tolist() == [1, 0] and cols.asnumpy().tolist() == [2, 1]
    assert indexing._torch_broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    with pytest.raises(RuntimeError):
        indexing._torch_broadcast_shapes((2,), (3,))


# -- tensor_math ---------------------------------------------------------------------------
def test_kthvalue_is_a_named_tuple() -> None:
    result = tensor_math._torch_kthvalue(tensor([[3, 1, 2], [9, 7, 8]]), 2, dim=1)
    assert close(result.values, [2, 8]) and result.indices.asnumpy().tolist() == [2, 2]


def test_isin() -> None:
    assert tensor_math._torch_isin(tensor([1, 2, 3]), tensor([2, 5])).asnumpy().tolist() == [False, True, False]


def test_broadcast_tensors_uses_the_indexing_helper() -> None:
    a, b = tensor_math._torch_broadcast_tensors(ms.ops.ones((2, 1)), ms.ops.ones(3))
    assert a.shape == b.shape == (2, 3)


# -- rnn_cells -----------------------------------------------------------------------------
def test_rnn_relu_cell() -> None:
    x, h = np.array([[1.0, -2.0]]), np.array([[0.5]])
    w_ih, w_hh, b_ih = np.array([[1.0, 1.0]]), np.array([[2.0]]), np.array([3.0])
    out = rnn_cells._torch_rnn_relu_cell(tensor(x), tensor(h), tensor(w_ih), tensor(w_hh), tensor(b_ih))
    assert close(out, np.maximum(x @ w_ih.T + h @ w_hh.T + b_ih, 0))


# -- special -------------------------------------------------------------------------------
def test_xlogy_is_zero_where_x_is_zero_unless_y_is_nan() -> None:
    out = special._special_xlogy(tensor([0, 0, 2]), tensor([0, math.nan, math.e]))
    assert close(out, [0, math.nan, 2])


def test_entr_at_the_edges() -> None:
    assert close(special._special_entr(tensor([-1, 0, 0.5])), [-math.inf, 0, -0.5 * math.log(0.5)])


def test_chebyshev_polynomial_by_its_recurrence() -> None:
    x = np.array([0.3, -0.7])
    assert close(special._special_chebyshev_polynomial_t(tensor(x), 3), 4 * x ** 3 - 3 * x)


def test_an_integer_tensor_is_computed_in_float() -> None:
    assert special._special_float(tensor([1, 2], ms.int32)).dtype == ms.float32


# -- nn_utils ------------------------------------------------------------------------------
def test_pad_then_pack_and_unpack_sequences() -> None:
    sequences = [tensor([1, 2, 3]), tensor([4])]
    padded = nn_utils._torch_pad_sequence(sequences, batch_first=True, padding_value=-1)
    assert close(padded, [[1, 2, 3], [4, -1, -1]])
    unpacked = nn_utils._torch_unpack_sequence(nn_utils._torch_pack_sequence(sequences))
    assert [u.asnumpy().tolist() for u in unpacked] == [[1, 2, 3], [4]]


def test_invert_permutation_and_parameters_to_vector() -> None:
    assert nn_utils._torch_invert_permutation(tensor([2, 0, 1], ms.int64)).asnumpy().tolist() == [1, 2, 0]
    vector = nn_utils._torch_parameters_to_vector([ms.Parameter(tensor([[1, 2]])), ms.Parameter(tensor([3]))])
    assert close(vector, [1, 2, 3])


# -- distributions -------------------------------------------------------------------------
def test_normal_log_prob_and_kl() -> None:
    p = distributions._TorchNormal(loc=tensor([0.0]), scale=tensor([2.0]))
    assert close(p.log_prob(tensor([1.0])), [-math.log(2.0) - 0.5 * math.log(2 * math.pi) - 1 / 8])
    q = distributions._TorchNormal(loc=tensor([1.0]), scale=tensor([1.0]))
    assert close(distributions._torch_kl_divergence(p, q), [math.log(1 / 2) + (4 + 1) / 2 - 0.5])
    assert p.batch_shape == (1,) and tuple(p.sample((5,)).shape) == (5, 1)


def test_categorical_from_logits() -> None:
    c = distributions._TorchCategorical(logits=tensor([0.0, math.log(3.0)]))
    assert close(c.probs, [0.25, 0.75])
    assert close(c.log_prob(tensor(1, ms.int64)), math.log(0.75))


# -- nn_ops --------------------------------------------------------------------------------
def test_rms_norm() -> None:
    x = np.array([[1.0, 2.0, 3.0]])
    out = nn_ops._torch_rms_norm(tensor(x), [3], eps=1e-6)
    assert close(out, x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6))


def test_dropout_outside_training_and_at_p_one() -> None:
    x = ms.ops.ones((2, 3))
    assert nn_ops._torch_dropout(x, 0.5, False) is x
    assert close(nn_ops._torch_dropout(x, 1.0, True), np.zeros((2, 3)))


def test_embedding_bag_sum_skips_the_padding_index() -> None:
    weight = tensor([[1, 1], [2, 2], [4, 4]])
    out = nn_ops._torch_embedding_bag(tensor([0, 1, 2, 1], ms.int64), weight, tensor([0, 2], ms.int64), mode="sum",
                                      padding_idx=1)
    assert close(out, [[1, 1], [4, 4]])


# -- linalg, fft ---------------------------------------------------------------------------
def test_solve_with_a_vector_and_broadcast_batches() -> None:
    A = np.array([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 1.0], [0.0, 1.0]]])
    b = np.array([2.0, 4.0])
    assert close(linalg._linalg_solve(tensor(A), tensor(b)), np.linalg.solve(A, np.broadcast_to(b, (2, 2))))


@pytest.mark.parametrize("n", [0, 3, -1])
def test_matrix_power(n: int) -> None:
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert close(linalg._matrix_power(tensor(A), n), np.linalg.matrix_power(A, n), tol=1e-4)


def test_fftfreq_and_rfftfreq() -> None:
    assert close(fft._fftfreq(5, 0.5), np.fft.fftfreq(5, 0.5))
    assert close(fft._fftfreq(6, onesided=True), np.fft.rfftfreq(6))


# -- data, optim, training ----------------------------------------------------------------
def test_default_collate_stacks_fields() -> None:
    batch = data._default_collate([{"x": np.array([1, 2]), "y": 0.5}, {"x": np.array([3, 4]), "y": 1.5}])
    assert batch["x"].asnumpy().tolist() == [[1, 2], [3, 4]] and close(batch["y"], [0.5, 1.5])


def test_step_as_int_and_last_lr() -> None:
    calls = []
    wrapped = optim._torch_step_as_int([lambda step: calls.append(step) or 0.5])
    assert wrapped[0](tensor(3.0)) == 0.5 and calls == [3] and isinstance(calls[0], int)

    class Scheduler:
        def get_last_lr(self):
            return [tensor(0.25)]

    assert optim._torch_last_lr(Scheduler()) == [0.25]


def test_clip_grad_value_and_device_type() -> None:
    (clipped,) = training._torch_clip_grad_value((tensor([-3.0, 0.5, 2.0]),), 1.0)
    assert close(clipped, [-1.0, 0.5, 1.0])
    assert training._torch_device_type("GPU:0") == "cuda" and training._torch_device_type("CPU") == "cpu"


def test_clipping_the_grads_parameters_hold() -> None:
    p, q = ms.Parameter(tensor([1.0, 1.0]), name="p"), ms.Parameter(tensor([0.0]), name="q")
    p.grad = tensor([3.0, 4.0])
    aliased = p.grad
    assert close(training._torch_clip_grad_norm_([p, q], 1.0), 5.0)  # q holds no grad: skipped
    assert close(aliased, [0.6, 0.8])  # in place: a name bound to the grad sees it
    training._torch_clip_grad_value_(p, 0.7)
    assert close(p.grad, [0.6, 0.7])
    assert close(training._torch_clip_grad_norm_(q, 1.0), 0.0)


# -- graph, module_methods, inplace, foreach, functional -----------------------------------
def test_xor_of_bools_and_empty_slices() -> None:
    assert graph._py_xor(True, False) is True and graph._py_xor(6, 3) == 5
    assert graph._torch_selects_nothing((4, 3), [(0, 2, 2)]) and not graph._torch_selects_nothing((4, 3), [(1, -2, None)])


def test_device_of_a_parameter_and_of_a_tensor() -> None:
    param = ms.Parameter(tensor([1.0, 2.0]), name="p")
    assert graph._torch_device(param) == graph._torch_device(tensor([1.0])) == tensor([1.0]).device


def test_tensor_items_stacks_one_element_tensors_and_numbers() -> None:
    construction = MODULES["construction"]
    rows = [construction._torch_tensor_items([tensor([[0.5]]), tensor(2.0), 0], ms.float32),
            construction._torch_tensor_items([1, tensor([3.0]), 4], ms.float32)]
    matrix = construction._torch_tensor_items(rows, ms.float32, rows=True)
    assert matrix.shape == (2, 3) and close(matrix, [[0.5, 2.0, 0.0], [1.0, 3.0, 4.0]])
    assert construction._torch_tensor_items([2, 3]).dtype == ms.int64
    assert construction._torch_tensor_items([tensor(1.5, ms.float64), 1]).dtype == ms.float64


def test_partial_subclass_calls_as_partial() -> None:
    import functools

    joined = graph._TorchPartial(graph._TorchPartial(lambda *a, **k: (a, k), 1, k=2), 3, j=4)
    assert isinstance(joined, functools.partial) and joined.args == (3,) and joined.keywords == {"j": 4}
    assert joined(5, k=6) == ((1, 3, 5), {"k": 6, "j": 4})  # the call's keywords win, as partial's do


def test_get_parameter_by_its_path() -> None:
    net = ms.nn.SequentialCell([ms.nn.Dense(2, 3)])
    assert module_methods._get_parameter(net, "0.weight") is net[0].weight


def test_filled_diagonal_wraps_tall_matrices() -> None:
    out = inplace._torch_filled_diagonal(ms.ops.zeros((5, 2)), 1.0, wrap=True)
    expected = np.zeros((5, 2))
    expected[0, 0] = expected[1, 1] = expected[3, 0] = expected[4, 1] = 1
    assert close(out, expected)


def test_out_is_written_in_place_resized_and_cast() -> None:
    out = ms.ops.zeros((0,), ms.int64)
    alias = out
    returned = inplace._torch_out(tensor([[1.7, 2.2]]), out)
    assert returned is out and alias.shape == (1, 2) and alias.dtype == ms.int64 and close(alias, [[1, 2]])
    pair = (ms.ops.zeros((2,)), ms.ops.zeros((2,), ms.int64))
    values, indices = inplace._torch_out(ms.ops.max(tensor([[1.0, 5.0], [4.0, 2.0]]), 1), pair)
    assert values is pair[0] and close(pair[0], [5.0, 4.0]) and close(pair[1], [1, 0])


def test_foreach_in_place_copies_the_results() -> None:
    tensors = [ms.Parameter(tensor([1.0, 2.0]), name="a"), ms.Parameter(tensor([3.0]), name="b")]
    out = foreach._foreach(lambda t, a: t + a, tensors, 10.0, inplace=True)
    assert out[0] is tensors[0] and close(tensors[0], [11.0, 12.0]) and close(tensors[1], [13.0])


@pytest.mark.parametrize("size_average, reduce, expected", [(None, None, "mean"), (False, None, "sum"), (True, False, "none")])
def test_legacy_reduction(size_average, reduce, expected: str) -> None:
    assert functional._legacy_reduction(size_average, reduce) == expected


# -- issue 29's unseen classes: device fields, the tensor-member resolver, private hooks ----
@pytest.mark.parametrize("device, kind, index", [("cpu", "cpu", None), ("cuda:1", "cuda", 1), ("CPU", "cpu", None),
                                                  ("GPU:0", "cuda", 0)])
def test_device_type_and_index(device: str, kind: str, index) -> None:
    assert training._torch_device_type(device) == kind
    assert training._torch_index_of_device(device) == index


def test_tensor_member_resolver() -> None:
    queries = MODULES["tensor_queries"]
    x = tensor([1.0, 2.0])
    assert queries._torch_tensor_member(x, "requires_grad") is False
    assert queries._torch_tensor_member(ms.Parameter(x, name="w"), "requires_grad") is True
    assert queries._torch_tensor_member(ms.Parameter(x, name="v", requires_grad=False), "requires_grad") is False
    to = queries._torch_tensor_member(tensor([1, 2], ms.int64), "to")
    assert to(tensor([0.5], ms.float64)).dtype == ms.float64
    assert to(ms.float16).dtype == ms.float16 and to("cpu").dtype == ms.int64 and to(dtype=ms.int32).dtype == ms.int32
    holder = type("Holder", (), {"requires_grad": "own"})()
    assert queries._torch_tensor_member(holder, "requires_grad") == "own"


def test_clone_resolver() -> None:
    """``_torch_clone``: a MindSpore tensor (a Parameter too) is copied, not aliased (its
    Tensor.clone has no CPU kernel); anything else clones itself with its arguments."""
    queries = MODULES["tensor_queries"]
    p = ms.Parameter(tensor([1.0, 2.0]), name="w")
    copy = queries._torch_clone(p, memory_format=None)
    p.set_data(tensor([5.0, 6.0]))
    assert copy.asnumpy().tolist() == [1.0, 2.0] and not isinstance(copy, ms.Parameter)
    cloned = type("Cache", (), {"clone": lambda self, deep=False: ("own", deep)})()
    assert queries._torch_clone(cloned, deep=True) == ("own", True)


def test_get_parameter_takes_torch_names() -> None:
    """``_get_parameter`` with torch's path (a tied-weights key) finds the parameter a
    converted layer names otherwise; its table of names is the tables' ``weights``."""
    from transpile.rewrites.passes.layer_params import parameter_names
    from transpile.rewrites.table_calls import tables

    methods = MODULES["module_methods"]
    names = {k: v for k, v in parameter_names(tables()).items() if k in methods._TORCH_PARAMETER_NAMES}
    assert {k: set(v) for k, v in names.items()} == {k: set(v) for k, v in methods._TORCH_PARAMETER_NAMES.items()}
    net = ms.nn.SequentialCell([ms.nn.Embedding(5, 3), ms.nn.LayerNorm((3,)), ms.nn.Dense(3, 5)])
    assert methods._get_parameter(net, "0.weight") is net[0].embedding_table
    assert methods._get_parameter(net, "1.bias") is net[1].beta
    assert methods._get_parameter(net, "2.weight") is net[2].weight
    with pytest.raises(AttributeError):
        methods._get_parameter(net, "2.running_mean")


def test_private_state_dict_hooks() -> None:
    net = ms.nn.SequentialCell([ms.nn.Dense(2, 3)])
    module_methods._torch_register_state_dict_hook(
        net, lambda cell, state, prefix, meta: {"renamed." + k: v for k, v in state.items()})
    assert sorted(net.state_dict()) == ["renamed.0.bias", "renamed.0.weight"]
    seen = []
    module_methods._torch_register_load_state_dict_pre_hook(net, lambda state, prefix, *rest: seen.append(prefix))
    net.load_state_dict({k.removeprefix("renamed."): v for k, v in net.state_dict().items()})
    assert seen == [""]


def test_python_number_of_a_numpy_scalar() -> None:
    number = MODULES["torch_functions"]._torch_python_number
    assert type(number(np.int64(5))) is int and type(number(np.float32(0.5))) is float
    assert number(3) == 3 and number(tensor([1.0])).shape == (1,)
    assert ms.ops.arange(number(np.int64(-2)), number(np.int64(3))).shape == (5,)


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_samples_gradient() -> None:
    """Straight-through: a hard sample is the one-hot of the soft sample's argmax, and its
    gradient is the soft sample's (the same noise: the same seed before each draw)."""
    logits = tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    weights = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def loss(values, hard):
        ms.set_seed(7)
        return (functional._torch_gumbel_softmax(values, 0.5, hard) * weights).sum()

    hard_grad = ms.grad(lambda values: loss(values, True))(logits)
    soft_grad = ms.grad(lambda values: loss(values, False))(logits)
    ms.set_seed(7)
    sample = functional._torch_gumbel_softmax(logits, 0.5, True).asnumpy()
    assert close(sample.sum(-1), [1.0, 1.0]) and set(np.unique(sample)) <= {0.0, 1.0}
    assert np.abs(hard_grad.asnumpy()).sum() > 0 and close(hard_grad, soft_grad.asnumpy())


def test_layer_attribute_reads_and_ties_by_torch_name() -> None:
    """One resolver for a layer parameter on a layer of a class not known where the code
    was converted: read by torch's name or the layer's own, written (weight tying) the same."""
    import mindspore as ms
    from mindspore import nn

    cells = importlib.import_module("transpile.rewrites.runtime.cells")
    read, write = cells._torch_layer_attribute, cells._torch_set_layer_attribute
    names = ("bn2d.gamma", "embedding_table", "gamma")
    emb, dense, norm, norm3d = nn.Embedding(10, 4), nn.Dense(4, 10, has_bias=False), nn.BatchNorm2d(4), nn.BatchNorm3d(4)
    assert read(emb, "weight", names) is emb.embedding_table
    assert read(dense, "weight", names) is dense.weight
    assert read(norm, "weight", names) is norm.gamma
    assert read(norm3d, "weight", names) is norm3d.bn2d.gamma
    with pytest.raises(AttributeError):
        read(nn.ReLU(), "weight", names)
    write(dense, "weight", names, emb.embedding_table)  # tied: the dense layer reads the table
    assert dense.weight is emb.embedding_table
    write(norm, "weight", names, ms.Parameter(ms.Tensor(np.full(4, 2.0, np.float32)), name="g"))
    assert np.allclose(norm.gamma.asnumpy(), 2.0)
    x = ms.Tensor(np.ones((2, 4), np.float32))
    assert dense(x).shape == (2, 10)
    assert np.allclose(dense(x).asnumpy(), x.asnumpy() @ emb.embedding_table.asnumpy().T)


# -- linalg's info, autograd ------------------------------------------------------------------
def test_cholesky_ex_info_is_the_first_minor_not_positive_definite() -> None:
    spd = np.array([[4.0, 2.0], [2.0, 3.0]])
    L, info = linalg._cholesky_ex(tensor(np.stack([spd, [[1.0, 2.0], [2.0, 1.0]], -spd])))
    assert info.asnumpy().tolist() == [0, 2, 1] and close(L[0], np.linalg.cholesky(spd))


def test_lu_info_is_the_first_zero_pivot() -> None:
    assert linalg._lu_info(tensor([[[2.0, 1.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])).asnumpy().tolist() == [2, 0]


def test_autograd_jacobian_and_vjp_of_an_inline_lambda() -> None:
    autograd = MODULES["autograd"]
    x = tensor([1.0, 2.0, 3.0])
    assert close(autograd._autograd_jacobian(lambda t: t ** 2, x), np.diag([2.0, 4.0, 6.0]))
    out, grads = autograd._autograd_vjp(lambda s, t: s * t, (x, x + 1), x)
    assert close(out, [2.0, 6.0, 12.0]) and close(grads[0], [2.0, 6.0, 12.0]) and close(grads[1], [1.0, 4.0, 9.0])


def test_bool_via_float_gives_bool_values_and_integer_indices() -> None:
    from mindspore import ops

    mask = tensor([[True, False, True], [False, False, True]], ms.bool_)
    values, indices = tensor_math._torch_bool_via_float(op=ops.sort, input_x=mask, axis=1)
    assert values.dtype == ms.bool_ and values.asnumpy().tolist() == [[False, True, True], [False, False, True]]
    assert not indices.is_floating_point()
    assert tensor_math._torch_bool_via_float(op=ops.amax, input=mask, axis=0).asnumpy().tolist() == [True, False, True]
    # beside another dtype a bool tensor is promoted to it, as torch does
    mixed = tensor_math._torch_bool_via_float(op=ops.minimum, input=mask, other=tensor([[2, 2, 0]], ms.int32))
    assert mixed.dtype == ms.int32 and mixed.asnumpy().tolist() == [[1, 0, 0], [0, 0, 0]]
    floats = tensor([3.0, -1.0])
    assert close(tensor_math._torch_bool_via_float(op=ops.sign, input=floats), [1.0, -1.0])


def test_bool_as_int64_types_the_result_as_torch_promotes_it() -> None:
    from mindspore import ops

    mask = tensor([True, False], ms.bool_)
    clamped = tensor_math._torch_bool_as_int64(op=ops.clamp, input=mask, min=0, max=1)
    assert clamped.dtype == ms.int64 and clamped.asnumpy().tolist() == [1, 0]
    assert close(tensor_math._torch_bool_as_int64(op=ops.clamp, input=mask, min=0.2, max=0.5), [0.5, 0.2])
    assert tensor_math._torch_bool_as_int64(op=ops.square, input=mask).dtype == ms.int64


def test_requires_grad_sets_a_parameters_flag_and_returns_the_tensor() -> None:
    weight = ms.Parameter(tensor([1.0, 2.0]), name="w")
    assert tensor_math._torch_requires_grad_(weight, False) is weight and weight.requires_grad is False
    assert tensor_math._torch_requires_grad_(weight).requires_grad is True
    plain = tensor([3.0])
    assert tensor_math._torch_requires_grad_(plain, requires_grad=False) is plain


def test_via_float_keeps_an_integer_dtype_and_a_bool_result() -> None:
    from mindspore import ops

    ints = tensor([-3, 0, 7], ms.int64)
    floored = tensor_math._torch_via_float(op=ops.floor, input=ints)
    assert floored.dtype == ms.int64 and floored.asnumpy().tolist() == [-3, 0, 7]
    assert tensor_math._torch_via_float(op=ops.isposinf, input=ints).dtype == ms.bool_
    outer = tensor_math._torch_via_float(op=ops.ger, input=ints, vec2=tensor([2, -1], ms.int32))
    assert outer.dtype == ms.int64 and outer.asnumpy().tolist() == [[-6, 3], [0, 0], [14, -7]]
    clipped = tensor_math._torch_via_float(op=ops.relu6, via=ms.float32, x=tensor([-2, 3, 9], ms.int32))
    assert clipped.dtype == ms.int32 and clipped.asnumpy().tolist() == [0, 3, 6]
    halves = tensor([-1.5, 2.5])
    assert close(tensor_math._torch_via_float(op=ops.floor, input=halves), [-2.0, 2.0])


def test_layer_arguments_set_only_what_the_layer_lacks() -> None:
    """torch's constructor arguments a subclass reads: set where the MindSpore layer has no
    attribute of the name, never over one it has (BatchNorm's momentum is its own)."""
    from mindspore import nn

    cells = importlib.import_module("transpile.rewrites.runtime.cells")
    norm = nn.BatchNorm2d(4, momentum=0.9, affine=False)
    own = norm.momentum
    cells._torch_layer_arguments(norm, affine=False, momentum=0.5, track_running_stats=True)
    assert norm.affine is False and norm.track_running_stats is True
    assert norm.momentum == own != 0.5


def test_refused_argument_raises_its_message() -> None:
    functions = importlib.import_module("transpile.rewrites.runtime.torch_functions")
    with pytest.raises(ValueError, match="^generator=g: no generator$"):
        functions._torch_refused_argument("generator=g: no generator")
