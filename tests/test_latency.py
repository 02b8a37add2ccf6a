"""Issue 25 part 9: small-message latency on the risk testbed (aifabric.stages.decide.latency) — the idle
fabric's closed form on both fabrics, the storage incast only when storage is on the compute
fabric, same seed same numbers, fan-out completion, and the constraint's rule."""

import numpy as np
import pytest

from aifabric.stages.decide.latency import (
    FANOUT_HOSTS,
    SIZES_BYTES,
    LatencyBed,
    LatencyRun,
    RunSamples,
    _by_kind,
    fanout_targets,
    judge,
    kinds,
    pairs_of,
    run_latency,
    small_message_latency,
)
from aifabric.stages.risk.scenario_files import shipped_testbed

# bytes on the wire besides the payload: IB LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B (IBTA); RoCE the
# peer scenarios' 64 B plus HPCC's 42 B INT stack (ns-3 HPCC int-header.h), as the engine counts them
OVERHEAD_BYTES = {"infiniband": 26, "roce": 64 + 42}
NIC_NS = 550.0  # defaults.yaml latency.nic_tx = latency.nic_rx (S65)
HOST_LINK_NS = 5 * 5.05  # a 5 m host-leaf fibre at 5.05 ns/m (S5)


def _bed(tech: str, storage: bool = False) -> LatencyBed:
    return LatencyBed(shipped_testbed(tech), NIC_NS, HOST_LINK_NS, storage)


@pytest.mark.validation
@pytest.mark.parametrize("tech", ["infiniband", "roce"])
def test_idle_round_trip_is_the_closed_form(tech):
    """On an idle fabric the fastest round trip of each size is twice NIC x 2 + 3 switch hops + two
    host links + two leaf-spine links + four serialisations (store and forward), within 0.1 %."""
    bed = _bed(tech)
    tb = bed.testbed
    r = run_latency(LatencyRun(bed, "quiet", 1))
    for size in SIZES_BYTES:
        ser_ns = (size + OVERHEAD_BYTES[tech]) * 8 / tb.link_rate_bps * 1e9
        one_way_ns = (
            2 * NIC_NS + 3 * tb.switch_latency_ns + 2 * HOST_LINK_NS + 2 * tb.link_delay_ns + 4 * ser_ns
        )
        got = r.rtt_us[r.group == size].min() * 1e3
        assert got == pytest.approx(2 * one_way_ns, rel=1e-3), size


def test_probes_pair_hosts_on_different_leaves():
    """Every request/response pair and every fan-out leg crosses the spine, and no probe touches the
    storage target (host hosts_per_leaf - 1 of leaf 0)."""
    tb = shipped_testbed("roce")
    pairs, sender = pairs_of(tb)
    h, target = tb.hosts_per_leaf, tb.hosts_per_leaf - 1
    assert len(pairs) == tb.leaves * h // 2 - 1
    assert all(a // h != b // h and target not in (a, b) for a, b in pairs)
    legs = fanout_targets(tb, sender, FANOUT_HOSTS)
    assert len(set(legs)) == FANOUT_HOSTS and all(x // h != sender // h and x != target for x in legs)


def test_fanout_completes_with_its_last_reply():
    """A fan-out's sample is the slowest of its legs; request/response samples are per message."""
    r = RunSamples(
        np.array([5.0, 6.0, 1.0, 9.0, 2.0, 3.0]),
        np.zeros(6),
        np.array([64, 512, -1, -1, -2, -2]),
        0.0,
    )
    got = _by_kind(r, r.rtt_us, kinds()[-1])
    assert sorted(got[kinds()[-1]].tolist()) == [3.0, 9.0]
    assert got["rr_64B"].tolist() == [5.0] and got["rr_512B"].tolist() == [6.0]


def test_same_seed_same_numbers():
    """Two runs of the same seed give identical samples; another seed moves them."""
    bed = _bed("roce")
    a, b = run_latency(LatencyRun(bed, "job", 3)), run_latency(LatencyRun(bed, "job", 3))
    assert np.array_equal(a.rtt_us, b.rtt_us) and np.array_equal(a.one_way_us, b.one_way_us)
    c = run_latency(LatencyRun(bed, "job", 4))
    assert not np.array_equal(a.rtt_us, c.rtt_us)


@pytest.fixture(scope="module")
def ib_storage():
    """IB without congestion control, two seeds, storage off and on the compute fabric."""
    tb = shipped_testbed("infiniband")
    off = small_message_latency(tb, storage_on_fabric=False, seeds=(1, 2))
    on = small_message_latency(tb, storage_on_fabric=True, seeds=(1, 2))
    return off, on


def test_storage_off_the_fabric_never_enters(ib_storage):
    """With storage off the compute fabric no storage mix is run and the congestion share changes
    nothing: every quantile is the job mix's."""
    off, _ = ib_storage
    assert "job+storage" not in off.rtt_us and off.to_dict()["congestion_share"] == 0.0
    for kind in kinds():
        job = off.quantile(kind, 0.99, mix="job")
        assert off.quantile(kind, 0.99, 0.25) == job == off.quantile(kind, 0.99, 1.0)


def test_storage_on_the_fabric_enters(ib_storage):
    """With storage on the compute fabric the incast is a mix of its own, weighed by the congestion
    share: on IB without congestion control its congestion tree at least doubles the p99 round trip
    of every kind; the quiet and job mixes are the storage-off measurement's."""
    off, on = ib_storage
    assert on.to_dict(0.25)["congestion_share"] == 0.25
    for kind in kinds():
        assert np.array_equal(on.rtt_us["job"][kind], off.rtt_us["job"][kind])
        assert on.quantile(kind, 0.99, 0.25) > 2 * off.quantile(kind, 0.99, 0.25)
        assert on.quantile(kind, 0.99, 0.0) == off.quantile(kind, 0.99, 0.25)


def test_judge_rules_out_the_design_furthest_above_the_best():
    """A design more than the budget above the best at some kind is out, named with the kind where it
    is furthest above; a design within the budget everywhere stays in."""
    base = dict.fromkeys(kinds(), 10.0)
    tails = {"a": base, "b": {**base, "rr_64B": 12.0, "rr_512B": 14.0}, "c": {**base, "rr_64B": 12.4}}
    assert judge(tails, 0.25) == {"b": ("rr_512B", 14.0, 10.0)}
    assert judge(tails, 0.5) == {}


@pytest.mark.slow
def test_tail_constraint_reads_the_storage_setting():
    """The same two pods (adaptive IB without congestion control, ECMP RoCE with HPCC) under trading:
    with storage off the compute fabric ECMP RoCE is out (hash collisions behind the ring step); with
    storage on it, IB is out (its congestion tree behind the storage incast), and the reason says so."""
    from types import SimpleNamespace as NS

    from aifabric.hardware.catalog import load_catalog
    from aifabric.stages.decide.choose import FabricEvidence, _tail_latency

    beds = {"infiniband": shipped_testbed("infiniband"), "roce-400g": shipped_testbed("roce")}
    tech = {"infiniband": ("infiniband", "qm9700"), "roce-400g": ("roce", "sn5600")}
    fds = [
        NS(key=k, technology=t, switch_id=s, lengths_m={"host-leaf": 5.0}, front_end=None)
        for k, (t, s) in tech.items()
    ]
    risk = NS(congestion_share=0.25, fabric=lambda k: NS(testbed=NS(testbed=beds[k])))
    adv = NS(workload="trading", jitter_sensitivity="low", p99_budget=None)

    def out(storage: bool) -> tuple[set, list]:
        ev = {k: FabricEvidence(k, t, 400, 1.0, 1.0, 256) for k, (t, _) in tech.items()}
        reasons = _tail_latency(adv, ev, risk, NS(fabrics=fds), load_catalog(), storage)
        return {k for k, e in ev.items() if not e.feasible}, reasons

    off, _ = out(False)
    on, reasons = out(True)
    assert off == {"roce-400g"} and on == {"infiniband"}
    assert "storage incast on the fabric" in reasons[0].text


def test_fanout_beyond_the_pod_is_one_clear_error():
    """A fan-out to no host, or to more hosts than sit off the sender's leaf, is an InputError naming
    fanout_hosts and the allowed range (no measurement starts)."""
    from aifabric.errors import InputError

    tb = shipped_testbed("roce")
    for bad in (0, 24):
        with pytest.raises(InputError) as e:
            small_message_latency(tb, fanout_hosts=bad)
        assert "fanout_hosts" in str(e.value) and "1..23" in str(e.value)
