"""The scenario file's ``training:`` section (interface.md), as a frozen pydantic model.

```yaml
training:
  model: llama3.1-405b        # a built-in name, or a mapping: layers, hidden, ffn_hidden, heads,
                              # kv_heads, vocab (+ MoE: experts, experts_per_token, moe_ffn_hidden,
                              # shared_experts)
  precision: bf16             # bf16 | fp8
  seq_len: 8192
  global_batch: 252           # sequences per optimizer step
  micro_batch: 1              # optional: left out = searched
  parallelism: {tp: 8, pp: 9, cp: 2, vp: 7}   # any key left out is searched; dp follows
    # order: tp-cp-ep-dp-pp   # rank order, innermost first (Megatron's default; tp-pp-dp puts a
    #                         # pipeline's stages side by side); left out = searched
```

Optional extensions (not in the contract, all with defaults): ``framework:`` (the
:class:`~aifabric.workload.llm.layout.Framework` options: recompute, zero, grad_reduce_fp32,
overlap_grad_reduce, overlap_param_gather, tp_comm_overlap, ep_a2a_overlap, overlap_p2p,
fp8_param_gather, a2a_fp8_dispatch, comm_sms, expert_tp, a2a_node_limit, fp8_recipe, tp_overlap, pp_group, dualpipe, fp8_moe_activations),
``overlap:`` (a preset named after a public recipe, or a mapping ``{preset, tp, grad_reduce,
param_gather, p2p}``: :mod:`aifabric.workload.llm.overlap`; it sets the framework's overlap flags,
and a flag ``framework:`` names itself wins) and ``compute_efficiency`` (a measured GEMM
efficiency that replaces the fitted one). Unknown keys are errors; a model mapping with unknown keys
is an error naming the key.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aifabric.workload.llm.layout import Framework, parse_order
from aifabric.workload.llm.models import ModelConfig, resolve_model
from aifabric.workload.llm.overlap import overlap_flags, resolve_overlap, tp_table


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ParallelismSpec(_Frozen):
    """Parallel degrees; ``None`` (left out) = searched."""

    tp: int | None = Field(None, ge=1, description="tensor parallel (with sequence parallelism)")
    pp: int | None = Field(None, ge=1, description="pipeline stages")
    cp: int | None = Field(None, ge=1, description="context parallel")
    vp: int | None = Field(None, ge=1, description="model chunks per pipeline rank (interleaved 1F1B)")
    dp: int | None = Field(None, ge=1, description="data parallel (follows from the others when left out)")
    ep: int | None = Field(None, ge=1, description="expert parallel (MoE); divides dp × cp")
    order: str | None = Field(
        None, description="rank order, innermost first, e.g. tp-cp-ep-dp-pp (Megatron's default) or tp-pp-dp"
    )

    @field_validator("order")
    @classmethod
    def _known_order(cls, v):
        if v is not None:
            parse_order(v)  # raises InputError (a ValueError) naming what is allowed
        return v


class FrameworkSpec(_Frozen):
    """How the framework runs the layout (defaults: Megatron-Core / NeMo)."""

    recompute: Literal["none", "selective", "mla_up_proj", "full"] = "none"
    zero: Literal[0, 1, 2, 3] = 1
    grad_reduce_fp32: bool = True
    overlap_grad_reduce: bool = True
    overlap_param_gather: bool = True
    tp_comm_overlap: bool = False
    ep_a2a_overlap: bool = False
    overlap_p2p: bool | None = None
    fp8_param_gather: bool = False
    a2a_fp8_dispatch: bool = False
    comm_sms: int = Field(0, ge=0)
    expert_tp: int | None = Field(None, ge=1)
    a2a_node_limit: int | None = Field(None, ge=1)
    fp8_recipe: Literal["tensorwise", "blockwise"] = "tensorwise"
    tp_overlap: str = "te-default"
    pp_group: int | None = Field(None, ge=1)
    dualpipe: bool = False
    fp8_moe_activations: bool = False

    @field_validator("tp_overlap")
    @classmethod
    def _known_table(cls, v):
        tp_table(v)  # raises InputError (a ValueError) naming the tables
        return v

    def to_framework(self) -> Framework:
        return Framework(**self.model_dump())


class TrainingSpec(_Frozen):
    """The ``training:`` section."""

    model: str | dict[str, int | bool | str] = "llama3.1-70b"
    precision: Literal["bf16", "fp8"] = "bf16"
    seq_len: int = Field(8192, ge=1)
    global_batch: int = Field(1024, ge=1, description="sequences per optimizer step")
    micro_batch: int | None = Field(None, ge=1)
    parallelism: ParallelismSpec = ParallelismSpec()
    framework: FrameworkSpec = FrameworkSpec()
    compute_efficiency: float | None = Field(None, gt=0, le=1)
    overlap: str | dict[str, str | bool | None] | None = Field(
        None, description="an overlap preset name or a mapping (preset, tp, grad_reduce, param_gather, p2p)"
    )

    @model_validator(mode="before")
    @classmethod
    def _overlap_into_framework(cls, data):
        """``overlap`` sets the framework's overlap flags; a flag ``framework`` names itself wins."""
        if not isinstance(data, dict) or data.get("overlap") is None:
            return data
        fw = dict(data.get("framework") or {})
        for key, value in overlap_flags(resolve_overlap(data["overlap"])).items():
            fw.setdefault(key, value)
        return {**data, "framework": fw}

    @field_validator("model")
    @classmethod
    def _known_model(cls, v):
        resolve_model(v)  # raises InputError (a ValueError) naming the key or the allowed names
        return v

    def model_config_resolved(self) -> ModelConfig:
        """The :class:`ModelConfig` this section names or describes."""
        return resolve_model(self.model)

    def fixed_layout(self) -> dict:
        """The layout keys the user gave (the others are searched)."""
        d = {k: v for k, v in self.parallelism.model_dump().items() if v is not None}
        if self.micro_batch is not None:
            d["micro_batch"] = self.micro_batch
        return d
