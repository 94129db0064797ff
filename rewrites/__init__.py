"""The torch -> MindSpore rewrites: passes, their order, and the mapping tables."""
from __future__ import annotations

from transpile.engine.pipeline import Pipeline

from .passes.annotation_types import AnnotationTypes
from .passes.api_calls import ApiCalls
from .passes.autograd_function import AutogradFunction
from .passes.einops_lowering import EinopsLowering
from .passes.feature_checks import FeatureChecks
from .facts import FileFacts
from .table_calls import LOWERED_ROOTS, tables
from .passes.bool_index import BoolIndex
from .passes.cell_class import CellClass
from .passes.cell_containers import CellContainers
from .passes.data_pipeline import DataPipeline
from .passes.device_queries import DeviceQueries
from .passes.graph.graph_lint import GraphLint
from .passes.grad_mode import GradMode
from .passes.training_script import TrainingScript
from .passes.graph.graph_list_pop import GraphListPop
from .passes.graph.graph_memo import GraphMemo
from .passes.graph.graph_branch_locals import GraphBranchLocals
from .passes.graph.graph_maps import GraphMaps
from .passes.graph.graph_set_literals import GraphSetLiterals
from .passes.graph.graph_builtin_args import GraphBuiltinArgs
from .passes.graph.graph_conditional_pops import GraphConditionalPops
from .passes.graph.graph_math_names import GraphMathNames
from .passes.graph.graph_typing_cast import GraphTypingCast
from .passes.graph.graph_dict_calls import GraphDictCalls
from .passes.graph.graph_iterators import GraphIterators
from .passes.graph.graph_callable import GraphCallable
from .passes.graph.graph_del import GraphDel
from .passes.graph.graph_list_holders import GraphListHolders
from .passes.graph.graph_equality import GraphEquality
from .passes.graph.graph_lambdas import GraphLambdas
from .passes.graph.graph_reduce import GraphReduce
from .passes.graph.graph_device_unpack import GraphDeviceUnpack
from .passes.graph.graph_parameter_device import GraphParameterDevice
from .passes.graph.graph_typing_isinstance import GraphTypingIsinstance
from .passes.graph.graph_several_fors import GraphSeveralFors
from .passes.graph.graph_named_expr import GraphNamedExpr
from .passes.graph.graph_xor import GraphXor
from .passes.graph.graph_assert_all import GraphAssertAll
from .passes.graph.graph_scalars import GraphScalars
from .passes.graph.graph_partials import GraphPartials
from .passes.graph.graph_match import GraphMatch
from .passes.graph.graph_view_writes import GraphViewWrites
from .passes.graph.graph_imports import GraphImports
from .passes.graph.graph_generators import GraphGenerators
from .passes.layer_call_casts import LayerCallCasts
from .passes.layer_geometry import LayerGeometry
from .passes.layer_params import LayerParams
from .passes.layer_setattr import LayerSetattr
from .passes.mixin_forward import MixinForward
from .passes.layer_values import LayerValues
from .passes.module_methods import ModuleMethods
from .passes.param_group_lr import ParamGroupLr
from .passes.scaffolding import Scaffolding
from .passes.slice_bounds import SliceBounds
from .passes.imports import Imports
from .passes.optional_imports import OptionalImports
from .passes.inplace_results import InplaceResults
from .passes.tensor_methods import TensorMethods
from .passes.topk_mask import TopkMask
from .passes.training_step import TrainingStep
from .outside_packages import builds_on_torch
from .analysis.compiled import compiled_method

# The order. Stage 1 runs in ONE traversal: at each node the passes' handlers run in the
# order below, each given the previous one's result (once a handler replaces an expression
# by another kind, the later ones do not see it). Handlers match on the ORIGINAL nodes,
# resolved through the file's torch imports (untouched until stage 2), so most passes are
# independent. Where a pass must see a node after another pass, it declares so in its
# ``runs_after`` (the pass ids, each with why), and Pipeline refuses stages that break one.
# tests/test_invariants.py converts the fixtures and samples in orders that put every other
# pair of stage-1 passes the other way round, and expects the same outputs. Within that
# freedom the order is the one the passes were added in: the Module and class passes first,
# then the table-driven rewrites, the GRAPH_MODE (MS3xx) rewrites, and GraphLint last.
# Stage 2: Imports runs last: it must see which names the converted code still uses, and
# the imports the other passes asked for; OptionalImports, after it in the same traversal,
# reads the imports it kept.
STAGES = (
    (TrainingStep, CellClass, AutogradFunction, CellContainers, ModuleMethods, TopkMask, Scaffolding, GradMode, TrainingScript, LayerValues, AnnotationTypes, ApiCalls, FeatureChecks, EinopsLowering, BoolIndex, TensorMethods, LayerCallCasts, LayerParams, LayerGeometry, LayerSetattr, MixinForward, GraphScalars, InplaceResults, SliceBounds, DeviceQueries, DataPipeline, ParamGroupLr, GraphMaps, GraphXor, GraphAssertAll, GraphListPop, GraphMemo, GraphBranchLocals, GraphListHolders, GraphSetLiterals, GraphDel, GraphLambdas, GraphReduce, GraphParameterDevice, GraphTypingIsinstance, GraphSeveralFors, GraphNamedExpr, GraphConditionalPops, GraphMathNames, GraphTypingCast, GraphDictCalls, GraphIterators, GraphCallable, GraphPartials, GraphMatch, GraphBuiltinArgs, GraphDeviceUnpack, GraphImports, GraphGenerators, GraphViewWrites, GraphEquality, GraphLint),
    (Imports, OptionalImports),
)

ALL_PASSES = tuple(p for stage in STAGES for p in stage)


def default_pipeline() -> Pipeline:
    return _pipeline(STAGES)


def pipeline_of(*passes: type) -> Pipeline:
    """Only the given passes (in their STAGES order), then Imports (and the given passes of
    its stage): a pass tested alone."""
    stage = tuple(p for p in STAGES[0] if p in passes)
    return _pipeline(((stage,) if stage else ()) + ((Imports, *(p for p in STAGES[1][1:] if p in passes)),))


def _pipeline(stages) -> Pipeline:
    t = tables()
    return Pipeline(stages, dict(t.modules), set(t.source_roots) | LOWERED_ROOTS,
                    aliases=dict(t.aliases), analyse=FileFacts.build, builds_on_source=builds_on_torch,
                    compiled_method=compiled_method)
