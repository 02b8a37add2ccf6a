"""Helpers for the fuzz tests (``test_fuzz_*.py``) and the regression corpus (``tests/corpus``):
run the CLI in this process with a time bound and check that its outcome is clean.

A clean outcome is: exit 0, or exit 1 for a run that found a deadlock or stopped at a limit
(stderr: only one-line ``warning:``s and the first-run compile notice); or exit 2 with exactly one ``error: ...`` line on stderr (``validate``
may print one line per problem) — never a traceback, never an internal error, and within the
time bound. No tests live here.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import time
from dataclasses import dataclass

from hypothesis import HealthCheck, settings

from aifabric.cli import run

# fuzz profile: bounded examples, no per-example deadline (the time bound below is per run),
# derandomized so the suite is the same on every run and every machine. A deeper hunt:
# AIFABRIC_FUZZ_EXAMPLES=500 pytest tests/test_fuzz_*.py (new failures go to tests/corpus).
FUZZ = settings(
    max_examples=int(os.environ.get("AIFABRIC_FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)


class TimeBound(Exception):
    """A CLI run exceeded its time bound (a hang)."""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def err_lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]


def cli(argv: list[str], bound_s: float = 30.0) -> Outcome:
    """Run ``aifabric ARGV`` in-process (:func:`aifabric.cli.run`); raise :class:`TimeBound` after
    ``bound_s`` seconds (SIGALRM: checked between the kernel's slices of work)."""

    def alarm(signum, frame):
        raise TimeBound(f"aifabric {' '.join(argv)} took more than {bound_s} s")

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, bound_s)
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - t0)


def assert_clean(o: Outcome, argv: list[str], many_lines_ok: bool = False) -> None:
    """Exit 0, 1 (deadlock / limit, at most one warning line) or 2 with one ``error:`` line."""
    where = f"aifabric {' '.join(argv)} → exit {o.code}\nstderr: {o.stderr[-2000:]}"
    assert "Traceback" not in o.stderr and "Traceback" not in o.stdout, where
    assert "internal error" not in o.stderr, where
    assert o.code in (0, 1, 2), where
    lines = o.err_lines
    if o.code == 2:
        assert lines, where
        assert all(ln.startswith("error: ") for ln in lines), where
        if not many_lines_ok:
            assert len(lines) == 1, where
    else:  # 0, or 1 (deadlock / limit): at most notices and one-line warnings
        assert all(not ln.startswith("error") for ln in lines), where
        assert all(ln.startswith(("warning: ", "compiling the simulator")) for ln in lines), where
