"""Independent measurements in parallel worker processes (issue 19: the main job on a cold cache).

:func:`run_all` maps a module-level function over a list of hashable, picklable jobs and returns
``{job: result}``. Each job is a pure function of its inputs (a packet-level run with its own seed),
so the results are bit-identical to a serial run and do not depend on the order in which workers
finish: the caller assembles them in its own fixed order.

Workers: ``AIFABRIC_WORKERS`` (a whole number ≥ 1; ``1`` runs serially in this process), else the
CPU cores this process may use (``os.sched_getaffinity``), never more than the jobs, and never more
than the memory guard allows (:mod:`aifabric.memory`: each worker is counted at
:data:`WORKER_BYTES` plus the caller's estimate for one job).

Start method: ``fork`` where the platform has it (Linux): a worker starts as a copy of this process,
with the package and whatever kernels it has loaded, and — unlike ``spawn`` / ``forkserver`` — it
does not re-import the caller's ``__main__`` (a user's script without an ``if __name__ ==
"__main__"`` guard keeps working). Elsewhere ``spawn``: each worker imports the package and loads
the packet engine's compiled kernels from numba's on-disk cache. The job function writes nothing to
the terminal, so a parent thread (the progress bar) holding a stream lock at the fork is harmless.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from aifabric.errors import InputError

J = TypeVar("J", bound=Hashable)
R = TypeVar("R")
ENV = "AIFABRIC_WORKERS"
# MEASURED (bench/RESULTS.md, "Parallel testbed"): peak RSS of one spawned worker after a testbed run
# on the default 400G pod, about 190 MiB (interpreter + numpy/pandas + numba + the loaded kernels);
# rounded up
WORKER_BYTES = 256 * 2**20


class Progress(str):
    """A progress message that also carries ``done`` / ``total`` (a plain ``str`` to callers that
    only show text; a progress bar reads the counts)."""

    done: int
    total: int

    def __new__(cls, text: str, done: int, total: int):
        obj = super().__new__(cls, text)
        obj.done, obj.total = done, total
        return obj


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def requested() -> int | None:
    """``AIFABRIC_WORKERS`` as a number (``None`` when unset); one clear line when it is not one."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise InputError("bad worker count", field=ENV, value=raw, allowed="a whole number >= 1 (1: serial)")
    return int(raw)


def workers_for(jobs: int, job_bytes: int = 0) -> int:
    """How many worker processes to use for ``jobs`` jobs (see the module docstring)."""
    want = requested() or cores()
    n = max(1, min(want, jobs))
    if n > 1:
        from aifabric.memory import USABLE_SHARE, available_bytes

        fit = int(USABLE_SHARE * available_bytes() // max(1, WORKER_BYTES + job_bytes))
        n = max(1, min(n, fit))
    return n


def run_all(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    progress: Callable[[str], object] | None = None,
    label: str = "runs",
    job_bytes: int = 0,
) -> dict[J, R]:
    """``{job: fn(job)}`` for every distinct job, in worker processes when more than one is allowed.
    ``progress`` gets a :class:`Progress` message after each job (``label done/total``)."""
    todo = list(dict.fromkeys(jobs))
    total = len(todo)
    tick = progress or (lambda msg: None)
    out: dict[J, R] = {}
    if not todo:
        return out
    n = workers_for(total, job_bytes)
    tick(Progress(f"{label}: 0/{total} ({n} worker{'s' if n > 1 else ''})", 0, total))
    if n == 1:
        for i, job in enumerate(todo, 1):
            out[job] = fn(job)
            tick(Progress(f"{label}: {i}/{total}", i, total))
        return out
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    if method == "fork":
        # the first job here, before forking: the workers inherit what it loaded (numba's kernels
        # from the on-disk cache, ~1-3 s a process, measured in bench/RESULTS.md) instead of each
        # loading them again
        out[todo[0]] = fn(todo[0])
        tick(Progress(f"{label}: 1/{total} ({n} workers)", 1, total))
    with ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context(method)) as pool:
        futs = {pool.submit(fn, job): job for job in todo if job not in out}
        pending = set(futs)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                exc = f.exception()
                if exc is not None:
                    for p in pending:
                        p.cancel()
                    raise exc
                out[futs[f]] = f.result()
            tick(Progress(f"{label}: {len(out)}/{total} ({n} workers)", len(out), total))
    return out


__all__ = ["ENV", "WORKER_BYTES", "Progress", "cores", "requested", "run_all", "workers_for"]
