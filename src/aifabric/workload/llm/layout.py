"""Parallel layouts (TP, PP, CP, VP, DP, EP, micro-batch), framework options, and their checks.

Rank order is Megatron-Core's default ``tp-cp-ep-dp-pp`` (TP innermost): a TP group is ``tp``
consecutive GPUs, a CP group has stride ``tp``, the (dense) DP group — ``dp × cp`` ranks, since
gradients are reduced over CP too — stride ``tp``, and a PP group stride ``tp · cp · dp``. Experts
keep the TP split by default (expert-tensor-parallel ``etp`` = tp, Megatron's default; ``expert_tp``
changes it); the expert-parallel group is ``ep`` ranks of stride ``etp`` and expert gradients are
reduced over the expert-data-parallel group of ``tp · cp · dp / (etp · ep)`` ranks (= dp · cp / ep
when etp = tp), stride ``etp · ep``. ``ep`` must divide ``dp × cp`` and the experts.
``vp`` is the number of model chunks per pipeline rank (interleaved 1F1B).

**Rank order** (``Layout.order``, the scenario's ``parallelism.order``): the strides above are the
default order's. Any order Megatron-Core's ``RankGenerator`` builds is accepted (``tp`` first here:
the step model times TP inside the NVLink domain); a rank's index in group ``g`` moves it by the
product of the sizes of the groups before ``g`` in the order (:func:`group_offsets`,
:func:`group_ranks`). Megatron-LM's ``--use-tp-pp-dp-mapping`` is ``tp-cp-ep-pp-dp``
(megatron/training/initialize.py; its older spelling ``tp-pp-dp``): one pipeline's stages next to
each other, so they share an NVLink domain, and DP across domains, as NVIDIA's GB200 NVL72 Llama 3.1
405B runs set it (MLPerf Training v5.1, ``TP_PP_DP_MAPPING=True`` with ``GPU_ARCH=gb200``,
mlcommons/training_results_v5.1 NVIDIA/benchmarks/llama31_405b/implementations/
theia_ngpu512_ngc25.09_nemo/config_common.sh @4da2d1cd). The dense groups use sizes tp, cp, dp, pp
(ep 1); the expert groups etp, ep, expert-DP, pp (cp 1), both in the same order (Megatron's decoder
and expert rank generators).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from aifabric.errors import InputError
from aifabric.workload.llm.models import ModelConfig

RECOMPUTE = ("none", "selective", "mla_up_proj", "full")
ZERO = (0, 1, 2, 3)
FP8_RECIPES = ("tensorwise", "blockwise")  # FP8 scaling recipes (compute.BLOCKWISE_FP8_HOPPER)
ORDER_NAMES = ("tp", "cp", "ep", "dp", "pp")
#: Megatron-Core's default rank order (parallel_state.initialize_model_parallel, order=...)
DEFAULT_ORDER = "tp-cp-ep-dp-pp"
#: Megatron-LM's --use-tp-pp-dp-mapping (module docstring)
TP_PP_DP_ORDER = "tp-cp-ep-pp-dp"
#: the orders the layout search tries where the NVLink domain is larger than TP
SEARCHED_ORDERS = (DEFAULT_ORDER, TP_PP_DP_ORDER)
ORDER_FIELD = "training.parallelism.order"
ORDER_ALLOWED = (
    "tp first, then cp, ep, dp, pp each once joined by '-' (cp and ep may be left out when they are 1), "
    f"e.g. {DEFAULT_ORDER} (Megatron's default) or tp-pp-dp"
)


@dataclass(frozen=True)
class Layout:
    """A parallel layout; ``dp`` follows from the GPU count (:func:`complete_layout`)."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    vp: int = 1
    dp: int = 1
    ep: int = 1
    micro_batch: int = 1
    order: str = DEFAULT_ORDER  # rank order, innermost first (module docstring)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    def micro_batches(self, global_batch: int) -> int:
        """Micro-batches per replica per step (gradient-accumulation steps)."""
        return global_batch // (self.dp * self.micro_batch)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Framework:
    """How the training framework runs the layout (Megatron-Core / NeMo defaults unless stated).

    ``zero``: 0 = DDP all-reduce; 1 = distributed optimizer (gradient reduce-scatter + parameter
    all-gather, ZeRO-1; Megatron's default in NeMo recipes); 2 = ZeRO-2 (gradients reduce-scattered
    every micro-batch, DeepSpeed); 3 = ZeRO-3 / FSDP (parameters gathered per layer, prefetched one
    layer ahead). ``grad_reduce_fp32``: reduce gradients in FP32 (Megatron's main-grad buffers; twice
    the bytes of BF16). ``overlap_p2p``: overlap steady-state pipeline sends (None = on with
    interleaving, as Megatron does). ``ep_a2a_overlap``: MoE all-to-all overlapped with another
    micro-batch's compute (DualPipe, Megatron's 1F1B A2A overlap); off = exposed in full.
    ``tp_comm_overlap``: Transformer Engine's TP-communication/GEMM overlap, with the per-GEMM
    methods of the table ``tp_overlap`` names (:data:`aifabric.workload.llm.overlap.TP_TABLES`;
    ``te-default``: Transformer Engine's defaults). ``training.overlap`` presets set these and the
    DP/PP overlaps together (:mod:`aifabric.workload.llm.overlap`).
    """

    recompute: str = "none"
    zero: int = 1
    grad_reduce_fp32: bool = True
    overlap_grad_reduce: bool = True
    overlap_param_gather: bool = True
    tp_comm_overlap: bool = False
    tp_overlap: str = "te-default"
    ep_a2a_overlap: bool = False
    overlap_p2p: bool | None = None
    fp8_param_gather: bool = False
    a2a_fp8_dispatch: bool = False
    comm_sms: int = 0  # multiprocessors reserved for communication kernels (DeepSeek-V3: 20)
    expert_tp: int | None = None  # expert tensor parallelism (None = tp, Megatron's default)
    a2a_node_limit: int | None = None  # tokens sent to at most this many nodes (DeepSeek-V3: 4)
    fp8_recipe: str = "tensorwise"  # tensorwise (TE per-tensor) | blockwise (DeepSeek-V3 1×128/128×128)
    # micro-batches per group of the interleaved schedule (Megatron-Core microbatch_group_size_per_vp_stage;
    # None = pp, its default)
    pp_group: int | None = None
    dualpipe: bool = (
        False  # DeepSeek's DualPipe: pp + 1 micro-batches in flight, two copies of the parameters
    )
    fp8_moe_activations: bool = False  # DeepSeek-V3 §3.3.3: expert inputs and SwiGLU inputs cached in FP8

    def etp(self, tp: int) -> int:
        return tp if self.expert_tp is None else self.expert_tp


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def parse_order(order) -> tuple[str, ...]:
    """The order's group names, innermost first, the ones it leaves out appended (size 1, as
    Megatron's ``RankGenerator`` does); one-line :class:`InputError` otherwise."""
    if not isinstance(order, str):
        raise InputError("must be a string", field=ORDER_FIELD, value=order, allowed=ORDER_ALLOWED)
    names = tuple(order.strip().lower().split("-"))
    bad = [n for n in names if n not in ORDER_NAMES]
    if bad or len(set(names)) != len(names) or not {"tp", "dp", "pp"} <= set(names) or names[0] != "tp":
        what = f"unknown group {bad[0]!r}" if bad else "tp first, each of tp, dp, pp once"
        raise InputError(f"not a rank order ({what})", field=ORDER_FIELD, value=order, allowed=ORDER_ALLOWED)
    return names + tuple(n for n in ORDER_NAMES if n not in names)


def check_order(layout: Layout) -> None:
    """A group of size > 1 the order leaves out is an error (Megatron raises the same)."""
    given = layout.order.strip().lower().split("-")
    parse_order(layout.order)
    for name in ("cp", "ep"):
        if getattr(layout, name) > 1 and name not in given:
            raise InputError(
                f"the order leaves out {name}, which is {getattr(layout, name)}",
                field=ORDER_FIELD,
                value=layout.order,
                allowed=f"an order that names {name}, e.g. {DEFAULT_ORDER} or {TP_PP_DP_ORDER}",
            )


def dense_sizes(layout: Layout) -> dict[str, int]:
    """Group sizes of the dense rank generator (ep 1)."""
    return {"tp": layout.tp, "cp": layout.cp, "ep": 1, "dp": layout.dp, "pp": layout.pp}


def expert_sizes(layout: Layout, etp: int) -> dict[str, int]:
    """Group sizes of the expert rank generator: etp, ep, expert-DP, pp (cp 1)."""
    edp = max(1, layout.tp * layout.cp * layout.dp // (etp * layout.ep))
    return {"tp": etp, "cp": 1, "ep": layout.ep, "dp": edp, "pp": layout.pp}


def group_ranks(sizes: dict[str, int], order: str, group: tuple[str, ...]) -> np.ndarray:
    """Every group's ranks, one row per group (``group``: the names whose index varies inside it),
    each row innermost name fastest — Megatron's ``RankGenerator.get_ranks``."""
    names = parse_order(order)
    outer_first = names[::-1]
    ranks = np.arange(int(np.prod([sizes[n] for n in names]))).reshape([sizes[n] for n in outer_first])
    inside = [i for i, n in enumerate(outer_first) if n in group]
    rest = [i for i in range(len(names)) if i not in inside]
    size = int(np.prod([sizes[n] for n in group]))
    return ranks.transpose(rest + inside).reshape(-1, size)


def group_offsets(sizes: dict[str, int], order: str, group: tuple[str, ...]) -> np.ndarray:
    """Ranks of the group that holds rank 0 (the first row of :func:`group_ranks`), cheaply."""
    names = parse_order(order)
    stride, off = 1, np.zeros(1, dtype=np.int64)
    for n in names:
        if n in group:
            off = (off[None, :] + stride * np.arange(sizes[n])[:, None]).ravel()
        stride *= sizes[n]
    return np.sort(off)


def domain_stride(sizes: dict[str, int], order: str, group: tuple[str, ...], domain: int) -> int:
    """The stride :func:`aifabric.workload.llm.groups.group_time` times ``group`` with: one that
    puts as many of its ranks in one NVLink domain of ``domain`` GPUs as the order does (the domain
    of rank 0; ``domain`` when only one is)."""
    local = int((group_offsets(sizes, order, group) < domain).sum())
    return domain // local if local > 1 else domain


def stage_layers(layers: int, pp: int) -> tuple[float, float]:
    """(layers on a middle/first stage, layers on the last stage). When ``pp`` does not divide the
    layers but divides layers + 2, the embedding and the loss count as one layer each (Megatron's
    account-for-embedding/loss split, as the published 405B recipes use); otherwise the first stages
    hold ⌈layers/pp⌉ and the last the remainder."""
    if pp == 1:
        return float(layers), float(layers)
    if layers % pp == 0:
        return layers / pp, layers / pp
    if (layers + 2) % pp == 0:
        per = (layers + 2) / pp
        return per, per - 1
    per = -(-layers // pp)  # uneven: the first stages take one layer more, the last takes the rest
    return float(per), float(max(1, layers - per * (pp - 1)))


def rank_layers(layers: int, pp: int) -> list[float]:
    """Transformer layers held by each pipeline rank, first to last (the split of
    :func:`stage_layers`). With the embedding and the loss counted as one layer each, the first and
    the last rank hold one transformer layer fewer than the others."""
    per, last = stage_layers(layers, pp)
    if pp == 1:
        return [per]
    account = layers % pp != 0 and (layers + 2) % pp == 0
    first = per - 1 if account else per
    return [first] + [per] * (pp - 2) + [last]


def check_layout(
    model: ModelConfig,
    layout: Layout,
    gpus: int,
    seq_len: int,
    global_batch: int,
    nvlink_domain_gpus: int = 8,
    etp: int | None = None,
) -> None:
    """Raise :class:`InputError` (one line, field + what is allowed) for an impossible layout.
    ``etp``: expert tensor parallelism (None = tp)."""
    for name, v in layout.to_dict().items():
        if name == "order":
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError("must be an integer ≥ 1", field=f"training.parallelism.{name}", value=v)
    if layout.gpus != gpus:
        raise InputError(
            f"tp × pp × cp × dp = {layout.tp}·{layout.pp}·{layout.cp}·{layout.dp} = {layout.gpus} ≠ {gpus} GPUs",
            field="training.parallelism",
            allowed=f"factors whose product is {gpus}",
        )
    check_order(layout)
    kv = model.kv_heads if not model.mla else model.heads
    if model.heads % layout.tp or kv % layout.tp:
        ok = [d for d in _divisors(model.heads) if kv % d == 0 and d <= nvlink_domain_gpus]
        raise InputError(
            f"tp must divide the {model.heads} heads and {kv} KV heads",
            field="training.parallelism.tp",
            value=layout.tp,
            allowed=", ".join(map(str, ok)),
        )
    if layout.cp > 1 and seq_len % (2 * layout.cp):
        raise InputError(
            f"seq_len {seq_len} must be a multiple of 2 × cp",
            field="training.parallelism.cp",
            value=layout.cp,
            allowed=", ".join(str(c) for c in (1, 2, 4, 8, 16, 32) if seq_len % (2 * c) == 0),
        )
    if layout.pp > model.layers:
        raise InputError(
            f"pp exceeds the model's {model.layers} layers",
            field="training.parallelism.pp",
            value=layout.pp,
            allowed=f"1..{model.layers}",
        )
    if layout.vp > 1 and (layout.pp == 1 or layout.pp * layout.vp > model.layers + 2):
        raise InputError(
            f"vp needs pp > 1 and pp × vp ≤ the {model.layers} layers (+ 2)",
            field="training.parallelism.vp",
            value=layout.vp,
            allowed=f"1..{(model.layers + 2) // layout.pp}" if layout.pp > 1 else "1",
        )
    if model.is_moe:
        etp = layout.tp if etp is None else etp
        pool = (
            layout.tp * layout.cp * layout.dp // etp if (layout.tp * layout.cp * layout.dp) % etp == 0 else 0
        )
        if model.experts % layout.ep or not pool or pool % layout.ep:
            ok = [e for e in _divisors(model.experts) if pool and pool % e == 0]
            what = (
                f"dp × cp = {layout.dp * layout.cp}" if etp == layout.tp else f"tp × cp × dp / etp = {pool}"
            )
            raise InputError(
                f"ep must divide the {model.experts} experts and {what}",
                field="training.parallelism.ep",
                value=layout.ep,
                allowed=", ".join(map(str, ok)),
            )
    elif layout.ep != 1:
        raise InputError(
            "ep applies to MoE models only", field="training.parallelism.ep", value=layout.ep, allowed="1"
        )
    if global_batch % (layout.dp * layout.micro_batch):
        raise InputError(
            f"global_batch {global_batch} is not a multiple of dp × micro_batch = {layout.dp * layout.micro_batch}",
            field="training.global_batch",
            value=global_batch,
            allowed=f"multiples of {layout.dp * layout.micro_batch}",
        )


def check_framework(fw: Framework) -> None:
    if fw.recompute not in RECOMPUTE:
        raise InputError(
            "unknown recompute", field="training.recompute", value=fw.recompute, allowed=", ".join(RECOMPUTE)
        )
    if fw.fp8_recipe not in FP8_RECIPES:
        raise InputError(
            "unknown FP8 recipe", field="training.framework.fp8_recipe", value=fw.fp8_recipe,
            allowed=", ".join(FP8_RECIPES),
        )  # fmt: skip
    if fw.zero not in ZERO:
        raise InputError("unknown ZeRO stage", field="training.zero", value=fw.zero, allowed="0, 1, 2, 3")
