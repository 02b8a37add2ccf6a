"""LLM training-iteration model: model + parallelism + GPU → compute time and the collectives
each iteration needs → iteration time per fabric, tokens/s, time and cost to train N tokens.

What is modelled (Megatron-LM / Llama-3-style 4D parallelism):

* **Compute**: FLOPs per iteration = 6 · N_active · T + 12 · L · s · h · T (dense matmuls forward +
  backward, plus attention scores; Narayanan et al. 2021, "Efficient Large-Scale Language Model
  Training on GPU Clusters", eq. 3 simplified), T = tokens per iteration, spread over all GPUs at
  ``peak_bf16 × mfu``. The default MFU (0.40) is the planning default of hardware-facts §H
  (inside the 38–43 % Llama-3 405B range, S92). Published MFUs already include the exposed
  communication of the cluster they were measured on, so times here are conservative.
* **TP** (tensor parallel, inside one NVLink node only): per layer and micro-batch 2 all-reduces
  forward + 2 backward of the activations (b · s · h · 2 bytes), over NVLink (never the network).
* **PP** (pipeline): 1F1B schedule; bubble fraction (p − 1)/(m + p − 1) of the compute (m
  micro-batches per replica), plus activation sends between stages (b · s · h · 2 bytes per
  micro-batch per boundary) on the network. Exposed: the 2(p − 1) sends on the fill and drain
  critical path; steady-state sends overlap with other micro-batches' compute.
* **DP** (data parallel): one gradient all-reduce per iteration of the stage's parameters in bf16
  (N / (TP · PP) · 2 bytes) among the DP ranks — on a rail-optimised fabric the DP peers of a GPU
  sit on the same rail of other nodes. Frameworks overlap it with the backward pass (PyTorch DDP
  buckets; Megatron ``overlap_grad_reduce``); only the part longer than ``overlap`` × backward
  time (backward = 2/3 of compute) is exposed.
* **EP** (MoE expert parallel): per MoE layer 2 all-to-alls forward (dispatch, combine) + 2
  backward of tokens × top-k × h × 2 bytes per GPU, exposed in full (no overlap assumed).

The network enters only through a ``comm`` object with
``collective_s(op, size_bytes, ranks, span) -> seconds`` where ``span`` says where the ranks are
(``"nvlink"`` — inside a node; ``"network"`` — one rank per node on one rail). Each fabric
supplies its own (the flow model or α-β on that fabric's topology), so the iteration-time
difference between IB and RoCE is computed, not assumed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from aifabric.errors import InputError

BF16_BYTES = 2


@dataclass(frozen=True)
class ModelSpec:
    """Architecture of a transformer LLM. ``params`` = total; ``active_params`` = per token (MoE)."""

    name: str
    params: float
    layers: int
    hidden: int
    seq_len: int
    vocab: int
    global_batch_tokens: int
    experts: int = 0
    top_k: int = 0
    moe_layers: int = 0
    active_params: float | None = None
    source: str = ""

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def active(self) -> float:
        return self.active_params if self.active_params is not None else self.params


# Architectures from the model papers (well-known spec facts, confidence medium: not re-read here).
# Global batch: Llama 3 grew 4M → 8M → 16M tokens during 405B pre-training (Llama 3 paper §3.4);
# 8M is used as the default for the Llama family; GPT-3 used 3.2M tokens (GPT-3 paper Table 2.1).
MODELS: dict[str, ModelSpec] = {
    "llama3-8b": ModelSpec(
        "llama3-8b",
        8.03e9,
        32,
        4096,
        8192,
        128256,
        8 * 2**20,
        source="Llama 3 paper (arXiv 2407.21783) Table 3",
    ),
    "llama3-70b": ModelSpec(
        "llama3-70b",
        70.6e9,
        80,
        8192,
        8192,
        128256,
        8 * 2**20,
        source="Llama 3 paper (arXiv 2407.21783) Table 3",
    ),
    "llama3-405b": ModelSpec(
        "llama3-405b",
        405e9,
        126,
        16384,
        8192,
        128256,
        16 * 2**20,
        source="Llama 3 paper (arXiv 2407.21783) Table 3, §3.4",
    ),
    "gpt3-175b": ModelSpec(
        "gpt3-175b",
        175e9,
        96,
        12288,
        2048,
        50257,
        3_200_000,
        source="GPT-3 paper (arXiv 2005.14165) Table 2.1",
    ),
    "deepseek-moe": ModelSpec(
        "deepseek-moe",
        671e9,
        61,
        7168,
        4096,
        129280,
        15_360 * 4096,
        experts=256,
        top_k=8,
        moe_layers=58,
        active_params=37e9,
        source="DeepSeek-V3 technical report (arXiv 2412.19437) §4.2: 671B total, 37B "
        "active, 61 layers (first 3 dense), 256 routed experts, top-8, batch 15,360",
    ),
}


@dataclass(frozen=True)
class Parallelism:
    tp: int
    pp: int
    dp: int
    ep: int = 1
    micro_batch: int = 1  # sequences per micro-batch

    def to_dict(self) -> dict:
        return asdict(self)


def check_parallelism(par: Parallelism, gpus: int, gpus_per_node: int, model: ModelSpec) -> None:
    """Raise :class:`InputError` for impossible layouts."""
    for name in ("tp", "pp", "dp", "ep", "micro_batch"):
        v = getattr(par, name)
        if not isinstance(v, int) or v < 1:
            raise InputError("must be an integer ≥ 1", field=f"parallelism.{name}", value=v)
    if par.tp * par.pp * par.dp != gpus:
        raise InputError(
            f"TP × PP × DP = {par.tp} × {par.pp} × {par.dp} = {par.tp * par.pp * par.dp} ≠ {gpus} GPUs",
            field="parallelism",
            allowed=f"factors whose product is {gpus}",
        )
    if par.tp > gpus_per_node:
        raise InputError(
            f"TP {par.tp} spans beyond one node ({gpus_per_node} GPUs over NVLink)",
            field="parallelism.tp",
            value=par.tp,
            allowed=f"1..{gpus_per_node}",
        )
    if gpus_per_node % par.tp:
        raise InputError(
            "TP must divide the GPUs per node",
            field="parallelism.tp",
            value=par.tp,
            allowed=", ".join(str(t) for t in range(1, gpus_per_node + 1) if gpus_per_node % t == 0),
        )
    if par.pp > model.layers:
        raise InputError(
            f"PP {par.pp} exceeds the model's {model.layers} layers",
            field="parallelism.pp",
            value=par.pp,
            allowed=f"1..{model.layers}",
        )
    if model.is_moe:
        if par.ep > par.dp * par.tp or (par.dp * par.tp) % par.ep:
            raise InputError("EP must divide TP × DP", field="parallelism.ep", value=par.ep)
        if model.experts % par.ep:
            raise InputError(
                f"EP must divide the {model.experts} experts", field="parallelism.ep", value=par.ep
            )
    elif par.ep != 1:
        raise InputError("EP applies to MoE models only", field="parallelism.ep", value=par.ep, allowed="1")
    seqs = model.global_batch_tokens / model.seq_len
    if seqs < par.dp * par.micro_batch:
        raise InputError(
            f"global batch of {seqs:g} sequences is smaller than DP × micro-batch",
            field="parallelism.dp",
            value=par.dp,
        )


def default_parallelism(
    model: ModelSpec, gpus: int, gpus_per_node: int = 8, hbm_gbytes: float = 80
) -> Parallelism:
    """A reasonable layout: TP = GPUs per node (8); PP the smallest power of two for which bf16
    weights + gradients (4 bytes/param, sharded over TP·PP) plus the mixed-precision Adam state
    (12 bytes/param, also sharded over DP as Megatron's distributed optimizer does) fit in 60 % of
    HBM (the rest for activations); DP the rest; EP for MoE = gcd(experts, DP·TP)."""
    tp = min(gpus_per_node, gpus)
    if gpus % tp:
        tp = 1
    per_gpu_budget = 0.6 * hbm_gbytes * 1e9

    def per_gpu(pp: int) -> float:
        dp = gpus // (tp * pp)
        return model.params / (tp * pp) * (4 + 12 / dp)

    seqs = model.global_batch_tokens / model.seq_len
    pp = 1
    while (
        (per_gpu(pp) > per_gpu_budget or gpus // (tp * pp) > seqs)
        and pp * 2 <= model.layers
        and gpus % (tp * pp * 2) == 0
    ):
        pp *= 2  # also grow PP while DP would exceed the global batch (one sequence per replica minimum)
    dp = gpus // (tp * pp)
    ep = 1
    if model.is_moe:
        ep = math.gcd(model.experts, dp * tp)
    return Parallelism(tp=tp, pp=pp, dp=dp, ep=ep, micro_batch=1)


@dataclass
class IterationBreakdown:
    """Seconds per training iteration, split by what they are."""

    compute_s: float
    pp_bubble_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    dp_exposed_s: float
    ep_comm_s: float
    iteration_s: float
    tokens_per_iteration: float
    tokens_per_s: float
    flops_per_iteration: float
    collectives: list[dict] = field(default_factory=list)

    @property
    def exposed_comm_s(self) -> float:
        return self.tp_comm_s + self.pp_comm_s + self.dp_exposed_s + self.ep_comm_s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["exposed_comm_s"] = self.exposed_comm_s
        return d


@dataclass(frozen=True)
class CollectiveDemand:
    """One collective a training step puts on the NVLink domain or the network: what, how big,
    among how many ranks, where, how many times per step, and the compute it may overlap with
    (``overlap_window``: ``"none"`` — on the critical path; ``"backward"`` — hidden behind the
    backward pass of the step, as DDP buckets / Megatron ``overlap_grad_reduce`` do)."""

    group: str  # tp | pp | dp | ep
    op: str
    size_bytes: float
    ranks: int
    span: str  # nvlink | network
    count: float  # per training step
    overlap_window: str = "none"

    def to_dict(self) -> dict:
        return asdict(self)


def micro_batches(model: ModelSpec, par: Parallelism) -> int:
    """Micro-batches per data-parallel replica and step (gradient accumulation steps)."""
    seqs_per_replica = float(model.global_batch_tokens) / model.seq_len / par.dp
    return max(1, int(seqs_per_replica // par.micro_batch))


def step_demands(model: ModelSpec, par: Parallelism, gpus_per_node: int = 8) -> list[CollectiveDemand]:
    """The collectives of one training step per parallel group (see the module docstring), in the
    order :func:`iteration_time` accounts for them. Groups of one rank put nothing anywhere."""
    m = micro_batches(model, par)
    act_bytes = par.micro_batch * model.seq_len * model.hidden * BF16_BYTES
    out: list[CollectiveDemand] = []
    layers_per_stage = model.layers / par.pp
    if par.tp > 1:
        out.append(
            CollectiveDemand("tp", "all-reduce", act_bytes, par.tp, "nvlink", 4 * layers_per_stage * m)
        )
    if par.pp > 1:
        out.append(CollectiveDemand("pp", "send-recv", act_bytes, 2, "network", 2 * (par.pp - 1)))
    grad_bytes = model.params / (par.tp * par.pp) * BF16_BYTES
    if model.is_moe and par.ep > 1:
        # expert weights are sharded over EP: only the non-expert share is all-reduced over full DP
        dense_share = model.active / model.params
        grad_bytes = model.params / (par.tp * par.pp) * BF16_BYTES * max(dense_share, 1 / par.ep)
    if par.dp > 1:
        out.append(CollectiveDemand("dp", "all-reduce", grad_bytes, par.dp, "network", 1, "backward"))
    if model.is_moe and par.ep > 1:
        tokens_per_gpu_mb = par.micro_batch * model.seq_len / max(1, par.tp)
        a2a_bytes = tokens_per_gpu_mb * model.top_k * model.hidden * BF16_BYTES
        moe_layers_per_stage = model.moe_layers / par.pp
        span = "nvlink" if par.ep <= gpus_per_node else "network"
        out.append(
            CollectiveDemand("ep", "all-to-all", a2a_bytes, par.ep, span, 4 * moe_layers_per_stage * m)
        )
    return out


def iteration_time(
    model: ModelSpec,
    par: Parallelism,
    gpus: int,
    peak_tflops: float,
    comm,
    mfu: float = 0.40,
    overlap: float = 1.0,
    gpus_per_node: int = 8,
    demands: list[CollectiveDemand] | None = None,
) -> IterationBreakdown:
    """Iteration time on one fabric (``comm`` supplies that fabric's collective times) for the
    step's collectives (``demands``, :func:`step_demands` when not given)."""
    check_parallelism(par, gpus, gpus_per_node, model)
    if not 0 < mfu <= 1:
        raise InputError("must be in (0, 1]", field="mfu", value=mfu)
    tokens = float(model.global_batch_tokens)
    flops = 6 * model.active * tokens + 12 * model.layers * model.seq_len * model.hidden * tokens
    compute = flops / (gpus * peak_tflops * 1e12 * mfu)
    m = micro_batches(model, par)
    bubble = compute * (par.pp - 1) / (m + par.pp - 1) if par.pp > 1 else 0.0
    colls: list[dict] = []
    time_of = {"tp": 0.0, "pp": 0.0, "dp": 0.0, "ep": 0.0}
    for d in step_demands(model, par, gpus_per_node) if demands is None else demands:
        t = comm.collective_s(d.op, d.size_bytes, d.ranks, d.span) if d.ranks > 1 and d.count > 0 else 0.0
        colls.append(
            {
                "group": d.group,
                "op": d.op,
                "size_bytes": d.size_bytes,
                "ranks": d.ranks,
                "span": d.span,
                "count": d.count,
                "time_each_s": t,
                "time_s": t * d.count,
            }
        )
        time_of[d.group] = t * d.count
    tp_t, pp_t, dp_t, ep_t = time_of["tp"], time_of["pp"], time_of["dp"], time_of["ep"]
    backward = compute * 2 / 3
    dp_exposed = max(0.0, dp_t - overlap * backward)
    total = compute + bubble + tp_t + pp_t + dp_exposed + ep_t
    return IterationBreakdown(
        compute, bubble, tp_t, pp_t, dp_t, dp_exposed, ep_t, total, tokens, tokens / total, flops, colls
    )


def training_cost(
    tokens_to_train: float,
    tokens_per_s: float,
    gpus: int,
    network_capex_usd: float,
    server_capex_usd_per_gpu: float,
    lifetime_years: float = 4.0,
) -> dict:
    """Time and network-inclusive capex cost to train ``tokens_to_train`` tokens: cluster capex
    (servers + network) amortised straight-line over ``lifetime_years`` and charged for the
    training time. Energy and operations are not included."""
    seconds = tokens_to_train / tokens_per_s
    capex = gpus * server_capex_usd_per_gpu + network_capex_usd
    per_second = capex / (lifetime_years * 365.25 * 86400)
    return {
        "train_days": seconds / 86400,
        "train_cost_usd": per_second * seconds,
        "cost_per_million_tokens_usd": per_second / tokens_per_s * 1e6,
        "cluster_capex_usd": capex,
        "lifetime_years": lifetime_years,
    }


def get_model(name: str) -> ModelSpec:
    key = name.lower()
    if key not in MODELS:
        raise InputError("unknown model", field="model", value=name, allowed=", ".join(MODELS))
    return MODELS[key]
