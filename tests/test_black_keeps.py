"""formatting.black_keeps: the statements it lets skip black are ones black leaves as they are."""
from pathlib import Path

import libcst as cst
import pytest

from transpile.engine.formatting import black_keeps, black_layout, code_of

ROOT = Path(__file__).resolve().parent.parent


def _lines(module: cst.Module):
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield node.with_changes(leading_lines=())
        stack.extend(node.children)


def _kept(code: str, line_length: int = 88) -> bool:
    stmt = cst.parse_statement(code)
    return black_keeps(stmt, code_of(stmt), line_length)


def test_every_statement_kept_is_left_as_it_is_by_black():
    kept = exploded = 0
    for path in sorted((ROOT / "samples").rglob("*.py")) + sorted((ROOT / "transpile" / "engine").glob("*.py")):
        for stmt in _lines(cst.parse_module(path.read_text(encoding="utf-8"))):
            code = code_of(stmt)
            for line_length in (88,):
                if black_keeps(stmt, code, line_length):
                    kept += 1
                    exploded += code.count("\n") > 1
                    assert black_layout(code, line_length) == code, (path, code)
    assert kept > 500 and exploded > 5  # the check saw statements of every kind it accepts


@pytest.mark.parametrize("code", [
    "x = f(a, b=1)\n", "return a.b[i, 1:n]\n", "import a.b as c\n", "from a import b, c\n",
    "y: int = [v for v in w if v]\n", "raise ValueError(f\"bad {x}\") from err\n", "pass  # a note\n",
    "t = a, b\n", "n = sum(x for x in y)\n", "z = -a + (b or c) * d\n", "s = {\"k\": 1.5, **m}\n",
    "x = f(\n    a,\n    b=g(c, d),\n)\n", "return m.h(\n    *args,\n    **kw,\n)\n", "f(\n    a,\n)\n",
])
def test_black_layout_is_kept(code):
    assert black_layout(code, 88) == code
    assert _kept(code)


@pytest.mark.parametrize("code", [
    "x = 'a'\n",  # quotes
    "x = (y)\n",  # redundant parentheses
    "x = a ** 2\n",  # power operands hugged
    "f(a, b,)\n",  # magic trailing comma
    "x = 1E5\n", "x = 0xab\n", "x = 1.\n",  # numbers
    "x = a[b + 1:]\n",  # a complex slice
    "x=1\n", "f( a )\n", "x = a  #note\n",  # spacing
    "x = f(aaaaaaaaaa, bbbbbbbbbb, cccccccccc, dddddddddd, eeeeeeeeee, ffffffffff, gggggggggg)\n",  # too long
    '"a docstring"\n', "x = 1; y = 2\n", "del (a)\n", "x = lambda a: a\n",
    "f(\n    a, b,\n)\n",  # two arguments on a line: black puts one to a line
    "f(\n    a,\n    b\n)\n",  # no trailing comma: black joins the lines
    "f(\n    a,\n\n    b,\n)\n",  # an empty line
    "f(\n    a,  # note\n)\n",  # a comment inside
    "f(\n  a,\n)\n",  # indented by two
    "f(\n    (a),\n)\n",  # redundant parentheses inside
    "f(\n    " + "a" * 90 + ",\n)\n",  # an argument line too long
    "x = (f)(\n    a,\n)\n",
])
def test_what_black_may_change_goes_to_black(code):
    assert not _kept(code)


def test_layout_libcst_writes_itself():
    """Commas a pass leaves to LibCST are written ``, ``; a keyword's ``=`` left to it is `` = ``."""
    equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    for keyword_equal, expected in ((equal, "f(a, b=1)\n"), (cst.MaybeSentinel.DEFAULT, "f(a, b = 1)\n")):
        call = cst.Call(func=cst.Name("f"), args=[cst.Arg(cst.Name("a")),
                                                  cst.Arg(cst.Integer("1"), keyword=cst.Name("b"), equal=keyword_equal)])
        stmt = cst.SimpleStatementLine(body=[cst.Expr(call)])
        code = code_of(stmt)
        assert code == expected
        assert black_keeps(stmt, code, 88) == (black_layout(code, 88) == code)


def test_a_call_split_without_black_is_laid_out_as_black_lays_it_out():
    """formatting._split_call: the lines of samples and the engine, at line lengths that
    make them too long, split as black splits them wherever it answers."""
    from transpile.engine.formatting import _split_call

    split = hugged = 0
    for path in sorted((ROOT / "samples").rglob("*.py")) + sorted((ROOT / "transpile" / "engine").glob("*.py")):
        for stmt in _lines(cst.parse_module(path.read_text(encoding="utf-8"))):
            code = code_of(stmt)
            if code.count("\n") != 1:
                continue
            for line_length in (40, 60):
                result = _split_call(stmt, code, line_length)
                if result is not None:
                    split += 1
                    laid_out = code_of(result)
                    hugged += not laid_out.rstrip("\n)").endswith(",")
                    assert laid_out == black_layout(code, line_length), (path, code)
    assert split > 100 and 20 < hugged < split  # both layouts were checked


@pytest.mark.parametrize("code, split", [
    ("x = some_function(first_argument, second_argument, keyword=third_argument)\n", True),  # hugged
    ("raise ValueError(f\"the message is {value}, {other}\")\n", True),
    ("return self.layer.method(first_argument_name, second_argument_name, third, fourth_one)\n", True),  # exploded
    ("x = f(*args, first_argument_name, second_argument_name, third_argument_name, fourth)\n", False),  # *args
    ("x = some_function(first_argument, second_argument, keyword=third_argument)  # note\n", False),
    ("f(a)(first_argument, second_argument, keyword=third_argument, another=4444444)\n", True),
])
def test_a_long_call_is_split_as_black_would_or_left_to_black(code, split):
    from transpile.engine.formatting import _split_call

    stmt = cst.parse_statement(code)
    result = _split_call(stmt, code_of(stmt), 40)
    assert (result is not None) == split
    if split:
        assert code_of(result) == black_layout(code, 40)


def test_a_built_line_left_to_libcst_defaults_is_laid_out_without_black(monkeypatch):
    """A pass's line whose commas are LibCST's defaults, too long for its line: read back
    from its code, it is split as black would, and black is not asked."""
    from transpile.engine import formatting

    names = ("first_arg", "second_arg", "third_arg")
    call = cst.Call(func=cst.Name("some_function"), args=[cst.Arg(cst.Name(n)) for n in names])
    stmt = cst.SimpleStatementLine(body=[cst.Assign([cst.AssignTarget(cst.Name("x"))], call)])
    code = code_of(stmt)
    expected = black_layout(code, 40)
    assert expected.count("\n") == 3  # black splits it, hugged
    assert formatting._split_call(stmt, code, 40) is None  # (the built tree: unsure)
    monkeypatch.setattr(formatting, "black_layout", lambda *a: pytest.fail("black was asked"))
    assert code_of(formatting.format_statement(stmt, 48)) == expected


def test_an_edit_that_leaves_the_text_as_it_was_keeps_the_layout(monkeypatch):
    """A pass that rebuilt a statement into the same text changed nothing a reader sees:
    the statement stays as written (black would join its lines), black not asked; one whose
    text changed, or too long for where it now stands, is still black's."""
    from transpile.engine import formatting

    code = "h = y.view(\n    -1,\n    1\n)  # written so\n"
    before = cst.parse_statement(code)
    rebuilt = before.with_changes(body=[before.body[0].with_changes(value=before.body[0].value.deep_clone())])
    assert rebuilt is not before and code_of(rebuilt) == code and black_layout(code, 88) != code
    with monkeypatch.context() as patched:
        patched.setattr(formatting, "black_layout", lambda *a: pytest.fail("black was asked"))
        assert formatting.format_statement(rebuilt, 0, before) is rebuilt
    changed = cst.parse_statement(code.replace("view(", "reshape("))
    assert code_of(formatting.format_statement(changed, 0, before)) == black_layout(code_of(changed), 88)
    long = "h = y.view(-1)  # a comment long enough to take this line past the length black keeps it to\n"
    long_before = cst.parse_statement(long)
    long_rebuilt = long_before.deep_clone()
    assert code_of(formatting.format_statement(long_rebuilt, 0, long_before)) == black_layout(long, 88) != long
