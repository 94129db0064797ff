"""Run-time helpers: torch's Module idioms a Cell needs help with (the cell-containers,
autograd-function and layer-params passes): a ModuleList holding None, a ModuleDict
filled with containers, an autograd
Function's ctx and bprop, a layer attribute read or written on a receiver of unknown type.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""

from mindspore import nn
import mindspore as ms


class _CellListWithNone(nn.CellList):
    """torch's ModuleList holding None (an absent optional layer), which CellList refuses:
    a cell without parameters stands for None and reads back as None (transpile MS102)."""

    class Absent(nn.Cell):
        """A None entry."""

    def __init__(self, cells=None):
        super().__init__()
        if cells is not None:
            self.extend(cells)

    def extend(self, cells):
        return super().extend([self.Absent() if cell is None else cell for cell in cells])

    def append(self, cell):
        return super().append(self.Absent() if cell is None else cell)

    def insert(self, index, cell):
        return super().insert(index, self.Absent() if cell is None else cell)

    def __setitem__(self, index, cell):
        super().__setitem__(index, self.Absent() if cell is None else cell)

    def __getitem__(self, index):
        item = super().__getitem__(index)
        if isinstance(index, slice):
            return _CellListWithNone(list(item))
        return None if isinstance(item, self.Absent) else item

    def __iter__(self):
        return (None if isinstance(cell, self.Absent) else cell for cell in super().__iter__())


class _TorchLightningModule(nn.Cell):
    """lightning's LightningModule as the base of a model (transpile MS101): a Cell with what
    such a model uses outside the training loop. ``save_hyperparameters()`` records the
    arguments of the ``__init__`` that calls it (before ``super().__init__()`` too, as
    lightning allows; names in ``ignore`` left out, or only the names given) in
    ``hparams``, an attribute-access dict. The training hooks (training_step,
    configure_optimizers, self.log) are the model's own methods, and lightning's Trainer
    is not converted."""

    class _AttributeDict(dict):
        def __getattr__(self, key):
            try:
                return self[key]
            except KeyError as e:
                raise AttributeError(key) from e

        def __setattr__(self, key, value):
            self[key] = value

    def __init__(self, *args, **kwargs):
        super().__init__()

    def save_hyperparameters(self, *args, ignore=None, frame=None, logger=True):
        import inspect

        frame = frame if frame is not None else inspect.currentframe().f_back
        info = inspect.getargvalues(frame)
        values = {name: info.locals[name] for name in info.args[1:]}
        if info.keywords:
            values.update(info.locals[info.keywords])
        if len(args) == 1 and not isinstance(args[0], str):
            values = dict(vars(args[0]) if not isinstance(args[0], dict) else args[0])
        elif args:
            values = {name: values[name] for name in args}
        ignored = {ignore} if isinstance(ignore, str) else set(ignore or ())
        hparams = self._AttributeDict({k: v for k, v in values.items() if k not in ignored})
        object.__setattr__(self, "_hparams", hparams)

    @property
    def hparams(self):
        if "_hparams" not in self.__dict__:
            object.__setattr__(self, "_hparams", self._AttributeDict())
        return self.__dict__["_hparams"]


class _CellDictOfContainers(nn.CellDict):
    """torch's ModuleDict filled by key with containers (``self.resample[k] = Block()``,
    ``Block`` a Sequential): MindSpore's CellDict refuses a CellList, SequentialCell or
    CellDict as a value; this one takes any Cell (transpile MS102)."""

    def _validate_cell_type(self, cell):
        if not isinstance(cell, nn.Cell):
            raise TypeError(f"For 'CellDict', the type of cell should be Cell, but got {type(cell).__name__}.")


class _FunctionCtx:
    """The ctx of an autograd Function converted by transpile (MS104): forward keeps on
    it what backward reads."""

    def __init__(self, *inputs):
        self.needs_input_grad = tuple(
            isinstance(x, ms.Tensor) and x.is_floating_point() for x in inputs
        )
        self.saved_tensors = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    # bprop returns a gradient for every input, and dout holds one per output
    def mark_non_differentiable(self, *tensors):
        pass

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        pass


def _function_bprop(function, inputs, out, dout):
    """bprop of an autograd Function converted by transpile (MS104): the ctx forward
    fills (forward run again on the inputs, or setup_context given the output), then
    backward with one gradient per output; one gradient per input comes back."""
    ctx = _FunctionCtx(*inputs)
    if hasattr(function, "setup_context"):
        function.setup_context(ctx, inputs, out)
    else:
        function.forward(ctx, *inputs)
    dout = dout if isinstance(dout, tuple) else (dout,)
    grads = function.backward(ctx, *dout)
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    return grads[: len(inputs)]


# a torch layer attribute read where the receiver's type is not known (a layer of a model
# built elsewhere: MONAI's net.fc.in_features on a torchvision ResNet)
def _torch_attribute(obj, torch_name, ms_name):
    """obj.<torch_name>, which a converted layer holds as <ms_name> (transpile MS204)."""
    return getattr(obj, torch_name) if hasattr(obj, torch_name) else getattr(obj, ms_name)


# a torch layer parameter (weight, bias, running_mean, ...) read or written on a layer whose
# class the converter could not tell (an init function's argument, a helper's return value,
# a layer of a container filled by names known at run time): MindSpore names it otherwise
# in some layers (BatchNorm's weight is gamma, Embedding's embedding_table)
def _torch_layer_attribute(layer, torch_name, ms_names=()):
    """layer.<torch_name>, or the first of its MindSpore names (dotted: "bn2d.gamma") the
    layer has (transpile MS204)."""
    for name in (torch_name, *ms_names):
        found = layer
        for part in name.split("."):
            found = getattr(found, part, None)
        if found is not None:
            return found
    return getattr(layer, torch_name)


def _torch_set_layer_attribute(layer, torch_name, ms_names, value):
    """layer.<torch_name> = value (weight tying), written under the name the layer has:
    torch's, else the first of its MindSpore names it has (transpile MS204)."""
    for name in (torch_name, *ms_names):
        owner, _, last = name.rpartition(".")
        target = layer
        for part in owner.split(".") if owner else ():
            target = getattr(target, part, None)
        if target is not None and getattr(target, last, None) is not None:
            setattr(target, last, value)
            return
    setattr(layer, torch_name, value)


def _torch_layer_arguments(layer, **arguments):
    """torch's layer keeps these constructor arguments as attributes (``bn.affine``); a
    subclass reads them: set those the MindSpore layer does not have (transpile MS205)."""
    for name, value in arguments.items():
        if not hasattr(layer, name):
            setattr(layer, name, value)
