"""The torch -> MindSpore rewrites: passes, their order, and the mapping tables."""
from __future__ import annotations

from transpile.pipeline import Pipeline

from .passes.api_calls import ApiCalls
from .facts import FileFacts
from .table_calls import tables
from .passes.bool_index import BoolIndex
from .passes.cell_class import CellClass
from .passes.cell_containers import CellContainers
from .passes.graph_lint import GraphLint
from .passes.graph_scalars import GraphScalars
from .passes.layer_call_casts import LayerCallCasts
from .passes.layer_params import LayerParams
from .passes.layer_values import LayerValues
from .passes.module_methods import ModuleMethods
from .passes.scaffolding import Scaffolding
from .passes.imports import Imports
from .passes.inplace_results import InplaceResults
from .passes.tensor_methods import TensorMethods
from .passes.topk_mask import TopkMask

# The order, and why:
# Stage 1 runs in ONE traversal. Its passes all match on the ORIGINAL nodes
# (names are resolved through the file's torch imports, which stay untouched
# until stage 2), so they are independent of each other:
#   - CellClass first: it learns which classes are Cells while visiting class
#     headers; the others never look at that.
#   - CellContainers before ApiCalls: at the same Assign, it wraps the list after
#     ApiCalls has converted the layer calls inside it (leave runs bottom-up).
#   - BoolIndex and TensorMethods rewrite subscripts and method calls that
#     ApiCalls never touches.
#   - TopkMask before ApiCalls: it replaces whole `v, _ = torch.topk(x, k)`
#     statements (the inner call ApiCalls converted is discarded), and its
#     `v.mean()` rewrite must win over TensorMethods' table rewrite of `.mean()`.
#   - BoolIndex before TensorMethods for the same reason: `x[m].sum()` is a
#     masked reduction, not a method call on a selection.
#   - LayerCallCasts, LayerParams and GraphScalars wrap arguments, rename
#     parameter attributes and unwrap scalars; any order works.
#   - LayerValues before ApiCalls: where a torch layer class is a value (not
#     called), it puts a factory taking torch's arguments in place of the class,
#     and ApiCalls leaves a reference another pass rewrote; calls with **kwargs
#     ApiCalls leaves to it; it also converts super().__init__ in subclasses of
#     torch layers.
#   - ModuleMethods renames Module tree methods (receivers that no other pass
#     touches) and inserts SequentialCell refreshes after the statements that
#     grow one; it scans the updated function body, so any position works.
#   - Scaffolding replaces whole calls (is_scripting() -> False), decorators and
#     stub definitions; ApiCalls skips the names it owns, so any position works.
#   - InplaceResults turns a statement calling a helper that changes its
#     argument in place into an assignment of the result; it replaces the
#     Expr statement only, so the call inside keeps every other pass's rewrite.
#   - GraphLint only reports; it reads the original nodes like the others.
# Stage 2: Imports runs alone and last, because it must see which names the
# converted code still uses, and the imports the other passes asked for.
STAGES = (
    (CellClass, CellContainers, ModuleMethods, TopkMask, Scaffolding, LayerValues, ApiCalls, BoolIndex, TensorMethods, LayerCallCasts, LayerParams, GraphScalars, InplaceResults, GraphLint),
    (Imports,),
)

ALL_PASSES = tuple(p for stage in STAGES for p in stage)


def default_pipeline() -> Pipeline:
    return _pipeline(STAGES)


def pipeline_of(*passes: type) -> Pipeline:
    """Only the given passes (in their STAGES order), then Imports: a pass tested alone."""
    stage = tuple(p for p in STAGES[0] if p in passes)
    return _pipeline(((stage,) if stage else ()) + ((Imports,),))


def _pipeline(stages) -> Pipeline:
    t = tables()
    return Pipeline(stages, dict(t.modules), {m.split(".")[0] for m in t.modules},
                    aliases=dict(t.aliases), analyse=FileFacts)
