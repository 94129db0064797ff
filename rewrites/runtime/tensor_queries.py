"""Run-time helpers: tensor queries (tables/tensor_queries.toml): a tensor's device index.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""


def _torch_device_index(device):
    """torch's Tensor.get_device() from MindSpore's device name: -1 on the CPU, else the
    index the name gives ("GPU:1"), 0 when it gives none (transpile)."""
    kind, _, index = str(device).partition(":")
    if kind.lower() == "cpu":
        return -1
    return int(index) if index else 0
