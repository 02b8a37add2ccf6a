"""Output paths (issue 32): every file or folder a command writes — ``compare --report``,
``calibrate --out`` / ``--report``, ``results --csv``, ``sweep --out`` — is checked before any
work starts. A folder where a file is meant, an empty path, a path under a file, a folder that does
not exist, ``/proc/...`` or a device such as ``/dev/full`` is one ``error:`` line naming the
option, exit 2, and the command's work (monkeypatched to raise here) is never reached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_fuzz_support import FUZZ, assert_clean, cli


class Reached(Exception):
    """The command's work started (the path was accepted)."""


def _reached(*a, **k):
    raise Reached("work started")


@pytest.fixture
def no_work(monkeypatch):
    """Every command's work raises :class:`Reached` instead of running."""
    import aifabric.api
    import aifabric.calibrate.parsers
    import aifabric.sweep.query
    import aifabric.sweep.study

    monkeypatch.setattr(aifabric.api, "compare_advisor", _reached)
    monkeypatch.setattr(aifabric.calibrate.parsers, "parse_measurement", _reached)
    monkeypatch.setattr(aifabric.sweep.query, "query", _reached)
    monkeypatch.setattr(aifabric.sweep.study, "load_study", _reached)


BAD_FILE = ["folder", "empty", "under-file", "missing-folder", "proc", "dev-full"]
GOOD_FILE = ["new", "existing"]


def _file_path(tmp: Path, where: str) -> str:
    (tmp / "plain").write_text("x")
    (tmp / "existing.out").write_text("old")
    return {
        "folder": str(tmp),
        "empty": "",
        "under-file": str(tmp / "plain" / "r.out"),
        "missing-folder": str(tmp / "nope" / "r.out"),
        "proc": "/proc/aifabric-test.out",
        "dev-full": "/dev/full",
        "new": str(tmp / "r.out"),
        "existing": str(tmp / "existing.out"),
    }[where]


def _argv(cmd: str, flag: str, path: str, tmp: Path) -> list[str]:
    if cmd == "compare":
        return ["compare", "--json", flag, path]
    if cmd == "calibrate":
        other = ["--out", str(tmp / "cal.yaml")] if flag == "--report" else []
        return ["calibrate", str(tmp / "m.txt"), flag, path, *other]
    return ["results", str(tmp), flag, path]


@FUZZ
@given(
    target=st.sampled_from(
        [("compare", "--report"), ("calibrate", "--out"), ("calibrate", "--report"), ("results", "--csv")]
    ),
    where=st.sampled_from(BAD_FILE + GOOD_FILE),
)
def test_fuzz_output_file_checked_first(no_work, tmp_path_factory, target, where):
    """A bad output file is one line naming its option (exit 2) before any work; a good one
    lets the work start."""
    tmp = tmp_path_factory.mktemp("o")
    cmd, flag = target
    argv = _argv(cmd, flag, _file_path(tmp, where), tmp)
    o = cli(argv, bound_s=30)
    if where in GOOD_FILE:
        assert o.code == 1 and "Reached" in o.stderr, (argv, o.stderr)
        return
    assert_clean(o, argv)
    assert o.code == 2 and flag in o.stderr and "Reached" not in o.stderr, (argv, o.stderr)


@FUZZ
@given(where=st.sampled_from(["file", "under-file", "empty", "new", "nested", "existing"]))
def test_fuzz_sweep_out_checked_first(no_work, tmp_path_factory, where):
    """sweep --out: a file, a path under a file or an empty path is refused before the study is
    read; a new, nested or existing folder is accepted."""
    tmp = tmp_path_factory.mktemp("s")
    (tmp / "plain").write_text("x")
    (tmp / "have").mkdir()
    out = {
        "file": str(tmp / "plain"),
        "under-file": str(tmp / "plain" / "d"),
        "empty": " ",
        "new": str(tmp / "d"),
        "nested": str(tmp / "a" / "b"),
        "existing": str(tmp / "have"),
    }[where]
    argv = ["sweep", str(tmp / "study.yaml"), "--out", out]
    o = cli(argv, bound_s=30)
    if where in ("new", "nested", "existing"):
        assert o.code == 1 and "Reached" in o.stderr, o.stderr
        return
    assert_clean(o, argv)
    assert o.code == 2 and "--out" in o.stderr, o.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_report_refused(no_work, tmp_path):
    """A read-only existing file given as --report is refused before any work."""
    f = tmp_path / "r.html"
    f.write_text("old")
    f.chmod(0o444)
    o = cli(["compare", "--json", "--report", str(f)])
    assert o.code == 2 and "--report: the file is read-only" in o.stderr, o.stderr


def test_full_file_system_refused(no_work, tmp_path, monkeypatch):
    """A file system with less than 1 MiB free is refused before any work (the report would
    fail to write after the whole computation)."""
    import aifabric.cli._outpaths as op

    class _Vfs:
        f_bavail, f_frsize = 10, 4096

    monkeypatch.setattr(op.os, "statvfs", lambda p: _Vfs())
    o = cli(["compare", "--json", "--report", str(tmp_path / "r.html")])
    assert o.code == 2 and "--report: the file system is full" in o.stderr, o.stderr


def test_failed_write_is_one_line(tmp_path, monkeypatch):
    """A write that fails after the run (the disk filled meanwhile) is one line naming the
    option, exit 2 — not an internal error."""
    import aifabric.api
    import aifabric.report.html

    monkeypatch.setattr(aifabric.api, "compare_advisor", lambda *a, **k: {"fabrics": []})

    def full(result, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(aifabric.report.html, "write_report", full)
    o = cli(["compare", "--json", "--report", str(tmp_path / "r.html")])
    assert o.code == 2 and "--report: cannot write the file: No space left on device" in o.stderr, o.stderr
