"""``transpile parity --emit-test``: a standalone pytest file from ``templates/parity_test.py.j2``.

The file needs torch, MindSpore and numpy, not transpile: the weight mapping (from
the tables) and each submodule's inputs (recorded by the parity run) are written
into it. It holds a test of the whole model and a unit test per Cell (one submodule
per class), each in PYNATIVE and GRAPH mode.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .runner import SampleResult

TEMPLATE = "parity_test.py.j2"


class EmitError(ValueError):
    """The parity run does not give what a test needs."""


def _relative(target: Path, start: Path) -> str:
    try:
        return os.path.relpath(target.resolve(), start.resolve())
    except ValueError:  # another drive
        return str(target.resolve())


def render_test(result: SampleResult, test_path: str | os.PathLike, *, command: str = "") -> str:
    """The test file's text for one parity result (its first mode must have recorded
    the submodules: ``run_parity(..., cells=True)``). Raises EmitError."""
    import jinja2

    from ..version import __version__

    spec = result.spec
    if spec is None:
        raise EmitError("no spec")
    if spec.compare != "allclose":
        raise EmitError(f"an emitted test compares with allclose; this spec uses compare = {spec.compare!r}")
    if spec.gradients:
        raise EmitError("an emitted test compares the outputs only; this spec also compares gradients (gradients = true)")
    if result.converted_path is None:
        raise EmitError("the test imports the converted model from its file: give --converted FILE "
                        "(write it with `transpile convert`)")
    if spec.kind == "module" and result.cells is None:
        raise EmitError(f"the parity run stopped before it could record the model's submodules: {result.verdict}")
    test_dir = Path(test_path).parent
    cells = [{**c, "codes": list(zip(c["inputs"], c["labels"]))} for c in (result.cells or ())]
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
                             lstrip_blocks=True, autoescape=False)
    env.filters["py"] = repr
    text = resources.files("transpile.templates").joinpath(TEMPLATE).read_text(encoding="utf-8")
    return env.from_string(text).render(
        version=__version__,
        command=command or "transpile parity ... --emit-test PATH",
        original_name=spec.source.name,
        converted_name=result.converted_path.name,
        original_rel=_relative(spec.source, test_dir),
        converted_rel=_relative(result.converted_path, test_dir),
        entry=spec.entry,
        kind=spec.kind,
        seed=spec.seed,
        atol=spec.tolerance,
        rtol=spec.rtol,
        inputs=[(s.code("rng"), s.label()) for s in spec.inputs],
        weights=list(result.weights),
        cells=cells,
    )


def emit_test(result: SampleResult, test_path: str | os.PathLike, *, command: str = "") -> Path:
    """Write the test file (whole or not at all); returns its path. Raises EmitError."""
    path = Path(test_path)
    if path.suffix != ".py":
        raise EmitError(f"{path}: a test file ends in .py (pytest collects test_*.py)")
    text = render_test(result, path, command=command)
    compile(text, str(path), "exec")  # a template bug must not leave a broken file
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
