"""The torch -> MindSpore rewrites: passes, their order, and the mapping tables."""
from __future__ import annotations

from transpile.engine.pipeline import Pipeline

from .passes.annotation_types import AnnotationTypes
from .passes.api_calls import ApiCalls
from .passes.autograd_function import AutogradFunction
from .passes.einops_lowering import EinopsLowering, SOURCE_ROOTS as EINOPS_ROOTS
from .facts import FileFacts
from .table_calls import tables
from .passes.bool_index import BoolIndex
from .passes.cell_class import CellClass
from .passes.cell_containers import CellContainers
from .passes.data_pipeline import DataPipeline
from .passes.device_queries import DeviceQueries
from .passes.graph_lint import GraphLint
from .passes.grad_mode import GradMode
from .passes.training_script import TrainingScript
from .passes.graph_list_pop import GraphListPop
from .passes.graph_memo import GraphMemo
from .passes.graph_branch_locals import GraphBranchLocals
from .passes.graph_maps import GraphMaps
from .passes.graph_set_literals import GraphSetLiterals
from .passes.graph_xor import GraphXor
from .passes.graph_assert_all import GraphAssertAll
from .passes.graph_scalars import GraphScalars
from .passes.layer_call_casts import LayerCallCasts
from .passes.layer_params import LayerParams
from .passes.layer_values import LayerValues
from .passes.module_methods import ModuleMethods
from .passes.param_group_lr import ParamGroupLr
from .passes.scaffolding import Scaffolding
from .passes.slice_bounds import SliceBounds
from .passes.imports import Imports
from .passes.inplace_results import InplaceResults
from .passes.tensor_methods import TensorMethods
from .passes.topk_mask import TopkMask
from .passes.training_step import TrainingStep
from .outside_packages import builds_on_torch

# The order, and why.
# Stage 1 runs in ONE traversal. At each node the passes' handlers run in the
# order below, each given the previous one's result; once a handler replaces the
# node by another kind (or removes it) the later ones do not see it. Handlers
# match on the ORIGINAL nodes, resolved through the file's torch imports (which
# stay untouched until stage 2), so most passes are independent. Moving each
# pass to the front and to the back, over the samples, seed snippets, fixtures,
# torchvision, pretrainedmodels and efficientnet_pytorch, changed outputs only
# for these pairs:
#   - CellClass before Scaffolding: Scaffolding replaces some definitions (stub
#     overloads), after which CellClass would not get to rename forward.
#   - AutogradFunction before ApiCalls: it puts nn.Cell in place of a Function
#     subclass's torch.autograd.Function base, which ApiCalls (no table entry: a
#     Function is a whole class to rewrite) would otherwise mark as unconverted.
#   - CellClass before GraphLint: GraphLint checks the methods CellClass has
#     marked as construct while visiting the class.
#   - LayerValues before ApiCalls: where a torch layer class is a value (not
#     called) or a call passes **kwargs, LayerValues puts a factory in place and
#     ApiCalls leaves a reference another pass rewrote.
#   - BoolIndex before TensorMethods: `x[m].sum()` is a masked reduction, not a
#     method call on a selection.
#   - TensorMethods before GraphScalars: GraphScalars rewrites `int(t.item())`
#     whole from the call TensorMethods already rewrote (run first, it made
#     `ops.item(low=...)` out of `torch.randint(...).item()`).
#   - EinopsLowering (einops calls and layers) touches only calls of einops, which
#     no other pass claims (einops is not in the tables' source roots), and the
#     tensors it reshapes are converted first wherever it stands (children are
#     left before their call); it sits after ApiCalls in reading order: the
#     nn.Sequential around an einops layer is ApiCalls'. Moving it to either end
#     changed no output over the fixtures and samples.
# The rest (CellContainers, ModuleMethods, TopkMask, LayerCallCasts,
# LayerParams, InplaceResults, SliceBounds) gave the same outputs at either end; their place
# follows reading order. tests/test_invariants.py checks that reversing
# them changes no output. DeviceQueries rewrites only `.device.type`/`.is_cuda`
# reads, which no other pass claims; it sits with the rewrites, before GraphLint.
# DataPipeline rewrites only `.dataset` reads of loaders, which no other pass claims; it sits beside it.
# ParamGroupLr (MS215) rewrites only `G["lr"]` items of param groups and the assignments to them,
# which no other pass claims, so its place is free; it sits beside them (SliceBounds, which reads
# a write's statement as it leaves the line, leaves alone a write MS215 made a call of).
# AnnotationTypes converts the types in annotations, which ApiCalls leaves to it (and
# LayerValues too: a layer class there is no value); it sits beside ApiCalls.
# GraphMaps (map() in construct -> a comprehension) comes after every pass that
# rewrites calls: it rebuilds the map call from the converted function and
# iterables, and a pass after it would see a tuple() call where it matched map().
# GraphXor (a ^ b -> _py_xor(a, b)) and GraphListPop (a nested lst.pop() gets its
# own assignment) sit beside it for the same reason: they rebuild from what other
# passes converted. GraphBranchLocals (None bound before an if that binds a local in
# some branches only) only adds statements, after every pass that moves some.
# GraphSetLiterals (x in {1, 2} -> x in (1, 2) in construct) touches only set literals,
# which no other pass claims.
# GradMode (grad-mode and autocast blocks -> their bodies) sits after Scaffolding, which
# flattens the switched-off autocast blocks it leaves; it claims only those context managers.
# TrainingScript (statements the conversion left without effect, cuDNN switches, train mode
# where a model is built) reads what the other passes made of a statement, which they
# have done by the time it leaves; it sits beside GradMode, the other training-script pass.
# TrainingStep (MS211) rewrites whole statement lists (a backward's forward code moves into
# a function) from the statements it froze, which no other pass sees; it sits first so its
# leave_Module runs before LayerValues inserts the emitted definitions.
# Stage 2: Imports runs alone and last, because it must see which names the
# converted code still uses, and the imports the other passes asked for.
STAGES = (
    (TrainingStep, CellClass, AutogradFunction, CellContainers, ModuleMethods, TopkMask, Scaffolding, GradMode, TrainingScript, LayerValues, AnnotationTypes, ApiCalls, EinopsLowering, BoolIndex, TensorMethods, LayerCallCasts, LayerParams, GraphScalars, InplaceResults, SliceBounds, DeviceQueries, DataPipeline, ParamGroupLr, GraphMaps, GraphXor, GraphAssertAll, GraphListPop, GraphMemo, GraphBranchLocals, GraphSetLiterals, GraphLint),
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
    # einops is a source package too: its calls are lowered by EinopsLowering
    return Pipeline(stages, dict(t.modules), set(t.source_roots) | EINOPS_ROOTS,
                    aliases=dict(t.aliases), analyse=FileFacts, builds_on_source=builds_on_torch)
