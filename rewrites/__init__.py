"""The torch -> MindSpore rewrites: passes, their order, and the mapping tables."""
from __future__ import annotations

from transpile.pipeline import Pipeline

from .api_calls import ApiCalls
from .apply import tables
from .bool_index import BoolIndex
from .cell_class import CellClass
from .cell_containers import CellContainers
from .imports import Imports
from .tensor_methods import TensorMethods

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
# Stage 2: Imports runs alone and last, because it must see which names the
# converted code still uses, and the imports the other passes asked for.
STAGES = (
    (CellClass, CellContainers, ApiCalls, TensorMethods, BoolIndex),
    (Imports,),
)

ALL_PASSES = tuple(p for stage in STAGES for p in stage)


def default_pipeline() -> Pipeline:
    t = tables()
    return Pipeline(STAGES, dict(t.modules), {m.split(".")[0] for m in t.modules})
