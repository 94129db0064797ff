"""The rewrite passes, one per file; each file is named after its pass (``cell-class`` is
``cell_class.py``). Their order is in ``rewrites/__init__.py``."""
