"""Localisation: which submodule is the first to diverge, and where it is in the source.

Both models run once more in PYNATIVE mode with hooks on every submodule (torch
forward hooks, MindSpore cell hooks) that exists on both sides under the same path.
The torch events, in the order they happen (a submodule's inputs, then its
output), are checked against MindSpore's: the first event that differs names the
culprit. When a submodule's output differs while its inputs match, its own
computation differs (for a layer, its converted arguments; for a class of the
source, its forward/construct). When a submodule's inputs differ while everything
before it matched, the code of the module that calls it differs (a functional op
between two layers).

The result carries the lines of both files: where the submodule is assigned in its
parent (``self.conv1 = ...``) and, for a class of the source, its forward and
construct. The classes and the frameworks are only touched in the child process;
the dataclasses here are plain data.
"""
from __future__ import annotations

import ast
import functools
import inspect
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .compare import ComparisonError, diff_leaves, flatten, to_tree
from .spec import InputSpec

RTOL_FLOOR = 1e-5  # intermediate values can be large: allow float32 rounding relative to them


@dataclass(frozen=True)
class SourceLine:
    role: str  # "assigned" (self.x = ... in the parent), "forward", "construct"
    file: str
    line: int
    text: str

    def format(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


@dataclass(frozen=True)
class Divergence:
    path: str  # the submodule whose event differs ("" = the model itself)
    torch_class: str
    ms_class: str
    call: int  # 0 = its first call
    event: str  # "output", "inputs" (the caller's code differs), "missing" (MindSpore never calls it)
    # or "raised" (MindSpore raised inside it, every earlier event matching)
    blamed: str  # the path whose code is to blame: path itself, or its caller for "inputs"/"missing"
    blamed_class: str
    summary: str  # one line for people
    max_abs_diff: float | None = None
    original: tuple[SourceLine, ...] = ()
    converted: tuple[SourceLine, ...] = ()

    def label(self) -> str:
        return f"`{self.blamed}`" if self.blamed else "the model itself"


@dataclass(frozen=True)
class Localisation:
    mode: str  # where the hooks ran: always PYNATIVE (MindSpore runs no hooks in GRAPH mode)
    divergence: Divergence | None
    compared: int = 0  # submodule events compared
    unmatched: tuple[str, ...] = ()  # torch submodules with no MindSpore cell of that path
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Localisation | None":
        if not data:
            return None
        d = data.get("divergence")
        if d is not None:
            d = Divergence(**{**d, "original": tuple(SourceLine(**s) for s in d["original"]),
                              "converted": tuple(SourceLine(**s) for s in d["converted"])})
        return cls(data["mode"], d, data.get("compared", 0), tuple(data.get("unmatched", ())), data.get("note", ""))


# -- recording ----------------------------------------------------------------------

@dataclass
class Event:
    kind: str  # "inputs" or "output"
    path: str
    call: int
    tree: object  # numpy tree
    caller: str | None  # the path of the module running when the call was made
    arg_specs: list | None = None  # inputs only: an InputSpec per positional tensor argument


@dataclass
class Recorder:
    """Hooks on a set of modules (or cells) by path; events in the order they happen."""

    is_tensor: object
    to_numpy: object
    keep_arguments: bool = False  # also keep each path's first (args, kwargs) as given, in ``arguments``
    events: list[Event] = field(default_factory=list)
    arguments: dict = field(default_factory=dict)
    _stack: list[str] = field(default_factory=list)
    _calls: dict = field(default_factory=dict)
    _handles: list = field(default_factory=list)

    def _tree(self, value):
        try:
            return to_tree(value, self.is_tensor, self.to_numpy, "a submodule")
        except ComparisonError:
            return "<object>"

    def attach(self, modules: dict[str, object]) -> "Recorder":
        seen: set[int] = set()
        for path, module in modules.items():
            if id(module) in seen:
                continue
            seen.add(id(module))
            self._handles.append(module.register_forward_pre_hook(self._pre(path), with_kwargs=True))
            self._handles.append(module.register_forward_hook(self._post(path)))
        return self

    def open_path(self) -> str | None:
        """The innermost submodule still running (after an exception: where it was raised)."""
        return self._stack[-1] if self._stack else None

    def detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _pre(self, path: str):
        def hook(module, args, kwargs):
            n = self._calls.get(path, 0)
            self._calls[path] = n + 1
            if self.keep_arguments and n == 0:
                self.arguments[path] = (args, dict(kwargs))
            specs = None
            if not kwargs and args and all(self.is_tensor(a) for a in args):
                specs = [_input_spec(self.to_numpy(a)) for a in args]
            self.events.append(Event("inputs", path, n, self._tree({"args": list(args), "kwargs": dict(kwargs)}),
                                     self._stack[-1] if self._stack else None, specs))
            self._stack.append(path)
        return hook

    def _post(self, path: str):
        def hook(module, args, output):
            if self._stack and self._stack[-1] == path:
                self._stack.pop()
            n = self._calls.get(path, 1) - 1
            self.events.append(Event("output", path, n, self._tree(output), self._stack[-1] if self._stack else None))
        return hook


def _input_spec(a) -> InputSpec:
    """A random input like ``a``: its shape and dtype, its range."""
    name = a.dtype.name
    if name == "bool":
        return InputSpec(tuple(a.shape), "bool")
    low = float(a.min()) if a.size else 0.0
    high = float(a.max()) if a.size else 1.0
    if name.startswith("float"):
        if not (math.isfinite(low) and math.isfinite(high)):
            low, high = -1.0, 1.0
        low, high = math.floor(low * 1000) / 1000, math.ceil(high * 1000) / 1000  # readable, and covering
        return InputSpec(tuple(a.shape), name, low, high if high > low else low + 1.0)
    return InputSpec(tuple(a.shape), name, int(low), int(high) + 1)


# -- comparing the two recordings -------------------------------------------------------

def differs(t_tree, m_tree, atol: float, rtol: float) -> tuple[bool, float | None, str]:
    """Whether two recorded trees differ beyond the tolerance: (differs, the worst max abs
    diff, why)."""
    t_leaves, m_leaves = flatten(t_tree, ""), flatten(m_tree, "")
    if [n for n, _ in t_leaves] != [n for n, _ in m_leaves]:
        # a call written with keywords on one side and positions on the other: compare the values in order
        t_leaves = [(f"[{i}]", v) for i, (_, v) in enumerate(t_leaves) if v is not None]
        m_leaves = [(f"[{i}]", v) for i, (_, v) in enumerate(m_leaves) if v is not None]
        if len(t_leaves) != len(m_leaves):
            return True, None, f"different structure ({len(t_leaves)} values in torch, {len(m_leaves)} in MindSpore)"
    worst, why = 0.0, ""
    for (name, t), (_, m) in zip(t_leaves, m_leaves):
        d = diff_leaves(t, m, name=name, atol=atol, rtol=max(rtol, RTOL_FLOOR))
        if not d.allclose:
            value = d.max_abs_diff
            return True, value, d.note or f"max abs diff {value:.3g} ({d.within:.1%} within tolerance)"
        worst = max(worst, d.max_abs_diff)
    return False, worst, why


def find_divergence(t_events: list[Event], m_events: list[Event], ms_paths, atol: float, rtol: float,
                    classes: tuple[dict, dict], raised: tuple[str | None, str] | None = None,
                    ) -> tuple[Divergence | None, int, tuple[str, ...]]:
    """The first torch event MindSpore does not reproduce, the events compared, and the
    torch submodules with no MindSpore counterpart. ``raised``: MindSpore raised (in
    which submodule, and what), so its events stop early."""
    m_index = {(e.kind, e.path, e.call): e for e in m_events}
    t_cls, m_cls = classes
    unmatched: dict[str, None] = {}
    compared = 0
    returned: dict[str, str] = {}  # caller -> the last of its submodules that returned (and matched)

    def divergence(e: Event, event: str, blamed: str, summary: str, value=None) -> tuple:
        return (Divergence(e.path, t_cls.get(e.path, ""), m_cls.get(e.path, ""), e.call, event, blamed,
                           t_cls.get(blamed, "") if blamed in t_cls else m_cls.get(blamed, ""), summary, value),
                compared, tuple(unmatched))

    for e in t_events:
        if e.path not in ms_paths:
            unmatched[e.path] = None
            continue
        other = m_index.get((e.kind, e.path, e.call))
        caller = e.caller or ""
        if other is None and raised is not None:
            where, message = raised
            where = where or ""
            return divergence(replace(e, path=where), "raised", where,
                              f"MindSpore raised inside {_name(where)} ({m_cls.get(where, '')}): {message}; "
                              "every submodule before it matched")
        if other is None:
            return divergence(e, "missing", caller, f"MindSpore never runs {_name(e.path)} (call {e.call + 1}); "
                                                     f"torch does, from {_name(caller)}")
        compared += 1
        bad, value, why = differs(e.tree, other.tree, atol, rtol)
        if not bad:
            if e.kind == "output":
                returned[caller] = e.path
            continue
        if e.kind == "inputs":
            after = f"after {_name(returned[caller])} returns and " if caller in returned else ""
            return divergence(e, "inputs", caller,
                              f"the inputs of {_name(e.path)} (call {e.call + 1}) differ: {why}; every submodule "
                              f"before it matched, so the code of {_name(caller)} ({t_cls.get(caller, '')}) that "
                              f"runs {after}before this call differs", value)
        own = "its inputs match" + (" and so do the outputs of its submodules" if _has_children(e.path, t_cls)
                                    else "")
        return divergence(e, "output", e.path,
                          f"the output of {_name(e.path)} ({t_cls.get(e.path, '')} -> {m_cls.get(e.path, '')}, "
                          f"call {e.call + 1}) differs: {why}; {own}", value)
    return None, compared, tuple(unmatched)


def _name(path: str | None) -> str:
    return f"`{path}`" if path else "the model itself"


def _has_children(path: str, classes: dict) -> bool:
    prefix = f"{path}." if path else ""
    return any(p.startswith(prefix) and p != path for p in classes)


# -- source lines ---------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def _tree_of(file: str) -> ast.Module | None:
    try:
        return ast.parse(Path(file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def _lines_of(file: str) -> tuple[str, ...]:
    try:
        return tuple(Path(file).read_text(encoding="utf-8").splitlines())
    except (OSError, ValueError):
        return ()


def _line(file: str, line: int, role: str) -> SourceLine:
    lines = _lines_of(file)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return SourceLine(role, file, line, text)


def _defined_in(cls, file: Path) -> bool:
    try:
        return Path(inspect.getsourcefile(cls) or "").resolve() == file.resolve()
    except (TypeError, OSError):
        return False


def assignment_line(file: str, class_name: str, attr: str) -> int | None:
    """The first ``self.<attr> = ...`` (or ``add_module('<attr>', ...)``) in the class."""
    tree = _tree_of(file)
    if tree is None:
        return None
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef) and cls.name == class_name):
            continue
        for node in ast.walk(cls):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if (isinstance(el, ast.Attribute) and el.attr == attr and isinstance(el.value, ast.Name)
                            and el.value.id == "self"):
                        return node.lineno
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("add_module", "register_module", "insert_child_to_cell")
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == attr):
                return node.lineno
    return None


def source_lines(path: str, modules: dict[str, object], file: Path, method: str,
                 own_code: bool) -> tuple[SourceLine, ...]:
    """Where ``path`` is assigned in the nearest ancestor defined in ``file``, and (when its
    own code is to blame and its class is defined in ``file``) its ``method``."""
    out: list[SourceLine] = []
    if path:
        parts = path.split(".")
        for cut in range(len(parts) - 1, -1, -1):
            ancestor = ".".join(parts[:cut])
            owner = modules.get(ancestor)
            if owner is None or not _defined_in(type(owner), file):
                continue
            line = assignment_line(str(file), type(owner).__name__, parts[cut])
            if line is not None:
                out.append(_line(str(file), line, "assigned"))
                break
    module = modules.get(path)
    if own_code and module is not None and _defined_in(type(module), file):
        fn = getattr(type(module), method, None)
        try:
            if fn is not None and _defined_in(fn, file):
                out.append(_line(str(file), inspect.getsourcelines(fn)[1], method))
        except (OSError, TypeError):
            pass
    return tuple(out)


def with_lines(div: Divergence, torch_modules: dict, ms_cells: dict, original: Path, converted: Path) -> Divergence:
    own = div.event in ("output", "raised") or div.blamed != div.path
    return replace(
        div,
        original=source_lines(div.blamed, torch_modules, original, "forward", own),
        converted=source_lines(div.blamed, ms_cells, converted, "construct", own),
    )


def user_frame(exc: BaseException, files: list[Path]) -> str:
    """``lenet.py:22 in construct``: the innermost traceback frame in one of ``files``."""
    import traceback

    wanted = {str(f.resolve()) for f in files}
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            if str(Path(frame.filename).resolve()) in wanted:
                found = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        except OSError:
            continue
    return found
