"""Invariants over the whole pipeline, on every fixture and sample."""
from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
import pytest

from transpile import convert_code

ROOT = Path(__file__).parent.parent
SOURCES = sorted(
    [p for p in (ROOT / "tests" / "fixtures").glob("*/*.py") if not p.name.endswith(".expected.py")]
    + list((ROOT / "samples").glob("*.py"))
)


@pytest.fixture(params=SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def source(request) -> str:
    return request.param.read_text()


def _converted(source: str, **options):
    """The conversion of ``source``, which must not have failed: a failed conversion
    returns its input, which parses, converts to itself and is the same every time."""
    result = convert_code(source, **options)
    assert not result.failed, [d.format() for d in result.diagnostics]
    return result


@functools.lru_cache(maxsize=None)
def _plain(source: str):
    """``_converted(source)`` with no option, made once: the tests below that start from it
    (idempotence, one side of determinism, the default order of the commutation test) read
    the same conversion instead of each making it again."""
    return _converted(source)


def test_output_parses(source: str) -> None:
    cst.parse_module(_converted(source, debug=True).code)


def test_idempotent(source: str) -> None:
    once = _plain(source).code
    twice = _converted(once)
    assert twice.code == once
    assert not twice.changed


def test_deterministic(source: str) -> None:
    # a conversion made now against one made before it (by this test or another): both
    # from the same text, in the same process, with other files converted in between
    assert _converted(source).code == _plain(source).code


# parses, but nests past the converter's limit: the conversion fails and returns its input
_FAILING = "import torch\ny = " + " + ".join(["x"] * 700) + "\n"


@pytest.mark.parametrize("invariant", [test_output_parses, test_idempotent, test_deterministic],
                         ids=lambda f: f.__name__)
def test_invariants_fail_on_a_failed_conversion(invariant) -> None:
    assert convert_code(_FAILING).failed
    with pytest.raises(AssertionError):
        invariant(_FAILING)


def _declared_edges(stage) -> set[tuple[str, str]]:
    """(before, after) pass ids of the ``runs_after`` declarations within ``stage``."""
    ids = {p.id for p in stage}
    return {(before, p.id) for p in stage for before in p.runs_after if before in ids}


def _sorted(stage, edges, first) -> tuple:
    """``stage`` sorted so that every edge holds; among the passes free to go next, the one
    ``first`` ranks lowest goes first."""
    done, out = set(), []
    while len(out) < len(stage):
        ready = [p for p in stage if p.id not in done and all(a in done for a, b in edges if b == p.id)]
        out.append(min(ready, key=first))
        done.add(out[-1].id)
    return tuple(out)


def _free_pairs(stage) -> set[tuple[str, str]]:
    """(earlier, later) pass ids of the pairs of ``stage`` that no declaration orders,
    directly or through others."""
    after = {p.id: {b for a, b in _declared_edges(stage) if a == p.id} for p in stage}
    for _ in stage:  # closed under transitivity after len(stage) rounds
        after = {x: later.union(*(after[y] for y in later)) for x, later in after.items()}
    ids = [p.id for p in stage]
    return {(a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if b not in after[a] and a not in after[b]}


def _turned(order, pairs) -> set[tuple[str, str]]:
    at = {p.id: i for i, p in enumerate(order)}
    return {(a, b) for a, b in pairs if at[b] < at[a]}


def free_orders(stage) -> list[tuple]:
    """Orders of ``stage`` that keep every declared ``runs_after`` and, together, put each
    free pair the other way round from ``stage``'s: the latest pass first wherever the
    declarations allow; then built from the end, the earliest pass last; then, while some
    pair is left, as many of those pairs turned as can be at once.

    Each pair swapped alone would take about 450 conversions of every file. Two passes meet
    only at the nodes both handle, where their handlers run in pass order, so an order that
    turns a pair that matters shows it, unless another pair it turns undoes the same change
    at the same node: a few orders that each turn many pairs leave little room for that."""
    edges = _declared_edges(stage)
    at = {p.id: i for i, p in enumerate(stage)}
    orders = [_sorted(stage, edges, lambda p: -at[p.id]),
              _sorted(stage[::-1], {(b, a) for a, b in edges}, lambda p: at[p.id])[::-1]]
    left = _free_pairs(stage) - set().union(*(_turned(o, _free_pairs(stage)) for o in orders))
    while left:
        turned = set(edges)
        for a, b in sorted(left, key=lambda pair: (at[pair[0]], at[pair[1]])):
            try:
                _sorted(stage, turned | {(b, a)}, lambda p: -at[p.id])
            except ValueError:  # would close a cycle
                continue
            turned.add((b, a))
        orders.append(_sorted(stage, turned, lambda p: -at[p.id]))
        left -= _turned(orders[-1], left)
    return orders


@functools.lru_cache(maxsize=1)
def _free_order_pipelines():
    from transpile.rewrites import STAGES, _pipeline

    return [_pipeline((order,) + tuple(STAGES[1:])) for order in free_orders(STAGES[0])]


def test_free_orders_turn_every_free_pair() -> None:
    from transpile.rewrites import STAGES

    pairs = _free_pairs(STAGES[0])
    orders = free_orders(STAGES[0])
    assert set().union(*(_turned(o, pairs) for o in orders)) == pairs
    assert len(orders) <= 6  # each costs a conversion of every fixture and sample


def test_passes_in_any_declared_order_give_the_same_output(source: str) -> None:
    default = _plain(source)
    for pipeline in _free_order_pipelines():
        other = pipeline.run(source)
        assert other.code == default.code, [p.id for p in pipeline.stages[0]]
        assert [d.format() for d in other.diagnostics] == [d.format() for d in default.diagnostics]


def test_mindspore_code_is_left_alone() -> None:
    ms = (ROOT / "tests" / "fixtures" / "api-calls" / "unchanged_mindspore.py").read_text()
    result = convert_code(ms)
    assert result.code == ms and not result.changed and not result.diagnostics


def test_untouched_lines_and_comments_survive() -> None:
    src = (
        "import torch.nn as nn\n"
        "# header comment\n"
        "X = {'keep':   'spacing' }  # trailing\n\n\n"
        "class Net(nn.Module):  # cls comment\n"
        "    def forward(self, x):\n"
        "        # body comment\n"
        "        return x   # odd spacing kept\n"
    )
    out = convert_code(src).code
    for line in src.splitlines()[1:]:
        if "nn.Module" in line or "def forward" in line:
            continue
        assert line in out.splitlines(), line


def test_unconvertible_stays_valid_and_is_marked() -> None:
    src = "import torch\ny = torch.no_such_op(1)\n"
    result = convert_code(src)
    cst.parse_module(result.code)
    assert "# transpile: MS201" in result.code
    assert result.stats.unconverted == 1
    assert any(d.code == "MS201" and d.line == 2 for d in result.diagnostics)


def test_diagnostic_positions_are_in_the_original_file() -> None:
    src = ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, box, s):\n"
           "        m = s > 0\n        return box[m]\n")
    result = convert_code(src)
    (diag,) = [d for d in result.diagnostics if d.code == "MS301"]  # a note on the compiled selection
    assert (diag.line, diag.col) == (8, 15)


def test_markers_quoting_multiline_code_stay_one_comment_line() -> None:
    src = "import torch\ny = torch.no_such_op(\n    a,\n    b,\n)\nz = torch.multinomial(a, 1, generator=gens.get(\n    0, None))\n"
    result = convert_code(src, debug=True)
    markers = [line for line in result.code.splitlines() if line.lstrip().startswith("# transpile:")]
    assert len(markers) == 2 and all(len(m) <= 200 for m in markers)


def test_methods_left_on_unknown_receivers_count_against_the_rate() -> None:
    """size() only tensors have: converted with a note; sum() numpy has too: left,
    reported, and counted as an unconverted torch use."""
    result = convert_code("import torch\n\n\ndef f(x):\n    return x.sum(), x.size(0)\n")
    assert "x.sum(), x.shape[0]" in result.code
    assert (result.stats.converted, result.stats.unconverted) == (1, 1)
    messages = [d.message for d in result.diagnostics]
    assert any("left as it is" in m for m in messages) and any("not proven a tensor; converted" in m for m in messages)


def test_a_conversion_leaves_no_tree_to_the_cyclic_collector():
    """Reference counting frees each file's trees: a cycle through them (a recursive closure
    over the context, a pass holding the context) made the collector trace every node."""
    import gc

    import libcst as cst

    from transpile import convert_code

    source = (ROOT / "samples" / "gpt_blocks.py").read_text(encoding="utf-8")
    convert_code(source)  # tables and caches
    gc.collect()
    gc.disable()
    try:
        convert_code(source)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        nodes = [o for o in gc.garbage if isinstance(o, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not nodes, f"{len(nodes)} LibCST nodes were in reference cycles"
