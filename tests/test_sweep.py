"""aifabric sweep / results: study files, local runs, the results database, resume after a kill,
retries when a worker dies, the study report. Points are tiny (collective at 64–128 GPUs,
compare at 64) so the file runs in well under a minute on two cores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.cli.sweep import available_commands, invoke
from aifabric.errors import InputError
from aifabric.sweep.commands import execute, validator
from aifabric.sweep.query import query
from aifabric.sweep.runner import run_study
from aifabric.sweep.store import ResultStore
from aifabric.sweep.study import load_study

SRC = str(Path(__file__).resolve().parents[1] / "src")

COLLECTIVE = """
name: coll
command: collective
base: {op: all-reduce, engine: flow, min_bytes: 1MiB, max_bytes: 16MiB}
axes: {gpus: [64, 128], technology: [ib, roce]}
"""


def _study(tmp_path: Path, text: str, name: str = "study.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _load(path):
    return load_study(path, validate_point=validator(available_commands()))


def _raw_point_ids(folder: Path) -> list[str]:
    """Every point id stored in the points files (not the deduplicating view)."""
    ids = []
    for f in sorted((folder / "results" / "points").glob("*.parquet")):
        ids += pq.read_table(f, columns=["point_id"]).column("point_id").to_pylist()
    return ids


# ---- study files ---------------------------------------------------------------------------------
def test_grid_points_and_stable_ids(tmp_path):
    """Axes span a grid in key order; ids depend on what a point runs, not on the file's layout."""
    st = _load(_study(tmp_path, COLLECTIVE))
    assert [p.assignments for p in st.points] == [
        {"gpus": 64, "technology": "ib"},
        {"gpus": 64, "technology": "roce"},
        {"gpus": 128, "technology": "ib"},
        {"gpus": 128, "technology": "roce"},
    ]
    assert st.points[3].scenario["gpus"] == 128 and st.points[3].scenario["op"] == "all-reduce"
    same = _load(_study(tmp_path, COLLECTIVE.replace("[64, 128]", "[64, 128, 256]"), "b.yaml"))
    assert {p.point_id for p in st.points} < {p.point_id for p in same.points}
    assert len({p.point_id for p in st.points}) == 4


def test_points_list_and_seeded_latin_hypercube(tmp_path):
    """An explicit list crosses the axes; an LHS sample has one draw per stratum of each range and
    is the same for the same seed."""
    lst = _load(
        _study(
            tmp_path,
            "command: collective\nbase: {op: all-gather}\n"
            "points: [{gpus: 16}, {gpus: 32, technology: roce}]\naxes: {engine: [flow, analytic]}\n",
        )
    )
    assert [(p.scenario["gpus"], p.scenario.get("technology"), p.scenario["engine"]) for p in lst.points] == [
        (16, None, "flow"),
        (16, None, "analytic"),
        (32, "roce", "flow"),
        (32, "roce", "analytic"),
    ]
    text = (
        "command: collective\nbase: {{op: all-reduce}}\nsample:\n  method: lhs\n  n: 8\n  seed: {seed}\n"
        "  ranges:\n    gpus: {{min: 16, max: 4096, log: true, integer: true}}\n"
        "    technology: {{values: [ib, roce]}}\n"
    )
    a = _load(_study(tmp_path, text.format(seed=3), "a.yaml"))
    b = _load(_study(tmp_path, text.format(seed=3), "b.yaml"))
    c = _load(_study(tmp_path, text.format(seed=4), "c.yaml"))
    gpus = [p.scenario["gpus"] for p in a.points]
    assert gpus == [p.scenario["gpus"] for p in b.points] != [p.scenario["gpus"] for p in c.points]
    from aifabric.sweep.study import RangeSpec, SampleSpec, _sample

    xs = [r["x"] for r in _sample(SampleSpec(n=10, seed=5, ranges={"x": RangeSpec(min=0, max=1)}))]
    assert sorted(int(10 * x) for x in xs) == list(range(10))  # one draw in each tenth
    assert sorted(p.scenario["technology"] for p in a.points).count("ib") == 4


@pytest.mark.parametrize(
    ("text", "field", "allowed"),
    [
        ("command: plan\n", "command", "compare, train, simulate, collective"),
        ("command: compare\naxes: {advisor.gpu: [h100, h900]}\n", "axes.advisor.gpu", "h100"),
        ("command: compare\naxes: {advisor.gpu_count: [8]}\n", "axes.advisor.gpu_count", "gpus"),
        ("command: compare\nbase: {advisor: {gpus: 0}}\n", "base.advisor.gpus", None),
        ("command: compare\noptions: {compute_efficiency: 2}\n", "options.compute_efficiency", "e.g. 0.6"),
        ("command: collective\nbase: {op: all-reduce}\naxes: {gpus: [8, 8]}\n", "axes", "distinct"),
        ("command: compare\naxes: {advisor.gpus: []}\n", "axes.advisor.gpus", None),
        ("command: compare\nsurprise: 1\n", "surprise", "axes"),
    ],
)
def test_bad_study_is_one_line_naming_file_and_field(tmp_path, text, field, allowed):
    """A bad study file fails before anything runs: one line with the file, the field and (where
    there is a list) what is allowed; the CLI exits 2 with that line."""
    p = _study(tmp_path, text)
    with pytest.raises(InputError) as ei:
        _load(p)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(str(p)) and f": {field}" in msg, msg
    if allowed:
        assert "allowed:" in msg and allowed in msg.split("allowed:")[1], msg
    r = CliRunner().invoke(app, ["sweep", str(p), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_train_dispatches_to_the_train_command(tmp_path):
    """command: train runs `aifabric train` through the same table: without that command in the
    build the study is refused up front (exit 2, naming what is available); with it, each point
    calls it with the point's scenario file and --json."""
    p = _study(tmp_path, "command: train\nbase: {advisor: {gpus: 64}}\naxes: {advisor.gpus: [64, 128]}\n")
    if "train" not in available_commands():
        with pytest.raises(InputError, match=r"command: aifabric train is not available.*allowed: compare"):
            _load(p)
    seen = []

    def fake_invoke(argv):
        seen.append(argv)
        sc = Path(argv[1]).read_text()
        it = {"iteration_s": 2.0 if "128" in sc else 4.0, "mfu": 0.5, "layout": {"tp": 8, "pp": 1, "dp": 8}}
        return 0, json.dumps({"fabrics": [{"technology": "infiniband", "iteration": it}]}), ""

    out = execute(
        {
            "command": "train",
            "scenario": {"advisor": {"gpus": 128}},
            "options": {"fabric": "ib"},
            "point_id": "x",
        },
        fake_invoke,
    )
    assert seen[0][0] == "train" and seen[0][2:] == ["--json", "--fabric", "ib"]
    assert out["status"] == "ok" and out["summary"]["iteration_s"] == 2.0 and out["summary"]["layout_tp"] == 8
    assert not Path(seen[0][1]).exists()  # the point's scenario file is removed


# ---- running and querying ----------------------------------------------------------------------
def test_local_study_results_and_queries(tmp_path):
    """A local run stores one row per point (inputs, status, summary) and the per-size rows; the
    stored numbers are what `aifabric collective --json` prints; results filters, SQL and CSV."""
    st = _load(_study(tmp_path, COLLECTIVE))
    out = tmp_path / "run"
    res = run_study(st, out, invoke=invoke, workers=2, progress=False)
    assert (res.points, res.ok, res.failed, res.skipped) == (4, 4, 0, 0)
    rows = json.loads(CliRunner().invoke(app, ["results", str(out), "--json"]).stdout)["rows"]
    assert [(r["gpus"], r["technology"], r["status"]) for r in rows] == [
        (64, "ib", "ok"),
        (64, "roce", "ok"),
        (128, "ib", "ok"),
        (128, "roce", "ok"),
    ]
    code, text, _ = invoke(
        [
            "collective",
            "all-reduce",
            "--engine",
            "flow",
            "--min-bytes",
            "1MiB",
            "--max-bytes",
            "16MiB",
            "--gpus",
            "128",
            "--technology",
            "roce",
            "--json",
        ]
    )
    assert code == 0
    direct = json.loads(text)["rows"]
    sizes = query(out, table="sizes", where=["gpus=128", "technology = roce"])
    assert sizes["size_bytes"].tolist() == [r["size_bytes"] for r in direct]
    assert sizes["busbw_gbps"].tolist() == pytest.approx([r["busbw_gbps"] for r in direct], rel=1e-12)
    assert rows[3]["busbw_gbps"] == pytest.approx(direct[-1]["busbw_gbps"], rel=1e-12)
    r = CliRunner().invoke(
        app,
        [
            "results",
            str(out),
            "--json",
            "--sql",
            "SELECT technology, count(*) AS n FROM points GROUP BY 1 ORDER BY 1",
        ],
    )
    assert json.loads(r.stdout)["rows"] == [{"technology": "ib", "n": 2}, {"technology": "roce", "n": 2}]
    csv = tmp_path / "x.csv"
    r = CliRunner().invoke(app, ["results", str(out), "--where", "gpus>=128", "--csv", str(csv)])
    assert r.exit_code == 0 and csv.read_text().count("\n") == 3  # header + 2 rows
    for bad in (["--where", "nosuch=1"], ["--sql", "SELEC 1"], ["--table", "fabrics"], ["--where", "gpus"]):
        r = CliRunner().invoke(app, ["results", str(out), *bad])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (bad, r.stderr)
    again = run_study(st, out, invoke=invoke, workers=2, progress=False)
    assert (again.skipped, again.ok) == (4, 0) and len(_raw_point_ids(out)) == 4
    other = _study(tmp_path, COLLECTIVE.replace("all-reduce", "all-gather"), "other.yaml")
    r = CliRunner().invoke(app, ["sweep", str(other), "--out", str(out), "--no-progress"])
    assert r.exit_code == 2 and "another study" in r.stderr


def _crashing_worker(task, invoke_fn):
    """A worker that dies (as an OOM kill would) the first time it sees the 128-GPU ib point, and
    every time it sees the 64-GPU roce point."""
    sc, marker = task["scenario"], Path(os.environ["SWEEP_TEST_MARKER"])
    if sc.get("gpus") == 128 and sc.get("technology") == "ib" and not marker.exists():
        marker.write_text("crashed")
        os._exit(9)
    if sc.get("gpus") == 64 and sc.get("technology") == "roce":
        os._exit(9)
    return execute(task, invoke_fn)


def test_dead_worker_is_retried_then_failed(tmp_path, monkeypatch):
    """A point whose worker process dies runs again on a new pool and lands once; one that kills
    every worker is stored as failed after 1 + retries attempts, and the study goes on."""
    monkeypatch.setenv("SWEEP_TEST_MARKER", str(tmp_path / "marker"))
    st = _load(_study(tmp_path, COLLECTIVE + "retries: 1\n"))
    out = tmp_path / "run"
    res = run_study(
        st, out, invoke=invoke, workers=1, progress=False, report=False, worker_fn=_crashing_worker
    )
    assert (tmp_path / "marker").exists() and (res.ok, res.failed) == (3, 1)
    pts = query(out)
    assert sorted(_raw_point_ids(out)) == sorted(pts["point_id"]) and len(pts) == 4
    pts = pts.set_index(["gpus", "technology"])
    assert pts.loc[(128, "ib"), "status"] == "ok" and pts.loc[(128, "ib"), "attempts"] == 2
    assert pts.loc[(64, "roce"), "status"] == "failed" and pts.loc[(64, "roce"), "attempts"] == 2
    assert "died 2 times" in pts.loc[(64, "roce"), "error"]
    assert (pts.loc[[(64, "ib"), (128, "roce")], "attempts"] == 1).all()


def test_resume_after_sigkill_runs_every_point_exactly_once(tmp_path):
    """`aifabric sweep` killed with SIGKILL mid-study (and its workers with it) leaves only whole
    points behind; started again it runs the rest, and every point is stored exactly once."""
    study = _study(
        tmp_path,
        "name: kill\ncommand: collective\nbase: {op: all-reduce, engine: flow, min_bytes: 1MiB, max_bytes: 64MiB}\n"
        "axes: {gpus: [64, 128, 256], technology: [ib, roce], algorithm: [ring, tree]}\n",
    )
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aifabric",
            "sweep",
            str(study),
            "--out",
            str(out),
            "--workers",
            "1",
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(_raw_point_ids(out) if (out / "results").exists() else []) < 3:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and the worker it spawned
        proc.wait()
    before = _raw_point_ids(out)
    assert 3 <= len(before) < 12, "the kill should land mid-study"
    st = _load(study)
    res = run_study(st, out, invoke=invoke, workers=2, progress=False, report=False)
    assert res.skipped == len(before) and res.ok == 12 - len(before)
    ids = _raw_point_ids(out)
    assert len(ids) == 12 and sorted(ids) == sorted(p.point_id for p in st.points)
    assert set(before) <= set(ids)
    # detail rows: exactly those of the stored attempts
    con = ResultStore(out).connect()
    n_sizes, n_attempts = con.execute("SELECT count(*), count(DISTINCT attempt) FROM sizes").fetchone()
    assert n_attempts == 12 and n_sizes == con.execute("SELECT count(*) FROM sizes_raw").fetchone()[0]


def test_compare_study_report_and_flips(tmp_path):
    """A compare study stores the recommendation each point's compare returns and one row per
    fabric (the 64-GPU point equals the pinned `compare --gpus 64 --json`); the report draws the
    Pareto charts and a heat map and lists where the recommendation flips along the GPU-count axis
    (one node needs no fabric)."""
    p = _study(
        tmp_path,
        "name: cmp\ncommand: compare\nbase: {advisor: {gpus: 64, gpu: h100}}\naxes: {advisor.gpus: [64, 8]}\n",
    )
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["sweep", str(p), "--out", str(out), "--no-progress", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["ok"] == 2
    pts = query(out)
    pinned = json.loads((Path(__file__).parent / "pins" / "compare-g64.json").read_text())
    assert pts.loc[0, "recommendation"] == pinned["recommendation"]["fabric"]
    fab = query(out, table="fabrics", where=["advisor.gpus=64"])
    assert fab["fabric"].tolist() == [f["fabric"] for f in pinned["fabrics"]]
    assert fab["capex_usd"].tolist() == [f["capex_usd"] for f in pinned["fabrics"]]
    assert fab["iteration_time_s"].tolist() == pytest.approx(
        [f["iteration_time_s"] for f in pinned["fabrics"]]
    )
    html = (out / "report.html").read_text()
    for cid in ("chart-pareto-step", "chart-pareto-token", "heat-map"):
        assert f"id='{cid}'" in html
    from aifabric.sweep.report import flips

    recs = pts["recommendation"].tolist()
    assert recs[1] == "none" and recs[0] != recs[1], "8 GPUs (one node) need no fabric"
    assert flips(pts, ["advisor_gpus"]) == [
        {
            "axis": "advisor_gpus",
            "from": 64,
            "to": 8,
            "recommendation": f"{recs[0]} → {recs[1]}",
            "with": "—",
        }
    ]
    assert "Where the recommendation flips" in html and f"{recs[0]} → {recs[1]}" in html


def test_results_on_a_folder_that_is_no_study(tmp_path):
    """`aifabric results` on a folder without a study: one line, exit 2."""
    r = CliRunner().invoke(app, ["results", str(tmp_path), "--json"])
    assert r.exit_code == 2 and "not a study folder" in r.stderr and r.stdout == ""


def test_seed_confidence_interval_and_pareto_front():
    """Over a seed axis each cell gets the mean and the Student-t 95 % half-width; the Pareto front
    keeps exactly the designs no other beats on both cost and time."""
    import pandas as pd

    from aifabric.sweep.report import ci_table, pareto_front

    pts = pd.DataFrame(
        {
            "gpus": [64, 64, 64, 128, 128, 128],
            "seed": [1, 2, 3, 1, 2, 3],
            "status": ["ok"] * 5 + ["failed"],
            "t": [1.0, 2.0, 3.0, 5.0, 7.0, None],
        }
    )
    ci = ci_table(pts, ["gpus", "seed"], ["t"]).set_index("gpus")
    assert ci.loc[64, "seeds"] == 3 and ci.loc[64, "t"] == pytest.approx(2.0)
    assert ci.loc[64, "t ±95%"] == pytest.approx(4.303 * 1.0 / 3**0.5, rel=1e-4)
    assert ci.loc[128, "seeds"] == 2 and ci.loc[128, "t ±95%"] == pytest.approx(12.706 * 2**0.5 / 2**0.5)
    assert pareto_front([1, 2, 3, 4, 2.5], [9, 5, 6, 1, 4]) == [0, 1, 4, 3]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--out", "{file}"], "--out: not a folder"),
        (["--out", "{tmp}/o", "--workers", "0"], "--workers: must be ≥ 1"),
        (["--out", "{tmp}/o", "--address", "127.0.0.1:1"], "--address: cannot reach a Ray cluster"),
    ],
)
def test_bad_sweep_flags_are_one_line(tmp_path, args, says):
    """--out on a file, no workers, or a Ray address nothing listens on: one line, exit 2, at once,
    and no study folder left behind."""
    study = _study(tmp_path, COLLECTIVE)
    (tmp_path / "f").write_text("")
    argv = [a.format(file=tmp_path / "f", tmp=tmp_path) for a in args]
    r = CliRunner().invoke(app, ["sweep", str(study), *argv, "--no-progress"])
    assert r.exit_code == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o" / "study.json").exists()


def test_ray_address_from_the_environment(tmp_path, monkeypatch):
    """Without --address, RAY_ADDRESS selects Ray (here one nothing listens on: one line, exit 2)."""
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    r = CliRunner().invoke(app, ["sweep", str(_study(tmp_path, COLLECTIVE)), "--out", str(tmp_path / "o")])
    assert (
        r.exit_code == 2 and "--address: cannot reach a Ray cluster" in r.stderr and "127.0.0.1:1" in r.stderr
    )


SIMULATE = """
name: sim-seeds
command: simulate
base:
  topology: {kind: fat-tree, k: 4, link_rate: 100Gbps}
  workload: {kind: permutation, flow_size: 200KB}
  sim: {until: 5ms}
axes: {seed: [1, 2, 3]}
"""


def test_simulate_study_with_a_seed_axis(tmp_path):
    """simulate points store what `aifabric simulate --json` prints for that scenario; a seed axis
    gives each metric a mean and a 95 % interval (`results --ci`, and the report)."""
    import yaml

    st = _load(_study(tmp_path, SIMULATE))
    out = tmp_path / "run"
    res = run_study(st, out, invoke=invoke, workers=2, progress=False)
    assert (res.ok, res.failed) == (3, 0)
    pts = query(out)
    sc = tmp_path / "seed2.yaml"
    sc.write_text(yaml.safe_dump(st.points[1].scenario))
    code, text, _ = invoke(["simulate", str(sc), "--json", "--no-progress"])
    direct = json.loads(text)["summary"]
    assert code == 0 and pts.loc[1, "seed"] == 2
    for k in ("fct_p99_us", "goodput_gbps", "drops", "pause_frames", "completed_flows"):
        assert pts.loc[1, k] == pytest.approx(direct[k]), k
    r = CliRunner().invoke(app, ["results", str(out), "--json", "--ci", "fct_p99_us"])
    (row,) = json.loads(r.stdout)["rows"]
    assert row["seeds"] == 3 and row["fct_p99_us"] == pytest.approx(pts["fct_p99_us"].mean())
    assert row["fct_p99_us ±95%"] == pytest.approx(4.303 * pts["fct_p99_us"].std(ddof=1) / 3**0.5)
    assert "Seeds: mean and 95 % confidence interval" in (out / "report.html").read_text()
