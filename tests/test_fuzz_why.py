"""Issue 16's *Why* examples (those of simulate / validate / collective / risk), one test each:
the permutation generator, the two-host permutation, validate vs simulate on flow files,
duplicate keys, MTU 0, Infinity, the memory guard, output safety, flow-mode outputs, the event
budget, deadlock detection that terminates, the first-run notice and the top-level handler.
(Corpus cases for the same inputs: ``tests/corpus``.)"""

from __future__ import annotations

import importlib
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from aifabric.flow.draws import derangement
from aifabric.workload import traffic
from test_fuzz_support import assert_clean, cli

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
SMALL = "name: s\ntopology: {kind: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n" + (
    "workload: {kind: incast, senders: 2, receiver: 0, flow_size: 8KB}\nsim: {until: 1ms}\n"
)


def test_permutation_is_a_derangement_for_every_seed():
    """For 2–19 hosts and 300 seeds each, the permutation workload is a permutation with no fixed
    point (the old generator was not a permutation for 2–19 % of seeds, and looped for some)."""
    for n in range(2, 20):
        hosts = np.arange(100, 100 + n)
        for seed in range(300):
            t = traffic.permutation(hosts, 1000, seed=seed)
            dst = t["dst"].to_numpy()
            assert sorted(dst.tolist()) == hosts.tolist(), (n, seed)
            assert not (dst == t["src"].to_numpy()).any(), (n, seed)


def test_two_host_permutation_swaps():
    """Two hosts always swap — seeds 0, 1, 7 and 9 looped forever before."""
    for seed in (0, 1, 7, 9):
        t = traffic.permutation(np.array([5, 9]), 1000, seed=seed)
        assert t["dst"].tolist() == [9, 5]


def test_derangement_is_uniform():
    """4 items have 9 derangements; 9,000 seeded draws hit each 1,000 ± 15 % times (rejection
    sampling keeps every derangement equally likely; the old fix-up did not)."""
    rng = np.random.default_rng(123)
    counts = Counter(tuple(derangement(4, rng).tolist()) for _ in range(9000))
    assert len(counts) == 9
    assert all(850 <= c <= 1150 for c in counts.values()), counts


def test_both_engines_draw_the_same_permutation():
    """The flow model's own generator and the packet engine's draw the same derangement."""
    from aifabric.flow.scenario import _basic_flows
    from aifabric.scenario import scenario_from_dict
    from aifabric.topology import from_spec

    sc = scenario_from_dict(
        {"seed": 7, "topology": {"kind": "star", "hosts": 9}, "workload": {"kind": "permutation"}}
    )
    topo = from_spec(sc.topology)
    a = _basic_flows(sc, topo)
    b = traffic.flows_for(sc, topo)
    assert a["dst"].tolist() == b["dst"].tolist()


@pytest.mark.parametrize(
    "name,text",
    [
        ("f.txt", "2\n0 1 3 100 1000 2.0\n1 2 3 100 1000 nan\n"),
        ("f.txt", "1\n0 1 3 100 1000 2.0 extra\n"),
        ("f.txt", "1 1\n0 1 3 100 1000 2.0\n"),
        ("f.cm", "Connections 1\n0->1 id 1 size\n"),
        ("f.cm", "Connections 1\n0->1 id 1 start inf size 10\n"),
    ],
)
def test_validate_rejects_flow_files_simulate_rejects(tmp_path, name, text):
    """validate said ok for malformed flow files that simulate then rejected or mis-read: now both
    print the same one line naming the scenario, the flow file and the line."""
    (tmp_path / name).write_text(text)
    p = tmp_path / "s.yaml"
    p.write_text(
        f"name: s\ntopology: {{kind: star, hosts: 4}}\nworkload: {{kind: flows-file, path: {name}}}\n"
    )
    v, s = cli(["validate", str(p)]), cli(["simulate", str(p)])
    assert v.code == s.code == 2
    assert v.stderr == s.stderr and name in s.stderr and "line " in s.stderr


def test_duplicate_keys_anywhere(tmp_path):
    """A key given twice in any mapping is an error naming its line; merge keys (<<) are fine."""
    from aifabric.errors import InputErrors
    from aifabric.scenario import load_scenario

    p = tmp_path / "s.yaml"
    p.write_text("name: a\nfabric:\n  pfc:\n    enabled: true\n    enabled: false\n")
    with pytest.raises(InputErrors) as ei:
        load_scenario(p)
    assert "line 5: duplicate key 'enabled' (first at line 4)" in str(ei.value)
    p.write_text("base: &b {kind: star, hosts: 4}\n")
    q = tmp_path / "m.yaml"
    q.write_text("name: a\ntopology:\n  <<: {kind: star, hosts: 4}\n  link_rate: 100Gbps\n")
    assert load_scenario(q).topology.hosts == 4


@pytest.mark.parametrize(
    "fabric,field",
    [("{mtu: 0}", "fabric.mtu"), ("{mtu: .inf}", "fabric.mtu"), ("{hpcc: {eta: .nan}}", "fabric.hpcc.eta")],
)
def test_mtu_zero_and_non_finite_numbers_rejected(tmp_path, fabric, field):
    """MTU 0 and Infinity / NaN numbers were accepted: now one line naming the field, exit 2."""
    p = tmp_path / "s.yaml"
    p.write_text(
        f"name: s\ntopology: {{kind: star, hosts: 4}}\nfabric: {fabric}\nworkload: {{kind: permutation}}\n"
    )
    o = cli(["simulate", str(p)])
    assert o.code == 2 and f"{field}:" in o.stderr and len(o.err_lines) == 1, o.stderr


def test_memory_guard_refuses_ten_million_flows(tmp_path, monkeypatch):
    """10^7 flows crashed the process: refused before any flow is built, with the estimate and the
    available memory in one line (exit 2), for packet and flow mode."""
    import aifabric.workload.traffic as T

    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", "8GiB")
    monkeypatch.setattr(T, "flow_columns", lambda *a: pytest.fail("flows were built"))
    p = tmp_path / "s.yaml"
    p.write_text(
        "name: s\ntopology: {kind: star, hosts: 3163}\nworkload: {kind: all-to-all, flow_size: 1KB}\n"
    )
    for mode in ("packet", "flow"):
        o = cli(["simulate", str(p), "--mode", mode, "--json"])
        assert o.code == 2 and len(o.err_lines) == 1, o.stderr
        assert (
            "10,001,406 flows" in o.stderr and "8.6 GB is available" in o.stderr and "needs about" in o.stderr
        )


def test_memory_guard_during_the_run(monkeypatch):
    """A packet table that would outgrow the available memory mid-run is one InputError too."""
    from aifabric import memory
    from aifabric.sim import engine

    st = type("S", (), {})()
    st.pk = np.zeros((1 << 20, 12), np.int64)
    monkeypatch.setenv("AIFABRIC_MEMORY_LIMIT", "100MB")
    with pytest.raises(memory.MemoryLimitError) as ei:
        engine.grow_packets(st)
    assert "growing the packet table to 2,097,152 rows" in str(ei.value)


def test_path_model_bfs_in_blocks_is_exact(monkeypatch):
    """The switch-to-leaf BFS runs in blocks of leaf columns (a k=64 flow-mode run took over 6 GB
    in one block; 0.5 GB now): any block size gives the same distances."""
    from aifabric.flow import paths
    from aifabric.topology import fat_tree, rail_optimized

    for topo in (fat_tree(8, 10**11, 10**6), rail_optimized(256, 4 * 10**11, radix=16)):
        whole = paths.PathModel(topo).dist
        monkeypatch.setattr(paths, "_BFS_CELLS", 7)
        assert np.array_equal(paths.PathModel(topo).dist, whole)
        monkeypatch.undo()


def test_out_refuses_to_mix_runs(tmp_path):
    """--out refused nothing and mixed two runs in one folder: a non-empty folder needs --force,
    which removes the earlier run's files (a packet run's ports/fct/pfc after a flow run)."""
    sc = tmp_path / "s.yaml"
    sc.write_text(SMALL)
    out = tmp_path / "res"
    assert cli(["simulate", str(sc), "--out", str(out)]).code == 0
    assert {p.name for p in out.iterdir()} == {
        "flows.parquet",
        "ports.parquet",
        "summary.json",
        "fct.txt",
        "pfc.txt",
    }
    again = cli(["simulate", str(sc), "--out", str(out), "--mode", "flow"])
    assert again.code == 2 and "--out: folder is not empty" in again.stderr and "--force" in again.stderr
    assert cli(["simulate", str(sc), "--out", str(out), "--mode", "flow", "--force"]).code == 0
    assert {p.name for p in out.iterdir()} == {"flows.parquet", "links.parquet", "summary.json", "flows.json"}


def test_bad_output_path_fails_before_the_run(tmp_path, monkeypatch):
    """A bad --out gave a traceback after the whole run: now one line before anything runs."""
    import aifabric.sim as S

    monkeypatch.setattr(S, "simulate", lambda *a, **k: pytest.fail("the simulation ran"))
    sc = tmp_path / "s.yaml"
    sc.write_text(SMALL)
    (tmp_path / "file").write_text("x")
    o = cli(["simulate", str(sc), "--out", str(tmp_path / "file" / "sub")])
    assert o.code == 2 and "--out: cannot write results there" in o.stderr and o.stdout == ""


def test_flow_mode_out_writes_full_results(tmp_path):
    """Flow-mode --out wrote only the summary: now flows and links as Parquet, summary and flows
    as JSON; the links' bytes add up to every flow's bytes times its hops."""
    import pandas as pd

    sc = tmp_path / "s.yaml"
    sc.write_text(
        "name: f\ntopology: {kind: fat-tree, k: 4, link_rate: 100Gbps, link_delay: 1us}\n"
        "workload: {kind: permutation, flow_size: 100KB}\nsim: {mode: flow}\n"
    )
    o = cli(["simulate", str(sc), "--out", str(tmp_path / "o"), "--json"])
    assert o.code == 0, o.stderr
    flows = pd.read_parquet(tmp_path / "o" / "flows.parquet")
    links = pd.read_parquet(tmp_path / "o" / "links.parquet")
    meta = json.loads((tmp_path / "o" / "summary.json").read_text())
    records = json.loads((tmp_path / "o" / "flows.json").read_text())
    assert len(flows) == len(records) == 16 and meta["summary"]["complete"] is True
    assert len(links) == 2 * 48  # k=4 fat-tree: 48 links, one row per direction
    # every flow's 100 KB on each of its 2, 4 or 6 links: 16 flows × 2..6 hops
    assert 16 * 2 <= links["flows"].sum() <= 16 * 6
    assert links["tx_bytes"].sum() == links["flows"].sum() * 100_000


def test_event_budget_marks_run_incomplete():
    """A run stopped by sim.max_events ends (exit 1), is marked complete: false with status
    'event budget', and stops at exactly the budget, the same on every run."""
    from aifabric.scenario import load_scenario
    from aifabric.sim import simulate

    sc = load_scenario(CORPUS / "event-budget.yaml")
    a, b = simulate(sc), simulate(sc)
    assert a.engine["status"] == "event budget" and a.engine["events"] == 1000
    assert a.summary["complete"] is False and a.summary == b.summary
    o = cli(["simulate", str(CORPUS / "event-budget.yaml"), "--json"])
    assert o.code == 1 and json.loads(o.stdout)["summary"]["complete"] is False


def test_deadlock_is_a_finding_not_a_hang():
    """The ring deadlock ends with exit 1 and deadlock: true, and the cycle search is iterative:
    a 5,000-port wait-for cycle (recursion depth 5,000 before) is found."""
    from aifabric.sim import deadlock_cycle
    from aifabric.sim import kernel as K

    o = cli(["simulate", str(ROOT / "scenarios" / "ring5-deadlock.yaml"), "--json"])
    d = json.loads(o.stdout)
    assert o.code == 1 and d["summary"]["deadlock"] is True and d["summary"]["complete"] is False
    n = 5000
    pt = np.full((n, K.PT_NUM), -1, np.int64)
    pt[:, K.PT_NODE] = np.arange(n)
    pt[:, K.PT_PEER] = (np.arange(n) + 1) % n
    pt[:, K.PT_DH] = 0
    pt[:, K.PT_NODE_IS_HOST] = 0
    pt[:, K.PT_PAUSED] = 1
    topo = type("T", (), {"node_names": [f"s{i}" for i in range(n)]})()
    cyc = deadlock_cycle(topo, pt)
    assert len(cyc) == n and cyc[0] == "s0->s1"


def test_first_run_notice(tmp_path, monkeypatch):
    """A cold numba cache is detected from its index (a fresh @njit(cache=True) function: cold;
    compiled and cached: warm), and simulate prints the notice on stderr only when cold."""
    from aifabric.cli import simulate as sim_cli

    (tmp_path / "fz_jitmod.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("fz_jitmod")
    assert sim_cli.cache_is_cold(mod.f)
    assert mod.f(1) == 2  # compiles and writes the cache
    del sys.modules["fz_jitmod"]
    fresh = importlib.import_module("fz_jitmod")
    assert not sim_cli.cache_is_cold(fresh.f)
    sc = tmp_path / "s.yaml"
    sc.write_text(SMALL)
    import aifabric.sim.aot as aot

    monkeypatch.setattr(aot, "uses_aot", lambda: False)  # the JIT kernel (an AOT build compiles nothing)
    monkeypatch.setattr(sim_cli, "cache_is_cold", lambda fn: True)
    assert sim_cli.COMPILE_NOTICE in cli(["simulate", str(sc)]).stderr
    monkeypatch.setattr(aot, "uses_aot", lambda: True)
    assert sim_cli.COMPILE_NOTICE not in cli(["simulate", str(sc)]).stderr
    monkeypatch.setattr(aot, "uses_aot", lambda: False)
    monkeypatch.setattr(sim_cli, "cache_is_cold", lambda fn: False)
    assert sim_cli.COMPILE_NOTICE not in cli(["simulate", str(sc)]).stderr


def test_unexpected_exception_is_one_line(tmp_path, monkeypatch):
    """A bug becomes one line with a hint to report it, exit 1; --debug prints the traceback."""
    import aifabric.scenario as S

    def boom(*a, **k):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(S, "load_scenario", boom)
    o = cli(["validate", "x.yaml"])
    assert o.code == 1 and len(o.err_lines) == 1
    assert "internal error: RuntimeError: boom second line" in o.stderr and "--debug" in o.stderr
    d = cli(["--debug", "validate", "x.yaml"])
    assert d.code == 1 and "Traceback" in d.stderr and "RuntimeError: boom" in d.stderr


def test_usage_errors_are_one_line():
    """Unknown options and values of the wrong type are one 'error:' line, not a usage box."""
    for argv in (["collective", "all-reduce", "--gpus", "abc"], ["simulate", "x.yaml", "--bogus"]):
        o = cli(argv)
        assert_clean(o, argv)
        assert o.code == 2 and "see 'aifabric" in o.stderr


@pytest.mark.slow
def test_k64_flow_mode_fits_in_memory(tmp_path):
    """A k=64 fat-tree (65,536 hosts) permutation in flow mode took over 6 GB and was killed; it
    now finishes with a peak under 1.5 GB (measured: 0.5 GB, 18 s on 2 cores)."""
    import subprocess

    sc = tmp_path / "k64.yaml"
    sc.write_text(
        "name: k64\ntopology: {kind: fat-tree, k: 64, link_rate: 100Gbps, link_delay: 1us}\n"
        "workload: {kind: permutation, flow_size: 1MB}\nsim: {mode: flow}\n"
    )
    probe = (
        "import resource, subprocess, sys\n"
        f"r = subprocess.run([sys.executable, '-m', 'aifabric', 'simulate', {str(sc)!r}, '--json'],"
        " capture_output=True, text=True)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=600)
    code, rss_kb = (int(x) for x in out.stdout.split())
    assert code == 0 and rss_kb < 1.5e6, (code, rss_kb, out.stderr)
