"""Training step time of one layout on one fabric: compute, pipeline bubble, and the *exposed* part
of every communication, each with its true overlap window. MFU is an output.

Schedule (per step, ``M`` micro-batches per replica, the slowest pipeline stage sets the pace):

    step = M · (F + B) + (pp − 1)/vp · (F̄ + B̄) + PP exposed + DP exposed + optimizer + straggler

``F``/``B`` are one micro-batch's forward/backward on a stage (compute, recomputation, and the
exposed TP, CP, EP and FSDP communication of that micro-batch); the bubble is the interleaved-1F1B
fill and drain, (pp − 1)/(vp · M) of the pipeline time, and is reported as *bubble* (idle GPUs),
never as network time.

Communication and its overlap window (Megatron-Core / NeMo behaviour):

* **TP** (with sequence parallelism): per layer and micro-batch 2 all-gathers + 2 reduce-scatters
  of the activations forward and the same backward (again in backward under full recompute);
  exposed in full, or with ``tp_comm_overlap`` only the part longer than that direction's GEMMs.
* **CP** (ring attention): cp − 1 KV exchanges forward and cp − 1 KV + dKV exchanges backward per
  layer, overlapped with that layer's attention.
* **EP**: dispatch + combine all-to-alls per MoE layer forward and backward (bytes, FP8 scales and
  node-limited routing: :func:`aifabric.workload.llm.groups.ep_dispatch_combine`); exposed in full
  unless ``ep_a2a_overlap`` (then overlapped with another micro-batch's layer compute).
* **PP**: sends of the activations between stages; the 2(pp − 1) of fill and drain are on the
  critical path; steady-state sends too unless ``overlap_p2p`` (default: with interleaving).
* **DP**, ZeRO-0/1: gradients (FP32 by default) reduce-scattered (all-reduced for ZeRO-0) bucket by
  bucket during the *last* micro-batch's backward, per virtual-pipeline chunk from that chunk's last
  backward on; the link serialises the chunks; each stage's chunks end at different times and the
  stage that finishes last sets the exposure. Expert gradients reduce over dp·cp/ep ranks. The
  parameter all-gather (ZeRO ≥ 1) overlaps the next step's first forward of each chunk
  (overlap-param-gather). ZeRO-2: reduce-scatter after every micro-batch, in its backward.
  ZeRO-3/FSDP: parameter all-gathers per layer, prefetched one layer ahead (window: the layer's
  compute), and gradient reduce-scatters per layer in backward.

Costs that grow with the job's size at the same work per GPU:

* the DP collectives' ring and latency terms ((n − 1)/n of the bytes, NCCL's per-step latency)
  grow with the DP size (above);
* **per-step reductions** on the critical path before the optimizer step: the gradient-norm
  all-reduce (one FP32 value; over every GPU with the distributed optimizer, whose shards each hold
  part of the norm, else over the model-parallel ranks) and the loss all-reduce over DP (Megatron
  averages the reported loss over the DP group every step) — latency-bound, timed as NCCL's tree
  for small messages: 2·⌈log₂⌉ send-recv steps over the domain's ranks and over the domains;
* **straggler spread**: a synchronous step runs at the pace of its slowest GPU. Identical GPUs
  differ in speed (Sinha et al., "Not All GPUs Are Created Equal", SC'22, arXiv 2208.11035: 8 %
  average, up to 22 %, performance variation across GPUs of one SKU in one cluster, outliers 1.5×
  slower than the median). With per-GPU speeds spread normally with relative standard deviation
  σ (``Calibration.straggler_spread``, fitted on weak-scaling series only), the slowest of ``n``
  GPUs is E[max of n standard normals] · σ slower (Blom's approximation, 0 for one GPU);
  the compute and the bubble (GPU-bound parts) stretch by that, the network does not.

The network enters only through ``comm.collective_s(op, size_bytes, ranks, span)`` (span
``"nvlink"`` inside the NVLink domain, ``"network"`` one rank per domain on one rail). A group that
spans ``N`` domains with ``L`` of its ranks in each is timed hierarchically
(:func:`aifabric.workload.llm.groups.group_time`): the NVLink part over ``L`` ranks plus the network
part over ``N`` ranks with 1/L of the bytes (all-reduce, reduce-scatter, all-gather — each of the L
NICs carries its share), or the larger of the two with the full per-GPU bytes (all-to-all).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from statistics import NormalDist

from aifabric.errors import InputError
from aifabric.workload.llm.compute import CALIBRATION, Calibration, head_time, layer_time, optimizer_time
from aifabric.workload.llm.gpus import GpuSpec
from aifabric.workload.llm.groups import ep_dispatch_combine, group_domains, group_time
from aifabric.workload.llm.layout import (
    Framework,
    Layout,
    check_framework,
    check_layout,
    dense_sizes,
    domain_stride,
    expert_sizes,
    stage_layers,
)
from aifabric.workload.llm.memory import MemoryBreakdown, expert_dp, local_params, memory_per_gpu
from aifabric.workload.llm.models import ModelConfig
from aifabric.workload.llm.network import PIPELINE_SEND_RECV
from aifabric.workload.llm.overlap import MOE_MLP_SLOTS, Slot, slot_exposed, tp_table

GROUPS = ("tp", "cp", "pp", "dp", "ep")


@dataclass(frozen=True)
class Collective:
    """One kind of collective of a communication group in a step, and how much of it is exposed."""

    group: str
    op: str
    size_bytes: float
    ranks: int
    span: str  # nvlink | network | nvlink+network
    count: int  # per step, on one GPU of the slowest stage
    time_each_s: float
    overlap_window_s: float  # compute it can hide behind, per instance (0 = none)
    window: str  # what the window is
    exposed_s: float  # per step

    @property
    def time_s(self) -> float:
        return self.time_each_s * self.count

    def to_dict(self) -> dict:
        d = asdict(self)
        d["time_s"] = self.time_s
        return d


@dataclass(frozen=True)
class Breakdown:
    """Seconds per step. ``compute_s + bubble_s + sum(exposed_s) + optimizer_s + straggler_s ==
    iteration_s``."""

    compute_s: float
    bubble_s: float
    optimizer_s: float
    exposed_s: dict[str, float] = field(default_factory=dict)
    straggler_s: float = 0.0  # the slowest GPU's lag (straggler spread)

    @property
    def exposed_total_s(self) -> float:
        return sum(self.exposed_s.values())

    def to_dict(self) -> dict:
        return {
            "compute_s": self.compute_s,
            "bubble_s": self.bubble_s,
            "optimizer_s": self.optimizer_s,
            "straggler_s": self.straggler_s,
            "exposed_s": dict(self.exposed_s),
            "exposed_total_s": self.exposed_total_s,
        }


@dataclass(frozen=True)
class StepResult:
    """One layout's step on one fabric."""

    iteration_s: float
    mfu: float
    layout: Layout
    breakdown: Breakdown
    collectives: tuple[Collective, ...]
    memory: MemoryBreakdown
    gpus: int
    tokens_per_step: float
    model_flops_per_step: float
    micro_batches: int
    mfu_peak: str
    precision: str

    mfu_vs_precision_peak: float = 0.0  # the same FLOPs against the FP8 peak for FP8 runs
    overlap: dict = field(default_factory=dict)  # the overlap settings the step ran with

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.iteration_s

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.tokens_per_s / self.gpus

    def to_dict(self) -> dict:
        """The ``fabrics[].iteration`` contract: iteration_s, mfu, layout, breakdown (+ details)."""
        return {
            "iteration_s": self.iteration_s,
            "mfu": self.mfu,
            "mfu_peak": self.mfu_peak,
            "mfu_vs_precision_peak": self.mfu_vs_precision_peak,
            "layout": self.layout.to_dict(),
            "breakdown": self.breakdown.to_dict(),
            "tokens_per_s": self.tokens_per_s,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "micro_batches": self.micro_batches,
            "model_flops_per_step": self.model_flops_per_step,
            "memory": {k: v for k, v in self.memory.to_dict().items()},
            "collectives": [c.to_dict() for c in self.collectives],
            "overlap": dict(self.overlap),
        }


# ---- communication helpers ------------------------------------------------------------------
def group_strides(layout: Layout, etp: int, domain: int) -> dict[str, int]:
    """The stride each group is timed with in the layout's rank order
    (:func:`aifabric.workload.llm.layout.domain_stride`): cp, pp and dp (DP × CP, gradients) of the
    dense ranks, ep and edp (expert DP) of the expert ranks."""
    dense, expert, o = dense_sizes(layout), expert_sizes(layout, etp), layout.order
    return {
        "cp": domain_stride(dense, o, ("cp",), domain),
        "pp": domain_stride(dense, o, ("pp",), domain),
        "dp": domain_stride(dense, o, ("cp", "dp"), domain),
        "ep": domain_stride(expert, o, ("ep",), domain),
        "edp": domain_stride(expert, o, ("dp",), domain),
    }


def expected_slowest(n: int) -> float:
    """E[max of ``n`` standard normals] by Blom's approximation Φ⁻¹((n − 0.375)/(n + 0.25)); 0 for
    one GPU. Grows like √(2 ln n): 1.43 at 8, 2.59 at 128, 3.43 at 2,048, 3.94 at 16,384."""
    if n <= 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def tree_allreduce_s(comm, ranks: int, stride: int, domain: int) -> tuple[float, str]:
    """A latency-bound all-reduce (a few bytes) as NCCL's tree runs it: 2·⌈log₂ L⌉ NVLink steps over
    the L ranks of a domain and 2·⌈log₂ N⌉ network steps over the N domains, each step one send-recv
    of the fabric (so a ring's 2(n − 1) latencies are never paid for one value)."""
    if ranks < 2:
        return 0.0, "none"
    local, nodes = (ranks, 1) if stride * ranks <= domain else group_domains(ranks, stride, domain)
    t = 0.0
    for n, span in ((local, "nvlink"), (nodes, "network")):
        if n > 1:
            t += 2 * math.ceil(math.log2(n)) * comm.collective_s("send-recv", 4.0, 2, span)
    return t, "nvlink" if nodes == 1 else ("network" if local == 1 else "nvlink+network")


def step_reductions(
    comm, layout: Layout, gpus: int, zero: int, dp_stride: int, domain: int
) -> list[Collective]:
    """The per-step all-reduces on the critical path before the optimizer step (module doc): the
    gradient norm (4 bytes; every GPU with the distributed optimizer, else the model-parallel ranks)
    and the loss (4 bytes, over DP × CP), each timed as a tree (:func:`tree_allreduce_s`)."""
    norm_ranks = gpus if zero >= 1 else gpus // max(layout.dp, 1)
    dp_ranks = layout.dp * layout.cp
    out = []
    for what, ranks, stride in (("gradient norm", norm_ranks, 1), ("loss", dp_ranks, dp_stride)):
        t, span = tree_allreduce_s(comm, ranks, stride, domain)
        if t > 0:
            out.append(
                Collective("dp", "all-reduce", 4.0, ranks, span, 1, t, 0.0, f"none ({what}, per step)", t)
            )
    return out


def tp_overlap_exposed(table: str, times, tp: int, sms: int, layers, moe_share: float, interference: float):
    """(forward, backward) exposed TP seconds per layer and micro-batch under the TP overlap table
    ``table`` (:mod:`aifabric.workload.llm.overlap`), mixed over the (dense, MoE) ``layers``;
    ``times`` = (all-gather, reduce-scatter) seconds."""
    dense_slots, (t_ag, t_rs) = tp_table(table), times
    # MoE layers: the experts run TE's GroupedLinear, which has no userbuffers overlap, so the MLP
    # half of the table does not apply there (its TP collectives are the token dispatcher's)
    moe_slots = {**dense_slots, **dict.fromkeys(MOE_MLP_SLOTS, Slot())}

    def one(lt, slots) -> tuple[float, float]:
        (qkv_f, qkv_b), (proj_f, proj_b), (fc1_f, fc1_b), (fc2_f, fc2_b) = lt.tp_gemms
        fwd = (
            ("qkv_fprop", t_ag, qkv_f),
            ("proj_fprop", t_rs, proj_f),
            ("fc1_fprop", t_ag, fc1_f),
            ("fc2_fprop", t_rs, fc2_f),
        )
        bwd = (
            ("proj_dgrad", t_ag, proj_b / 2),
            ("fc2_dgrad", t_ag, fc2_b / 2),
            ("qkv_wgrad", t_rs, qkv_b / 2),
            ("fc1_wgrad", t_rs, fc1_b / 2),
        )
        f, b = (sum(slot_exposed(slots[n], t, g, tp, sms, interference) for n, t, g in d) for d in (fwd, bwd))
        return f, b

    (df, db), (mf, mb) = one(layers[0], dense_slots), one(layers[1], moe_slots)
    return (1 - moe_share) * df + moe_share * mf, (1 - moe_share) * db + moe_share * mb


def overlap_settings(fw: Framework) -> dict:
    """What ``iteration.overlap`` reports: the TP table (``none`` when off), the DP and PP overlaps."""
    return {
        "tp": fw.tp_overlap if fw.tp_comm_overlap else "none",
        "grad_reduce": fw.overlap_grad_reduce,
        "param_gather": fw.overlap_param_gather,
        "p2p": fw.overlap_p2p,
    }


def _drain_exposure(end_s: list[float], window_s: float, comm_s: list[float], t_end: float) -> float:
    """Exposure past ``t_end`` of transfers that start ``window_s`` before their chunk's end, in
    order of availability, one at a time on the link."""
    free = float("-inf")
    for e, c in sorted(zip(end_s, comm_s, strict=True)):
        free = max(free, e - window_s) + c
    return max(0.0, free - t_end)


def step_time(
    model: ModelConfig,
    gpu: GpuSpec,
    gpus: int,
    layout: Layout,
    seq_len: int,
    global_batch: int,
    comm,
    precision: str = "bf16",
    fw: Framework = Framework(),
    cal: Calibration = CALIBRATION,
    check: bool = True,
    compute_efficiency: float | None = None,
) -> StepResult:
    """Step time of ``layout`` on the fabric whose collectives ``comm`` times.

    ``compute_efficiency`` (optional) overrides the fitted large-GEMM efficiency for users who
    measured theirs (the ``--compute-efficiency`` option); each GEMM still runs at it × its shape
    factor (gemm.py).
    """
    if precision not in ("bf16", "fp8"):
        raise InputError(
            "unknown precision", field="training.precision", value=precision, allowed="bf16, fp8"
        )
    if compute_efficiency is not None:
        if not 0 < compute_efficiency <= 1:
            raise InputError("must be in (0, 1]", field="compute_efficiency", value=compute_efficiency)
        key = "fp8_gemm_efficiency" if precision == "fp8" else "gemm_efficiency"
        # it replaces the large-GEMM efficiency; the per-shape factors (gemm.py) still apply, so the
        # objective's ±15 % range around the fitted value stays centred on the model's own step
        cal = Calibration(**{**asdict(cal), key: compute_efficiency})
    domain = gpu.placement_domain_gpus
    if check:
        check_layout(model, layout, gpus, seq_len, global_batch, gpu.nvlink_domain_gpus, fw.etp(layout.tp))
        check_framework(fw)
    tp, pp, cp, vp, dp, ep, mb = (
        layout.tp, layout.pp, layout.cp, layout.vp, layout.dp, layout.ep, layout.micro_batch,
    )  # fmt: skip
    m = layout.micro_batches(global_batch)
    stride = group_strides(layout, fw.etp(tp), domain)
    tokens = mb * seq_len / cp  # per GPU per micro-batch
    act_bytes = tokens * model.hidden * 2.0  # full activation of the micro-batch on this CP rank (bf16)

    # ---- compute per layer -------------------------------------------------------------------
    sm_share = (gpu.sms - fw.comm_sms) / gpu.sms
    lt_dense = layer_time(
        model,
        gpu,
        precision,
        tokens,
        seq_len,
        tp,
        moe=False,
        cal=cal,
        sm_share=sm_share,
        fp8_recipe=fw.fp8_recipe,
    )
    lt_moe = (
        layer_time(
            model,
            gpu,
            precision,
            tokens,
            seq_len,
            tp,
            moe=True,
            cal=cal,
            sm_share=sm_share,
            ep=ep,
            etp=fw.etp(tp),
            fp8_recipe=fw.fp8_recipe,
        )
        if model.is_moe
        else lt_dense
    )
    moe_share = model.moe_layers / model.layers if model.is_moe else 0.0
    per_stage, last_stage = stage_layers(model.layers, pp)

    def mix(attr: str) -> float:
        return (1 - moe_share) * getattr(lt_dense, attr) + moe_share * getattr(lt_moe, attr)

    layer_fwd, layer_bwd = mix("fwd_s"), mix("bwd_s")
    gemm_fwd = mix("gemm_fwd_s")
    attn_fwd, attn_bwd = mix("attn_fwd_s"), mix("attn_bwd_s")
    recompute_bwd = {
        "none": 0.0,
        "selective": attn_fwd,
        "mla_up_proj": mix("mla_up_fwd_s"),
        "full": layer_fwd,
    }[fw.recompute]

    # ---- per-layer communication (per micro-batch) --------------------------------------------
    colls: list[Collective] = []
    exposed_mb = dict.fromkeys(GROUPS, 0.0)  # per micro-batch per layer-equivalent, on the critical path
    exposed_fwd = 0.0  # the forward part of it

    # TP (sequence parallel): all-gather + reduce-scatter of the activations
    if tp > 1:
        ag_bytes = act_bytes / 2 if precision == "fp8" else act_bytes  # TE gathers FP8 GEMM inputs in FP8
        t_ag, span = group_time(comm, "all-gather", ag_bytes, tp, 1, domain)
        t_rs, _ = group_time(comm, "reduce-scatter", act_bytes, tp, 1, domain)
        n_dir = 4  # per layer and direction (2 AG + 2 RS)
        tp_dir = 2 * (t_ag + t_rs)
        fwd_count = 2 if fw.recompute == "full" else 1
        if fw.tp_comm_overlap:
            exp_f, exp_b = tp_overlap_exposed(
                fw.tp_overlap,
                (t_ag, t_rs),
                tp,
                gpu.sms,
                (lt_dense, lt_moe),
                moe_share,
                cal.tp_overlap_interference,
            )
            win = f"GEMMs of the same layer (TP-comm overlap, {fw.tp_overlap})"
        else:
            exp_f, exp_b, win = tp_dir, tp_dir, "none (TP exposed)"
        exposed_mb["tp"] = exp_f * fwd_count + exp_b
        exposed_fwd += exp_f
        per_layer_count = n_dir // 2
        layers_mb = m * per_stage
        colls.append(Collective("tp", "all-gather", ag_bytes, tp, span, int(per_layer_count * (fwd_count + 1) * layers_mb),
                                t_ag, gemm_fwd / n_dir if fw.tp_comm_overlap else 0.0, win, 0.0))  # fmt: skip
        colls.append(Collective("tp", "reduce-scatter", act_bytes, tp, span, int(per_layer_count * (fwd_count + 1) * layers_mb),
                                t_rs, gemm_fwd / n_dir if fw.tp_comm_overlap else 0.0, win, 0.0))  # fmt: skip

    # CP: ring exchange of K and V (forward), K, V and their gradients (backward)
    if cp > 1:
        kv_bytes = tokens * 2 * model.kv_dim / tp * 2.0
        t_kv, span = group_time(comm, "send-recv", kv_bytes, cp, stride["cp"], domain)
        t_kv2, _ = group_time(comm, "send-recv", 2 * kv_bytes, cp, stride["cp"], domain)
        exp_f = max(0.0, (cp - 1) * t_kv - attn_fwd)
        exp_b = max(0.0, (cp - 1) * t_kv2 - attn_bwd)
        exposed_mb["cp"] = exp_f * (2 if fw.recompute == "full" else 1) + exp_b
        exposed_fwd += exp_f
        n = int((cp - 1) * m * per_stage)
        colls.append(
            Collective(
                "cp",
                "send-recv",
                kv_bytes,
                cp,
                span,
                n,
                t_kv,
                attn_fwd / (cp - 1),
                "attention of the layer (forward)",
                0.0,
            )
        )
        colls.append(Collective("cp", "send-recv", 2 * kv_bytes, cp, span, n, t_kv2, attn_bwd / (cp - 1), "attention of the layer (backward)", 0.0))  # fmt: skip

    # EP: dispatch and combine all-to-alls per MoE layer
    if model.is_moe and ep > 1:
        # bytes, node-limited routing and timing: groups.ep_dispatch_combine (shared with inference
        # and the DeepEP validation)
        a2a_ = ep_dispatch_combine(
            comm, tokens / tp, model.experts_per_token, model.hidden, ep, stride["ep"], domain,
            fw.a2a_fp8_dispatch, fw.a2a_node_limit,
        )  # fmt: skip
        t_d, t_c, span, disp, comb = (
            a2a_.dispatch_s,
            a2a_.combine_s,
            a2a_.span,
            a2a_.dispatch_bytes,
            a2a_.combine_bytes,
        )
        a2a = t_d + t_c
        if fw.ep_a2a_overlap:
            exp_f = max(0.0, a2a - lt_moe.fwd_s)
            exp_b = max(0.0, a2a - lt_moe.bwd_s)
            win = "another micro-batch's layer compute (A2A overlap)"
        else:
            exp_f, exp_b, win = a2a, a2a, "none (all-to-all exposed)"
        exposed_mb["ep"] = moe_share * (exp_f * (2 if fw.recompute == "full" else 1) + exp_b)
        exposed_fwd += moe_share * exp_f
        n = int(2 * m * per_stage * moe_share)
        colls.append(
            Collective(
                "ep",
                "all-to-all",
                disp,
                ep,
                span,
                n,
                t_d,
                lt_moe.fwd_s / 2 if fw.ep_a2a_overlap else 0.0,
                win,
                0.0,
            )
        )
        colls.append(Collective("ep", "all-to-all", comb, ep, span, n, t_c, lt_moe.fwd_s / 2 if fw.ep_a2a_overlap else 0.0, win, 0.0))  # fmt: skip

    # ---- DP groups ------------------------------------------------------------------------------
    etp = fw.etp(tp)
    lp = local_params(model, layout, etp)
    dp_dense, dp_expert = dp * cp, expert_dp(layout, etp)
    grad_b = 4.0 if fw.grad_reduce_fp32 else 2.0
    param_b = 1.0 if (fw.fp8_param_gather and precision == "fp8") else 2.0
    rs_op = "all-reduce" if fw.zero == 0 else "reduce-scatter"

    def dp_time(op: str, bytes_per_param: float, scale: float) -> tuple[float, str]:
        t1, s1 = group_time(comm, op, lp.dense * bytes_per_param * scale, dp_dense, stride["dp"], domain)
        t2, s2 = group_time(comm, op, lp.expert * bytes_per_param * scale, dp_expert, stride["edp"], domain)
        return t1 + t2, s1 if s1 != "none" else s2

    # ZeRO-3 / FSDP: per layer gathers and reduce-scatters inside every micro-batch
    fsdp_exposed_mb = 0.0
    if fw.zero == 3 and dp_dense > 1:
        per_layer = 1.0 / max(per_stage, 1.0)
        ag_l, span = dp_time("all-gather", param_b, per_layer)
        rs_l, _ = dp_time("reduce-scatter", grad_b, per_layer)
        fwd_passes = 2 if fw.recompute == "full" else 1
        fsdp_exposed_mb = fwd_passes * (per_stage * max(0.0, ag_l - layer_fwd) + ag_l) + per_stage * max(
            0.0, ag_l + rs_l - (layer_bwd + recompute_bwd)
        )
        n = int(m * per_stage)
        colls.append(
            Collective(
                "dp",
                "all-gather",
                lp.total * param_b * per_layer,
                dp_dense,
                span,
                n * (fwd_passes + 1),
                ag_l,
                layer_fwd,
                "previous layer's compute (FSDP prefetch)",
                0.0,
            )
        )
        colls.append(Collective("dp", "reduce-scatter", lp.total * grad_b * per_layer, dp_dense, span, n, rs_l, layer_bwd, "the layer's backward", 0.0))  # fmt: skip

    # ---- stage times per micro-batch ------------------------------------------------------------
    head_f, head_b = head_time(model, gpu, precision, tokens, tp, cal)
    per_layer_exposed = exposed_mb["tp"] + exposed_mb["cp"] + exposed_mb["ep"]
    mid = per_stage * (layer_fwd + layer_bwd + recompute_bwd + per_layer_exposed)
    last = last_stage * (layer_fwd + layer_bwd + recompute_bwd + per_layer_exposed) + head_f + head_b
    slow_layers = per_stage if mid >= last else last_stage
    fb_compute = slow_layers * (layer_fwd + layer_bwd + recompute_bwd) + (
        0.0 if mid >= last else head_f + head_b
    )
    fb = max(mid, last) + fsdp_exposed_mb
    fb_mean = (mid * (pp - 1) + last) / pp + fsdp_exposed_mb if pp > 1 else fb
    f_stage = slow_layers * (layer_fwd + exposed_fwd) + (0.0 if mid >= last else head_f)
    b_stage = fb - f_stage  # the backward of one micro-batch on the slowest stage (+ its exposed comm)

    compute = m * fb_compute
    exposed = {g: m * slow_layers * exposed_mb[g] for g in ("tp", "cp", "ep")}
    exposed["dp"] = m * fsdp_exposed_mb
    bubble = (pp - 1) / vp * fb_mean if pp > 1 else 0.0
    t_pipe = m * fb + bubble

    # PP: sends between stages
    exposed["pp"] = 0.0
    if pp > 1:
        p2p_bytes = act_bytes / tp
        t_p2p, span = group_time(comm, PIPELINE_SEND_RECV, p2p_bytes, pp, stride["pp"], domain)
        overlap_p2p = fw.overlap_p2p if fw.overlap_p2p is not None else vp > 1
        n_crit = 2 * (pp - 1) + (0 if overlap_p2p else 2 * m)
        exposed["pp"] = n_crit * t_p2p
        colls.append(Collective("pp", "send-recv", p2p_bytes, 2, span, 2 * m * vp, t_p2p, 0.0,
                                "fill/drain on the critical path" + ("" if overlap_p2p else "; steady state too"),
                                exposed["pp"]))  # fmt: skip
    t_end = t_pipe + exposed["pp"]

    # DP gradient reduction and parameter gather (ZeRO 0/1/2)
    b_chunk = b_stage / vp
    f_chunk = f_stage / vp
    if dp_dense > 1 and fw.zero in (0, 1, 2):
        t_grad, span = dp_time(rs_op, grad_b, 1.0 / vp)
        if fw.zero == 2:
            per_mb = max(0.0, t_grad * vp - b_stage)
            dp_rs_exposed = m * per_mb
            exposed["dp"] += dp_rs_exposed
            colls.append(Collective("dp", rs_op, lp.total * grad_b, dp_dense, span, m, t_grad * vp, b_stage,
                                    "each micro-batch's backward (ZeRO-2)", dp_rs_exposed))  # fmt: skip
        else:
            worst = 0.0
            for stage in {0, pp - 1}:
                ends = [t_end - stage * b_chunk - v * pp * b_chunk for v in range(vp)]
                if fw.overlap_grad_reduce:
                    worst = max(worst, _drain_exposure(ends, b_chunk, [t_grad] * vp, t_end))
                else:
                    worst = max(worst, max(0.0, ends[0] + vp * t_grad - t_end))
            exposed["dp"] += worst
            colls.append(Collective("dp", rs_op, lp.total * grad_b / vp, dp_dense, span, vp, t_grad,
                                    b_chunk if fw.overlap_grad_reduce else 0.0,
                                    "last micro-batch's backward of each chunk" if fw.overlap_grad_reduce else "none",
                                    worst))  # fmt: skip
        if fw.zero >= 1:
            t_ag, span = dp_time("all-gather", param_b, 1.0 / vp)
            if fw.overlap_param_gather:
                free, late = 0.0, 0.0
                for v in range(vp):
                    free += t_ag
                    late = max(late, free - (v * pp * f_chunk + f_chunk))
                ag_exposed = max(0.0, late)
            else:
                ag_exposed = vp * t_ag
            exposed["dp"] += ag_exposed
            colls.append(Collective("dp", "all-gather", lp.total * param_b / vp, dp_dense, span, vp, t_ag,
                                    f_chunk if fw.overlap_param_gather else 0.0,
                                    "next step's first forward of each chunk" if fw.overlap_param_gather else "none",
                                    ag_exposed))  # fmt: skip

    # per-step reductions before the optimizer step (gradient norm, loss)
    for c in step_reductions(comm, layout, gpus, fw.zero, stride["dp"], domain):
        exposed["dp"] += c.exposed_s
        colls.append(c)

    # optimizer
    opt_params = lp.dense / dp_dense + lp.expert / dp_expert if fw.zero >= 1 else lp.total
    t_opt = optimizer_time(opt_params, gpu, cal)

    straggler = cal.straggler_spread * expected_slowest(dp_dense) * compute
    iteration = t_end + exposed["dp"] - m * fsdp_exposed_mb + t_opt + straggler
    # exposed per-micro-batch parts are already in t_pipe; DP (ZeRO-0/1/2) and optimizer come after
    exposed_final = {g: exposed[g] for g in GROUPS}
    # attribute per-collective exposure for per-micro-batch groups
    per_group_total: dict[str, float] = {}
    for c in colls:
        per_group_total[c.group] = per_group_total.get(c.group, 0.0) + c.time_s
    final_colls = []
    for c in colls:
        if c.group in ("tp", "cp", "ep") or (c.group == "dp" and fw.zero == 3):
            share = c.time_s / per_group_total[c.group] if per_group_total[c.group] > 0 else 0.0
            c = Collective(**{**asdict(c), "exposed_s": exposed_final[c.group] * share})
        final_colls.append(c)

    tokens_step = float(global_batch) * seq_len
    flops = model.model_flops_per_token(seq_len) * tokens_step
    mfu = flops / (iteration * gpus * gpu.bf16_dense_tflops * 1e12)
    bd = Breakdown(
        compute_s=compute, bubble_s=bubble, optimizer_s=t_opt, exposed_s=exposed_final, straggler_s=straggler
    )
    mem = memory_per_gpu(model, layout, seq_len, global_batch, fw, cal, precision)
    return StepResult(
        iteration_s=iteration,
        mfu=mfu,
        layout=layout,
        breakdown=bd,
        collectives=tuple(final_colls),
        memory=mem,
        gpus=gpus,
        tokens_per_step=tokens_step,
        model_flops_per_step=flops,
        micro_batches=m,
        mfu_peak=f"model FLOPs (6·N + non-causal attention) / dense BF16 peak {gpu.bf16_dense_tflops:g} TFLOPS, "
        f"also for FP8 runs",
        precision=precision,
        mfu_vs_precision_peak=flops / (iteration * gpus * gpu.peak_tflops(precision) * 1e12),
        overlap=overlap_settings(fw),
    )
