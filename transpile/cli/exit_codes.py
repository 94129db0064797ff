"""The exit statuses of ``transpile`` and its subcommands, in one place: every command
returns one of these, and the help texts that list them are written from them."""
import signal

EXIT_OK = 0  # done; parity: every output matches
EXIT_FINDINGS = 1  # a file failed or has errors, --check: a file would change
EXIT_MISMATCH = EXIT_FINDINGS  # parity and weights: an output differs, or a step failed
EXIT_USAGE = 2  # bad usage, or the run was refused (nothing is written)
EXIT_INTERNAL = 123  # a bug in transpile
EXIT_INTERRUPTED = 128 + signal.SIGINT  # Ctrl-C, as a shell reports a process it interrupted
EXIT_TERMINATED = 128 + signal.SIGTERM  # SIGTERM (kill, a job scheduler), after the same clean-up as Ctrl-C
# A closed pipe (``transpile apis | head``) ends as a process killed by SIGPIPE does in a
# shell (128 + 13), as ``cat`` or ``yes`` would there: a ``set -o pipefail`` script sees the
# same status whichever tool sits before ``head``, and a plain pipeline looks at head's.
EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE
