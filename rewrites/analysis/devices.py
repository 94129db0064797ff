"""Device moves (``x.cpu()``, ``x.to(device)``): calls the conversion drops, on a tensor
and a Module alike (MS202 drops them on any receiver; MS301 sees a mask through them)."""
from __future__ import annotations

import libcst as cst

from ..hooks.tensor_methods import looks_like_device

# x.cpu(), x.cuda() -> x on any receiver: MindSpore places tensors and cells alike (set_device)
MOVES_ONLY = frozenset({"cpu", "cuda"})


def is_device_move(method: str, call: cst.Call) -> bool:
    """``x.cpu()``, ``x.cuda()``, ``x.to(device)``: the conversion drops the call."""
    if method in MOVES_ONLY:
        return True
    if method != "to" or not call.args:
        return False

    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value not in ("device", "non_blocking")):
            return False
        if arg.keyword is None or arg.keyword.value == "device":
            if not looks_like_device(arg.value):
                return False
    return True
