"""Run-time helpers: torch.optim and its schedulers (tables/optim.toml, optim_methods.toml)
where MindSpore's differ: parameter groups, Adam's options known when it runs, the
schedulers MindSpore lacks or that leave the momentum alone, a last_lr read, an int step.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

import mindspore as ms
from mindspore.experimental.optim.lr_scheduler import CyclicLR, LRScheduler


def _torch_optimizer_params(params):
    """torch's optimizer params as MindSpore's: the Parameters that require a gradient
    (torch skips a frozen one, which gets none; MindSpore's optimizer would still decay
    it, and BatchNorm's moving statistics are Parameters there), in each param group
    too; (name, parameter) pairs give their parameter."""

    def trainable(items):
        items = [items] if isinstance(items, ms.Parameter) else items
        return [p for p in (i[1] if isinstance(i, tuple) else i for i in items) if p.requires_grad]

    params = list(params)
    if params and isinstance(params[0], dict):
        return [dict(group, params=trainable(group["params"])) for group in params]
    return trainable(params)


def _torch_adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, amsgrad=False, maximize=False):
    """torch's Adam, decided when it is built: MindSpore's AdamW without decay when no
    group asks for an L2 weight_decay (torch's formula, amsgrad included), else
    MindSpore's Adam (eps added inside the bias correction; it ignores amsgrad)."""
    params = list(params)
    groups = params if params and isinstance(params[0], dict) else []
    if not weight_decay and not any(group.get("weight_decay") for group in groups):
        return ms.experimental.optim.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=0.0, amsgrad=amsgrad,
                                           maximize=maximize)
    if amsgrad:
        raise ValueError("torch's Adam with amsgrad and an L2 weight_decay has no faithful MindSpore optimizer")
    return ms.experimental.optim.Adam(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize)


class _TorchOneCycleLR(LRScheduler):
    """torch's OneCycleLR (MindSpore has none), its schedule written out: the lr rises
    from max_lr / div_factor to max_lr over pct_start of the steps, then anneals to
    max_lr / div_factor / final_div_factor (three_phase: back to the start first);
    with cycle_momentum the momentum (Adam's beta1) moves the other way, between
    max_momentum and base_momentum."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        groups = optimizer.param_groups
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.cosine = anneal_strategy == "cos"
        peaks = self._per_group(max_lr, groups, "max_lr")
        lows = self._per_group(base_momentum, groups, "base_momentum")
        highs = self._per_group(max_momentum, groups, "max_momentum")
        self.points = [{"start": peak / div_factor, "peak": peak, "end": peak / div_factor / final_div_factor,
                        "high": high, "low": low} for peak, low, high in zip(peaks, lows, highs)]
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self.phases = [(up, "start", "peak", "high", "low"), (2 * up, "peak", "start", "low", "high"),
                           (total_steps - 1, "start", "end", "high", "high")]
        else:
            self.phases = [(up, "start", "peak", "high", "low"), (total_steps - 1, "peak", "end", "low", "high")]
        self.momentum_key = self._momentum_key(optimizer) if cycle_momentum else None
        if last_epoch == -1:
            for group, point in zip(groups, self.points):
                group["initial_lr"] = point["start"]
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, fraction):
        import math

        if self.cosine:
            return end + (start - end) / 2.0 * (math.cos(math.pi * fraction) + 1)
        return (end - start) * fraction + start

    def get_lr(self):
        step = int(self.last_epoch)
        lrs = []
        for group, point in zip(self.optimizer.param_groups, self.points):
            begin = 0
            for i, (last, lr_from, lr_to, momentum_from, momentum_to) in enumerate(self.phases):
                if step <= last or i == len(self.phases) - 1:
                    fraction = (step - begin) / (last - begin)
                    lrs.append(ms.Tensor(self._anneal(point[lr_from], point[lr_to], fraction), ms.float32))
                    if self.momentum_key:
                        self._set_momentum(group, self._anneal(point[momentum_from], point[momentum_to], fraction))
                    break
                begin = last
        return lrs

    def _set_momentum(self, group, momentum):
        """torch's cycled momentum: SGD's momentum, or beta1 of Adam's family."""
        if self.momentum_key == "betas":
            group["betas"] = (momentum, group["betas"][1])
        else:
            group["momentum"] = momentum

    @staticmethod
    def _momentum_key(optimizer):
        if "betas" in optimizer.defaults:
            return "betas"
        if "momentum" in optimizer.defaults:
            return "momentum"
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")

    @staticmethod
    def _per_group(value, groups, what):
        if isinstance(value, (list, tuple)):
            if len(value) != len(groups):
                raise ValueError(f"expected {len(groups)} values for {what}, got {len(value)}")
            return [float(v) for v in value]
        return [float(value)] * len(groups)


class _TorchCyclicLR(CyclicLR):
    """torch's CyclicLR with cycle_momentum (its default): MindSpore's cycles the lr
    only; the momentum (Adam's beta1) goes from max_momentum at base_lr to
    base_momentum at max_lr, in step with the lr, as torch's does."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        groups = optimizer.param_groups
        self.momentum_key = self._momentum_key(optimizer) if cycle_momentum else None
        self.momenta = list(zip(self._per_group(base_momentum, groups, "base_momentum"),
                                self._per_group(max_momentum, groups, "max_momentum")))
        self.lr_bounds = list(zip(self._per_group(base_lr, groups, "base_lr"), self._per_group(max_lr, groups, "max_lr")))
        super().__init__(optimizer, base_lr, max_lr, step_size_up, step_size_down, mode, gamma, scale_fn,
                         scale_mode, last_epoch)

    def step(self, epoch=None):
        result = super().step(epoch)
        if self.momentum_key:
            for group, lr, (low_lr, high_lr), (low, high) in zip(
                    self.optimizer.param_groups, self._last_lr, self.lr_bounds, self.momenta):
                fraction = (float(lr) - low_lr) / (high_lr - low_lr)
                self._set_momentum(group, high - (high - low) * fraction)
        return result

    def _set_momentum(self, group, momentum):
        """torch's cycled momentum: SGD's momentum, or beta1 of Adam's family."""
        if self.momentum_key == "betas":
            group["betas"] = (momentum, group["betas"][1])
        else:
            group["momentum"] = momentum

    @staticmethod
    def _momentum_key(optimizer):
        if "betas" in optimizer.defaults:
            return "betas"
        if "momentum" in optimizer.defaults:
            return "momentum"
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")

    @staticmethod
    def _per_group(value, groups, what):
        if isinstance(value, (list, tuple)):
            if len(value) != len(groups):
                raise ValueError(f"expected {len(groups)} values for {what}, got {len(value)}")
            return [float(v) for v in value]
        return [float(value)] * len(groups)


def _torch_step_as_int(lr_lambda):
    """A torch lr_lambda (or one per group) called with the step as an int, as torch
    calls it: MindSpore's scheduler passes a float32 0-d Tensor, which a list index or
    range() refuses."""
    if isinstance(lr_lambda, (list, tuple)):
        return [_torch_step_as_int(function) for function in lr_lambda]
    return lambda step: lr_lambda(int(step))


def _torch_last_lr(scheduler):
    """torch's scheduler.get_last_lr(): a list of floats (MindSpore's gives 0-d Tensors,
    which a format spec like :.6f refuses)."""
    return [float(lr) for lr in scheduler.get_last_lr()]
