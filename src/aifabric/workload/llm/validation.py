"""The step-time model against published step times, with one parameter set for every case.

Each :class:`Case` is a public training run with its full configuration (model, GPU and count,
precision, sequence, global batch, layout, framework settings) and one published number: a step
time, tokens/s per GPU or model TFLOP/s per GPU. The network of the published cluster is the
sourced α-β model of :mod:`aifabric.workload.llm.network` at the cluster's link rate.

Parameters: :data:`~aifabric.workload.llm.compute.CALIBRATION` — the same for all cases. Four of
its fitted values are fitted on the cases marked ``role="fit"`` only, the straggler spread on
:data:`SCALING_FIT_SERIES` (:func:`fit_calibration`); every other case is a validation case. Grades: A = primary artefact (repository file, paper text),
B = credible secondary source (see ../shared/reference/published-training.md).

:func:`validation_table` returns the rows ``case, source, published, model, error`` that
``aifabric validate`` prints.

Models that only a validation case uses (the GPT-like models of Megatron-LM's weak-scaling table)
are kept in :data:`VALIDATION_MODELS`, not in the user-facing registry.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from aifabric.errors import InputError
from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.gpus import GIB, get_gpu
from aifabric.workload.llm.layout import Framework, Layout
from aifabric.workload.llm.memory import check_memory
from aifabric.workload.llm.models import ModelConfig, get_model
from aifabric.workload.llm.network import AlphaBetaNetwork
from aifabric.workload.llm.step import StepResult, expected_slowest, step_time

TOLERANCE = 0.10

DGXC_2504 = "NVIDIA/dgxc-benchmarking llama3.1/README.md @741c886025a7 (v25.04), Eos H100, InfiniBand"
DGXC_2411 = "NVIDIA/dgxc-benchmarking nemo_megatron/README_175b.md @35a9aec (24.11), Eos H100, InfiniBand"
DGXC_2505 = "NVIDIA/dgxc-benchmarking llama3.1/README.md @1f6d9f40e411 (v25.05.04), GB200 NVL72"
LLAMA3 = (
    "Llama 3 paper (arXiv 2407.21783) Table 4 / Balaji SC'24 slide (via glennklockwood.com/garden/llama-3.1); "
    "Meta's 24K-GPU RoCE cluster, 400 Gb/s per GPU"
)
DSV3 = (
    "DeepSeek-V3 report arXiv 2412.19437 §3.1-3.2, §4.2: 180K H800 GPU-hours per trillion tokens; "
    "2,048 H800, InfiniBand 400 Gb/s per GPU"
)

DGXC_DSV3 = "NVIDIA/dgxc-benchmarking deepseek_v3/pretraining/README.md @1f6d9f4 (no MTP)"
DGXC_GROK = "NVIDIA/dgxc-benchmarking grok1/README.md @1f6d9f4, H100, InfiniBand"
NEMO_2502 = "NeMo performance_summary page (25.02), stored excerpt (published-training.md 1.25, 1.35, 1.36)"
NEMO_2504 = "NeMo performance_summary page (25.04), stored excerpt (published-training.md 1.26, 1.37)"
NEMO_2407 = "NVIDIA/NeMo docs/source/performance/performance_summary.md @070a0bb1 (24.07)"


def _nemo(label, source, grade, model, gpu, gpus, prec, seq, gbs, layout, tok_s, tags=()) -> Case:
    fw = (GPT3_H100 if gpu == "h100" else GPT3_B200) if model == "gpt3-175b" else NEMO
    return Case(label, source, grade, model, gpu, gpus, prec, seq, gbs, layout, "tokens_per_s_per_gpu", tok_s,
                framework=fw, tags=tags)  # fmt: skip


NEMO = Framework(tp_comm_overlap=True)  # NeMo recipes: distributed optimizer, FP32 grad reduce, overlaps on
# NeMo's gpt3_175b recipe names its Transformer Engine TP overlap table per GPU (overlap.py)
GPT3_H100 = Framework(tp_comm_overlap=True, tp_overlap="nemo-h100-h12288-tp4")
GPT3_B200 = Framework(tp_comm_overlap=True, tp_overlap="nemo-b200-h12288-tp4")


@dataclass(frozen=True)
class Case:
    """One published run and its number."""

    case: str
    source: str
    grade: str
    model: str
    gpu: str
    gpus: int
    precision: str
    seq_len: int
    global_batch: int
    layout: Layout
    metric: str  # step_s | tokens_per_s_per_gpu | tflops_per_gpu
    published: float
    fabric: str = "infiniband"
    link_gbps: float = 400.0
    framework: Framework = NEMO
    role: str = "validate"  # fit | validate
    fits: str = ""  # the Calibration field this case fits (role "fit")
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


def _dgxc_8b(gpus: int, prec: str, step: float, role: str = "validate") -> Case:
    return Case(
        f"Llama 3.1 8B {prec.upper()} {gpus} H100",
        DGXC_2504,
        "A",
        "llama3.1-8b",
        "h100",
        gpus,
        prec,
        8192,
        16 * gpus,
        Layout(tp=1, pp=1, cp=2, dp=gpus // 2),
        "step_s",
        step,
        role=role,
        fits=("gemm_efficiency" if prec == "bf16" else "fp8_gemm_efficiency") if role == "fit" else "",
        tags=("weak-scaling",),
    )


def _dgxc_70b(gpus: int, prec: str, step: float) -> Case:
    lay = (
        Layout(tp=4, pp=4, cp=2, vp=5, dp=gpus // 32)
        if prec == "bf16"
        else Layout(tp=4, pp=8, cp=1, vp=5, dp=gpus // 32)
    )
    return Case(
        f"Llama 3.1 70B {prec.upper()} {gpus} H100",
        DGXC_2504,
        "A",
        "llama3.1-70b",
        "h100",
        gpus,
        prec,
        8192,
        2 * gpus,
        lay,
        "step_s",
        step,
        role="fit" if (gpus == 64 and prec == "bf16") else "validate",
        fits="tp_overlap_interference" if (gpus == 64 and prec == "bf16") else "",
        # the NeMo llama3_70b recipe's TP overlap table (MegatronCommOverlapCallback)
        framework=Framework(tp_comm_overlap=True, tp_overlap="nemo-h100-h8192-tp4"),
        tags=("weak-scaling",) + (("dense-1000",) if gpus >= 1000 else ()),
    )


def _dgxc_175b(gpus: int, prec: str, step: float) -> Case:
    return Case(
        f"GPT-3 175B {prec.upper()} {gpus} H100",
        DGXC_2411,
        "A",
        "gpt3-175b",
        "h100",
        gpus,
        prec,
        2048,
        2 * gpus,
        Layout(tp=4, pp=8, cp=1, vp=12, dp=gpus // 32),
        "step_s",
        step,
        framework=GPT3_H100,
        tags=("weak-scaling",) + (("dense-1000",) if gpus >= 1000 else ()),
    )


def _gb200_405b(gpus: int, prec: str, step: float) -> Case:
    return Case(
        f"Llama 3.1 405B {prec.upper()} {gpus} GB200",
        DGXC_2505,
        "A",
        "llama3.1-405b",
        "gb200",
        gpus,
        prec,
        8192,
        gpus // 2,
        Layout(tp=4, pp=8, cp=2, vp=8, dp=gpus // 64),
        "step_s",
        step,
        role="fit" if (gpus == 128 and prec == "bf16") else "validate",
        fits="blackwell_gemm_scale" if (gpus == 128 and prec == "bf16") else "",
        framework=Framework(tp_comm_overlap=True, tp_overlap=f"nemo-b200-h16384-tp4-cp2-{prec}"),
        tags=("weak-scaling",),
    )


def _llama3_meta(gpus: int, dp: int, tflops: float) -> Case:
    return Case(
        f"Llama 3 405B BF16 {gpus} H100 (Meta, RoCE)",
        LLAMA3,
        "B",
        "llama3.1-405b",
        "h100",
        gpus,
        "bf16",
        8192,
        2048,
        Layout(tp=8, pp=16, cp=1, vp=8, dp=dp),
        "tflops_per_gpu",
        tflops,
        fabric="roce",
        # §3.3.2: "Our use of FSDP for Llama 3 shards the optimizer states and gradients, but for model
        # shards we do not reshard after forward computation"; §3.3.4: FP32 gradient accumulation and
        # FP32 reduce-scatter across data-parallel workers — ZeRO-2 in this package's terms
        framework=Framework(zero=2),
        notes="data parallelism as published (Llama 3 paper §3.3.2, §3.3.4): FSDP sharding optimizer states and "
        "gradients (ZeRO-2), gradients accumulated and reduce-scattered in FP32; other framework settings not "
        "published: Megatron defaults (no TP-comm overlap, no recompute); vp not published: 8, one layer per model chunk "
        "(126 layers, 7 on the first and last stage, 8 on the others, §3.3.2) — the interleaving that holds the "
        "fewest activations, the only reading under which the 8,192-GPU run's 32 micro-batches come near 80 GB "
        "(vp 4 needs 86 GiB on rank 1); "
        "TFLOPS counted with this package's convention (Meta's may differ by the causal-mask share, ≤ 4 %)",
        tags=("roce", "dense-1000"),
    )


def _dsv3_nvidia(gpu: str, gpus: int, pp: int, ep: int, gbs: int, step: float) -> Case:
    return Case(
        f"DeepSeek-V3 BF16 {gpus} {gpu.upper()} (NVIDIA recipe)",
        DGXC_DSV3,
        "A",
        "deepseek-v3",
        gpu,
        gpus,
        "bf16",
        4096,
        gbs,
        Layout(tp=2, pp=pp, cp=1, vp=1, dp=gpus // (2 * pp), ep=ep),
        "step_s",
        step,
        # recompute modules as the recipe sets them (launch.sh @1f6d9f4: H100 RM='mla_up_proj', GB200
        # RM='core_attn' = Megatron's selective); TP-comm overlap off (pretrain_deepseek_v3.py, NeMo v2.3.0)
        framework=Framework(expert_tp=1, recompute="mla_up_proj" if gpu == "h100" else "selective"),
        notes="expert TP 1, recompute modules mla_up_proj (H100) / core_attn (GB200), TP-comm overlap off, "
        "token drop with capacity factor 1 and padding (balanced experts), NCCL all-to-all dispatcher "
        "(launch.sh @1f6d9f4; NeMo v2.3.0 scripts/performance/llm/pretrain_deepseek_v3.py). "
        "The same software's GB200 write-up (Megatron-LM deepseek-v3-gb200-optimization.md) doubles "
        "throughput by software changes alone (494 → 944 TFLOPS): this recipe is far from the hardware",
        tags=("moe",),
    )


def _grok(prec: str, step: float) -> Case:
    return Case(
        f"Grok-1 314B {prec.upper()} 512 H100",
        DGXC_GROK,
        "A",
        "grok-1",
        "h100",
        512,
        prec,
        8192,
        1024,
        Layout(tp=4, pp=8, cp=2, vp=8, dp=8, ep=8),
        "step_s",
        step,
        framework=Framework(expert_tp=1, tp_comm_overlap=True),
        tags=("moe",),
    )


MEGATRON_R080 = (
    "NVIDIA/Megatron-LM README.md + images/model_table.png ('Training Speed and Scalability', added in "
    "f2e5db402c, 2024-07-15, Megatron-Core r0.8.0; unchanged @d98e8a64), H100; cluster and fabric not named"
)

# Megatron-LM's weak-scaling table (images/model_table.png): size, attention heads, hidden, layers,
# TP, PP, GPUs, global batch, achieved model TFLOP/s per GPU. DP = 48 for every row (printed).
MEGATRON_WEAK_SCALING: tuple[tuple[str, int, int, int, int, int, int, int, float], ...] = (
    ("1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8),
    ("7.1B", 32, 4096, 30, 2, 1, 96, 192, 465.9),
    ("16B", 48, 6144, 32, 4, 1, 192, 192, 489.1),
    ("32B", 56, 7168, 48, 8, 1, 384, 192, 459.6),
    ("70B", 64, 8192, 84, 8, 2, 768, 384, 419.7),
    ("119B", 80, 10240, 92, 8, 4, 1536, 768, 420.5),
    ("177B", 96, 12288, 96, 8, 6, 2304, 1152, 432.8),
    ("314B", 128, 16384, 96, 8, 8, 3072, 1536, 474.4),
    ("462B", 144, 18432, 112, 8, 16, 6144, 3072, 459.9),
)


def _gpt_like(size: str, heads: int, hidden: int, layers: int) -> ModelConfig:
    """A "GPT-like" model of Megatron-LM's scaling table. Printed: heads, hidden, layers, vocabulary
    131,072, sequence 4096. Not printed, Megatron-LM r0.8.0 defaults (megatron/training/arguments.py):
    MLP width 4 × hidden (``--ffn-hidden-size`` default), GELU (``--swiglu`` off), multi-head attention
    (no ``--group-query-attention``). Untied embedding and output layer: with it the parameter count
    reproduces the table's model size (1.74B for "1.7B", 461.4B for "462B"; tied would give 1.47B)."""
    return ModelConfig(
        f"megatron-gpt-{size.lower()}",
        layers,
        hidden,
        4 * hidden,
        heads,
        heads,
        131072,
        gated_mlp=False,
        tied_embeddings=False,
        source=MEGATRON_R080,
    )


# validation-only models (not in the user-facing registry): the case's ``model`` names one of these
VALIDATION_MODELS: dict[str, ModelConfig] = {
    m.name: m for m in (_gpt_like(size, a, h, n) for size, a, h, n, *_ in MEGATRON_WEAK_SCALING)
}


def _megatron_weak(size: str, heads: int, hidden: int, layers: int, tp: int, pp: int, gpus: int, gbs: int,
                   tflops: float) -> Case:  # fmt: skip
    per_stage = layers // pp
    return Case(
        f"GPT-like {size} BF16 {gpus} H100 (Megatron-Core r0.8.0)",
        MEGATRON_R080,
        "A",
        f"megatron-gpt-{size.lower()}",
        "h100",
        gpus,
        "bf16",
        4096,
        gbs,
        # interleaved schedule, one layer per virtual stage (vp = layers / pp) when pp > 1; micro-batch 1
        Layout(tp=tp, pp=pp, cp=1, vp=per_stage if pp > 1 else 1, dp=gpus // (tp * pp), micro_batch=1),
        "tflops_per_gpu",
        tflops,
        # the README's overlaps: --overlap-grad-reduce --overlap-param-gather (needs the distributed
        # optimizer, arguments.py asserts it), --tp-comm-overlap (needs sequence parallelism), PP
        # overlap; BF16 reduces gradients in FP32 (arguments.py forces accumulate_allreduce_grads_in_fp32)
        framework=Framework(tp_comm_overlap=True),
        notes="precision not printed: BF16 (the MFU column is TFLOP/s / 989, the H100 dense BF16 peak); "
        "cluster not named: InfiniBand 400 Gb/s per GPU assumed (NVIDIA's H100 systems); micro-batch not "
        "printed: 1 (GBS = 4 · pp · DP, so 4 · pp micro-batches per replica; 2 would not fit the 314B "
        "and 462B rows in 80 GB without recompute, which the README does not list); pipeline schedule "
        "not printed: interleaved with one layer per virtual stage, because the README says PP "
        "communication is overlapped and r0.8.0 overlaps it only in the interleaved schedule "
        "(arguments.py), and 23 and 7 layers per stage (119B, 462B) admit no other interleaving; "
        "recompute: none (the default). TFLOP/s: Megatron's num_floating_point_operations (non-causal "
        "attention, logit layer counted) equals this package's convention for these models (tested)",
        tags=("weak-scaling",) + (("dense-1000",) if gpus >= 1000 else ()),
    )


CASES: tuple[Case, ...] = (
    *(
        _dgxc_8b(g, "bf16", s, "fit" if g == 8 else "validate")
        for g, s in zip((8, 16, 32, 64, 128), (12.27, 12.30, 12.32, 12.33, 12.33), strict=True)
    ),
    *(
        _dgxc_8b(g, "fp8", s, "fit" if g == 8 else "validate")
        for g, s in zip((8, 16, 32, 64, 128), (9.33, 9.36, 9.43, 9.48, 9.54), strict=True)
    ),
    *(
        _dgxc_70b(g, "bf16", s)
        for g, s in zip(
            (64, 128, 256, 512, 1024, 2048), (14.66, 14.67, 14.68, 14.67, 14.65, 14.66), strict=True
        )
    ),
    *(
        _dgxc_70b(g, "fp8", s)
        for g, s in zip(
            (64, 128, 256, 512, 1024, 2048), (9.86, 9.95, 10.00, 10.07, 10.08, 10.15), strict=True
        )
    ),
    *(
        _dgxc_175b(g, "bf16", s)
        for g, s in zip((128, 256, 512, 1024, 2048), (8.91, 8.95, 9.09, 9.01, 9.02), strict=True)
    ),
    *(
        _dgxc_175b(g, "fp8", s)
        for g, s in zip((128, 256, 512, 1024, 2048), (5.92, 5.96, 6.44, 6.72, 6.24), strict=True)
    ),
    *(_gb200_405b(g, "bf16", s) for g, s in zip((128, 256, 512), (9.347, 9.484, 9.508), strict=True)),
    *(_gb200_405b(g, "fp8", s) for g, s in zip((128, 256, 512), (6.131, 6.183, 6.244), strict=True)),
    _grok("bf16", 15.933),
    _grok("fp8", 13.433),
    _dsv3_nvidia("h100", 512, 8, 64, 4096, 48.948),
    _dsv3_nvidia("h100", 1024, 16, 64, 8192, 52.04),
    *(
        _dsv3_nvidia("gb200", g, 4, ep, gbs, s)
        for g, ep, gbs, s in ((128, 32, 1024, 34.17), (256, 64, 2048, 34.19), (512, 64, 4096, 34.27))
    ),
    Case(
        "Mixtral 8x7B FP8 64 B200",
        NEMO_2502,
        "B",
        "mixtral-8x7b",
        "b200",
        64,
        "fp8",
        4096,
        256,
        Layout(tp=1, pp=1, cp=1, vp=1, dp=64, ep=8, micro_batch=2),
        "tokens_per_s_per_gpu",
        15457.0,
        tags=("moe",),
    ),
    _nemo(
        "GPT-3 175B FP8 128 H100 (NeMo 24.07)",
        NEMO_2407,
        "A",
        "gpt3-175b",
        "h100",
        128,
        "fp8",
        2048,
        256,
        Layout(tp=4, pp=8, vp=6, dp=4, micro_batch=1),
        726.0,
    ),
    _nemo(
        "GPT-3 175B FP8 512 H100 (NeMo 24.07)",
        NEMO_2407,
        "A",
        "gpt3-175b",
        "h100",
        512,
        "fp8",
        2048,
        2048,
        Layout(tp=4, pp=8, vp=6, dp=16, micro_batch=2),
        782.0,
    ),
    _nemo(
        "GPT-3 175B FP8 512 H100 (NeMo 25.02)",
        NEMO_2502,
        "B",
        "gpt3-175b",
        "h100",
        512,
        "fp8",
        2048,
        2048,
        Layout(tp=4, pp=8, vp=6, dp=16, micro_batch=2),
        866.0,
    ),
    _nemo(
        "GPT-3 175B FP8 512 B200 (NeMo 25.02)",
        NEMO_2502,
        "B",
        "gpt3-175b",
        "b200",
        512,
        "fp8",
        2048,
        2048,
        Layout(tp=4, pp=4, vp=6, dp=32, micro_batch=2),
        1600.0,
    ),
    _nemo(
        "GPT-3 175B FP8 128 GB200 (NeMo 25.04)",
        NEMO_2504,
        "B",
        "gpt3-175b",
        "gb200",
        128,
        "fp8",
        2048,
        256,
        Layout(tp=4, pp=4, vp=12, dp=8, micro_batch=2),
        1804.0,
    ),
    _nemo(
        "Mixtral 8x7B FP8 64 GB200 (NeMo 25.04)",
        NEMO_2504,
        "B",
        "mixtral-8x7b",
        "gb200",
        64,
        "fp8",
        4096,
        256,
        Layout(tp=1, pp=1, dp=64, ep=8, micro_batch=2),
        19275.0,
        ("moe",),
    ),
    _nemo(
        "Mixtral 8x22B FP8 256 B200 seq 64K (NeMo 25.02)",
        NEMO_2502,
        "B",
        "mixtral-8x22b",
        "b200",
        256,
        "fp8",
        65536,
        64,
        Layout(tp=2, pp=4, cp=8, vp=14, dp=4, ep=8),
        2232.0,
        ("moe",),
    ),
    _nemo(
        "Mixtral 8x22B FP8 256 GB200 seq 64K (NeMo 25.04)",
        NEMO_2504,
        "B",
        "mixtral-8x22b",
        "gb200",
        256,
        "fp8",
        65536,
        64,
        Layout(tp=2, pp=4, cp=8, vp=14, dp=4, ep=8),
        2731.0,
        ("moe",),
    ),
    _llama3_meta(8192, 64, 430.0),
    _llama3_meta(16384, 128, 400.0),
    Case(
        "DeepSeek-V3 FP8 2048 H800 (GPU-h per 1T tokens)",
        DSV3,
        "A",
        "deepseek-v3",
        "h800",
        2048,
        "fp8",
        4096,
        15360,
        Layout(tp=1, pp=16, cp=1, vp=2, dp=128, ep=64),
        "tokens_per_s_per_gpu",
        1e12 / (180e3 * 3600) / 2048 * 2048,  # 180K GPU-hours per 1T tokens → tokens/s/GPU
        framework=Framework(
            ep_a2a_overlap=True,
            a2a_fp8_dispatch=True,
            comm_sms=20,
            recompute="mla_up_proj",
            a2a_node_limit=4,
            fp8_recipe="blockwise",  # 1×128 activation / 128×128 weight scales (§3.3)
            dualpipe=True,  # memory: PP + 1 micro-batches in flight, two parameter copies (Table 2)
            fp8_moe_activations=True,  # §3.3.3: FP8 dispatch inputs and SwiGLU inputs, SwiGLU recomputed
        ),  # recompute: RMSNorm and MLA up-projections only (arXiv 2412.19437 §3.3.4)
        notes="DualPipe modelled as 2 model chunks per rank (its bidirectional schedule); all-to-all "
        "overlapped with compute, node-limited to 4 nodes per token, FP8 dispatch; 20 of 132 SMs for "
        "communication; block-scaled FP8 (§3.3); recompute of RMSNorm and MLA up-projections (§3.3.4); the MTP module is not modelled; "
        "batch 15,360 (after the ramp)",
        tags=("moe",),
    ),
    *(_megatron_weak(*row) for row in MEGATRON_WEAK_SCALING),
)


def _network(case: Case) -> AlphaBetaNetwork:
    gpu = get_gpu(case.gpu)
    return AlphaBetaNetwork(
        link_gbps=case.link_gbps,
        nvlink_bytes_per_s=gpu.nvlink_bytes_per_s,
        label=f"validation α-β network ({case.fabric}, {case.link_gbps:g} Gb/s per GPU)",
    )


def case_model(case: Case) -> ModelConfig:
    """The case's model: a validation-only model (:data:`VALIDATION_MODELS`) or a built-in one."""
    return VALIDATION_MODELS.get(case.model) or get_model(case.model)


def run_case(case: Case, cal: Calibration = CALIBRATION) -> StepResult:
    """The model's step for one case."""
    return step_time(
        case_model(case),
        get_gpu(case.gpu),
        case.gpus,
        case.layout,
        case.seq_len,
        case.global_batch,
        _network(case),
        precision=case.precision,
        fw=case.framework,
        cal=cal,
    )


def memory_check(case: Case, result: StepResult) -> dict:
    """The case's layout through the memory check ``train`` applies (:func:`check_memory`): the fullest
    rank's need against the GPU, and the refusal ``train`` would print (None when it fits)."""
    hbm = get_gpu(case.gpu).hbm_bytes
    try:
        check_memory(result.memory, case.layout, hbm)
        refusal = None
    except InputError as exc:
        refusal = str(exc)
    mem = result.memory
    return {
        "need_gib": mem.total_bytes / GIB,
        "hbm_gib": hbm / GIB,
        "rank": mem.rank,
        "largest": mem.largest,
        "fits": refusal is None,
        "refusal": refusal,
    }


def model_value(case: Case, result: StepResult) -> float:
    if case.metric == "step_s":
        return result.iteration_s
    if case.metric == "tokens_per_s_per_gpu":
        return result.tokens_per_s_per_gpu
    if case.metric == "tflops_per_gpu":
        return result.model_flops_per_step / result.iteration_s / result.gpus / 1e12
    raise ValueError(case.metric)


def validation_table(cal: Calibration = CALIBRATION, cases: tuple[Case, ...] = CASES) -> list[dict]:
    """Rows ``case, source, grade, metric, published, model, error, within_tolerance, role, fabric``.
    ``error`` is in step-time terms for every metric: model step time / published step time − 1
    (for tokens/s or TFLOP/s: published / model − 1), so + means the model is slower."""
    rows = []
    for case in cases:
        res = run_case(case, cal)
        value = model_value(case, res)
        # error in step-time terms for every metric: + = the model is slower than published
        err = value / case.published - 1 if case.metric == "step_s" else case.published / value - 1
        rows.append(
            {
                "case": case.case,
                "source": case.source,
                "grade": case.grade,
                "metric": case.metric,
                "published": case.published,
                "model": value,
                "error": err,
                "within_tolerance": abs(err) <= TOLERANCE,
                "role": case.role,
                "fabric": case.fabric,
                "layout": case.layout.to_dict(),
                "mfu": res.mfu,
                "breakdown": res.breakdown.to_dict(),
                "memory": memory_check(case, res),
                "notes": case.notes,
            }
        )
    return rows


DGXC_2409_8B = (
    "NVIDIA/dgxc-benchmarking llama3.1/README_8b.md @35a9aecc8d5b (NeMo 24.09), Eos H100, InfiniBand"
)
DGXC_2409_70B = "NVIDIA/dgxc-benchmarking llama3.1/README_70b.md @35a9aec (NeMo 24.09), Eos H100, InfiniBand"


def _release_2409(case: Case, source: str, step: float) -> Case:
    """A 24.09 point of a series the step-time table holds in its v25.04 release: same model, GPUs,
    batch and layout (published-training.md 1.1, 1.2, 1.5, 1.6), an older software release."""
    return Case(**{**asdict(case), "case": case.case + " (NeMo 24.09)", "source": source, "published": step,
                   "layout": case.layout, "framework": case.framework, "role": "fit", "fits": "straggler_spread",
                   "tags": ("weak-scaling",)})  # fmt: skip


def _series_2409(prec: str, steps: tuple[float, ...], big: bool) -> tuple[Case, ...]:
    gpus = (64, 128, 256, 512, 1024, 2048) if big else (8, 16, 32, 64, 128)
    src = DGXC_2409_70B if big else DGXC_2409_8B
    # 24.09 ran 70B FP8 with the BF16 layout (TP 4, PP 4, CP 2, VP 5), unlike v25.04
    make = (lambda g: _dgxc_70b(g, "bf16", 0.0)) if big else (lambda g: _dgxc_8b(g, prec, 0.0))
    return tuple(
        _release_2409(Case(**{**asdict(make(g)), "layout": make(g).layout, "framework": make(g).framework,
                              "precision": prec, "case": make(g).case.replace("BF16", prec.upper())}), src, s)
        for g, s in zip(gpus, steps, strict=True)
    )  # fmt: skip


#: weak-scaling series that fit ``straggler_spread`` (their growth only) and nothing else: dgxc NeMo
#: 24.09 (published-training.md 1.1, 1.2, 1.5, 1.6); the step-time table's series check it
SCALING_FIT_SERIES: tuple[tuple[Case, ...], ...] = (
    _series_2409("bf16", (12.91, 13.00, 13.05, 13.08, 13.10), big=False),
    _series_2409("fp8", (9.67, 9.73, 9.75, 9.80, 9.82), big=False),
    _series_2409("bf16", (14.72, 14.73, 14.80, 14.89, 14.92, 14.98), big=True),
    _series_2409("fp8", (11.01, 10.93, 11.16, 11.18, 11.28, 11.39), big=True),
)


def series_growth(series: tuple[Case, ...], cal: Calibration = CALIBRATION) -> list[tuple[float, float]]:
    """(published, model) growth of each point's step over the series' first point (step-time terms)."""
    steps = [(c.published if c.metric == "step_s" else 1 / c.published,
              model_value(c, run_case(c, cal)) if c.metric == "step_s" else 1 / model_value(c, run_case(c, cal)))
             for c in series]  # fmt: skip
    return [(p / steps[0][0] - 1, m / steps[0][1] - 1) for p, m in steps]


def _golden_min(f, lo: float, hi: float, tol: float = 1e-6) -> float:
    g = (5**0.5 - 1) / 2
    a, b = lo, hi
    while b - a > tol:
        c, d = b - g * (b - a), a + g * (b - a)
        a, b = (a, d) if f(c) <= f(d) else (c, b)
    return (a + b) / 2


def fit_straggler_spread(base: Calibration = CALIBRATION) -> float:
    """σ minimising the squared growth error over :data:`SCALING_FIT_SERIES` (every point against its
    series' first): the other parameters as in ``base``; the straggler term is additive, so the steps
    and their compute + bubble are computed once at σ = 0."""
    zero = Calibration(**{**asdict(base), "straggler_spread": 0.0})
    pts = []
    for series in SCALING_FIT_SERIES:
        res = [run_case(c, zero) for c in series]
        lag = [
            expected_slowest(c.layout.dp * c.layout.cp) * r.breakdown.compute_s
            for c, r in zip(series, res, strict=True)
        ]
        pts += [(r.iteration_s, lg, res[0].iteration_s, lag[0], c.published / series[0].published - 1)
                for c, r, lg in zip(series, res, lag, strict=True)]  # fmt: skip

    def sse(sigma: float) -> float:
        return sum(((t + sigma * lg) / (t0 + sigma * l0) - 1 - g) ** 2 for t, lg, t0, l0, g in pts)

    return round(_golden_min(sse, 0.0, 0.1), 4)


def _bisect(f, lo: float, hi: float, tol: float = 1e-5) -> float:
    flo = f(lo)
    for _ in range(60):
        mid = (lo + hi) / 2
        fm = f(mid)
        if (fm > 0) == (flo > 0):
            lo, flo = mid, fm
        else:
            hi = mid
        if hi - lo < tol:
            break
    return (lo + hi) / 2


FIT_ORDER = (
    ("gemm_efficiency", 0.2, 1.0),
    ("fp8_gemm_efficiency", 0.2, 1.0),
    ("tp_overlap_interference", 0.0, 1.0),
    ("blackwell_gemm_scale", 0.3, 1.5),
)


def fit_calibration(base: Calibration = CALIBRATION) -> Calibration:
    """Fit ``straggler_spread`` on :data:`SCALING_FIT_SERIES`, then each other fitted parameter on its one
    ``role="fit"`` case (``Case.fits`` names it), in order."""
    fit = {c.fits: c for c in CASES if c.role == "fit"}
    values = asdict(base)
    values["straggler_spread"] = fit_straggler_spread(base)
    for key, lo, hi in FIT_ORDER:
        case = fit[key]

        def err(x: float, key=key, case=case) -> float:
            cal = Calibration(**{**values, key: x})
            return model_value(case, run_case(case, cal)) / case.published - 1

        values[key] = round(_bisect(err, lo, hi), 3)
    return Calibration(**values)


UNITS = {"step_s": "s/step", "tokens_per_s_per_gpu": "tok/s/GPU", "tflops_per_gpu": "TFLOP/s/GPU"}


def _short(source: str) -> str:
    return source.split(" (")[0].replace("NVIDIA/dgxc-benchmarking ", "dgxc ").split(" @")[0]


def format_table(rows: list[dict]) -> str:
    """A Markdown table of the rows (for the README and ``aifabric validate``); ✓/✗ marks validation
    cases within / outside ±10 %."""
    lines = [
        "| case | published | model | error (time) | role | source |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = ("✓" if r["within_tolerance"] else "✗") if r["role"] == "validate" else ""
        lines.append(
            f"| {r['case']} | {r['published']:.4g} {UNITS[r['metric']]} | {r['model']:.4g} | "
            f"{r['error']:+.1%} {mark} | {r['role']} | {_short(r['source'])} |"
        )
    return "\n".join(lines)
