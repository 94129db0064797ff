"""Differential tests for tables/torch_rnn_cells.toml: torch.lstm_cell, gru_cell,
rnn_tanh_cell and rnn_relu_cell against the functions emitted beside the converted code."""
from __future__ import annotations

from .harness import Case, Suite, arr, call_forms, table_tests

X, H, C = arr(2, 3), arr(2, 4), arr(2, 4)
CASES: list[Case] = []
for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)):
    hx = "(b, c)" if name == "lstm_cell" else "b"
    # weights of an initialised cell's size (torch draws them in +-1/sqrt(hidden))
    weights = tuple(arr(*shape, low=-0.5, high=0.5) for shape in ((4 * gates, 3), (4 * gates, 4), (4 * gates,), (4 * gates,)))
    call_forms(CASES, f"torch.{name}", f"input=a, hx={hx}, w_ih=d, w_hh=e, b_ih=f, b_hh=g", (X, H, C, *weights),
               req=4, extra=("a, " + hx + ", d, e, None, g",))
SUITE = Suite(CASES)

test_api, test_every_entry_has_cases_in_three_forms = table_tests(SUITE, ["torch_rnn_cells.toml"])
