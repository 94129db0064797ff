"""jinja2 templates for whole generated files (parity tests, reports)."""
