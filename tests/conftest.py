import atexit
import os
import shutil
import tempfile
import warnings

# MindSpore and torch are noisy on import; the test output should not drown in it.
os.environ.setdefault("GLOG_v", "3")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")

# The cache of conversion results goes to a directory of this test run (inherited by the
# CLI runs in child processes), never to the user's ~/.cache.
os.environ["TRANSPILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="transpile-test-cache-")
atexit.register(shutil.rmtree, os.environ["TRANSPILE_CACHE_DIR"], ignore_errors=True)
