"""Computations of ``aifabric serve`` in background threads: one per client at a time, each with its
stage events (what :func:`aifabric.stages.pipeline.run` reports as it goes) and a cancel flag that
stops it at its next event."""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from aifabric.errors import InputError

TASKS_KEPT = 32  # finished tasks whose answer can still be read


class Cancelled(Exception):
    """The client cancelled the computation."""


class Busy(Exception):
    """The client has a computation running already."""


@dataclass
class Task:
    id: str
    client: str
    started: float = field(default_factory=time.perf_counter)
    events: list[dict] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    cancel: threading.Event = field(default_factory=threading.Event)
    result: dict | None = None
    errors: list[tuple[str, str]] | None = None
    cancelled: bool = False

    def progress(self, msg) -> None:
        """The pipeline's progress callback: record the event, stop here when cancelled."""
        total = getattr(msg, "total", None)
        self.events.append(
            {
                "text": str(msg),
                "done": getattr(msg, "done", None) if total else None,
                "total": total,
                "elapsed_s": round(time.perf_counter() - self.started, 3),
            }
        )
        if self.cancel.is_set():
            raise Cancelled

    def answer(self) -> dict:
        """The task's state as the API returns it."""
        out = {"task": self.id, "running": not self.done.is_set(), "events": list(self.events)}
        if self.result is not None:
            out["result"] = self.result
        if self.errors is not None:
            out["errors"] = [{"control": c, "message": m} for c, m in self.errors]
        if self.cancelled:
            out["cancelled"] = True
        return out


def internal_error(exc: BaseException) -> str:
    """One line for the page (never a traceback); the traceback goes to the server's stderr only with
    ``AIFABRIC_DEBUG=1``."""
    if os.environ.get("AIFABRIC_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    first = (str(exc).splitlines() or [""])[0][:200]
    return f"internal error ({type(exc).__name__}{': ' + first if first else ''}); the server goes on"


class Tasks:
    """The running and recently finished computations, by id and by client."""

    def __init__(self) -> None:
        self._tasks: OrderedDict[str, Task] = OrderedDict()
        self._running: dict[str, Task] = {}
        self._lock = threading.Lock()

    def start(self, client: str, fn: Callable[[Task], dict], errors_of: Callable) -> Task:
        """Run ``fn(task)`` in a thread for ``client``; :class:`Busy` when one of its runs is going."""
        with self._lock:
            cur = self._running.get(client)
            if cur is not None and not cur.done.is_set():
                raise Busy(cur.id)
            task = Task(uuid.uuid4().hex, client)
            self._running[client] = task
            self._tasks[task.id] = task
            while len(self._tasks) > TASKS_KEPT:
                self._tasks.popitem(last=False)
        threading.Thread(target=self._run, args=(task, fn, errors_of), daemon=True).start()
        return task

    @staticmethod
    def _run(task: Task, fn, errors_of) -> None:
        try:
            task.result = fn(task)
        except Cancelled:
            task.cancelled = True
        except InputError as exc:
            task.errors = errors_of(exc)
        except Exception as exc:  # a bug: one line to the page, the server goes on
            task.errors = [("request", internal_error(exc))]
        finally:
            task.done.set()

    def running(self, client: str) -> Task | None:
        """The client's computation that is still going, if any."""
        with self._lock:
            t = self._running.get(client)
        return t if t is not None and not t.done.is_set() else None

    def get(self, task_id: str) -> Task | None:
        with self._lock:
            return self._tasks.get(task_id)


__all__ = ["Busy", "Cancelled", "Task", "Tasks", "internal_error"]
