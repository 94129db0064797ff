"""Run-time helpers: torch._foreach_<op> (tables/torch_foreach.toml): the element function over
each tensor of a list and the matching items of the other arguments.

Each is copied into the converted files that call it (rewrites/runtime/registry.py);
the module imports with MindSpore installed, for its tests.
"""


def _foreach(function, tensors, *others, inplace=False):
    """torch._foreach_<op>: function(tensor, item, ...) for each tensor of the list and the
    matching item of each other argument (a list or tuple gives one item per tensor, a
    number or a single tensor goes to every tensor); in place, each result is copied into
    its tensor and the tensors are returned (as torch's Python binding does)."""
    per_tensor = [o if isinstance(o, (list, tuple)) else [o] * len(tensors) for o in others]
    results = [function(t, *items) for t, *items in zip(tensors, *per_tensor)]
    if not inplace:
        return results
    for t, result in zip(tensors, results):
        t.copy_(result)
    return list(tensors)
