"""Inference traffic on the back-end fabric: does the model need it at all, and if so how much of each
decode step and of each request's time-to-first-token the network takes, per fabric.

* **Placement.** An instance holds the weights (2 bytes per parameter in BF16, 1 in FP8) and the KV
  cache of its concurrent sequences (2 · layers · kv_dim · 2 bytes per token; MLA caches its latent,
  kv_lora_rank + rope dim, DeepSeek-V3) within ``hbm_usable_fraction`` of its GPUs' memory
  (estimate 0.9: runtime, activations, fragmentation). If one NVLink domain (an 8-GPU node or an
  NVL72 rack) holds an instance and prefill/decode are not disaggregated, **nothing goes over the
  back-end fabric**.
* **Decode step, wide expert parallelism** (MoE spread over ``ep`` GPUs beyond the domain, as
  DeepEP's low-latency kernels do it): per MoE layer a dispatch (FP8, 1 byte per value plus one FP32
  scale per 128) and a combine (BF16) all-to-all of batch_per_gpu · top-k · hidden, every top-k copy
  its own message (no node limit), the NVLink part inside a node and the network part at once
  (:func:`aifabric.workload.llm.groups.ep_dispatch_combine`, the training model's code; checked
  against DeepEP's published kernel times in ``aifabric validate --published``), not overlapped
  (decode has no other micro-batch to hide it behind unless two-batch overlap is used: ``overlap``).
  Dense models beyond one domain use pipeline stages: one send of batch · hidden · 2 bytes per stage
  boundary per step.
* **Decode compute**: memory-bound — each step reads the instance's weights (active experts for
  MoE) and the KV cache once, at the sustained HBM bandwidth of its GPUs.
* **NVLink inside the domain** (the same on every back-end fabric, ``decode_nvlink_s``): a dense
  model's tensor parallelism over the domain's GPUs — two all-reduces of batch · hidden · 2 bytes
  per layer (Megatron's TP: one after attention, one after the MLP) — and an MoE instance inside one
  domain's expert all-to-all (the same dispatch/combine as above, over NVLink), not overlapped.
* **Disaggregated prefill → decode**: the request's KV cache (prompt_tokens · KV bytes per token)
  crosses the network once per request (send-recv between the two instances); it adds to the
  time-to-first-token. Prefill compute = 2 · active params · prompt tokens at the fitted GEMM
  efficiency.

The network enters through ``comm.collective_s(op, size_bytes, ranks, span)``, as for training.

**Served tokens at the latency target** (:func:`serve`, the useful unit of ``compare --workload
inference``): the largest batch ≤ the asked one (halving) whose inter-token latency and
time-to-first-token meet the budgets; the cluster's GPU-seconds per request are
n · (prefill + output_tokens · ITL / batch) on an instance of n GPUs, so the cluster serves
gpus · output_tokens / (n · (prefill + output_tokens · ITL / batch)) output tokens per second
(queueing ignored; 0 when no batch meets the budgets).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from aifabric.errors import InputError
from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.gemm import shape_eff
from aifabric.workload.llm.gpus import GpuSpec, get_gpu
from aifabric.workload.llm.groups import ep_dispatch_combine, group_domains
from aifabric.workload.llm.models import ModelConfig, resolve_model
from aifabric.workload.llm.network import PIPELINE_SEND_RECV

HBM_USABLE_FRACTION = 0.9  # estimate: runtime, activations and fragmentation take the rest


@dataclass(frozen=True)
class InferenceSpec:
    """One serving setup. ``gpus_per_instance`` 0 = the fewest GPUs that hold the instance."""

    model: str = "llama3.1-70b"
    precision: str = "fp8"  # bf16 | fp8 (weights)
    prompt_tokens: int = 4096
    output_tokens: int = 512
    batch: int = 64  # concurrent sequences per decode instance
    # MLPerf Inference v5.0 Llama2-70B-Interactive: p99 TTFT ≤ 450 ms, TPOT ≤ 40 ms
    # (https://mlcommons.org/2025/04/llm-inference-v5/)
    ttft_budget_s: float = 0.45
    itl_budget_s: float = 0.04
    disaggregated: bool = False
    gpus_per_instance: int = 0
    overlap: bool = False  # two-batch overlap hides the all-to-all behind the other batch's compute


@dataclass(frozen=True)
class InferenceResult:
    needs_backend: bool
    reason: str
    gpus_per_instance: int
    weights_bytes: float
    kv_bytes_per_token: float
    decode_compute_s: float
    decode_network_s: float  # exposed per decode step, on the back-end fabric
    itl_s: float
    kv_transfer_s: float  # per request (disaggregated)
    prefill_s: float
    ttft_s: float
    meets_itl: bool
    meets_ttft: bool
    network_share_of_itl: float
    decode_nvlink_s: float = 0.0  # per decode step inside the NVLink domain (same on every fabric)

    def to_dict(self) -> dict:
        return asdict(self)


def kv_bytes_per_token(model: ModelConfig) -> float:
    """KV-cache bytes per token over all layers (BF16 cache)."""
    if model.mla:
        return model.layers * (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * 2.0
    return model.layers * 2 * model.kv_dim * 2.0


def inference_step(
    spec: InferenceSpec, gpu: str | GpuSpec, comm, cal: Calibration = CALIBRATION
) -> InferenceResult:
    """Network-exposed time per decode step and per request on the fabric ``comm`` times."""
    if spec.precision not in ("bf16", "fp8"):
        raise InputError(
            "unknown precision", field="inference.precision", value=spec.precision, allowed="bf16, fp8"
        )
    try:
        model = resolve_model(spec.model)
    except InputError as exc:
        raise InputError(exc.problem, field="inference.model", value=exc.value, allowed=exc.allowed) from None
    g = get_gpu(gpu)
    wbytes = 1.0 if spec.precision == "fp8" else 2.0
    weights = model.total_params * wbytes
    kv_tok = kv_bytes_per_token(model)
    kv_total = spec.batch * (spec.prompt_tokens + spec.output_tokens) * kv_tok
    usable = g.hbm_bytes * HBM_USABLE_FRACTION
    need_gpus = max(1, math.ceil((weights + kv_total) / usable))
    n = spec.gpus_per_instance or 2 ** math.ceil(math.log2(need_gpus))
    if (weights + kv_total) > n * usable:
        raise InputError(
            f"needs {(weights + kv_total) / n / 2**30:.1f} GiB per GPU, has {usable / 2**30:.1f} GiB usable",
            field="inference.gpus_per_instance",
            value=spec.gpus_per_instance,
            allowed=f"≥ {need_gpus}",
        )
    domain = g.nvlink_domain_gpus
    spans_nodes = n > domain
    needs_backend = spans_nodes or spec.disaggregated
    if not needs_backend:
        reason = (
            f"an instance fits in {n} GPU(s) inside one {domain}-GPU NVLink domain and is not disaggregated"
        )
    elif spans_nodes:
        reason = f"an instance needs {n} GPUs, more than one {domain}-GPU NVLink domain"
    else:
        reason = "prefill and decode are disaggregated: the KV cache crosses the network per request"

    # decode compute: read the weights used per step (active experts) and the KV cache, per GPU
    active = model.active_params if model.is_moe else model.total_params
    used_experts = 1.0
    if model.is_moe:  # with a batch, many experts are touched; bound by all of them
        hit = 1 - (1 - model.experts_per_token / model.experts) ** spec.batch
        used_experts = min(1.0, hit)
        dense = model.active_params - model.moe_layers * model.experts_per_token * model.expert_params
        active = dense + model.moe_layers * model.experts * model.expert_params * used_experts
    decode_compute = (active * wbytes + kv_total) / n / g.hbm_sustained_bytes_per_s

    decode_net = 0.0
    # the expert all-to-all of one MoE layer: the training model's code (groups.ep_dispatch_combine),
    # FP8 dispatch, every top-k copy its own message (no node limit), the instance's n GPUs one EP group
    a2a = (
        ep_dispatch_combine(
            comm, spec.batch / n, model.experts_per_token, model.hidden, n, 1, g.placement_domain_gpus, True
        )
        if model.is_moe and n >= 2
        else None
    )
    if spans_nodes:
        nodes = group_domains(n, 1, domain)[1]  # NVLink domains the instance spans (an NVL72 rack: 72)
        if a2a is not None:
            t = a2a.dispatch_s + a2a.combine_s
            decode_net = model.moe_layers * (
                max(0.0, t - decode_compute / model.layers) if spec.overlap else t
            )
        else:
            decode_net = (nodes - 1) * comm.collective_s(
                PIPELINE_SEND_RECV, spec.batch * model.hidden * 2.0, 2, "network"
            )
    decode_nvl = 0.0
    tp = min(n, domain)  # GPUs of the instance inside one domain
    if a2a is not None and not spans_nodes:
        decode_nvl = model.moe_layers * (a2a.dispatch_s + a2a.combine_s)
    elif not model.is_moe and tp >= 2:
        decode_nvl = (
            2 * model.layers * comm.collective_s("all-reduce", spec.batch * model.hidden * 2.0, tp, "nvlink")
        )
    itl = decode_compute + decode_net + decode_nvl

    # prefill GEMMs: the large-GEMM efficiency × the shape factor of a hidden × hidden GEMM over the
    # prompt's tokens (gemm.py)
    prefill = 2.0 * model.active_params * spec.prompt_tokens / (n * g.peak_tflops(spec.precision) * 1e12 * (
        cal.fp8_gemm_efficiency if spec.precision == "fp8" else cal.gemm_efficiency
    ) * shape_eff(spec.prompt_tokens, model.hidden, model.hidden, spec.precision, g.sms))  # fmt: skip
    kv_transfer = (
        comm.collective_s("send-recv", spec.prompt_tokens * kv_tok / min(n, domain), 2, "network")
        if spec.disaggregated
        else 0.0
    )
    ttft = prefill + kv_transfer
    return InferenceResult(
        needs_backend=needs_backend,
        reason=reason,
        gpus_per_instance=n,
        weights_bytes=weights,
        kv_bytes_per_token=kv_tok,
        decode_compute_s=decode_compute,
        decode_network_s=decode_net,
        itl_s=itl,
        kv_transfer_s=kv_transfer,
        prefill_s=prefill,
        ttft_s=ttft,
        meets_itl=itl <= spec.itl_budget_s,
        meets_ttft=ttft <= spec.ttft_budget_s,
        network_share_of_itl=decode_net / itl if itl > 0 else 0.0,
        decode_nvlink_s=decode_nvl,
    )


@dataclass(frozen=True)
class ServingResult:
    """The cluster serving ``spec`` on one fabric at the latency budgets (see the module docstring)."""

    step: InferenceResult  # at the batch served
    batch: int  # the largest batch ≤ the asked one that meets both budgets (the asked one if none does)
    asked_batch: int
    meets_budget: bool
    instances: int  # decode instances the cluster holds (gpus // gpus_per_instance)
    tokens_per_s: float  # output tokens/s the cluster serves within the budgets (0 when none meets them)
    tokens_per_s_unbounded: float  # at the asked batch, whatever the latency

    def to_dict(self) -> dict:
        d = self.step.to_dict()
        d.update(
            batch=self.batch,
            asked_batch=self.asked_batch,
            meets_budget=self.meets_budget,
            instances=self.instances,
            tokens_per_s=self.tokens_per_s,
            tokens_per_s_unbounded=self.tokens_per_s_unbounded,
        )
        return d


def _cluster_tokens_per_s(r: InferenceResult, spec: InferenceSpec, batch: int, gpus: int) -> float:
    per_request = r.gpus_per_instance * (r.prefill_s + spec.output_tokens * r.itl_s / batch)
    return gpus * spec.output_tokens / per_request


def serve(
    spec: InferenceSpec, gpu: str | GpuSpec, comm, gpus: int, cal: Calibration = CALIBRATION
) -> ServingResult:
    """Served output tokens per second of ``gpus`` GPUs within the TTFT and ITL budgets on ``comm``."""
    from dataclasses import replace

    first = inference_step(spec, gpu, comm, cal)
    n = first.gpus_per_instance
    if gpus < n:
        raise InputError(
            f"one instance needs {n} GPUs, the cluster has {gpus}",
            field="inference.gpus_per_instance",
            value=spec.gpus_per_instance or n,
            allowed=f"a cluster of ≥ {n} GPUs, or a smaller model / batch",
        )
    fixed = replace(spec, gpus_per_instance=n)  # the instance keeps its size at smaller batches
    batch, r = spec.batch, first
    while not (r.meets_itl and r.meets_ttft) and batch > 1:
        batch = max(1, batch // 2)
        r = inference_step(replace(fixed, batch=batch), gpu, comm, cal)
    ok = r.meets_itl and r.meets_ttft
    if not ok:
        batch, r = spec.batch, first
    return ServingResult(
        step=r,
        batch=batch,
        asked_batch=spec.batch,
        meets_budget=ok,
        instances=gpus // n,
        tokens_per_s=_cluster_tokens_per_s(r, spec, batch, gpus) if ok else 0.0,
        tokens_per_s_unbounded=_cluster_tokens_per_s(first, spec, spec.batch, gpus),
    )
