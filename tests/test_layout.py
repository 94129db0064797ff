"""engine/line_split.py: black's splitting of a logical line, reproduced without black.

Every check computes black's own output for the same code and line length and compares:
nothing here is a hard-coded layout. benchmarks/black_free.py runs the same comparison on
every statement the conversion of the samples and the four corpora sends to black.
"""
from pathlib import Path

import libcst as cst
import pytest

from transpile.engine import formatting
from transpile.engine.formatting import black_layout, code_of, layout_without_black

ROOT = Path(__file__).resolve().parent.parent


def _answer(code: str, line_length: int):
    stmt = cst.parse_statement(code)
    return layout_without_black(stmt, code_of(stmt), line_length)


# Shapes black splits in more than one step, each at line lengths that make it split
# differently (and at 88, where most fit).
SHAPES = [
    # nested right-hand splits
    "w = ms.Parameter(default_input=ops.zeros(**_f((in_features, out_features), **factory_kwargs)))\n",
    # a call whose first argument is a call that explodes
    "x = ops.reshape(ops.concat((first_tensor, second_tensor, third_tensor), axis=1), (batch, -1, dim))\n",
    # a list comprehension split inside its brackets, then at its clauses
    "mask = [not isinstance(t, UninitializedParameter) and ops.is_complex(input=t) for t in tensors if t]\n",
    # a conditional expression in optional parentheses black makes visible
    "y = ops.zeros(size=(labels,), dtype=ms.int64) if isinstance(labels, int) else ms.Tensor(labels)\n",
    "out = ops.reshape(input=a if cond else ms.Tensor(input_data=b, dtype=ms.int64), shape=(n, m))\n",
    # quotes black turns into double quotes (and one it keeps)
    "self.register_buffer('running_mean', ops.zeros(num_features), persistent='yes', note='a \"b\"')\n",
    # a return, a raise, an augmented assignment, a bare call, a del
    "return self.layer.method(first_argument_name, second_argument_name, third, fourth_one)\n",
    'raise ValueError(f"expected {expected} but got {got}: " "the second part of the message " + str(x))\n',
    "total += some_function(first_argument, second_argument) * other_function(third_argument)\n",
    "self.module.register_forward_hook(lambda module, args, output=None: output + args[0] * 2)\n",
    "del self._parameters[name_of_the_parameter_to_delete_from_the_dictionary_of_parameters]\n",
    # numbers and quotes black rewrites
    "scale = 0XFF * 1E5 + .5 - 1. + self.eps * 1e+05 + ops.full((n, m), 1.e-3) + f'{value}x' + 'y'\n",
    "node_qualname = _torch_write_view(node_qualname, node_qualname + (f\"_{next_index}\"), ('s'))\n",
    # attribute chains (split at the dots only with more than one call)
    "x = a.b(c).d(eeeeeeeeeeeeeeeeeeeeeeee).f(gggggggggggggggggggggggggg).h(iiiiiiiiiiiiiiiiiii)\n",
    # displays: black explodes a collection one item to a line
    "self.keys = ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked', 'extra']\n",
    "config = {'hidden_size': hidden, 'num_layers': layers, **{k: v for k, v in extra.items() if v}}\n",
    # an unpacked target, a subscript target, implicit concatenation, a generator
    "first_output, second_output = self.compute_outputs(inputs, states, mask=attention_mask)\n",
    "self.cache[layer_index][head] = ops.concat((self.cache[layer_index][head], new_values), axis=2)\n",
    "gen = (cell for name, cell in module.cells_and_names() if name.startswith(prefix) and cell)\n",
    "from torch.nn.modules.utils import _single, _pair, _triple, _quadruple, _reverse_repeat_tuple\n",
    # already laid out black's way across lines (the conversion renamed something inside)
    "x = f(\n    a,\n    b=g(c, d),\n)\n",
    "self.weight = ms.Parameter(\n    ops.empty((out_features, in_features), **factory_kwargs)\n)\n",
    # laid out otherwise across lines: black rejoins and splits the logical line
    "y = f(a,\n      b)\n",
    "y = some_function(\n    first, second,\n    third)\n",
]


@pytest.mark.parametrize("code", SHAPES)
@pytest.mark.parametrize("line_length", [40, 60, 88])
def test_each_shape_is_laid_out_as_black_lays_it_out(code, line_length):
    answer = _answer(code, line_length)
    assert answer is not None, "the layout should answer this shape"
    assert answer == black_layout(code, line_length)


def test_the_line_length_boundary():
    """A line that fits exactly stays; one character more and black splits it: the layout
    agrees on both sides of the limit (and a magic trailing comma explodes a short line)."""
    code = "x = some_function(first_argument, second_argument)\n"
    limit = len(code) - 1
    assert _answer(code, limit) == black_layout(code, limit) == code
    split = _answer(code, limit - 1)
    assert split == black_layout(code, limit - 1) != code
    magic = "x = f(a, b,)\n"
    assert _answer(magic, 88) == black_layout(magic, 88) != magic
    one_tuple = "x = (a,)\n"  # a one-tuple's comma is not magic
    assert _answer(one_tuple, 88) == black_layout(one_tuple, 88) == one_tuple


@pytest.mark.parametrize("code", [
    "x = f(aaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb)  # a comment\n",  # comments
    "x = f(\n    aaaaaaaaaaaaaaaaaa,  # a comment\n    bbbbbbbbbbbbbbbbbbbb,\n)\n",
    "x = f(aaaaaaaaaaaaaaaaaa, \\\n      bbbbbbbbbbbbbbbbbbbb)\n",  # a backslash
    'x = f("\\n", aaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbb, ccccccccccccccccccc)\n',
    "x = f(aaaaaaaaaaaaaaaaaa ** 2, bbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccc)\n",  # power: hugged
    "x = y = f(aaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccccc)\n",  # chained
    "x = a[f(b) - 1:]\n",  # black spaces the colon of a complex slice
    "x = ((a + b))\n",  # nested redundant parentheses
    "x = f'{d[\"k\"]}' + f\"\"\"{a}\"\"\"\n",  # f-strings black keeps single-quoted; triple quotes
    "x = u'text'\n",  # a prefix black drops
    "x: int = f(aaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbb, ccccccccccccccccccccccccc)\n",
    "(aaaaaaaaaaaaaaaaaa if bbbbbbbbbbbbbbbbbbbbbbbbbbbbb else cccccccccccccccccccc)\n",  # a bare group
    "x = 'caf\u00e9'\n",  # not ASCII
])
def test_what_the_layout_does_not_reproduce_goes_to_black(code):
    assert _answer(code, 40) is None


def test_a_trailing_comma_after_star_args_depends_on_the_code_black_can_date():
    """Black adds a comma after ``*args`` only in code it dates to Python 3.6+ (an f-string
    does): the layout follows where it can tell, else defers."""
    dated = 'print(f(f"{x}", *args, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb))\n'
    assert _answer(dated, 40) == black_layout(dated, 40)
    assert "bbbb,\n" in black_layout(dated, 40)
    undated = dated.replace('f"{x}"', '"x"')
    assert _answer(undated, 40) == black_layout(undated, 40)
    assert "bbbb\n" in black_layout(undated, 40)


def test_every_statement_answered_is_black_s_layout():
    """The statements of samples/ and of the engine's own modules, at line lengths that
    make many of them split: wherever the layout answers, black gives the same text."""
    answered = changed = 0
    for path in sorted((ROOT / "samples").rglob("*.py")) + sorted((ROOT / "transpile" / "engine").glob("*.py")):
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        stack = [module]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if not isinstance(node, cst.SimpleStatementLine):
                continue
            stmt = node.with_changes(leading_lines=())
            code = code_of(stmt)
            for line_length in (40, 88):
                answer = layout_without_black(stmt, code, line_length)
                if answer is not None:
                    answered += 1
                    changed += answer != code
                    assert answer == black_layout(code, line_length), (path, line_length, code)
    assert answered > 2000 and changed > 300  # it saw many statements, split and unsplit


def test_format_statement_asks_black_nothing_the_layout_answers(monkeypatch):
    """A statement a pass built (LibCST's default fields), too long for its line: laid out
    as black would, black not asked; one the layout cannot answer still goes to black."""
    call = cst.Call(cst.Name("some_function"), [cst.Arg(cst.Call(cst.Name("inner"), [
        cst.Arg(cst.Name(n)) for n in ("first_argument", "second_argument")])), cst.Arg(cst.Name("third"))])
    stmt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name("result"))], call)])
    code = code_of(stmt)
    expected = black_layout(code, 40)
    with monkeypatch.context() as patched:
        patched.setattr(formatting, "black_layout", lambda *a: pytest.fail("black was asked"))
        assert code_of(formatting.format_statement(stmt, 48)) == expected
    power = cst.parse_statement("result = some_function(first_argument ** 2, second_argument)\n")
    asked = []
    monkeypatch.setattr(formatting, "black_layout", lambda code, length: asked.append(code) or code)
    formatting.format_statement(power, 48)
    assert asked
