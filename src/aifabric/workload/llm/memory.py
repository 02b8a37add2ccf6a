"""Memory per GPU of a layout: weights, gradients, optimizer state, activations, reserve.

Counted for the fullest pipeline stage (stage 0 holds the most in-flight micro-batches):

* weights: BF16, 2 bytes per local parameter (ZeRO-3/FSDP: sharded over the DP group, plus two
  layers gathered at a time);
* gradients: FP32 main-grad buffer, 4 bytes per local parameter (Megatron; sharded for ZeRO-2/3);
* optimizer: FP32 master + Adam m, v = 12 bytes per parameter, sharded over the DP group for ZeRO ≥ 1
  (dense parameters over dp · cp ranks, expert parameters over dp · cp / ep);
* activations per layer and micro-batch, per token: 2 bytes × (6·h + 2·kv_dim + 3·ffn, or the MoE
  equivalent with top-k experts), divided by tp (sequence parallelism) — flash attention stores no
  s² term, so ``selective`` recompute equals ``none`` here; ``full`` keeps only the layer input
  (2·h bytes per token) plus one layer's full activations. In flight on stage 0: min(pp, M)
  micro-batches for 1F1B, × (1 + (pp − 1)/(pp · vp)) when interleaved (Megatron's accounting);
* output layer: FP32 logits, 4 bytes per token per vocab/tp on the last stage (counted on stage 0's
  budget as a bound);
* reserve: :data:`~aifabric.workload.llm.compute.CALIBRATION` ``reserve_bytes`` (estimate).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.layout import Framework, Layout, stage_layers
from aifabric.workload.llm.models import ModelConfig

GIB = 2**30


@dataclass(frozen=True)
class LocalParams:
    """Parameters held by one GPU of the fullest stage: dense (reduced over dp·cp) and expert."""

    dense: float
    expert: float

    @property
    def total(self) -> float:
        return self.dense + self.expert


def local_params(model: ModelConfig, layout: Layout, etp: int | None = None) -> LocalParams:
    """Parameters per GPU on the fullest stage (layers of the stage / tp; experts / ep)."""
    per_stage, last = stage_layers(model.layers, layout.pp)
    n_stage = max(per_stage, last + (model.head_params / max(model.dense_layer_params, 1)))
    moe_share = model.moe_layers / model.layers if model.is_moe else 0.0
    moe_layers = per_stage * moe_share
    dense_layers = n_stage - moe_layers
    dense = dense_layers * model.dense_layer_params + moe_layers * model.moe_layer_shared_params
    if layout.pp == 1:
        dense = model.total_params - model.moe_layers * model.experts * model.expert_params
    expert = moe_layers * model.experts * model.expert_params / layout.ep
    return LocalParams(dense=dense / layout.tp, expert=expert / (layout.tp if etp is None else etp))


def expert_dp(layout: Layout, etp: int) -> int:
    """Ranks of the expert-data-parallel group: tp · cp · dp / (etp · ep)."""
    return max(1, layout.tp * layout.cp * layout.dp // (etp * layout.ep))


@dataclass(frozen=True)
class MemoryBreakdown:
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    reserve_bytes: float

    @property
    def total_bytes(self) -> float:
        return (
            self.weights_bytes
            + self.grads_bytes
            + self.optimizer_bytes
            + self.activations_bytes
            + self.reserve_bytes
        )

    def to_dict(self) -> dict:
        d = asdict(self)
        d["total_bytes"] = self.total_bytes
        return d


def activation_bytes_per_token_layer(
    model: ModelConfig, moe: bool, precision: str = "bf16", recompute: str = "none"
) -> float:
    """Bytes kept for backward per token and layer (before the tp split). FP8 runs keep the inputs of
    the four GEMMs (QKV, projection, FC1, FC2) as their FP8 casts, 1 byte instead of 2
    (Transformer Engine). MLA with ``mla_up_proj`` (or full) recompute keeps the compressed latents
    instead of the materialised Q, K, V (DeepSeek-V3 recomputes the up-projections, arXiv 2412.19437
    §3.3.4); ``selective`` (core attention) keeps them, as FlashAttention stores no s² term."""
    h = model.hidden
    if moe:
        k = model.experts_per_token + model.shared_experts
        mlp = h * (1 + k) + 3 * model.moe_ffn_hidden * k
    else:
        mlp = 3 * model.ffn_hidden if model.gated_mlp else 2 * model.ffn_hidden
    attn = 6 * h + 2 * model.kv_dim + (model.q_dim - h)
    if model.mla and recompute in ("mla_up_proj", "full"):
        m = model.mla
        attn = 5 * h + m.kv_lora_rank + m.qk_rope_head_dim + (m.q_lora_rank or h)
    total = 2.0 * (attn + mlp)
    if precision == "fp8":
        fc2_in = (
            model.ffn_hidden
            if not moe
            else model.moe_ffn_hidden * (model.experts_per_token + model.shared_experts)
        )
        total -= 2 * h + model.q_dim + fc2_in
    return total


def memory_per_gpu(
    model: ModelConfig,
    layout: Layout,
    seq_len: int,
    global_batch: int,
    fw: Framework = Framework(),
    cal: Calibration = CALIBRATION,
    precision: str = "bf16",
) -> MemoryBreakdown:
    """Bytes per GPU on the fullest stage."""
    etp = fw.etp(layout.tp)
    lp = local_params(model, layout, etp)
    dp_dense = layout.dp * layout.cp
    dp_expert = expert_dp(layout, etp)
    per_stage, _ = stage_layers(model.layers, layout.pp)
    weights = 2.0 * lp.total
    grads = 4.0 * lp.total
    optimizer = 12.0 * (lp.dense / dp_dense + lp.expert / dp_expert) if fw.zero >= 1 else 12.0 * lp.total
    if fw.zero >= 2:
        grads = 4.0 * (lp.dense / dp_dense + lp.expert / dp_expert)
    if fw.zero >= 3:
        weights = 2.0 * (lp.dense / dp_dense + lp.expert / dp_expert) + 2 * 2.0 * lp.total / max(per_stage, 1)
    tokens = layout.micro_batch * seq_len / layout.cp
    moe_share = model.moe_layers / model.layers if model.is_moe else 0.0
    per_layer = (
        tokens
        / layout.tp
        * (
            (1 - moe_share) * activation_bytes_per_token_layer(model, False, precision, fw.recompute)
            + moe_share * activation_bytes_per_token_layer(model, True, precision, fw.recompute)
        )
    )
    m = layout.micro_batches(global_batch)
    in_flight = min(layout.pp, m)
    if layout.vp > 1:
        in_flight *= 1 + (layout.pp - 1) / (layout.pp * layout.vp)
    if fw.recompute == "full":
        acts = in_flight * per_stage * tokens / layout.tp * 2.0 * model.hidden + per_layer
    else:
        acts = in_flight * per_stage * per_layer
    acts += tokens * model.vocab / layout.tp * 4.0
    return MemoryBreakdown(weights, grads, optimizer, acts, cal.reserve_bytes)
