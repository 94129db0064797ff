"""Map torch tensors onto the converted MindSpore cell: for parity and for checkpoints.

Names follow the module tree (``layer1.0.weight``); per layer type the tables give
the renames (BatchNorm ``weight -> gamma``, ``num_batches_tracked`` dropped). A
tensor whose element count matches but whose shape differs is reshaped (Conv1d's
``(out, in, k)`` is MindSpore's ``(out, in, 1, k)``). Tied tensors (one tensor under
two names, as torch's ``state_dict`` lists it) go in once when MindSpore ties them too.
Targets are MindSpore parameters and persistent buffers (``Cell.register_buffer``).

Layers held in a plain Python list attribute (``self.layers = [nn.Linear(...)]``)
are not registered by torch, so ``state_dict()`` misses them; the converter turns
such lists into ``nn.CellList``, whose parameters are ``layers.0.weight``. Their
tensors are included here under those names.

One plan serves both uses: ``plan_transfer`` decides what goes where from names and
shapes only; ``apply_transfer`` copies into a live cell (parity) and
``checkpoint_entries`` gives the entries of a ``.ckpt`` (``transpile weights``).
The framework imports are local: this module is imported by the parent process too.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read as a state dict."""


@dataclass
class WeightMap:
    mapping: dict[str, str]  # torch state_dict key -> MindSpore parameter path
    dropped: list[str] = field(default_factory=list)  # keys with no counterpart by design


def _layer_renames(module) -> dict[str, str]:
    from transpile.rewrites.table_calls import tables

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


def torch_modules(torch_module) -> dict[str, object]:
    """Every submodule by the path MindSpore will give it, list-held ones included."""
    return {**_list_held(torch_module), **dict(torch_module.named_modules())}


def torch_state(torch_module, keep_vars: bool = False) -> dict:
    """``state_dict()`` plus the tensors of layers held in plain lists (see above).

    A module whose class writes its own ``state_dict`` (opacus' DPMultiheadAttention gives
    torch's ``in_proj_weight`` layout, composed from the layers it holds) is taken by the
    tensors it holds, the names the converted cell's parameters have."""
    state = dict(torch_module.state_dict(keep_vars=keep_vars))
    for name, module in torch_module.named_modules():
        if _writes_own_state_dict(module):
            prefix = f"{name}." if name else ""
            state = {k: v for k, v in state.items() if not k.startswith(prefix)}
            state.update({prefix + k: v if keep_vars else v.detach() for k, v in _held_tensors(module)})
    for name, module in _list_held(torch_module).items():
        for local, tensor in module.state_dict(keep_vars=keep_vars).items():
            if "." not in local:  # the module's own tensors; children come with their own names
                state.setdefault(f"{name}.{local}", tensor)
    return state


def _writes_own_state_dict(module) -> bool:
    import torch

    return type(module).state_dict is not torch.nn.Module.state_dict


def _held_tensors(module):
    """(name, tensor) of the parameters and persistent buffers ``module`` holds, its
    children's included."""
    yield from module.named_parameters()
    for owner_name, owner in module.named_modules():
        for local, buffer in owner.named_buffers(recurse=False):
            if buffer is not None and local not in owner._non_persistent_buffers_set:
                yield (f"{owner_name}.{local}" if owner_name else local), buffer


def weight_map(torch_module) -> WeightMap:
    """torch state_dict keys -> MindSpore parameter names, from the tables."""
    mapping: dict[str, str] = {}
    dropped: list[str] = []
    modules = torch_modules(torch_module)
    for key in torch_state(torch_module, keep_vars=True):
        # each module's table renames apply to the names it holds: its tensors
        # (BatchNorm weight -> gamma) and its children (TransformerEncoderLayer linear1 -> dense1)
        parts, path = key.split("."), []
        for i, part in enumerate(parts):
            owner = modules.get(".".join(parts[:i]), torch_module) if i else torch_module
            path.append(_layer_renames(owner).get(part, part))
        if path[-1] == "":
            dropped.append(key)
            continue
        mapping[key] = ".".join(path)
    return WeightMap(mapping, dropped)


def aliases(torch_module) -> dict[str, str]:
    """Tied tensors: each key that shares its tensor with an earlier key -> that key."""
    first: dict[int, str] = {}
    out: dict[str, str] = {}
    for key, tensor in torch_state(torch_module, keep_vars=True).items():
        canonical = first.setdefault(id(tensor), key)
        if canonical != key:
            out[key] = canonical
    return out


# -- MindSpore side ---------------------------------------------------------------

@dataclass
class Target:
    """A MindSpore parameter or persistent buffer that a torch tensor can fill."""

    path: str  # in the cell tree: layers.0.weight
    name: str  # what a checkpoint calls it: Parameter.name (a buffer: its path)
    shape: tuple[int, ...]
    kind: str  # "parameter" or "buffer"
    ref: object  # the Parameter, or (owner cell, local name) for a buffer

    def tensor(self, value):
        """``value`` (numpy) as a MindSpore tensor of the target's dtype."""
        import mindspore

        current = self.ref if self.kind == "parameter" else self.ref[0]._buffers[self.ref[1]]
        return mindspore.Tensor(value.astype(mindspore.dtype_to_nptype(current.dtype)))

    def assign(self, value) -> None:
        if self.kind == "parameter":
            self.ref.set_data(self.tensor(value))
        else:
            owner, local = self.ref
            owner.register_buffer(local, self.tensor(value))


def ms_parameters(ms_cell) -> dict:
    """MindSpore parameters by path (``layers.0.weight``), and by ``Parameter.name``
    where that differs (see ``ms_targets``)."""
    return {**ms_cell.parameters_dict(), **dict(ms_cell.parameters_and_names())}


def ms_targets(ms_cell) -> dict[str, Target]:
    """MindSpore parameters and persistent buffers by their path in the cell tree.

    ``Parameter.name`` usually equals the path, but not always: cells appended to an
    ``nn.CellList()`` that was empty when it was attached get ``0.weight``, and
    ``parameters_dict()`` (keyed by ``.name``) then even loses duplicates. Paths are
    unique, so they win; ``plan_transfer`` falls back to names.
    """
    targets = {path: Target(path, p.name, tuple(p.shape), "parameter", p)
               for path, p in ms_cell.parameters_and_names()}
    if hasattr(ms_cell, "named_buffers"):
        cells = dict(ms_cell.cells_and_names())
        for path, buf in ms_cell.named_buffers():
            owner_path, _, local = path.rpartition(".")
            owner = cells.get(owner_path)
            if owner is None or local in getattr(owner, "_non_persistent_buffers_set", ()):
                continue
            targets.setdefault(path, Target(path, path, tuple(buf.shape), "buffer", (owner, local)))
    return targets


# -- the plan ---------------------------------------------------------------------

@dataclass
class Transfer:
    """What goes where. ``complete`` when every tensor found a home and every
    MindSpore parameter or buffer gets one."""

    copies: list[tuple[str, str]] = field(default_factory=list)  # (torch key, MindSpore path)
    reshaped: list[str] = field(default_factory=list)  # torch keys whose shape changes (same size)
    dropped: list[str] = field(default_factory=list)  # keys with no counterpart by design
    tied: list[tuple[str, str]] = field(default_factory=list)  # (key, the key it shares its tensor with)
    unmapped: list[tuple[str, str]] = field(default_factory=list)  # (key, why it has no home)
    missing: list[str] = field(default_factory=list)  # keys the model has and the source lacks
    unfilled: list[str] = field(default_factory=list)  # MindSpore paths nothing is copied into

    @property
    def complete(self) -> bool:
        return not self.unmapped and not self.unfilled

    @property
    def renamed(self) -> list[tuple[str, str]]:
        return [(k, p) for k, p in self.copies if k != p]

    def to_dict(self) -> dict:
        return {"copies": self.copies, "reshaped": self.reshaped, "dropped": self.dropped, "tied": self.tied,
                "unmapped": self.unmapped, "missing": self.missing, "unfilled": self.unfilled}

    @classmethod
    def from_dict(cls, data: dict) -> "Transfer":
        return cls(**{k: [tuple(v) if isinstance(v, list) else v for v in data.get(k, [])]
                      for k in ("copies", "reshaped", "dropped", "tied", "unmapped", "missing", "unfilled")})


def plan_transfer(shapes: Mapping[str, tuple[int, ...]], wm: WeightMap, targets: Mapping[str, Target],
                  tied: Mapping[str, str] | None = None) -> Transfer:
    """Decide, from names and shapes only, where each source tensor goes.

    ``shapes``: the source's tensors (the model's own, or a checkpoint's); ``wm``: the
    torch model's names -> MindSpore paths; ``tied``: key -> the key it shares with.
    """
    tied = dict(tied or {})
    by_name = {t.name: t for t in targets.values()}
    plan = Transfer()
    done: dict[str, str] = {}  # torch key -> path
    filled: dict[str, str] = {}  # path -> torch key
    ordered = sorted(shapes, key=lambda k: k in tied)  # canonical keys first
    for key in ordered:
        if key in wm.dropped:
            plan.dropped.append(key)
            continue
        if key not in wm.mapping:
            plan.unmapped.append((key, "the model has no tensor of this name"))
            continue
        path = wm.mapping[key]
        target = targets.get(path) or by_name.get(path)
        if target is None:
            if tied.get(key) in done:
                plan.tied.append((key, tied[key]))
            else:
                plan.unmapped.append((key, f"no MindSpore parameter or buffer {path}"))
            continue
        shape, want = tuple(shapes[key]), target.shape
        if shape != want and _size(shape) != _size(want):
            plan.unmapped.append((key, f"shape {list(shape)} does not fit MindSpore {target.path} {list(want)}"))
            continue
        if target.path in filled:  # two names, one MindSpore tensor
            plan.tied.append((key, filled[target.path]))
            continue
        if shape != want:
            plan.reshaped.append(key)
        plan.copies.append((key, target.path))
        done[key] = target.path
        filled[target.path] = key
    present = {tied.get(k, k): k for k in shapes}  # one key per group of tied tensors
    for key, path in wm.mapping.items():
        if key in shapes:
            continue
        source = present.get(tied.get(key, key))
        if source is None:
            plan.missing.append(key)
            continue
        target = targets.get(path) or by_name.get(path)  # a tied tensor the source stores once
        if target is not None and target.path not in filled and _size(shapes[source]) == _size(target.shape):
            plan.copies.append((source, target.path))
            filled[target.path] = source
        plan.tied.append((key, source))
    plan.unfilled = [path for path in targets if path not in filled]
    return plan


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def as_numpy(value):
    """A torch tensor (or array) as a numpy array; bfloat16 goes through float32."""
    import numpy as np

    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)


def apply_transfer(plan: Transfer, values: Mapping[str, object], targets: Mapping[str, Target]) -> None:
    """Copy the planned tensors into the live MindSpore cell."""
    for key, path in plan.copies:
        target = targets[path]
        target.assign(as_numpy(values[key]).reshape(target.shape))


def checkpoint_entries(plan: Transfer, values: Mapping[str, object], targets: Mapping[str, Target]) -> list[dict]:
    """``mindspore.save_checkpoint`` entries: the names ``load_param_into_net`` matches."""
    out = []
    for key, path in plan.copies:
        target = targets[path]
        out.append({"name": target.name, "data": target.tensor(as_numpy(values[key]).reshape(target.shape))})
    return out


def copy_weights(torch_module, ms_cell) -> list[str]:
    """Copy every mapped tensor; return the torch keys that found no parameter."""
    plan, targets = plan_for_model(torch_module, ms_cell)
    apply_transfer(plan, torch_state(torch_module), targets)
    return [key for key, _ in plan.unmapped]


def plan_for_model(torch_module, ms_cell, shapes: Mapping[str, tuple[int, ...]] | None = None):
    """The plan from ``torch_module``'s tensors (or the given source shapes) into ``ms_cell``."""
    targets = ms_targets(ms_cell)
    if shapes is None:
        shapes = {k: tuple(v.shape) for k, v in torch_state(torch_module, keep_vars=True).items()}
    return plan_transfer(shapes, weight_map(torch_module), targets, aliases(torch_module)), targets


# -- checkpoint files ---------------------------------------------------------------

_NESTED = ("state_dict", "model_state_dict", "model", "module", "net", "network")


def load_torch_checkpoint(path: str | Path, model_keys=()) -> tuple[dict, list[str]]:
    """A state dict from ``.pt``/``.pth``/``.bin`` (torch.load, weights only) or
    ``.safetensors``, with notes on what was unwrapped. Raises CheckpointError."""
    import torch

    path = Path(path)
    notes: list[str] = []
    if path.suffix == ".safetensors":
        try:
            from safetensors.torch import load_file
        except ImportError as exc:
            raise CheckpointError(f"{path}: reading .safetensors needs the safetensors package "
                                  "(pip install safetensors)") from exc
        try:
            return dict(load_file(str(path))), notes
        except Exception as exc:
            raise CheckpointError(f"{path}: not a safetensors file: {exc}") from exc
    try:
        obj = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        raise CheckpointError(f"{path}: torch.load(weights_only=True) failed: {first} "
                              "(save the model's state_dict(), not a pickled model)") from exc
    if isinstance(obj, torch.nn.Module):
        obj = obj.state_dict()
    if not isinstance(obj, Mapping):
        raise CheckpointError(f"{path}: holds a {type(obj).__name__}, not a state dict")
    if not any(isinstance(v, torch.Tensor) for v in obj.values()):
        for key in _NESTED:
            if isinstance(obj.get(key), Mapping):
                notes.append(f"the state dict is the checkpoint's {key!r} entry")
                obj = obj[key]
                break
        else:
            raise CheckpointError(f"{path}: no tensors at the top level nor under {', '.join(_NESTED)} "
                                  f"(keys: {', '.join(map(str, list(obj)[:8]))})")
    state = {str(k): v for k, v in obj.items() if isinstance(v, torch.Tensor)}
    skipped = [str(k) for k, v in obj.items() if not isinstance(v, torch.Tensor)]
    if skipped:
        notes.append(f"skipped entries that are not tensors: {', '.join(skipped)}")
    model_keys = set(model_keys)
    if state and all(k.startswith("module.") for k in state) and not any(k.startswith("module.") for k in model_keys):
        state = {k[len("module."):]: v for k, v in state.items()}
        notes.append("removed the 'module.' prefix (a DataParallel checkpoint)")
    return state, notes
