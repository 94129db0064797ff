"""rewrites/syntax.py: what the passes share about reading and writing code."""
from __future__ import annotations

import ast

import libcst as cst
import pytest

from transpile.rewrites.syntax import NOT_LITERAL, literal_value

STRINGS = ['"x"', "'x'", '""', "''", '""""""', "''''''", "'a\"b'", '"a\'b"', '"""a\nb"""', "'''a'b'''",
           '"""a\r\nb"""', '"""a\rb"""', '"a\\nb"', "r'a\\nb'", "b'x'", "rb'x'", "u'x'", "'\\''", '"é"']


@pytest.mark.parametrize("token", STRINGS)
def test_a_string_literal_reads_as_python_reads_it(token):
    # a string without prefix, escape or carriage return is read without the parser: the same value
    value = literal_value(cst.SimpleString(token))
    assert value == ast.literal_eval(token) and type(value) is type(ast.literal_eval(token))


def test_what_is_no_literal_says_so():
    assert literal_value(cst.parse_expression("f(x)")) is NOT_LITERAL
    assert literal_value(cst.Name("x")) is NOT_LITERAL
    assert literal_value(cst.Name("None")) is None
