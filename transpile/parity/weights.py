"""Copy weights from a torch module into the converted MindSpore cell.

Names follow the module tree (``layer1.0.weight``); per layer type the tables give
the renames (BatchNorm ``weight -> gamma``, ``num_batches_tracked`` dropped). A
tensor whose element count matches but whose shape differs is reshaped (Conv1d's
``(out, in, k)`` is MindSpore's ``(out, in, 1, k)``).

Layers held in a plain Python list attribute (``self.layers = [nn.Linear(...)]``)
are not registered by torch, so ``state_dict()`` misses them; the converter turns
such lists into ``nn.CellList``, whose parameters are ``layers.0.weight``. Their
tensors are included here under those names.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class WeightMap:
    mapping: dict[str, str]  # torch state_dict key -> MindSpore parameter name
    dropped: list[str] = field(default_factory=list)  # keys with no counterpart by design


def _layer_renames(module) -> dict[str, str]:
    from transpile.rewrites.apply import tables

    t = tables()
    for cls in type(module).__mro__:
        entry = t.lookup(f"torch.nn.{cls.__name__}")
        if entry is not None and cls.__module__.startswith("torch.nn"):
            return dict(entry.weights)
    return {}


def _list_held(torch_module) -> dict[str, object]:
    """Modules kept in plain list/tuple attributes (torch does not register them),
    by the name ``nn.CellList`` gives them: ``layers.0``, with their submodules."""
    import torch

    registered = {id(m) for m in torch_module.modules()}
    found: dict[str, object] = {}

    def walk(prefix: str, module) -> None:
        for name, sub in module.named_modules(prefix=prefix):
            for attr, value in vars(sub).items():
                if attr.startswith("_") or not isinstance(value, (list, tuple)) or not value:
                    continue
                if not all(isinstance(v, torch.nn.Module) for v in value):
                    continue
                for i, item in enumerate(value):
                    if id(item) in registered:
                        continue  # an alias of a registered layer: named where it is registered
                    registered.update(id(m) for m in item.modules())
                    base = f"{name}.{attr}.{i}" if name else f"{attr}.{i}"
                    found.update(dict(item.named_modules(prefix=base)))
                    walk(base, item)

    walk("", torch_module)
    return found


def torch_state(torch_module, keep_vars: bool = False) -> dict:
    """``state_dict()`` plus the tensors of layers held in plain lists (see above)."""
    state = dict(torch_module.state_dict(keep_vars=keep_vars))
    for name, module in _list_held(torch_module).items():
        for local, tensor in module.state_dict(keep_vars=keep_vars).items():
            if "." not in local:  # the module's own tensors; children come with their own names
                state.setdefault(f"{name}.{local}", tensor)
    return state


def weight_map(torch_module) -> WeightMap:
    """torch state_dict keys -> MindSpore parameter names, from the tables."""
    mapping: dict[str, str] = {}
    dropped: list[str] = []
    modules = {**_list_held(torch_module), **dict(torch_module.named_modules())}
    for key in torch_state(torch_module, keep_vars=True):
        prefix, _, local = key.rpartition(".")
        renames = _layer_renames(modules.get(prefix, torch_module))
        new_local = renames.get(local, local)
        if new_local == "":
            dropped.append(key)
            continue
        mapping[key] = f"{prefix}.{new_local}" if prefix else new_local
    return WeightMap(mapping, dropped)


def ms_parameters(ms_cell) -> dict:
    """MindSpore parameters by their path in the cell tree (``layers.0.weight``).

    ``Parameter.name`` usually equals the path, but not always: cells appended to an
    ``nn.CellList()`` that was empty when it was attached get ``0.weight``, and
    ``parameters_dict()`` (keyed by ``.name``) then even loses duplicates. Paths are
    unique, so they win; names are kept as a fallback.
    """
    return {**ms_cell.parameters_dict(), **dict(ms_cell.parameters_and_names())}


def copy_weights(torch_module, ms_cell) -> list[str]:
    """Copy every mapped tensor; return the torch keys that found no parameter."""
    import mindspore
    import numpy as np

    wm = weight_map(torch_module)
    params = ms_parameters(ms_cell)
    state = torch_state(torch_module)
    missing = []
    for key, name in wm.mapping.items():
        param = params.get(name)
        if param is None:
            missing.append(key)
            continue
        value = state[key].detach().cpu().numpy()
        if tuple(value.shape) != tuple(param.shape):
            if value.size != int(np.prod(param.shape)):
                missing.append(key)
                continue
            value = value.reshape(param.shape)
        param.set_data(mindspore.Tensor(value.astype(mindspore.dtype_to_nptype(param.dtype))))
    return missing
