"""Run at start-up by each Python child of a test run without framework tests (the conftest
puts this directory on PYTHONPATH): see framework_guard."""
import os

if os.environ.get("TRANSPILE_TEST_FRAMEWORK_LOG"):
    from framework_guard import LOG_VARIABLE, install

    install(os.environ[LOG_VARIABLE])
