"""The Ultra Ethernet transport in the packet engine (aifabric.sim.uet): byte accounting with
trimming on and off, each load balancer and ordered delivery, determinism, trimming against drop +
timeout on the incast, spraying against ECMP on the permutation, EV feedback against oblivious
spraying, ordered against unordered delivery, agreement with the UEC htsim's recorded FCTs (per
load balancer), JIT parity, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aifabric.errors import InputError, InputErrors
from aifabric.scenario import PfcSpec, load_scenario, scenario_from_dict
from aifabric.sim import simulate
from aifabric.sim.engine import K
from test_sim_support import fat_tree, run_parity_snippet

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "src/aifabric/data/reference/uet-htsim.json"


def uet(topology: dict, workload: dict, uet_settings: dict | None = None, seed: int = 1, **fabric):
    fab = {"transport": "uet", "mtu": "4000B", "header": "64B", "uet": uet_settings or {}, **fabric}
    return scenario_from_dict(
        {"name": "uet", "seed": seed, "topology": topology, "fabric": fab, "workload": workload}
    )


def with_uet(sc, **settings):
    """``sc`` with ``fabric.uet`` settings changed."""
    fab = sc.fabric.model_copy(update={"uet": sc.fabric.uet.model_copy(update=settings)})
    return sc.model_copy(update={"fabric": fab})


INCAST8 = {"kind": "incast", "senders": 8, "receiver": 0, "flow_size": "200KB"}


MODES = [
    {"load_balancer": "mixed"},
    {"load_balancer": "oblivious"},
    {"load_balancer": "bitmap"},
    {"load_balancer": "reps"},
    {"delivery": "rod"},
    {"congestion_control": "rccc"},
    {"congestion_control": "nscc-rccc", "delivery": "rod"},
    {"cbfc": True},
]


@pytest.mark.parametrize(
    "trimming,mode",
    [(t, m) for m in MODES for t in (True, False) if t or "rccc" not in m.get("congestion_control", "")],
    ids=lambda v: "-".join(map(str, v.values())) if isinstance(v, dict) else ("trim" if v else "drop"),
)
def test_every_byte_delivered_once_retransmissions_counted(trimming, mode):
    """A lossy incast (a 40 KB queue limit, so packets are trimmed or dropped): every flow completes,
    each payload byte is delivered exactly once, and what was sent adds up — injected = delivered +
    trimmed + dropped + duplicates + discarded out of sequence (ordered delivery) + still in flight
    (only lossless runs end with spurious retransmissions on the wire), injected − retransmitted =
    the flows' bytes."""
    mode = dict(mode)
    cc = mode.pop("congestion_control", "nscc")
    r = simulate(
        uet(
            fat_tree(4), INCAST8, {"trimming": trimming, "queue_limit": "40KB", **mode}, congestion_control=cc
        )
    )
    e, u, s = r.engine, r.engine["uet"], r.summary
    st = r.extra["state"]
    size = st.fl[:, K.FL_SIZE]
    assert s["complete"] and s["completed_flows"] == 8
    assert (st.fl[:, K.FL_RCVD] == size).all() and (st.fl[:, K.FL_ACKED] == size).all()
    assert e["delivered_bytes"] == size.sum()
    # lossless (CBFC): spurious retransmissions may still be on their way when the last flow ends
    assert e["in_flight_bytes"] == 0 or mode.get("cbfc")
    lost = u["trimmed_payload_bytes"] + e["dropped_bytes"]
    wasted = u["duplicate_bytes"] + u["out_of_sequence_bytes"]
    assert e["injected_bytes"] == e["delivered_bytes"] + lost + wasted + e["in_flight_bytes"]
    assert e["injected_bytes"] - u["retransmitted_bytes"] == size.sum()
    assert r.flows["retransmissions"].sum() == u["retransmitted_packets"] == e["retransmissions"]
    assert u["congestion_control"] == cc and (u["pulls"] > 0) == ("rccc" in cc)
    assert (u["load_balancer"], u["delivery"]) == (
        mode.get("load_balancer", "mixed"),
        mode.get("delivery", "rud"),
    )
    if mode.get("cbfc"):  # lossless: credits hold every sender back, nothing is trimmed or dropped
        assert u["cbfc"] and u["trimmed_packets"] == 0 and e["dropped_bytes"] == 0
        assert (st.pt[:, K.PT_STALL_PS] > 0).any()
        return
    if mode.get("delivery") == "rod":
        assert u["ev_count"] == 1 and u["retransmitted_packets"] > 0
        assert u["out_of_sequence_bytes"] > 0  # what followed a lost packet is discarded and sent again
        return
    assert u["out_of_sequence_bytes"] == 0
    if trimming:
        assert u["trimmed_packets"] > 0 and e["dropped_bytes"] == 0 and u["timeouts"] == 0
        assert e["nacks"] == u["trimmed_packets"] == u["retransmitted_packets"]
    else:
        assert s["drops"] > 0 and u["trimmed_packets"] == 0 and e["nacks"] == 0
        assert u["timeouts"] >= s["drops"]


def _tables(r):
    return r.flows.to_json(), r.ports.to_json(), json.dumps(r.summary), r.engine["events"]


def test_same_seed_same_results_other_seed_other_paths():
    """Two runs with one seed are identical; another seed draws other entropy starts and switch
    hash seeds, so the packets take other paths."""
    perm = {"kind": "permutation", "flow_size": "200KB"}
    a = simulate(uet(fat_tree(4), perm, seed=3))
    b = simulate(uet(fat_tree(4), perm, seed=3))
    c = simulate(uet(fat_tree(4), perm, seed=4))
    assert _tables(a) == _tables(b)
    assert not np.array_equal(a.ports["tx_bytes"].to_numpy(), c.ports["tx_bytes"].to_numpy())


def _incast32(trimming: bool):
    return simulate(with_uet(load_scenario(ROOT / "scenarios/incast32-uet.yaml"), trimming=trimming))


def test_trimming_finishes_the_incast_sooner_than_drop_and_timeout():
    """incast32 (32 × 2 MB → one host): with trimming the receiver hears of each lost packet at
    once (a NACK) and the last flow ends near the 5.20 ms line-rate bound; without it a dropped
    packet waits for the retransmission timeout (docs/ultra-ethernet.md has the numbers)."""
    trim, drop = _incast32(True), _incast32(False)
    assert trim.summary["complete"] and drop.summary["complete"]
    assert trim.engine["uet"]["trimmed_packets"] > 0 and drop.engine["uet"]["timeouts"] > 0
    assert trim.summary["fct_max_us"] < drop.summary["fct_max_us"]
    assert trim.summary["fct_p99_us"] < drop.summary["fct_p99_us"]
    assert trim.summary["fct_max_us"] < 5200 * 1.02  # within 2 % of the receiver-link bound


def _uplink_spread(r, topo) -> dict:
    """max / mean bytes over the ToR→aggregation and aggregation→core links."""
    tier = topo.node_tier
    node, peer = r.ports["node"].to_numpy(), r.ports["peer"].to_numpy()
    tx = r.ports["tx_bytes"].to_numpy()
    out = {}
    for a, b in ((1, 2), (2, 3)):
        t = tx[(tier[node] == a) & (tier[peer] == b)]
        out[(a, b)] = t.max() / t.mean()
    return out


def test_spraying_spreads_the_permutation_evenly_ecmp_collides():
    """perm128: 64 entropy values per flow load the ToR and aggregation uplinks within 35 % of
    their mean; one entropy value (a flow keeps one ECMP path) leaves some uplinks ≥ 2.5 × the mean
    and the tail twice as long."""
    from aifabric.cli._preflight import prepare

    prep = prepare(ROOT / "scenarios/perm128-uet.yaml", None, None, False, json_flows=False)
    spray = simulate(prep.scenario, flows=prep.flows, topology=prep.topology)
    ecmp = simulate(with_uet(prep.scenario, ev_count=1), flows=prep.flows, topology=prep.topology)
    s, e = _uplink_spread(spray, prep.topology), _uplink_spread(ecmp, prep.topology)
    assert max(s.values()) < 1.35
    assert min(e.values()) > 2.5
    assert ecmp.summary["fct_p99_us"] > 2 * spray.summary["fct_p99_us"]


def _reference(scenario: str, variant: str) -> dict:
    return json.loads(REFERENCE.read_text())["scenarios"][scenario][variant]


@pytest.mark.parametrize(
    "scenario,trimming,lb,tol",
    [
        ("incast32-uet", True, "mixed", 0.05),
        ("incast32-uet", True, "oblivious", 0.05),
        ("incast32-uet", True, "bitmap", 0.05),
        ("incast32-uet", True, "reps", 0.05),
        ("incast32-uet", False, "mixed", 0.05),
        ("incast32-uet", False, "oblivious", 0.05),
        ("perm128-uet", True, "mixed", 0.05),
        ("perm128-uet", True, "bitmap", 0.05),
        # per-packet ACKs return a clean EV for every packet (htsim ACKs every few): more recycling,
        # a shorter tail than htsim's; oblivious: htsim's tail is longer (docs/ultra-ethernet.md)
        ("perm128-uet", True, "reps", 0.10),
        ("perm128-uet", True, "oblivious", 0.10),
        ("alltoall16-uet", True, "mixed", 0.05),
        ("alltoall16-uet", True, "oblivious", 0.05),
        ("incast32-uet", True, "mixed/rccc", 0.05),
        ("perm128-uet", True, "mixed/rccc", 0.05),
        ("alltoall16-uet", True, "mixed/rccc", 0.05),
        ("incast32-uet", True, "mixed/nscc-rccc", 0.05),
        ("perm128-uet", True, "mixed/nscc-rccc", 0.05),
    ],
)
def test_fct_agrees_with_the_uec_htsim(scenario, trimming, lb, tol):
    """FCT p50 and p99 against the UEC htsim's (recorded with its commit) run with the same load
    balancer and trimming: within 5 % (10 % where the ACK clocking differs, named above)."""
    from aifabric.cli._preflight import prepare
    from aifabric.stages.validate.uet import htsim_reference

    lb, _, cc = lb.partition("/")
    cc = cc or "nscc"
    prep = prepare(ROOT / f"scenarios/{scenario}.yaml", None, None, False, json_flows=False)
    sc = with_uet(prep.scenario, trimming=trimming, load_balancer=lb)
    sc = sc.model_copy(update={"fabric": sc.fabric.model_copy(update={"congestion_control": cc})})
    r = simulate(sc, flows=prep.flows, topology=prep.topology)
    ref = htsim_reference(scenario, trimming, lb, cc)
    assert r.summary["flows"] == ref["flows"]
    for key in ("fct_p50_us", "fct_p99_us"):
        assert r.summary[key] == pytest.approx(ref[key], rel=tol), key


def test_ev_feedback_shortens_the_permutation_tail():
    """perm128: with EV feedback (mixed, htsim's default) senders move off entropy values whose
    packets came back ECN-marked, so fewer packets are marked and the tail is shorter than with
    oblivious spraying (UEC htsim: p99 206 against 245 us)."""
    from aifabric.cli._preflight import prepare

    prep = prepare(ROOT / "scenarios/perm128-uet.yaml", None, None, False, json_flows=False)
    run = {
        lb: simulate(with_uet(prep.scenario, load_balancer=lb), flows=prep.flows, topology=prep.topology)
        for lb in ("mixed", "oblivious")
    }
    mixed, obl = run["mixed"].summary, run["oblivious"].summary
    assert mixed["fct_p99_us"] < 0.93 * obl["fct_p99_us"]
    assert mixed["ecn_marks"] < 0.5 * obl["ecn_marks"]


def test_load_balancer_rules():
    """The per-flow rules on a bare table: bitmap skips a penalised EV (taking one penalty off per
    skip), reps / mixed reuse clean EVs first in, first out; oblivious ignores feedback."""
    from aifabric.sim import uet_lb as LB
    from aifabric.sim.uet_setup import LB_NAMES, state_columns

    assert [LB_NAMES.index(n) for n in ("oblivious", "bitmap", "reps", "mixed")] == [
        LB.LB_OBLIVIOUS,
        LB.LB_BITMAP,
        LB.LB_REPS,
        LB.LB_MIXED,
    ]
    FR = np.zeros((1, K.FR_UE0 + K.FR_UE_W))

    def table(lb, evs=4):
        cfg = np.zeros(K.C_NUM, np.int64)
        cfg[K.C_UE_EVS], cfg[K.C_UE_LB] = evs, lb
        return np.zeros((1, K.FL_UE_LB0 + state_columns(lb, evs)), np.int64), cfg

    fl, cfg = table(LB.LB_BITMAP)
    LB.process_ev(fl, cfg, 0, 0, LB.FB_NACK)
    assert fl[0, K.FL_UE_LB0] == 4
    assert [LB.next_ev(fl, FR, cfg, 0) for _ in range(3)] == [1, 2, 3]
    assert fl[0, K.FL_UE_LB0] == 3  # skipped once
    fl, cfg = table(LB.LB_MIXED)
    for ev in (2, 0, 3):
        LB.process_ev(fl, cfg, 0, ev, LB.FB_GOOD)
    LB.process_ev(fl, cfg, 0, 1, LB.FB_ECN)
    assert [LB.next_ev(fl, FR, cfg, 0) for _ in range(3)] == [2, 0, 3]
    assert LB.next_ev(fl, FR, cfg, 0) == 0  # none kept: the bitmap's round robin skips EV 1
    fl, cfg = table(LB.LB_OBLIVIOUS)
    LB.process_ev(fl, cfg, 0, 0, LB.FB_TIMEOUT)
    assert [LB.next_ev(fl, FR, cfg, 0) for _ in range(5)] == [0, 1, 2, 3, 0]


def test_receiver_credits_share_the_incast_receiver_evenly():
    """incast32: under RCCC the receiver's pull pacer grants its 32 senders credit in turn at its
    link rate, so they finish together (median within 1 % of the last, htsim too); under NSCC the
    first finish 8 % earlier than the last."""
    sc = load_scenario(ROOT / "scenarios/incast32-uet-rccc.yaml")
    rccc = simulate(sc)
    nscc = simulate(load_scenario(ROOT / "scenarios/incast32-uet.yaml"))
    r, n = rccc.summary, nscc.summary
    assert r["complete"] and rccc.engine["uet"]["pulls"] > 0
    assert r["fct_p50_us"] > 0.99 * r["fct_max_us"]
    assert n["fct_p50_us"] < 0.95 * n["fct_max_us"]
    assert r["fct_max_us"] < 5200 * 1.01  # the receiver's link stays busy


def test_cbfc_is_lossless_like_pfc():
    """incast32 with credit-based flow control (the InfiniBand credit machinery on every link) and
    with PFC: both lossless (no trims, no drops), the same makespan within 1 %; the retransmission
    timeout, sized for the lossy queue, fires on packets waiting behind held-back queues in both."""
    sc = load_scenario(ROOT / "scenarios/incast32-uet.yaml")
    cbfc = simulate(with_uet(sc, cbfc=True))
    pfc = simulate(
        sc.model_copy(update={"fabric": sc.fabric.model_copy(update={"pfc": PfcSpec(enabled=True)})})
    )
    for r in (cbfc, pfc):
        assert r.summary["complete"] and r.summary["drops"] == 0 and r.engine["uet"]["trimmed_packets"] == 0
    assert cbfc.summary["pause_frames"] == 0 and pfc.summary["pause_frames"] > 0
    assert cbfc.summary["fct_max_us"] == pytest.approx(pfc.summary["fct_max_us"], rel=0.01)


def test_ordered_delivery_goes_back_and_is_slower_than_unordered_on_one_path():
    """incast32 with trimming, one path per flow both ways: ordered delivery discards what follows
    a trimmed packet and sends it again (go-back), so it retransmits more and ends later than
    unordered delivery, which resends only the trimmed packets."""
    sc = load_scenario(ROOT / "scenarios/incast32-uet.yaml")
    rod = simulate(with_uet(sc, delivery="rod", ev_count=1))
    rud = simulate(with_uet(sc, ev_count=1))
    ur, uu = rod.engine["uet"], rud.engine["uet"]
    assert rod.summary["complete"] and rud.summary["complete"]
    assert ur["out_of_sequence_bytes"] > 0 and uu["out_of_sequence_bytes"] == 0
    assert ur["retransmitted_packets"] > 1.5 * uu["retransmitted_packets"]
    assert uu["retransmitted_packets"] == uu["trimmed_packets"]
    assert rod.summary["fct_max_us"] > rud.summary["fct_max_us"]


_PARITY = r"""
import json, sys
sys.path.insert(0, {tests!r})
from test_sim_support import fat_tree
from aifabric.scenario import scenario_from_dict
from aifabric.sim import simulate
def sc(uet, **fab):
    return scenario_from_dict({{"name": "p", "topology": fat_tree(4),
        "workload": {{"kind": "incast", "senders": 6, "receiver": 0, "flow_size": "100KB"}},
        "fabric": {{"transport": "uet", "uet": uet, **fab}}}})
cases = {{"trim": sc({{"queue_limit": "30KB"}}), "drop": sc({{"trimming": False, "queue_limit": "30KB"}}),
          "oblivious": sc({{"queue_limit": "30KB", "load_balancer": "oblivious"}}),
          "bitmap": sc({{"queue_limit": "30KB", "load_balancer": "bitmap", "ev_count": 6}}),
          "reps": sc({{"trimming": False, "queue_limit": "30KB", "load_balancer": "reps"}}),
          "rod": sc({{"queue_limit": "30KB", "delivery": "rod"}}),
          "rod-drop": sc({{"trimming": False, "queue_limit": "30KB", "delivery": "rod"}}),
          "rccc": sc({{"queue_limit": "30KB"}}, congestion_control="rccc"),
          "cbfc": sc({{"cbfc": True, "load_balancer": "bitmap"}}),
          "nscc-rccc-rod": sc({{"queue_limit": "30KB", "delivery": "rod"}}, congestion_control="nscc-rccc"),
          "pfc": sc({{}}, pfc={{"enabled": True}}), "none": sc({{"ev_count": 3}}, congestion_control="none"),
          "failure": sc({{}}, failures=[{{"link": "tor0-agg0", "at": "3us"}}])}}
out = {{}}
for name, s in cases.items():
    r = simulate(s)
    out[name] = {{"flows": r.flows.drop(columns=["throughput_gbps"]).to_json(), "ports": r.ports.to_json(),
                  "summary": r.summary, "uet": r.engine["uet"], "events": r.engine["events"]}}
print(json.dumps(out))
"""


def test_uet_parity_with_numba_disabled():
    """The UET code gives bit-identical results compiled and as plain Python (NUMBA_DISABLE_JIT=1):
    trimming, drop + timeout, each load balancer, ordered delivery, PFC, no congestion control and
    a link failure exercised."""
    jit = run_parity_snippet(_PARITY, False)
    nojit = run_parity_snippet(_PARITY, True)
    assert jit["trim"]["uet"]["trimmed_packets"] > 0
    assert jit["drop"]["uet"]["timeouts"] > 0
    assert jit["rod"]["uet"]["out_of_sequence_bytes"] > 0 and jit["rod-drop"]["uet"]["timeouts"] > 0
    assert jit["rccc"]["uet"]["pulls"] > 0
    assert all(c["summary"]["complete"] for c in jit.values())
    assert jit == nojit


@pytest.mark.parametrize(
    "fabric,field,allowed",
    [
        ({"transport": "uet", "technology": "infiniband"}, "fabric.transport", "technology: roce"),
        ({"transport": "uet", "routing": "spray"}, "fabric.routing", "allowed for transport uet: ecmp"),
        ({"transport": "uet", "congestion_control": "hpcc"}, "fabric.congestion_control", "nscc-rccc, none"),
        ({"congestion_control": "nscc"}, "fabric.congestion_control", "needs transport: uet"),
        ({"uet": {"ev_count": 2}}, "fabric.uet", "transport: uet"),
        ({"transport": "uet", "uet": {"ev_count": 0}}, "fabric.uet.ev_count", "greater than or equal to 1"),
        ({"transport": "uet", "uet": {"trim_size": "10B"}}, "fabric.uet.trim_size", "64"),
        ({"transport": "uet", "uet": {"nscc": {"gamma": 0}}}, "fabric.uet.nscc.gamma", "greater than 0"),
        ({"transport": "quic"}, "fabric.transport", "rc or uet"),
        ({"transport": "uet", "uet": {"load_balancer": "ecmp"}}, "fabric.uet.load_balancer", "reps or mixed"),
        ({"transport": "uet", "uet": {"delivery": "rdma"}}, "fabric.uet.delivery", "rud or rod"),
        (
            {"transport": "uet", "uet": {"delivery": "rod", "ev_count": 8}},
            "fabric.uet.ev_count",
            "with rod: 1",
        ),
        ({"transport": "uet", "uet": {"ev_count": 2048}}, "fabric.uet.ev_count", "load_balancer: oblivious"),
        (
            {"transport": "uet", "congestion_control": "rccc", "uet": {"trimming": False}},
            "fabric.uet.trimming",
            "allowed with rccc: true",
        ),
        ({"congestion_control": "rccc"}, "fabric.congestion_control", "needs transport: uet"),
        (
            {"transport": "uet", "pfc": {"enabled": True}, "uet": {"cbfc": True}},
            "fabric.uet.cbfc",
            "pfc.enabled: false",
        ),
    ],
)
def test_bad_uet_settings_are_one_line_naming_the_field(fabric, field, allowed):
    base = {"name": "x", "topology": fat_tree(4), "workload": INCAST8}
    with pytest.raises((InputError, InputErrors)) as exc:
        scenario_from_dict({**base, "fabric": fabric})
    msg = str(exc.value)
    assert msg.count("\n") == 0 and msg.startswith(field) and allowed in msg


def test_uet_defaults_lossy_with_ecn_and_nscc():
    """transport uet: PFC off, ECN marking on, NSCC — unless the file says otherwise."""
    f = uet(fat_tree(4), INCAST8).fabric
    assert (f.pfc.enabled, f.ecn.enabled, f.congestion_control) == (False, True, "nscc")
    g = uet(fat_tree(4), INCAST8, pfc={"enabled": True}, ecn={"kmin": "20KB"}).fabric
    assert g.pfc.enabled and g.ecn.enabled and g.ecn.kmin == 20000


def test_cli_bad_transport_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "topology: {kind: fat-tree, k: 4}\nfabric: {transport: uet, routing: flowlet}\n"
        "workload: {kind: incast, senders: 2}\n"
    )
    p = subprocess.run(
        [sys.executable, "-m", "aifabric", "simulate", str(bad), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "fabric.routing" in p.stderr
