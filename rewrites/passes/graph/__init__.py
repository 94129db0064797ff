"""The GRAPH_MODE passes: rewrites (MS3xx) and the lint (MS5xx) of code GRAPH_MODE compiles
(``ctx.compiled``: forward, construct and what they call)."""
