"""Training-iteration model: compute from FLOPs and MFU, collectives per parallel group, overlap."""

import pytest

from aifabric.errors import InputError
from aifabric.workload.training import (
    MODELS,
    Parallelism,
    check_parallelism,
    default_parallelism,
    get_model,
    iteration_time,
    training_cost,
)


class LinearComm:
    """α-β stand-in: 10 µs + bytes × ring factor / bandwidth; records calls."""

    def __init__(self, net_bw=45e9, nvl_bw=370e9):
        self.net_bw, self.nvl_bw, self.calls = net_bw, nvl_bw, []

    def collective_s(self, op, size, ranks, span):
        self.calls.append((op, size, ranks, span))
        bw = self.nvl_bw if span == "nvlink" else self.net_bw
        f = {"all-reduce": 2 * (ranks - 1) / ranks, "all-to-all": (ranks - 1) / ranks}.get(op, 1.0)
        return 10e-6 + size * f / bw


def test_compute_time_from_flops():
    """Compute = (6·N·T + 12·L·s·h·T) / (GPUs · peak · MFU): Llama-3 70B, 8M tokens, 1024 H100."""
    m = get_model("llama3-70b")
    b = iteration_time(m, Parallelism(8, 1, 128), 1024, 989.4, LinearComm(), mfu=0.4)
    T = 8 * 2**20
    flops = 6 * 70.6e9 * T + 12 * 80 * 8192 * 8192 * T
    assert b.compute_s == pytest.approx(flops / (1024 * 989.4e12 * 0.4))
    assert b.tokens_per_s == pytest.approx(T / b.iteration_s)


def test_dp_allreduce_size_and_overlap():
    """DP all-reduce carries the stage's bf16 gradients; with full overlap it hides behind backward."""
    m = get_model("llama3-8b")
    comm = LinearComm()
    b = iteration_time(m, Parallelism(8, 1, 128), 1024, 989.4, comm)
    dp = [c for c in comm.calls if c[3] == "network" and c[0] == "all-reduce"]
    assert dp and dp[0][1] == pytest.approx(8.03e9 / 8 * 2)
    assert b.dp_exposed_s == 0.0
    slow = iteration_time(m, Parallelism(8, 1, 128), 1024, 989.4, LinearComm(net_bw=0.5e9))
    assert slow.dp_exposed_s > 0 and slow.iteration_s > b.iteration_s


def test_no_overlap_exposes_all_dp():
    """overlap=0 exposes the whole DP all-reduce."""
    m = get_model("llama3-8b")
    b = iteration_time(m, Parallelism(8, 1, 128), 1024, 989.4, LinearComm(), overlap=0.0)
    assert b.dp_exposed_s == pytest.approx(b.dp_comm_s)


def test_tp_stays_on_nvlink_and_pp_bubble():
    """TP collectives use NVLink; PP adds the 1F1B bubble (p−1)/(m+p−1) of compute."""
    m = get_model("llama3-405b")
    comm = LinearComm()
    b = iteration_time(m, Parallelism(8, 8, 16), 1024, 989.4, comm)
    assert {c[3] for c in comm.calls if c[0] == "all-reduce" and c[2] == 8} == {"nvlink"}
    mb = 16 * 2**20 / 8192 / 16
    assert b.pp_bubble_s == pytest.approx(b.compute_s * 7 / (mb + 7))


def test_moe_has_all_to_all():
    """A DeepSeek-style MoE with EP across nodes does all-to-alls on the network."""
    m = get_model("deepseek-moe")
    p = default_parallelism(m, 2048)
    comm = LinearComm()
    b = iteration_time(m, p, 2048, 989.4, comm)
    assert p.ep > 8 and b.ep_comm_s > 0
    assert any(c[0] == "all-to-all" and c[3] == "network" for c in comm.calls)


@pytest.mark.parametrize(
    ("par", "needle"),
    [
        (Parallelism(8, 2, 32), "≠ 1024"),
        (Parallelism(16, 1, 64), "beyond one node"),
        (Parallelism(3, 1, 341), "≠"),
        (Parallelism(8, 1, 128, ep=2), "MoE"),
        (Parallelism(8, 128, 1), "layers"),
    ],
)
def test_impossible_parallelism(par, needle):
    """TP × PP × DP ≠ GPUs, TP beyond a node, EP on a dense model, PP > layers: InputError."""
    with pytest.raises(InputError, match=needle):
        check_parallelism(par, 1024, 8, get_model("llama3-70b"))


def test_unknown_model():
    """Unknown models list the built-ins."""
    with pytest.raises(InputError, match="llama3-70b"):
        get_model("llama9")


@pytest.mark.parametrize("name", list(MODELS))
def test_default_parallelism_valid(name):
    """The default layout is valid for every built-in model at 1,024 (MoE: 2,048) H100."""
    m = get_model(name)
    gpus = 2048 if m.is_moe else 1024
    p = default_parallelism(m, gpus)
    check_parallelism(p, gpus, 8, m)


def test_training_cost():
    """Cost = amortised capex × time; 1e12 tokens at 1e6 tok/s = 11.57 days."""
    c = training_cost(1e12, 1e6, 1024, 7e6, 35_000, lifetime_years=4)
    assert c["train_days"] == pytest.approx(1e6 / 86400)
    assert c["train_cost_usd"] == pytest.approx((1024 * 35_000 + 7e6) / (4 * 365.25 * 86400) * 1e6)
