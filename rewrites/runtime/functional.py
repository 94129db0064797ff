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


def _legacy_reduction(size_average, reduce):
    """torch's reduction for the deprecated size_average/reduce arguments."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"
