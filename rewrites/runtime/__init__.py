"""Run-time helpers: MindSpore code the converted files call, one module per family
(rewrites/runtime/registry.py copies a helper's source into the files that need it)."""
