"""MS5xx: what GRAPH_MODE rejects or slows inside ``construct``, with the seed's measure.

A lint only: it reports and changes nothing. Findings (seed 000 "Common
Restrictions", seed 004 "Considerations"):
  MS501 third-party calls (numpy, scipy, ...) in construct (not the converted tree's own modules,
        nor warnings, logging, random: GRAPH_SAFE_ROOTS; nor numpy's NUMPY_BUILDERS)
  MS502 .asnumpy()/.numpy(): leaves the graph, truncates gradients
  MS503 Python side effects: print, appending to lists held outside construct (not to a
        parameter construct reads itself after: _params_read)
  MS504 user-defined (non-Cell) classes built as values in construct (namedtuple's too): GRAPH_MODE
        builds them as Python, and a tensor read back from one, or returned beside one in a tuple
        (``return out, Intermediates(attn=a)``), has no static shape, not even a rank (measured on
        2.10: an einsum whose equation is built from ``k.ndim`` gets None; nn.Dense fails on it)
  MS505 threads or processes in construct
  MS506 deep control flow that depends on tensors (slow compilation)
  MS507 constants built on every call: build them once in __init__
  MS508 a Cell's own methods that list or register its parameters, buffers or cells
        (self.parameters(), self.get_parameters(), self.register_buffer(...), ...):
        GRAPH_MODE compiles none of them
  MS509 a list that holds other lists of the function which change after it is made
        (``masks = [a, b]`` then ``a.append(m)``): GRAPH_MODE copies a list into another,
        so the holder keeps them as they were (torchaudio's Emformer: a Concat of nothing;
        with items already there, other values and no error)
  MS510 a try statement in construct: GRAPH_MODE does not compile it ("Unsupported
        statement 'Try'", MindSpore 2.10)
  MS511 a local list changed in place (pop, append, ...) under an if or while on a tensor:
        GRAPH_MODE keeps one length for the list after the branch, so it reads other items
        than Python, without an error (measured on 2.10: ``if n.sum() > 0: y = hs.pop()``
        then ``hs[-1]`` took the popped item with the condition false; ``hs = hs[:-1]`` the same)
  MS512 a pop in a branch of a conditional expression that MS318 does not write as an if
        statement (one inside a larger expression), in compiled code: GRAPH_MODE gives the
        pair (list after the pop, item) as its value, without an error (measured on 2.10:
        ``return out.pop() if c else x, out`` returned ``([...], item)`` as the first value)
  MS514 ``self.X = ...`` in compiled code where another method of the class that forward
        reaches (forward itself, or what it calls on self) reads ``self.X``: GRAPH_MODE compiles the other method with the value X had before,
        without an error (measured on 2.10: ``self.t = x * 2`` in construct, then a helper
        returning ``self.t * 3`` gave zeros, the value __init__ set; set in a helper and read
        in construct the same; set and read in one method it is right). torchvision's RAFT
        (``self.corr_pyramid`` built in one method, read in another) fails to compile.
  No finding under ``if False:`` or a check MS206 answers False (``torch.jit.is_scripting()``):
  GRAPH_MODE does not compile that branch.
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.import_table import dotted_name
from transpile.engine.passes import Example, Pass
from transpile.engine.names import identifiers

from ...analysis.list_holders import LIST_CHANGES, remade_holders, stale_list_holders
from ...analysis.scaffolding import scaffolding_data
from ...syntax import NOT_LITERAL, literal_value
from .graph_conditional_pops import pops_in_branch, rewritten_conditionals
from ...table_calls import tables
from ...tensor_inference import TensorScope, forward_params, is_tensor

# torch and mindspore: graph_lint reads code that may already be half MindSpore
FRAMEWORK_ROOTS = tables().framework_roots
# Modules whose pure functions GRAPH_MODE handles on constants; and standard modules whose
# calls MindSpore 2.10's GRAPH_MODE runs as Python (JIT fallback), measured on CPU in construct:
# ``warnings.warn(...)``, ``logging.getLogger(...).warning(...)``, ``random.Random(0)`` compile
# and the Cell computes what PYNATIVE does (opacus's DPMultiheadAttention, thelper's UNet and
# vector-quantize's ResidualVQ matched torch in GRAPH mode with such calls in construct).
GRAPH_SAFE_ROOTS = frozenset({"math", "typing", "dataclasses", "functools", "operator", "collections",
                              "warnings", "logging", "random"})
# numpy's array builders: GRAPH_MODE runs them as Python (JIT fallback) with sizes read off a
# tensor's shape, and the Cell computes what PYNATIVE does (measured on MindSpore 2.10, CPU:
# np.ones/zeros/full((x.shape[0], 3)), np.arange(x.shape[1]), np.eye(3); crfseg's CRF matched
# torch in GRAPH mode with np.ones in construct). Other numpy calls stay MS501 (np.finfo of a
# MindSpore dtype does not compile).
NUMPY_BUILDERS = frozenset({"numpy.ones", "numpy.zeros", "numpy.full", "numpy.arange", "numpy.eye"})
# calls that make a class of tuples (``Pair = namedtuple("Pair", "a b")``): its instances,
# built in construct, are Python objects to GRAPH_MODE as a class's are (MS504)
TUPLE_CLASS_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
THREAD_ROOTS = frozenset({"threading", "multiprocessing", "concurrent", "queue"})
CONSTANT_BUILDERS = frozenset({"tensor", "zeros", "ones", "full", "eye", "arange", "linspace", "as_tensor"})
DEEP = 3  # nested tensor-dependent if/while/for at this depth are reported
# A module's methods that list or register its parameters, buffers and sub-modules, in torch's
# spelling and in MindSpore's: GRAPH_MODE compiles none of the Cell's ("... is not supported
# in 'construct'"; timm's ConViT registers a buffer on its first call).
CELL_LISTINGS = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "get_parameters", "trainable_params", "untrainable_params", "parameters_and_names",
    "parameters_dict", "cells", "cells_and_names", "name_cells", "register_buffer", "register_parameter",
    "insert_param_to_cell", "add_module", "register_module", "insert_child_to_cell",
})


class GraphLint(Pass):
    id = "MS501"
    runs_after = {
        "MS208": "MS501 names the third-party calls left once the others are done; MS208 lowers einops calls to MindSpore ops",
        "MS321": "MS501 names the third-party calls left once the others are done; MS321 guards inspect.isfunction "
                 "with isinstance of Tensor",
    }
    name = "graph-lint"
    reads = frozenset({"loss_layers", "names", "nodes", "registered_buffers", "self_attribute_reads",
                       "forward_helpers", "submodule_helpers"})
    summary = "Report what GRAPH_MODE cannot compile (or compiles slowly) in construct."
    other_codes = {
        "MS502": ".asnumpy()/.numpy() in construct: leaves the graph and cuts the gradient.",
        "MS503": "a Python side effect in construct (print, appending to a list held outside it): the graph "
                 "runs it at compile time or not at all.",
        "MS504": "a user-defined class (not a Cell) built as a value in construct: the graph builds it as Python, "
                 "and the tensors read from it or returned beside it have no static shape.",
        "MS505": "threads or processes in construct: they cannot run inside a graph.",
        "MS506": "control flow nested deeply on tensor values in construct: compiles slowly.",
        "MS507": "a constant tensor built on every call of construct: build it once in __init__.",
        "MS508": "a Cell's method that lists or registers its parameters, buffers or cells, in construct: "
                 "GRAPH_MODE compiles none of them.",
        "MS509": "a list holding lists that change after it is made, in compiled code: GRAPH_MODE copies "
                 "them, so it keeps them as they were.",
        "MS510": "a try statement in construct: GRAPH_MODE does not compile it.",
        "MS511": "a local list changed in place under a condition on a tensor, in construct: GRAPH_MODE keeps one "
                 "length for it after the branch and reads other items, without an error.",
        "MS514": "an attribute of self assigned in compiled code and read by another method: GRAPH_MODE compiles "
                 "that method with the value it had before, without an error.",
        "MS512": "a pop in a branch of a conditional expression inside a larger one, in compiled code: GRAPH_MODE "
                 "gives the pair (list, item) as its value, without an error.",
    }
    examples = (
        Example(
            "import numpy as np\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return np.exp(x)\n",
            "import numpy as np\nimport mindspore.nn as nn\nclass M(nn.Cell):\n    def construct(self, x):\n"
            "        return np.exp(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.scope = TensorScope()
        self._in_forward = 0
        self._control_depth = 0
        self._value_depth = 0  # enclosing if/while whose condition is a tensor
        self._value_flags: list[bool] = []
        self._local_lists: list[set[str]] = []
        self._kept_params: list[set[str]] = []  # per forward: parameters it reads besides appending to them
        self._classes: dict[str, bool] = {}  # local class -> derives from a Module/Cell
        self._third_party: dict[int, str] = {}  # id(a call in construct) -> its third-party qualname
        self._rewritten: set[int] = set()  # id(a conditional expression MS318 writes as an if statement)
        self._buffers: list = []  # per enclosing class: the names it registers as buffers
        self._self_reads: list = []  # the enclosing classes, innermost last
        self._method_stack: list[str] = []  # the enclosing functions' names, outermost first
        self._class_depth: list[int] = []  # per enclosing class: how many functions enclose it
        self._dead_bodies: set[int] = set()  # id(the body of an ``if False:``)
        self._dead_depth = 0  # such bodies around the node: no finding there

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [self.ctx.imports.qualify(a.value) or dotted_name(a.value) or "" for a in node.bases]
        self._classes[node.name.value] = any(
            b.split(".")[0] in FRAMEWORK_ROOTS or self._classes.get(b, False) for b in bases
        )
        self._buffers.append(self.facts.registered_buffers(node))
        self._self_reads.append(node)  # its methods' reads of self, asked when compiled code assigns one
        self._class_depth.append(len(self._method_stack))

    def leave_ClassDef(self, original, updated):
        self._buffers.pop()
        self._self_reads.pop()
        self._class_depth.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # (a holder needs a list made in the function: most functions make none and are not read)
        if self.ctx.compiled and any(isinstance(a.value, (cst.List, cst.ListComp, cst.Tuple))
                                     for a in self.facts.nodes(node, (cst.Assign,), _no_nested_scope)):
            stale = stale_list_holders(node)
            remade = remade_holders(node, stale) if stale else {}  # MS333 makes these again after the changes
            for holder, assign, changes in stale:
                if holder in remade:
                    continue
                held = f"the list {next(iter(changes))}" if len(changes) == 1 else f"the lists {', '.join(changes)}"
                self._report(assign, "MS509", f"{holder} holds {held}, changed after it is "
                             f"made ({'; '.join(changes.values())}): compiled code copies a list into another, so "
                             f"{holder} keeps them as they were; make {holder} after their last change")
        self._method_stack.append(node.name.value)
        forward = node.name.value in ("forward", "construct") and self._in_forward == 0
        if forward:
            self._in_forward += 1
            self.scope.push(forward_params(node))
            self._local_lists.append(set())
            self._kept_params.append(_params_read(node, self.facts))
        elif self._in_forward:
            self._in_forward += 1  # nested function inside construct: still compiled

    def leave_FunctionDef(self, original, updated):
        self._method_stack.pop()
        if self._in_forward:
            self._in_forward -= 1
            if self._in_forward == 0:
                self.scope.pop()
                self._local_lists.pop()
                self._kept_params.pop()
        return updated

    def _attribute_read_elsewhere(self, node: cst.Assign) -> None:
        method = self._method_stack[self._class_depth[-1]]
        for t in node.targets:
            target = t.target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self"):
                continue
            cls = self._self_reads[-1]
            # forward, construct, what they call on self, and what other classes' compiled code calls on it
            compiled = self.facts.forward_helpers(cls) | {"forward", "construct"} | {
                m for c, m in self.facts.submodule_helpers() if c == cls.name.value}
            readers = sorted(m for m, attrs in self.facts.self_attribute_reads(cls).items()
                             if m != method and m in compiled and target.attr.value in attrs)
            if readers:
                self._report(node, "MS514", f"self.{target.attr.value} is assigned here and read in "
                             f"{', '.join(readers)}: compiled code reads it there with the value it had before, "
                             "without an error; return the value and pass it to what reads it")

    def _own_root(self) -> str | None:
        """The top-level package of the tree the file is converted in (``subLSTM`` of
        ``subLSTM.nn.rnn``): its modules are converted too, so a call into them is no
        third-party call (its own code is linted where it is)."""
        package = self.ctx.package
        return package.module.split(".")[0] if package is not None and package.module else None

    def _report(self, node, code: str, message: str) -> None:
        if self._dead_depth:  # under ``if False:``, which GRAPH_MODE does not compile
            return
        self.ctx.report(node, code, message + " (GRAPH_MODE)", Severity.WARNING)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.ctx.compiled and self._class_depth and len(self._method_stack) > self._class_depth[-1]:
            self._attribute_read_elsewhere(node)
        if not self._method_stack and isinstance(node.value, cst.Call) \
                and self.ctx.imports.qualify(node.value.func) in TUPLE_CLASS_FACTORIES:
            for t in node.targets:  # Pair = namedtuple("Pair", "a b"): a class like one written out
                if isinstance(t.target, cst.Name):
                    self._classes[t.target.value] = False
        if not self._in_forward:
            return
        for t in node.targets:
            target = t.target
            if (self._buffers and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == "self" and target.attr.value in self._buffers[-1]):
                self._report(node, "MS508", f"self.{target.attr.value} is a buffer the class registers: assigning it in "
                             "construct registers it again, which construct cannot compile; compute the value as a "
                             "local and pass it to what reads it, or compute it in __init__")
            if isinstance(t.target, cst.Name):
                if isinstance(node.value, (cst.List, cst.ListComp)):
                    self._local_lists[-1].add(t.target.value)
                if is_tensor(node.value, self.scope, self.ctx, FRAMEWORK_ROOTS):
                    self.scope.add(t.target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        # ``state_out: List[Tensor] = []`` (torchaudio's RNN-T predictor): a local list as ``= []`` makes one
        if (self._in_forward and isinstance(node.target, cst.Name)
                and isinstance(node.value, (cst.List, cst.ListComp))):
            self._local_lists[-1].add(node.target.value)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.ctx.compiled:
            self._rewritten.update(id(e) for e in rewritten_conditionals(node))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if self.ctx.compiled and id(node) not in self._rewritten and pops_in_branch(node):
            self._report(node, "MS512", "a pop in a branch of a conditional expression inside a larger one: compiled "
                         "code gives the pair (list after the pop, item) as its value, without an error; assign it "
                         "on a line of its own (y = xs.pop() if c else d, which becomes an if statement) and use y")

    def visit_Call(self, node: cst.Call) -> None:
        if not self._in_forward:
            return
        func = node.func
        qual = self.ctx.imports.qualify(func)
        root = qual.split(".")[0] if qual else None
        if root in THREAD_ROOTS:
            self._report(node, "MS505", f"{qual}: threads and processes cannot run inside a graph; do the work outside the network")
        elif root and root not in FRAMEWORK_ROOTS and root not in GRAPH_SAFE_ROOTS and root != self._own_root() \
                and qual not in NUMPY_BUILDERS:
            self._third_party[id(node)] = qual  # MS501 when it is left (leave_Call)
        elif root in FRAMEWORK_ROOTS and qual.rsplit(".", 1)[-1] in CONSTANT_BUILDERS and _all_literal(node):
            self._report(node, "MS507", f"{qual} with constant arguments builds the same tensor on every call; build it once in __init__")
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("asnumpy", "numpy") and not qual:
                self._report(node, "MS502", f".{method}() leaves the graph and cuts the gradient; keep the computation in MindSpore ops")
            elif method in CELL_LISTINGS and not qual and _self_or_its_attribute(func.value):
                self._report(node, "MS508", f".{method}() lists or registers a Cell's parameters, buffers or "
                             "cells, which construct cannot compile; do it once in __init__ (a tuple kept on "
                             "self for a listing) and use that")
            elif (method in LIST_CHANGES and not qual and self._value_depth and isinstance(func.value, cst.Name)
                  and func.value.value in self._local_lists[-1]):
                self._report(node, "MS511", f"{func.value.value}.{method}() under a condition on a tensor: the graph "
                             "keeps one length for the list after the branch and reads other items, without an error; "
                             "change the list on both ways, or select values with ops.select/masks")
            elif method == "append" and not qual and not (
                isinstance(func.value, cst.Name)
                and (func.value.value in self._local_lists[-1] or func.value.value in self._kept_params[-1])
            ):
                self._report(node, "MS503", "appending to a list held outside construct is a side effect the graph drops; return the values instead")
        elif isinstance(func, cst.Name):
            if func.value == "print":
                self._report(node, "MS503", "print in construct runs at compile time or not at all; use ops.Print() or drop it")
            elif func.value in self._classes and not self._classes[func.value]:
                self._report(node, "MS504", f"{func.value} is a user-defined class built inside construct: GRAPH_MODE builds "
                             "it as Python, and a tensor read back from it, or returned beside it in a tuple, has no "
                             "static shape (an einsum, a Dense or a shape read on it then fails); return the tensors "
                             "in a tuple or a dict, or make it a Cell")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        # MS501: the user's third-party call, if the other passes left it one (einops lowers
        # some of them)
        qual = self._third_party.pop(id(original), None)
        if qual is not None and (updated.func is original.func or self.ctx.imports.qualify(updated.func) == qual):
            self._report(original, "MS501", f"{qual} is a third-party call inside construct; use mindspore.ops, "
                         "or compute constants once in __init__")
        return updated

    def _tensor_value(self, test) -> bool:
        """The condition is a tensor's value (``x.sum() > 0``, ``(x > 0).any()``), not a Python
        value read off a tensor (``x is None``, ``x.ndim == 5``, ``x.shape[0] > 2``, ``x.numel() == 0``)."""
        kind = type(test)
        if kind is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._tensor_value(test.expression)
        if kind is cst.BooleanOperation:
            return self._tensor_value(test.left) or self._tensor_value(test.right)
        if kind is cst.Call and type(test.func) is cst.Attribute and test.func.attr.value in ("any", "all"):
            return self._tensor_operand(test.func.value)
        if kind is cst.Comparison:
            return (all(type(c.operator) in ORDERINGS for c in test.comparisons)
                    and any(self._tensor_operand(e) for e in (test.left, *(c.comparator for c in test.comparisons))))
        return False

    def _tensor_operand(self, expr) -> bool:
        while type(expr) is cst.Subscript:
            if type(expr.value) is cst.Attribute and expr.value.attr.value in PYTHON_READS:
                return False  # x.shape[0]
            expr = expr.value
        if type(expr) is cst.Attribute and expr.attr.value in PYTHON_READS:
            return False
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in PYTHON_READS:
            return False
        return is_tensor(expr, self.scope, self.ctx, FRAMEWORK_ROOTS)

    def _tensor_condition(self, test) -> bool:
        return test is not None and _mentions_tensor(test, self)

    def _enter_control(self, test) -> None:
        # MS511 wants the condition's value to be a tensor (``x.sum() > 0``), not a name of one
        # in it (``x.shape[0] > 2`` is a Python number, one way for the whole graph)
        valued = bool(self._in_forward and test is not None and self._tensor_value(test))
        self._value_flags.append(valued)
        self._value_depth += valued
        if self._in_forward and self._tensor_condition(test):
            self._control_depth += 1
            if self._control_depth == DEEP:
                self._report(test, "MS506", f"{DEEP} levels of control flow that depend on tensor values compile slowly; use ops.select/masks")
            self._stack_flags.append(True)
        else:
            self._stack_flags.append(False)

    def _leave_control(self) -> None:
        self._value_depth -= self._value_flags.pop()
        if self._stack_flags.pop():
            self._control_depth -= 1

    @property
    def _stack_flags(self) -> list[bool]:
        return self.__dict__.setdefault("_flags", [])

    def visit_If(self, node: cst.If) -> None:
        self._enter_control(node.test)
        if self._never(node.test):
            # GRAPH_MODE drops the branch (torchvision's Inception3 builds its namedtuple only
            # under ``torch.jit.is_scripting()``)
            self._dead_bodies.add(id(node.body))

    def _never(self, test) -> bool:
        """``False``, or a call MS206 answers with False (``torch.jit.is_scripting()``), whether
        or not MS206 has run yet."""
        if isinstance(test, cst.Name):
            return test.value == "False"
        return isinstance(test, cst.Call) and not test.args \
            and scaffolding_data()["constant"].get(self.ctx.imports.qualify(test.func) or "") == "False"

    def visit_IndentedBlock(self, node) -> None:
        self._dead_depth += id(node) in self._dead_bodies

    def leave_IndentedBlock(self, original, updated):
        self._dead_depth -= id(original) in self._dead_bodies
        return updated

    visit_SimpleStatementSuite = visit_IndentedBlock
    leave_SimpleStatementSuite = leave_IndentedBlock

    def leave_If(self, original, updated):
        self._leave_control()
        return updated

    def visit_While(self, node: cst.While) -> None:
        self._enter_control(node.test)

    def visit_Try(self, node: cst.Try) -> None:
        if self._in_forward:
            self._report(node, "MS510", "a try statement in construct does not compile (Unsupported statement "
                         "'Try'); check before the call instead of catching, or keep the guarded code out of construct")

    visit_TryStar = visit_Try

    def leave_While(self, original, updated):
        self._leave_control()
        return updated


# comparisons that give a tensor on tensors (``is``/``in`` give a Python bool)
ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
# what a tensor answers with a Python number, known when the graph is compiled
PYTHON_READS = frozenset({"shape", "ndim", "numel", "dim", "size", "nelement", "item", "dtype"})


def _no_nested_scope(scope: cst.CSTNode) -> bool:
    return False


def _all_literal(call: cst.Call) -> bool:
    return bool(call.args) and all(literal_value(a.value) is not NOT_LITERAL for a in call.args)


def _mentions_tensor(expr, lint: GraphLint) -> bool:
    return any(name in lint.scope for name in identifiers(expr))


def _self_or_its_attribute(value: cst.BaseExpression) -> bool:
    """``self`` or ``self.x.y``: the Cell, or one of its sub-cells."""
    while isinstance(value, cst.Attribute):
        value = value.value
    return isinstance(value, cst.Name) and value.value == "self"


def _params_read(fn: cst.FunctionDef, facts) -> set[str]:
    """The parameters of ``fn`` its body reads other than as the list appended to
    (``x.append(f(x))`` then ``return x[-n:]``): construct appending to a list it was given
    and using that list itself compiles and computes what Python does (measured, MindSpore
    2.10 GRAPH: effdet's BiFpn; ``x.append(x[-1] * 2); return x[-2:]`` in a sub-Cell); only
    the caller's list does not grow, which it does not read in such code."""
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    receivers = {id(c.func.value) for c in facts.nodes(fn, (cst.Call,), _no_nested_scope)
                 if type(c.func) is cst.Attribute and c.func.attr.value == "append" and type(c.func.value) is cst.Name}
    return {n.value for n in facts.names.loads(fn.body) if n.value in params and id(n) not in receivers}
