"""MS323: a ``match`` statement of literal patterns in a function -> an ``if``/``elif`` chain.

GRAPH_MODE (MindSpore 2.10) compiles no match statement ("Unsupported statement 'Match'"):
torchnd's ``conv_nd`` dispatches on ``match (x.is_complex(), weight.is_complex()):`` with
``case (True, False):`` arms, in a module function that the layers' construct calls from
another file (so the rule applies in every function, not only where this file shows the
function compiled). Python tests the cases in order and runs the first that matches; the
chain tests the same conditions in the same order:

- a literal (``case 3:``, ``case "zeros":``) or a dotted name (``case Mode.SAME:``) is
  ``subject == value``; ``True``, ``False`` and ``None`` are ``subject is value``;
- ``a | b`` is ``or``; ``_`` matches anything (the ``else``, or ``True`` inside a sequence);
- a sequence pattern ``(p, q)`` where the subject is a tuple display of as many items tests
  each item (another length never matches);
- a guard (``case 1 if flag:``) is ``and`` its test.

The subject is evaluated once, first, as Python does: a tuple display's items are bound to
fresh names in one assignment, another subject that is not a plain name to one name.
A match whose cases bind names (``case x:``, ``case (a, *rest):``, ``case Point(x=0):``),
test a class, a mapping or a starred sequence is left: it is reported in compiled code by
the lint's "not compiled" finding, as before.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ...syntax import free_name

SINGLETONS = ("True", "False", "None")


class _Unsupported(Exception):
    """A pattern this rule does not write as a test."""


class GraphMatch(Pass):
    id = "MS323"
    name = "graph-match"
    reads = frozenset({"identifiers"})
    summary = "A match statement of literal patterns in a function -> an if/elif chain (GRAPH_MODE compiles no match)."
    examples = (
        Example(
            "import torch\ndef pick(mode, x):\n    match mode:\n        case 'zeros' | 'same':\n            return torch.zeros_like(x)\n        case _:\n            return x\n",
            "from mindspore import ops\ndef pick(mode, x):\n    if mode == 'zeros' or mode == 'same':\n        return ops.zeros_like(input=x)\n    else:\n        return x\n",
        ),
    )

    def leave_Match(self, original: cst.Match, updated: cst.Match):
        function = self.ctx.current_function
        if function is None:
            return updated
        taken = set(self.facts.identifiers(function))
        subject = updated.subject
        binding, items = None, None
        if type(subject) is cst.Tuple and all(type(e) is cst.Element for e in subject.elements):
            names = [free_name(taken, f"_match_{i}") for i in range(len(subject.elements))]
            taken.update(names)
            items = [cst.Name(n) for n in names]
            targets = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
            binding = cst.Assign([cst.AssignTarget(targets)], subject.with_changes(lpar=[], rpar=[]))
            tested: cst.BaseExpression = subject
        elif type(subject) is cst.Name:
            tested = subject
        else:
            name = free_name(taken, "_match")
            binding = cst.Assign([cst.AssignTarget(cst.Name(name))], subject)
            tested = cst.Name(name)
        try:
            tests = [_test(case.pattern, tested, items) for case in updated.cases]
        except _Unsupported:
            return updated
        arms: list[tuple[cst.BaseExpression | None, cst.MatchCase]] = []
        for test, case in zip(tests, updated.cases):
            if test is False:
                continue  # never matches (a sequence of another length)
            if case.guard is not None:
                guard = _parenthesized(case.guard)
                test = guard if test is True else cst.BooleanOperation(_parenthesized(test), cst.And(), guard)
            arms.append((None if test is True else test, case))
            if test is True:
                break  # the cases after an irrefutable one never run
        self.ctx.report(original, self.id, "match statement written as an if/elif chain: GRAPH_MODE compiles no "
                        "match statement", Severity.INFO)
        statement = _chain(arms)
        if binding is None:
            return statement.with_changes(leading_lines=updated.leading_lines) if statement else cst.RemovalSentinel.REMOVE
        line = cst.SimpleStatementLine([binding], leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([line, statement]) if statement else line


def _chain(arms) -> cst.BaseStatement | None:
    """``if``/``elif``/``else`` over (test, case) pairs; a first test of None is the case alone."""
    if not arms:
        return None
    if arms[0][0] is None:
        return cst.If(test=cst.Name("True"), body=arms[0][1].body)
    orelse = None
    for test, case in reversed(arms):
        if test is None:
            orelse = cst.Else(body=case.body)
        else:
            orelse = cst.If(test=test, body=case.body, orelse=orelse)
    return orelse


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    if type(node) in (cst.Name, cst.Attribute, cst.Call, cst.Comparison, cst.Subscript, cst.SimpleString,
                      cst.Integer, cst.Float) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _test(pattern: cst.MatchPattern, subject: cst.BaseExpression, items) -> cst.BaseExpression | bool:
    """The test of ``pattern`` on ``subject`` (True: always, False: never)."""
    if type(pattern) is cst.MatchAs:
        if pattern.pattern is not None or pattern.name is not None:
            raise _Unsupported  # binds a name
        return True
    if type(pattern) is cst.MatchSingleton:
        return cst.Comparison(subject, [cst.ComparisonTarget(cst.Is(), pattern.value.with_changes())])
    if type(pattern) is cst.MatchValue:
        return cst.Comparison(_parenthesized(subject), [cst.ComparisonTarget(cst.Equal(), _parenthesized(pattern.value))])
    if type(pattern) is cst.MatchOr:
        return _joined([_test(p.pattern, subject, items) for p in pattern.patterns], cst.Or)
    if type(pattern) in (cst.MatchTuple, cst.MatchList):
        if items is None or any(type(p) is not cst.MatchSequenceElement for p in pattern.patterns):
            raise _Unsupported  # a subject not written as a tuple, or a starred item
        if len(pattern.patterns) != len(items):
            return False
        return _joined([_test(p.value, item, None) for p, item in zip(pattern.patterns, items)], cst.And)
    raise _Unsupported  # a class or mapping pattern


def _joined(tests: list, operator) -> cst.BaseExpression | bool:
    """The tests joined by ``or`` (``cst.Or``) or ``and`` (``cst.And``); True and False
    decide or drop out as they do in Python."""
    decisive = operator is cst.Or  # True decides an or, False an and
    if any(t is decisive for t in tests):
        return decisive
    tests = [t for t in tests if t is not (not decisive)]
    if not tests:
        return not decisive
    result = _parenthesized(tests[0])
    for t in tests[1:]:
        result = cst.BooleanOperation(result, operator(), _parenthesized(t))
    return result
