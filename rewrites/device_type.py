"""torch's device type ('cpu', 'cuda') of a MindSpore device: the function emitted beside the
code by MS209 (``x.device.type``, ``x.is_cuda``) and by MS214 (``device.type`` of a device
the script picks)."""
from __future__ import annotations

HELPER = "_torch_device_type"
HELPER_SOURCE = '''
def {name}(device):
    """torch's device type ('cpu', 'cuda') of a MindSpore device name ('CPU', 'GPU') or a
    device string (transpile MS209)."""
    kind = str(device).split(":")[0].lower()
    if kind == "gpu":
        return "cuda"
    return kind
'''
