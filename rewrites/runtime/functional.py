"""Run-time helpers: torch.nn.functional (tables/functional.toml) where MindSpore's ops differ:
normalize with p known when it runs, batch norm by the batch's statistics, pools' int64
indices and 1-D pools' results, losses' legacy size_average/reduce known when they run.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


# F.normalize with any p but a literal 2: x / max(||x||_p, eps), torch's own formula
def _torch_normalize(input, p, dim, eps):
    """torch.nn.functional.normalize for p other than 2 (transpile MS201):
    ops.L2Normalize is the 2-norm only."""
    return input / ops.clamp(ops.norm(input, ord=p, dim=dim, keepdim=True), min=eps)


# F.batch_norm without running statistics (timm's ScaledStdConv2d standardises its weight
# so): the batch's own statistics, over every axis but the channels (axis 1), biased
# variance, as torch does; weight and bias broadcast along the channels.
def _torch_batch_norm_batch_stats(input, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.batch_norm with no running statistics: normalised by the
    batch's own mean and biased variance per channel (transpile MS201)."""
    axes = (0,) + tuple(range(2, input.ndim))
    mean = input.mean(axes, keep_dims=True)
    centred = input - mean
    out = centred / ops.sqrt((centred * centred).mean(axes, keep_dims=True) + eps)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _int64_indices(pair):
    """(values, indices) of a pool with torch's int64 indices (MindSpore's are int32)."""
    return pair[0], pair[1].astype(ms.int64)


def _squeezed_pair(pair):
    """(values, indices) of a 1-D pool done on a height-1 image, squeezed back to 1-D."""
    return ops.squeeze(pair[0], 2), ops.squeeze(pair[1], 2)


# softmax in a file that writes an infinity (a mask filled with -inf): MindSpore 2.10's
# CPU softmax over a row that is -inf everywhere gives zeros there and, depending on the
# run, other numbers in OTHER rows; torch gives that row NaN and the others their own.
def _torch_softmax(input, axis=-1, dtype=None):
    """softmax as torch's: a row that is -inf everywhere gives NaN, the other rows theirs."""
    if dtype is not None:
        input = ops.cast(input, dtype)
    dead = input.max(axis=axis, keepdims=True) == float("-inf")
    return ops.where(dead, float("nan"), ops.softmax(ops.where(dead, 0.0, input), axis))


# F.scaled_dot_product_attention's weights with a mask: torch gives zeros for a query row
# the mask keeps nothing of; MindSpore 2.10's CPU softmax over a row of -inf alone gives
# zeros there and, depending on the run, other numbers in OTHER rows of the tensor. Such
# rows are softmaxed as zeros and then zeroed, so the kernel never sees them.
def _torch_attention_weights(scores):
    """softmax over the last axis, as torch's attention does: 0 where a row is all -inf."""
    kept = scores.max(axis=-1, keepdims=True) > float("-inf")
    return ops.where(kept, ops.softmax(ops.where(kept, scores, 0.0), axis=-1), 0.0)


def _legacy_reduction(size_average, reduce):
    """torch's reduction for the deprecated size_average/reduce arguments."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"


# Losses MindSpore lacks or whose CPU kernels refuse torch's arguments, composed of
# elementwise ops, with torch's reductions.
def _torch_reduced(loss, reduction):
    """A loss per element reduced as torch's ``reduction`` says ('none', 'mean', 'sum')."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _torch_soft_margin_loss(input, target, reduction="mean"):
    """torch's soft_margin_loss: log(1 + exp(-y x)), computed without overflow."""
    z = -target * input
    return _torch_reduced(ops.maximum(z, 0) + ops.log(1 + ops.exp(-ops.abs(z))), reduction)


def _torch_pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    """torch's pairwise_distance: the p-norm of x1 - x2 + eps over the last axis."""
    return ops.vector_norm(x1 - x2 + eps, p, -1)


def _torch_triplet_hinge(positive_distance, negative_distance, swap_distance, margin, reduction):
    """The triplet loss of its distances: max(d(a, p) - d(a, n) + margin, 0), d(a, n)
    replaced by d(p, n) where smaller when that is given (torch's swap)."""
    if swap_distance is not None:
        negative_distance = ops.minimum(negative_distance, swap_distance)
    return _torch_reduced(ops.clamp(positive_distance - negative_distance + margin, min=0.0), reduction)


def _torch_triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=None, margin=1.0,
                                             swap=False, reduction="mean"):
    """torch's triplet_margin_with_distance_loss: the triplet loss of distance_function
    (pairwise_distance when None)."""
    distance = _torch_pairwise_distance if distance_function is None else distance_function
    swap_distance = distance(positive, negative) if swap else None
    return _torch_triplet_hinge(distance(anchor, positive), distance(anchor, negative), swap_distance, margin,
                                reduction)


def _torch_triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                               reduction="mean"):
    """torch's triplet_margin_loss: the triplet loss of the p-norm pairwise distance
    (MindSpore's TripletMarginLoss has no CPU kernel)."""
    swap_distance = _torch_pairwise_distance(positive, negative, p, eps) if swap else None
    return _torch_triplet_hinge(_torch_pairwise_distance(anchor, positive, p, eps),
                                _torch_pairwise_distance(anchor, negative, p, eps), swap_distance, margin, reduction)


def _torch_multilabel_margin_loss(input, target, reduction="mean"):
    """torch's multilabel_margin_loss: per sample, over the target classes j (target's
    leading entries up to the first -1) and the other classes i, the sum of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes."""
    single = input.ndim == 1
    if single:
        input, target = input.reshape(1, -1), target.reshape(1, -1)
    classes = input.shape[-1]
    valid = ops.cumsum((target < 0).astype(ms.int32), -1) == 0
    index = ops.where(valid, target, ops.zeros_like(target)).astype(ms.int64)
    picked = ops.one_hot(index, classes, ops.ones((), input.dtype), ops.zeros((), input.dtype))
    is_target = (picked * valid.astype(input.dtype).expand_dims(-1)).sum(-2) > 0
    target_scores = ops.gather_elements(input, 1, index)
    margins = ops.clamp(1 - (target_scores.expand_dims(-1) - input.expand_dims(-2)), min=0.0)
    counted = valid.expand_dims(-1) & ~is_target.expand_dims(-2)
    loss = (margins * counted.astype(input.dtype)).sum((-2, -1)) / classes
    return _torch_reduced(loss[0] if single else loss, reduction)


def _torch_poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    """torch's poisson_nll_loss: exp(x) - t x (log_input), or x - t log(x + eps); full
    adds Stirling's t log t - t + log(2 pi t) / 2 where t > 1. Integer or bool tensors are
    computed in float32, as torch does (MindSpore's CPU Exp and Log refuse them)."""
    input, target = (t if t.is_floating_point() else t.astype(ms.float32) for t in (input, target))
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        safe = ops.where(target > 1, target, ops.ones_like(target))
        stirling = safe * ops.log(safe) - safe + 0.5 * ops.log(2 * 3.141592653589793 * safe)
        loss = loss + ops.where(target > 1, stirling, ops.zeros_like(stirling))
    return _torch_reduced(loss, reduction)


def _torch_binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """torch's binary_cross_entropy: -(t log x + (1 - t) log(1 - x)), each log at least
    -100 as torch clamps it, times weight broadcast to the input (MindSpore's CPU kernel
    reads past a weight of another shape)."""
    loss = -(target * ops.clamp(ops.log(input), min=-100.0) + (1 - target) * ops.clamp(ops.log(1 - input), min=-100.0))
    if weight is not None:
        loss = loss * weight
    return _torch_reduced(loss, reduction)


def _torch_gumbel_softmax(logits, tau=1.0, hard=False, dim=-1):
    """torch's gumbel_softmax: softmax((logits + g) / tau) with g Gumbel(0, 1) noise
    (its distribution, not torch's draws); hard: the one-hot of its argmax, with the
    soft sample's gradient (y_hard - stop_gradient(y_soft) + y_soft)."""
    uniform = ops.clamp(ops.rand_like(logits), min=1e-20)
    gumbels = -ops.log(-ops.log(uniform))
    soft = ops.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    axis = dim % logits.ndim
    index = soft.argmax(axis)
    one_hot = ops.one_hot(index, logits.shape[axis], ops.ones((), soft.dtype), ops.zeros((), soft.dtype), axis)
    return one_hot - ops.stop_gradient(soft) + soft
