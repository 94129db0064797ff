"""MS104: a ``torch.autograd.Function`` subclass becomes a Cell with a custom ``bprop``.

MindSpore's custom gradient is a Cell method ``bprop(self, *inputs, out, dout)`` that
returns one gradient per input. torch's backward reads what forward left on ``ctx``
(``ctx.save_for_backward(...)``, ``ctx.dim = dim``), which bprop does not get: bprop
runs forward again on a fresh ctx and then backward, so forward and backward keep
their code (converted by the other passes) and backward sees the same values::

    class Swish(torch.autograd.Function):         class Swish(nn.Cell):
                                                      def construct(self, i):
                                                          return self.forward(_FunctionCtx(i), i)

                                                      def bprop(self, i, out, dout):
                                                          return _function_bprop(self, (i,), out, dout)

        @staticmethod                                 @staticmethod
        def forward(ctx, i):                          def forward(ctx, i):
            ctx.save_for_backward(i)                      ctx.save_for_backward(i)
            return i * torch.sigmoid(i)                   return i * ops.sigmoid(input=i)

        @staticmethod                                 @staticmethod
        def backward(ctx, grad_output):               def backward(ctx, grad_output):
            i, = ctx.saved_tensors                        i, = ctx.saved_tensors
            ...                                           ...

    y = Swish.apply(x)                             y = Swish()(x)
    fn = Swish.apply                               fn = Swish()

``_FunctionCtx`` (save_for_backward, saved_tensors, needs_input_grad, attributes;
mark_non_differentiable, mark_dirty and set_materialize_grads do nothing) and
``_function_bprop`` are emitted once beside the code. ``_function_bprop`` passes
``dout`` to backward as one gradient per output, and returns backward's gradients
for the inputs (torch's None for an input: MindSpore takes None too). The newer style,
``forward(x, ...)`` without ctx plus ``setup_context(ctx, inputs, output)``, is filled
from bprop's ``out`` instead of running forward again. ``@once_differentiable`` is
dropped by MS206 (scaffolding.toml; bprop is not differentiated again). Forward is run
again, so a forward that draws random numbers would see other numbers in bprop: this
is said in a note. GRAPH_MODE runs construct; it does not take this bprop (MindSpore
compiles a custom bprop as its own graph, which rejects keyword arguments and the
ctx object's values): gradients through it need PYNATIVE_MODE.
The ``apply`` calls rewritten are those of the Functions defined in the same file (and of
the Cells with a ``bprop`` defined there: Functions converted by hand, in a file converted
in part).
"""
from __future__ import annotations

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..cell_names import is_target_cell
from ..runtime.registry import runtime_helper, spelled
from ..syntax import is_docstring

FUNCTION_BASES = ("torch.autograd.Function", "torch.autograd.function.Function")
FUNCTION_CTX = ("torch.autograd.function.FunctionCtx",)  # ctx's type, in annotations
CTX_CLASS = "_FunctionCtx"
BPROP_HELPER = "_function_bprop"


class AutogradFunction(Pass):
    id = "MS104"
    name = "autograd-function"
    summary = "torch.autograd.Function subclasses become Cells with bprop; F.apply(x) becomes F()(x)."
    # FUNCTION_BASES and FUNCTION_CTX are qualified with autograd; a Cell converted before has a bprop
    mentions = ("autograd", "bprop")
    examples = (
        Example(
            "import torch\n\n\nclass Ste(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\n\ny = Ste.apply(x)\n",
            "import mindspore as ms\nfrom mindspore import nn\n\n\n"
            + spelled(CTX_CLASS, (("mindspore", "ms"),)) + "\n\n" + spelled(BPROP_HELPER, ())
            + "\n\nclass Ste(nn.Cell):\n    def construct(self, x):\n"
            "        return self.forward(_FunctionCtx(x), x)\n\n    def bprop(self, x, out, dout):\n"
            "        return _function_bprop(self, (x,), out, dout)\n\n    @staticmethod\n    def forward(ctx, x):\n"
            "        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n\n\ny = Ste()(x)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.functions: set[str] = set()  # names of the Function subclasses defined in the file
        self._bases: set[int] = set()  # ids of their torch.autograd.Function base expressions
        self._classes: list[bool] = []  # per open class: a Function subclass?

    def _is_function_base(self, expr) -> bool:
        return self.ctx.imports.qualify(expr) in FUNCTION_BASES

    def _function_bases(self, node: cst.ClassDef) -> list[cst.BaseExpression]:
        return [a.value for a in node.bases if a.keyword is None and self._is_function_base(a.value)]

    def _convertible(self, node: cst.ClassDef) -> bool:
        """A subclass of torch.autograd.Function this pass rewrites (it marks the others)."""
        if not self._function_bases(node):
            return False
        why = _unconvertible(node)
        if why:
            self.ctx.mark(node, self.id, f"torch.autograd.Function {node.name.value}: {why}")
            self.ctx.count_unconverted()
        return why is None

    def visit_Module(self, node: cst.Module) -> None:
        # the apply calls may come before the class (in functions defined above it)
        for stmt in node.body:
            if isinstance(stmt, cst.ClassDef) and (
                    (self._function_bases(stmt) and not _unconvertible(stmt)) or self._bprop_cell(stmt)):
                self.functions.add(stmt.name.value)

    def _bprop_cell(self, node: cst.ClassDef) -> bool:
        """A Cell with a ``bprop`` method: a Function converted by hand (a file converted in
        part), whose callers still say ``F.apply(x)``, torch's call of it."""
        methods = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        return any(is_target_cell(self.ctx.imports.qualify(a.value)) for a in node.bases if a.keyword is None) and any(
            isinstance(m, cst.FunctionDef) and m.name.value == "bprop" for m in methods)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        convert = self._convertible(node)
        self._classes.append(convert)
        if convert:
            self.functions.add(node.name.value)
            self._bases.update(id(b) for b in self._function_bases(node))

    def _base(self, original, updated):
        """The Function's base -> nn.Cell; torch's ctx type (``ctx: FunctionCtx``) -> the
        emitted ctx class."""
        if id(original) in self._bases:
            return self.ctx.reference("mindspore.nn.Cell")
        if self.ctx.imports.qualify(original) in FUNCTION_CTX:
            return self._ctx_class()
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        return self._base(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``F.apply`` -> ``F()``: an instance of the Cell (``F.apply(x)`` -> ``F()(x)``)."""
        if (original.attr.value == "apply" and isinstance(original.value, cst.Name)
                and original.value.value in self.functions):
            self.ctx.count_converted()
            return cst.Call(func=cst.Name(original.value.value))
        return self._base(original, updated)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        if not self._classes.pop():
            return updated
        body = updated.body
        methods = {s.name.value: s for s in body.body if isinstance(s, cst.FunctionDef)}
        setup = "setup_context" in methods
        params = methods["forward"].params
        positional = [*params.posonly_params, *params.params][0 if setup else 1:]
        names = [p.name.value for p in positional]
        star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        args = [cst.Arg(cst.Name(n)) for n in names] + ([cst.Arg(cst.Name(star), star="*")] if star else [])
        forward_args = list(args)
        if not setup:
            forward_args.insert(0, cst.Arg(cst.Call(func=self._ctx_class(), args=args)))
            self.ctx.report(original, self.id, f"{original.name.value}: bprop runs forward again to get what it "
                            "saved on ctx (a forward drawing random numbers would draw others)", Severity.INFO)
        construct_params = [p.with_changes(annotation=None, comma=cst.MaybeSentinel.DEFAULT) for p in positional]
        construct = _method("construct", construct_params, cst.Return(cst.Call(
            func=cst.Attribute(cst.Name("self"), cst.Name("forward")), args=forward_args)),
            star=params.star_arg.with_changes(annotation=None) if star else None)
        if star:  # bprop(self, *inputs, out, dout) as one tuple: the inputs are the last but two
            packed = _free_name("args", names)
            # the inputs as len(...) - 2, never ":-2": MS306 reads a negative bound as an empty
            # axis risk and would rewrite it on a second run (here there are always out and dout)
            helper_args = [cst.parse_expression(f"{packed}[{i}]") for i in (f":len({packed}) - 2", "-2", "-1")]
            bprop = _method("bprop", [], _bprop_return(self._bprop_helper(), helper_args),
                            star=cst.Param(cst.Name(packed)))
        else:
            out, dout = _free_name("out", names), _free_name("dout", names)
            inputs = cst.Tuple([cst.Element(cst.Name(n)) for n in names])
            bprop = _method("bprop", [cst.Param(cst.Name(n)) for n in [*names, out, dout]],
                            _bprop_return(self._bprop_helper(), [inputs, cst.Name(out), cst.Name(dout)]))
        statements = list(body.body)
        at = 1 if statements and is_docstring(statements[0]) else 0
        statements[at:at] = [construct, bprop]
        statements = [s.with_changes(leading_lines=[cst.EmptyLine(indent=False)])  # methods one blank line apart
                      if i > 0 and isinstance(s, cst.FunctionDef) and not s.leading_lines else s
                      for i, s in enumerate(statements)]
        self.ctx.count_converted()
        return updated.with_changes(body=body.with_changes(body=statements))

    def _ctx_class(self) -> cst.Name:
        return runtime_helper(self.ctx, CTX_CLASS)

    def _bprop_helper(self) -> cst.Name:
        return runtime_helper(self.ctx, BPROP_HELPER)


def _unconvertible(node: cst.ClassDef) -> str | None:
    """Why a Function subclass cannot become a Cell with bprop, or None."""
    methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)} \
        if isinstance(node.body, cst.IndentedBlock) else {}
    forward = methods.get("forward")
    if forward is None or "backward" not in methods:
        return "forward or backward is not defined in the class"
    if "construct" in methods or "bprop" in methods:
        return "it already defines construct or bprop"
    if "setup_context" not in methods and not (forward.params.posonly_params or forward.params.params):
        return "forward takes no ctx"
    return None


def _free_name(name: str, taken: list[str]) -> str:
    while name in taken:
        name += "_"
    return name


def _method(name: str, params: list[cst.Param], statement: cst.BaseSmallStatement,
            star: cst.Param | None = None) -> cst.FunctionDef:
    """``def name(self, *params): statement``, a Cell method."""
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name("self")), *params],
                              star_arg=star if star is not None else cst.MaybeSentinel.DEFAULT),
        body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[statement])]),
    )


def _bprop_return(helper: cst.Name, args: list) -> cst.Return:
    """``return _function_bprop(self, inputs, out, dout)``."""
    return cst.Return(cst.Call(func=helper, args=[cst.Arg(cst.Name("self")), *(cst.Arg(a) for a in args)]))
