"""Run-time helpers: torch.utils (tables/torch_utils.toml): checkpoint_sequential as the calls
in sequence.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""


def _checkpoint_sequential(functions, input):
    """torch's checkpoint_sequential without the checkpoints: a list of blocks in turn,
    a sequential container as itself."""
    if isinstance(functions, (list, tuple)):
        for function in functions:
            input = function(input)
        return input
    return functions(input)
