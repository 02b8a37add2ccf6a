"""Traffic placed by the layout (issue 25, item 5): pipeline send/recv and the wide-EP all-to-all are
measured as patterns derived from the job's rank placement, on both fabrics, in the flow model; and
"adaptive routing off" is measured the same way on InfiniBand as on RoCE. End-to-end runs use the
on-disk measurement cache (a first run simulates)."""

import numpy as np
import pytest

from aifabric.api import run_comparison
from aifabric.hardware.catalog import load_catalog
from aifabric.scenario import AdvisorSpec
from aifabric.stages.measure.network import FabricComm, measure_pattern, rail_topology
from aifabric.stages.risk.assess import AR_OFF_ROUTING
from aifabric.stages.workload import STEP_BYTES, TrafficPattern, WorkloadInput, stage_hops, workload
from aifabric.workload.placement import stage_pairs

# 512 H100 on 64-port 400G leaves: 32 servers per scalable unit (one leaf per rail), 2 units
KEY = (512, int(400e9), 8, 64, (5.0, 40.0, 300.0))
HOP_PS = 300_000.0


def _pp(stride: int, span: int) -> TrafficPattern:
    return TrafficPattern("pp-send-recv", 512, 8, STEP_BYTES, stride=stride, span=span, qps=2)


def test_stage_pairs_follow_megatron_rank_order():
    """Rank r sends to r + stride inside its pipeline of span ranks; the last stage sends nothing."""
    s, d = stage_pairs(4, 12, 24)  # two pipelines of 3 stages of 4 ranks
    assert s.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16, 17, 18, 19]
    assert (d - s == 4).all()
    s, d = stage_pairs(4, 12, 20)  # a fragmented job holds only 20 of the 24 ranks
    assert d.max() < 20


def test_in_leaf_pipeline_partners_stay_in_leaf():
    """Every stage boundary one server apart inside a 32-server scalable unit: every hop stays under
    its rail's leaf, so even ECMP hashing has nothing to collide on (efficiency 1.0); the same
    pattern with the partners a unit apart crosses the spines and ECMP loses to its collisions,
    while per-packet adaptive routing does not."""
    topo = rail_topology(*KEY)
    near, far = _pp(8, 256), _pp(256, 512)
    src, dst, pairs = stage_hops(near)
    assert pairs == len(src) == 2 * 31 * 8  # 2 pipelines x 31 boundaries x 8 rails, all across servers
    assert (src % 8 == dst % 8).all()  # rail-aligned
    assert topo.in_leaf_share(src, dst) == 1.0
    assert measure_pattern(KEY, "roce", near, 1, HOP_PS, "ecmp")[0] == 1.0
    src, dst, _ = stage_hops(far)
    assert topo.in_leaf_share(src, dst) == 0.0
    assert measure_pattern(KEY, "roce", far, 1, HOP_PS, "ecmp")[0] < 0.9
    assert measure_pattern(KEY, "roce", far, 1, HOP_PS, "adaptive-packet")[0] == pytest.approx(1.0)


def test_pipeline_partners_inside_a_server_go_over_nvlink():
    """Stages 2 ranks apart in pipelines of 8: every pair inside one server, no network hop."""
    src, _, pairs = stage_hops(_pp(2, 8))
    assert pairs > 0 and len(src) == 0


def test_the_reference_layout_places_the_pipeline_pattern():
    """A 405B job's pipeline pattern comes from its reference layout: stride tp x cp x dp ranks."""
    w = workload(WorkloadInput("training", 512, 8, 80.0, model="llama3.1-405b"))
    lay, p = w.parallelism, w.pattern("pp-send-recv")
    assert lay.pp > 1 and p is not None
    assert (p.stride, p.span) == (lay.tp * lay.cp * lay.dp, 512)


def test_a_pipelined_inference_instance_places_its_stage_sends():
    """A dense instance of 32 H100 is 4 stages of one server each: sends go server to next server
    inside the instance, never between instances."""
    w = workload(
        WorkloadInput(
            "inference",
            256,
            8,
            80.0,
            model="llama3.1-405b",
            inference={"gpus_per_instance": 32, "precision": "bf16"},
        )
    )
    p = w.pattern("pp-send-recv")
    assert (p.stride, p.span) == (8, 32)
    src, dst, _ = stage_hops(p)
    assert ((dst // 8) - (src // 8) == 1).all() and ((src // 8) % 4 != 3).all()


def test_pipeline_sends_use_the_placed_efficiency_and_cp_the_permutation():
    """The step model times pipeline sends with the placed pattern's efficiency; other sends keep the
    permutation's; without a placed pattern the two are the same."""
    comm = FabricComm("roce", 400e9, 1.0, 2.0, 2960.0, a2a_efficiency=0.25, pp_efficiency=1.0)
    pp = comm.collective_s("pp-send-recv", 16 * 2**20, 2, "network")
    other = comm.collective_s("send-recv", 16 * 2**20, 2, "network")
    assert other > 3 * pp
    comm.pp_efficiency = None
    assert comm.collective_s("pp-send-recv", 16 * 2**20, 2, "network") == pytest.approx(other)


def test_static_forwarding_collides_on_a_random_permutation():
    """InfiniBand without adaptive routing (the subnet manager's static tables) is measured, not
    assumed: on a random same-rail permutation across both units it loses to collisions."""
    perm = TrafficPattern("rail-permutation", 512, 8, STEP_BYTES, seed=1)
    assert AR_OFF_ROUTING == {"roce": "ecmp", "infiniband": "static"}
    assert measure_pattern(KEY, "infiniband", perm, 1, HOP_PS, "static")[0] < 0.9
    assert measure_pattern(KEY, "infiniband", perm, 1, HOP_PS, "adaptive-packet")[0] == pytest.approx(1.0)


def test_adaptive_routing_off_is_measured_on_both_fabrics():
    """InfiniBand (AR as shipped) and Spectrum-X RoCE on the same fragmented placement: both carry the
    'adaptive routing off' mistake re-measured in the flow model with their fallback routing, and
    both slow the iteration; InfiniBand's packet-testbed ib-no-ar item gives way to it."""
    c = run_comparison(
        AdvisorSpec(gpus=1024, model="llama3.1-70b", roce_routing="spectrum-x", placement="fragmented"),
        load_catalog(),
    )
    off = {}
    for f in c.risk.fabrics:
        items = {i.scenario: i for i in f.items}
        assert "ib-no-ar" not in items
        off[f.key] = items["adaptive-routing-off"]
    ib, roce = off["infiniband"], off["roce-400g"]
    assert "static" in ib.model and "ecmp" in roce.model
    assert ib.iteration_slowdown > 0 and roce.iteration_slowdown > 0
    assert np.isfinite(ib.iteration_slowdown) and ib.kind == roce.kind == "mistake"
    for n in c.network.fabrics:
        assert n.placed["pp_send_recv"]["efficiency"] == n.pp_efficiency
