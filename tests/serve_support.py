"""Start ``aifabric serve`` as a user would (a subprocess on a free port) and talk to its JSON API."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
# the jobs the serve tests ask about: small, so a cold measurement cache costs well under a minute
SCENARIO = "name: serve-test\nadvisor: {gpus: 64, gpu: h100, workload: training}\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env() -> dict:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


@contextlib.contextmanager
def running(*args: str, timeout_s: float = 60.0):
    """``aifabric serve ARGS --port P`` running; yields (base URL, the process)."""
    port = free_port()
    cmd = [sys.executable, "-m", "aifabric", "serve", *args, "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited {proc.returncode}: {proc.stderr.read()}")
            try:
                call(url, "/api/state")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def call(url: str, path: str, body=None, client: str = "test", raw: bool = False):
    """(status, decoded JSON or text) of one API call."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(
        url + path,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json", "X-Client": client},
    )
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            code, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read().decode()
    return code, (text if raw else json.loads(text))


def answer(url: str, body, client: str = "test", limit_s: float = 900.0) -> tuple[int, dict]:
    """A what-if's final answer (following its task while it runs)."""
    code, a = call(url, "/api/whatif", body, client)
    deadline = time.monotonic() + limit_s
    while a.get("running"):
        assert time.monotonic() < deadline, "the computation did not finish"
        time.sleep(0.5)
        code, a = call(url, f"/api/tasks/{a['task']}", client=client)
    return code, a


def headline_of_compare(path: Path) -> dict:
    """``aifabric compare FILE --json``'s numbers (:func:`aifabric.serve.session.headline`)."""
    from aifabric.serve.session import headline

    out = subprocess.run(
        [sys.executable, "-m", "aifabric", "compare", str(path), "--json"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return headline(json.loads(out.stdout))
