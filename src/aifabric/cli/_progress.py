"""Progress on stderr for long commands: a rich bar on a terminal; without one (CI, a pipe, a log
file) one plain line per stage, with the time since the start and, for counted steps (the risk
testbed's parallel runs), an estimate of the time left from the rate measured so far."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import contextmanager

COUNT_REPORT_EVERY_S = 10.0  # a counted step prints again at most this often (and at its end)


def eta_s(elapsed_s: float, done: int, total: int) -> float | None:
    """Seconds left at the rate measured so far (``elapsed_s`` for ``done`` of ``total``), None
    before the first unit of work is done."""
    if done <= 0 or total <= 0 or elapsed_s < 0:
        return None
    return elapsed_s / done * max(total - done, 0)


class LineProgress:
    """``progress(msg)`` callback that writes one line per stage to ``stream``."""

    def __init__(self, stream=None, clock: Callable[[], float] = time.perf_counter) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.t0 = clock()
        self.stage = ""
        self.stage_t0 = self.t0
        self.last_line_t = -1e9

    def __call__(self, msg) -> None:
        now = self.clock()
        total = getattr(msg, "total", None)
        name = str(msg).split(":")[0] if total else str(msg)
        if name != self.stage:
            self.stage, self.stage_t0 = name, now
            self._line(now, name)
            return
        if not total:
            return
        done = getattr(msg, "done", 0)
        if done >= total or now - self.last_line_t >= COUNT_REPORT_EVERY_S:
            left = eta_s(now - self.stage_t0, done, total)
            tail = f", about {left:.0f} s left" if left is not None and done < total else ""
            self._line(now, f"{name}: {done}/{total}{tail}")

    def _line(self, now: float, text: str) -> None:
        self.last_line_t = now
        self.stream.write(f"[{now - self.t0:6.1f} s] {text}\n")
        self.stream.flush()


@contextmanager
def progress_callback(enabled: bool = True):
    """The callback to pass as ``progress=``: a rich bar with elapsed and remaining time when stderr is
    a terminal, else :class:`LineProgress`; None when not ``enabled``."""
    if not enabled:
        yield None
        return
    if not sys.stderr.isatty():
        yield LineProgress()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(
        *columns,
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as prog:
        task = prog.add_task("starting", total=None)

        def show(msg) -> None:
            # a counted step (aifabric.stages.workers.Progress) fills the bar and gives the time left;
            # any other message is a stage name with an indefinite bar
            total = getattr(msg, "total", None)
            desc = str(msg).split(":")[0] if total else str(msg)
            prog.update(task, description=desc, total=total, completed=getattr(msg, "done", 0))

        yield show
