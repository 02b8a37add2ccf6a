"""Transformer architectures with their public configurations, and the counts derived from them.

A :class:`ModelConfig` holds what a framework needs to lay a model out: layers, hidden size, MLP
width, attention heads and KV heads (GQA), vocabulary, and for mixture-of-experts models the
routed experts, experts per token, expert MLP width, shared experts and the number of leading
dense layers. DeepSeek-V3's multi-head latent attention (MLA) is described by its LoRA ranks and
head dimensions (:class:`MlaConfig`).

Built-in models (:data:`MODELS`) are copied from each model's public ``config.json`` or paper
(the ``source`` field names it). A model may also be given as a mapping (:func:`model_from_mapping`)
with the keys ``layers, hidden, ffn_hidden, heads, kv_heads, vocab`` and, for MoE, ``experts,
experts_per_token, moe_ffn_hidden, shared_experts`` (plus optional ``head_dim, dense_layers,
gated_mlp, tied_embeddings, name``); unknown keys are an :class:`~aifabric.errors.InputError`.

Model FLOPs (the MFU numerator, :meth:`ModelConfig.model_flops_per_token`) follow the convention
of NVIDIA's published benchmarks (dgxc-benchmarking, NeMo): 6 × (matmul parameters active per
token, including the output layer, excluding the embedding lookup) + 3 × the forward attention
score FLOPs counted *without* the causal mask (4 · s · heads · head_dim per token and layer). It
reproduces the FLOPs per sample those sources print: Llama 3.1 8B 4.74e14, 70B 3.94e15 at seq 8192
(tested).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from aifabric.errors import InputError


@dataclass(frozen=True)
class MlaConfig:
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and KV projections."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer. MoE when ``experts`` > 0; layers ``dense_layers`` .. end are MoE."""

    name: str
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    head_dim: int = 0  # 0 = hidden / heads
    gated_mlp: bool = True  # SwiGLU (3 matrices) vs GELU / squared-ReLU (2 matrices)
    tied_embeddings: bool = False
    experts: int = 0
    experts_per_token: int = 0
    moe_ffn_hidden: int = 0
    shared_experts: int = 0
    dense_layers: int = 0  # leading dense layers of an MoE model (DeepSeek-V3: 3)
    mla: MlaConfig | None = None
    source: str = ""

    # ---- shapes --------------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def head_dim_eff(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def qk_head_dim(self) -> int:
        return self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim if self.mla else self.head_dim_eff

    @property
    def v_head_dim(self) -> int:
        return self.mla.v_head_dim if self.mla else self.head_dim_eff

    @property
    def kv_dim(self) -> int:
        """Width of K (= of V) per token in the attention kernel, all KV heads."""
        if self.mla:  # MLA is materialised to full heads for training
            return self.heads * self.qk_head_dim
        return self.kv_heads * self.head_dim_eff

    @property
    def q_dim(self) -> int:
        return self.heads * self.qk_head_dim

    # ---- parameter counts ----------------------------------------------------------------
    @property
    def attention_params(self) -> int:
        h = self.hidden
        if self.mla:
            m = self.mla
            q = h * m.q_lora_rank + m.q_lora_rank * self.q_dim if m.q_lora_rank else h * self.q_dim
            kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * self.heads * (
                m.qk_nope_head_dim + m.v_head_dim
            )
            return q + kv + self.heads * m.v_head_dim * h
        hd = self.head_dim_eff
        return h * self.heads * hd + 2 * h * self.kv_heads * hd + self.heads * hd * h

    def mlp_params(self, width: int) -> int:
        return (3 if self.gated_mlp else 2) * self.hidden * width

    @property
    def dense_mlp_params(self) -> int:
        return self.mlp_params(self.ffn_hidden)

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert."""
        return self.mlp_params(self.moe_ffn_hidden) if self.is_moe else 0

    @property
    def moe_layer_shared_params(self) -> int:
        """Per MoE layer: the parameters every token uses (attention, shared experts, router)."""
        return (
            self.attention_params
            + self.shared_experts * self.expert_params
            + self.hidden * self.experts
            + 2 * self.hidden
        )

    @property
    def dense_layer_params(self) -> int:
        return self.attention_params + self.dense_mlp_params + 2 * self.hidden

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden

    @property
    def head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @property
    def total_params(self) -> int:
        dense = (self.layers - self.moe_layers) * self.dense_layer_params
        moe = self.moe_layers * (self.moe_layer_shared_params + self.experts * self.expert_params)
        return dense + moe + self.embedding_params + self.head_params

    @property
    def active_params(self) -> int:
        dense = (self.layers - self.moe_layers) * self.dense_layer_params
        moe = self.moe_layers * (self.moe_layer_shared_params + self.experts_per_token * self.expert_params)
        return dense + moe + self.embedding_params + self.head_params

    # ---- FLOPs (MFU convention, see module docstring) ------------------------------------
    def matmul_params_per_token(self) -> int:
        """Matmul parameters a token passes through (output layer included, embedding excluded)."""
        dense = (self.layers - self.moe_layers) * (self.attention_params + self.dense_mlp_params)
        moe = self.moe_layers * (
            self.attention_params
            + (self.shared_experts + self.experts_per_token) * self.expert_params
            + self.hidden * self.experts
        )
        return dense + moe + self.vocab * self.hidden

    def attention_score_flops_per_token(self, seq_len: int) -> float:
        """Forward QKᵀ and AV FLOPs per token over all layers, without the causal mask."""
        return 2.0 * seq_len * self.heads * (self.qk_head_dim + self.v_head_dim) * self.layers

    def model_flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token: 6 × matmul params + 3 × non-causal attention scores."""
        return 6.0 * self.matmul_params_per_token() + 3.0 * self.attention_score_flops_per_token(seq_len)


def _dense(name, layers, hidden, ffn, heads, kv, vocab, source, **kw) -> ModelConfig:
    return ModelConfig(name, layers, hidden, ffn, heads, kv, vocab, source=source, **kw)


_LLAMA = "meta-llama/Llama-3.1-{} config.json (Hugging Face)"

MODELS: dict[str, ModelConfig] = {
    "llama3.1-8b": _dense("llama3.1-8b", 32, 4096, 14336, 32, 8, 128256, _LLAMA.format("8B")),
    "llama3.1-70b": _dense("llama3.1-70b", 80, 8192, 28672, 64, 8, 128256, _LLAMA.format("70B")),
    "llama3.1-405b": _dense("llama3.1-405b", 126, 16384, 53248, 128, 8, 128256, _LLAMA.format("405B")),
    "gpt3-175b": _dense(
        "gpt3-175b",
        96,
        12288,
        49152,
        96,
        96,
        51200,
        "GPT-3 paper (arXiv 2005.14165) Table 2.1; vocab 50257 padded to 51200 as Megatron/NeMo do",
        gated_mlp=False,
        tied_embeddings=True,
    ),
    "nemotron4-340b": _dense(
        "nemotron4-340b",
        96,
        18432,
        73728,
        96,
        8,
        256000,
        "Nemotron-4 340B technical report (arXiv 2406.11704) Table 1: squared-ReLU MLP, GQA 8, "
        "untied embeddings",
        gated_mlp=False,
    ),
    "qwen3-32b": _dense(
        "qwen3-32b",
        64,
        5120,
        25600,
        64,
        8,
        151936,
        "Qwen/Qwen3-32B config.json (Hugging Face, 2025): head_dim 128",
        head_dim=128,
    ),
    "mixtral-8x7b": ModelConfig(
        "mixtral-8x7b",
        32,
        4096,
        14336,
        32,
        8,
        32000,
        experts=8,
        experts_per_token=2,
        moe_ffn_hidden=14336,
        source="mistralai/Mixtral-8x7B-v0.1 config.json (Hugging Face)",
    ),
    "mixtral-8x22b": ModelConfig(
        "mixtral-8x22b",
        56,
        6144,
        16384,
        48,
        8,
        32768,
        experts=8,
        experts_per_token=2,
        moe_ffn_hidden=16384,
        source="mistralai/Mixtral-8x22B-v0.1 config.json (Hugging Face)",
    ),
    "deepseek-v3": ModelConfig(
        "deepseek-v3",
        61,
        7168,
        18432,
        128,
        128,
        129280,
        experts=256,
        experts_per_token=8,
        moe_ffn_hidden=2048,
        shared_experts=1,
        dense_layers=3,
        mla=MlaConfig(
            q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128
        ),
        source="deepseek-ai/DeepSeek-V3 config.json (Hugging Face) and arXiv 2412.19437 §4.2; the "
        "multi-token-prediction module is not modelled",
    ),
    "grok-1": ModelConfig(
        "grok-1",
        64,
        6144,
        32768,
        48,
        8,
        131072,
        experts=8,
        experts_per_token=2,
        moe_ffn_hidden=32768,
        source="xai-org/grok-1 run.py (64 layers, emb 6144, 48 q / 8 kv heads, 8 experts top-2, widening "
        "factor 8 → ffn 32768, vocab 131072)",
    ),
    "qwen3-235b-a22b": ModelConfig(
        "qwen3-235b-a22b",
        94,
        4096,
        12288,
        64,
        4,
        151936,
        head_dim=128,
        experts=128,
        experts_per_token=8,
        moe_ffn_hidden=1536,
        source="Qwen/Qwen3-235B-A22B config.json (Hugging Face, 2025): every layer MoE, no shared expert",
    ),
}

ALIASES: dict[str, str] = {
    "llama3-8b": "llama3.1-8b",
    "llama3-70b": "llama3.1-70b",
    "llama3-405b": "llama3.1-405b",
    "gpt3": "gpt3-175b",
    "deepseek-moe": "deepseek-v3",
}

MAPPING_KEYS_REQUIRED = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab")
MAPPING_KEYS_MOE = ("experts", "experts_per_token", "moe_ffn_hidden", "shared_experts")
MAPPING_KEYS_OPTIONAL = ("name", "head_dim", "dense_layers", "gated_mlp", "tied_embeddings")


def get_model(name: str) -> ModelConfig:
    """A built-in model by name (or alias); :class:`InputError` naming the allowed names."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in MODELS:
        raise InputError(
            "unknown model", field="training.model", value=name, allowed=", ".join([*MODELS, *ALIASES])
        )
    return MODELS[key]


def model_from_mapping(spec: Mapping) -> ModelConfig:
    """A model from a mapping of its architecture (see module docstring)."""
    allowed = (*MAPPING_KEYS_REQUIRED, *MAPPING_KEYS_MOE, *MAPPING_KEYS_OPTIONAL)
    for key in spec:
        if key not in allowed:
            raise InputError("unknown model key", field=f"training.model.{key}", allowed=", ".join(allowed))
    for key in MAPPING_KEYS_REQUIRED:
        if key not in spec:
            raise InputError("missing", field=f"training.model.{key}", allowed="a positive integer")
    values: dict = {"name": str(spec.get("name", "custom"))}
    ints = [k for k in allowed if k not in ("name", "gated_mlp", "tied_embeddings")]
    for key in ints:
        if key not in spec:
            continue
        v = spec[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (key in MAPPING_KEYS_REQUIRED and v < 1):
            raise InputError("must be a positive integer", field=f"training.model.{key}", value=v)
        values[key] = v
    for key in ("gated_mlp", "tied_embeddings"):
        if key in spec:
            if not isinstance(spec[key], bool):
                raise InputError("must be true or false", field=f"training.model.{key}", value=spec[key])
            values[key] = spec[key]
    model = ModelConfig(**values, source="user mapping")
    check_model(model)
    return model


def check_model(model: ModelConfig) -> None:
    """Consistency checks with one-line errors."""
    if model.heads % model.kv_heads:
        raise InputError(
            f"heads {model.heads} must be a multiple of kv_heads", field="training.model.kv_heads",
            value=model.kv_heads,
        )  # fmt: skip
    if not model.head_dim and model.hidden % model.heads:
        raise InputError(
            "hidden must be a multiple of heads (or give head_dim)", field="training.model.heads",
            value=model.heads,
        )  # fmt: skip
    moe_given = [model.experts, model.experts_per_token, model.moe_ffn_hidden]
    if any(moe_given) and not all(moe_given):
        raise InputError(
            "an MoE model needs experts, experts_per_token and moe_ffn_hidden",
            field="training.model",
            allowed="all three, or none",
        )
    if model.is_moe and model.experts_per_token > model.experts:
        raise InputError(
            "experts_per_token exceeds experts", field="training.model.experts_per_token",
            value=model.experts_per_token,
        )  # fmt: skip
    if model.dense_layers >= model.layers and model.is_moe:
        raise InputError("dense_layers must be fewer than layers", field="training.model.dense_layers")


def resolve_model(model: str | Mapping | ModelConfig) -> ModelConfig:
    """A :class:`ModelConfig` from a built-in name, a mapping, or a config (returned as is)."""
    if isinstance(model, ModelConfig):
        return model
    if isinstance(model, Mapping):
        return model_from_mapping(model)
    return get_model(model)


def with_changes(model: ModelConfig, **changes) -> ModelConfig:
    """A copy of ``model`` with fields changed (names checked)."""
    names = {f.name for f in fields(ModelConfig)}
    bad = set(changes) - names
    if bad:
        raise InputError(
            "unknown model field", field=", ".join(sorted(bad)), allowed=", ".join(sorted(names))
        )
    return replace(model, **changes)
