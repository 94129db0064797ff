"""Hostile inputs: no source makes the process die or ``convert_code`` raise. Deep nesting
and long expressions convert, or fail that one file with a located error, in bounded time;
the files around them are converted as usual, by the library and by the command line."""
from __future__ import annotations

import ast
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from transpile import api, convert_paths
from transpile.engine import pipeline
from transpile.engine.diagnostics import Severity
from transpile.engine.nesting import SHALLOW_NESTING, call_with_deep_stack, nesting_depth

ROOT = Path(__file__).resolve().parents[1]
HEADER = "import torch\n\nx = torch.relu(torch.ones(3))\n"  # uses torch: no cheap no-torch path
LINE = HEADER.count("\n") + 1  # where the hostile statement is
BOUND = 120  # seconds: generous; the point is bounded time (5,000 terms took 226 s before failing)


def hostile(statement: str) -> str:
    return HEADER + statement + "\n"


def elif_chain(n: int) -> str:
    return "if x:\n    y = 0\n" + "".join(f"elif x:\n    y = {i}\n" for i in range(n))


DEEPER = "levels deep; the converter handles at most"
PYTHON_REFUSES = "too deeply nested or too large for Python's own parser"
ELIF_3000 = hostile(elif_chain(3000))

# name -> (source, what the error says, the line it names)
FAILING = {
    "parentheses_1500": (hostile("y = " + "(" * 1500 + "x" + ")" * 1500), "too many nested parentheses", LINE),
    "calls_1500": (hostile("y = " + "torch.relu(" * 1500 + "x" + ")" * 1500), "too many nested parentheses", LINE),
    "lists_1500": (hostile("y = " + "[" * 1500 + "x" + "]" * 1500), "too many nested parentheses", LINE),
    "subscripts_1500": (hostile("y = x" + "[0]" * 1500), DEEPER, LINE),
    "attributes_1500": (hostile("y = x" + ".real" * 1500), DEEPER, LINE),
    "sum_5000": (hostile("y = " + " + ".join(["x"] * 5000)), DEEPER, LINE),  # 226 s, then a RecursionError
    "sum_100000": (hostile("y = " + " + ".join(["x"] * 100_000)), DEEPER, LINE),
    "not_100000": (hostile("y = " + "not " * 100_000 + "x"), PYTHON_REFUSES, LINE),
    "and_5000": (hostile("y = " + " and ".join(["x"] * 5000)), DEEPER, LINE),
    "dotted_import_10000": (hostile("import " + ".".join(["m"] * 10000)), DEEPER, LINE),
    "elif_3000": (ELIF_3000, DEEPER, ELIF_3000.rstrip().count("\n") + 1),  # the deepest branch: the last
}

# name -> (source, a check of the converted code)
CONVERTED = {
    "sum_500": (hostile("y = " + " + ".join(["torch.relu(x)"] * 500)),
                lambda code: code.count("ops.relu(") >= 500 and "torch" not in code),
    "calls_150": (hostile("y = " + "torch.relu(" * 150 + "x" + ")" * 150),
                  lambda code: code.count("ops.relu(") >= 150 and "torch" not in code),
    "subscripts_500": (hostile("y = x" + "[0]" * 500), lambda code: code.count("[0]") == 500),
    "long_line_20000": (hostile("y = [" + ", ".join(["x"] * 20000) + ", torch.relu(x)]"),
                        lambda code: code.count("x,") >= 20000 and "torch" not in code),
    "statements_2000": (hostile("\n".join(f"y{i} = torch.relu(x)" for i in range(2000))),
                        lambda code: code.count("ops.relu(") >= 2000 and "torch" not in code),
}


def timed_convert(source: str, **kwargs):
    start = time.monotonic()
    result = api.convert_code(source, **kwargs)
    return result, time.monotonic() - start


@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_hostile_file_fails_alone_with_a_located_error(name: str) -> None:
    source, says, line = FAILING[name]
    limit = sys.getrecursionlimit()
    result, seconds = timed_convert(source, filename=f"{name}.py")
    assert result.failed and not result.changed and result.code == source
    [error] = result.errors
    assert error.code == "MS000" and error.severity is Severity.ERROR
    assert says in error.message, error.message
    assert error.line == line and error.filename == f"{name}.py"
    assert seconds < BOUND
    assert sys.getrecursionlimit() == limit


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_a_deep_or_long_file_within_the_limits_converts(name: str) -> None:
    source, check = CONVERTED[name]
    limit = sys.getrecursionlimit()
    result, seconds = timed_convert(source)
    assert not result.failed and result.changed, [d.message for d in result.errors]
    ast.parse(result.code)
    assert check(result.code)
    assert seconds < BOUND
    assert sys.getrecursionlimit() == limit  # the deep stack's limit does not leak


def test_a_recursion_error_or_memory_error_is_a_failed_file(monkeypatch) -> None:
    source = hostile("y = torch.relu(x)")
    for error, says in ((RecursionError("maximum recursion depth exceeded"), "nested too deeply to convert"),
                        (MemoryError(), "out of memory converting this file")):
        def convert(*args, error=error):
            raise error

        monkeypatch.setattr(pipeline.Pipeline, "_convert", convert)
        result = api.convert_code(source)
        assert result.failed and result.code == source
        assert [says in d.message for d in result.errors] == [True]


def test_a_file_larger_than_the_limit_fails_unless_it_has_nothing_to_convert(monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "MAX_SOURCE_CHARS", 200)
    big = hostile("\n".join(f"y{i} = torch.relu(x)" for i in range(20)))
    result = api.convert_code(big)
    assert result.failed and "too large to convert" in result.errors[0].message
    plain = "\n".join(f"y{i} = abs({i})" for i in range(40)) + "\n"  # no torch: only checked
    assert len(plain) > 200 and not api.convert_code(plain).failed


def test_a_conversion_called_from_deep_in_the_stack_still_converts() -> None:
    """A shallow file runs on the caller's stack; if that stack is nearly used up, the
    conversion is done again on a deep one instead of failing."""
    source = (ROOT / "samples" / "resnet.py").read_text()
    expected = api.convert_code(source)

    def descend(levels: int):
        return descend(levels - 1) if levels else api.convert_code(source)

    import inspect

    deep = descend(sys.getrecursionlimit() - len(inspect.stack()) - 30)
    assert not deep.failed and deep.code == expected.code


def test_the_deep_stack_hands_back_results_and_exceptions() -> None:
    assert call_with_deep_stack(sum, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):
        call_with_deep_stack(divmod, 1, 0)
    assert call_with_deep_stack(call_with_deep_stack, len, "abc") == 3  # nested: runs where it is


def test_the_nesting_measure_is_exact_above_its_threshold() -> None:
    """Short lines are skipped below the threshold, never above it; ``and`` chains and
    dotted import names count a level per operand or dot (LibCST nests them)."""
    def depth(code: str, exact_above: int = SHALLOW_NESTING) -> int:
        return nesting_depth(ast.parse(code), exact_above)[0]

    for n in (150, 300):
        deep = "y = " + "-" * n + "x"
        assert depth(deep) == depth(deep, exact_above=0)
        assert depth("y = " + "-" * (n + 7) + "x") == depth(deep) + 7
    assert depth("y = " + " and ".join(["x"] * 400)) - depth("y = " + " and ".join(["x"] * 200)) == 200
    assert depth("import " + ".".join(["m"] * 400)) - depth("import " + ".".join(["m"] * 200)) == 200
    assert depth("from " + ".".join(["m"] * 400) + " import y") > 400
    assert nesting_depth(ast.parse("a = 1\nb = (\n" + "[" * 150 + "x" + "]" * 150 + ")\n"))[1] == 3


# --- the command line, with the hostile files among good ones ---

def transpile_command() -> list[str]:
    script = Path(sys.executable).parent / "transpile"
    return [str(script)] if script.exists() else [sys.executable, "-m", "transpile"]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_cli_reports_hostile_files_and_converts_the_rest(tmp_path: Path, jobs: str) -> None:
    """Every hostile input above, among good files, in one run; --jobs 1 converts in the
    command's own process."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    good = ["resnet.py", "lenet.py", "mlp_list.py"]
    for name in good:
        (src / name).write_bytes((ROOT / "samples" / name).read_bytes())
    for name, (source, *_) in {**FAILING, **CONVERTED}.items():
        (src / f"{name}.py").write_text(source)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([*transpile_command(), "convert", str(src), "-o", str(out), "--jobs", jobs],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 1, proc.stderr  # the documented exit code for errors in the files
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if " MS000 error: " in line]
    assert len(errors) == len(FAILING)  # one error per hostile file, none for the others
    for name, (source, says, line) in FAILING.items():
        [error] = [e for e in errors if e.startswith(f"{src / name}.py:")]
        assert error.startswith(f"{src / name}.py:{line}:") and says in error, error
        written = out / f"{name}.py"  # nothing partial: absent, or the input byte for byte
        assert not written.exists() or written.read_text() == source
    assert f"{len(FAILING)} failed" in proc.stderr
    for name in good:
        code = (out / name).read_text()
        ast.parse(code)
        assert "import torch" not in code and code != (src / name).read_text()
    for name, (_, check) in CONVERTED.items():
        assert check((out / f"{name}.py").read_text()), name


# --- a worker that dies ---

@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the workers must inherit the monkeypatch")
def test_a_dying_worker_leaves_every_other_file_converted(tmp_path: Path, monkeypatch) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    good = ["resnet.py", "lenet.py", "mlp_list.py", "network.py"]
    for name in good:
        (src / name).write_bytes((ROOT / "samples" / name).read_bytes())
    (src / "victim.py").write_text(hostile("y = torch.relu(x)"))
    expected = {name: api.convert_code((src / name).read_text(), filename=str(src / name)).code for name in good}
    real = api.convert_code

    def convert(text, *, filename=None, **kwargs):
        if filename.endswith("victim.py"):
            os._exit(139)  # as the segfault of a native parser would
        return real(text, filename=filename, **kwargs)

    monkeypatch.setattr(api, "convert_code", convert)
    report = convert_paths([src], output=out, jobs=2, cache=False)
    by_name = {f.source.name: f for f in report.files}
    victim = by_name["victim.py"]
    assert victim.status == "failed" and victim.internal_error
    assert "worker process died" in victim.result.errors[0].message
    assert not (out / "victim.py").exists() or (out / "victim.py").read_bytes() == (src / "victim.py").read_bytes()
    for name in good:
        assert by_name[name].status == "converted" and by_name[name].output == out / name
        assert (out / name).read_text() == expected[name]
