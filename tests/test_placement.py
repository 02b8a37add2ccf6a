"""Placement (issue 12, part 2): the workload's traffic carries its endpoints (rank → node → rail in
Megatron's tp-cp-ep-dp-pp order) on an ideal, fragmented or shared placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from aifabric.cli import app
from aifabric.errors import InputError
from aifabric.stages.measure.network import measure_pattern
from aifabric.stages.workload import STEP_BYTES, TrafficPattern
from aifabric.workload.placement import PLACEMENTS, dp_ring_hops, place, rank_hosts

# hand-sized: 128 GPUs = 16 nodes of 8 on a radix-16 rail-optimised fabric: 2 scalable units of 8
# nodes, 16 rail leaves with 8 uplinks each to 8 spines (2 tiers)
SMALL_KEY = (128, 400_000_000_000, 8, 16, (5.0, 40.0, 300.0))
HOP_PS = 600_000.0


def _old_ring(gpus: int, gpn: int, group_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The DP ring step as compare built it before placement (node i → i+1 in groups of
    ``group_nodes`` consecutive nodes, every rail; host = node · g + rail)."""
    nodes = gpus // gpn
    node = np.arange(nodes)
    start = (node // group_nodes) * group_nodes
    nxt = start + (node - start + 1) % group_nodes
    src = (node[:, None] * gpn + np.arange(gpn)[None, :]).ravel()
    dst = (nxt[:, None] * gpn + np.arange(gpn)[None, :]).ravel()
    keep = src != dst
    return src[keep], dst[keep]


def _ring(kind: str, seed: int, occupancy: float = 0.5, jobs: int = 2, **kw) -> TrafficPattern:
    return TrafficPattern(
        "dp-ring-step",
        128,
        8,
        STEP_BYTES,
        group_nodes=16,
        placement=place(kind, 16, occupancy, jobs, seed),
        **kw,
    )


def test_placement_is_a_function_of_the_seed():
    for kind in PLACEMENTS:
        assert place(kind, 64, 0.5, 3, seed=7) == place(kind, 64, 0.5, 3, seed=7)
    assert place("fragmented", 64, 0.5, 3, seed=7).nodes != place("fragmented", 64, 0.5, 3, seed=8).nodes
    a, b = _ring("shared", 3).flows(), _ring("shared", 3).flows()
    for col in ("src", "dst", "size_bytes", "job"):
        assert np.array_equal(a[col], b[col])


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.integers(2, 300),
    occupancy=st.floats(0, 0.95),
    jobs=st.integers(1, 9),
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(PLACEMENTS),
)
def test_no_two_ranks_on_one_gpu(nodes, occupancy, jobs, seed, kind):
    try:
        pl = place(kind, nodes, occupancy, jobs, seed)
    except InputError:
        assert kind != "ideal" and nodes - round(occupancy * nodes) < 2  # too few free nodes, said so
        return
    hosts = rank_hosts(pl, 8)
    assert len(np.unique(hosts)) == len(hosts) == pl.job_nodes * 8
    used = list(pl.nodes) + [n for b in pl.background for n in b]
    assert len(set(used)) == len(used)  # no node shared by two jobs
    assert all(0 <= n < nodes for n in used)
    if kind != "ideal":
        assert pl.job_nodes == nodes - round(occupancy * nodes)


@settings(max_examples=30, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4, 8]),
    cp=st.sampled_from([1, 2, 4]),
    dp=st.integers(1, 8),
    pp=st.integers(1, 4),
)
def test_ring_hops_follow_the_rank_order(tp, cp, dp, pp):
    """Each GPU sends at most one ring flow; a hop goes to the next node of its DP × CP group in rank
    order (Megatron's tp-cp-ep-dp-pp: the group of a TP index and a stage has stride tp)."""
    g = 8
    if (tp * cp * dp * pp) % g:
        return
    src, dst, rail = dp_ring_hops(tp, cp, dp, pp, g)
    host = src * g + rail
    assert len(np.unique(host)) == len(host)
    for s, d, r in zip(src.tolist(), dst.tolist(), rail.tolist(), strict=True):
        rank = s * g + r
        t, stage = rank % tp, rank // (tp * cp * dp)
        group = stage * tp * cp * dp + t + tp * np.arange(cp * dp)
        order = list(dict.fromkeys((group // g).tolist()))
        assert d == order[(order.index(s) + 1) % len(order)]


@pytest.mark.parametrize(
    "gpus, layout, group",
    [
        (1024, (2, 4, 32, 4), 32),  # compare's default (Llama-3 70B on 1,024 H100)
        (2048, (1, 8, 64, 4), 64),  # b200_2048 pin
        (64, (2, 4, 1, 8), 2),  # the DP × CP group fits one node: a 2-node ring
        (1024, (2, 4, 4, 32), 4),  # moe1024low pin
        (128, None, 16),  # no layout (storage): one ring over every node
    ],
)
def test_ideal_placement_reproduces_the_old_ring(gpus, layout, group):
    p = TrafficPattern(
        "dp-ring-step",
        gpus,
        8,
        STEP_BYTES,
        group_nodes=group,
        layout=layout,
        placement=place("ideal", gpus // 8),
    )
    f = p.flows()
    src, dst = _old_ring(gpus, 8, group)
    assert "job" not in f
    assert np.array_equal(f["src"], src) and np.array_equal(f["dst"], dst)
    assert f["src"].dtype == src.dtype and f["size_bytes"].dtype == np.int64


def test_ideal_placement_measures_bit_identically():
    for route in ("ecmp", "adaptive"):
        e0, f0 = measure_pattern(SMALL_KEY, "roce", _ring("ideal", 1), 1, HOP_PS, route)
        e1, f1 = measure_pattern(
            SMALL_KEY,
            "roce",
            TrafficPattern("dp-ring-step", 128, 8, STEP_BYTES, group_nodes=16),
            1,
            HOP_PS,
            route,
        )
        assert e0 == e1 and np.array_equal(f0, f1)


def test_fragmented_costs_ecmp_and_adaptive_routing_recovers_it():
    """16 nodes in 2 scalable units: the ideal ring crosses between units on one hop per rail, so
    ECMP costs nothing; half the nodes at random, in random order, send most hops through spines
    where hashed flows collide."""
    seeds = (1, 2, 3)

    def mean(kind, route):
        return float(
            np.mean([measure_pattern(SMALL_KEY, "roce", _ring(kind, s), s, HOP_PS, route)[0] for s in seeds])
        )

    ideal_ecmp = mean("ideal", "ecmp")
    frag_ecmp = mean("fragmented", "ecmp")
    frag_ar = mean("fragmented", "adaptive")
    shared_ecmp = mean("shared", "ecmp")
    assert ideal_ecmp == pytest.approx(1.0, abs=1e-3)
    assert frag_ecmp < 0.8 * ideal_ecmp
    assert frag_ar > 0.95
    assert shared_ecmp <= frag_ecmp  # other jobs' rings only add load


def test_shared_measures_the_job_only():
    p = _ring("shared", 1)
    f = p.flows()
    job = f["job"]
    assert job[: job.sum()].all() and not job[job.sum() :].any()  # the job's flows first
    assert job.sum() == 8 * 8  # 8 job nodes, every rail
    eff, fct = measure_pattern(SMALL_KEY, "roce", p, 1, HOP_PS, "ecmp")
    assert len(fct) == job.sum() and 0 < eff <= 1


def test_layout_smaller_than_the_job_falls_back_to_a_ring_over_its_nodes():
    # fragmented: 8 free nodes of 16, a layout whose DP groups span 16 nodes -> one ring over the 8
    pl = place("fragmented", 16, 0.5, 1, 4)
    p = TrafficPattern("dp-ring-step", 128, 8, STEP_BYTES, group_nodes=16, layout=(8, 1, 16, 1), placement=pl)
    f = p.flows()
    nodes = set((f["src"] // 8).tolist())
    assert nodes == set(pl.nodes) and len(f["src"]) == 64


def _run(*args):
    return CliRunner().invoke(app, ["compare", *args, "--json"])


@pytest.mark.parametrize(
    "args, field",
    [
        (["--placement", "nowhere"], "--placement"),
        (["--placement", "fragmented", "--occupancy", "1.5"], "--occupancy"),
        (["--placement", "shared", "--background-jobs", "0"], "--background-jobs"),
        (
            ["--gpus", "16", "--workload", "storage", "--placement", "fragmented", "--occupancy", "0.9"],
            "occupancy",
        ),
    ],
)
def test_bad_placement_flags_exit_2(args, field):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and field in lines[0] and "Traceback" not in res.output


@pytest.mark.parametrize(
    "body, field",
    [
        ("advisor:\n  placement: scattered\n", "advisor.placement"),
        ("advisor:\n  placement: fragmented\n  occupancy: -0.1\n", "advisor.occupancy"),
        ("advisor:\n  placement: shared\n  background_jobs: 0\n", "advisor.background_jobs"),
    ],
)
def test_bad_placement_in_a_scenario_exits_2(tmp_path, body, field):
    f = tmp_path / "s.yaml"
    f.write_text(body)
    res = _run(str(f))
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and field in lines[0]


def test_ideal_placement_reproduces_the_old_permutation():
    """The same-rail permutation as compare built it before placement, flow for flow (ECMP hashes
    a flow's id, so the order counts too)."""
    from aifabric.flow.draws import derangement

    nodes, g, seed = 16, 8, 5
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for rail in range(g):
        perm = derangement(nodes, rng)
        src.append(np.arange(nodes) * g + rail)
        dst.append(perm * g + rail)
    p = TrafficPattern("rail-permutation", 128, g, STEP_BYTES, seed=seed, placement=place("ideal", nodes))
    f = p.flows()
    assert np.array_equal(f["src"], np.concatenate(src)) and np.array_equal(f["dst"], np.concatenate(dst))


def test_qps_split_each_connection_and_keep_its_bytes():
    one, four = _ring("fragmented", 2).flows(), _ring("fragmented", 2, qps=4).flows()
    assert len(four["src"]) == 4 * len(one["src"])
    assert np.array_equal(four["src"][::4], one["src"]) and np.array_equal(four["dst"][::4], one["dst"])
    assert np.array_equal(four["size_bytes"].reshape(-1, 4).sum(axis=1), one["size_bytes"])
    shared = _ring("shared", 2, qps=3).flows()
    assert shared["job"].sum() == 3 * _ring("shared", 2).flows()["job"].sum()


def test_more_qps_per_connection_recover_ecmp_on_a_fragmented_placement():
    """More flows per connection, each hashed on its own: the slowest link carries a smaller share
    (Meta's QP scaling); the step's ideal stays the whole connection's."""
    seeds = (1, 2, 3)

    def mean(qps):
        return float(
            np.mean(
                [
                    measure_pattern(SMALL_KEY, "roce", _ring("fragmented", s, qps=qps), s, HOP_PS, "ecmp")[0]
                    for s in seeds
                ]
            )
        )

    e1, e4 = mean(1), mean(4)
    assert e4 > e1 + 0.1
    ideal4 = measure_pattern(SMALL_KEY, "roce", _ring("ideal", 1, qps=4), 1, HOP_PS, "adaptive")[0]
    assert ideal4 == pytest.approx(1.0, abs=0.02)  # not 4× the ideal: the ideal is the connection's


def test_testbed_ring_follows_the_placement():
    from aifabric.stages.risk.testbed import _flows, placed_testbed, testbed_for

    ideal = testbed_for(400, None, 600, 40, "ecmp")
    assert placed_testbed(ideal, place("ideal", 4)) is ideal
    frag = placed_testbed(ideal, place("fragmented", 31, seed=3))
    shared = placed_testbed(ideal, place("shared", 31, background_jobs=2, seed=3))
    assert (shared.placement, shared.background_jobs, shared.placement_seed) == ("shared", 2, 3)
    target = ideal.hosts_per_leaf - 1
    f0, n0 = _flows(ideal, "congested")
    assert n0 == 30 and f0.attrs["incast_end"] == len(f0)  # the ideal ring and incast as before
    f1, n1 = _flows(frag, "congested")
    ring = f1["src"].to_numpy()[:n1]
    assert n1 == 31 - round(0.5 * 31) and len(set(ring)) == n1 and target not in ring
    senders = f1["src"].to_numpy()[n1 : f1.attrs["incast_end"]]
    assert set(senders) <= set(ring) and len(senders) == frag.incast_senders
    f2, n2 = _flows(shared, "quiet")
    assert np.array_equal(f2["src"].to_numpy()[:n2], ring)  # the same job, other jobs' rings after it
    assert len(f2) > n2 and not set(f2["src"].to_numpy()[n2:]) & set(ring)
    assert _flows(frag, "quiet")[0].equals(_flows(frag, "quiet")[0])  # seeded


def test_risk_testbed_takes_the_jobs_placement():
    from types import SimpleNamespace

    from aifabric.stages.risk.assess import testbed_of

    plan = SimpleNamespace(to_dict=lambda: {"radix": 64, "oversubscription": 1.0, "tiers": 2})
    fd = SimpleNamespace(
        plan=plan,
        technology="roce",
        nic_rate_gbps=400,
        switch_buffer_bytes=None,
        switch_hop_ns=600,
        lengths_m={"leaf-spine": 40},
        routing="ecmp",
    )
    assert testbed_of(fd).placement == "ideal"
    assert testbed_of(fd, None, place("ideal", 128)).placement == "ideal"
    tb = testbed_of(fd, None, place("shared", 128, 0.25, 3, seed=9))
    assert (tb.placement, tb.occupancy, tb.background_jobs, tb.placement_seed) == ("shared", 0.25, 3, 9)


@pytest.mark.slow
def test_other_jobs_slow_the_testbed_ring():
    """Packet level, RoCE with ECMP: the same job's ring step with other jobs' rings next to it is
    no faster than alone."""
    from aifabric.stages.risk.testbed import placed_testbed, run_testbed, testbed_for

    tb = testbed_for(400, None, 600, 40, "ecmp")
    frag = placed_testbed(tb, place("fragmented", 31, seed=1))
    shared = placed_testbed(tb, place("shared", 31, seed=1))
    a, b = run_testbed(frag, None, "quiet", 1), run_testbed(shared, None, "quiet", 1)
    assert b.step_us >= a.step_us
    assert run_testbed(frag, None, "quiet", 1).step_us == a.step_us  # same seed, same result


def test_expert_all_to_all_runs_on_the_jobs_placement():
    """measure's MoE dispatch (DeepEP-style, EP 32 = 4 servers per group) runs on the job's placement:
    on a fragmented cluster the EP groups' servers are the job's random free nodes, so RoCE's ECMP
    figure moves; InfiniBand's adaptive routing stays above 80 % of the NIC either way."""
    from aifabric.hardware.catalog import load_catalog
    from aifabric.scenario import AdvisorSpec
    from aifabric.stages.pipeline import CompareInputs, run_performance

    training = {
        "model": "deepseek-v3",
        "precision": "fp8",
        "seq_len": 4096,
        "global_batch": 1024,
        "parallelism": {"tp": 1, "pp": 16, "cp": 1, "vp": 1, "ep": 32},
        "framework": {"recompute": "full"},
    }
    effs = {}
    for kind in ("ideal", "fragmented"):
        adv = AdvisorSpec(gpus=1024, placement=kind, occupancy=0.5)
        net = run_performance(CompareInputs(adv, load_catalog(), training=training), sweep=False).network
        effs[kind] = {f.technology: f.ep_a2a_efficiency for f in net.fabrics}
    assert all(v is not None for e in effs.values() for v in e.values())
    assert effs["fragmented"]["roce"] != effs["ideal"]["roce"]
    assert min(effs["ideal"]["infiniband"], effs["fragmented"]["infiniband"]) >= 0.8
