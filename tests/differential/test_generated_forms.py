"""Differential cases derived from the table tests' own cases (never written one at a time):
the forms of issue 33 that the tables' cases do not show, one case per entry and form.

* ``module-path``: an entry that another module re-exports (rewrites/tables/reexports.toml:
  ``torch.nn.L1Loss`` is also ``torch.nn.modules.loss.L1Loss``) gets its first case that
  calls it by its public name, called by the re-exporting path instead.
* ``integer``: an entry whose cases feed floating-point tensors but none an integer or bool
  one gets its first such case (a layer case's too) with those inputs multiplied by 3 and
  cast to int64 (the measurement form_gaps.toml records), unless form_gaps.toml lists it
  with why not.
* ``bool``: likewise with a bool input, the float inputs made the masks of their positive
  elements (form_gaps.toml's ``[bool]``).

Each derived case runs like its source: in a Suite with the source's header, or as a layer
case (the weights copied, eval mode).
"""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import numpy as np
import pytest

from transpile.rewrites.table_calls import tables

from . import form_coverage, test_training_script
from .spellings import import_of, with_import, module_paths, respelled
from .harness import Case, Suite
from .layer_harness import HEADER, Input, LayerCase, convert_cases, run_case

GAPS_FILE = Path(__file__).with_name("form_gaps.toml")
# test_softmax_rows feeds softmax a copy of its input filled with -inf: no integer form of it
SOURCE_SUITES, SOURCE_LAYER_LISTS = form_coverage.differential_sources(
    skip=frozenset({Path(__file__).stem, "test_softmax_rows"}))
# test_training_script runs its cases with torch.cuda patched to answer as on a GPU: the
# functions a module path reaches are not patched, so its cases are not derived from
SOURCE_SUITES = [s for s in SOURCE_SUITES if s is not test_training_script.SUITE]
SOURCE_CASES = [c for s in SOURCE_SUITES for c in s.cases] + [c for cases in SOURCE_LAYER_LISTS for c in cases]


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


def _as_bools(value):
    """A float array as the mask of its positive elements, also inside lists and tuples;
    others as they are."""
    if isinstance(value, np.ndarray):
        return value > 0 if value.dtype.kind == "f" else value
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_as_bools(v) for v in value)
    return value


# form -> how a float input becomes that form's input, and the label of a layer case's input
DERIVED_INPUTS = {"integer": (_as_integers, "integers"), "bool": (_as_bools, "bools")}


def _derived_input(given: Input, form: str) -> Input:
    """A layer case's input drawn as it was, then made as ``DERIVED_INPUTS[form]`` says."""
    make_form, label = DERIVED_INPUTS[form]
    return Input(lambda rng, make=given.make: make_form(make(rng)), f"{label}({given.label})", given.ms_dtype)


def integer_gaps(form: str = "integer") -> set[str]:
    """The entries form_gaps.toml lists with why they have no ``form`` (integer, bool) case."""
    with GAPS_FILE.open("rb") as fh:
        return {name for names in tomllib.load(fh).get(form, {}).values() for name in names}


def owing_integer(coverage: dict[str, dict], form: str = "integer") -> list[str]:
    """Entries the source cases feed floats but never an integer or bool (``form``
    "integer"), or never a bool ("bool"); ``coverage``: ``form_coverage.coverage`` of the
    source cases."""
    return sorted(api for api, row in coverage.items() if "float" in row["forms"] and form not in row["forms"])


def derived_suites(integer_entries: set[str], bool_entries: frozenset[str] = frozenset()
                   ) -> tuple[list[Suite], list[LayerCase]]:
    """The derived Case suites (one per source header) and layer cases."""
    owed = {"integer": integer_entries, "bool": bool_entries}
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
                    code = with_import(code, import_of(paths[api]))
                    bucket.append(dataclasses.replace(case, code=code, form="module-path"))
                    done.add((api, "module-path"))
            for form, entries in owed.items():
                if api in entries and (api, form) not in done:
                    kinds = form_coverage.input_kinds(case.inputs)
                    if "f" in kinds and "c" not in kinds:
                        make_form = DERIVED_INPUTS[form][0]
                        bucket.append(dataclasses.replace(case, inputs=tuple(make_form(v) for v in case.inputs),
                                                          form=form))
                        done.add((api, form))
    layer_cases = []
    for cases in SOURCE_LAYER_LISTS:
        for case in cases:
            api = case.entry
            for form, entries in owed.items():
                if api in entries and (api, form) not in done:
                    kinds = form_coverage.input_kinds([i.make(np.random.default_rng(0)) for i in case.inputs])
                    if "f" in kinds and "c" not in kinds:
                        layer_cases.append(dataclasses.replace(
                            case, inputs=tuple(_derived_input(i, form) for i in case.inputs)))
                        done.add((api, form))
            if api in paths and (api, "module-path") not in done:
                # the layer's expression, or the classes its prelude defines (``class _Seq(nn.Module)``)
                expr = respelled(case.expr, api, paths[api], HEADER)
                prelude = respelled(case.prelude, api, paths[api], HEADER) if case.prelude else None
                if expr is not None or prelude is not None:
                    prelude = "\n".join(filter(None, [import_of(paths[api]), prelude or case.prelude]))
                    layer_cases.append(dataclasses.replace(case, expr=expr or case.expr, prelude=prelude, primary=api))
                    done.add((api, "module-path"))
    suites = [Suite(cases, header=header, from_file=from_file)
              for (header, from_file), cases in by_suite.items() if cases]
    return suites, layer_cases


# entries whose table says why an integer input does not give torch's result
# (``integer_inputs``): their derived case is run to keep the mark true
MARKED = {e.source for e in tables().all_entries() if e.integer_inputs and not e.unsupported}
# read three times below, computed once (it reads the code of every source case)
SOURCE_COVERAGE = form_coverage.coverage(SOURCE_CASES)
INTEGER_ENTRIES = set(owing_integer(SOURCE_COVERAGE)) - integer_gaps() - MARKED
BOOL_ENTRIES = frozenset(set(owing_integer(SOURCE_COVERAGE, "bool")) - integer_gaps("bool"))
SUITES, LAYER_CASES = derived_suites(INTEGER_ENTRIES, BOOL_ENTRIES)
CASES = [(suite, case) for suite in SUITES for case in suite.cases]
# tuples, not lists: form_coverage counts the forms of module-level lists of cases, and
# these cases fail by design
_marked_suites, _marked_layers = derived_suites(MARKED & set(owing_integer(SOURCE_COVERAGE)))
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
    assert respelled("class S(Dataset):\n    pass", "torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset",
                     "from torch.utils.data import Dataset\n") == "class S(torch.utils.data.dataset.Dataset):\n    pass"
    # torch.optim deletes its submodules' names: the code imports the class
    header = "import torch\nfrom torch.optim import SGD, Adam\n"
    assert respelled("SGD([p], 0.1)", "torch.optim.SGD", "torch.optim.sgd.SGD", header) == "SGD([p], 0.1)"
    assert with_import("SGD([p], 0.1)", import_of("torch.optim.sgd.SGD")) == \
        "from torch.optim.sgd import SGD\n    return SGD([p], 0.1)"
    assert with_import("x = 1\n    return x", "") == "x = 1\n    return x"


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
