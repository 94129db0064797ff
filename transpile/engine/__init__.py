"""The engine: parsing, the stage traversals, the pass base class, the per-file context,
the import table, the TOML tables' loader, formatting, positions and diagnostics.

It converts nothing by itself (the passes and tables of ``transpile.rewrites`` do) and
knows neither torch nor MindSpore; it imports nothing of the rest of ``transpile``.
"""
