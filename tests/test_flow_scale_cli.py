"""``aifabric collective OP --mode flow --gpus N --planes P`` (issue 19, flow mode at internet
scale): the design's planes, the memory guard, one clear line and exit 2 on bad input, and the
default (no --planes) unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from aifabric.cli.collective import register
from aifabric.flow.paths import PathModel
from aifabric.flow.scale import collective_bytes, design_counts
from aifabric.memory import MemoryLimitError
from aifabric.topology import rail_optimized
from aifabric.topology.builders import rail_sizing
from aifabric.workload.collectives import host_nic_rate_bps, run_collective

app = typer.Typer()
register(app)


@app.callback()
def _group() -> None:  # keep "collective" a subcommand (one command alone becomes the root)
    pass


try:
    runner = CliRunner(mix_stderr=False)
except TypeError:  # click >= 8.2 keeps stderr apart already
    runner = CliRunner()

ONE = ["--min-bytes", "1GiB", "--max-bytes", "1GiB"]


def _error_line(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, res.stderr  # one line, no traceback
    return lines[0]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--gpus", "100000"], ["--gpus", "--planes 2"]),  # 100k needs two planes of qm9700
        (["--gpus", "100000", "--planes", "0"], ["--planes", "1..8"]),
        (["--gpus", "100000", "--planes", "9"], ["--planes", "1..8"]),
        (["--gpus", "0", "--planes", "2"], ["--gpus"]),
        (["--gpus", "1024", "--mode", "packet"], ["--engine/--mode", "flow, analytic"]),
    ],
)
def test_bad_sizes_are_one_line_exit_2(args, words):
    res = runner.invoke(app, ["collective", "all-to-all", "--mode", "flow", *args, *ONE])
    line = _error_line(res)
    for w in words:
        assert w in line, line


def test_memory_guard_refuses_before_building(monkeypatch):
    """100,000 GPUs in 300 MiB: refused by the estimate (no topology is built: the answer is
    immediate), naming --gpus and what would help."""
    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", "300MiB")
    res = runner.invoke(
        app, ["collective", "all-to-all", "--mode", "flow", "--gpus", "100000", "--planes", "2", *ONE]
    )
    line = _error_line(res)
    assert "--gpus" in line and "memory" in line and "--engine analytic" in line
    # the analytic engine needs no path model: not refused by the flow-mode estimate
    res = runner.invoke(
        app, ["collective", "all-to-all", "--engine", "analytic", "--gpus", "4096", "--planes", "2", *ONE]
    )
    assert res.exit_code == 0, res.output


def test_estimate_counts_the_built_topology_and_grows_with_it():
    for gpus, radix, planes in [(8192, 128, 2), (8192, 64, 2), (200, 16, 2), (1024, 32, 1)]:
        topo = rail_optimized(gpus, 400 * 10**9, radix=radix, planes=planes)
        nodes, links, switches, leaves = design_counts(topo.meta["design"])
        pm = PathModel(topo)
        assert (nodes, links, switches, leaves) == (
            topo.num_nodes,
            topo.num_links,
            len(pm.switches),
            len(pm.att_nodes),
        )
    small = collective_bytes("all-to-all", rail_sizing(8192, 8, 128, 1.0, 2))
    big = collective_bytes("all-to-all", rail_sizing(100000, 8, 128, 1.0, 2))
    assert 0 < small < big < 4 * 2**30  # the 100k all-to-all fits the 4 GiB


def test_planes_build_the_designs_fabric_and_mode_is_engine():
    """--planes 2 on 4,096 GPUs (2 M flows: symmetry-reduced): the qm9700 design at 200G per plane,
    two planes; the JSON says so,
    and the sweep equals run_collective on that fabric. --mode is --engine."""
    base = ["collective", "all-to-all", "--gpus", "4096", "--planes", "2", "--json", *ONE]
    res = runner.invoke(app, [*base, "--mode", "flow"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["planes"] == 2 and out["engine"] == "flow" and out["tiers"] >= 2
    res2 = runner.invoke(app, [*base, "--engine", "flow"])
    assert json.loads(res2.stdout)["rows"] == out["rows"]
    topo = rail_optimized(4096, 200 * 10**9, radix=128, planes=2)
    assert host_nic_rate_bps(topo, topo.hosts) == 400e9  # two 200G ports
    row = out["rows"][0]
    assert row["model"].startswith("link-load bound (even split)") or "max-min" in row["model"]
    direct = run_collective("all-to-all", 2**30, topo, routing="adaptive-packet", technology="infiniband")
    assert row["busbw_gbps"] == pytest.approx(direct.busbw_gbps, rel=0.05)


def test_default_is_one_plane_as_before():
    """Without --planes the fabric is what collective built before: one plane at the full NIC rate."""
    res = runner.invoke(app, ["collective", "all-reduce", "--gpus", "64", *ONE])
    assert res.exit_code == 0, res.output
    assert "planes" not in res.stdout.splitlines()[0]
    res = runner.invoke(app, ["collective", "all-reduce", "--gpus", "64", "--json", *ONE])
    assert json.loads(res.stdout)["planes"] == 1


def test_nic_rate_of_a_multi_plane_host_is_the_sum_of_its_ports():
    one = rail_optimized(64, 400 * 10**9, gpus_per_node=4, radix=8)
    two = rail_optimized(64, 200 * 10**9, gpus_per_node=4, radix=8, planes=2)
    assert host_nic_rate_bps(one, one.hosts) == host_nic_rate_bps(two, two.hosts) == 400e9


def test_split_memory_guard_refuses_a_split_that_will_not_fit(monkeypatch):
    """Per-packet splitting of a large step is checked as it is built: with almost no memory the
    first block's entries already extrapolate past it."""
    topo = rail_optimized(512, 400 * 10**9, gpus_per_node=8, radix=16, planes=2)
    pm = PathModel(topo)
    hosts = np.asarray(topo.hosts)
    src = np.repeat(hosts, 8)[:4096]
    dst = np.roll(np.repeat(hosts, 8), 257)[:4096]
    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", "64KiB")
    with pytest.raises(MemoryLimitError, match="fabric.routing|equal-cost"):
        pm.split(src, dst)
    monkeypatch.delenv("AIFABRIC_MEMORY_LIMIT")
    fptr, flink, fw = pm.split(src, dst)
    assert len(fptr) == 4097 and len(flink) > 4096


def test_estimate_bounds_the_measured_peak_rss():
    """The guard's estimate against a real run: 8,192 GPUs all-to-all (2 planes, symmetry-
    reduced) in a fresh process — at or above its peak RSS, and not wildly above (≤ 3×)."""
    from aifabric.design.plan import plan_fabric
    from aifabric.hardware.catalog import load_catalog

    root = Path(__file__).resolve().parents[1]
    args = ["collective", "all-to-all", "--mode", "flow", "--gpus", "8192", "--planes", "2", *ONE]
    # the child reports its own peak RSS: VmHWM of its address space (RUSAGE_CHILDREN is the largest
    # of every earlier child, and ru_maxrss survives exec, so a child of a big pytest process inherits
    # the parent's high-water mark)
    code = (
        "import re, sys\n"
        "from aifabric.cli import run\n"
        "try:\n"
        "    raise SystemExit(run(sys.argv[1:]))\n"
        "finally:\n"
        "    hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
        "    print('PEAK_KIB', hwm, file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = [x for x in out.stderr.splitlines() if x.startswith("PEAK_KIB ")]
    assert line, out.stderr[-2000:]
    peak = int(line[-1].split()[1]) * 1024
    p = plan_fabric(8192, "infiniband", load_catalog(), gpu="h100", nic_rate_gbps=400, planes=2)
    est = collective_bytes("all-to-all", p.design)
    assert peak <= est <= 3 * peak, (peak, est)
