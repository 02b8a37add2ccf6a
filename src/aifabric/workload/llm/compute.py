"""Compute time of one transformer layer for one micro-batch on one GPU, from FLOPs and bytes.

Per layer and micro-batch (``T`` = micro_batch · seq_len / cp tokens on the GPU; TP splits weights
and, with sequence parallelism, the element-wise work):

* **GEMMs**: every linear layer as three GEMMs (forward M × N × K, data gradient, weight gradient;
  M = T tokens, N/K its output/input width on this GPU: column-parallel layers split N by tp,
  row-parallel layers split K), each at its **per-shape throughput** (:mod:`aifabric.workload.llm.gemm`:
  wave quantization × K saturation + a fixed time per kernel, constants fitted on public
  microbenchmarks only) × ``gemm_efficiency`` × the dense peak of the precision (FP8 GEMMs at the
  FP8 peak) — but never faster than reading the local weights from HBM (roofline; backward also
  reads and writes the FP32 gradient accumulator) — what binds when experts see few tokens each.
  MoE layers: attention + shared experts + router + ``experts_per_token`` routed experts (balanced
  routing: each local expert sees T · k · ep · etp / (tp · experts) tokens).
* **Attention** (FlashAttention, BF16 also in FP8 runs as Transformer Engine's default recipes do):
  causal, so T · s/2 · heads/tp · 2 · (qk_dim + v_dim) FLOPs forward at the GPU's attention
  forward throughput, 2.5× that backward (five matmuls instead of two) at its backward throughput
  (measured fractions of the BF16 peak per GPU, :mod:`aifabric.workload.llm.gpus`: FlashAttention-3
  on Hopper, cuDNN 9.10 SDPA on Blackwell; no fitted parameter).
* **Element-wise** (norms, residual adds, RoPE, SwiGLU, MoE permute/unpermute, FP8 casts): bytes
  read + written counted per kernel, at the sustained HBM bandwidth; backward 2× forward.
* **Output layer + loss** on the last stage: GEMM as above; softmax/cross-entropy 16 bytes per
  logit (bf16 write, fp32 read/write forward and backward).
* **Recomputation**: ``full`` adds the layer forward to its backward; ``selective`` adds the core
  attention forward (Megatron's selective recompute, ``--recompute-modules core_attn``);
  ``mla_up_proj`` adds the forward of MLA's up-projection GEMMs (latent → Q and latent → K, V) and
  of the two latent RMSNorms (DeepSeek-V3 recomputes exactly these, arXiv 2412.19437 §3.3.4; the
  NVIDIA H100 recipe runs ``--recompute_modules mla_up_proj``, dgxc deepseek_v3/pretraining/launch.sh
  @1f6d9f4) — nothing for a model without MLA; ``none`` adds nothing.
* **Optimizer step** (Adam, mixed precision): 30 bytes per local parameter (read fp32 master,
  grad, m, v; write master, m, v; write the bf16 copy) at sustained HBM bandwidth.

The fitted parameters are the four of :data:`CALIBRATION`: the straggler spread (on weak-scaling
series that no other check uses), the large-GEMM efficiency for BF16 and FP8 inside a step and
the TP-overlap interference and Blackwell's GEMM scale (each on one published
case), validated on the others (validation.py;
TP-communication overlap is counted per GEMM from the recipe's table, overlap.py); the GEMM
shape constants are fitted on microbenchmarks, not on training steps. Everything else is counted, comes from
the GPU table (:mod:`aifabric.workload.llm.gpus`), or is an estimate saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.workload.llm.gemm import linear_times
from aifabric.workload.llm.gpus import GpuSpec
from aifabric.workload.llm.models import ModelConfig

BF16_BYTES = 2


@dataclass(frozen=True)
class Calibration:
    """The step-time model's parameter set — one for every case (no per-case tuning).

    ``gemm_efficiency`` / ``fp8_gemm_efficiency``: fraction of the BF16 / FP8 dense peak that *large*
    GEMMs reach *inside a training step* (kernels, launch gaps, clock throttling under load, and
    whatever else a step loses that the counted terms miss); each GEMM then runs at this × its shape
    factor (gemm.py: ≤ 1, from microbenchmarks). **Fitted**, each on one published case only —
    Llama 3.1 8B on 8 H100, BF16 12.27 s and FP8 9.33 s (dgxc v25.04) — by
    :func:`aifabric.workload.llm.validation.fit_calibration`, and validated on all other cases.
    Cross-check: cuBLASLt large-GEMM microbenchmarks on Hopper reach about 0.8 of peak (gpus.py
    [GEMM-FP8], [GEMM-BF16]); a training step reaches less. ``--compute-efficiency`` replaces it (the
    shape factors still apply); with ``per_shape_gemm`` off every GEMM runs flat at the efficiency.
    ``tp_overlap_interference``: TP-communication overlap is counted per GEMM and method from the
    recipe's Transformer Engine table (overlap.py); this is the share of the communication time the
    method hides that still costs (smaller chunked GEMMs, HBM/L2/SM contention). **Fitted** on Llama
    3.1 70B BF16 on 64 H100 (dgxc v25.04, 14.66 s, NeMo's llama3_70b TP-overlap table) after the two
    GEMM efficiencies.
    ``blackwell_gemm_scale``: Blackwell's GEMM efficiency relative to Hopper's (no public Blackwell
    GEMM shape sweep was read; attention has its own measured fractions, gpus.py [CUDNN-B200]).
    **Fitted** on Llama 3.1 405B BF16 on 128 GB200 (dgxc v25.05.04, 9.347 s) after the two above.
    The fit is reproducible: ``fit_calibration()`` returns these values (tested).
    ``straggler_spread``: relative standard deviation σ of per-GPU speed; a synchronous step waits
    for the slowest GPU, E[max of n normals] · σ of the compute and bubble behind the mean
    (step.py). **Fitted** on the growth of weak-scaling series that no other check uses (dgxc
    NeMo 24.09 Llama 3.1 8B/70B, BF16/FP8, 8 → 128 and 64 → 2,048 H100) before the three above, and
    validated on the growth of the step-time table's weak-scaling series (``aifabric validate
    --published``, block ``weak_scaling``). Cross-check: Sinha et al. (SC'22) measure 8 % average
    performance variation across thousands of same-SKU GPUs, i.e. σ of order 1 %.
    ``reserve_bytes``: memory per GPU not available to the model (CUDA context, NCCL buffers,
    allocator fragmentation) — estimate, no public source: 3 GiB (CUDA context ≈ 0.5 GiB, NCCL
    buffers ≈ 1 GiB, allocator slack).
    ``optimizer_bytes_per_param``: 30, counted (see module docstring).
    """

    gemm_efficiency: float = 0.704
    fp8_gemm_efficiency: float = 0.570
    tp_overlap_interference: float = 0.688
    blackwell_gemm_scale: float = 0.797
    straggler_spread: float = 0.0156
    reserve_bytes: float = 3 * 2**30
    optimizer_bytes_per_param: float = 30.0
    loss_bytes_per_logit: float = 16.0
    attention_bwd_flops_ratio: float = 2.5
    per_shape_gemm: bool = True  # GEMM throughput per shape (gemm.py); off: flat at the efficiency


CALIBRATION = Calibration()


@dataclass(frozen=True)
class LayerTime:
    """Seconds for one layer and one micro-batch on one GPU (compute only)."""

    gemm_fwd_s: float
    attn_fwd_s: float
    ew_fwd_s: float
    gemm_bwd_s: float
    attn_bwd_s: float
    ew_bwd_s: float
    flops_fwd: float  # executed FLOPs forward (GEMM + causal attention)
    mla_up_fwd_s: float = 0.0  # forward of MLA's up-projections + latent norms (mla_up_proj recompute)
    # (forward, backward) GEMM seconds of the four TP-overlap partners: attention input (QKV), attention
    # output projection, MLP input (FC1), MLP output (FC2) — overlap.py's slots
    tp_gemms: tuple[tuple[float, float], ...] = ()

    @property
    def fwd_s(self) -> float:
        return self.gemm_fwd_s + self.attn_fwd_s + self.ew_fwd_s

    @property
    def bwd_s(self) -> float:
        return self.gemm_bwd_s + self.attn_bwd_s + self.ew_bwd_s


# Block-scaled FP8 (DeepSeek-V3's recipe: activations 1×128, weights 128×128 scales) on Hopper: the
# tensor cores cannot apply the scales, so every 128-deep K block is promoted and rescaled on CUDA
# cores (arXiv 2412.19437 §3.3.2; Megatron-LM deepseek-v3-gb200-optimization.md §1). Throughput
# relative to per-tensor FP8, both at their largest published shape on Hopper: DeepGEMM 1,358 TFLOPS
# (4096 × 7168 × 16384, H800, [DEEPGEMM]) / cuBLASLt per-tensor 1,609 TFLOPS (8192³, [GEMM-FP8]).
# Blackwell applies block scales (MXFP8) inside the tensor core: no such cost there.
BLOCKWISE_FP8_HOPPER = 1358.0 / 1609.0


def _eff(cal: Calibration, precision: str, gpu: GpuSpec, fp8_recipe: str = "tensorwise") -> float:
    eff = cal.fp8_gemm_efficiency if precision == "fp8" else cal.gemm_efficiency
    if precision == "fp8" and fp8_recipe == "blockwise" and gpu.generation == "hopper":
        eff *= BLOCKWISE_FP8_HOPPER
    return eff * (cal.blackwell_gemm_scale if gpu.generation == "blackwell" else 1.0)


def _linear(
    m: float, n: float, k: float, precision: str, gpu: GpuSpec, rate: float, cal: Calibration, groups: int = 1
) -> tuple[float, float]:
    """(forward, backward) seconds of one M × N × K linear layer: per-shape throughput
    (:mod:`aifabric.workload.llm.gemm`), or flat at ``rate`` when ``cal.per_shape_gemm`` is off."""
    if cal.per_shape_gemm:
        return linear_times(m, n, k, precision, gpu.sms, rate, groups=groups)
    flops = 2.0 * groups * m * n * k
    return flops / rate, 2 * flops / rate


def layer_time(
    model: ModelConfig,
    gpu: GpuSpec,
    precision: str,
    tokens: float,
    seq_len: int,
    tp: int,
    moe: bool,
    cal: Calibration = CALIBRATION,
    sm_share: float = 1.0,
    ep: int = 1,
    etp: int | None = None,
    fp8_recipe: str = "tensorwise",
) -> LayerTime:
    """Compute time of one dense (``moe`` False) or MoE layer for ``tokens`` tokens on one GPU.

    ``sm_share``: the fraction of the GPU's multiprocessors left to compute when communication
    kernels hold the rest (DeepSeek-V3 gives 20 of 132 SMs to its all-to-all, arXiv 2412.19437 §3.2).
    ``fp8_recipe``: ``tensorwise`` (Transformer Engine's per-tensor scaling, what the FP8 efficiency
    is fitted on) or ``blockwise`` (DeepSeek-V3's 1×128 / 128×128 scaling: :data:`BLOCKWISE_FP8_HOPPER`
    on Hopper).
    """
    h = model.hidden
    gemm_rate = gpu.peak_tflops(precision) * 1e12 * _eff(cal, precision, gpu, fp8_recipe) * sm_share
    q, kv = model.q_dim, model.kv_dim
    mlp_width = model.ffn_hidden if not moe else model.moe_ffn_hidden
    gate = 2 if model.gated_mlp else 1

    def lin(m_: float, n_: float, k_: float, groups: int = 1) -> tuple[float, float]:
        return _linear(m_, n_, k_, precision, gpu, gemm_rate, cal, groups)

    # the GEMMs of the layer on this GPU as (tokens M, output width N, input width K): column-parallel
    # layers split N by tp, row-parallel layers split K (sequence parallelism gathers all tokens)
    rest = []  # attention projections, dense MLP or shared experts, router
    if model.mla:
        m = model.mla
        if m.q_lora_rank:
            rest += [lin(tokens, m.q_lora_rank / tp, h), lin(tokens, q / tp, m.q_lora_rank)]
        else:
            rest.append(lin(tokens, q / tp, h))
        rest += [
            lin(tokens, (m.kv_lora_rank + m.qk_rope_head_dim) / tp, h),
            lin(tokens, model.heads * (m.qk_nope_head_dim + m.v_head_dim) / tp, m.kv_lora_rank),
            lin(tokens, h, model.heads * m.v_head_dim / tp),
        ]
    else:
        rest += [lin(tokens, (q + 2 * kv) / tp, h), lin(tokens, h, q / tp)]
    n_attn = len(rest)
    routed = []
    if moe:
        if model.shared_experts:
            sh = model.shared_experts * model.moe_ffn_hidden
            rest += [lin(tokens, gate * sh / tp, h), lin(tokens, h, sh / tp)]
        rest.append(lin(tokens / tp, model.experts, h))  # router, on the sequence-parallel shard
        # balanced routing: each of the experts/ep local experts gets tokens·k·ep·etp/(tp·experts)
        etp_ = tp if etp is None else etp
        local = max(1, round(model.experts / ep))
        m_e = tokens * model.experts_per_token * ep * etp_ / (tp * model.experts)
        routed += [
            lin(m_e, gate * model.moe_ffn_hidden / etp_, h, local),
            lin(m_e, h, model.moe_ffn_hidden / etp_, local),
        ]
    else:
        rest += [lin(tokens, gate * mlp_width / tp, h), lin(tokens, h, mlp_width / tp)]
    f = 2.0 * tokens / tp
    if moe:
        mlp_params = (model.shared_experts + model.experts_per_token) * model.expert_params
        mlp_params += h * model.experts  # router
    else:
        mlp_params = model.dense_mlp_params
    gemm_flops = f * (model.attention_params + mlp_params)
    # roofline, per group of GEMMs: a GEMM cannot beat reading its weights (forward: the weights,
    # 1 byte in FP8; backward: the weights again + the FP32 main-grad accumulation, read and
    # written). Binds for routed experts that see few tokens each (small ep: many local experts);
    # dense GEMMs with thousands of tokens stay compute-bound.
    w_bytes = 1.0 if precision == "fp8" else 2.0
    hbm = gpu.hbm_sustained_bytes_per_s
    if moe:
        routed_params = model.experts / ep * model.expert_params / (tp if etp is None else etp)
        rest_params = (model.attention_params + model.shared_experts * model.expert_params) / tp
    else:
        routed_params = 0.0
        rest_params = (model.attention_params + model.dense_mlp_params) / tp
    rest_f, rest_b = sum(x[0] for x in rest), sum(x[1] for x in rest)
    routed_f, routed_b = sum(x[0] for x in routed), sum(x[1] for x in routed)
    gemm_fwd = max(rest_f, rest_params * w_bytes / hbm) + max(routed_f, routed_params * w_bytes / hbm)
    gemm_bwd = max(rest_b, rest_params * (w_bytes + 8.0) / hbm) + max(
        routed_b, routed_params * (w_bytes + 8.0) / hbm
    )
    # causal attention (flash), BF16, at the GPU's own measured attention fractions (gpus.py: Hopper
    # FlashAttention-3, Blackwell cuDNN SDPA) — no fitted scale: blackwell_gemm_scale is for GEMMs only
    attn_flops = 2.0 * tokens * (seq_len / 2) * (model.heads / tp) * (model.qk_head_dim + model.v_head_dim)
    attn_fwd = attn_flops / (gpu.bf16_dense_tflops * 1e12 * gpu.attention_fwd_fraction * sm_share)
    attn_bwd = (
        cal.attention_bwd_flops_ratio
        * attn_flops
        / (gpu.bf16_dense_tflops * 1e12 * gpu.attention_bwd_fraction * sm_share)
    )
    # element-wise bytes forward
    t_sp = tokens / tp  # sequence-parallel region
    elems = t_sp * 10 * h  # 2 norms (r+w), 2 residual adds (2r+w)
    elems += tokens * 2 * (q + kv) / tp  # RoPE on q, k (r+w)
    if moe:
        k = model.experts_per_token
        elems += t_sp * h * (2 + 2 * k)  # permute + unpermute
        elems += t_sp * k * (gate + 1) * model.moe_ffn_hidden  # expert activations
        elems += t_sp * model.shared_experts * (gate + 1) * model.moe_ffn_hidden
    else:
        elems += tokens * (gate + 1) * mlp_width / tp  # SwiGLU / GELU
    ew_bytes = BF16_BYTES * elems
    if precision == "fp8":  # cast each GEMM input to FP8: read 2 B, write 1 B
        ew_bytes += 3 * (
            t_sp * 2 * h + tokens * q / tp + tokens * mlp_width / tp * (model.experts_per_token if moe else 1)
        )
    ew_fwd = ew_bytes / gpu.hbm_sustained_bytes_per_s
    # MLA up-projections (q latent → heads·qk_head_dim; kv latent → heads·(qk_nope + v)) and the two
    # latent RMSNorms (read + write, bf16): what ``mla_up_proj`` recomputes in backward
    mla_up = 0.0
    if model.mla:
        m = model.mla
        up_fwd = lin(tokens, model.heads * (m.qk_nope_head_dim + m.v_head_dim) / tp, m.kv_lora_rank)[0]
        if m.q_lora_rank:
            up_fwd += lin(tokens, q / tp, m.q_lora_rank)[0]
        mla_up = (
            up_fwd
            + 2 * BF16_BYTES * tokens * (m.q_lora_rank + m.kv_lora_rank) / gpu.hbm_sustained_bytes_per_s
        )
    return LayerTime(
        gemm_fwd_s=gemm_fwd,
        attn_fwd_s=attn_fwd,
        ew_fwd_s=ew_fwd,
        gemm_bwd_s=gemm_bwd,
        attn_bwd_s=attn_bwd,
        ew_bwd_s=2 * ew_fwd,
        flops_fwd=gemm_flops + attn_flops,
        mla_up_fwd_s=mla_up,
        tp_gemms=_tp_partners(rest, routed, n_attn, moe),
    )


def _tp_partners(rest: list, routed: list, n_attn: int, moe: bool) -> tuple[tuple[float, float], ...]:
    """(forward, backward) seconds of the GEMMs each TP collective overlaps with: attention input (all
    attention GEMMs but the output projection), attention output, MLP input (FC1 / gate-up; MoE:
    shared experts' input, router, routed experts' input), MLP output."""

    def add(items) -> tuple[float, float]:
        return sum(x[0] for x in items), sum(x[1] for x in items)

    attn_in, attn_out = add(rest[: n_attn - 1]), rest[n_attn - 1]
    mlp = rest[n_attn:]
    if moe:  # [shared in, shared out]? + router, then routed in, out
        shared = mlp[:-1]
        mlp_in = add(shared[:1] + mlp[-1:] + routed[:1]) if shared else add(mlp[-1:] + routed[:1])
        mlp_out = add(shared[1:2] + routed[1:])
    else:
        mlp_in, mlp_out = mlp[0], mlp[1]
    return (attn_in, attn_out, mlp_in, mlp_out)


def head_time(
    model: ModelConfig, gpu: GpuSpec, precision: str, tokens: float, tp: int, cal: Calibration = CALIBRATION
) -> tuple[float, float]:
    """(forward, backward) seconds of the output layer and loss for ``tokens`` tokens on one GPU."""
    gemm_rate = gpu.peak_tflops(precision) * 1e12 * _eff(cal, precision, gpu)
    g_f, g_b = _linear(tokens, model.vocab / tp, model.hidden, precision, gpu, gemm_rate, cal)
    loss = tokens * model.vocab / tp * cal.loss_bytes_per_logit / gpu.hbm_sustained_bytes_per_s
    return g_f + loss / 2, g_b + loss / 2


def optimizer_time(local_params: float, gpu: GpuSpec, cal: Calibration = CALIBRATION) -> float:
    """Adam step over ``local_params`` parameters held by this GPU."""
    return local_params * cal.optimizer_bytes_per_param / gpu.hbm_sustained_bytes_per_s
