"""The module's functions that compiled methods call by name, for the GRAPH passes that
rewrite them too: ``ctx.compiled`` covers forward, construct and what they call on
``self``, not yet a module function they call (x-transformers' layer order, the Karras
U-Nets' ``normalize_weight``), which GRAPH_MODE compiles as well. Which functions those are
is a fact of the file (``facts.compiled_callees``), found once for every pass that asks."""
from __future__ import annotations


class CompiledOrCalled:
    """A pass's mixin: ``_compiled()`` says whether the traversal is in compiled code or in
    one of the functions compiled methods call (its outermost function). A pass using it
    reads the facts ``compiled_callees``, ``forward_helpers`` and ``submodule_helpers``."""

    def _compiled(self) -> bool:
        if self.ctx.compiled:
            return True
        scopes = self.ctx.open_scopes
        return bool(scopes) and id(scopes[0]) in self.facts.compiled_callees()
