"""Parity and weights results as text tables and JSON-ready dicts (no printing)."""
from __future__ import annotations

import math
from pathlib import Path

from .compare import OutputDiff
from .localise import Localisation
from .runner import MODES, SampleResult, WeightsResult

VERDICT_WIDTH = 90  # longer verdicts are cut in the samples table and printed in full below it
COLUMNS = ("sample", "converted", "max abs diff PYNATIVE", "max abs diff GRAPH", "verdict")
OUTPUT_COLUMNS = ("mode", "output", "shape", "allclose", "within", "cosine", "max abs", "max rel")


def json_safe(value):
    """NaN and infinities are not JSON: None and "inf"."""
    if isinstance(value, float):
        return None if math.isnan(value) else ("inf" if value == math.inf else "-inf" if value == -math.inf else value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def table_lines(rows: list[tuple[str, ...]]) -> list[str]:
    """Columns padded to width, a rule under the header; the last column is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for n, row in enumerate(rows):
        lines.append(" | ".join(c.ljust(w) for c, w in zip(row, widths)) + " | " + row[-1])
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths) + "-+-" + "-" * len(rows[0][-1]))
    return lines


# -- the samples table ----------------------------------------------------------------

def _diff_cell(result: SampleResult, mode: str) -> str:
    mr = result.results.get(mode)
    if mr is None:
        return "-"
    if mr.verdict.startswith("not run"):
        return mr.verdict
    if mr.max_abs_diff is None:
        return "error"
    if math.isnan(mr.max_abs_diff):
        return "nan"
    return f"{mr.max_abs_diff:.3g}"


def format_table(results: list[SampleResult], modes=MODES) -> str:
    """A plain-text table: sample | converted | max abs diff PYNATIVE | max abs diff GRAPH | verdict."""
    rows = [COLUMNS]
    for r in results:
        rows.append((
            r.sample,
            "yes" if r.converted else "no",
            _diff_cell(r, "PYNATIVE") if "PYNATIVE" in modes else "-",
            _diff_cell(r, "GRAPH") if "GRAPH" in modes else "-",
            r.verdict if len(r.verdict) <= VERDICT_WIDTH else r.verdict[: VERDICT_WIDTH - 3] + "...",
        ))
    return "\n".join(table_lines(rows))


def format_samples(results: list[SampleResult], modes=MODES, *, verbose: bool = False) -> str:
    """The samples table, then long verdicts, localisations, notes and a count."""
    lines = [format_table(results, modes)]
    for r in results:
        if len(r.verdict) > VERDICT_WIDTH:
            lines.append(f"{r.sample}: {r.verdict}")
    for r in results:
        lines += [f"{r.sample}: {line}" for line in format_localisation(r)]
        lines += [f"note: {r.sample}: {note}" for note in r.notes]
    if verbose:
        for r in results:
            for mode, mr in r.results.items():
                lines.append(f"{r.sample} ({mode}): {mr.verdict}, diffs per output {list(mr.diffs)}, {mr.seconds:.1f} s")
                if mr.detail:
                    lines.append(f"\n--- {r.sample} ({mode}) ---\n{mr.detail}")
    lines.append(f"{sum(r.ok for r in results)} of {len(results)} samples match")
    return "\n".join(lines)


# -- one model ------------------------------------------------------------------------

def _num(value: float, fmt: str = ".3g") -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf"
    return format(value, fmt)


def _output_row(mode: str, d: OutputDiff) -> tuple[str, ...]:
    shape = str(tuple(d.torch_shape)) if d.torch_shape == d.ms_shape else f"{tuple(d.torch_shape)} vs {tuple(d.ms_shape)}"
    return (mode, d.name, shape, "yes" if d.allclose else "NO", f"{d.within:.2%}", _num(d.cosine, ".6f"),
            _num(d.max_abs_diff), _num(d.max_rel_diff))


def _display(file: str) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        return str(Path(file).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return file


def format_localisation(result: SampleResult) -> list[str]:
    """Where the outputs start to differ (or MindSpore raised), with the lines of both files."""
    loc: Localisation | None = result.localisation
    if loc is None:
        pyn = result.results.get("PYNATIVE")
        graph = result.results.get("GRAPH")
        if pyn is not None and pyn.ok and graph is not None and graph.verdict.startswith("mismatch"):
            return ["PYNATIVE mode matches: the difference appears only in GRAPH mode (graph compilation)",
                    *format_graph_divergence(graph.graph_divergence)]
        return []
    d = loc.divergence
    if d is None:
        return [f"localisation ({loc.compared} submodule events compared in {loc.mode} mode): {loc.note}"]
    lines = [f"first divergence: {d.label()} ({d.blamed_class}); {loc.compared} submodule events compared "
             f"in {loc.mode} mode", f"  {d.summary}"]
    for side, src in (("original", d.original), ("converted", d.converted)):
        for s in src:
            lines.append(f"  {side + ':':10} {_display(s.file)}:{s.line}: {s.text}  [{s.role}]")
    if loc.unmatched:
        shown = ", ".join(loc.unmatched[:5]) + (" ..." if len(loc.unmatched) > 5 else "")
        lines.append(f"  not compared (no MindSpore cell of that path): {shown}")
    return lines


def format_graph_divergence(found: dict | None) -> list[str]:
    """The submodule that, run alone, gives other results in GRAPH mode than in PYNATIVE."""
    if not found:
        return []
    tried = f"{found['checked']} of {found['total']} submodules run alone in each mode"
    failed = found.get("failed") or []
    if failed:
        tried += f"; {len(failed)} did not run alone in GRAPH mode (first: {failed[0]})"
    if found.get("path") is None and found.get("summary"):
        return [f"GRAPH mode against PYNATIVE: no submodule differs alone ({tried}); {found['summary']}"]
    if found.get("path") is None:
        return [f"GRAPH mode against PYNATIVE: every submodule alone gives the same results ({tried}): "
                "the difference is in code between them"]
    where = found["path"] or "the model itself (every submodule alone agrees)"
    return [f"GRAPH mode against PYNATIVE: first differs in {where} ({found['class']}), {found['summary']} ({tried})"]


def format_result(result: SampleResult, *, verbose: bool = False) -> str:
    """One model: the per-output table for each mode, the localisation, the verdict."""
    spec = result.spec
    lines = []
    if spec is not None:
        converted = str(result.converted_path) if result.converted_path else "converted on the fly"
        lines.append(f"{spec.source} -> {converted}: {spec.entry}")
        lines.append(f"inputs: {', '.join(s.label() for s in spec.inputs)} (seed {spec.seed}); "
                     f"tolerance: atol {spec.tolerance:g}, rtol {spec.rtol:g}")
    rows = [OUTPUT_COLUMNS]
    errors = {}
    for mode, mr in result.results.items():
        rows += [_output_row(f"{mode} by {mr.compiled_path}" if mr.compiled_path else mode, d) for d in mr.outputs]
        if not mr.outputs:
            errors[mode] = mr.verdict
    if len(rows) > 1:
        lines += [""] + table_lines(rows)
    if len(set(errors.values())) > 1 or (errors and len(errors) < len(result.results)):
        lines += [""] + [f"{mode}: {verdict}" for mode, verdict in errors.items()]
    for mode, mr in result.results.items():
        lines += [f"{mode}: {d.name}: {d.note}" for d in mr.outputs if d.note]
    loc = format_localisation(result)
    if loc:
        lines += [""] + loc
    lines += [f"note: {n}" for n in result.notes]
    if verbose:
        for mode, mr in result.results.items():
            lines.append(f"{mode}: {mr.verdict}, {mr.seconds:.1f} s in the child process")
            if mr.detail:
                lines.append(f"--- {mode} ---\n{mr.detail}")
    if result.error and not result.results:
        lines.append(f"error: {result.error}")
        lines += [d.format() for d in result.diagnostics if d.severity.value == "error"][1:]  # the first is in it
    else:
        lines += ["", result.verdict]
    return "\n".join(lines)


def result_dict(result: SampleResult) -> dict:
    """JSON-ready: the samples' fields, and per mode every output's metrics."""
    def num(v):
        return None if v is None or math.isnan(v) else v

    loc = result.localisation
    return json_safe({
        "sample": result.sample,
        "source": str(result.spec.source) if result.spec else None,
        "entry": result.spec.entry if result.spec else None,
        "inputs": [s.label() for s in result.spec.inputs] if result.spec else [],
        "converted": result.converted,
        "converted_path": str(result.converted_path) if result.converted_path else None,
        "tolerance": result.spec.tolerance if result.spec else None,
        "rtol": result.spec.rtol if result.spec else None,
        "max_abs_diff": {m: num(mr.max_abs_diff) for m, mr in result.results.items()},
        "verdicts": {m: mr.verdict for m, mr in result.results.items()},
        "modes": {m: {"verdict": mr.verdict, "seconds": mr.seconds, "outputs": [d.to_dict() for d in mr.outputs],
                      "compiled_path": mr.compiled_path or None,
                      **({"graph_divergence": mr.graph_divergence} if mr.graph_divergence else {}),
                      **({"detail": mr.detail} if mr.detail else {})}
                  for m, mr in result.results.items()},
        "localisation": loc.to_dict() if loc else None,
        "verdict": result.verdict,
        "ok": result.ok,
        "notes": result.notes,
        "diagnostics": [d.to_dict() for d in result.diagnostics],
    })


# -- weights ------------------------------------------------------------------------

def format_weights(result: WeightsResult, *, verbose: bool = False) -> str:
    lines = []
    plan = result.plan
    if plan is not None:
        lines.append(f"{result.checkpoint} -> {result.output}: {len(plan.copies)} tensors mapped "
                     f"({len(plan.renamed)} renamed, {len(plan.reshaped)} reshaped), {len(plan.dropped)} dropped "
                     f"by design, {len(plan.tied)} tied")
        if verbose:
            lines += [f"  {k} -> {p}" for k, p in plan.copies]
        if plan.dropped:
            lines.append(f"dropped (no MindSpore counterpart): {', '.join(plan.dropped)}")
        for key, why in plan.unmapped:
            lines.append(f"unmapped: {key}: {why}")
        for key in plan.missing:
            lines.append(f"missing from the checkpoint: {key}")
        for path in plan.unfilled:
            lines.append(f"unfilled MindSpore parameter: {path}")
    lines += [f"note: {n}" for n in result.notes]
    if result.error:
        lines.append(f"error: {result.error}")
        lines += [d.format() for d in result.diagnostics if d.severity.value == "error"][1:]
        if verbose and result.detail:
            lines.append(result.detail)
    elif result.written:
        partial = "" if plan is None or plan.complete else " (partial: --allow-partial)"
        lines.append(f"wrote {result.output}{partial}")
    else:
        lines.append(f"refused: {result.output} would be a partial checkpoint (write it anyway with --allow-partial)")
    return "\n".join(lines)


def weights_dict(result: WeightsResult) -> dict:
    return json_safe({
        "checkpoint": str(result.checkpoint),
        "output": str(result.output),
        "written": result.written,
        "complete": result.plan.complete if result.plan else False,
        "error": result.error,
        **(result.plan.to_dict() if result.plan else {}),
        "names": result.names,
        "notes": result.notes,
    })
