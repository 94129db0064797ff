"""Differential cases derived from the table tests' own cases (never written one at a time):
the forms of issue 33 that the tables' cases do not show, one case per entry and form.

* ``module-path``: an entry that another module re-exports (rewrites/tables/reexports.toml:
  ``torch.nn.L1Loss`` is also ``torch.nn.modules.loss.L1Loss``) gets its first case that
  calls it by its public name, called by the re-exporting path instead.
* ``integer``: an entry whose cases feed floating-point tensors but none an integer or bool
  one gets its first such case with those inputs multiplied by 3 and cast to int64 (the
  measurement form_gaps.toml records), unless form_gaps.toml lists it with why not.

Each derived case runs like its source: in a Suite with the source's header, or as a layer
case (the weights copied, eval mode).
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from transpile.rewrites.table_calls import tables

from . import form_coverage, test_training_script
from .harness import Case, Suite
from .layer_harness import LayerCase, convert_cases, run_case

GAPS_FILE = Path(__file__).with_name("form_gaps.toml")
SOURCE_SUITES, SOURCE_LAYER_LISTS = form_coverage.differential_sources(skip=frozenset({Path(__file__).stem}))
# test_training_script runs its cases with torch.cuda patched to answer as on a GPU: the
# functions a module path reaches are not patched, so its cases are not derived from
SOURCE_SUITES = [s for s in SOURCE_SUITES if s is not test_training_script.SUITE]
SOURCE_CASES = [c for s in SOURCE_SUITES for c in s.cases] + [c for cases in SOURCE_LAYER_LISTS for c in cases]


def module_paths() -> dict[str, str]:
    """entry -> the re-exporting spelling its derived case calls it by: the longest, which is
    the defining module's where torch defines the name (``torch.nn.modules.loss.L1Loss``
    rather than ``torch.nn.modules.L1Loss``); one of the same last name, reached by attributes
    from ``torch`` (``torch.nn.parallel.data_parallel`` is a function: its module is imported
    from, never reached as an attribute)."""
    chosen: dict[str, str] = {}
    for private, public in tables().reexports.items():
        if private.rsplit(".", 1)[1] != public.rsplit(".", 1)[1] or not _reached(private):
            continue
        if public not in chosen or (len(private), private) > (len(chosen[public]), chosen[public]):
            chosen[public] = private
    return chosen


def _reached(dotted: str) -> bool:
    import torch

    value = torch
    for part in dotted.split(".")[1:]:
        value = getattr(value, part, None)
    return value is not None


def _spellings(api: str) -> list[str]:
    """How a case's code may spell the entry: its name, or through the header's aliases."""
    out = [api]
    for alias, module in form_coverage.HEADER_ALIASES.items():
        if api.startswith(module + ".") and alias != module:
            out.append(alias + api[len(module):])
    return out


def respelled(code: str, api: str, private: str) -> str | None:
    """``code`` with every call of ``api`` by its public spelling made through ``private``;
    None when the code calls it no such way."""
    pattern = "|".join(re.escape(s) for s in sorted(_spellings(api), key=len, reverse=True))
    new, count = re.subn(rf"(?<![\w.])(?:{pattern})(?=\s*\()", private, code)
    return new if count else None


def _as_integers(value):
    """A float array times 3 cast to int64 (also inside lists and tuples); others as they are."""
    if isinstance(value, np.ndarray):
        return (value * 3).astype(np.int64) if value.dtype.kind == "f" else value
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_as_integers(v) for v in value)
    return value


def integer_gaps() -> set[str]:
    """The entries form_gaps.toml lists with why they have no integer-input case."""
    with GAPS_FILE.open("rb") as fh:
        return {name for names in tomllib.load(fh)["integer"].values() for name in names}


def owing_integer(cases) -> list[str]:
    """Entries the source cases feed floats but never an integer or bool."""
    return sorted(api for api, row in form_coverage.coverage(cases).items()
                  if "float" in row["forms"] and "integer" not in row["forms"])


def derived_suites(integer_entries: set[str]) -> tuple[list[Suite], list[LayerCase]]:
    """The derived Case suites (one per source header) and layer cases."""
    paths = module_paths()
    by_suite: dict[tuple[str, bool], list[Case]] = {}
    done: set[tuple[str, str]] = set()
    for suite in SOURCE_SUITES:
        for case in suite.cases:
            api = form_coverage.qualified(case.api)
            bucket = by_suite.setdefault((suite.header, suite.from_file), [])
            if api in paths and (api, "module-path") not in done:
                code = respelled(case.code, api, paths[api])
                if code is not None:
                    bucket.append(dataclasses.replace(case, code=code, form="module-path"))
                    done.add((api, "module-path"))
            if api in integer_entries and (api, "integer") not in done:
                kinds = form_coverage.input_kinds(case.inputs)
                if "f" in kinds and "c" not in kinds:
                    bucket.append(dataclasses.replace(case, inputs=tuple(_as_integers(v) for v in case.inputs),
                                                      form="integer"))
                    done.add((api, "integer"))
    layer_cases = []
    for cases in SOURCE_LAYER_LISTS:
        for case in cases:
            api = case.entry
            if api in paths and (api, "module-path") not in done:
                expr = respelled(case.expr, api, paths[api])
                if expr is not None:
                    layer_cases.append(dataclasses.replace(case, expr=expr, primary=api))
                    done.add((api, "module-path"))
    suites = [Suite(cases, header=header, from_file=from_file)
              for (header, from_file), cases in by_suite.items() if cases]
    return suites, layer_cases


INTEGER_ENTRIES = set(owing_integer(SOURCE_CASES)) - integer_gaps()
SUITES, LAYER_CASES = derived_suites(INTEGER_ENTRIES)
CASES = [(suite, case) for suite in SUITES for case in suite.cases]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c.api}[{c.form}]" for _, c in CASES])
def test_derived_case(index: int) -> None:
    suite, case = CASES[index]
    suite.check(case)


@pytest.fixture(scope="module")
def converted_layers():
    return convert_cases(LAYER_CASES)


@pytest.mark.parametrize("index", range(len(LAYER_CASES)), ids=[c.id for c in LAYER_CASES])
def test_derived_layer_case(converted_layers, index: int) -> None:
    run_case(converted_layers, index, LAYER_CASES[index])


def test_respelled() -> None:
    assert respelled("nn.L1Loss()(a, b)", "torch.nn.L1Loss", "torch.nn.modules.loss.L1Loss") == \
        "torch.nn.modules.loss.L1Loss()(a, b)"
    assert respelled("torch.unique(a, dim=0)", "torch.unique", "torch.functional.unique") == \
        "torch.functional.unique(a, dim=0)"
    assert respelled("a.unique()", "torch.unique", "torch.functional.unique") is None
    assert respelled("nn.L1LossX()", "torch.nn.L1Loss", "p") is None
