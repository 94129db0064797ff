import os
import warnings

# MindSpore and torch are noisy on import; the test output should not drown in it.
os.environ.setdefault("GLOG_v", "3")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")
