"""aifabric sweep on Ray: a local cluster started with `ray start --head --node-ip-address 127.0.0.1`
runs a study and writes the same results as the local process pool; a worker killed mid-point is
run again (its ``attempts`` counted); a head stopped mid-study stores nothing as failed and the
same command run again finishes the study; Ray's own log lines stay off the sweep's stdout (slow:
starting Ray takes tens of seconds). Under CI (``CI`` set) a missing ray is an error, not a skip."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from aifabric.cli.sweep import available_commands, invoke
from aifabric.errors import InputError
from aifabric.sweep.commands import validator
from aifabric.sweep.query import query
from aifabric.sweep.runner import run_study
from aifabric.sweep.study import load_study
from ray_support import SRC, RayHead, killed_worker, one_cluster_at_a_time

pytestmark = pytest.mark.slow
if os.environ.get("CI"):
    import ray  # noqa: F401  (CI installs the ray extra: its absence fails the suite)
else:
    pytest.importorskip("ray")

STUDY = """
name: ray-check
command: collective
base: {op: all-reduce, engine: flow, min_bytes: 1MiB, max_bytes: 64MiB}
axes: {gpus: [64, 128], technology: [ib, roce], algorithm: [ring, tree]}
"""
RUN_COLUMNS = ["wall_s", "worker", "finished_at", "attempt", "attempts"]  # how and where, not what


@pytest.fixture
def ray_head(tmp_path):
    with one_cluster_at_a_time():
        head = RayHead(tmp_path)
        try:
            yield head
        finally:
            head.stop()


def _load(tmp_path, text: str, name: str = "study.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p, load_study(p, validate_point=validator(available_commands()))


def _same(a_dir, b_dir, tables=("points", "sizes")) -> None:
    for table in tables:
        a = query(a_dir, table=table).drop(columns=RUN_COLUMNS, errors="ignore")
        b = query(b_dir, table=table).drop(columns=RUN_COLUMNS, errors="ignore")
        assert len(a) and a.equals(b), (b_dir, table)


def test_ray_cluster_writes_the_same_results_as_local(tmp_path, ray_head):
    """Every point of the study on Ray — through the GCS address and through Ray Client — lands
    once, with the same inputs, summaries and per-size rows as the local process pool."""
    _, st = _load(tmp_path, STUDY)
    local = run_study(st, tmp_path / "local", invoke=invoke, workers=2, progress=False, report=False)
    assert local.ok == 8
    for i, address in enumerate((ray_head.gcs, ray_head.client)):
        on_ray = run_study(
            st, tmp_path / f"ray{i}", invoke=invoke, address=address, progress=False, report=False
        )
        assert (on_ray.ok, on_ray.failed, on_ray.stopped) == (8, 0, None)
        assert on_ray.where.startswith(f"Ray at {address}")
        _same(tmp_path / "local", tmp_path / f"ray{i}")
        workers = set(query(tmp_path / f"ray{i}")["worker"])
        assert not any(w.endswith(f":{os.getpid()}") for w in workers)  # ran in Ray workers
        assert set(query(tmp_path / f"ray{i}")["attempts"]) == {1}
    # a task no node can hold is refused at once (Ray would wait for such a node forever)
    _, big = _load(tmp_path, STUDY + "resources: {memory: 100000GiB}\n", "big.yaml")
    with pytest.raises(InputError, match="resources.memory: a task asks for 100000.0 GiB"):
        run_study(big, tmp_path / "big", invoke=invoke, address=ray_head.gcs, progress=False, report=False)


def test_killed_ray_worker_is_retried_and_counted(tmp_path, ray_head):
    """A Ray worker killed mid-point: the point runs again and lands once with ``attempts`` 2 and
    the local pool's result; one that kills every worker is failed after 1 + retries attempts."""
    _, st = _load(tmp_path, STUDY + "retries: 1\n")
    res = run_study(
        st, tmp_path / "ray", invoke=invoke, address=ray_head.gcs, progress=False, report=False,
        worker_fn=killed_worker,
    )  # fmt: skip
    assert (tmp_path / "killed-once").exists() and (res.ok, res.failed, res.stopped) == (7, 1, None)
    pts = query(tmp_path / "ray").set_index(["gpus", "technology", "algorithm"])
    assert len(pts) == 8 and pts.index.is_unique
    assert pts.loc[(128, "ib", "ring"), "status"] == "ok" and pts.loc[(128, "ib", "ring"), "attempts"] == 2
    dead = pts.loc[(64, "roce", "tree")]
    assert dead["status"] == "failed" and dead["attempts"] == 2 and "died 2 times" in dead["error"]
    others = pts.drop(index=[(128, "ib", "ring"), (64, "roce", "tree")])
    assert (others["attempts"] == 1).all() and (others["status"] == "ok").all()
    assert pts.drop(index=[(64, "roce", "tree")])["error"].isna().all()
    local = run_study(st, tmp_path / "local", invoke=invoke, workers=2, progress=False, report=False)
    assert local.ok == 8
    ok = (
        query(tmp_path / "local")
        .set_index(["gpus", "technology", "algorithm"])
        .drop(index=[(64, "roce", "tree")])
    )
    cols = [c for c in ok.columns if c not in [*RUN_COLUMNS, "error"]]
    pd.testing.assert_frame_equal(
        ok[cols].sort_index(), pts.loc[ok.index, cols].sort_index(), check_dtype=False
    )


BIG = """
name: ray-stop
command: collective
base: {op: all-reduce, engine: flow, min_bytes: 1MiB, max_bytes: 1GiB}
axes: {gpus: [64, 128, 256, 512, 1024], technology: [ib, roce], algorithm: [ring, tree]}
"""


def _sweep(study, out, address) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))}
    env.pop("RAY_ADDRESS", None)
    cmd = [sys.executable, "-m", "aifabric", "sweep", str(study), "--out", str(out), "--address", address,
           "--workers", "1", "--no-progress", "--no-report"]  # fmt: skip
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_head_stopped_mid_study_then_the_same_command_resumes(tmp_path):
    """The head stopped while the study runs: the finished points are kept, none is stored as
    failed, the sweep says so (exit 1); the same command against a cluster finishes the rest, every
    point exactly once. The sweep's stdout is its own summary line only (no Ray log lines)."""
    with one_cluster_at_a_time():
        study, st = _load(tmp_path, BIG)
        out = tmp_path / "run"
        head = RayHead(tmp_path)
        try:
            proc = _sweep(study, out, head.gcs)
            deadline = time.time() + 240
            while time.time() < deadline and proc.poll() is None and len(_stored(out)) < 2:
                time.sleep(0.2)
        finally:
            head.stop()
        stdout, stderr = proc.communicate(timeout=180)
        before = _stored(out)
        assert proc.returncode == 1, (stdout, stderr[-3000:])
        assert 2 <= len(before) < 20 and set(before["status"]) == {"ok"}, before
        lines = stdout.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("study ray-stop: 20 points"), stdout
        assert (
            "stopped early: the Ray cluster was lost" in lines[0]
            and f"{20 - len(before)} points not run" in lines[0]
        )
        head = RayHead(tmp_path)  # a new cluster, the same command
        try:
            proc = _sweep(study, out, head.gcs)
            stdout, stderr = proc.communicate(timeout=400)
        finally:
            head.stop()
        assert proc.returncode == 0, (stdout, stderr[-3000:])
        assert (
            stdout.strip().startswith(f"study ray-stop: 20 points, {len(before)} already done")
            and len(stdout.strip().splitlines()) == 1
        )
        after = _stored(out)
        assert len(after) == 20 and after["point_id"].is_unique and set(after["status"]) == {"ok"}
        assert sorted(after["point_id"]) == sorted(p.point_id for p in st.points)


def _stored(out):
    return query(out) if (out / "results" / "points").exists() else pd.DataFrame({"status": []})
