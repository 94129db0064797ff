"""benchmarks/sampled/draw.py: the draw is a function of the registry list, the seed, the
reserved list and decisions.toml (no network): the committed draw.toml is what it gives,
and the benchmark's models come from the packages it took, in no other way."""
from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

SAMPLED = Path(__file__).parent.parent / "benchmarks" / "sampled"


def _load():
    if "sampled_draw" in sys.modules:
        return sys.modules["sampled_draw"]
    spec = importlib.util.spec_from_file_location("sampled_draw", SAMPLED / "draw.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sampled_draw"] = module
    spec.loader.exec_module(module)
    return module


draw = _load()

TSV = ("name\tversion\tmonth\trank_among_15000_most_downloaded\tsummary\n"
       "alpha\t1\t2026-01\t10\tModels for PyTorch\n"
       "beta\t1\t2026-01\t\tA torch-based thing\n"
       "gamma\t1\t2026-01\t20\tTorchvision helpers\n"       # 'torchvision' is not 'torch'
       "delta\t1\t2026-01\t30\tpytorch_lightning callbacks\n"  # 'pytorch_' names PyTorch
       "epsilon\t1\t2026-01\t\tNothing of interest\n"
       "zeta\t1\t2026-01\t40\tZeta - Pytorch\n"
       "eta\t1\t2026-01\t\tETA, for torch\n")


def test_the_summary_rule_and_the_order(tmp_path):
    tsv = tmp_path / "pypi.tsv"
    tsv.write_text(TSV, encoding="utf-8")
    rows = draw.candidates(tsv)
    assert sorted(r["name"] for r in rows) == ["alpha", "beta", "delta", "eta", "zeta"]
    order = [r["name"] for r in draw.ordered(rows)]
    assert order == [r["name"] for r in draw.ordered(list(reversed(rows)))]  # input order does not matter
    ranked = [n for n in order if n in ("alpha", "delta", "zeta")]
    assert order[:3] == ranked  # ranked packages come first


def test_decisions_end_at_the_first_package_not_examined(tmp_path):
    rows = [{"name": n, "version": "1", "rank_among_15000_most_downloaded": "", "summary": "x torch"}
            for n in ("a-pkg", "b_pkg", "c", "d")]
    entries, left = draw.decide(rows, {"b-pkg": {"decision": "take", "reason": "r"}}, {"a-pkg"}, set())
    assert [(e["name"], e["decision"]) for e in entries] == [("a-pkg", "skip"), ("b_pkg", "take")]
    assert "reserved" in entries[0]["reason"]
    assert left == 2  # c has no decision: the examined prefix ends there, d is not reached


@pytest.mark.skipif(not draw.PYPI.exists() or not draw.RESERVED.exists(),
                    reason="the registry list or shared/RESERVED.md is not on this machine")
def test_draw_toml_is_what_the_draw_gives():
    assert draw.main(["--check"]) == 0


def test_the_models_come_from_the_packages_taken():
    drawn = tomllib.loads((SAMPLED / "draw.toml").read_text(encoding="utf-8"))
    taken = {draw.normalise(e["name"]) for e in drawn["draw"] if e["decision"] == "take"}
    config = tomllib.loads((SAMPLED / "models.toml").read_text(encoding="utf-8"))
    used = {draw.normalise(m["package"]) for m in config["models"]}
    assert used == taken
    reserved = draw.reserved(draw.RESERVED) if draw.RESERVED.exists() else set()
    assert not used & reserved
    converted = {draw.normalise(p) for p in config["packages"]}
    modules = {draw.normalise(e["module"]) for e in drawn["draw"] if e["decision"] == "take"}
    assert modules == converted
