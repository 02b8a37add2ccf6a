"""Output paths checked before any work starts (issue 32): a file a command will write
(``compare --report``, ``calibrate --out`` / ``--report``, ``results --csv``) or a folder it will
fill (``sweep --out``; ``simulate --out`` has its own rules in :mod:`aifabric.cli._preflight`).

A path is refused — one :class:`~aifabric.errors.InputError` line naming the option, exit 2 —
when it is empty, is a folder where a file is meant (or a file where a folder is meant), is not
a regular file (``/dev/full``, ``/proc/...``), lies under a file or in a folder that does not
exist, cannot be written (permissions, a read-only file system), or its file system has less
than :data:`MIN_FREE_BYTES` free. :func:`write_guarded` turns a write that still fails (the disk
filled during the run) into the same kind of line instead of an internal error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from aifabric.errors import InputError

#: ASSUMPTION (no public source): a report, CSV or calibration file is at most a few MiB; below
#: 1 MiB free the write would most likely fail after the whole computation.
MIN_FREE_BYTES = 2**20


def _text(path) -> str:
    return str(path) if path is not None else ""


def _err(problem: str, flag: str, path, allowed: str) -> InputError:
    return InputError(problem, field=flag, value=_text(path), allowed=allowed)


def _check_space(folder: Path, flag: str, path) -> None:
    try:
        st = os.statvfs(folder)
    except OSError:
        return  # no statistics (an unusual file system): the write itself will tell
    if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
        raise _err(
            f"the file system is full ({st.f_bavail * st.f_frsize} bytes free)",
            flag,
            path,
            "a path on a file system with free space",
        )


def _probe(folder: Path, flag: str, path, what: str) -> None:
    """Create and remove an empty file in ``folder``: the temp-file-and-rename writes need it."""
    probe = folder / f".aifabric-write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise _err(f"cannot write there: {exc.strerror or exc}", flag, path, what) from None


def check_out_file(path: str | Path | None, flag: str) -> None:
    """``path`` can be written as a new or replaced regular file (see the module docstring)."""
    if path is None:
        return
    allowed = "a writable file path in an existing folder"
    text = str(path)
    if not text.strip():
        raise _err("empty path", flag, path, allowed)
    if text.strip() == ".":  # typer turns an empty argument into "."
        raise _err("empty path or the current folder", flag, path, allowed)
    p = Path(text)
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _err("a part of the path is a file, not a folder", flag, path, allowed) from None
    except OSError as exc:
        raise _err(f"cannot use the path: {exc.strerror or exc}", flag, path, allowed) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise _err("is a folder", flag, path, "a file path, not a folder")
        if not stat.S_ISREG(st.st_mode):
            raise _err("not a regular file", flag, path, allowed)
        if not os.access(p, os.W_OK):
            raise _err("the file is read-only", flag, path, allowed)
    parent = p.parent
    try:
        pst = parent.stat()
    except FileNotFoundError:
        raise _err("folder does not exist", flag, path, allowed) from None
    except NotADirectoryError:
        raise _err("a part of the path is a file, not a folder", flag, path, allowed) from None
    except OSError as exc:
        raise _err(f"cannot use the folder: {exc.strerror or exc}", flag, path, allowed) from None
    if not stat.S_ISDIR(pst.st_mode):
        raise _err("a part of the path is a file, not a folder", flag, path, allowed)
    _probe(parent, flag, path, allowed)
    _check_space(parent, flag, path)


def check_out_folder(path: str | Path | None, flag: str) -> None:
    """``path`` is an existing writable folder or can be created as one (an existing folder's
    contents are the caller's business: ``sweep`` resumes in it)."""
    if path is None:
        return
    allowed = "a writable folder path"
    text = str(path)
    if not text.strip():
        raise _err("empty path", flag, path, allowed)
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise _err("not a folder (a file exists there)", flag, path, allowed)
    # the nearest existing ancestor must be a writable folder (the rest is created)
    anc = p
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise _err("a part of the path is a file, not a folder", flag, path, allowed)
    _probe(anc, flag, path, allowed)
    _check_space(anc, flag, path)


def write_guarded(write: Callable[[], object], flag: str, path) -> None:
    """Run ``write``; an OSError (disk full, file removed meanwhile) → one InputError line."""
    try:
        write()
    except OSError as exc:
        raise _err(
            f"cannot write the file: {exc.strerror or exc}", flag, path, "a writable file path"
        ) from None
