"""Run-time helpers: torch.nn.Module methods (tables/module_methods.toml) a MindSpore Cell
lacks or means otherwise: requires_grad_, train()/eval() on a value that may not be a Cell,
get_submodule, get_parameter.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""
from .cells import _torch_layer_attribute

from mindspore.common.initializer import Normal, initializer


def _requires_grad_(cell, requires_grad=True):
    """torch's Module.requires_grad_: every parameter's flag set (not BatchNorm's moving
    statistics); the Cell returned. A parameter passed instead has its own flag set (a
    tensor has requires_grad_ too)."""
    if not hasattr(cell, "get_parameters"):
        cell.requires_grad = requires_grad
        return cell
    # BatchNorm's moving statistics are Parameters in MindSpore, buffers in torch: they
    # never train (made trainable, an optimizer built from trainable_params would decay them)
    statistics = {id(getattr(sub, name)) for _, sub in cell.cells_and_names()
                  for name in ("moving_mean", "moving_variance") if getattr(sub, name, None) is not None}
    for parameter in cell.get_parameters():
        if id(parameter) not in statistics:
            parameter.requires_grad = requires_grad
    return cell


# train()/eval() on a value not known to be a Module (a training function's parameter):
# decided at run time, any other object's own method called as written
def _torch_train_mode(obj, *args, **kwargs):
    """torch's Module.train(mode) on a value that may be a Cell (set_train) or another
    object with a train method of its own (called as written)."""
    if hasattr(obj, "set_train"):
        return obj.set_train(*args, **kwargs)
    return obj.train(*args, **kwargs)


def _torch_eval_mode(obj, *args, **kwargs):
    """torch's Module.eval() on a value that may be a Cell (set_train(False)) or another
    object with an eval method of its own (called as written)."""
    if hasattr(obj, "set_train"):
        return obj.set_train(False)
    return obj.eval(*args, **kwargs)


def _get_submodule(cell, target):
    """torch's Module.get_submodule: the child reached by a dotted path ("" is the Cell)."""
    for item in target.split(".") if target else ():
        cell = getattr(cell, item)
    return cell


def _get_parameter(cell, target):
    """torch's Module.get_parameter: the parameter at a dotted path ("fc.weight"). The path
    is torch's (a name kept as data: transformers' tied-weights keys): a parameter the
    converted layer names otherwise (an Embedding's weight is its embedding_table, a
    LayerNorm's weight and bias its gamma and beta) is found under MindSpore's name."""
    path, _, item = target.rpartition(".")
    return _torch_layer_attribute(_get_submodule(cell, path), item, _TORCH_PARAMETER_NAMES.get(item, ()))


# torch's parameter names -> MindSpore's for the converted layers that name them otherwise
# (the tables' ``weights``; tests/test_runtime.py checks them against the tables)
_TORCH_PARAMETER_NAMES = {
    "weight": ("embedding_table", "gamma", "bn2d.gamma", "w"),
    "bias": ("beta", "bn2d.beta"),
    "running_mean": ("moving_mean", "bn2d.moving_mean"),
    "running_var": ("moving_variance", "bn2d.moving_variance"),
}


def _torch_register_state_dict_hook(cell, hook):
    """torch's private Module._register_state_dict_hook: hook(module, state_dict, prefix,
    local_metadata) runs after the state dict is filled, and a dict it returns is the state
    dict. The Cell's post-hook must return None, so the returned dict's items replace the
    state dict's (torch keeps a new dict a child's hook returns only at the top)."""
    def post_hook(module, state_dict, prefix, local_metadata):
        result = hook(module, state_dict, prefix, local_metadata)
        if result is not None and result is not state_dict:
            items = list(result.items())
            state_dict.clear()
            state_dict.update(items)

    return cell.register_state_dict_post_hook(post_hook)


def _torch_register_load_state_dict_pre_hook(cell, hook, with_module=False):
    """torch's private Module._register_load_state_dict_pre_hook: hook(state_dict, prefix,
    local_metadata, strict, missing_keys, unexpected_keys, error_msgs), with the module first
    when with_module; the Cell's public pre-hook always passes it first."""
    if with_module:
        return cell.register_load_state_dict_pre_hook(hook)
    return cell.register_load_state_dict_pre_hook(lambda module, *args: hook(*args))


def _torch_train_override(cls):
    """A Cell class whose torch ``train(mode)`` override became ``set_train``: torch's
    Module.train calls every child's ``train``, so the override runs when a parent's mode
    changes too; MindSpore's set_train sets the children's flag through
    ``add_flags_recursive`` without calling their ``set_train``. Here a parent's
    ``set_train`` reaching an instance runs its override, once: the override's own call of
    its base's ``set_train`` goes on to the children as MindSpore's does."""
    override = cls.set_train
    running = set()  # ids of the instances whose override is running
    # the next add_flags_recursive in the class's method resolution order (Cell's, or a base's)
    base_flags = next(k.__dict__["add_flags_recursive"] for k in cls.__mro__[1:] if "add_flags_recursive" in k.__dict__)

    def set_train(self, *args, **kwargs):
        running.add(id(self))
        try:
            return override(self, *args, **kwargs)
        finally:
            running.discard(id(self))

    def add_flags_recursive(self, **flags):
        if "training" not in flags or id(self) in running:
            return base_flags(self, **flags)
        mode = flags.pop("training")
        self.set_train(mode)
        return base_flags(self, **flags) if flags else self

    set_train.__doc__ = override.__doc__
    if cls.__dict__.get("train") is override:  # torch's name, bound in the class body
        cls.train = set_train
    cls.set_train = set_train
    cls.add_flags_recursive = add_flags_recursive
    return cls


def _torch_embedding_reset_parameters(layer):
    """torch's Embedding.reset_parameters on a MindSpore Embedding: its table drawn again
    from N(0, 1), torch's (MindSpore's is N(0, 0.01)), the padding row zero."""
    table = layer.embedding_table
    values = initializer(Normal(sigma=1.0), table.shape, table.dtype).init_data()
    if getattr(layer, "padding_idx", None) is not None:
        values[layer.padding_idx] = 0
    table.set_data(values)
