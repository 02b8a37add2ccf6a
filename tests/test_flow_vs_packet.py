"""Flow-level model vs packet engine on collective completion time at 128–256 hosts (issue 4):
agreement within 10 % where the flow model's max-min sharing matches what packets do."""

import pytest

from aifabric.topology import fat_tree, rail_optimized
from aifabric.workload.agreement import agreement_table, format_table

G = 10**9


@pytest.mark.validation
def test_collective_completion_agrees_within_10_percent():
    """Ring all-reduce on 128 hosts (RoCE ECMP), the NCCL double-binary-tree all-reduce under RoCE
    ECMP, all-to-all with IB static routing, and ring all-reduce / all-to-all on a 256-GPU
    rail-optimised fabric: |flow/packet − 1| ≤ 10 %."""
    ft = fat_tree(8, 100 * G, 10**6)
    rail = rail_optimized(256, 400 * G)
    cases = [
        dict(
            op="all-reduce",
            size_bytes=64 * 2**20,
            topology=ft,
            technology="roce",
            routing="ecmp",
            gpus_per_node=1,
        ),
        dict(
            op="all-reduce",
            size_bytes=16 * 2**20,
            topology=ft,
            technology="roce",
            routing="ecmp",
            algorithm="tree",
            gpus_per_node=1,
        ),
        dict(
            op="all-to-all",
            size_bytes=16 * 2**20,
            topology=ft,
            technology="infiniband",
            routing="static",
            gpus_per_node=1,
        ),
        dict(op="all-reduce", size_bytes=256 * 2**20, topology=rail, technology="roce", routing="ecmp"),
        dict(op="all-to-all", size_bytes=64 * 2**20, topology=rail, technology="roce", routing="ecmp"),
    ]
    df = agreement_table(cases)
    print("\n" + format_table(df))
    assert (df["gap"].abs() <= 0.10).all(), format_table(df)
    assert (df["packet_time_us"] > 0).all()


@pytest.mark.validation
def test_known_limits_of_the_fluid_model():
    """Where the flow model is known to be optimistic (bench/FLOW_RESULTS.md): lossless fabrics
    share a congested port per *input link* (PFC pauses / credits per ingress), max-min shares it
    per flow, so when two flows arrive over one link the packet tail is longer — the tree
    all-reduce under IB static routing next to the trees' roots (−10.8 %), and PFC head-of-line
    blocking in a 128-host all-to-all under ECMP (−17.5 %). The flow model must stay optimistic
    (never slower than packets) and within 20 % there; a larger gap is a regression."""
    ft = fat_tree(8, 100 * G, 10**6)
    cases = [
        dict(
            op="all-reduce",
            size_bytes=16 * 2**20,
            topology=ft,
            technology="infiniband",
            routing="static",
            algorithm="tree",
            gpus_per_node=1,
        ),
        dict(
            op="all-to-all",
            size_bytes=16 * 2**20,
            topology=ft,
            technology="roce",
            routing="ecmp",
            gpus_per_node=1,
        ),
    ]
    df = agreement_table(cases)
    print("\n" + format_table(df))
    assert ((df["gap"] < 0) & (df["gap"] >= -0.20)).all(), format_table(df)
