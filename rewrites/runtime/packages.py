"""Run-time helpers: whether a package is installed and its version, asked by name
(``importlib.util.find_spec``, ``importlib.metadata.version``) where the name may be torch's
(MS216, ``rewrites/passes/feature_checks.toml``). The converted code runs on MindSpore, so
asked about torch, MindSpore answers: the package's availability checks take the branches
its torch code took, which the conversion turned into MindSpore code.

Each is copied into the converted files that call it (rewrites/runtime/registry.py). Each
imports its importlib submodule itself: the file binds importlib its own way (``from importlib
import metadata``), and ``import importlib`` alone loads neither submodule.
"""


def _torch_find_spec(name, package=None):
    """``importlib.util.find_spec(name, package)``, where torch is MindSpore: the converted
    code runs on it (transpile MS216)."""
    import importlib.util

    if name == "torch":
        name = "mindspore"
    return importlib.util.find_spec(name, package)


def _torch_package_version(name):
    """``importlib.metadata.version(name)``; for torch, where MindSpore is installed, the
    torch version whose API the conversion mapped: the converted code took the branches
    written for it (transpile MS216)."""
    import importlib.metadata

    if name == "torch":
        # (raises PackageNotFoundError where MindSpore is not installed)
        importlib.metadata.version("mindspore")
        return _TORCH_VERSION_MAPPED
    return importlib.metadata.version(name)


# the torch whose API the tables map (tests/test_tables.py checks the installed torch's)
_TORCH_VERSION_MAPPED = "2.13.0"
