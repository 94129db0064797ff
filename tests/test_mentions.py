"""``Pass.mentions``: a pass left out of a file that does not mention it changes nothing there."""
from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
import pytest

from transpile import convert_code
from transpile.engine.passes import Pass
from transpile.engine.pipeline import Pipeline, mentioned

ROOT = Path(__file__).parent.parent
SOURCES = sorted(
    [p for p in (ROOT / "tests" / "fixtures").glob("*/*.py") if not p.name.endswith(".expected.py")]
    + list((ROOT / "samples").glob("*.py"))
)


@functools.lru_cache(maxsize=1)
def _every_pass_everywhere() -> Pipeline:
    from transpile.rewrites import STAGES, _pipeline

    pipeline = _pipeline(tuple(STAGES))
    pipeline.check_mentions = False
    return pipeline


def _mentioning():
    from transpile.rewrites import STAGES

    return [p for stage in STAGES for p in stage if p.mentions]


def test_some_passes_declare_mentions_and_some_sources_lack_them() -> None:
    passes = _mentioning()
    assert passes
    texts = [p.read_text() for p in SOURCES]
    for p in passes:  # the comparison below covers both sides of each declaration
        assert any(not mentioned(p, t, "") for t in texts), p.id
        assert any(mentioned(p, t, "") for t in texts), p.id


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_leaving_out_unmentioned_passes_changes_nothing(path: Path) -> None:
    source = path.read_text()
    default = convert_code(source)
    everywhere = _every_pass_everywhere().run(source)
    assert default.code == everywhere.code
    assert [d.format() for d in default.diagnostics] == [d.format() for d in everywhere.diagnostics]
    assert default.stats == everywhere.stats


def test_mentioned_reads_the_source_and_the_bound_names() -> None:
    class Words(Pass):
        id = "MS990"
        mentions = ("einops",)

    class Always(Pass):
        id = "MS991"

    assert not mentioned(Words, "import torch\n", "torch")
    assert mentioned(Words, "from einops import rearrange\n", "einops.rearrange")
    assert mentioned(Words, "rearrange(x, 'a b -> b a')\n", "torch\0einops.rearrange")  # a star import's
    assert mentioned(Always, "", "")


def test_an_unmentioned_pass_does_not_run() -> None:
    ran: list[str] = []

    class Renames(Pass):
        id = "MS990"
        mentions = ("special_word",)

        def leave_Name(self, original, updated):
            ran.append(original.value)
            return updated.with_changes(value="renamed") if original.value == "x" else updated

    pipeline = Pipeline([(Renames,)], {}, {"torch"})
    assert pipeline.run("import torch\nx = 1\n").code == "import torch\nx = 1\n" and not ran
    assert pipeline.run("import torch\nx = special_word\n").code == "import torch\nrenamed = special_word\n"
    pipeline.check_mentions = False
    assert pipeline.run("import torch\nx = 1\n").code == "import torch\nrenamed = 1\n"
