"""transpile: convert PyTorch model code to MindSpore, source to source."""
from .api import ConversionResult, PathReport, RefusedError, convert_code, convert_notebook, convert_paths
from .engine.diagnostics import Diagnostic, Safety, Severity

__all__ = ["convert_code", "convert_notebook", "convert_paths", "ConversionResult", "PathReport", "RefusedError", "Diagnostic", "Severity", "Safety"]
__version__ = "0.1.0"
