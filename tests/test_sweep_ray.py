"""aifabric sweep on Ray: a local cluster started with `ray start --head` runs a study and writes the
same results as the local process pool (slow: starting Ray takes tens of seconds)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aifabric.cli.sweep import available_commands, invoke
from aifabric.errors import InputError
from aifabric.sweep.commands import validator
from aifabric.sweep.query import query
from aifabric.sweep.runner import run_study
from aifabric.sweep.study import load_study

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

SRC = str(Path(__file__).resolve().parents[1] / "src")
STUDY = """
name: ray-check
command: collective
base: {op: all-reduce, engine: flow, min_bytes: 1MiB, max_bytes: 64MiB}
axes: {gpus: [64, 128], technology: [ib, roce], algorithm: [ring, tree]}
"""
RUN_COLUMNS = ["wall_s", "worker", "finished_at", "attempt"]  # how and where, not what


@pytest.fixture
def ray_head(tmp_path):
    """A one-node Ray cluster (`ray start --head --block`) and its two addresses (GCS, and Ray
    Client ray://), stopped by signalling the process this fixture started (it stops the
    processes it started)."""
    socks = [socket.socket() for _ in range(2)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    port, client_port = (s.getsockname()[1] for s in socks)
    for s in socks:
        s.close()
    ray_bin = Path(sys.executable).with_name("ray")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))}
    log = open(tmp_path / "ray.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--port", str(port), "--ray-client-server-port", str(client_port), "--num-cpus", "2",
         "--include-dashboard=false", "--disable-usage-stats"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.time() + 120
        while time.time() < deadline and "--block" not in (tmp_path / "ray.log").read_text():
            assert proc.poll() is None, (tmp_path / "ray.log").read_text()[-2000:]
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", f"ray://127.0.0.1:{client_port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        with contextlib.suppress(ProcessLookupError):  # anything the head left in its group
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_ray_cluster_writes_the_same_results_as_local(tmp_path, ray_head):
    """Every point of the study on Ray — through the GCS address and through Ray Client — lands
    once, with the same inputs, summaries and per-size rows as the local process pool."""
    p = tmp_path / "study.yaml"
    p.write_text(STUDY)
    st = load_study(p, validate_point=validator(available_commands()))
    local = run_study(st, tmp_path / "local", invoke=invoke, workers=2, progress=False, report=False)
    assert local.ok == 8
    for i, address in enumerate(ray_head):
        on_ray = run_study(
            st, tmp_path / f"ray{i}", invoke=invoke, address=address, progress=False, report=False
        )
        assert (on_ray.ok, on_ray.failed) == (8, 0) and on_ray.where.startswith(f"Ray at {address}")
        for table in ("points", "sizes"):
            a = query(tmp_path / "local", table=table).drop(columns=RUN_COLUMNS, errors="ignore")
            b = query(tmp_path / f"ray{i}", table=table).drop(columns=RUN_COLUMNS, errors="ignore")
            assert len(a) and a.equals(b), (address, table)
        workers = set(query(tmp_path / f"ray{i}")["worker"])
        assert not any(w.endswith(f":{os.getpid()}") for w in workers)  # ran in Ray workers
    # a task no node can hold is refused at once (Ray would wait for such a node forever)
    big = tmp_path / "big.yaml"
    big.write_text(STUDY + "resources: {memory: 100000GiB}\n")
    st = load_study(big, validate_point=validator(available_commands()))
    with pytest.raises(InputError, match="resources.memory: a task asks for 100000.0 GiB"):
        run_study(st, tmp_path / "big", invoke=invoke, address=ray_head[0], progress=False, report=False)
