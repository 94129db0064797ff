"""engine/walk.py: which subtrees a walk may leave unentered."""
import libcst as cst

from transpile.engine.walk import LAYOUT_TYPES, _may_hold, read, skippable


def test_a_skipped_subtree_can_hold_no_handled_node():
    for handled in ({"Name"}, {"Call", "FunctionDef"}, {"SimpleStatementLine", "IndentedBlock", "Try", "Module"}):
        skipped = skippable(frozenset(handled))
        assert LAYOUT_TYPES <= skipped
        for kind in skipped - LAYOUT_TYPES:
            assert kind.__name__ not in handled
            assert not {t.__name__ for t in _may_hold()[kind]} & handled, kind


def test_a_walk_of_statements_skips_expressions_and_one_of_names_skips_none_that_hold_them():
    statements = skippable(frozenset({"SimpleStatementLine", "IndentedBlock"}))
    assert {cst.Call, cst.Name, cst.Assign, cst.Lambda, cst.Annotation} <= statements
    assert cst.FunctionDef not in statements and cst.If not in statements
    names = skippable(frozenset({"Name"}))
    assert not {cst.Call, cst.Attribute, cst.Lambda, cst.Param, cst.Decorator} & names
    assert {cst.Integer, cst.Float, cst.Pass} <= names


def test_read_still_finds_every_handled_node():
    source = "@d(x)\ndef f(a: int = g(b)):\n    return [lambda c: c + h(i) for i in k]\n"

    class Names:
        def __init__(self):
            self.seen = []

        def visit_Name(self, node):
            self.seen.append(node.value)

    reader = Names()
    read(cst.parse_module(source), reader)
    assert reader.seen == ["d", "x", "f", "a", "int", "g", "b", "c", "c", "h", "i", "i", "k"]


def _every_child(node, skip):
    """The children by every field of the node's type (no field left out by its annotation)."""
    from transpile.engine.walk import _FIELD_ORDER, field_order, is_node

    for name in _FIELD_ORDER.get(type(node)) or field_order(node):
        value = getattr(node, name)
        if is_node(value):
            if type(value) not in skip:
                yield value
        elif type(value) in (tuple, list):
            yield from (item for item in value if type(item) not in skip)


def test_the_fields_a_walk_leaves_out_hold_nothing_it_would_enter():
    """``walked_fields`` skips fields by their annotations; on real code (the samples and the
    fixtures), with layout skipped and with each stage's skip set, the children are those of
    every field."""
    from pathlib import Path

    from transpile.engine.pipeline import _handler_names
    from transpile.engine.walk import children
    from transpile.rewrites import STAGES

    root = Path(__file__).resolve().parent.parent
    skips = [LAYOUT_TYPES] + [skippable(frozenset(t for p in stage for _, t, _ in _handler_names(p))) for stage in STAGES]
    files = sorted((root / "samples").rglob("*.py")) + sorted((root / "tests" / "fixtures").rglob("*.py"))[::3]
    seen = set()
    for path in files:
        try:
            stack = [cst.parse_module(path.read_text(encoding="utf-8"))]
        except cst.ParserSyntaxError:
            continue
        while stack:
            node = stack.pop()
            seen.add(type(node))
            for skip in skips:
                expected = list(_every_child(node, skip))
                found = list(children(node, skip))
                assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected)), \
                    (type(node).__name__, path)
            stack.extend(_every_child(node, frozenset()))
    assert len(seen) > 100  # most node types were met
