"""transpile: convert PyTorch model code to MindSpore, source to source."""
from .api import ConversionResult, convert_code, convert_notebook
from .engine.diagnostics import Diagnostic, Safety, Severity
from .io.files import InterruptedRun, PathReport, RefusedError, convert_paths
from .version import __version__

__all__ = ["convert_code", "convert_notebook", "convert_paths", "ConversionResult", "PathReport", "RefusedError", "InterruptedRun", "Diagnostic", "Severity", "Safety"]
