"""The sampled benchmark's draw: which packages, in which order, and what became of each.

    .venv/bin/python benchmarks/sampled/draw.py [--pypi PATH] [--check]

The rule (issue 29), recorded here so that anyone can redraw:

1. Candidates: the rows of the registry list ``pypi.tsv`` (columns name, version, month,
   rank_among_15000_most_downloaded, summary) whose summary names PyTorch or torch: the
   case-insensitive regular expression ``SUMMARY_RULE`` (a whole word ``torch`` or
   ``pytorch``; ``torchvision`` or ``torch-geometric`` alone do not count, ``PyTorch`` does).
2. Order: popular packages first. The candidates with a rank (among the 15,000 most
   downloaded) are sorted by name and shuffled with ``random.Random(SEED)``; the unranked
   ones follow, sorted by name and shuffled with ``random.Random(SEED + 1)``.
3. Decisions, taken in that order: a package of ``../shared/RESERVED.md`` is passed over and
   left out of the draw (no entry names it or its version: only the count of those passed
   over is written, and the positions after it keep their numbers), one already in
   ``benchmarks/models`` is skipped (``in benchmarks/models``);
   every other one was examined by hand and its decision is in ``decisions.toml`` (take, or
   skip with the reason: no nn.Module model classes, compiled extensions or a GPU needed
   to build a model, does not download, ...). The first candidate with no decision ends
   the examined prefix: the draw is taken in order, never picked from.

The output, ``draw.toml`` beside this file, lists the examined prefix with each decision
and reason, then the count of candidates left. ``--check`` compares instead of writing
(the test in tests/test_sampled_draw.py runs it, with no network).
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PYPI = Path("/work/.library/env/packages/pypi.tsv")
RESERVED = REPO.parent / "shared" / "RESERVED.md"
SEED = 29  # the number
SUMMARY_RULE = re.compile(r"(?<![a-z0-9])(py)?torch(?![a-z0-9])", re.IGNORECASE)


def normalise(name: str) -> str:
    """PyPI's name normalisation (PEP 503): case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def candidates(pypi: Path) -> list[dict]:
    rows = []
    with pypi.open(encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        for line in fh:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            if SUMMARY_RULE.search(row.get("summary", "")):
                rows.append(row)
    return rows


def ordered(rows: list[dict]) -> list[dict]:
    ranked = sorted((r for r in rows if r["rank_among_15000_most_downloaded"]), key=lambda r: r["name"])
    unranked = sorted((r for r in rows if not r["rank_among_15000_most_downloaded"]), key=lambda r: r["name"])
    random.Random(SEED).shuffle(ranked)
    random.Random(SEED + 1).shuffle(unranked)
    return ranked + unranked


PACKAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def reserved(path: Path) -> set[str]:
    """The package names of RESERVED.md: its lines made only of names separated by commas
    (a line of one name too: the list's last; prose lines hold spaces inside their items)."""
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        items = [n.strip() for n in line.split(",")]
        items = [n for n in items if n]
        if items and not line.startswith("#") and all(PACKAGE_NAME.fullmatch(n) for n in items):
            names.update(normalise(n) for n in items)
    return names


def in_models_benchmark() -> set[str]:
    """The distributions benchmarks/models installs, and the packages it converts."""
    config = tomllib.loads((REPO / "benchmarks" / "models" / "models.toml").read_text(encoding="utf-8"))
    pins = config["torch_venv"].get("pip", []) + config["torch_venv"].get("pip_no_deps", [])
    names = {normalise(re.split(r"[=<>!~\[]", p, 1)[0]) for p in pins}
    names.update(normalise(p) for p in config.get("packages", {}))
    return names - {"torch", "six", "einops", "lightning-utilities"}  # dependencies, not model packages


def decide(rows: list[dict], decisions: dict, reserved_names: set[str], benchmarked: set[str]) -> tuple[list[dict], int]:
    """The examined prefix's entries (reserved packages passed over, left out) and how many
    candidates follow it."""
    out = []
    for i, row in enumerate(rows):
        name = normalise(row["name"])
        if name in reserved_names:
            continue
        entry = {"position": i + 1, "name": row["name"], "version": row["version"],
                 "rank": int(row["rank_among_15000_most_downloaded"]) if row["rank_among_15000_most_downloaded"] else 0,
                 "summary": row["summary"][:120]}
        if name in benchmarked:
            entry.update(decision="skip", reason="in benchmarks/models")
        elif name in decisions:
            entry.update(decisions[name])
        else:
            return out, len(rows) - i
        out.append(entry)
    return out, 0


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(entries: list[dict], left: int, total: int) -> str:
    examined = total - left
    lines = [
        "# Written by benchmarks/sampled/draw.py: do not edit (edit decisions.toml and rerun).",
        f"# seed = {SEED}; rule: summary matches /{SUMMARY_RULE.pattern}/i; ranked first "
        f"(shuffled with seed), then unranked (shuffled with seed + 1); reserved packages "
        f"(../shared/RESERVED.md) are passed over unnamed",
        f"candidates = {total}",
        f"examined = {examined}",
        f"reserved_passed_over = {examined - len(entries)}",
        f"taken = {sum(e['decision'] == 'take' for e in entries)}",
        f"not_examined = {left}",
        "",
    ]
    for e in entries:
        lines.append("[[draw]]")
        for key in ("position", "name", "version", "rank", "summary", "decision", "reason", "module"):
            if key in e:
                v = e[key]
                lines.append(f"{key} = {v}" if isinstance(v, int) else f"{key} = {_toml_str(str(v))}")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pypi", default=str(PYPI))
    ap.add_argument("--reserved", default=str(RESERVED))
    ap.add_argument("--check", action="store_true", help="compare with draw.toml instead of writing it")
    args = ap.parse_args(argv)
    rows = ordered(candidates(Path(args.pypi)))
    decisions = {normalise(k): v for k, v in
                 tomllib.loads((HERE / "decisions.toml").read_text(encoding="utf-8")).items()}
    entries, left = decide(rows, decisions, reserved(Path(args.reserved)), in_models_benchmark())
    text = render(entries, left, len(rows))
    target = HERE / "draw.toml"
    if args.check:
        same = target.exists() and target.read_text(encoding="utf-8") == text
        print("draw.toml is what the draw gives" if same else "draw.toml differs from the draw")
        return 0 if same else 1
    target.write_text(text, encoding="utf-8")
    print(f"{len(rows)} candidates; {len(rows) - left} examined ({len(entries)} listed, the others reserved), "
          f"{sum(e['decision'] == 'take' for e in entries)} taken; written {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
