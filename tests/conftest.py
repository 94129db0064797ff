"""Test-run set-up and the markers of the suite.

Markers (registered in pyproject.toml), given here by module so that no test is marked by
hand unless its module mixes kinds:

* ``framework``: the test runs torch or MindSpore code (differential tests, parity,
  weights, the tables checked against the installed frameworks). ``make test-fast`` leaves
  them out; in any run that leaves them out neither framework may be imported,
  by the test process or by any Python child of it (see guard_site/framework_guard.py):
  a test that does is failed, telling to mark it.
* ``slow``: more than about 2 s of one core per test; ``make test-fast`` leaves these out too.
* ``browser``: the HTML report in headless chromium (tests/test_report_browser.py).
"""
import atexit
import functools
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

# MindSpore and torch are noisy on import; the test output should not drown in it.
os.environ.setdefault("GLOG_v", "3")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")
# Under xdist every core runs a worker already: torch's OpenMP pool of a thread per core in
# each worker (and in each framework child it starts) would only oversubscribe the cores
# (the differential modules took about 8% more CPU with it). A value given wins.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The cache of conversion results goes to a directory of this test process (inherited by
# the CLI runs in child processes; each xdist worker has its own), never to ~/.cache.
os.environ["TRANSPILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="transpile-test-cache-")
atexit.register(shutil.rmtree, os.environ["TRANSPILE_CACHE_DIR"], ignore_errors=True)

TESTS = Path(__file__).resolve().parent
GUARD_SITE = TESTS / "guard_site"

# Inputs of tests, not tests: a seed such as data/seeds/000_mycell_unit_test.py matches
# pytest's *_test.py pattern and would otherwise be run (torch and all) at collection.
collect_ignore = ["data", "fixtures", "guard_site"]

# Modules every test of which runs torch or MindSpore (paths relative to tests/; a
# directory stands for every module under it).
FRAMEWORK_MODULES = (
    "differential/",  # each table's cases run in torch and, converted, in MindSpore
    "test_runtime.py",  # the run-time helpers imported and run on MindSpore
    "test_samples_parity.py",
    "test_training_parity.py",
    "test_parity_cli.py",
)
# Modules that mix kinds mark their framework tests themselves (@pytest.mark.framework):
# test_tables.py, test_seed_snippets.py, test_weights.py, test_emit_test.py,
# test_package_index.py, test_annotations.py, test_pipeline.py, test_forkserver.py.

# Modules whose every test is slow: more than about 2 s of one core each (the CLI in
# subprocesses, process pools, fuzzing, parity runs). Elsewhere a slow test is marked
# @pytest.mark.slow by its module. Measured with --durations.
SLOW_MODULES = (
    "test_parallel_cache.py",
    "test_fuzz.py",
    "test_cli_color.py",
    "test_progress.py",
    "test_training_parity.py",
    "test_samples_parity.py",
    "test_parity_cli.py",
    "differential/test_optim.py",
    "differential/test_training_step.py",
)

# Under xdist (--dist loadfile --no-loadscope-reorder) a worker takes the next module in
# this order: the modules that took longest go first, so that no worker is left alone
# with a long module at the end of the run. Measured on 2 cores, longest first.
LONGEST_FIRST = (
    # each module's wall time in a full run (e9b3497, -n auto on 2 cores), down to about 35 s
    "differential/test_graph_rewrites.py",
    "test_training_parity.py",
    "differential/test_optim.py",
    "differential/test_view_inplace_writes.py",
    "test_parity_cli.py",
    "test_review.py",
    "test_invariants.py",
    "differential/test_torch_quirks.py",
    "test_fuzz.py",
    "differential/test_nn_utils.py",
    "test_iterative.py",
    "test_emit_test.py",
    "test_safety.py",
    "test_notebook_review.py",
    "differential/test_graph_equality.py",
    "differential/test_torch_functions.py",
    "differential/test_out_argument.py",
    "differential/test_graph_returned_objects.py",
    "differential/test_distributions.py",
    "test_hostile_inputs.py",
    "differential/test_training_step.py",
    "differential/test_graph_list_holders.py",
    "differential/test_generated_forms.py",
    "differential/test_unseen_classes_draw9.py",
    "differential/test_special.py",
    "test_explain.py",
    "differential/test_empty_axes.py",
)

BROWSER_MODULES = ("test_report_browser.py",)


def _relative(path: Path) -> str:
    return _relative_of(str(path))


@functools.lru_cache(maxsize=None)  # asked for each of the ~21,000 items, of about 140 files
def _relative_of(path: str) -> str:
    try:
        return Path(path).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _in(relative: str, modules: tuple[str, ...]) -> bool:
    return any(relative == m or (m.endswith("/") and relative.startswith(m)) for m in modules)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config, items) -> None:
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_relative(Path(item.fspath)), len(rank)))  # stable: in-module order kept
    for item in items:
        relative = _relative(Path(item.fspath))
        if _in(relative, FRAMEWORK_MODULES):
            item.add_marker(pytest.mark.framework)
        if _in(relative, SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
        if _in(relative, BROWSER_MODULES):
            item.add_marker(pytest.mark.browser)


def _framework_excluded(config) -> bool:
    """Whether the run's -m expression leaves out a test marked only ``framework``."""
    expression = config.getoption("markexpr", "")
    if not expression:
        return False
    from _pytest.mark.expression import Expression

    return not Expression.compile(expression).evaluate(lambda name, **kwargs: name == "framework")


def pytest_ignore_collect(collection_path: Path, config):
    # A run without framework tests does not even import their modules (collecting them
    # would load torch and MindSpore only to deselect every test).
    if collection_path.suffix == ".py" and _in(_relative(collection_path), FRAMEWORK_MODULES) \
            and _framework_excluded(config):
        return True
    return None


_framework_log: Path | None = None


def pytest_configure(config) -> None:
    global _framework_log
    if not _framework_excluded(config):
        return
    sys.path.insert(0, str(GUARD_SITE))
    from framework_guard import LOG_VARIABLE, install

    handle, name = tempfile.mkstemp(prefix="transpile-framework-imports-", suffix=".log")
    os.close(handle)
    atexit.register(os.unlink, name)
    _framework_log = Path(name)
    os.environ[LOG_VARIABLE] = name
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_SITE), os.environ.get("PYTHONPATH")]))
    install(name)


def _refused_imports() -> str:
    text = _framework_log.read_text(encoding="utf-8")
    _framework_log.write_text("", encoding="utf-8")
    return text


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _guarded(item))


def _guarded(item):
    """The phase's outcome, or a failure when the phase imported a framework."""
    try:
        return (yield)
    finally:
        if _framework_log is not None:
            refused = _refused_imports()
            if refused:
                pytest.fail(f"{item.nodeid} is not marked framework but imported a framework:\n{refused}",
                            pytrace=False)
