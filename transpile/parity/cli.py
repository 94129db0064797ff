"""`transpile parity` (filled in below)."""


def add_parity_parser(sub) -> None:
    pass
