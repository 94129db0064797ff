"""`transpile convert --diff` in colour on a terminal only; --color and NO_COLOR."""
import os
import pty
import re
import subprocess
import sys

import pytest

from transpile.cli.shared import colorize_diff

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
RED, GREEN, CYAN, BOLD = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[1m"

SOURCE = """\
import torch


def f(a, b):
    return torch.cat([a, b], 1)
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    return path


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _piped(*args, env=None) -> str:
    proc = subprocess.run([sys.executable, "-m", "transpile", "convert", *map(str, args)],
                          capture_output=True, text=True, env=env or _env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _on_terminal(*args, env=None) -> str:
    """What the command writes to stdout when stdout is a pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "transpile", "convert", *map(str, args)],
                            stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env or _env())
    os.close(slave)  # the child holds it: reading the master ends (EIO) when the child exits
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    # the terminal turns each \n into \r\n
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_terminal_diff_is_coloured_and_the_same_text(model):
    coloured = _on_terminal(model, "--diff")
    for code in (RED, GREEN, CYAN, BOLD):
        assert code in coloured
    assert ESCAPE.sub("", coloured) == _piped(model, "--diff")


def test_piped_diff_is_plain(model):
    plain = _piped(model, "--diff")
    assert "-    return torch.cat([a, b], 1)\n" in plain
    assert "\x1b" not in plain


def test_color_always_when_piped(model):
    coloured = _piped(model, "--diff", "--color", "always")
    assert f"{RED}-    return torch.cat([a, b], 1)\x1b[0m\n" in coloured
    assert ESCAPE.sub("", coloured) == _piped(model, "--diff")


@pytest.mark.parametrize("how", ["no_color", "never"])
def test_no_colour_on_a_terminal_when_asked(model, how):
    if how == "no_color":
        out = _on_terminal(model, "--diff", env=_env(NO_COLOR=""))  # any value, even empty
    else:
        out = _on_terminal(model, "--diff", "--color", "never")
    assert "-    return torch.cat" in out
    assert "\x1b" not in out


def test_colorize_keeps_line_ends_outside_the_escapes():
    lines = ["--- a\n", "+++ b\n", "@@ -1 +1 @@\n", "-x\r\n", "+y", " z\n"]
    coloured = list(colorize_diff(lines))
    assert coloured == [f"{BOLD}--- a\x1b[0m\n", f"{BOLD}+++ b\x1b[0m\n", f"{CYAN}@@ -1 +1 @@\x1b[0m\n",
                        f"{RED}-x\x1b[0m\r\n", f"{GREEN}+y\x1b[0m", " z\n"]
    assert [ESCAPE.sub("", line) for line in coloured] == lines
