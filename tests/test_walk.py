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
