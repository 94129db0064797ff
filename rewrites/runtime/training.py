"""Run-time helpers: a training script's torch idioms (the training-script, training-step,
param-group-lr, grad-mode and device-queries passes): state dicts of optimizers and
schedulers, gradient clipping and accumulation, an optimizer step, a group's lr written into
MindSpore's Parameter, set_grad_enabled on a value, a device's type.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore import ops


def _torch_device_type(device):
    """torch's device type ('cpu', 'cuda') of a MindSpore device name ('CPU', 'GPU') or a
    device string (transpile MS209)."""
    kind = str(device).split(":")[0].lower()
    if kind == "gpu":
        return "cuda"
    return kind


def _torch_index_of_device(device):
    """torch's device.index (None, 0, 1, ...) of a device string ('cuda:1') or a MindSpore
    device name ('CPU'): None where none is written, as torch.device("cuda").index is
    (transpile MS214)."""
    _, _, index = str(device).partition(":")
    return int(index) if index else None


def _torch_load_state_dict(optimizer, state_dict):
    """torch's optimizer.load_state_dict: a MindSpore optimizer's state (moments, step count)
    loaded by load_param_into_net, which only warns about keys it misses or does not know;
    torch refuses such a state (transpile MS214)."""
    missing, unexpected = ms.load_param_into_net(optimizer, state_dict)
    if missing or unexpected:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(optimizer).__name__}: "
                           f"missing keys {missing}, unexpected keys {unexpected}")


def _torch_scheduler_state(scheduler):
    """torch's scheduler.state_dict() (MindSpore's schedulers have none): the scheduler's
    attributes but its optimizer and functions (lr_lambda), as torch's; the learning rates
    (_last_lr, the optimizer's own Parameters: MindSpore's optimizer state leaves them out)
    as floats; a SequentialLR's schedulers each by their own state (transpile MS214)."""
    state = {}
    for key, value in vars(scheduler).items():
        if key in ("optimizer", "increase_tensor") or callable(value):
            continue
        if isinstance(value, (list, tuple)) and any(callable(v) for v in value):
            continue
        if key == "_schedulers":
            value = [_torch_scheduler_state(inner) for inner in value]
        elif key == "_last_lr":
            value = [float(lr) for lr in value]
        elif isinstance(value, ms.Parameter):
            value = value.asnumpy().item()
        state[key] = value
    return state


def _torch_load_scheduler_state(scheduler, state):
    """torch's scheduler.load_state_dict(state): the attributes set back; a Parameter the
    scheduler updates in place (last_epoch, the optimizer's learning rates) takes the value
    (transpile MS214)."""
    for key, value in state.items():
        current = getattr(scheduler, key, None)
        if key == "_schedulers":
            for inner, inner_state in zip(scheduler._schedulers, value):
                _torch_load_scheduler_state(inner, inner_state)
        elif key == "_last_lr" and isinstance(current, list):
            for lr, saved in zip(current, value):
                lr.set_data(ms.Tensor(float(saved), lr.dtype))
        elif isinstance(current, ms.Parameter):
            current.set_data(ms.Tensor(float(value), current.dtype))
        else:
            setattr(scheduler, key, value)


def _torch_clip_grad_norm(grads, max_norm, norm_type=2.0):
    """torch.nn.utils.clip_grad_norm_ on a tuple of gradients: the clipped gradients and their
    total norm (transpile MS211)."""
    norm_type = float(norm_type)
    if norm_type == float("inf"):
        total = ops.stack([ops.abs(g).max() for g in grads]).max()
    else:
        total = ops.stack([(ops.abs(g) ** norm_type).sum() for g in grads]).sum() ** (1.0 / norm_type)
    scale = ops.clamp(max_norm / (total + 1e-6), max=1.0)
    return tuple(g * scale for g in grads), total


def _torch_clip_grad_value(grads, clip_value):
    """torch.nn.utils.clip_grad_value_ on a tuple of gradients (transpile MS211)."""
    return tuple(ops.clamp(g, -clip_value, clip_value) for g in grads)


def _torch_held_grads(parameters):
    """The parameters given (one tensor or an iterable) that hold a ``.grad``: those the
    converted code put there (transpile MS211, where the file reads ``.grad``)."""
    if isinstance(parameters, ms.Tensor):
        parameters = [parameters]
    return [p for p in parameters if getattr(p, "grad", None) is not None]


def _torch_clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_ called on parameters outside a training step: the
    ``.grad`` each holds scaled in place so that their total norm is at most max_norm; the
    total norm before clipping returned (0 when none holds one)."""
    held = _torch_held_grads(parameters)
    if not held:
        return ms.Tensor(0.0, ms.float32)
    clipped, total = _torch_clip_grad_norm(tuple(p.grad for p in held), max_norm, norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total)):
        raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from `parameters` is non-finite")
    for p, grad in zip(held, clipped):
        p.grad.assign_value(grad.astype(p.grad.dtype))
    return total


def _torch_clip_grad_value_(parameters, clip_value, foreach=None):
    """torch.nn.utils.clip_grad_value_ called on parameters outside a training step: the
    ``.grad`` each holds clamped in place to [-clip_value, clip_value]."""
    held = _torch_held_grads(parameters)
    for p, grad in zip(held, _torch_clip_grad_value(tuple(p.grad for p in held), clip_value)):
        p.grad.assign_value(grad)


def _torch_accumulate_grads(optimizer, grads):
    """Adds gradients to those the optimizer holds, as torch's backward() adds into .grad until
    zero_grad() (transpile MS211)."""
    held = getattr(optimizer, "accumulated_grads", None)
    optimizer.accumulated_grads = grads if held is None else tuple(h + g for h, g in zip(held, grads))


def _torch_accumulate_param_grads(optimizer, grads):
    """Adds gradients to those the optimizer holds, as torch's backward() adds into .grad until
    zero_grad(), and gives each parameter its sum as .grad, where torch keeps it (transpile MS211)."""
    held = getattr(optimizer, "accumulated_grads", None)
    optimizer.accumulated_grads = grads if held is None else tuple(h + g for h, g in zip(held, grads))
    for parameter, grad in zip(optimizer.parameters, optimizer.accumulated_grads):
        parameter.grad = grad


def _torch_zero_grad(optimizer):
    """torch's optimizer.zero_grad(): no gradient held, none on the parameters (transpile MS211)."""
    optimizer.accumulated_grads = None
    for parameter in optimizer.parameters:
        parameter.grad = None


def _torch_optimizer_step(optimizer):
    """What step() does in torch: applies the gradients held since zero_grad(), if any
    (transpile MS211)."""
    held = getattr(optimizer, "accumulated_grads", None)
    if held is not None:
        optimizer(held)


def _torch_set_group_lr(group, value):
    """torch's ``group["lr"] = value``: MindSpore's optimizer and its schedulers read the lr
    from a Parameter, so the value is assigned into it (transpile MS215)."""
    lr = group["lr"]
    if isinstance(lr, ms.Parameter):
        ops.assign(lr, ms.Tensor(float(value), lr.dtype))
    else:
        group["lr"] = value


def _torch_grad_enabled_value(enabled, value):
    """value, cut from the gradient unless enabled (torch.set_grad_enabled(enabled) around
    its computation; transpile MS213)."""
    return value if enabled else ops.stop_gradient(value)
