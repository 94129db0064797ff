"""Differential tests for tables/annotations.toml ("annotations.toml"): torch types in
annotations (MS210).

Python evaluates a function's annotations when it defines the function (unless the module
says ``from __future__ import annotations``), so every converted type must exist under
MindSpore. Each entry has a case: a function annotated with the type (a parameter, a
string forward reference and the return) is defined and called inside forward, in torch
and in the converted module, and the results are compared. ``typing.get_type_hints`` of
the converted functions (which also resolves the forward references) must name the
entry's MindSpore type.
"""
from __future__ import annotations

import builtins
import typing

import pytest

from transpile import convert_code
from transpile.rewrites.table_calls import tables

from .harness import DEFAULT_HEADER, Case, Suite, arr
from .symbols import resolve

ANNOTATIONS = dict(tables().annotations)
# the modules some entries are spelled through, which ``import torch`` leaves unloaded
HEADER = DEFAULT_HEADER + "import torch.optim.optimizer\nimport torch.distributions.distribution\n"


def signature(name: str, source: str) -> str:
    """A function header whose parameter, forward reference and return are annotated ``source``."""
    return f'def {name}(x: torch.Tensor, hint: {source} = None, hints: "list[{source}]" = None) -> {source}:'


# (the harness dedents the lines after the first)
CASES = [Case(source, f"{signature('f', source)}\n        return x * 2\n    return f(a)", (arr(2, 3),), "annotated")
         for source in sorted(ANNOTATIONS)]
SUITE = Suite(CASES, header=HEADER)


@pytest.mark.parametrize("case", SUITE.cases, ids=SUITE.ids)
def test_api(case: Case) -> None:
    SUITE.check(case)


def test_every_entry_has_a_case() -> None:
    assert set(ANNOTATIONS) <= SUITE.apis


def _target(name: str):
    return getattr(builtins, name) if "." not in name else resolve(name)


@pytest.mark.parametrize("future", [False, True], ids=["evaluated", "postponed"])
def test_converted_annotations_name_the_mindspore_types(future: bool) -> None:
    sources = sorted(ANNOTATIONS)
    text = ("from __future__ import annotations\n" if future else "") + HEADER + "\n\n" + "\n\n".join(
        f"{signature(f'f_{i}', source)}\n    return x * 2\n" for i, source in enumerate(sources))
    result = convert_code(text, filename="annotated.py")
    assert not result.failed and "torch" not in result.code, result.code
    namespace = {"__name__": "annotated"}
    exec(compile(result.code, "annotated.py", "exec"), namespace)
    import mindspore

    for i, source in enumerate(sources):
        target = _target(ANNOTATIONS[source])
        hints = typing.get_type_hints(namespace[f"f_{i}"])
        assert hints["hint"] is target and hints["return"] is target, (source, hints)
        assert hints["hints"] == list[target] and hints["x"] is mindspore.Tensor, (source, hints)
