"""Every pass's before/after examples are its documentation and its tests."""
from __future__ import annotations

import pytest

from transpile import convert_code
from transpile.rewrites import ALL_PASSES

EXAMPLES = [(p, i, ex) for p in ALL_PASSES for i, ex in enumerate(p.examples)]


def test_every_pass_documents_itself() -> None:
    ids = [p.id for p in ALL_PASSES]
    assert len(ids) == len(set(ids)), "pass ids must be unique"
    for p in ALL_PASSES:
        assert p.id[:2] == "MS" and p.name and p.summary, p
        assert p.examples, f"{p.id} has no examples"


@pytest.mark.parametrize("pass_, index, example", EXAMPLES, ids=lambda v: getattr(v, "id", None) or str(v)[:0])
def test_example(pass_, index, example) -> None:
    result = convert_code(example.before, debug=True)
    assert result.code == example.after
