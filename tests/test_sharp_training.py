"""SHARP in train / compare: in-network all-reduce on the InfiniBand designs whose switches have it,
with the collective model's limits (all-reduce only, trees per switch), none on Ethernet, an
assumption to turn it off, and the risk of its aggregation manager being down."""

from types import SimpleNamespace

import pytest

from aifabric.errors import InputError
from aifabric.stages.deployment import check_overrides
from aifabric.stages.measure.network import FabricComm
from aifabric.stages.measure.sharp import sharp_grant, trees_per_leaf
from aifabric.stages.workload import WorkloadInput, workload
from aifabric.workload.collectives import SHARP_TREES_PER_SWITCH
from aifabric.workload.llm.layout import Layout

S = 2 * 2**30  # bandwidth-bound


def _comm(sharp: bool) -> FabricComm:
    return FabricComm("infiniband", 400e9, 1.0, 2.0, 2960.0, nic_efficiency=0.94, sharp=sharp)


def test_sharp_moves_an_all_reduce_once_and_leaves_other_ops_alone():
    """A large network all-reduce over n ranks: the ring moves 2(n-1)/n of the buffer per NIC, SHARP
    the buffer once, so it takes about n/(2(n-1)) of the time; reduce-scatter, all-gather and NVLink
    all-reduces are unchanged (the collective model's limits)."""
    ring, sharp = _comm(False), _comm(True)
    n = 32
    ratio = sharp.collective_s("all-reduce", S, n, "network") / ring.collective_s(
        "all-reduce", S, n, "network"
    )
    assert ratio == pytest.approx(n / (2 * (n - 1)), rel=0.05)
    for op in ("reduce-scatter", "all-gather", "all-to-all"):
        assert sharp.collective_s(op, S, n, "network") == ring.collective_s(op, S, n, "network")
    assert sharp.collective_s("all-reduce", S, 8, "nvlink") == ring.collective_s("all-reduce", S, 8, "nvlink")


def test_small_all_reduces_pay_collnets_latency():
    """At 1 KiB over 2 ranks the ring (2 network steps of 14 µs + path) beats SHARP's 31 µs + path:
    SHARP is not free where latency dominates."""
    ring, sharp = _comm(False), _comm(True)
    assert sharp.collective_s("all-reduce", 1024, 2, "network") > ring.collective_s(
        "all-reduce", 1024, 2, "network"
    )


def _wl(gpus: int, par: dict, gpu: str = "h100", gpn: int = 8, model: str = "llama3.1-70b", gbs: int = 512):
    tr = {"model": model, "seq_len": 8192, "global_batch": gbs, "micro_batch": 1, "parallelism": par}
    return workload(WorkloadInput("training", gpus, gpn, 80.0, training=tr, gpu=gpu))


def test_grant_follows_the_switch_and_the_tree_limit():
    """Quantum-2 (SHARPv3) grants a 1,024-GPU job one tree per leaf; an Ethernet switch has none; a
    layout that puts more DP groups on one leaf than the trees a switch holds is not granted."""
    w = _wl(1024, {"tp": 8, "pp": 4, "vp": 5})
    ib = SimpleNamespace(in_network_reduction="SHARPv3", radix=64)
    g = sharp_grant(ib, w)
    assert g["granted"] and g["trees_per_leaf"] == 1 and g["operations"] == ["all-reduce"]
    assert sharp_grant(SimpleNamespace(in_network_reduction=None, radix=64), w) is None
    # tp-pp-dp, TP 1: a node's 8 GPUs are 8 stages, each stage's DP group on its own rail
    lay = Layout(tp=1, pp=8, dp=128, order="tp-pp-dp")
    assert trees_per_leaf(lay, 1024, 8, 64, 8, 1) == 1
    lay = Layout(tp=1, pp=2, dp=512)  # default order: 2 stages of 512 ranks, 64 nodes each
    assert trees_per_leaf(lay, 1024, 8, 64, 8, 1) == 1
    lay = Layout(tp=1, pp=64, dp=16)  # 16-rank DP groups, 64 stages of 2 nodes: 16 groups a leaf
    assert trees_per_leaf(lay, 1024, 8, 64, 8, 1) > SHARP_TREES_PER_SWITCH


def test_sharp_setting_is_a_checked_assumption():
    assert check_overrides({"sharp": "off"}) == {"sharp": "off"}
    with pytest.raises(InputError, match="assumptions.sharp"):
        check_overrides({"sharp": "maybe"})
