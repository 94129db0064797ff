"""Atomic writes: a file is created or replaced through a temporary file beside it and a
rename, so that no reader ever sees it half-written and a failed write leaves it as it was."""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable


def _replace_atomic(path: Path, fill: Callable[[int, str], None], mode: int | None = None,
                    owner: tuple[int, int] | None = None) -> None:
    """Create or replace ``path`` through a temporary file beside it and a rename, so that no
    reader ever sees it half-written. ``fill(fd, tmp)`` writes the temporary file (and closes
    ``fd``); ``mode`` (else mkstemp's 0600) and ``owner`` (when allowed) are given to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        fill(fd, tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        if owner is not None:
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(tmp, *owner)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, data: str | bytes, mode: int | None = None, owner: tuple[int, int] | None = None) -> None:
    """Write ``data`` (text is UTF-8, its line endings as they are) to ``path`` atomically."""
    raw = data.encode("utf-8") if isinstance(data, str) else data

    def fill(fd: int, _tmp: str) -> None:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)

    _replace_atomic(path, fill, mode, owner)


def write_file_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Create or replace a file the tool owns (a report, the decisions) atomically, with
    the mode it had, else the mode a new file gets under the umask (not mkstemp's 0600)."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    write_atomic(path, data, mode)


def copy_atomic(src: Path, dest: Path) -> None:
    """Copy ``src`` (content, permission bits, times) to ``dest`` atomically."""

    def fill(fd: int, tmp: str) -> None:
        os.close(fd)
        shutil.copy2(src, tmp)

    _replace_atomic(dest, fill)
