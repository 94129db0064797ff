"""Hooks of tables/torch_rnn_cells.toml: one step of a recurrent cell from explicit
weights, emitted beside the code through the indexing table's ``run_time_helper`` (the
helpers are in rewrites/runtime/rnn_cells.py)."""
from __future__ import annotations

from .torch_indexing import run_time_helper  # noqa: F401  (the entries' hook)
