"""Memory per GPU by precision and sharding, counted per pipeline rank; the refusal names the
breakdown; every published layout goes through the check ``train`` applies."""

import pytest

from aifabric.errors import InputError
from aifabric.workload.llm.gpus import GIB, get_gpu
from aifabric.workload.llm.layout import Framework, Layout, rank_layers
from aifabric.workload.llm.memory import check_memory, in_flight, memory_per_gpu, rank_params
from aifabric.workload.llm.models import get_model
from aifabric.workload.llm.validation import CASES, validation_table

# Published layouts the memory check still refuses (none: Meta's 8,192-GPU layout fits with one layer
# per model chunk, 79.63 of 79.65 GiB; DeepSeek-V3 with DualPipe's in-flight count and its FP8 caching)
KNOWN_MEMORY_REFUSALS: set[str] = set()


def _state_per_param(fw: Framework, dp: int) -> float:
    """(weights + gradients + optimizer) bytes per parameter of a one-stage layout over ``dp`` ranks."""
    m = get_model("llama3.1-8b")
    lay = Layout(tp=1, pp=1, dp=dp)
    mem = memory_per_gpu(m, lay, 4096, dp, fw)
    return (mem.weights_bytes + mem.grads_bytes + mem.optimizer_bytes) / m.total_params


@pytest.mark.parametrize(
    ("fw", "dp", "expected"),
    [
        (Framework(zero=0), 8, 18.0),  # bf16 param, fp32 grads, non-distributed: 18
        (Framework(zero=1), 8, 6 + 12 / 8),  # distributed: 6 + 12/d
        (Framework(zero=1, grad_reduce_fp32=False), 8, 4 + 16 / 8),  # 16-bit grads: 4 + 16/d
        (Framework(zero=0, grad_reduce_fp32=False), 4, 20.0),  # 16-bit grads, non-distributed: 20
        (Framework(zero=2), 8, 2 + 16 / 8),  # gradients sharded too
    ],
)
def test_state_bytes_follow_megatrons_distributed_optimizer_table(fw, dp, expected):
    """Bytes per parameter as Megatron's distributed-optimizer table counts them (d = DP size)."""
    assert _state_per_param(fw, dp) == pytest.approx(expected, rel=1e-9)


def test_bf16_gradients_halve_the_gradient_buffer():
    m, lay = get_model("llama3.1-70b"), Layout(tp=8, pp=4, dp=8)
    fp32 = memory_per_gpu(m, lay, 8192, 64)
    bf16 = memory_per_gpu(m, lay, 8192, 64, Framework(grad_reduce_fp32=False))
    assert bf16.grads_bytes == pytest.approx(fp32.grads_bytes / 2, rel=1e-9)
    assert bf16.total_bytes < fp32.total_bytes


@pytest.mark.parametrize(("pp", "vp", "m"), [(16, 4, 32), (8, 5, 64), (4, 1, 16), (8, 12, 8)])
def test_in_flight_follows_megatrons_warm_up(pp, vp, m):
    """Rank 0 holds pp + (pp − 1)/vp micro-batches (interleaved) or pp (1F1B), never more than M;
    later ranks hold fewer."""
    lay = Layout(tp=1, pp=pp, vp=vp, dp=1)
    want = min(m * vp, 2 * (pp - 1) + (vp - 1) * pp + 1) / vp if vp > 1 else min(pp, m)
    assert in_flight(lay, 0, m) == pytest.approx(want)
    assert all(in_flight(lay, r + 1, m) <= in_flight(lay, r, m) for r in range(pp - 1))
    if vp > 1 and m > pp:  # m = pp: Megatron runs every chunk forward first (all warm-up)
        assert in_flight(lay, 0, m) == pytest.approx(pp + (pp - 1) / vp)


@pytest.mark.parametrize(("layers", "pp"), [(126, 16), (80, 4), (61, 16), (32, 1), (96, 8)])
def test_ranks_hold_every_layer_and_the_embeddings(layers, pp):
    """The ranks' layers add up to the model's; the embedding sits on rank 0, the output layer last."""
    assert sum(rank_layers(layers, pp)) == pytest.approx(layers)
    m = get_model("llama3.1-405b")
    lay = Layout(tp=8, pp=16, vp=4, dp=64)
    total = sum(rank_params(m, lay, 8, r).total for r in range(16)) * 8
    assert total == pytest.approx(m.total_params, rel=1e-9)  # untied: nothing counted twice


def test_refusal_names_the_breakdown_and_the_largest_term():
    """A refused layout prints each term in GiB, the rank, and the largest term, on one line."""
    m, gpu = get_model("llama3.1-405b"), get_gpu("h100")
    lay = Layout(tp=8, pp=16, vp=4, dp=64)
    mem = memory_per_gpu(m, lay, 8192, 2048)
    with pytest.raises(InputError) as e:
        check_memory(mem, lay, gpu.hbm_bytes)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("training.parallelism")
    for word in ("weights", "gradients", "optimizer", "activations", "reserve", "largest: activations"):
        assert word in msg
    assert f"{mem.total_bytes / GIB:.1f} GiB per GPU" in msg and "on pipeline rank" in msg


def test_bf16_gradients_admit_a_layout_fp32_gradients_refuse():
    """70B on 64 H100 (TP 8, DP 8, seq 8192): FP32 main grads do not fit, BF16 ones do."""
    m, gpu = get_model("llama3.1-70b"), get_gpu("h100")
    lay = Layout(tp=8, pp=1, cp=1, dp=8)
    fp32 = memory_per_gpu(m, lay, 8192, 128, Framework(zero=1))
    bf16 = memory_per_gpu(m, lay, 8192, 128, Framework(zero=1, grad_reduce_fp32=False))
    assert fp32.total_bytes > gpu.hbm_bytes >= bf16.total_bytes


@pytest.fixture(scope="module")
def rows():
    return {r["case"]: r for r in validation_table()}


@pytest.mark.parametrize("case", [c.case for c in CASES])
def test_published_layouts_pass_the_memory_check(case, rows):
    """Every published layout goes through train's memory check; the ones that ran fit (strict xfail
    for the documented refusals)."""
    mem = rows[case]["memory"]
    assert mem["need_gib"] > 0 and mem["largest"] in ("weights", "gradients", "optimizer", "activations")
    if case in KNOWN_MEMORY_REFUSALS:
        if not mem["fits"]:
            pytest.xfail(f"known refusal: {mem['need_gib']:.1f} of {mem['hbm_gib']:.1f} GiB")
        pytest.fail(f"{case} now fits: remove it from KNOWN_MEMORY_REFUSALS")
    assert mem["fits"], mem["refusal"]


def test_every_validation_case_goes_through_trains_memory_check(rows):
    """The validation table runs each case's layout through check_memory, the function train calls, and
    no layout a published run used is refused."""
    import inspect

    from aifabric.workload.llm import validation

    assert "check_memory(" in inspect.getsource(validation.memory_check)
    assert set(rows) == {c.case for c in CASES}
    assert [c for c, r in rows.items() if not r["memory"]["fits"]] == []


def test_microbatch_group_lowers_the_interleaved_in_flight_count():
    """Megatron-Core's microbatch_group_size_per_vp_stage (default pp): warm-up 2(pp − r − 1) + (vp − 1)·G."""
    lay = Layout(tp=8, pp=16, vp=4, dp=64)
    assert in_flight(lay, 1, 32) == pytest.approx((2 * 14 + 3 * 16 + 1) / 4)
    assert in_flight(lay, 1, 32, Framework(pp_group=8)) == pytest.approx((2 * 14 + 3 * 8 + 1) / 4)


def test_dualpipe_and_fp8_moe_activations():
    """DualPipe: pp + 1 micro-batches in flight and parameters twice; DeepSeek's FP8 MoE caching keeps
    fewer activation bytes than BF16 MoE activations."""
    m = get_model("deepseek-v3")
    lay = Layout(tp=1, pp=16, vp=2, dp=128, ep=64)
    assert in_flight(lay, 0, 60, Framework(dualpipe=True)) == 17.0
    base = memory_per_gpu(m, lay, 4096, 15360, Framework(), precision="fp8")
    dual = memory_per_gpu(m, lay, 4096, 15360, Framework(dualpipe=True), precision="fp8")
    assert dual.weights_bytes == pytest.approx(2 * base.weights_bytes)
    fp8 = memory_per_gpu(m, lay, 4096, 15360, Framework(fp8_moe_activations=True), precision="fp8")
    assert fp8.activations_bytes < 0.8 * base.activations_bytes
