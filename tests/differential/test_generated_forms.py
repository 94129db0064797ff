"""Differential cases derived from the table tests' own cases (never written one at a time):
the forms of issue 33 that the tables' cases do not show, one case per entry and form.

* ``module-path``: an entry that another module re-exports (rewrites/tables/reexports.toml:
  ``torch.nn.L1Loss`` is also ``torch.nn.modules.loss.L1Loss``) gets its first case that
  calls it by its public name, called by the re-exporting path instead.
* ``integer``: an entry whose cases feed floating-point tensors but none an integer or bool
  one gets its first such case (a layer case's too) with those inputs multiplied by 3 and
  cast to int64 (the measurement form_gaps.toml records), unless form_gaps.toml lists it
  with why not.

Each derived case runs like its source: in a Suite with the source's header, or as a layer
case (the weights copied, eval mode).
"""
from __future__ import annotations

import ast
import dataclasses
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from transpile.rewrites.table_calls import tables

from . import form_coverage, test_training_script
from .harness import Case, Suite
from .layer_harness import HEADER, Input, LayerCase, convert_cases, run_case

GAPS_FILE = Path(__file__).with_name("form_gaps.toml")
SOURCE_SUITES, SOURCE_LAYER_LISTS = form_coverage.differential_sources(skip=frozenset({Path(__file__).stem}))
# test_training_script runs its cases with torch.cuda patched to answer as on a GPU: the
# functions a module path reaches are not patched, so its cases are not derived from
SOURCE_SUITES = [s for s in SOURCE_SUITES if s is not test_training_script.SUITE]
SOURCE_CASES = [c for s in SOURCE_SUITES for c in s.cases] + [c for cases in SOURCE_LAYER_LISTS for c in cases]


def module_paths() -> dict[str, str]:
    """entry -> the re-exporting spelling its derived case calls it by: one of the same last
    name, reached by attributes from ``torch`` where one is (a dotted call), else imported
    (``torch.optim`` deletes its submodules' names, ``torch.nn.utils.weight_norm`` is the
    function: ``from torch.optim.adam import Adam``); then the longest, which is the defining
    module's where torch defines the name (``torch.nn.modules.loss.L1Loss`` rather than
    ``torch.nn.modules.L1Loss``)."""
    chosen: dict[str, str] = {}
    for private, public in tables().reexports.items():
        if private.rsplit(".", 1)[1] != public.rsplit(".", 1)[1]:
            continue
        rank = (_reached(private), len(private), private)
        if public not in chosen or rank > (_reached(chosen[public]), len(chosen[public]), chosen[public]):
            chosen[public] = private
    return chosen


def _reached(dotted: str) -> bool:
    import torch

    value = torch
    for part in dotted.split(".")[1:]:
        value = getattr(value, part, None)
    return value is not None


def _spellings(api: str, header: str) -> list[str]:
    """How a case's code may spell the entry: its name, through the header's module aliases,
    or the bare name the header imports from the entry's module."""
    out = [api]
    for alias, module in form_coverage.HEADER_ALIASES.items():
        if api.startswith(module + ".") and alias != module:
            out.append(alias + api[len(module):])
    module, name = api.rsplit(".", 1)
    out += [alias.asname or alias.name for node in ast.walk(ast.parse(header)) if isinstance(node, ast.ImportFrom)
            and node.module == module for alias in node.names if alias.name == name]
    return out


def respelled(code: str, api: str, private: str, header: str = "") -> str | None:
    """``code`` with every call of ``api`` by its public spelling made through ``private``
    (dotted where attributes reach it, else by the name ``from`` imports: the caller puts the
    import before the code); None when the code calls it no such way."""
    spelled = private if _reached(private) else private.rsplit(".", 1)[1]
    pattern = "|".join(re.escape(s) for s in sorted(_spellings(api, header), key=len, reverse=True))
    new, count = re.subn(rf"(?<![\w.])(?:{pattern})(?=\s*\()", spelled, code)
    return new if count else None


def _import_of(private: str) -> str:
    """The statement a respelled code needs first ('' for a dotted spelling)."""
    module, name = private.rsplit(".", 1)
    return "" if _reached(private) else f"from {module} import {name}"


def _with_import(code: str, statement: str) -> str:
    """A case's code (an expression, or statements) with ``statement`` run first."""
    if not statement:
        return code
    text = code.strip("\n")
    statements = "\n" in text or re.match(r"\s*(return|raise)\b", text)
    return f"{statement}\n    " + (text if statements else f"return {text}")


def _as_integers(value):
    """A float array times 3 cast to int64, its zeros made 1 (an integer division by zero
    raises in torch: a divisor drawn near 0 would test that), also inside lists and tuples;
    others as they are."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            return value
        integers = (value * 3).astype(np.int64)
        integers[integers == 0] = 1
        return integers
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_as_integers(v) for v in value)
    return value


def _integer_input(given: Input) -> Input:
    """A layer case's input drawn as it was, then as ``_as_integers`` makes it."""
    return Input(lambda rng, make=given.make: _as_integers(make(rng)), f"integers({given.label})", given.ms_dtype)


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
                code = respelled(case.code, api, paths[api], suite.header)
                if code is not None:
                    code = _with_import(code, _import_of(paths[api]))
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
            if api in integer_entries and (api, "integer") not in done:
                kinds = form_coverage.input_kinds([i.make(np.random.default_rng(0)) for i in case.inputs])
                if "f" in kinds and "c" not in kinds:
                    layer_cases.append(dataclasses.replace(case, inputs=tuple(map(_integer_input, case.inputs))))
                    done.add((api, "integer"))
            if api in paths and (api, "module-path") not in done:
                expr = respelled(case.expr, api, paths[api], HEADER)
                if expr is not None:
                    prelude = "\n".join(filter(None, [_import_of(paths[api]), case.prelude]))
                    layer_cases.append(dataclasses.replace(case, expr=expr, prelude=prelude, primary=api))
                    done.add((api, "module-path"))
    suites = [Suite(cases, header=header, from_file=from_file)
              for (header, from_file), cases in by_suite.items() if cases]
    return suites, layer_cases


# entries whose table says why an integer input does not give torch's result
# (``integer_inputs``): their derived case is run to keep the mark true
MARKED = {e.source for e in tables().all_entries() if e.integer_inputs and not e.unsupported}
INTEGER_ENTRIES = set(owing_integer(SOURCE_CASES)) - integer_gaps() - MARKED
SUITES, LAYER_CASES = derived_suites(INTEGER_ENTRIES)
CASES = [(suite, case) for suite in SUITES for case in suite.cases]
# tuples, not lists: form_coverage counts the forms of module-level lists of cases, and
# these cases fail by design
_marked_suites, _marked_layers = derived_suites(MARKED & set(owing_integer(SOURCE_CASES)))
MARKED_CASES = tuple((suite, case) for suite in _marked_suites for case in suite.cases if case.form == "integer")
MARKED_LAYER_CASES = tuple(c for c in _marked_layers
                           if c.entry in MARKED and any(i.label.startswith("integers(") for i in c.inputs))
del _marked_suites, _marked_layers


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
    assert respelled("nn.L1LossX()", "torch.nn.L1Loss", "torch.nn.modules.loss.L1Loss") is None
    # torch.optim deletes its submodules' names: the code imports the class
    header = "import torch\nfrom torch.optim import SGD, Adam\n"
    assert respelled("SGD([p], 0.1)", "torch.optim.SGD", "torch.optim.sgd.SGD", header) == "SGD([p], 0.1)"
    assert _with_import("SGD([p], 0.1)", _import_of("torch.optim.sgd.SGD")) == \
        "from torch.optim.sgd import SGD\n    return SGD([p], 0.1)"
    assert _with_import("x = 1\n    return x", "") == "x = 1\n    return x"


@pytest.mark.parametrize("index", range(len(MARKED_CASES)), ids=[c.api for _, c in MARKED_CASES])
def test_marked_entry_still_fails_on_integers(index: int) -> None:
    """An entry marked ``integer_inputs`` in its table: its derived integer case fails (the
    converted code raises, or gives another result). Where it passes, delete the mark."""
    suite, case = MARKED_CASES[index]
    with pytest.raises(Exception):
        suite.check(case)


@pytest.fixture(scope="module")
def converted_marked_layers():
    return convert_cases(MARKED_LAYER_CASES)


@pytest.mark.parametrize("index", range(len(MARKED_LAYER_CASES)), ids=[c.id for c in MARKED_LAYER_CASES])
def test_marked_layer_still_fails_on_integers(converted_marked_layers, index: int) -> None:
    with pytest.raises(Exception):
        run_case(converted_marked_layers, index, MARKED_LAYER_CASES[index])
