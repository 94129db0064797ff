"""Hooks of tables/module_methods.toml: nn.Module methods (MS103 module-methods)."""
from __future__ import annotations

import libcst as cst

from ..syntax import emitted, keyword_call
from .registry import hook


@hook()
def no_op(ctx, entry, args, receiver) -> cst.BaseExpression:
    """A method with nothing to do on a Cell: torch returns None. MS103 removes the call
    where it stands as a statement."""
    return cst.Name("None")


REQUIRES_GRAD = '''
def {name}(cell, requires_grad=True):
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
'''

# train()/eval() on a value not known to be a Module (a training function's parameter):
# decided at run time, any other object's own method called as written
TRAIN_MODE = '''
def {name}(obj, *args, **kwargs):
    """torch's Module.train(mode) on a value that may be a Cell (set_train) or another
    object with a train method of its own (called as written)."""
    if hasattr(obj, "set_train"):
        return obj.set_train(*args, **kwargs)
    return obj.train(*args, **kwargs)
'''
EVAL_MODE = '''
def {name}(obj, *args, **kwargs):
    """torch's Module.eval() on a value that may be a Cell (set_train(False)) or another
    object with an eval method of its own (called as written)."""
    if hasattr(obj, "set_train"):
        return obj.set_train(False)
    return obj.eval(*args, **kwargs)
'''

GET_SUBMODULE = '''
def {name}(cell, target):
    """torch's Module.get_submodule: the child reached by a dotted path ("" is the Cell)."""
    for item in target.split(".") if target else ():
        cell = getattr(cell, item)
    return cell
'''

GET_PARAMETER = '''
def {name}(cell, target):
    """torch's Module.get_parameter: the parameter at a dotted path ("fc.weight")."""
    path, _, item = target.rpartition(".")
    return getattr({get_submodule}(cell, path), item)
'''


def _helper_call(ctx, name: str, source: str, receiver, args) -> cst.Call:
    return keyword_call(emitted(ctx, name, source), {"cell": receiver, **args})


@hook()
def requires_grad_(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.requires_grad_(False)`` -> ``_requires_grad_(cell=m, requires_grad=False)``."""
    return _helper_call(ctx, "_requires_grad_", REQUIRES_GRAD, receiver, args)


@hook()
def get_submodule(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.get_submodule("0.fc")`` -> ``_get_submodule(cell=m, target="0.fc")``."""
    return _helper_call(ctx, "_get_submodule", GET_SUBMODULE, receiver, args)


@hook()
def get_parameter(ctx, entry, args, receiver) -> cst.BaseExpression:
    """``m.get_parameter("fc.weight")`` -> ``_get_parameter(cell=m, target="fc.weight")``."""
    submodule = emitted(ctx, "_get_submodule", GET_SUBMODULE).value
    return _helper_call(ctx, "_get_parameter", GET_PARAMETER.replace("{get_submodule}", submodule), receiver, args)
