"""The step-time model's attention throughput against NVIDIA's published cuDNN SDPA benchmarks.

One layer's attention time from :func:`aifabric.workload.llm.compute.layer_time` (the path every
step takes), turned into TFLOPS with the benchmarks' own FLOP count (causal: 4·s²·heads·d/2
forward, 2.5× that backward), next to each measured point (gpus.py :data:`CUDNN_SDPA_B200`,
:data:`CUDNN_SDPA_H200`). B200's points are the *source* of Blackwell's fractions (mean of 8K and
16K, so each point sits a few percent off); H200's are a *check* on Hopper's FlashAttention-3
fractions, which were not taken from them.
"""

from __future__ import annotations

from aifabric.workload.llm.compute import layer_time
from aifabric.workload.llm.gpus import CUDNN_SDPA_B200, CUDNN_SDPA_H200, SOURCES, get_gpu
from aifabric.workload.llm.models import get_model

ATTENTION_TOLERANCE = 0.10

# the B200 benchmark's shape is Llama 3.1 405B's attention (128 Q / 8 KV heads, d = 128); the
# model's attention rate does not depend on the head count
_PROBE = "llama3.1-405b"


def model_attention_tflops(gpu_name: str, seq: int) -> tuple[float, float]:
    """(forward, backward) TFLOPS at which the model runs causal attention over ``seq`` tokens."""
    model = get_model(_PROBE)
    lt = layer_time(model, get_gpu(gpu_name), "bf16", tokens=seq, seq_len=seq, tp=1, moe=False)
    flops = 4.0 * seq * seq * model.heads * model.qk_head_dim / 2
    return flops / lt.attn_fwd_s / 1e12, 2.5 * flops / lt.attn_bwd_s / 1e12


def attention_validation_table() -> list[dict]:
    """One row per measured point and pass: published and model TFLOPS, signed error, role."""
    rows = []
    for gpu, table, role, tag in (
        ("b200", CUDNN_SDPA_B200, "source", "CUDNN-B200"),
        ("h200", CUDNN_SDPA_H200, "check", "CUDNN-H200"),
    ):
        for seq in (8192, 16384):
            model = model_attention_tflops(gpu, seq)
            for i, direction in enumerate(("forward", "backward")):
                err = model[i] / table[seq][i] - 1
                rows.append(
                    {
                        "case": f"{gpu.upper()} causal {seq // 1024}K {direction}",
                        "published_tflops": table[seq][i],
                        "model_tflops": model[i],
                        "error": err,
                        "within_tolerance": abs(err) <= ATTENTION_TOLERANCE,
                        "role": role,
                        "source": f"[{tag}] {SOURCES[tag]}",
                    }
                )
    return rows
