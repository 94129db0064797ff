"""Mapping tables: TOML data loaded into frozen dataclasses, validated at load time.

A table file holds a ``kind`` ("class", "function", "method", "attribute") and one
table per source symbol. ``modules.toml`` maps source modules to target modules
(``[modules]``), names the alias a new import of a target module takes (``[aliases]``)
and the families ``transpile apis`` groups entries in (``[families]``); a file may map
source types to the target types they are in annotations (``[annotations]``), and the
names modules re-export to the names their entries are keyed by (``[reexports]``:
``reexports.toml``, generated).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

KINDS = ("class", "function", "method", "attribute", "module_method")
_FIELDS = {
    "target", "params", "kwonly", "rename", "defaults", "set", "drop", "unsupported",
    "unsupported_args", "allowed", "transform", "receiver", "weights", "hook", "note",
    "tensor_result", "call_casts", "call_hook", "tensor_only", "call_rename", "call_drop", "called_as",
    "integer_inputs",
}


class TableError(ValueError):
    pass


@dataclass(frozen=True)
class ApiEntry:
    """How one source symbol converts.

    params:   the source's positional parameter order; ``*name`` collects varargs.
    kwonly:   the source's keyword-only parameters.
    rename:   source argument -> target argument.
    defaults: source arguments written out when omitted (the target's default differs).
    set:      target arguments always written, whatever the call says.
    drop:     source arguments removed (each use reported).
    unsupported_args: source argument -> why it cannot be converted
              (harmless when its value equals ``allowed[arg]``).
    transform: source argument -> name of a value transform.
    receiver: for methods turned into functions, the target argument taking the receiver.
    weights:  parameter-name renames a layer's weights need (torch -> target).
    hook:     an escape-hatch function for what data cannot say.
    tensor_result: the call returns a tensor (used to infer receivers of methods).
    call_casts: for layers, positional argument index (as a string) of a CALL of the
              built layer -> the dtype it must be cast to (CrossEntropyLoss labels: int32).
    call_rename: for layers, keyword arguments of a CALL of the built layer that MindSpore
              names otherwise (TransformerEncoder: mask -> src_mask).
    call_drop: for layers, keyword arguments of a CALL that MindSpore does not take and
              that change nothing (is_causal: torch's hint that the mask given is causal).
    tensor_only: for methods, no other kind of value has it in practice: converted even
              where the receiver is not proven a tensor (with a note).
    call_hook: for layers, a hook rewriting each CALL of the built layer (its result
              differs: MultiheadAttention with need_weights=False).
    called_as: for an attribute (a type), the entry its CALLS convert as (torch.Tensor(...)
              is torch.FloatTensor(...); the name alone stays the type).
    integer_inputs: why the converted call does not give torch's result on integer or bool
              tensors (a MindSpore kernel refuses them, or rounds otherwise) where no rule
              casts around it: ``transpile apis`` counts such entries as marked.
    """

    source: str
    kind: str
    target: str | None = None
    params: tuple[str, ...] = ()
    kwonly: tuple[str, ...] = ()
    rename: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    set: Mapping[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()
    unsupported: str | None = None
    unsupported_args: Mapping[str, str] = field(default_factory=dict)
    allowed: Mapping[str, Any] = field(default_factory=dict)
    transform: Mapping[str, str] = field(default_factory=dict)
    receiver: str | None = None
    weights: Mapping[str, str] = field(default_factory=dict)
    hook: str | None = None
    note: str = ""
    tensor_result: bool = True
    call_casts: Mapping[str, str] = field(default_factory=dict)
    call_hook: str | None = None
    call_rename: Mapping[str, str] = field(default_factory=dict)
    call_drop: tuple[str, ...] = ()
    tensor_only: bool = False
    called_as: str | None = None
    integer_inputs: str | None = None
    table: str = ""  # the table file's stem: its hooks live in rewrites/hooks/<table>.py

    @property
    def status(self) -> str:
        if self.unsupported:
            return "unsupported"
        return "converted with a note" if self.note else "converted"

    def source_args(self) -> set[str]:
        return {p.lstrip("*") for p in self.params} | set(self.kwonly)


@dataclass(frozen=True)
class Tables:
    entries: Mapping[str, ApiEntry]  # qualified source name -> entry (not methods)
    methods: Mapping[str, ApiEntry]  # method name -> entry ("view" for Tensor.view)
    modules: Mapping[str, str]  # source module -> target module
    aliases: Mapping[str, str] = field(default_factory=dict)  # target module -> the name it is imported as
    module_methods: Mapping[str, ApiEntry] = field(default_factory=dict)  # "parameters" for Module.parameters
    families: Mapping[str, str] = field(default_factory=dict)  # "kind:K" or a name prefix -> family
    annotations: Mapping[str, str] = field(default_factory=dict)  # source type -> target type in annotations
    # a name a module re-exports -> the name its entry is keyed by (``[reexports]``)
    reexports: Mapping[str, str] = field(default_factory=dict)

    def family(self, entry: ApiEntry) -> str:
        """The family an entry is listed under: its kind's, else its longest name prefix's."""
        if f"kind:{entry.kind}" in self.families:
            return self.families[f"kind:{entry.kind}"]
        prefixes = [p for p in self.families if not p.startswith("kind:") and entry.source.startswith(p)]
        return self.families[max(prefixes, key=len)] if prefixes else "other"

    @cached_property
    def source_roots(self) -> frozenset[str]:
        """Top-level packages the tables convert from (``torch``)."""
        return frozenset(m.split(".")[0] for m in self.modules)

    @cached_property
    def framework_roots(self) -> frozenset[str]:
        """Top-level packages on either side (``torch``, ``mindspore``)."""
        return self.source_roots | frozenset(m.split(".")[0] for m in self.modules.values())

    def lookup(self, qualname: str) -> ApiEntry | None:
        """The entry of a qualified name, also spelled through a module that re-exports it."""
        entry = self.entries.get(qualname)
        if entry is None and qualname in self.reexports:
            entry = self.entries.get(self.reexports[qualname])
        return entry

    def all_entries(self) -> list[ApiEntry]:
        return sorted([*self.entries.values(), *self.methods.values(), *self.module_methods.values()], key=lambda e: e.source)


def _entry(source: str, kind: str, data: dict, where: str) -> ApiEntry:
    unknown = set(data) - _FIELDS
    if unknown:
        raise TableError(f"{where}: {source}: unknown fields {sorted(unknown)}")
    if not data.get("target") and not data.get("unsupported") and not data.get("hook"):
        raise TableError(f"{where}: {source}: needs a target, a hook or an unsupported reason")
    frozen = {
        k: MappingProxyType(dict(v)) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v
        for k, v in data.items()
    }
    entry = ApiEntry(source=source, kind=kind, table=Path(where).stem, **frozen)
    known = entry.source_args()
    for group in ("rename", "defaults", "transform", "unsupported_args", "allowed"):
        extra = set(getattr(entry, group)) - known
        if extra and entry.params:
            raise TableError(f"{where}: {source}: {group} names unknown arguments {sorted(extra)}")
    if extra := set(entry.drop) - known:
        if entry.params:
            raise TableError(f"{where}: {source}: drop names unknown arguments {sorted(extra)}")
    return entry


def load_tables(directory: Path) -> Tables:
    entries: dict[str, ApiEntry] = {}
    methods: dict[str, ApiEntry] = {}
    module_methods: dict[str, ApiEntry] = {}
    modules: dict[str, str] = {}
    aliases: dict[str, str] = {}
    families: dict[str, str] = {}
    annotations: dict[str, str] = {}
    reexports: dict[str, str] = {}
    for path in sorted(directory.glob("*.toml")):
        with path.open("rb") as fh:
            data = tomllib.load(fh)
        if "modules" in data:
            modules.update(data.pop("modules"))
        if "aliases" in data:
            aliases.update(data.pop("aliases"))
        if "families" in data:
            families.update(data.pop("families"))
        if "annotations" in data:
            annotations.update(data.pop("annotations"))
        if "reexports" in data:
            reexports.update(data.pop("reexports"))
        if not data:
            continue
        kind = data.pop("kind", None)
        if kind not in KINDS:
            raise TableError(f"{path.name}: kind must be one of {KINDS}, not {kind!r}")
        for source, body in data.items():
            if not isinstance(body, dict):
                raise TableError(f"{path.name}: {source}: expected a table")
            entry = _entry(source, kind, body, path.name)
            bucket = {"method": methods, "module_method": module_methods}.get(kind, entries)
            key = source.rsplit(".", 1)[-1] if bucket is not entries else source
            if key in bucket:
                raise TableError(f"{path.name}: {source}: defined twice")
            bucket[key] = entry
    return Tables(MappingProxyType(entries), MappingProxyType(methods), MappingProxyType(modules),
                  MappingProxyType(aliases), MappingProxyType(module_methods), MappingProxyType(families),
                  MappingProxyType(annotations), MappingProxyType(reexports))
