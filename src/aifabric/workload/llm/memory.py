"""Memory per GPU of a layout: weights, gradients, optimizer state, activations, reserve — counted
for every pipeline rank, the fullest one reported (and the one a refusal names).

* **weights**: BF16, 2 bytes per local parameter: the rank's transformer layers / tp (experts / ep ·
  etp), the input embedding on the first rank, the output layer on the last (a copy of the tied
  embedding when pp > 1, as Megatron keeps one there). ZeRO-3/FSDP: sharded over the DP group, plus
  two layers gathered at a time.
* **gradients**: the main-grad buffer in the precision the gradients are accumulated and reduced in —
  FP32, 4 bytes per local parameter (Megatron's default for BF16: ``accumulate_allreduce_grads_in_fp32``)
  or BF16, 2 bytes (``grad_reduce_fp32: false``); the whole local buffer for ZeRO 0/1 (the
  distributed optimizer shards the optimizer state, not the buffer), sharded over DP for ZeRO-2/3.
* **optimizer**: FP32 master weights + Adam m, v = 12 bytes per parameter, plus an FP32 copy of the
  gradient when gradients are 16-bit (4 bytes): Megatron's distributed-optimizer table
  (Megatron-LM README.md, "Distributed Optimizer": "bf16 param, fp32 grads: 6 + 12/d", "fp16 param, fp16
  grads: 4 + 16/d" bytes per parameter); sharded for ZeRO ≥ 1 over the DP group (dense parameters
  over dp · cp ranks, expert parameters over the expert-data-parallel group).
* **activations** per layer and micro-batch, per token: 2 bytes × (6·h + 2·kv_dim + 3·ffn, or the MoE
  equivalent with top-k experts), divided by tp (sequence parallelism) — flash attention stores no
  s² term, so ``selective`` recompute equals ``none`` here; ``full`` keeps only the layer input
  (2·h bytes per token) plus one layer's full activations. In flight on rank r (Megatron's
  schedules): 1F1B holds min(pp − r, M) micro-batches of the rank's layers; interleaved 1F1B holds
  min(M · vp, 2 (pp − r − 1) + (vp − 1) · G + 1) model chunks, each 1/vp of the rank's layers, G
  the micro-batches per group (Megatron-Core's ``microbatch_group_size_per_vp_stage``, default pp;
  ``framework.pp_group``); DeepSeek's DualPipe holds pp + 1 micro-batches and two copies of the
  parameters (DualPipe README / arXiv 2412.19437 Table 2: activation PP + 1, parameters 2×).
  ``fp8_moe_activations`` (DeepSeek-V3 §3.3.3): the dispatched expert inputs and the SwiGLU inputs
  are cached in FP8 (1 byte) and the SwiGLU output is recomputed (not kept).
  The last rank adds the FP32 logits of one micro-batch, 4 bytes per token per vocab/tp.
* **reserve**: :data:`~aifabric.workload.llm.compute.CALIBRATION` ``reserve_bytes`` (estimate).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from aifabric.errors import InputError
from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.layout import Framework, Layout, rank_layers, stage_layers
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


TERMS = ("weights", "grads", "optimizer", "activations", "reserve")
TERM_NAMES = {"grads": "gradients"}


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU on pipeline rank ``rank`` (the fullest rank when returned by
    :func:`memory_per_gpu`)."""

    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    reserve_bytes: float
    rank: int = 0

    @property
    def total_bytes(self) -> float:
        return sum(getattr(self, f"{t}_bytes") for t in TERMS)

    @property
    def largest(self) -> str:
        """The largest term's name (weights, gradients, optimizer, activations, reserve)."""
        t = max(TERMS, key=lambda t: getattr(self, f"{t}_bytes"))
        return TERM_NAMES.get(t, t)

    def describe(self) -> str:
        """One line: each term and the total in GiB, the rank, the largest term."""
        parts = " + ".join(f"{TERM_NAMES.get(t, t)} {getattr(self, f'{t}_bytes') / GIB:.1f}" for t in TERMS)
        return f"{parts} = {self.total_bytes / GIB:.1f} GiB on pipeline rank {self.rank} (largest: {self.largest})"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["total_bytes"] = self.total_bytes
        d["largest"] = self.largest
        return d


def activation_bytes_per_token_layer(
    model: ModelConfig, moe: bool, precision: str = "bf16", recompute: str = "none", fp8_moe: bool = False
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
    if moe and fp8_moe:  # FP8 dispatch copies and SwiGLU inputs (1 byte), SwiGLU output recomputed
        k = model.experts_per_token + model.shared_experts
        return (
            2.0 * (attn + h)
            + k * h
            + 2 * model.moe_ffn_hidden * k
            - (2 * h + model.q_dim if precision == "fp8" else 0)
        )
    total = 2.0 * (attn + mlp)
    if precision == "fp8":
        fc2_in = (
            model.ffn_hidden
            if not moe
            else model.moe_ffn_hidden * (model.experts_per_token + model.shared_experts)
        )
        total -= 2 * h + model.q_dim + fc2_in
    return total


def rank_params(model: ModelConfig, layout: Layout, etp: int, rank: int) -> LocalParams:
    """Parameters held by one GPU of pipeline rank ``rank`` (see the module docstring)."""
    layers = rank_layers(model.layers, layout.pp)[rank]
    moe_share = model.moe_layers / model.layers if model.is_moe else 0.0
    moe_layers = layers * moe_share
    dense = (layers - moe_layers) * model.dense_layer_params + moe_layers * model.moe_layer_shared_params
    if rank == 0:
        dense += model.embedding_params
    if rank == layout.pp - 1:
        dense += model.head_params if layout.pp == 1 else model.embedding_params
    expert = moe_layers * model.experts * model.expert_params / layout.ep
    return LocalParams(dense=dense / layout.tp, expert=expert / etp)


def in_flight(layout: Layout, rank: int, micro_batches: int, fw: Framework = Framework()) -> float:
    """Micro-batches whose activations rank ``rank`` holds at its peak, in units of the rank's whole
    layer set (Megatron's 1F1B and interleaved-1F1B warm-up, DualPipe; see the module docstring)."""
    pp, vp = layout.pp, layout.vp
    if fw.dualpipe:
        return float(min(pp + 1, micro_batches))
    if vp == 1:
        return float(min(pp - rank, micro_batches))
    group = fw.pp_group or pp
    chunks = min(micro_batches * vp, 2 * (pp - rank - 1) + (vp - 1) * group + 1)
    return chunks / vp


def _state_bytes(
    lp: LocalParams, sharded: float, per_stage: float, fw: Framework
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes for ``lp`` local parameters, ``sharded`` of them after the
    DP sharding."""
    grad_b = 4.0 if fw.grad_reduce_fp32 else 2.0
    opt_b = 12.0 + (0.0 if fw.grad_reduce_fp32 else 4.0)
    weights = 2.0 * lp.total
    if fw.zero >= 3:
        weights = 2.0 * sharded + 2 * 2.0 * lp.total / max(per_stage, 1)
    grads = grad_b * (sharded if fw.zero >= 2 else lp.total)
    optimizer = opt_b * (sharded if fw.zero >= 1 else lp.total)
    copies = 2.0 if fw.dualpipe else 1.0  # DualPipe keeps two copies of the parameters
    return copies * weights, copies * grads, copies * optimizer


def _activations(model, layout, seq_len, fw, precision, rank: int, layers: float, m: int) -> float:
    tokens = layout.micro_batch * seq_len / layout.cp
    moe_share = model.moe_layers / model.layers if model.is_moe else 0.0
    per_layer = (
        tokens
        / layout.tp
        * (
            (1 - moe_share) * activation_bytes_per_token_layer(model, False, precision, fw.recompute)
            + moe_share
            * activation_bytes_per_token_layer(model, True, precision, fw.recompute, fw.fp8_moe_activations)
        )
    )
    held = in_flight(layout, rank, m, fw)
    if fw.recompute == "full":
        acts = held * layers * tokens / layout.tp * 2.0 * model.hidden + per_layer
    else:
        acts = held * layers * per_layer
    if rank == layout.pp - 1:
        acts += tokens * model.vocab / layout.tp * 4.0
    return acts


def memory_per_gpu(
    model: ModelConfig,
    layout: Layout,
    seq_len: int,
    global_batch: int,
    fw: Framework = Framework(),
    cal: Calibration = CALIBRATION,
    precision: str = "bf16",
) -> MemoryBreakdown:
    """Bytes per GPU on the fullest pipeline rank (every rank is counted)."""
    etp = fw.etp(layout.tp)
    dp_dense, dp_expert = layout.dp * layout.cp, expert_dp(layout, etp)
    layers = rank_layers(model.layers, layout.pp)
    m = layout.micro_batches(global_batch)
    best = None
    for rank in range(layout.pp):
        lp = rank_params(model, layout, etp, rank)
        sharded = lp.dense / dp_dense + lp.expert / dp_expert
        w, g, o = _state_bytes(lp, sharded, layers[rank], fw)
        a = _activations(model, layout, seq_len, fw, precision, rank, layers[rank], m)
        mem = MemoryBreakdown(w, g, o, a, cal.reserve_bytes, rank)
        if best is None or mem.total_bytes > best.total_bytes:
            best = mem
    return best


def memory_refusal(mem: MemoryBreakdown, layout: Layout, hbm_bytes: float, what: str = "layout") -> str:
    """The one-line reason a layout is refused: what it needs, term by term, against the GPU."""
    lay = {k: v for k, v in layout.to_dict().items() if k != "order"}  # memory does not depend on it
    return (
        f"does not fit in memory: the {what} {lay} needs {mem.total_bytes / GIB:.1f} GiB per "
        f"GPU, has {hbm_bytes / GIB:.1f} GiB: {mem.describe()}"
    )


def check_memory(mem: MemoryBreakdown, layout: Layout, hbm_bytes: float) -> None:
    """Refuse (one-line :class:`InputError`) a layout whose fullest rank exceeds the GPU's memory —
    the check ``train``, ``compare`` and ``validate --published`` share."""
    if mem.total_bytes > hbm_bytes:
        raise InputError(
            memory_refusal(mem, layout, hbm_bytes),
            field="training.parallelism",
            allowed=REFUSAL_ALLOWED,
        )


REFUSAL_ALLOWED = "more GPUs, a larger pp/tp/cp, full recompute, BF16 gradients, or a GPU with more memory"
