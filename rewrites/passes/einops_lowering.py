"""MS208: einops calls and layers with a literal pattern, lowered to MindSpore tensor ops.

einops 0.8 has no MindSpore backend and its torch layers are not Cells, so the converted
code could not run them. A pattern written as a string literal says everything the
call does, so it is lowered here, at conversion time:

  rearrange   reshape (split composed axes) -> permute -> reshape (compose axes)
  reduce      the same with ops.mean/sum/amax/amin/prod over the axes the output lacks
  repeat      the same with the new axes inserted as 1 and broadcast to their lengths
  einsum      einops' multi-letter axes renamed to letters, then torch.einsum's own
              lowering (tables' ``einsum`` hook: MindSpore's ops.einsum has no CPU kernel);
              a pattern known only when it runs, an ellipsis or three operands and more:
              a call of the function that reads the equation when it runs
              (``_einsum_at_run_time``, emitted beside the code, shared with torch.einsum)
  pack        a reshape per tensor and one ops.cat, with the packed shapes
  unpack      ops.split by the shapes' products and a reshape per part
  Rearrange/Reduce layers   a small Cell class emitted in the converted file (one per
              pattern; nn.Flatten where that is exact): there is no layer taking a pattern
  einx's elementwise functions (einx.add("b n d, b d", x, y), multiply, greater, ...)
              with a literal description of named axes: _einx_elementwise(ops.add, ...),
              emitted beside the code, puts each operand's axes in the output's order
              when it runs (einx has no MindSpore backend); any other einx call is left
              with a warning

Axis lengths given as keywords become expressions of the emitted shapes; the others are
read from the input's shape when it runs. An input (or a length) that would be evaluated
more than once and is not a plain name, attribute or subscript goes through a small
function emitted beside the code, which evaluates it once. A function call this pass
cannot lower (a pattern known only at run time, a list of tensors as the input) stays an
einops call, and a small einops backend for MindSpore tensors is emitted beside the code:
einops runs it when it runs, in Python (in GRAPH_MODE too: the backend's module names einops
in MS_JIT_IGNORE_MODULES, so MindSpore runs it instead of compiling it). The layers with such
patterns are left as they are and marked.

An einops name bound at the module's level by a loader call given the module's path and the
member's name (monai's ``Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")``;
``importlib.import_module("einops")`` for the module) is lowered as an imported one: left, GRAPH
mode ran einops' torch layer as Python, and its result, untyped in the graph, broke the next
reshape (``loader_binding``).
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

import black
import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass

from ..hooks.torch_functions import einsum as torch_einsum
from ..hooks.torch_functions import einsum_at_run_time as torch_einsum_at_run_time
from ..runtime.registry import runtime_helper
from ..table_calls import LOWERED_ROOTS
from ..syntax import NOT_LITERAL, Unconvertible, after_imports, code, literal_value, module_spellings, operand_code, repeatable

# einx's elementwise functions (einx.add("b n d, b d", x, y)) -> the MindSpore op they apply:
# _einx_elementwise (emitted beside the code) lines the operands' named axes up when it runs
EINX_ELEMENTWISE = {
    **{f"einx.{name}": f"mindspore.ops.{name}" for name in (
        "add", "multiply", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal", "equal",
        "not_equal", "logical_and", "logical_or", "floor_divide", "where")},
    "einx.subtract": "mindspore.ops.sub", "einx.divide": "mindspore.ops.div", "einx.true_divide": "mindspore.ops.div",
}
# qualified name -> (what it lowers like, its parameters before **axes_lengths)
FUNCTIONS = {
    "einops.rearrange": ("rearrange", ("tensor", "pattern")),
    "einops.reduce": ("reduce", ("tensor", "pattern", "reduction")),
    "einops.repeat": ("repeat", ("tensor", "pattern")),
    "einops.pack": ("pack", ("tensors", "pattern")),
    "einops.unpack": ("unpack", ("tensor", "packed_shapes", "pattern")),
}
# pack/unpack calls not lowered here -> the run-time helper that reads their pattern
# (rewrites/runtime/einops_patterns.py)
PACK_AT_RUN_TIME = {"einops.pack": "_einops_pack_at_run_time", "einops.unpack": "_einops_unpack_at_run_time"}
LAYERS = {
    "einops.layers.torch.Rearrange": ("rearrange", ("pattern",)),
    "einops.layers.torch.Reduce": ("reduce", ("pattern", "reduction")),
}
# For the einops function calls this pass cannot lower (a pattern known only at run time:
# ``def pack_one(t, pattern): return pack([t], pattern)``), a backend that lets einops run
# them on MindSpore tensors: einops finds backends among AbstractBackend's subclasses, so
# defining it registers it. Python-level work (GRAPH_MODE runs it in Python); no einsum (ops.einsum has
# no CPU kernel).
BACKEND_BASE = "einops._backends.AbstractBackend"
BACKEND_NAME = "_MindSporeEinopsBackend"
BACKEND = '''class {name}({base}):
    """einops on MindSpore tensors, for the einops calls whose pattern is known only when
    they run (transpile MS208): einops 0.8 has no MindSpore backend."""

    framework_name = "mindspore"

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, {ms}.Tensor)

    def from_numpy(self, x):
        return {ms}.Tensor(x)

    def to_numpy(self, x):
        return x.asnumpy()

    def arange(self, start, stop):
        return {ops}.arange(start, stop)

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        return {ops}.reshape(x, tuple(shape))

    def transpose(self, x, axes):
        return {ops}.permute(x, tuple(axes))

    def reduce(self, x, operation, axes):
        reduction = {"min": {ops}.amin, "max": {ops}.amax, "sum": {ops}.sum, "mean": {ops}.mean, "prod": {ops}.prod}
        return reduction[operation](x, tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list):
        return {ops}.stack(tensors)

    def add_axis(self, x, new_position):
        return {ops}.expand_dims(x, new_position)

    def tile(self, x, repeats):
        return {ops}.tile(x, tuple(repeats))

    def concat(self, tensors, axis: int):
        return {ops}.cat(tensors, axis)

    def is_float_type(self, x):
        return {ops}.is_floating_point(x)


# GRAPH_MODE compiles the Python of the functions construct calls, unless their module is a
# third-party library to it: einops is not (its raise EinopsError fails to compile).
# MindSpore runs the modules named in MS_JIT_IGNORE_MODULES in Python (JIT fallback).
{environ}["MS_JIT_IGNORE_MODULES"] = ",".join(
    [m for m in {environ}.get("MS_JIT_IGNORE_MODULES", "").split(",") if m and m != "einops"] + ["einops"]
)
'''

# einops reduction -> the mindspore.ops function taking (input, axes)
REDUCTIONS = {"mean": "mean", "sum": "sum", "max": "amax", "min": "amin", "prod": "prod"}

ELLIPSIS = "..."
_TOKEN = re.compile(r"\s*(\.\.\.|\w+|[()])")


def _ph(i: int) -> str:
    """Placeholder of operand ``i`` in generated code (filled in once the code is known)."""
    return f"\x00{i}\x00"


@dataclass(frozen=True)
class Group:
    """One dimension of a side of a pattern: an axis, or axes in parentheses."""

    names: tuple[str, ...]
    composed: bool  # written in parentheses (or as an anonymous 1)

    @property
    def single(self) -> bool:
        """One dimension that is one axis: no reshape needed for it."""
        return len(self.names) == 1 and not (self.composed and self.names[0] == ELLIPSIS)


def parse_side(text: str, anonymous: dict[str, int]) -> list[Group]:
    """The groups of one side (``b (h d) ... 1``). Anonymous lengths other than 1 get a
    name of their own (``2#0``), recorded in ``anonymous`` with their length."""
    groups: list[Group] = []
    inner: list[str] | None = None
    text, pos = text.rstrip(), 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise Unconvertible(f"cannot read the pattern at {text[pos:].strip()!r}")
        pos, token = match.end(), match.group(1)
        if token == "(":
            if inner is not None:
                raise Unconvertible("nested parentheses in the pattern")
            inner = []
            continue
        if token == ")":
            if inner is None:
                raise Unconvertible("unbalanced parentheses in the pattern")
            groups.append(Group(tuple(inner), True))
            inner = None
            continue
        if token.isdigit():
            if int(token) == 1:  # a unit axis alone; inside parentheses it changes nothing
                if inner is None:
                    groups.append(Group((), True))
                continue
            token = f"{int(token)}#{len(anonymous)}"
            anonymous[token] = int(token.split("#")[0])
        elif token != ELLIPSIS and (not token.isidentifier() or keyword.iskeyword(token) or token[0].isdigit()):
            raise Unconvertible(f"{token!r} is not an axis name")
        if inner is None:
            groups.append(Group((token,), False))
        else:
            inner.append(token)
    if inner is not None:
        raise Unconvertible("unbalanced parentheses in the pattern")
    names = [n for g in groups for n in g.names]
    if len(names) != len(set(names)):
        raise Unconvertible("an axis is named twice on one side of the pattern")
    return groups


def _shape_code(parts: list[tuple[str, str]]) -> str:
    """A shape tuple from ("dim", code) items and ("dims", tuple code) runs."""
    out, run = [], []
    for kind, text in parts:
        if kind == "dim":
            run.append(text)
            continue
        if run:
            out.append(_tuple(run))
            run = []
        out.append(text)
    if run:
        out.append(_tuple(run))
    return " + ".join(out) or "()"


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _factor(text: str) -> str:
    """``text`` as a factor of a product (``a // b`` in parentheses)."""
    return text if re.fullmatch(r"[\w.\x00]+(\[[^\]]*\])?", text) else f"({text})"


def _product(codes: list[str]) -> str:
    return codes[0] if len(codes) == 1 else "(" + " * ".join(map(_factor, codes)) + ")"


class _Lowering:
    """Lowers one rearrange/reduce/repeat pattern to code over placeholders: operand 0 is
    the tensor, ``lengths`` maps axis names to the placeholders of their lengths."""

    def __init__(self, ref, kind: str, pattern: str, lengths: dict[str, str], reduction: str | None = None):
        self.ref, self.kind, self.reduction = ref, kind, reduction
        left, arrow, right = pattern.partition("->")
        if not arrow or "->" in right:
            raise Unconvertible("the pattern needs exactly one '->'")
        self.anonymous: dict[str, int] = {}
        self.left = parse_side(left, self.anonymous)
        self.right = parse_side(right, self.anonymous)
        self.known = {**lengths, **{n: str(v) for n, v in self.anonymous.items()}}
        self.x = _ph(0)
        lnames = [n for g in self.left for n in g.names]
        rnames = [n for g in self.right for n in g.names]
        if any(g.composed and ELLIPSIS in g.names for g in self.left):
            raise Unconvertible("an ellipsis in parentheses on the left of the pattern")
        if extra := sorted(set(lengths) - set(lnames) - set(rnames)):
            raise Unconvertible(f"lengths given for axes the pattern does not name: {', '.join(extra)}")
        self.new = [n for n in rnames if n not in lnames]
        dropped = [n for n in lnames if n not in rnames]
        allowed = {"rearrange": (False, False), "reduce": (False, True), "repeat": (True, False)}[kind]
        if (self.new and not allowed[0]) or (dropped and not allowed[1]):
            one_side = ", ".join(n.split("#")[0] for n in self.new + dropped)
            raise Unconvertible(f"{kind}: axes {one_side} are on one side of the pattern only")
        self.rnames = rnames
        self.size = self._sizes()

    def _sizes(self) -> dict[str, tuple[str, str]]:
        """Length of every axis as ("dim", code), the ellipsis as ("dims", shape slice)."""
        size: dict[str, tuple[str, str]] = {}
        count = len(self.left)
        after_ellipsis = False
        for i, g in enumerate(self.left):
            if g.names == (ELLIPSIS,):
                after_ellipsis = True
                stop = "" if i == count - 1 else str(i - count + 1)
                size[ELLIPSIS] = ("dims", f"{self.x}.shape[{i or ''}:{stop}]")
                continue
            whole = f"{self.x}.shape[{i - count if after_ellipsis else i}]"
            if len(g.names) == 1 and g.names[0] not in self.anonymous:
                size[g.names[0]] = ("dim", whole)
                continue
            missing = [n for n in g.names if n not in self.known]
            if len(missing) > 1:
                raise Unconvertible(f"the lengths of {', '.join(missing)} in ({' '.join(g.names)}) are not given")
            given = [self.known[n] for n in g.names if n in self.known]
            size.update((n, ("dim", self.known[n])) for n in g.names if n in self.known)
            if missing:
                size[missing[0]] = ("dim", f"{whole} // {_product(given)}" if given else whole)
        for n in self.new:
            if n not in self.known:
                raise Unconvertible(f"the length of the new axis {n} is not given")
            size[n] = ("dim", self.known[n])
        return size

    def _ndim(self, axes: list[str], extra: int = 0) -> str:
        """Rank of a tensor laid out as ``axes`` holding the ellipsis (plus ``extra``)."""
        c = len(axes) - len(self.left) + extra
        return f"{self.x}.ndim" + (f" + {c}" if c > 0 else f" - {-c}" if c < 0 else "")

    def _indices(self, axes: list[str], wanted: list[str]) -> str:
        """The dimensions of ``wanted`` in a tensor laid out as ``axes``; past the
        ellipsis they count from the end (its length is known when it runs)."""
        ellipsis = axes.index(ELLIPSIS) if ELLIPSIS in axes else None
        parts = []
        for name in wanted:
            i = axes.index(name)
            if name == ELLIPSIS:
                parts.append(("dims", f"tuple(range({i}, {self._ndim(axes, i + 1 - len(axes))}))"))
            else:
                parts.append(("dim", str(i - len(axes) if ellipsis is not None and i > ellipsis else i)))
        return _shape_code(parts)

    def _group_size(self, g: Group) -> tuple[str, str]:
        if not g.names:
            return ("dim", "1")
        if g.single:
            return self.size[g.names[0]]
        if ELLIPSIS in g.names:  # its length is a product known when it runs: reshape infers it
            return ("dim", "-1")
        return ("dim", " * ".join(_factor(self.size[n][1]) for n in g.names))

    def code(self) -> str:
        op = lambda name: code(self.ref(f"mindspore.ops.{name}"))  # noqa: E731 - a local spelling
        t = self.x
        unshaped = None  # the tensor before the last step when that step was a reshape

        def reshape(shape: str) -> str:  # a reshape of a reshape is one reshape
            nonlocal unshaped
            unshaped = unshaped or t
            return f"{op('reshape')}({unshaped}, {shape})"

        axes = [n for g in self.left for n in g.names]
        if not all(g.single for g in self.left):  # composed or unit axes: one dimension per axis
            t = reshape(_shape_code([self.size[n] for n in axes]))
        gone = [n for n in axes if n not in self.rnames]
        if gone:
            t, unshaped = f"{op(REDUCTIONS[self.reduction])}({t}, {self._indices(axes, gone)})", None
            axes = [n for n in axes if n in self.rnames]
        order = [n for n in self.rnames if n in axes]
        if order != axes:
            t, unshaped = f"{op('permute')}({t}, {self._indices(axes, order)})", None
        if self.new:  # new axes of length 1 where they go, then broadcast to their lengths
            ones = [("dim", "1") if n in self.new else self.size[n] for n in self.rnames]
            t = reshape(_shape_code(ones))
            t, unshaped = f"{op('broadcast_to')}({t}, {_shape_code([self.size[n] for n in self.rnames])})", None
        if not all(g.single for g in self.right):
            t = reshape(_shape_code([self._group_size(g) for g in self.right]))
        return t

    def flatten_start(self) -> int | None:
        """``k`` when the pattern is exactly ``nn.Flatten(start_dim=k)``: plain axes, the
        first k kept, the rest composed in order (``b c h w -> b (c h w)``)."""
        k = len(self.right) - 1
        rest = [n for g in self.left[k:] for n in g.names]
        if self.kind != "rearrange" or k < 0 or not all(g.single for g in self.left) or not rest:
            return None
        head = [g.names for g in self.left[:k]]
        if ELLIPSIS in sum(head, ()) or head != [g.names for g in self.right[:k]]:
            return None
        return k if self.right[k].composed and list(self.right[k].names) == rest else None


def _einsum_equation(pattern: str, count: int) -> str:
    """einops' ``"b h i d, b h j d -> b h i j"`` as torch's ``"abcd,abed->abce"``."""
    left, arrow, right = pattern.partition("->")
    if not arrow:
        raise Unconvertible("einsum's pattern needs '->'")
    sides = [s.split() for s in left.split(",")] + [right.split()]
    if len(sides) != count + 1:
        raise Unconvertible(f"einsum's pattern names {len(sides) - 1} inputs, the call gives {count}")
    letters: dict[str, str] = {}
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for name in (n for side in sides for n in side):
        if not name.isidentifier():
            raise Unconvertible(f"einsum axis {name!r} is not lowered (only named axes)")
        if name not in letters:
            if len(letters) == len(alphabet):
                raise Unconvertible("einsum with more than 52 axes")
            letters[name] = alphabet[len(letters)]
    spelled = ["".join(letters[n] for n in side) for side in sides]
    return ",".join(spelled[:-1]) + "->" + spelled[-1]


def _pack_layout(pattern: str) -> tuple[int, int]:
    """(axes before ``*``, axes after it) of a pack/unpack pattern (``b * d``)."""
    names = pattern.split()
    if names.count("*") != 1 or not all(n == "*" or n.isidentifier() for n in names):
        raise Unconvertible("a pack pattern needs one '*' and named axes only")
    k = names.index("*")
    return k, len(names) - 1 - k


@dataclass
class _Operand:
    node: cst.BaseExpression  # the argument, converted
    param: str  # its name in an emitted function


class EinopsLowering(Pass):
    id = "MS208"
    name = "einops-lowering"
    reads = frozenset({"emitted_definitions", "names"})
    mentions = tuple(sorted(LOWERED_ROOTS))  # it acts on names qualified with one
    runs_after = {
        "MS205": "MS205 inserts its definitions after the imports (leave_Module) before MS208 puts its "
                 "backend first there",
    }
    summary = ("einops calls and Rearrange/Reduce layers with literal patterns lowered to MindSpore "
               "reshape/permute/reductions/broadcast (einops has no MindSpore backend).")
    examples = (
        Example(
            "from einops import rearrange\nimport torch.nn as nn\nclass M(nn.Module):\n"
            "    def forward(self, x):\n        return rearrange(x, 'b (h d) n -> b h n d', h=4)\n",
            "import mindspore.nn as nn\nfrom mindspore import ops\nclass M(nn.Cell):\n"
            "    def construct(self, x):\n"
            "        return ops.permute(\n            ops.reshape(x, (x.shape[0], 4, x.shape[1] // 4, x.shape[2])), (0, 1, 3, 2)\n"
            "        )\n",
        ),
        Example(
            "import torch.nn as nn\nfrom einops.layers.torch import Rearrange\n"
            "net = nn.Sequential(Rearrange('b c h w -> b (c h w)'), nn.ReLU())\n",
            "import mindspore.nn as nn\nnet = nn.SequentialCell(nn.Flatten(), nn.ReLU())\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.helpers: dict[str, str] = {}  # emitted source (its name as {name}) -> name
        self._skip: set[int] = set()  # call targets (their calls are lowered, or stay)
        # the file defines the einops backend already (converted before: emitted definitions
        # are left as they are, their handlers never called)
        self._has_backend = any(n.startswith(BACKEND_NAME) for n in getattr(ctx.facts, "emitted_definitions", ()))
        self._loaded: dict[str, str] = {}  # names bound by a loader call given a module's path (visit_Module)
        self._binding_targets: set[int] = set()  # the names those assignments bind (not references)

    def _einops(self, node) -> str | None:
        qual = self.ctx.imports.qualify(node)
        if qual is None and self._loaded:
            qual = self._loaded_qual(node)
        return qual if qual is not None and qual.split(".")[0] in LOWERED_ROOTS else None

    # -- names a loader call binds: ``Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")``
    def visit_Module(self, node: cst.Module) -> None:
        for stmt in _top_level_lines(node.body):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    bound = loader_binding(small.targets[0].target, small.value)
                    if bound is not None:
                        self._loaded[bound[0].value] = bound[1]
                        self._binding_targets.add(id(bound[0]))

    def _by_loader(self, node) -> bool:
        """Whether ``node`` names what a loader call binds (no import does): what this pass
        cannot lower of it is left as it is, with no backend emitted and no mark (the source
        made einops optional there; an emitted backend would import it)."""
        return bool(self._loaded) and self.ctx.imports.qualify(node) is None and self._loaded_qual(node) is not None

    def _loaded_qual(self, node) -> str | None:
        """The qualified name of ``node`` (``Rearrange``, ``m.Rearrange``) whose head a loader
        call at the module's level binds, where no local hides it."""
        head = node
        while type(head) is cst.Attribute:
            head = head.value
        if type(head) is not cst.Name or head.value not in self._loaded or id(head) in self._binding_targets:
            return None
        if self.ctx.imports.hidden(head.value):
            return None
        rest = code(node).partition(".")[2] if head is not node else ""
        return self._loaded[head.value] + (f".{rest}" if rest else "")

    # -- calls ---------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._skip.add(id(node.func))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qual = self._einops(original.func)
        if qual is None:
            return updated
        if qual.split(".")[0] == "einx":
            return self._einx(qual, original, updated)
        try:
            result = self._lower(qual, updated)
        except Unconvertible as why:
            if self._by_loader(original.func):  # left as the source has it: einops stays optional there
                return updated
            at_run_time = self._pack_at_run_time(qual, updated)
            if at_run_time is not None:
                self.ctx.count_converted()
                self.ctx.report(original, self.id, f"{qual}: {why}; read when it runs by "
                                f"{at_run_time.func.value}, emitted beside the code (GRAPH mode compiles it "
                                "with constant shapes)", Severity.INFO)
                return at_run_time
            if qual in FUNCTIONS:  # einops itself runs it, on MindSpore tensors
                self._emit_backend()
                self.ctx.count_converted()
                self.ctx.report(original, self.id, f"{qual}: {why}; einops runs it when it runs, through the "
                                "MindSpore backend emitted beside the code", Severity.INFO)
                return updated
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"{qual}: {why}; left as it is (einops has no MindSpore backend)")
            return updated
        self.ctx.count_converted()
        return result

    def _pack_at_run_time(self, qual: str, call: cst.Call) -> cst.Call | None:
        """pack/unpack this pass cannot write out (a pattern known only when it runs): a call
        of the helper that reads the pattern then, in MindSpore ops. einops itself, through the
        backend, would run outside the graph in GRAPH mode, and its results would have no
        static shape there."""
        if qual not in PACK_AT_RUN_TIME:
            return None
        kind, params = FUNCTIONS[qual]
        try:
            args, lengths = _arguments(call, params)
        except Unconvertible:
            return None
        if lengths or set(args) != set(params):
            return None
        fn = runtime_helper(self.ctx, PACK_AT_RUN_TIME[qual])
        return cst.Call(func=fn, args=[cst.Arg(args[p]) for p in params])

    def _einx(self, qual: str, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``einx.add("b n d, b d", x, y)`` -> ``_einx_elementwise(ops.add, "b n d, b d", x, y)``:
        a literal description of named axes (no composed ``(h d)`` or bracketed axes) and
        tensors by position; anything else of einx is left, with a warning."""
        description = literal_value(original.args[0].value) if original.args else NOT_LITERAL
        if qual not in EINX_ELEMENTWISE:
            why = "only einx's elementwise functions are converted"
        elif not isinstance(description, str) or "(" in description or "[" in description:
            why = "the description is not a literal of named axes"
        elif any(a.keyword is not None or a.star for a in original.args):
            why = "arguments by keyword or with * (backend=, axis lengths)"
        else:
            self.ctx.count_converted()
            self.ctx.report(original, self.id, f"{qual}: _einx_elementwise lines the named axes up when it runs "
                            "(einx has no MindSpore backend)", Severity.INFO)
            return updated.with_changes(func=runtime_helper(self.ctx, "_einx_elementwise"),
                                        args=[cst.Arg(self.ctx.reference(EINX_ELEMENTWISE[qual])), *updated.args])
        self.ctx.count_unconverted()
        self.ctx.mark(original, self.id, f"{qual}: {why}; left as it is (einx has no MindSpore backend: it fails "
                      "on MindSpore tensors)")
        return updated

    def _emit_backend(self) -> None:
        """The einops backend for MindSpore tensors, defined beside the code (once)."""
        ms_, ops_, _ = module_spellings(self.ctx)
        base = code(self.ctx.reference(BACKEND_BASE))
        environ = code(self.ctx.reference("os.environ"))
        self._helper(BACKEND_NAME, BACKEND.replace("{base}", base).replace("{ms}", ms_).replace("{ops}", ops_)
                     .replace("{environ}", environ))

    def _lower(self, qual: str, call: cst.Call) -> cst.BaseExpression:
        if qual == "einops.einsum":
            return self._einsum(call)
        if qual not in FUNCTIONS and qual not in LAYERS:
            raise Unconvertible("not lowered (only rearrange, reduce, repeat, einsum, pack, unpack, Rearrange and Reduce are)")
        kind, params = FUNCTIONS.get(qual) or LAYERS[qual]
        args, lengths = _arguments(call, params)
        pattern = literal_value(args["pattern"]) if "pattern" in args else NOT_LITERAL
        if not isinstance(pattern, str):
            raise Unconvertible("the pattern is not a literal string")
        if kind in ("pack", "unpack"):
            return self._pack(kind, args, pattern)
        reduction = label = None
        if kind == "reduce":
            reduction = literal_value(args["reduction"]) if "reduction" in args else NOT_LITERAL
            if reduction == "repeat":  # einops' Reduce(..., "repeat") is repeat (hyper-connections' stream expansion)
                kind, reduction, label = "repeat", None, "repeat"
            elif reduction not in REDUCTIONS:
                # (the reduction's code is not quoted: black may lay it out otherwise, and the
                # marker must read the same when the output is converted again)
                raise Unconvertible(f"the reduction is not one of {', '.join(REDUCTIONS)} written as a literal")
        axes = sorted(lengths)
        lowering = _Lowering(self.ctx.reference, kind, pattern, {a: _ph(i + 1) for i, a in enumerate(axes)}, reduction)
        text = lowering.code()
        if qual in LAYERS:
            return self._layer(qual, lowering, text, pattern, reduction or label, axes, lengths)
        if isinstance(args["tensor"], (cst.List, cst.Tuple)):
            raise Unconvertible("a list of tensors as the input (einops stacks it first)")
        operands = [_Operand(args["tensor"], "tensor"), *(_Operand(lengths[a], f"{a}_len") for a in axes)]
        return self._emit(kind, text, operands)

    def _einsum(self, call: cst.Call) -> cst.BaseExpression:
        if any(a.star or a.keyword for a in call.args) or len(call.args) < 2:
            raise Unconvertible("einsum's arguments must be the tensors, then the pattern")
        pattern = literal_value(call.args[-1].value)
        tensors = [a.value for a in call.args[:-1]]
        if not isinstance(pattern, str) or "..." in pattern or len(tensors) > 2:
            # read when it runs: a pattern known only then (x-transformers'
            # f"b h i d, {kv_einsum_eq} -> b h i j"), an ellipsis, three operands or more
            return torch_einsum_at_run_time(self.ctx, call.args[-1].value, tensors, named=True)
        equation = cst.SimpleString(repr(_einsum_equation(pattern, len(tensors))))
        packed = cst.Tuple([cst.Element(equation), *(cst.Element(t) for t in tensors)])
        return torch_einsum(self.ctx, None, {"args": packed}, None)

    def _pack(self, kind: str, args: dict, pattern: str) -> cst.BaseExpression:
        k, m = _pack_layout(pattern)
        op = lambda name: code(self.ctx.reference(f"mindspore.ops.{name}"))  # noqa: E731

        def around(t: str, middle: str) -> str:  # the axes before and after '*' kept, ``middle`` between
            return " + ".join(p for p in (f"{t}.shape[:{k}]" if k else "", middle, f"{t}.shape[{-m}:]" if m else "") if p)

        if kind == "unpack":
            packed = _ph(0)
            sizes = f"[{code(self.ctx.reference('math.prod'))}(_shape) for _shape in {_ph(1)}]"
            middle = "tuple(_shape)"
            shape = " + ".join(p for p in (f"{packed}.shape[:{k}]" if k else "", middle,
                                          f"{packed}.shape[{k + 1}:]" if m else "") if p)
            text = (f"[{op('reshape')}(_part, {shape}) for _part, _shape in "
                    f"zip({op('split')}({packed}, {sizes}, {k}), {_ph(1)})]")
            return self._emit(kind, text, [_Operand(args["tensor"], "tensor"), _Operand(args["packed_shapes"], "shapes")])
        tensors = args["tensors"]
        if not isinstance(tensors, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in tensors.elements):
            raise Unconvertible("pack's tensors are not a literal list")
        items = [_ph(i) for i in range(len(tensors.elements))]
        reshaped = ", ".join(f"{op('reshape')}({t}, {around(t, '(-1,)')})" for t in items)
        shapes = ", ".join(f"{t}.shape[{k or ''}:{-m if m else ''}]" for t in items)
        text = f"({op('cat')}(({reshaped},), {k}), [{shapes}])"
        return self._emit(kind, text, [_Operand(e.value, f"tensor{i}") for i, e in enumerate(tensors.elements)])

    # -- what is emitted -------------------------------------------------------------
    def _emit(self, kind: str, text: str, operands: list[_Operand]) -> cst.BaseExpression:
        """The code in place, unless an operand it reads twice is not safe to evaluate
        twice (a call): then a function emitted beside the code, called once."""
        if all(repeatable(o.node) or text.count(_ph(i)) <= 1 for i, o in enumerate(operands)):
            return cst.parse_expression(_fill(text, [operand_code(o.node) for o in operands]))
        params = [o.param for o in operands]
        source = (f"def {{name}}({', '.join(params)}):\n"
                  f'    """einops {kind} lowered by transpile (MS208); its input is read more than once."""\n'
                  f"    return {_fill(text, params)}\n")
        name = self._helper(f"_einops_{kind}", source)
        return cst.Call(cst.Name(name), [cst.Arg(o.node) for o in operands])

    def _layer(self, qual, lowering: _Lowering, text: str, pattern: str, reduction, axes, lengths) -> cst.BaseExpression:
        layer = qual.rsplit(".", 1)[-1]
        start = lowering.flatten_start()
        if start is not None and not axes:  # an existing layer does exactly this
            flatten = code(self.ctx.reference("mindspore.nn.Flatten"))
            return cst.parse_expression(f"{flatten}()" if start == 1 else f"{flatten}(start_dim={start})")
        if {"self", "super", "x"} & set(axes):
            raise Unconvertible(f"an axis named {sorted({'self', 'super', 'x'} & set(axes))[0]} in a layer")
        described = repr(pattern) + (f", {reduction!r}" if reduction else "")
        init = (f"    def __init__(self{''.join(f', {a}' for a in axes)}):\n        super().__init__()\n"
                + "".join(f"        self.{a}_len = {a}\n" for a in axes) + "\n") if axes else ""
        source = (f"class {{name}}({code(self.ctx.reference('mindspore.nn.Cell'))}):\n"
                  f'    """einops {layer}({described}) as a Cell (transpile MS208)."""\n\n'
                  f"{init}"
                  f"    def construct(self, x):\n"
                  f"        return {_fill(text, ['x', *(f'self.{a}_len' for a in axes)])}\n")
        name = self._helper(f"_Einops{layer}", source)
        return cst.Call(cst.Name(name), [cst.Arg(lengths[a], keyword=cst.Name(a), equal=_EQUAL) for a in axes])

    def _helper(self, prefix: str, source: str) -> str:
        if source not in self.helpers:
            # numbered after the helpers of an earlier run too, whose names stay taken
            taken = {*self.helpers.values(), *getattr(self.ctx.facts, "emitted_definitions", ())}
            self.helpers[source] = next(f"{prefix}{i}" for i in range(len(taken) + 1) if f"{prefix}{i}" not in taken)
        return self.helpers[source]

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self._has_backend:
            self.helpers = {s: n for s, n in self.helpers.items() if not n.startswith(BACKEND_NAME)}
        if not self.helpers:
            return updated
        two_blank = [cst.EmptyLine(), cst.EmptyLine()]
        mode = black.Mode(line_length=88)
        defs = []  # a helper is one statement or more (the backend: a class and its registration)
        for source, name in self.helpers.items():
            first, *rest = cst.parse_module(black.format_str(source.replace("{name}", name), mode=mode)).body
            defs += [first.with_changes(leading_lines=two_blank), *rest]
        body = list(updated.body)
        index = after_imports(body)
        if index < len(body):
            body[index] = body[index].with_changes(leading_lines=[*two_blank, *_comments(body[index].leading_lines)])
        return updated.with_changes(body=[*body[:index], *defs, *body[index:]])

    # -- einops names used as values --------------------------------------------------
    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._einops(node) is None  # einops.layers.torch.Rearrange names one thing

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(self._einops(b.value) == BACKEND_BASE for b in node.bases):
            self._has_backend = True  # converted before: the backend is there

    def leave_Name(self, original, updated):
        if not self.facts.names.is_reference(original):
            return updated  # names that only look like references: x.rearrange, f(rearrange=...), def rearrange()
        return self._reference(original, updated)

    def leave_Attribute(self, original, updated):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        qual = None if id(original) in self._skip else self._einops(original)
        if qual is not None and qual != BACKEND_BASE and not self._by_loader(original):
            if qual in FUNCTIONS:  # maybe(rearrange)(t, ...): einops runs it, on MindSpore tensors
                self._emit_backend()
                self.ctx.count_converted()
                self.ctx.report(original, self.id, f"{qual} used as a value: einops runs it when it runs, through "
                                "the MindSpore backend emitted beside the code", Severity.INFO)
                return updated
            self.ctx.count_unconverted()
            self.ctx.mark(original, self.id, f"{qual} used as a value is not lowered (only its calls with a literal pattern are)")
        return updated


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _top_level_lines(body):
    """The simple statement lines of a module's level, those in its top-level ``if``/``try``
    blocks included (where the file's imports are)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        elif isinstance(stmt, (cst.If, cst.Try)):
            blocks = [stmt.body, *(h.body for h in getattr(stmt, "handlers", ()))]
            orelse = stmt.orelse
            while isinstance(orelse, cst.If):  # elif
                blocks.append(orelse.body)
                orelse = orelse.orelse
            if orelse is not None:
                blocks.append(orelse.body)
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    yield from _top_level_lines(block.body)


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")


def loader_binding(target: cst.BaseExpression, value: cst.BaseExpression) -> tuple[cst.Name, str] | None:
    """The name and the qualified name an assignment binds by a loader call given a module's
    dotted path, as a string, and the member's name, as ``name=`` (a string): ``X, _ =
    optional_import("a.b", name="X")`` (the first of a tuple target: such loaders return the
    object and whether it was found) or ``X = load("a.b", name="X")``; ``m =
    importlib.import_module("a.b")`` binds the module. None for any other assignment."""
    if type(value) is not cst.Call or not value.args or value.args[0].keyword or value.args[0].star:
        return None
    path = literal_value(value.args[0].value)
    if not isinstance(path, str) or not _DOTTED.match(path):
        return None
    member = [literal_value(a.value) for a in value.args[1:] if a.keyword is not None and a.keyword.value == "name"]
    if type(target) is cst.Tuple and target.elements and type(target.elements[0].value) is cst.Name:
        target = target.elements[0].value if member else None
    if type(target) is not cst.Name:
        return None
    if member:
        return (target, f"{path}.{member[0]}") if isinstance(member[0], str) and _DOTTED.match(member[0]) else None
    return (target, path) if code(value.func) == "importlib.import_module" and len(value.args) == 1 else None


def _arguments(call: cst.Call, params: tuple[str, ...]) -> tuple[dict, dict]:
    """(einops parameter -> argument, axis name -> length) of a call."""
    args: dict[str, cst.BaseExpression] = {}
    lengths: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            raise Unconvertible("arguments passed with * or ** (the axis lengths must be written out)")
        if arg.keyword is None:
            if position >= len(params):
                raise Unconvertible("more positional arguments than einops takes")
            args[params[position]] = arg.value
            position += 1
        elif arg.keyword.value in params:
            args[arg.keyword.value] = arg.value
        else:
            lengths[arg.keyword.value] = arg.value
    return args, lengths


def _fill(text: str, values: list[str]) -> str:
    for i, value in enumerate(values):
        text = text.replace(_ph(i), value)
    return text


def _comments(lines) -> list:
    return [ln for ln in lines if ln.comment is not None]
