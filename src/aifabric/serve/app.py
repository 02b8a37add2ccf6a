"""The web application of ``aifabric serve``: the page and its JSON API (FastAPI).

| route | what |
|---|---|
| ``GET /`` | the page |
| ``GET /api/state`` | the scenario's name, its what-if request (the page's start) and the study folders |
| ``POST /api/whatif`` | ``{"advisor": {...}, "assumptions": {...}}`` → the answer (200), or a running task (202) |
| ``GET /api/tasks/ID``, ``GET /api/tasks/ID/events`` | a task's answer; its stage events (server-sent events) |
| ``POST /api/cancel`` | stop this client's running computation at its next stage event |
| ``POST /api/export/scenario``, ``/api/export/report`` | the what-if as a scenario file / the static HTML report |
| ``POST /api/study`` | ``{"index": N, "where": {column: [values]}}`` → a study folder's results |

A client names itself in the ``X-Client`` header; it has one computation at a time (409 while one
runs). Bad values answer 422 with ``errors[]`` (``control``, ``message``), one per bad value; any
other failure is one line (never a traceback). The only files read are the scenario and the study
folders named on the command line (a study is chosen by its index, never by a path).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from aifabric.errors import InputError
from aifabric.serve.session import Base, FieldErrors, Workspace, errors_of, front_key, parse
from aifabric.serve.tasks import Busy, Tasks, internal_error

WAIT_MEASURED_S = 60.0  # a what-if on a measured job is answered in the request (decide: < 1 s)
WAIT_NEW_JOB_S = 0.5  # a new job answers with its task at once; the page follows its events


def _errors(errors: list[tuple[str, str]], status: int = 422):
    return JSONResponse({"errors": [{"control": c, "message": m} for c, m in errors]}, status_code=status)


class Server:
    """The workspace, the tasks and the plausible ranges seen per job (for the controls)."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws, self.tasks = workspace, Tasks()
        self.ranges: dict[str, dict] = {}

    def request_of(self, base: Base) -> dict:
        """The scenario's own what-if: its advisor's job and question values and its assumptions."""
        from aifabric.serve.session import JOB_FIELDS, QUESTION_FIELDS

        adv = base.advisor
        return {
            "advisor": {k: getattr(adv, k) for k in JOB_FIELDS + QUESTION_FIELDS},
            "assumptions": dict(base.assumptions or {}),
        }

    def answer(self, w, task) -> dict:
        """Compute a what-if and build the page's view of it."""
        from aifabric.report.result import comparison_dict
        from aifabric.serve.controls import controls, fixed_entries, ranges_of
        from aifabric.serve.view import whatif_view

        c, how = self.ws.compute(w, task.progress)
        result = comparison_dict(c)
        result["scenario"] = self.ws.base.name
        seen = self.ranges.setdefault(front_key(self.ws.base, w), {})
        seen.update(ranges_of(result, w.assumptions))
        ctl = controls(result, w.advisor, w.assumptions, seen)
        return whatif_view(result, ctl, fixed_entries(result), how)

    def start(self, client: str, body) -> tuple[int, dict]:
        w = parse(self.ws.base, body)
        measured = self.ws.measured(w)
        task = self.tasks.start(client, lambda t: self.answer(w, t), errors_of)
        task.done.wait(WAIT_MEASURED_S if measured else WAIT_NEW_JOB_S)
        a = task.answer()
        return (422 if "errors" in a else 200 if not a["running"] else 202), a


def _client(request) -> str:
    """The client's own name (``X-Client``), else its address."""
    name = request.headers.get("x-client") or (request.client.host if request.client else "")
    return name[:64] or "anon"


async def _body(request):
    try:
        return await request.json()
    except ValueError:
        raise FieldErrors([("request", "the body is not JSON")]) from None


def _routes(app, srv: Server) -> None:
    from aifabric.serve.page import render_page

    page = render_page()

    @app.get("/", response_class=HTMLResponse)
    def index():
        return page

    @app.get("/favicon.ico")
    def favicon():
        return Response(status_code=204)

    @app.get("/api/state")
    def state():
        b = srv.ws.base
        return {"scenario": b.name, "request": srv.request_of(b), "studies": list(srv.ws.studies)}

    @app.post("/api/whatif")
    async def whatif(request: Request):
        body, client = await _body(request), _client(request)
        code, a = await run_in_threadpool(srv.start, client, body)
        return JSONResponse(a, status_code=code)

    @app.get("/api/tasks/{task_id}")
    def task(task_id: str):
        t = srv.tasks.get(task_id)
        return t.answer() if t else JSONResponse({"errors": [_gone()]}, status_code=404)

    @app.get("/api/tasks/{task_id}/events")
    def events(task_id: str):
        t = srv.tasks.get(task_id)
        if t is None:
            return JSONResponse({"errors": [_gone()]}, status_code=404)
        return StreamingResponse(_stream(t), media_type="text/event-stream")

    @app.post("/api/cancel")
    def cancel(request: Request):
        t = srv.tasks.running(_client(request))
        if t is not None:
            t.cancel.set()
        return {"cancelled": t is not None}

    @app.post("/api/export/scenario")
    async def export_scenario(request: Request):
        w = parse(srv.ws.base, await _body(request))
        text = srv.ws.scenario_yaml(w)
        return Response(text, media_type="application/yaml", headers=_attachment("whatif.yaml"))

    @app.post("/api/export/report")
    async def export_report(request: Request):
        body, client = await _body(request), _client(request)
        html = await run_in_threadpool(_report, srv, client, body)
        return HTMLResponse(html, headers=_attachment("whatif-report.html"))

    @app.post("/api/study")
    async def study(request: Request):
        body = await _body(request)
        return await run_in_threadpool(_study, srv, body)


def _gone() -> dict:
    return {"control": "request", "message": "no such computation (finished long ago, or never started)"}


def _attachment(name: str) -> dict:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


def _stream(t):
    """A task's stage events, then its answer, as server-sent events."""
    seen = 0
    while True:
        finished = t.done.is_set()
        for ev in t.events[seen:]:
            yield f"event: progress\ndata: {json.dumps(ev)}\n\n"
            seen += 1
        if finished:
            yield f"event: done\ndata: {json.dumps(t.answer())}\n\n"
            return
        time.sleep(0.15)


def _report(srv: Server, client: str, body) -> str:
    """The static HTML report of a what-if (``compare --report`` of the exported scenario)."""
    from aifabric.report.html import render_report
    from aifabric.report.result import comparison_dict

    w = parse(srv.ws.base, body)
    if not srv.ws.measured(w):
        raise FieldErrors([("request", "apply this what-if on the page first (its job is not measured yet)")])
    task = srv.tasks.start(client, lambda t: srv.ws.compute(w, t.progress)[0], errors_of)
    task.done.wait()
    if task.errors:
        raise FieldErrors(task.errors)
    result = comparison_dict(task.result)
    result["scenario"] = srv.ws.base.name
    return render_report(result)


def _study(srv: Server, body) -> dict:
    from aifabric.serve.view import study_view
    from aifabric.sweep.store import ResultStore

    names = list(srv.ws.studies)
    i = body.get("index") if isinstance(body, dict) else None
    if not isinstance(i, int) or not 0 <= i < len(names):
        raise FieldErrors([("study", f"no such study; the folders given: {', '.join(names) or 'none'}")])
    where = body.get("where") or {}
    if not isinstance(where, dict) or not all(isinstance(v, list) for v in where.values()):
        raise FieldErrors([("study", "where must map a column to a list of values")])
    return study_view(ResultStore(srv.ws.studies[names[i]]), where)


def create_app(workspace: Workspace):
    """The FastAPI application serving ``workspace``."""
    app = FastAPI(title="aifabric serve", docs_url=None, redoc_url=None, openapi_url=None)
    srv = Server(workspace)
    app.state.server = srv

    @app.exception_handler(InputError)
    async def bad_input(request: Request, exc: InputError):
        return _errors(errors_of(exc))

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        return _errors([("request", "a computation of this page is running: wait for it or cancel it")], 409)

    @app.middleware("http")
    async def no_traceback(request: Request, call_next):
        try:
            return await call_next(request)
        except Exception as exc:  # a bug: one line to the page and none on the terminal
            return JSONResponse({"errors": [{"control": "request", "message": internal_error(exc)}]}, 500)

    _routes(app, srv)
    return app


def study_folders(paths: list[Path]) -> dict[str, Path]:
    """The study folders named on the command line, each checked (``study.json``), by name."""
    from aifabric.sweep.store import ResultStore

    out: dict[str, Path] = {}
    for p in paths:
        try:
            meta = ResultStore(p).meta()
        except InputError as exc:
            raise InputError(exc.problem, field="--study", value=str(p), allowed=exc.allowed) from None
        out[f"{meta.get('name', p.name)} ({p})"] = p
    return out


__all__ = ["Server", "create_app", "study_folders"]
