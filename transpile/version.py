"""The version of transpile (the cache keys its results by it)."""
__version__ = "0.1.0"
