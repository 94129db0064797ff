"""benchmarks/sampled/draw.py: the draw is a function of the registry list, the seed, the
reserved list and decisions.toml (no network): the committed draw.toml is what it gives,
and the benchmark's models come from the packages it took, in no other way."""
from __future__ import annotations

import importlib.util
import re
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
    # a reserved package is passed over unnamed: no entry, its position left as a gap
    assert [(e["position"], e["name"], e["decision"]) for e in entries] == [(2, "b_pkg", "take")]
    assert left == 2  # c has no decision: the examined prefix ends there, d is not reached
    text = draw.render(entries, left, len(rows))
    assert "a-pkg" not in text and "examined = 2" in text and "reserved_passed_over = 1" in text


def test_the_reserved_list_is_read_whole(tmp_path):
    """Names on lines separated by commas, a line of one name too; prose lines are not names."""
    listed = tmp_path / "RESERVED.md"
    listed.write_text("# Reserved packages\n\nNever download, read or benchmark them.\n\n"
                      "alpha-pkg, Beta_Pkg,\ngamma\n", encoding="utf-8")
    assert draw.reserved(listed) == {"alpha-pkg", "beta-pkg", "gamma"}


def test_no_reserved_package_is_named_in_the_draw():
    if not draw.RESERVED.exists():
        pytest.skip("shared/RESERVED.md is not on this machine")
    drawn = tomllib.loads((SAMPLED / "draw.toml").read_text(encoding="utf-8"))
    assert not {draw.normalise(e["name"]) for e in drawn["draw"]} & draw.reserved(draw.RESERVED)


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


@pytest.mark.skipif(not draw.RESERVED.exists(), reason="shared/RESERVED.md is not on this machine")
@pytest.mark.parametrize("config", ["models/models.toml", "sampled/models.toml", "hf/models.toml"])
def test_no_benchmark_pins_a_reserved_package(config):
    """Reserved packages are for independent measurement: no benchmark installs one, on
    either side, nor converts one."""
    data = tomllib.loads((SAMPLED.parent / config).read_text(encoding="utf-8"))
    pins = [*data.get("torch_venv", {}).get("pip", []), *data.get("ms_deps", {}).get("pip", []),
            *data.get("packages", {})]
    names = {draw.normalise(re.split(r"[<>=!~\[; ]", pin, maxsplit=1)[0]) for pin in pins}
    assert not names & draw.reserved(draw.RESERVED)


# every benchmark's environments: the torch sides' virtualenvs and the MindSpore sides' dependency folders
_ENVIRONMENTS = [SAMPLED.parent / ".venv-sampled", SAMPLED.parent / ".venv-tv", SAMPLED.parent / ".venv-hf",
                 SAMPLED.parent / ".work" / "deps", SAMPLED.parent / ".sampled" / "deps",
                 SAMPLED.parent / ".work-hf" / "deps"]


@pytest.mark.skipif(not draw.RESERVED.exists(), reason="shared/RESERVED.md is not on this machine")
@pytest.mark.parametrize("folder", _ENVIRONMENTS, ids=lambda p: p.name)
def test_no_benchmark_environment_holds_a_reserved_package(folder):
    """What the benchmarks installed (a pin's dependencies, a package added by hand) holds
    no reserved distribution either; an environment not built on this machine is skipped."""
    found = sorted(folder.glob("lib/python3*/site-packages/*.dist-info")) + sorted(folder.glob("*.dist-info"))
    if not found:
        pytest.skip(f"{folder.name} is not built here")
    installed = {draw.normalise(info.name.split("-")[0]) for info in found}
    assert not installed & draw.reserved(draw.RESERVED)
