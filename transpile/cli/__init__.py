"""The command line (``transpile``): ``main`` and one module per group of subcommands.
Nothing outside this package imports it."""
