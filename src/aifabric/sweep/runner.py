"""Running a study's points: a local process pool by default, a Ray cluster when given an address.

Both executors run one task per point through :func:`aifabric.sweep.commands.execute` and hand
finished points back in batches; :func:`run_study` appends each batch to the results database
as it arrives. A point whose worker dies (killed, out of memory) is run again up to ``retries``
times, and its ``attempts`` counts the runs (locally: the pool is rebuilt and the points that were
in flight are resubmitted; on Ray: the driver resubmits the task); a point whose command fails is
a result (status ``failed``), not retried. A Ray cluster lost mid-study (the head stopped, the
connection gone) stops the study without storing its unfinished points, so the same command run
again runs them. Each task asks for the memory its command estimates (``resources.memory`` overrides):
Ray schedules by it; locally it caps the number of workers by the memory available.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aifabric.errors import InputError
from aifabric.sweep.commands import COMMANDS, Invoke, execute
from aifabric.sweep.store import ResultStore, column, point_rows
from aifabric.sweep.study import Study, memory_bytes

OnBatch = Callable[[list[tuple[dict, dict, int]]], None]


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _died(task: dict, why: str) -> dict:
    return {"status": "failed", "error": why, "summary": {}, "tables": {}, "wall_s": None, "worker": None}


class LocalExecutor:
    """A pool of worker processes on this machine (spawned, so nothing is shared but the task)."""

    def __init__(self, workers: int, retries: int, invoke: Invoke | None, worker_fn=execute) -> None:
        self.workers = max(1, workers)
        self.retries = retries
        self.invoke = invoke
        self.worker_fn = worker_fn
        self.where = f"local, {self.workers} worker{'s' if self.workers != 1 else ''}"

    def _pool(self):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"))

    def run(self, tasks: list[dict], on_batch: OnBatch) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        pending = deque(tasks)
        tries = {t["point_id"]: 0 for t in tasks}
        pool = self._pool()
        inflight: dict = {}
        try:
            while pending or inflight:
                while pending and len(inflight) < self.workers:
                    t = pending.popleft()
                    tries[t["point_id"]] += 1
                    inflight[pool.submit(self.worker_fn, t, self.invoke)] = t
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                broken = False
                batch = []
                for f in done:
                    t = inflight.pop(f)
                    try:
                        batch.append((t, f.result(), tries[t["point_id"]]))
                    except BrokenProcessPool:
                        broken = True
                        self._retry(t, tries, pending, batch)
                if broken:  # every point still in flight on the dead pool runs again
                    for f, t in list(inflight.items()):
                        try:
                            batch.append((t, f.result(), tries[t["point_id"]]))
                        except BrokenProcessPool:
                            self._retry(t, tries, pending, batch)
                    inflight.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = self._pool()
                if batch:
                    on_batch(batch)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _retry(self, t: dict, tries: dict, pending: deque, batch: list) -> None:
        n = tries[t["point_id"]]
        if n <= self.retries:
            pending.appendleft(t)
        else:
            batch.append((t, _died(t, f"worker process died {n} times running this point"), n))


class RayExecutor:
    """Tasks on a Ray cluster (``ray://host:port``, ``host:port``, ``auto`` or ``local``)."""

    def __init__(
        self, address: str, retries: int, invoke: Invoke | None, max_inflight: int | None, worker_fn=execute
    ) -> None:
        try:
            import ray
        except ImportError:
            raise InputError(
                "Ray is not installed",
                field="--address",
                value=address,
                allowed="pip install 'aifabric[ray]', or leave --address and RAY_ADDRESS unset to run locally",
            ) from None
        self.ray = ray
        self.retries = retries
        self.invoke = invoke
        self.address = address
        self.max_inflight = max_inflight
        self.worker_fn = worker_fn
        self.lost: str | None = None  # why the cluster was lost mid-study, if it was
        self._started = False

    def __enter__(self):
        # Ray's driver prints the cluster's error messages ("(raylet) A worker died ...") to
        # sys.stdout from a thread of its own: while connected, stdout is stderr, so the sweep's
        # stdout holds only its own output
        self._stdout = contextlib.redirect_stdout(sys.stderr)
        self._stdout.__enter__()
        try:
            return self._connect()
        except BaseException:
            self._stdout.__exit__(None, None, None)
            raise

    def _connect(self):
        import logging

        ray = self.ray
        if not ray.is_initialized():
            env = {}
            if self.address == "local":  # a fresh local cluster: its workers import this checkout
                import aifabric

                src = str(Path(aifabric.__file__).resolve().parent.parent)
                env = {
                    "env_vars": {
                        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
                    }
                }
            if self.address != "local":
                _token_auth_if_available()
            try:
                ray.init(
                    address=self.address,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                    runtime_env=env or None,
                    include_dashboard=False if self.address == "local" else None,
                )
            except Exception as exc:  # connection refused, bad address, version mismatch
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise InputError(
                    f"cannot connect to Ray: {msg}",
                    field="--address",
                    value=self.address,
                    allowed="ray://HOST:10001, HOST:6379, auto, or local",
                ) from None
            self._started = True
        self._check_workers()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.window = self.max_inflight or max(2, 2 * cpus)
        self.where = f"Ray at {self.address}, {cpus} CPUs"
        return self

    def __exit__(self, *exc):
        try:
            if self._started:
                self.ray.shutdown()
        finally:
            self._stdout.__exit__(None, None, None)

    def _check_workers(self) -> None:
        import aifabric

        ray = self.ray
        probe = ray.remote(_probe).options(num_cpus=0, max_retries=0)
        try:
            theirs = ray.get(probe.remote(), timeout=300)
        except Exception as exc:
            msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise InputError(
                f"Ray workers cannot run aifabric: {msg}",
                field="--address",
                value=self.address,
                allowed="install the same aifabric (with the sweep module) on every node of the cluster",
            ) from None
        if theirs != aifabric.__version__:
            raise InputError(
                f"Ray workers have aifabric {theirs}, this driver {aifabric.__version__}",
                field="--address",
                value=self.address,
                allowed="the same aifabric version on the cluster",
            )

    def run(self, tasks: list[dict], on_batch: OnBatch, memory: Callable[[dict], int], cpus: float) -> None:
        """Run ``tasks``; stop early (``self.lost`` says why) when the cluster itself is lost: the
        points in flight are then not stored at all, so a plain re-run runs them."""
        self._check_fits(tasks, memory)
        remote = self.ray.remote(self.worker_fn)
        pending = deque(tasks)
        tries = {t["point_id"]: 0 for t in tasks}
        inflight: dict = {}
        while (pending or inflight) and self.lost is None:
            while pending and len(inflight) < self.window:
                t = pending.popleft()
                tries[t["point_id"]] += 1
                opts = {"num_cpus": cpus, "memory": memory(t), "max_retries": 0, "retry_exceptions": False}
                inflight[remote.options(**opts).remote(t, self.invoke)] = t
            batch: list = []
            for ref in self._ready(inflight):
                self._collect(ref, inflight.pop(ref), tries, pending, batch)
            if batch:
                on_batch(batch)

    def _check_fits(self, tasks: list[dict], memory: Callable[[dict], int]) -> None:
        need = max((memory(t) for t in tasks), default=0)
        nodes = [n.get("Resources", {}).get("memory", 0) for n in self.ray.nodes() if n.get("Alive")]
        if nodes and need > max(nodes):  # Ray would wait for such a node forever
            raise InputError(
                f"a task asks for {need / 2**30:.1f} GiB of memory; the largest Ray node offers "
                f"{max(nodes) / 2**30:.1f} GiB",
                field="resources.memory",
                allowed="a smaller resources.memory in the study, or bigger nodes",
            )

    def _ready(self, inflight: dict) -> list:
        """The finished tasks among ``inflight`` (waits up to a second); none when the cluster is
        gone (``self.lost`` set)."""
        try:
            ready, rest = self.ray.wait(list(inflight), num_returns=1, timeout=1.0)
            if ready and rest:
                more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
                ready += more
        except Exception as exc:  # the driver lost its connection (Ray Client) or its raylet
            self.lost = _one_line(exc)
            return []
        return ready

    def _collect(self, ref, t: dict, tries: dict, pending: deque, batch: list) -> None:
        """One finished task: its result; its worker or node died: run it again (as the local pool
        does), failed after 1 + retries deaths; the cluster lost: nothing (``self.lost``)."""
        ex = self.ray.exceptions
        n = tries[t["point_id"]]
        try:
            batch.append((t, self.ray.get(ref), n))
        except (ex.WorkerCrashedError, ex.OutOfMemoryError, ex.NodeDiedError) as exc:
            if not self._alive():
                self.lost = _one_line(exc)
            elif n <= self.retries:
                pending.appendleft(t)
            else:
                batch.append((t, _died(t, f"worker process died {n} times running this point"), n))
        except ex.RayTaskError as exc:  # raised in the worker past execute's own handler
            batch.append((t, _died(t, _one_line(exc.cause if exc.cause else exc)), n))
        except Exception as exc:  # LocalRayletDiedError, RaySystemError, a lost connection, ...
            self.lost = _one_line(exc)

    def _alive(self) -> bool:
        """Whether the cluster still answers and has a live node (a dying head kills its workers
        first: their points are not the points' fault)."""
        try:
            return any(n.get("Alive") for n in self.ray.nodes())
        except Exception:
            return False


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A HOST:PORT (or ray://HOST:PORT) that nothing listens on is one line at once, not Ray's
    minutes of retries."""
    import socket

    rest = address.removeprefix("ray://")
    if address in ("local", "auto") or ":" not in rest:
        return
    host, _, port = rest.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        raise InputError(
            f"cannot reach a Ray cluster there ({getattr(exc, 'strerror', None) or exc})",
            field="--address",
            value=address,
            allowed="ray://HOST:10001 (Ray Client), HOST:6379 (GCS), auto, or local",
        ) from None


def _token_auth_if_available() -> None:
    """Send the auth token when this machine has one: since Ray 2.5x a cluster started with
    `ray start` uses token authentication (token in ~/.ray/auth_token), and a driver that
    connects to it must be in token mode too. An explicit RAY_AUTH_MODE is left alone."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _probe() -> str:
    import aifabric
    import aifabric.sweep.commands  # noqa: F401  (the workers can run points)

    return aifabric.__version__


@dataclass
class SweepOutcome:
    name: str
    out: str
    points: int
    skipped: int  # already finished before this run
    ok: int
    failed: int
    wall_s: float
    where: str
    report: str | None
    unfinished: int = 0  # points not run: the study stopped early (``stopped`` says why)
    stopped: str | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def input_columns(study: Study) -> dict[str, str]:
    cols: dict[str, str] = {}
    for k in study.keys:
        c = column(k)
        if c in cols.values():
            raise InputError(f"two keys give the same column name {c!r}", file=study.file, field=f"axes.{k}")
        cols[k] = c
    return cols


def run_study(
    study: Study,
    out: str | Path,
    *,
    invoke: Invoke | None = None,
    address: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    report: bool = True,
    worker_fn=execute,
) -> SweepOutcome:
    """Run the points of ``study`` not yet in ``out`` and append them there as they finish."""
    t0 = time.perf_counter()
    store = ResultStore(out)
    cmd = COMMANDS[study.command]
    columns = input_columns(study)
    if workers is not None and workers < 1:
        raise InputError("must be ≥ 1", field="--workers", value=workers)
    if address:
        _check_reachable(address)
    with store.lock():
        store.init_study(study, columns)
        done = store.finished()
        todo = [
            p
            for p in study.points
            if p.point_id not in done or (retry_failed and done[p.point_id] == "failed")
        ]
        skipped = len(study.points) - len(todo)
        by_id = {p.point_id: p for p in todo}
        fixed = study.spec.resources.memory
        mem_fixed = memory_bytes(fixed) if fixed is not None else None
        tasks = [
            {
                "command": study.command,
                "scenario": p.scenario,
                "options": p.options,
                "point_id": p.point_id,
                "memory": mem_fixed or cmd.memory(p.scenario, p.options),
            }
            for p in todo
        ]
        counts = {"ok": 0, "failed": 0}
        bar = _Bar(study.name, len(study.points), skipped, enabled=progress)

        def on_batch(batch: list[tuple[dict, dict, int]]) -> None:
            rows, tables = [], {}
            for t, outcome, attempts in batch:
                row, details = point_rows(study, by_id[t["point_id"]], outcome, attempts, columns)
                rows.append(row)
                for name, trows in details.items():
                    tables.setdefault(name, []).extend(trows)
                counts["ok" if outcome["status"] == "ok" else "failed"] += 1
            store.append(rows, tables)
            bar.update(counts["ok"], counts["failed"])

        retries = study.spec.retries
        stopped = None
        if tasks and address:
            with (
                RayExecutor(address, retries, invoke, workers, worker_fn) as ex,
                bar,
            ):  # connected before the bar
                where = ex.where
                ex.run(tasks, on_batch, memory=lambda t: t["memory"], cpus=study.spec.resources.cpus)
            stopped = f"the Ray cluster was lost ({ex.lost})" if ex.lost else None
        elif tasks:
            n = workers or os.cpu_count() or 1
            avail = _available_memory()
            per = max(t["memory"] for t in tasks)
            if avail and workers is None:
                n = max(1, min(n, avail // per))
            ex = LocalExecutor(min(n, len(tasks)), retries, invoke, worker_fn)
            where = ex.where
            with bar:
                ex.run(tasks, on_batch)
        else:
            where = "nothing to run"
        finished = store.finished()
        complete = all(p.point_id in finished for p in study.points)
        if complete:
            store.compact()
        report_path = None
        if report and finished:
            from aifabric.sweep.report import write_study_report

            report_path = str(write_study_report(store, Path(out) / "report.html"))
    failed_total = sum(1 for p in study.points if finished.get(p.point_id) == "failed")
    return SweepOutcome(
        study.name,
        str(out),
        len(study.points),
        skipped,
        counts["ok"],
        failed_total,
        time.perf_counter() - t0,
        where,
        report_path,
        sum(1 for p in study.points if p.point_id not in finished),
        stopped,
    )


class _Bar:
    """A rich progress bar on stderr: points done / failed, elapsed, ETA."""

    def __init__(self, name: str, total: int, skipped: int, enabled: bool) -> None:
        self.enabled = enabled
        self.total, self.skipped = total, skipped
        self.name = name

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.prog = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("failed {task.fields[failed]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.prog.__enter__()
            self.task = self.prog.add_task(self.name, total=self.total, completed=self.skipped, failed=0)
        return self

    def update(self, ok: int, failed: int) -> None:
        if self.enabled:
            self.prog.update(self.task, completed=self.skipped + ok + failed, failed=failed)

    def __exit__(self, *exc):
        if self.enabled:
            self.prog.__exit__(*exc)
