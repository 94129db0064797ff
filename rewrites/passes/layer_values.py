"""MS205: torch layer classes used as values, and subclasses of torch layers.

``norm_layer=nn.BatchNorm2d``, ``partial(nn.LayerNorm, eps=1e-6)``,
``conv_layer=torch.nn.Conv2d``: the class is called somewhere else, with torch's
arguments (``norm_layer(channels)``, ``activation_layer(inplace=True)``,
``conv_layer(cin, cout, 3, 1, 1, bias=False)``), often through ``**kwargs``, where
no call-site rewrite can reach them. Such a value becomes a subclass of the MindSpore
layer defined in the converted file, ``_torch_BatchNorm2d``, that takes torch's
arguments and converts them when it is built, by the same table entry (renames,
defaults written out, dropped and refused arguments, value transforms; hooks have a
run-time twin here). It is still a class, named as torch names it, so ``isinstance``,
``issubclass`` and ``__name__`` tests still hold (``isinstance`` arguments, class
bases, annotations and comparisons keep the class itself).

A torch function called with ``*args``/``**kwargs`` that cannot be matched to its
parameters where it is written (``torch.zeros(1, dim, **dd)``) has its arguments
converted the same way when it runs.

``getattr(torch.nn, "GELU")`` is ``torch.nn.GELU`` used as a value. A name built at run
time from a template (``"Conv%dd" % dims``, ``f"BatchNorm{n}d"``, ``"Pool" + str(n)``,
``"Conv{}d".format(n)``) becomes a lookup in every name of the module the tables know
that the template can spell; a name with no written part
(``getattr(torch.nn, config.norm_class_name)``) a lookup in the converted values of the
names the file writes as strings (a config's defaults); a module with no such name is
left, marked and counted unconverted. An attribute of a torch layer class named at run
time (``setattr(Base, name, getattr(nn.LSTM, name))``, copying torch's methods) is marked:
the MindSpore class does not have torch's methods.

An explicit call of a torch base class's method on the instance
(``nn.Linear.__init__(self, a, b, **kw)``, ``nn.Module.__init__(self)``,
``nn.Conv2d.forward(self, x)``) goes to the MindSpore class: ``__init__`` with the
arguments the entry converts for a constructor call (at run time through ``**kw``),
``forward`` as ``construct``.

A local subclass of a torch layer (``class LayerNorm2d(nn.LayerNorm)``) is built
with torch's arguments too: ``super().__init__(...)`` is converted like a call of the
layer (at run time where the entry builds it through a helper: a Conv's ``padding_mode``
given as a variable), a subclass without ``__init__`` gets one that converts at run time, and
``self.weight``/``self.eps`` read in its methods take the MindSpore names
(``self.gamma``/``self.epsilon``). Constructor arguments torch's layer keeps as attributes
and the subclass reads (``self.affine``) are set after ``super().__init__`` where the
MindSpore layer has none of that name (``_torch_layer_arguments``).
"""
from __future__ import annotations

import functools
import re

import libcst as cst

from transpile.engine.diagnostics import Severity
from transpile.engine.passes import Example, Pass
from transpile.engine.names import STORE
from transpile.engine.formatting import black_layout

from ..table_calls import OUT_ARG, OUT_REFUSED_AT_RUN_TIME, convert_args, convert_call, tables
from ..syntax import Unconvertible, after_imports, bind, code, is_docstring, keyword_call, literal, literal_value
from ..runtime.registry import runtime_helper
from ..analysis.layer_types import attribute_renames
from ..analysis.scaffolding import build_modules
from ..cell_names import is_super_init
from ..hooks import HOOKS
from ..analysis.layer_factories import converted_at_run_time, factory_possible, transform_lines

PREFIX = "_torch_"

# the methods of a torch layer class called on an instance through the class
# (``nn.Linear.__init__(self, ...)``), with their MindSpore names
BASE_METHODS = {"__init__": "__init__", "forward": "construct"}


def factory_name(entry) -> str:
    """``_torch_Conv2d`` for a layer; a function's whole path, as names repeat across
    modules (``torch.relu``, ``torch.nn.functional.relu``): ``_torch_nn_functional_relu``."""
    if entry.kind == "class":
        return PREFIX + entry.source.rsplit(".", 1)[-1]
    return PREFIX + entry.source.split(".", 1)[1].replace(".", "_")


def converter_source(ctx, entry, name: str) -> str:
    """``def _torch_X_args(*args, **kwargs) -> dict``: torch's arguments of the layer
    as MindSpore keyword arguments. A function's converter runs where the function is
    called, in compiled code too: it is written as GRAPH_MODE compiles it (below)."""
    if entry.kind != "class":
        return _compiled_converter_source(entry, name)
    params, star, fixed, body = _positional(entry)
    body += [
        f"for key, value in zip({fixed!r}, args):",
        "    if key in kwargs:",
        '        raise TypeError(f"got multiple values for argument {key!r}")',
        "    kwargs[key] = value",
    ] if fixed else []
    if star is not None:  # torch.zeros(2, 3) and torch.zeros((2, 3)) alike
        body += _star_lines(params, star)
    if OUT_ARG in entry.source_args():  # a value's caller does not write into out= (table_calls does)
        body += [f"if kwargs.pop({OUT_ARG!r}, None) != None:", f"    raise ValueError({OUT_REFUSED_AT_RUN_TIME!r})"]
    for arg, reason in entry.unsupported_args.items():
        if arg in entry.allowed:
            allowed = None if entry.allowed[arg] == "None" else entry.allowed[arg]
            body += [f"if kwargs.pop({arg!r}, {allowed!r}) != {allowed!r}:", f"    raise ValueError({(arg + ': ' + reason)!r})"]
        else:
            body += [f"if {arg!r} in kwargs:", f"    raise ValueError({(arg + ': ' + reason)!r})"]
    for arg in entry.drop:
        body.append(f"kwargs.pop({arg!r}, None)")
    for arg, default in entry.defaults.items():
        body.append(f"kwargs.setdefault({arg!r}, {code(literal(default))})")
    body += transform_lines(entry)
    if entry.hook:
        body += HOOKS[entry.hook].at_run_time(entry)
    renames = {k: v for k, v in entry.rename.items() if k != v}
    if renames:
        body += [f"for old, new in {tuple(renames.items())!r}:", "    if old in kwargs:", "        kwargs[new] = kwargs.pop(old)"]
    for arg, value in entry.set.items():
        body.append(f"kwargs[{arg!r}] = {code(literal(value))}")
    body.append("return kwargs")
    return _converter_def(entry, name, "*args, **kwargs", body)


def _compiled_converter_source(entry, name: str) -> str:
    """The converter of a function's arguments, as GRAPH_MODE compiles it (MindSpore 2.10,
    measured): ``**kwargs`` is no dict there (``kwargs.pop`` fails: "'tuple' object has no
    attribute 'pop'", torch-uncertainty's ``activation=F.relu`` called in construct), and a
    dict takes no ``pop``, ``setdefault`` or ``del``. So the arguments are bound into a new
    dict by item writes, and the ones MindSpore does not take are left out of the dict it
    returns; in PYNATIVE this computes what the layer's form computes."""
    params, star, fixed, body = _positional(entry)
    # the keywords first: a dict given a tensor before the keywords' loop has keys of no
    # constant value in GRAPH_MODE ("make_dict evaluator key only supports string ...")
    body += ["kwargs = {}", "for key in given:", "    kwargs[key] = given[key]"]
    if fixed:
        body += [
            f"for key, value in zip({fixed!r}, args):",
            "    if key in kwargs:",
            '        raise TypeError(f"got multiple values for argument {key!r}")',
            "    kwargs[key] = value",
        ]
    if star is not None:
        body += _star_lines(params, star)
    left_out = []
    if OUT_ARG in entry.source_args():  # a value's caller does not write into out= (table_calls does)
        body += [f"if {OUT_ARG!r} in kwargs and kwargs[{OUT_ARG!r}] is not None:",
                 f"    raise ValueError({OUT_REFUSED_AT_RUN_TIME!r})"]
        left_out.append(OUT_ARG)
    for arg, reason in entry.unsupported_args.items():
        if arg in entry.allowed:
            allowed = None if entry.allowed[arg] == "None" else entry.allowed[arg]
            body += [f"if {arg!r} in kwargs and kwargs[{arg!r}] != {allowed!r}:",
                     f"    raise ValueError({(arg + ': ' + reason)!r})"]
            left_out.append(arg)
        else:
            body += [f"if {arg!r} in kwargs:", f"    raise ValueError({(arg + ': ' + reason)!r})"]
    left_out += entry.drop
    for arg, default in entry.defaults.items():
        body += [f"if {arg!r} not in kwargs:", f"    kwargs[{arg!r}] = {code(literal(default))}"]
    body += transform_lines(entry)
    if entry.hook:
        body += HOOKS[entry.hook].at_run_time(entry)
    renames = {k: v for k, v in entry.rename.items() if k != v}
    if renames:
        body += [f"for old, new in {tuple(renames.items())!r}:", "    if old in kwargs:", "        kwargs[new] = kwargs[old]"]
        left_out += renames
    kept = set(entry.set) | set(renames.values())
    left_out = tuple(dict.fromkeys(arg for arg in left_out if arg not in kept))
    for arg, value in entry.set.items():
        body.append(f"kwargs[{arg!r}] = {code(literal(value))}")
    body.append(f"return {{key: kwargs[key] for key in kwargs if key not in {left_out!r}}}" if left_out
                else "return kwargs")
    return _converter_def(entry, name, "*args, **given", body)


def _positional(entry) -> tuple[tuple, int | None, tuple, list[str]]:
    """torch's parameters, the place of its ``*args`` (or None), those before it, and the
    check of the number of positional arguments where there is no ``*args``."""
    params = tuple(entry.params)
    star = next((i for i, p in enumerate(params) if p.startswith("*")), None)
    fixed = params if star is None else params[:star]
    body = [] if star is not None else [
        f"if len(args) > {len(params)}:",
        f'    raise TypeError("{entry.source} takes {len(params)} positional arguments")',
    ]
    return params, star, fixed, body


def _star_lines(params: tuple, star: int) -> list[str]:
    """``torch.zeros(2, 3)`` and ``torch.zeros((2, 3))`` alike: the positional rest as one argument."""
    return [
        f"rest = args[{star}:]",
        "if rest:",
        f"    kwargs[{params[star][1:]!r}] = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else tuple(rest)",
    ]


def _converter_def(entry, name: str, parameters: str, body: list[str]) -> str:
    doc = f'"""{entry.source}\'s arguments as {entry.target}\'s (transpile MS205)."""'
    return f"def {name}_args({parameters}):\n    {doc}\n" + "".join(f"    {ln}\n" for ln in body)


def torch_name_aliases(entry) -> list[str]:
    """Class attributes giving a layer's parameters their torch names as well, read-only
    (``norm.weight`` is ``norm.gamma``): code that reads them through a value whose type
    is not known where it is written (``self.norm1 = norm_layer(dim)`` ...
    ``self.norm1.weight``) cannot be rewritten there."""
    return [f"{torch_name} = property(lambda self: self.{ms_name})  # torch's name"
            for torch_name, ms_name in entry.weights.items() if ms_name and ms_name != torch_name]


def torch_signature(entry, name: str) -> str:
    """The factory's ``__init__`` answers ``inspect.signature`` with torch's parameter
    names (``inspect`` follows ``__wrapped__``): code that asks which arguments a layer
    class takes before building it (MONAI's ``has_option(norm_type, "num_features")``)
    sees torch's layer. Defaults are not known here: the parameters have none."""
    params = ", ".join(["self", *entry.params, *(["*", *entry.kwonly] if entry.kwonly else [])])
    return f"# torch's parameter names, for inspect.signature\n{name}.__init__.__wrapped__ = lambda {params}: None\n"


def _self_reads(node: cst.ClassDef) -> frozenset[str]:
    """The names ``self.X`` reads in a class's code, less those the class assigns itself."""
    reads, written = set(), set()
    for found in _walk(node):
        if type(found) is cst.Attribute and type(found.value) is cst.Name and found.value.value == "self":
            reads.add(found.attr.value)
        elif type(found) in (cst.Assign, cst.AnnAssign, cst.AugAssign):
            targets = [t.target for t in found.targets] if type(found) is cst.Assign else [found.target]
            written.update(t.attr.value for t in targets if type(t) is cst.Attribute
                           and type(t.value) is cst.Name and t.value.value == "self")
    return frozenset(reads - written)


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        found = stack.pop()
        yield found
        stack.extend(found.children)


@functools.lru_cache(maxsize=512)
@functools.lru_cache(maxsize=1024)
def _statements(source: str) -> tuple[cst.BaseStatement, ...]:
    """The statements of an emitted definition's source, parsed once (the same few recur
    in every file; LibCST's nodes are immutable, so files share them)."""
    return tuple(cst.parse_module(source).body)


def factory_source(ctx, entry, name: str, caller: bool = False) -> str:
    """The argument converter; for a layer also the factory that stands for the class;
    for a function passed as a value (``caller``), a function taking torch's arguments."""
    source = converter_source(ctx, entry, name)
    if caller and "*" not in entry.rename.values():  # partial(torch.cat, dim=-1), map(F.softmax, ...)
        target = code(ctx.reference(entry.target))
        source += (
            f"\n\ndef {name}(*args, **kwargs):\n"
            f'    """{entry.source} with torch\'s arguments, converted when called (transpile MS205)."""\n'
            f"    return {target}(**{name}_args(*args, **kwargs))\n"
        )
    if "*" in entry.rename.values():  # ops.randn(*size): the sizes go by position
        target = code(ctx.reference(entry.target))
        source += (
            f"\n\ndef {name}(*args, **kwargs):\n"
            f'    """{entry.source} with torch\'s arguments, converted when called (transpile MS205)."""\n'
            f"    kwargs = {name}_args(*args, **kwargs)\n"
            '    size = kwargs.pop("*", ())\n'
            f"    return {target}(*(size if isinstance(size, (tuple, list)) else (size,)), **kwargs)\n"
        )
    if entry.kind == "class":  # functions are only called at run time (not passed as values)
        # A subclass, not a function: code that receives the class still sees a class
        # (issubclass, isinstance of what it builds) under torch's name (``__name__``
        # dispatch, as timm's ``get_norm_act_layer`` does).
        target = code(ctx.reference(entry.target))
        torch_name = entry.source.rsplit(".", 1)[-1]
        aliases = "".join(f"    {line}\n" for line in torch_name_aliases(entry))
        source += (
            f"\n\nclass {name}({target}):\n"
            f'    """{entry.source} passed as a value: built with torch\'s arguments (transpile MS205)."""\n\n'
            + (aliases + "\n" if aliases else "")
            + f"    def __init__(self, *args, **kwargs):\n"
            f"        super().__init__(**{name}_args(*args, **kwargs))\n\n\n"
            f"{name}.__name__ = {name}.__qualname__ = {torch_name!r}\n"
            + torch_signature(entry, name)
        )
    try:
        return black_layout(source)
    except Exception:  # noqa: BLE001 - unformatted is still correct
        return source


def name_template(node) -> re.Pattern | None:
    """The names a string built at run time can spell, as a pattern, when part of it is
    written (``f"BatchNorm{n}d"``, ``"Conv%dd" % dims``, ``"Conv" + str(n) + "d"``);
    None for a name with no written part (``config.norm_class_name``)."""
    parts = _template_parts(node)
    if parts is None or not any(type(p) is str for p in parts):
        return None
    return re.compile("".join(re.escape(p) if type(p) is str else p.pattern for p in parts))


_ANY = re.compile(".+")
_NUMBER = re.compile("-?[0-9]+")
_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*[0-9*]*(?:\.[0-9*]+)?[hlL]?([diouxXeEfFgGcrsa%])")


def _template_parts(node) -> list | None:
    """Written text (str) and patterns for the parts computed at run time."""
    value = literal_value(node) if type(node) in (cst.SimpleString, cst.ConcatenatedString) else None
    if type(value) is str:
        return [value]
    if type(node) is cst.FormattedString:
        return [p.value if type(p) is cst.FormattedStringText else _ANY for p in node.parts]
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
        left, right = _template_parts(node.left), _template_parts(node.right)
        return None if left is None or right is None else [*left, *right]
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
        text = literal_value(node.left) if type(node.left) is cst.SimpleString else None
        if type(text) is not str:
            return None
        parts: list = []
        at = 0
        for spec in _FORMAT_SPEC.finditer(text):
            parts.append(text[at:spec.start()])
            kind = spec.group(1)
            parts.append("%" if kind == "%" else _NUMBER if kind in "diu" else _ANY)
            at = spec.end()
        parts.append(text[at:])
        return parts
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "format" \
            and type(node.func.value) is cst.SimpleString:  # "Conv{}d".format(dims)
        text = literal_value(node.func.value)
        if type(text) is not str or "{{" in text:
            return None
        pieces = re.split(r"\{[^{}]*\}", text)
        return [p for i, piece in enumerate(pieces) for p in ((piece,) if i == 0 else (_ANY, piece))]
    return [_ANY] if type(node) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call) else None


def _attribute_name(entry, attr: str) -> str | None:
    """MindSpore's name of a torch layer's attribute (a parameter, or one holding a
    constructor argument), when it has another one."""
    new = entry.weights.get(attr)
    if new is None and attr not in ("weight", "bias"):
        new = entry.rename.get(attr)
        if new is not None and (new.startswith("has_") or new == "*"):
            new = None
    return new if new and new != attr else None


class LayerValues(Pass):
    id = "MS205"
    name = "layer-values"
    reads = frozenset({"emitted_definitions", "list_names", "names", "string_literals"})
    summary = "torch layer classes passed as values take torch's arguments; subclasses of torch layers are built with them."
    runs_after = {
        "MS211": "MS211 rewrites the module's statements (leave_Module) before MS205 inserts its definitions there",
    }
    examples = (
        Example(
            "import torch.nn as nn\nclass Block(nn.Module):\n    def __init__(self, act=nn.ReLU):\n"
            "        super().__init__()\n        self.act = act(inplace=True)\n",
            'import mindspore.nn as nn\n\n\ndef _torch_ReLU_args(*args, **kwargs):\n'
            '    """torch.nn.ReLU\'s arguments as mindspore.nn.ReLU\'s (transpile MS205)."""\n'
            '    if len(args) > 1:\n        raise TypeError("torch.nn.ReLU takes 1 positional arguments")\n'
            '    for key, value in zip(("inplace",), args):\n        if key in kwargs:\n'
            '            raise TypeError(f"got multiple values for argument {key!r}")\n'
            '        kwargs[key] = value\n    kwargs.pop("inplace", None)\n    return kwargs\n\n\n'
            "class _torch_ReLU(nn.ReLU):\n"
            '    """torch.nn.ReLU passed as a value: built with torch\'s arguments (transpile MS205)."""\n\n'
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(**_torch_ReLU_args(*args, **kwargs))\n\n\n"
            '_torch_ReLU.__name__ = _torch_ReLU.__qualname__ = "ReLU"\n'
            "# torch's parameter names, for inspect.signature\n"
            "_torch_ReLU.__init__.__wrapped__ = lambda self, inplace: None\n\n\n"
            "class Block(nn.Cell):\n    def __init__(self, act=_torch_ReLU):\n"
            "        super().__init__()\n        self.act = act(inplace=True)\n",
        ),
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self.tables = tables()
        self.needed: dict[str, object] = {}  # factory name -> entry
        self.callers: set[str] = set()  # factories of functions passed as values (a caller is emitted)
        self._skip: set[int] = set()  # ids of nodes that keep the class (not values)
        self._no_value = 0  # depth inside annotations and comparisons
        self._classes: list[object] = []  # per open class: the torch layer entry it subclasses, or None
        self._methods: list[tuple[str, bool]] = []  # (function name, directly in a class)
        self._class_depth: list[int] = []
        self._class_reads: list[frozenset[str]] = []  # per open class: the self.X names its code reads
        self._kept_arguments: list[tuple[str, cst.BaseExpression]] = []  # set after a converted super().__init__

    # -- positions that keep the class ------------------------------------------------
    def _entry(self, node):
        qual = self.ctx.imports.qualify(node)
        if qual is None or not qual.startswith("torch.nn."):
            return None
        return self.tables.lookup(qual)

    def visit_Call(self, node: cst.Call) -> None:
        self._skip.add(id(node.func))
        if type(node.func) is cst.Attribute:  # nn.Linear.reset_parameters(self): a class's method, not a value
            self._skip.add(id(node.func.value))
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass", "type") and len(node.args) >= 2:
            classes = node.args[1].value
            self._skip.add(id(classes))
            if isinstance(classes, cst.Tuple):
                self._skip.update(id(e.value) for e in classes.elements)

    def visit_MatchClass(self, node: cst.MatchClass) -> None:
        self._skip.add(id(node.cls))  # case nn.Linear(): a class tested, as by isinstance

    def leave_MatchClass(self, original: cst.MatchClass, updated: cst.MatchClass):
        """``case nn.Linear(in_features=4)``: the attributes a class pattern reads have
        MindSpore's names (``in_channels``), as ``self.in_features`` in a subclass has."""
        entry = self._entry(original.cls)
        if entry is None:
            return updated
        kwds = [k.with_changes(key=cst.Name(_attribute_name(entry, k.key.value) or k.key.value)) for k in updated.kwds]
        return updated.with_changes(kwds=kwds)

    def visit_Annotation(self, node) -> None:
        self._no_value += 1

    def leave_Annotation(self, original, updated):
        self._no_value -= 1
        return updated

    def visit_Comparison(self, node) -> None:
        self._no_value += 1

    def leave_Comparison(self, original, updated):
        self._no_value -= 1
        return updated

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def leave_Attribute(self, original, updated):
        renamed = self._self_attribute(original, updated)
        if renamed is not None:
            return renamed
        return self._value(original, updated)

    def _self_attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """``self.weight`` -> ``self.gamma``, ``self.eps`` -> ``self.epsilon`` in the methods of
        a subclass of a torch layer: its parameters and the attributes holding its
        constructor arguments have MindSpore's names."""
        entry = self._layer_class()
        if entry is None or not (isinstance(original.value, cst.Name) and original.value.value == "self"):
            return None
        attr = original.attr.value
        new = _attribute_name(entry, attr)
        if not new:
            return None
        self.ctx.count_converted()
        return cst.parse_expression(f"{code(updated.value)}.{new}")

    def leave_Name(self, original, updated):
        if not self.facts.names.is_reference(original):
            return updated  # names that only look like references: x.Conv2d, f(Conv2d=...), def Conv2d()
        if self.facts.names.role(original) == STORE:
            return updated  # rebinding an imported name (`ReLU = None` where torch is missing) is no value of it
        return self._value(original, updated)

    def _value(self, original, updated):
        if self._no_value or id(original) in self._skip:
            return updated
        entry = self._entry(original)
        if not factory_possible(entry):
            return self._function_value(original, updated)
        name = factory_name(entry)
        self.needed[name] = entry
        self.ctx.count_converted()
        return cst.Name(name)

    def _function_value(self, original, updated):
        """A torch function passed as a value whose arguments differ in MindSpore
        (``partial(torch.cat, dim=-1)``): a generated function taking torch's arguments."""
        qual = self.ctx.imports.qualify(original)
        entry = self.tables.lookup(qual) if qual and qual.startswith("torch.") else None
        if entry is None or entry.kind != "function" or not factory_possible(entry, functions=True):
            return updated
        if not (entry.rename or entry.defaults or entry.set or entry.hook or entry.drop or entry.transform):
            return updated  # the same arguments: ApiCalls renames it
        name = factory_name(entry)
        self.needed[name] = entry
        self.callers.add(name)
        self.ctx.count_converted()
        return cst.Name(name)

    # -- subclasses of torch layers ---------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            self._skip.add(id(base.value))
        layers = [e for e in (self._entry(b.value) for b in node.bases) if e is not None and e.kind == "class"]
        entry = layers[0] if len(layers) == 1 and layers[0].params and layers[0].target else None
        self._classes.append(entry)
        self._class_depth.append(len(self._methods))
        self._class_reads.append(_self_reads(node) if entry is not None else frozenset())

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        entry = self._classes.pop()
        self._class_depth.pop()
        self._class_reads.pop()
        if entry is None:
            return updated
        updated = self._with_aliases(original, updated, entry)
        has_init = any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__" for s in original.body.body)
        if has_init or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        if not factory_possible(entry):
            self.ctx.report(original, self.id, f"{original.name.value} subclasses {entry.source} and is built with "
                            "torch's arguments, which cannot be converted here", Severity.WARNING)
            return updated
        name = factory_name(entry)
        self.needed[name] = entry
        init = cst.parse_statement(
            "def __init__(self, *args, **kwargs):\n"
            f"    super().__init__(**{name}_args(*args, **kwargs))  # {entry.source}'s arguments\n"
        )
        body = list(updated.body.body)
        start = 1 if body and is_docstring(body[0]) else 0
        self.ctx.count_converted()
        return updated.with_changes(body=updated.body.with_changes(body=[*body[:start], init, *body[start:]]))

    def _with_aliases(self, original: cst.ClassDef, updated: cst.ClassDef, entry) -> cst.ClassDef:
        """A local subclass of a torch layer answers to torch's parameter names too
        (timm's ``BatchNormAct2d(nn.BatchNorm2d)`` is read as ``bn.weight`` elsewhere);
        names the class itself defines are left alone."""
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        own = {t.target.value for s in original.body.body if isinstance(s, cst.SimpleStatementLine)
               for a in s.body if isinstance(a, cst.Assign) for t in a.targets if isinstance(t.target, cst.Name)}
        own |= {s.name.value for s in original.body.body if isinstance(s, cst.FunctionDef)}
        lines = [ln for ln in torch_name_aliases(entry) if ln.split(" ", 1)[0] not in own]
        if not lines:
            return updated
        body = list(updated.body.body)
        start = 1 if body and is_docstring(body[0]) else 0
        stmts = [cst.parse_statement(ln + "\n") for ln in lines]
        rest = body[start:]
        if rest:  # a blank line between the aliases and what follows
            rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *rest[0].leading_lines])
        return updated.with_changes(body=updated.body.with_changes(body=[*body[:start], *stmts, *rest]))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skip.add(id(node.name))
        direct = bool(self._class_depth) and self._class_depth[-1] == len(self._methods)
        self._methods.append((node.name.value, direct))

    def leave_FunctionDef(self, original, updated):
        self._methods.pop()
        self._kept_arguments = []  # a super().__init__ outside a simple statement: none to follow
        return updated

    def _layer_class(self):
        """The torch layer entry of the class whose method we are directly in."""
        if not self._classes or not self._methods or not self._methods[-1][1]:
            return None
        return self._classes[-1]

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        looked_up = self._torch_getattr(original, updated)
        if looked_up is not None:
            return looked_up
        base_call = self._explicit_base_call(original, updated)
        if base_call is not None:
            return base_call
        if any(a.star for a in original.args):
            entry = self._entry(original.func)
            if factory_possible(entry):  # nn.Conv2d(cin, cout, bias=False, **kwargs): ApiCalls left it
                return self._runtime_call(entry, updated, self.ctx.reference(entry.target))
            entry = self._function_entry(original)
            if entry is not None:  # torch.zeros(1, dim, **dd): ApiCalls left it
                return self._runtime_call(entry, updated, self.ctx.reference(entry.target))
        entry = self._layer_class()
        if entry is None or not is_super_init(original.func) or self._methods[-1][0] != "__init__":
            return updated
        snap = self.ctx.snapshot()
        try:
            result = convert_call(self.ctx, entry, updated, self.id, original=original)
            # a hook that builds the layer through a helper (a Conv's padding_mode given
            # as a variable: _torch_padded_conv(nn.Conv2d, ...)) builds another object,
            # which super().__init__ cannot be: its arguments convert at run time instead
            if not (isinstance(result, cst.Call) and result.func.deep_equals(self.ctx.reference(entry.target))):
                raise Unconvertible("the entry builds an expression, not a call of its class")
        except Unconvertible as why:
            self.ctx.restore(snap)  # what the discarded conversion asked for (its helpers, notes)
            if not factory_possible(entry):
                self.ctx.count_unconverted()
                self.ctx.mark(original, self.id, f"super().__init__ of a {entry.source} subclass: {why}")
                return updated
            self._kept_arguments = self._stored_arguments(entry, original)
            return self._runtime_call(entry, updated, updated.func)
        self.ctx.count_converted()
        self._kept_arguments = self._stored_arguments(entry, original)
        return result.with_changes(func=updated.func)

    def _stored_arguments(self, entry, call: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
        """The constructor arguments of ``super().__init__(...)`` that torch's layer keeps as
        attributes of the same name and the subclass reads (``self.affine``): MindSpore's
        layer may keep none of them (BatchNorm2d has no ``affine``), so the converted
        ``__init__`` sets those it lacks (``_torch_layer_arguments``). Only names and
        literals: each is written once more."""
        reads = self._class_reads[-1] if self._class_reads else frozenset()
        # (a Conv's bias= is a flag; torch's self.bias is the parameter)
        skip = set(attribute_renames(entry)) | set(entry.weights) | set(entry.drop) | {"weight", "bias"}
        wanted = [p for p in entry.params if p in reads and p not in skip and not p.startswith("*")]
        if not wanted:
            return []
        try:
            bound = bind(call, entry.params, entry.kwonly)
        except Unconvertible:
            return []
        return [(p, bound[p]) for p in wanted if p in bound and not isinstance(bound[p], list)
                and (type(bound[p]) is cst.Name or literal_value(bound[p]) is not None)]

    def leave_SimpleStatementLine(self, original, updated):
        if not self._kept_arguments:
            return updated
        kept, self._kept_arguments = self._kept_arguments, []
        helper = runtime_helper(self.ctx, "_torch_layer_arguments")
        call = keyword_call(helper, dict(kept))
        call = call.with_changes(args=[cst.Arg(cst.Name("self")), *call.args])
        return cst.FlattenSentinel([updated, cst.SimpleStatementLine([cst.Expr(call)])])

    def _explicit_base_call(self, original: cst.Call, updated: cst.Call):
        """``nn.Linear.__init__(self, a, b, **kw)``, ``nn.Module.__init__(self)``,
        ``nn.Conv2d.forward(self, x)``: a base class's method called through the torch
        name, the instance first. The base became the MindSpore class, so the call goes
        to that class: ``__init__`` with the arguments the entry converts for a
        constructor call (at run time when they cannot be matched here), ``forward`` as
        ``construct``. Left to MS201 (marked) when the entry cannot convert them."""
        func = original.func
        if not (type(func) is cst.Attribute and original.args
                and not original.args[0].star and original.args[0].keyword is None):
            return None
        entry = self._entry(func.value)
        if entry is None or entry.kind != "class" or entry.unsupported or not entry.target \
                or entry.target.startswith("."):
            return None
        instance, rest = updated.args[0], updated.with_changes(args=updated.args[1:])
        if func.attr.value not in BASE_METHODS:
            return self._module_method_call(original, updated, entry, instance, rest)
        target = self.ctx.reference(entry.target)
        method = BASE_METHODS[func.attr.value]
        if method == "construct" and entry.call_hook:
            return None  # the layer's calls are rewritten (LSTM's hidden state): MS201 marks it
        if method != "__init__" or not (entry.params or entry.kwonly):
            args = [instance, *rest.args]  # forward's arguments, or a class taking the same ones
        else:
            try:
                built = convert_call(self.ctx, entry, rest, self.id, original=original)
                if not (type(built) is cst.Call and built.func.deep_equals(target)):
                    raise Unconvertible("the entry builds an expression, not a call of its class")
                args = [instance, *built.args]
            except Unconvertible:
                if not factory_possible(entry):
                    return None
                name = factory_name(entry)
                self.needed[name] = entry
                args = [instance, cst.Arg(cst.Call(func=cst.Name(f"{name}_args"), args=rest.args), star="**")]
        self.ctx.claim(original, self.id)  # MS201 has no entry for Class.method and would mark it
        self.ctx.count_converted()
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]  # laid out by black
        return updated.with_changes(func=cst.Attribute(value=target, attr=cst.Name(method)), args=args)

    def _module_method_call(self, original: cst.Call, updated: cst.Call, entry, instance: cst.Arg, rest: cst.Call):
        """``nn.Linear.train(self, mode)`` -> ``nn.Dense.set_train(self, mode=mode)``: a Module
        method the Cell has under another name (tables/module_methods.toml, no hook), called
        through the class with the converted arguments."""
        method = self.tables.module_methods.get(original.func.attr.value)
        if method is None or method.hook or not (method.target or "").startswith("."):
            return None
        try:
            args = convert_args(self.ctx, method, rest, self.id, original=original)
        except Unconvertible:
            return None
        if "*" in args:
            return None
        self.ctx.claim(original, self.id)  # MS201 has no entry for Class.method and would mark it
        self.ctx.count_converted()
        func = cst.Attribute(value=self.ctx.reference(entry.target), attr=cst.Name(method.target[1:]))
        keywords = [cst.Arg(value, keyword=cst.Name(name)) for name, value in args.items()]
        return updated.with_changes(func=func, args=[instance.with_changes(comma=cst.MaybeSentinel.DEFAULT), *keywords])

    def _torch_getattr(self, original: cst.Call, updated: cst.Call):
        """``getattr(torch.nn, "GELU")`` is ``torch.nn.GELU``. With a name known only at
        run time (``getattr(torch.nn, config.norm_class_name)``) it becomes a lookup in
        the converted values of the names the file spells as strings and the module has
        (``{"LayerNorm": _torch_LayerNorm, "RMSNorm": nn.RMSNorm}[...]``): the
        values a config can hold are written in the file, as defaults or comparisons."""
        if not (isinstance(original.func, cst.Name) and original.func.value == "getattr" and len(original.args) == 2
                and not any(a.star or a.keyword for a in original.args)):
            return None
        module = self.ctx.imports.qualify(original.args[0].value)
        if module is None or module.split(".")[0] not in self.tables.source_roots:
            return None
        name = literal_value(original.args[1].value)
        if type(name) is str and f"{module}.{name}" in build_modules():
            return None  # getattr(torch, "version").cuda: MS206 answers it whole
        if type(name) is str:
            value = self._converted_value(f"{module}.{name}")
            if value is None:
                return self._unconverted_lookup(original, updated, f"{module}.{name} has no MindSpore counterpart here")
            self.ctx.count_converted()
            return value
        pattern = name_template(original.args[1].value)
        if pattern is not None:  # getattr(nn, f"Conv{dims}d"): every name of the module's the tables know
            candidates = sorted(e.source.rsplit(".", 1)[1] for e in self.tables.all_entries()
                                if e.source.rsplit(".", 1)[0] == module and pattern.fullmatch(e.source.rsplit(".", 1)[1]))
        else:
            candidates = [n for n in sorted(self.facts.string_literals()) if n.isidentifier()]
        values = {n: v for n in candidates if (v := self._converted_value(f"{module}.{n}")) is not None}
        if not values:
            if module not in self.tables.modules and self.tables.lookup(module) is not None:
                # setattr(Base, name, getattr(nn.LSTM, name)) over torch's names (torchrl copies
                # nn.LSTM's methods onto a torch base): read on torch's class, whose names they are
                entry = self.tables.lookup(module)
                self.ctx.count_unconverted()
                self.ctx.mark(original, self.id, f"getattr kept torch: an attribute of {module} named at run time; "
                              f"{entry.target or 'its MindSpore counterpart'} does not have torch's methods")
                first = self.ctx.keep_source(module, original.args[0].value)
                return updated.with_changes(args=[updated.args[0].with_changes(value=first), *updated.args[1:]])
            return self._unconverted_lookup(original, updated, f"an attribute of {module} named at run time")
        self.ctx.count_converted()
        table = cst.Dict([cst.DictElement(cst.SimpleString(repr(n)), v) for n, v in values.items()])
        return cst.Subscript(table, [cst.SubscriptElement(cst.Index(updated.args[1].value))])

    def _unconverted_lookup(self, original: cst.Call, updated: cst.Call, why: str):
        self.ctx.count_unconverted()
        self.ctx.mark(original, self.id, f"getattr kept torch: {why}")
        return updated

    def _converted_value(self, qual: str):
        """The converted expression standing for the torch class or function ``qual``
        used as a value, or None."""
        entry = self.tables.lookup(qual)
        if entry is None or entry.kind not in ("class", "function") or entry.unsupported or not entry.target:
            return None
        if factory_possible(entry, functions=entry.kind == "function"):
            name = factory_name(entry)
            self.needed[name] = entry
            if entry.kind == "function":
                self.callers.add(name)
            return cst.Name(name)
        if entry.hook or entry.target.startswith("."):
            return None
        return self.ctx.reference(entry.target)

    def _function_entry(self, call: cst.Call):
        qual = self.ctx.imports.qualify(call.func)
        entry = self.tables.lookup(qual) if qual else None
        return entry if converted_at_run_time(entry, call) else None

    def _runtime_call(self, entry, call: cst.Call, func) -> cst.Call:
        """``func(**_torch_X_args(<the call's arguments>))``: converted when it runs."""
        name = factory_name(entry)
        self.needed[name] = entry
        self.ctx.count_converted()
        if "*" in entry.rename.values():  # the generated caller spreads the sizes
            return call.with_changes(func=cst.Name(name))
        inner = cst.Call(func=cst.Name(f"{name}_args"), args=call.args)
        return call.with_changes(func=func, args=[cst.Arg(inner, star="**")])

    # -- the definitions ----------------------------------------------------------------
    def leave_Module(self, original: cst.Module, updated: cst.Module):
        # with the definitions hooks asked for (ctx.definitions: the Cells standing for
        # nn.Unfold, ...): the traversal has left every call when the module is left
        sources = {**self.ctx.definitions,
                   **{n: factory_source(self.ctx, e, n, n in self.callers) for n, e in self.needed.items()}}
        for name in getattr(self.ctx.facts, "emitted_definitions", ()):  # written by an earlier run: kept, not doubled
            sources.pop(name, None)
        if not sources:
            return updated
        defs = []
        two_blank = [cst.EmptyLine(), cst.EmptyLine()]
        for name in sorted(sources):
            for i, stmt in enumerate(_statements(sources[name])):
                defs.append(stmt.with_changes(leading_lines=two_blank) if i == 0 else stmt)
        body = list(updated.body)
        index = after_imports(body)
        if index < len(body):  # two blank lines before the code that follows
            nxt = body[index]
            blank = sum(1 for ln in nxt.leading_lines if ln.comment is None)
            if blank < 2:
                body[index] = nxt.with_changes(leading_lines=[*[cst.EmptyLine()] * (2 - blank), *nxt.leading_lines])
        return updated.with_changes(body=[*body[:index], *defs, *body[index:]])
