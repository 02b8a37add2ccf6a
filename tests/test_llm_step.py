"""Step-time model: overlap windows, exposure, attribution of losses, MFU as an output."""

import pytest

from aifabric.workload.llm.compute import head_time, layer_time
from aifabric.workload.llm.gpus import get_gpu
from aifabric.workload.llm.layout import Framework, Layout
from aifabric.workload.llm.models import get_model, model_from_mapping
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.step import group_time, step_time

H100 = get_gpu("h100")


class StubComm:
    """α-β network with free NVLink; ``scale`` multiplies the network time of one op (e.g. the DP
    all-reduce) so a test can change t_DP alone."""

    def __init__(self, link_gbps=25.0, scale_op=None, scale=1.0):
        self.beta = link_gbps * 1e9 / 8
        self.scale_op, self.scale = scale_op, scale

    def collective_s(self, op, size_bytes, ranks, span):
        if span == "nvlink" or ranks < 2:
            return 0.0
        n = ranks
        f = {"all-reduce": 2 * (n - 1) / n, "all-gather": (n - 1) / n, "reduce-scatter": (n - 1) / n}.get(
            op, 1.0
        )
        t = 10e-6 + size_bytes * f / self.beta
        return t * (self.scale if op == self.scale_op else 1.0)


# a small dense model whose output layer is negligible, so pipeline stages are balanced
TOY = model_from_mapping(
    {
        "name": "toy",
        "layers": 32,
        "hidden": 4096,
        "ffn_hidden": 14336,
        "heads": 32,
        "kv_heads": 8,
        "vocab": 256,
    }
)


def _ddp_case(comm, **kw):
    """8B on 32 H100: tp 8 in the node, dp 4 over the network, 4 micro-batches, DDP all-reduce."""
    args = dict(
        model=get_model("llama3.1-8b"),
        gpu=H100,
        gpus=32,
        layout=Layout(tp=8, pp=1, cp=1, dp=4),
        seq_len=8192,
        global_batch=16,
        comm=comm,
        fw=Framework(zero=0),
    )
    args.update(kw)
    return step_time(**args)


def test_exposed_dp_is_t_dp_minus_last_micro_batch_backward():
    """Exposed DP = max(0, t_DP − the last micro-batch's backward), within 5 %, hand-checked: the window
    is L × layer backward + output-layer backward of one micro-batch, not the whole step's backward."""
    comm = StubComm()
    r = _ddp_case(comm)
    m = get_model("llama3.1-8b")
    lt = layer_time(m, H100, "bf16", 8192, 8192, 8, moe=False)
    window = m.layers * lt.bwd_s + head_time(m, H100, "bf16", 8192, 8)[1]
    grad_bytes = (m.total_params / 8) * 4  # FP32 gradients of the local (TP-split) parameters
    t_dp = comm.collective_s("all-reduce", grad_bytes, 4, "network")
    dp = next(c for c in r.collectives if c.group == "dp")
    assert dp.op == "all-reduce" and dp.span == "network" and dp.ranks == 4
    assert dp.overlap_window_s == pytest.approx(window, rel=0.05)
    assert dp.time_each_s == pytest.approx(t_dp, rel=0.05)
    assert r.breakdown.exposed_s["dp"] == pytest.approx(max(0.0, t_dp - window), rel=0.05)
    assert r.breakdown.exposed_s["dp"] > 0.5 * t_dp  # the slow network really shows


def test_doubling_t_dp_changes_step_by_the_change_in_exposed_dp():
    """Doubling only the DP all-reduce time changes the step time by exactly the change in exposed DP."""
    a = _ddp_case(StubComm())
    b = _ddp_case(StubComm(scale_op="all-reduce", scale=2.0))
    d_step = b.iteration_s - a.iteration_s
    d_exposed = b.breakdown.exposed_s["dp"] - a.breakdown.exposed_s["dp"]
    assert d_exposed > 0
    assert d_step == pytest.approx(d_exposed, rel=1e-9)


def test_fast_network_hides_dp_in_the_window():
    """When t_DP is shorter than the last micro-batch's backward, DP exposes nothing but the per-step
    gradient-norm and loss all-reduces (latency only, nothing to hide them behind)."""
    r = _ddp_case(StubComm(link_gbps=4000.0))
    per_step = sum(c.exposed_s for c in r.collectives if "per step" in c.window)
    assert 0 < per_step < 1e-3
    assert r.breakdown.exposed_s["dp"] == pytest.approx(per_step, abs=1e-12)


def test_breakdown_sums_to_the_step():
    """compute + bubble + optimizer + exposed per group = iteration time, for dense, MoE, ZeRO-2/3."""
    net = AlphaBetaNetwork()
    cases = [
        (
            get_model("llama3.1-70b"),
            256,
            Layout(tp=4, pp=4, cp=2, vp=5, dp=8),
            512,
            Framework(tp_comm_overlap=True),
        ),
        (get_model("mixtral-8x7b"), 64, Layout(tp=2, pp=2, cp=1, dp=16, ep=8), 256, Framework()),
        (get_model("llama3.1-8b"), 64, Layout(tp=2, pp=1, cp=1, dp=32), 256, Framework(zero=3)),
        (
            get_model("llama3.1-8b"),
            64,
            Layout(tp=2, pp=2, cp=1, dp=16),
            256,
            Framework(zero=2, recompute="full"),
        ),
    ]
    for model, gpus, lay, gbs, fw in cases:
        r = step_time(model, H100, gpus, lay, 4096, gbs, net, fw=fw)
        b = r.breakdown
        total = b.compute_s + b.bubble_s + b.optimizer_s + b.exposed_total_s + b.straggler_s
        assert total == pytest.approx(r.iteration_s, rel=1e-9), (model.name, fw)
        assert set(b.exposed_s) == {"tp", "cp", "pp", "dp", "ep"}


def test_growing_dp_at_fixed_batch_grows_the_bubble_not_the_network():
    """At a fixed global batch, more DP means fewer micro-batches per replica: the bubble's share
    grows, and it is reported as bubble — with a free network nothing is reported as exposed."""
    free = StubComm(link_gbps=1e9)
    shares = []
    for gpus in (64, 128, 256):
        lay = Layout(tp=8, pp=4, cp=1, dp=gpus // 32)
        r = step_time(TOY, H100, gpus, lay, 8192, 64, free)
        shares.append(r.breakdown.bubble_s / r.iteration_s)
        per_step = sum(c.exposed_s for c in r.collectives if "per step" in c.window)  # latency only
        assert r.breakdown.exposed_total_s - per_step < 1e-3 * r.iteration_s
        m = r.micro_batches
        assert r.breakdown.bubble_s == pytest.approx(3 / m * r.breakdown.compute_s, rel=0.02)  # (pp−1)/M
    assert shares[0] < shares[1] < shares[2]


def test_interleaving_divides_the_bubble_by_vp():
    """Interleaved 1F1B with vp chunks per rank: bubble = (pp − 1)/(vp · M) of the pipeline time."""
    free = StubComm(link_gbps=1e9)
    one = step_time(TOY, H100, 64, Layout(tp=8, pp=4, dp=2), 8192, 32, free)
    four = step_time(TOY, H100, 64, Layout(tp=8, pp=4, vp=4, dp=2), 8192, 32, free)
    assert four.breakdown.bubble_s == pytest.approx(one.breakdown.bubble_s / 4, rel=1e-6)
    assert four.breakdown.compute_s == pytest.approx(one.breakdown.compute_s, rel=1e-9)


def test_tp_is_exposed_unless_tp_comm_overlap():
    """TP all-gathers/reduce-scatters are exposed in full by default and partly hidden with TP-comm overlap."""
    net = AlphaBetaNetwork()
    lay = Layout(tp=8, pp=1, cp=1, dp=8)
    off = step_time(get_model("llama3.1-70b"), H100, 64, lay, 4096, 64, net, fw=Framework(zero=3))
    on = step_time(
        get_model("llama3.1-70b"), H100, 64, lay, 4096, 64, net, fw=Framework(zero=3, tp_comm_overlap=True)
    )
    tp_total = sum(c.time_s for c in off.collectives if c.group == "tp")
    assert off.breakdown.exposed_s["tp"] == pytest.approx(tp_total, rel=1e-6)
    assert 0 < on.breakdown.exposed_s["tp"] < off.breakdown.exposed_s["tp"]


def test_moe_all_to_all_overlap_and_span():
    """EP over 16 GPUs leaves the 8-GPU node (network); overlapping the all-to-all with compute hides part."""
    net = AlphaBetaNetwork()
    model = get_model("mixtral-8x22b")
    lay = Layout(tp=1, pp=8, cp=1, dp=16, ep=8)
    lay16 = Layout(tp=1, pp=4, cp=1, dp=32, ep=8)
    plain = step_time(model, H100, 128, lay, 4096, 256, net)
    over = step_time(model, H100, 128, lay, 4096, 256, net, fw=Framework(ep_a2a_overlap=True))
    assert 0 <= over.breakdown.exposed_s["ep"] < plain.breakdown.exposed_s["ep"]
    ep = next(c for c in plain.collectives if c.group == "ep")
    assert ep.op == "all-to-all" and ep.span == "nvlink"
    assert group_time(net, "all-to-all", 1e6, 16, 1, 8)[1] == "nvlink+network"
    # expert gradients reduce over dp·cp/ep ranks, dense gradients over dp·cp
    r = step_time(model, H100, 128, lay16, 4096, 256, net)
    assert r.iteration_s > 0


def test_zero3_gathers_every_micro_batch():
    """ZeRO-3/FSDP gathers parameters per layer in every micro-batch: on a slow network its exposed DP
    grows with the number of micro-batches, while ZeRO-1 reduces once per step."""
    slow = StubComm(link_gbps=50.0)
    lay = Layout(tp=8, pp=1, cp=1, dp=4)
    m8 = get_model("llama3.1-8b")
    z3 = [
        step_time(m8, H100, 32, lay, 4096, g, slow, fw=Framework(zero=3)).breakdown.exposed_s["dp"]
        for g in (8, 32)
    ]
    z1 = [
        step_time(m8, H100, 32, lay, 4096, g, slow, fw=Framework(zero=1)).breakdown.exposed_s["dp"]
        for g in (8, 32)
    ]
    assert z3[1] > 2 * z3[0]
    assert z1[1] <= z1[0] * 1.01


def test_mfu_is_an_output_and_compute_efficiency_overrides():
    """MFU = model FLOPs / (step × GPUs × BF16 peak); a measured compute efficiency replaces the fitted one."""
    net = AlphaBetaNetwork()
    m = get_model("llama3.1-8b")
    lay = Layout(tp=1, cp=2, dp=4)
    r = step_time(m, H100, 8, lay, 8192, 128, net)
    assert r.mfu == pytest.approx(r.model_flops_per_step / (r.iteration_s * 8 * 989.4e12), rel=1e-9)
    assert 0.3 < r.mfu < 0.8
    slow = step_time(m, H100, 8, lay, 8192, 128, net, compute_efficiency=0.3)
    assert slow.iteration_s > 1.5 * r.iteration_s
    fp8 = step_time(m, H100, 8, lay, 8192, 128, net, precision="fp8")
    assert fp8.iteration_s < r.iteration_s


def test_to_dict_has_the_contract_keys():
    """StepResult.to_dict has iteration_s, mfu, layout (tp, pp, cp, vp, dp, ep, micro_batch) and breakdown."""
    r = step_time(get_model("llama3.1-8b"), H100, 8, Layout(tp=1, cp=2, dp=4), 8192, 128, AlphaBetaNetwork())
    d = r.to_dict()
    assert {"iteration_s", "mfu", "layout", "breakdown"} <= set(d)
    assert set(d["layout"]) == {"tp", "pp", "cp", "vp", "dp", "ep", "micro_batch", "order"}
    assert {"compute_s", "bubble_s", "exposed_s"} <= set(d["breakdown"])
    assert all(
        {"op", "size_bytes", "ranks", "span", "count", "overlap_window_s"} <= set(c) for c in d["collectives"]
    )


def test_experts_with_few_tokens_are_bound_by_weight_reads():
    """With ep = 1 every GPU holds all 256 DeepSeek-V3 experts and each sees a few tokens: the MoE layer
    is bound by reading expert weights from HBM (roofline), slower than with experts spread over ep 64;
    a dense layer with thousands of tokens stays compute-bound."""
    m = get_model("deepseek-v3")
    narrow = layer_time(m, H100, "bf16", 4096, 4096, 1, moe=True, ep=1)
    wide = layer_time(m, H100, "bf16", 4096, 4096, 1, moe=True, ep=64)
    expert_bytes = 256 * m.expert_params * 2.0
    assert narrow.gemm_fwd_s > expert_bytes / H100.hbm_sustained_bytes_per_s  # + the dense part
    assert narrow.gemm_fwd_s > 1.2 * wide.gemm_fwd_s
    assert narrow.gemm_bwd_s > 2.5 * wide.gemm_bwd_s  # backward also accumulates FP32 gradients
    dense = layer_time(get_model("llama3.1-70b"), H100, "bf16", 8192, 8192, 4, moe=False)
    flops_bound = 2 * 8192 * get_model("llama3.1-70b").dense_layer_params / 4 / (989.4e12 * 0.626)
    assert dense.gemm_fwd_s == pytest.approx(flops_bound, rel=0.05)


def test_interleaved_dp_exposure_is_per_chunk():
    """With vp chunks, each chunk's gradients start reducing at that chunk's last backward: when the
    chunks do not queue on the link, exposed DP = max(0, t_DP/vp − one chunk's backward) — far less
    than the non-interleaved max(0, t_DP − the stage's backward) would give for the same t_DP."""
    comm = StubComm(link_gbps=200.0)
    lay = Layout(tp=8, pp=4, vp=4, dp=2)
    r = step_time(TOY, H100, 64, lay, 8192, 32, comm, fw=Framework(zero=0))
    dp = next(c for c in r.collectives if c.group == "dp")
    assert dp.count == 4 and dp.overlap_window_s > 0
    gap = 4 * dp.overlap_window_s  # pp chunk-backwards between a stage's chunks in the drain
    assert dp.time_each_s <= gap  # the chunks do not queue
    expected = max(0.0, dp.time_each_s - dp.overlap_window_s)
    assert expected > 0
    assert r.breakdown.exposed_s["dp"] == pytest.approx(expected, rel=0.05)


def test_mla_up_proj_recompute_adds_the_up_projection_forward_to_backward():
    """``mla_up_proj`` (DeepSeek-V3 §3.3.4; the NVIDIA H100 recipe's --recompute_modules) recomputes
    MLA's up-projection GEMMs and latent norms: the step grows by exactly (micro-batches × layers on
    the slowest stage × that forward), which is the counted FLOPs at the GEMM rate plus the norms'
    bytes; core-attention (``selective``) recompute costs a different amount; a model without MLA
    recomputes nothing."""
    ds = get_model("deepseek-v3")
    net = AlphaBetaNetwork(nvlink_bytes_per_s=H100.nvlink_bytes_per_s)
    lay = Layout(tp=2, pp=8, cp=1, dp=32, ep=64)
    fw = Framework(expert_tp=1)
    kw = dict(model=ds, gpu=H100, gpus=512, layout=lay, seq_len=4096, global_batch=4096, comm=net)
    base = step_time(**kw, fw=fw)
    up = step_time(**kw, fw=Framework(expert_tp=1, recompute="mla_up_proj"))
    sel = step_time(**kw, fw=Framework(expert_tp=1, recompute="selective"))
    # hand count of one layer's up-projection forward on one GPU (4096 tokens, tp 2): the two GEMMs
    # latent → Q (1536 → 128·192/2) and latent → K, V (512 → 128·256/2) at their per-shape rates
    from aifabric.workload.llm.compute import CALIBRATION
    from aifabric.workload.llm.gemm import gemm_time

    m = ds.mla
    rate = H100.bf16_dense_tflops * 1e12 * CALIBRATION.gemm_efficiency
    per_layer = (
        gemm_time(4096, 128 * 192 / 2, m.q_lora_rank, "bf16", H100.sms, rate)
        + gemm_time(4096, 128 * 256 / 2, m.kv_lora_rank, "bf16", H100.sms, rate)
        + 2 * 2 * 4096 * (1536 + 512) / H100.hbm_sustained_bytes_per_s
    )
    lt = layer_time(ds, H100, "bf16", 4096, 4096, 2, moe=True, ep=64, etp=1)
    assert lt.mla_up_fwd_s == pytest.approx(per_layer, rel=1e-9)
    # 4096 / 32 = 128 micro-batches, 8 layers on the slowest stage (61 layers over 8 stages)
    assert up.breakdown.compute_s - base.breakdown.compute_s == pytest.approx(128 * 8 * per_layer, rel=1e-6)
    assert up.iteration_s > base.iteration_s and sel.iteration_s != up.iteration_s
    # no MLA: nothing to recompute
    llama = dict(kw, model=get_model("llama3.1-8b"), gpus=8, layout=Layout(tp=1, pp=1, cp=2, dp=4),
                 seq_len=8192, global_batch=128)  # fmt: skip
    assert step_time(**llama, fw=Framework(recompute="mla_up_proj")).iteration_s == pytest.approx(
        step_time(**llama, fw=Framework()).iteration_s, rel=1e-12
    )


def test_unknown_recompute_names_the_allowed_values():
    """A bad recompute value is one InputError listing none, selective, mla_up_proj, full."""
    from aifabric.errors import InputError

    with pytest.raises(InputError, match="mla_up_proj"):
        step_time(get_model("llama3.1-8b"), H100, 8, Layout(tp=1, pp=1, cp=2, dp=4), 8192, 128,
                  AlphaBetaNetwork(), fw=Framework(recompute="attn"))  # fmt: skip


def test_blockwise_fp8_slows_hopper_gemms_by_the_sourced_ratio_only():
    """Block-scaled FP8 (DeepSeek-V3's recipe) runs Hopper's FP8 GEMMs at 1,358/1,609 of per-tensor
    FP8 (DeepGEMM vs cuBLASLt, largest shapes): with flat GEMM rates, GEMM time ÷ that ratio exactly;
    per shape, the FLOP part slows by the ratio and the fixed per-kernel time does not; attention and
    element-wise work unchanged; BF16 runs and Blackwell (block scales in the tensor core) unchanged."""
    from aifabric.workload.llm.compute import BLOCKWISE_FP8_HOPPER, CALIBRATION, Calibration

    ds = get_model("deepseek-v3")
    args = (ds, H100, "fp8", 4096, 4096, 1)
    flat = Calibration(**{**CALIBRATION.__dict__, "per_shape_gemm": False})
    tw = layer_time(*args, moe=True, ep=64, cal=flat)
    bw = layer_time(*args, moe=True, ep=64, fp8_recipe="blockwise", cal=flat)
    assert abs(BLOCKWISE_FP8_HOPPER - 0.844) < 1e-3
    assert bw.gemm_fwd_s == pytest.approx(tw.gemm_fwd_s / BLOCKWISE_FP8_HOPPER, rel=1e-9)
    assert bw.gemm_bwd_s == pytest.approx(tw.gemm_bwd_s / BLOCKWISE_FP8_HOPPER, rel=1e-9)
    tw_s = layer_time(*args, moe=True, ep=64)
    bw_s = layer_time(*args, moe=True, ep=64, fp8_recipe="blockwise")
    assert tw_s.gemm_fwd_s < bw_s.gemm_fwd_s < tw_s.gemm_fwd_s / BLOCKWISE_FP8_HOPPER
    assert (bw.attn_fwd_s, bw.ew_fwd_s) == (tw.attn_fwd_s, tw.ew_fwd_s)
    bf16 = (ds, H100, "bf16", 4096, 4096, 1)
    assert layer_time(*bf16, moe=True, fp8_recipe="blockwise") == layer_time(*bf16, moe=True)
    b200 = (ds, get_gpu("b200"), "fp8", 4096, 4096, 1)
    assert layer_time(*b200, moe=True, fp8_recipe="blockwise") == layer_time(*b200, moe=True)


def test_unknown_fp8_recipe_is_one_input_error():
    from aifabric.errors import InputError

    with pytest.raises(InputError, match="fp8_recipe"):
        step_time(get_model("llama3.1-8b"), H100, 8, Layout(tp=1, pp=1, cp=2, dp=4), 8192, 128,
                  AlphaBetaNetwork(), precision="fp8", fw=Framework(fp8_recipe="mxfp4"))  # fmt: skip


def test_expected_slowest_matches_order_statistics():
    """Blom's approximation of E[max of n standard normals] against exact values (Harter 1961: 0.5642
    for 2, 1.5388 for 10, 2.5076 for 100) within 5 %; 0 for one GPU."""
    from aifabric.workload.llm.step import expected_slowest

    assert expected_slowest(1) == 0.0
    for n, exact in ((2, 0.5642), (10, 1.5388), (100, 2.5076)):
        assert expected_slowest(n) == pytest.approx(exact, rel=0.05), n


def test_straggler_and_step_reductions_grow_with_dp():
    """At the same work per GPU (DP doubles with the GPUs and the batch), the straggler lag and the
    per-step gradient-norm / loss all-reduces grow; without DP there is no straggler lag."""
    net = AlphaBetaNetwork()
    m = get_model("llama3.1-8b")
    lags, norms = [], []
    for dp in (1, 8, 64):
        r = step_time(m, H100, 2 * dp, Layout(tp=2, pp=1, cp=1, dp=dp), 4096, 16 * dp, net)
        lags.append(r.breakdown.straggler_s)
        norms.append(sum(c.time_s for c in r.collectives if "gradient norm" in c.window))
    assert lags[0] == 0.0 < lags[1] < lags[2]
    assert 0 < norms[0] < norms[1] < norms[2]


def test_step_reductions_are_latency_bound_at_16k_gpus():
    """The gradient-norm and loss all-reduces (4 bytes) are timed as a tree: at 16,384 GPUs they cost
    well under a millisecond, never a ring's 2(n − 1) latencies."""
    from aifabric.workload.llm.step import step_reductions

    lay = Layout(tp=8, pp=16, cp=1, dp=128)
    colls = step_reductions(AlphaBetaNetwork(), lay, 16384, 1, 128, 8)
    assert {c.window for c in colls} == {"none (gradient norm, per step)", "none (loss, per step)"}
    assert 0 < sum(c.exposed_s for c in colls) < 1e-3
