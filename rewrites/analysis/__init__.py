"""Analyses shared by several passes (no pass imports another: what two passes need lives here)."""
