"""Stage 2 — *workload*: what the job puts on the network.

Input: :class:`WorkloadInput` (the job kind, the ``training:`` section or a model name, the
cluster's GPUs). Output: :class:`Workload` — for training, the validated
:class:`~aifabric.workload.llm.spec.TrainingSpec`, the model, a *reference layout* (the fastest
layout that fits memory on an ideal fabric: the step model's validation α-β network — every NIC at
line rate × NCCL's achieved efficiency, no contention) with each
parallel group's collectives (op, size, ranks, span, count per step, the compute window it may
overlap with), plus the traffic patterns the *measure* stage runs on each fabric, with their
endpoints placed on the topology (:class:`TrafficPattern`: rank → node → rail, host id = node ·
GPUs per node + rail). The layout each fabric actually runs is searched again in *performance*
on that fabric's measured network.

Add a traffic pattern here: a name in :data:`PATTERNS` with a function returning its flows;
*measure* runs every pattern the workload lists.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from aifabric.errors import InputError
from aifabric.workload.llm.layout import DEFAULT_ORDER

DEFAULT_MODEL = "llama3.1-70b"
STEP_BYTES = 16 * 2**20  # per flow of a measured step: large enough to be bandwidth-bound at 400/800G


def ring_step_flows(gpus: int, gpus_per_node: int, group_nodes: int, size_bytes: int) -> dict:
    """Flows of one ring step of the DP all-reduce on every rail at once: node i → i+1 inside each
    group of ``group_nodes`` consecutive nodes (host id = node · g + rail), the job on every node in
    the fabric's order (``ideal`` placement, no layout)."""
    return TrafficPattern("dp-ring-step", gpus, gpus_per_node, size_bytes, group_nodes=group_nodes).flows()


def rail_permutation_flows(gpus: int, gpus_per_node: int, size_bytes: int, seed: int) -> dict:
    """Every GPU sends to the same-rail GPU of a random other node (a seeded node derangement per
    rail): the all-to-all-like pattern where hash collisions on leaf uplinks show."""
    return TrafficPattern("rail-permutation", gpus, gpus_per_node, size_bytes, seed=seed).flows()


def _placement(p: TrafficPattern):
    from aifabric.workload.placement import place

    return p.placement or place("ideal", p.gpus // p.gpus_per_node)


def _with_background(p: TrafficPattern, pl, src: np.ndarray, dst: np.ndarray) -> dict:
    """The job's flows, then the background jobs' ring steps (``shared``); ``job`` marks the job's
    flows when there is background traffic. (Flow order matters: ECMP hashes a flow's id.)"""
    from aifabric.workload.placement import ring_over

    out = {"src": src, "dst": dst, "size_bytes": np.full(len(src), p.size_bytes)}
    if pl.background:
        bg = [ring_over(b, p.gpus_per_node) for b in pl.background]
        bs = np.concatenate([b[0] for b in bg])
        bd = np.concatenate([b[1] for b in bg])
        out = {
            "src": np.concatenate([src, bs]),
            "dst": np.concatenate([dst, bd]),
            "size_bytes": np.full(len(src) + len(bs), p.size_bytes),
            "job": np.arange(len(src) + len(bs)) < len(src),
        }
    return out


def split_connections(flows: dict, k: int) -> dict:
    """Each flow as ``k`` sub-flows (NCCL channels per NIC × QPs per connection: each its own QP,
    so its own flow id and RoCEv2 UDP source port for ECMP), sizes as even as whole bytes allow,
    the sub-flows of a flow next to each other."""
    if k <= 1:
        return flows
    n = len(flows["src"])
    part = np.tile(np.arange(k), n)
    size = np.repeat(flows["size_bytes"] // k, k) + (part < np.repeat(flows["size_bytes"] % k, k))
    out = {c: np.repeat(v, k) for c, v in flows.items()}
    out["size_bytes"] = size
    keep = size > 0
    return {c: v[keep] for c, v in out.items()}


def _ring_flows(p: TrafficPattern) -> dict:
    """One ring step of the DP × CP all-reduce of every group at once, from the layout's rank order
    (:func:`aifabric.workload.placement.dp_ring_hops`) on the placement's nodes."""
    from aifabric.workload.placement import dp_ring_hops, node_ring_hops

    g = p.gpus_per_node
    pl = _placement(p)
    jn = pl.job_nodes
    s = d = r = np.zeros(0, dtype=np.int64)
    if p.layout is not None:
        s, d, r = dp_ring_hops(*p.layout, g, jn if jn < pl.cluster_nodes else None, p.order, _domain_nodes(p))
    if not len(s):  # no layout, a DP group inside one node, or a job smaller than one group
        s, d, r = node_ring_hops(jn, max(2, min(p.group_nodes, jn)), g)
    phys = np.asarray(pl.nodes, dtype=np.int64)
    src, dst = phys[s] * g + r, phys[d] * g + r
    order = np.argsort(src, kind="stable")  # by source host, as the ring was always listed
    return split_connections(_with_background(p, pl, src[order], dst[order]), p.qps)


def _permutation_flows(p: TrafficPattern) -> dict:
    from aifabric.flow.draws import derangement

    g = p.gpus_per_node
    pl = _placement(p)
    nodes = pl.job_nodes
    phys = np.asarray(pl.nodes, dtype=np.int64)
    rng = np.random.default_rng(p.seed)
    src, dst = [], []
    for rail in range(g):
        perm = derangement(nodes, rng) if nodes > 1 else rng.permutation(nodes)
        src.append(phys * g + rail)
        dst.append(phys[perm] * g + rail)
    return split_connections(_with_background(p, pl, np.concatenate(src), np.concatenate(dst)), p.qps)


def _domain_nodes(p: TrafficPattern) -> int:
    """Nodes per NVLink domain the job lays its ranks over (1: a node is the domain)."""
    return max(1, p.domain // p.gpus_per_node)


def stage_hops(p: TrafficPattern) -> tuple[np.ndarray, np.ndarray, int]:
    """The ``pp-send-recv`` pattern's network hops as host ids (src, dst) and how many stage pairs
    it has in all (those inside one node, or one NVLink domain of ``domain`` GPUs — an NVL72
    rack — go over NVLink and are not hops). A hop leaves the sending
    node on the receiving GPU's rail: NCCL's PXN moves the data over NVLink to the GPU on the
    destination's rail first (NCCL 2.12+, default on), so every hop is rail-aligned."""
    from aifabric.workload.placement import stage_pairs

    g = p.gpus_per_node
    pl = _placement(p)
    s, d = stage_pairs(p.stride, p.span, min(p.gpus // p.span * p.span, pl.job_nodes * g))
    dom = g * _domain_nodes(p)
    cross = s // dom != d // dom
    phys = np.asarray(pl.nodes, dtype=np.int64)
    rail = d[cross] % g
    return phys[s[cross] // g] * g + rail, phys[d[cross] // g] * g + rail, len(s)


def _stage_flows(p: TrafficPattern) -> dict:
    """Every pipeline stage boundary's send at once (module doc of :func:`stage_hops`)."""
    src, dst, _ = stage_hops(p)
    order = np.argsort(src, kind="stable")
    return split_connections(_with_background(p, _placement(p), src[order], dst[order]), p.qps)


@dataclass(frozen=True)
class TrafficPattern:
    """A traffic pattern with its endpoints on the topology; hashable, so measurements cache on it.

    ``dp-ring-step``: one ring step of the data-parallel (DP × CP) all-reduce of every group at once,
    each group's nodes in rank order (``layout`` = (tp, cp, dp, pp), Megatron's ``tp-cp-ep-dp-pp``
    order; without one, groups of ``group_nodes`` consecutive nodes), on every rail at once.
    ``rail-permutation``: every GPU to the same-rail GPU of a random other node (seeded).
    ``pp-send-recv``: every pipeline stage boundary's send at once, placed by the layout: rank ``r``
    to rank ``r + stride`` inside each group of ``span`` ranks
    (:func:`aifabric.workload.placement.stage_pairs`), partners in one node over NVLink (no flow).
    ``placement`` (:class:`aifabric.workload.placement.Placement`; None = ``ideal``) maps the job's
    nodes onto the cluster's and adds the background jobs' traffic (``shared``); the job's flows
    come first."""

    name: str  # dp-ring-step | rail-permutation | pp-send-recv
    gpus: int
    gpus_per_node: int
    size_bytes: int
    group_nodes: int = 0  # dp-ring-step
    seed: int = 0  # rail-permutation
    layout: tuple[int, int, int, int] | None = None  # (tp, cp, dp, pp) of the reference layout
    placement: Any = None  # aifabric.workload.placement.Placement | None (ideal)
    qps: int = 1  # sub-flows per connection: NCCL channels per NIC × QPs per connection (ECMP entropy)
    stride: int = 0  # pp-send-recv: ranks between a stage and the next
    span: int = 0  # pp-send-recv: ranks of one pipeline (the training job, an inference instance)
    order: str = DEFAULT_ORDER  # the layout's rank order (dp-ring-step with a layout, training pp-send-recv)
    domain: int = 0  # GPUs of one NVLink domain the ranks are laid over (0: one node; NVL72: 64)

    def flows(self) -> dict:
        return PATTERNS[self.name](self)

    def to_dict(self) -> dict:
        d = {"name": self.name, "gpus": self.gpus, "size_bytes": self.size_bytes}
        if self.name == "dp-ring-step":
            d["group_nodes"] = self.group_nodes
            if self.layout is not None:
                d["rank_order"] = self.order
        elif self.name == "pp-send-recv":
            d.update(stride_ranks=self.stride, pipeline_ranks=self.span)
            if self.domain:  # a training job's (an inference instance's stages are one domain apart)
                d["rank_order"] = self.order
        else:
            d["seed"] = self.seed
        if self.domain > self.gpus_per_node:
            d["nvlink_domain_gpus"] = self.domain
        if self.placement is not None and self.placement.kind != "ideal":
            d["placement"] = self.placement.kind
            d["job_nodes"] = self.placement.job_nodes
        if self.qps > 1:
            d["qps_per_connection"] = self.qps
        return d


PATTERNS = {"dp-ring-step": _ring_flows, "rail-permutation": _permutation_flows, "pp-send-recv": _stage_flows}


@dataclass(frozen=True)
class WorkloadInput:
    kind: str  # training | inference | storage | trading
    gpus: int
    gpus_per_node: int
    hbm_gbytes: float
    model: str | None = None  # training: a built-in model name (when no training: section)
    seed: int = 1
    training: dict | None = None  # the scenario's training: section
    gpu: str = "h100"  # the catalog's GPU id
    nic_rate_gbps: float = 400.0
    compute_efficiency: float | None = None  # --compute-efficiency (measured GEMM efficiency)
    file: str | None = None  # where training: came from (error messages)
    inference: dict | None = None  # the scenario's inference: section (+ --ttft-ms / --itl-ms)
    storage: dict | None = None  # the scenario's storage: section (+ --checkpoint-period)
    placement: str = "ideal"  # ideal | fragmented | shared (aifabric.workload.placement)
    occupancy: float | None = None  # fragmented / shared: share of nodes other jobs hold (None = default)
    background_jobs: int | None = None  # shared: how many other jobs (None = default)
    channels_per_nic: int = 2  # NCCL channels whose connections leave one NIC (entropy; see placement)
    qps_per_connection: int = 1  # NCCL_IB_QPS_PER_CONNECTION (NCCL's default 1, hardware-facts S15)


@dataclass(frozen=True)
class Workload:
    kind: str
    gpus: int
    gpus_per_node: int
    spec: Any  # TrainingSpec | None
    model: Any  # ModelConfig | None
    gpu: str  # the step model's GPU id
    reference: Any = field(default=None, repr=False)  # StepResult on the ideal fabric | None
    collectives: tuple[dict, ...] = ()
    patterns: tuple[TrafficPattern, ...] = ()
    # inference: the InferenceSpec and where it runs (needs_backend, reason, gpus_per_instance)
    inference: Any = None
    serving: dict | None = None  # where the inference instance runs (needs_backend, reason, …)
    storage: Any = None  # StorageSetup
    placement: Any = None  # aifabric.workload.placement.Placement | None (no network)

    @property
    def is_training_step(self) -> bool:
        """A training iteration to time (training on more than one node)."""
        return self.spec is not None and self.gpus > self.gpus_per_node

    @property
    def parallelism(self):
        """The reference layout (tp, pp, cp, vp, dp, ep, micro_batch), or None."""
        return self.reference.layout if self.reference is not None else None

    def pattern(self, name: str) -> TrafficPattern | None:
        return next((p for p in self.patterns if p.name == name), None)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "model": self.model.name if self.model is not None else None,
            "training": self.spec.model_dump(mode="json") if self.spec is not None else None,
            "reference_layout": self.parallelism.to_dict() if self.parallelism is not None else None,
            "reference_layout_on": "an ideal fabric (every NIC at line rate, no contention)",
            "collectives": [dict(c) for c in self.collectives],
            "patterns": [p.to_dict() for p in self.patterns],
            "inference": (
                {**asdict(self.inference), "placement": self.serving} if self.inference is not None else None
            ),
            "storage": self.storage.to_dict() if self.storage is not None else None,
            "placement": self.placement.to_dict() if self.placement is not None else None,
        }


@dataclass(frozen=True)
class StorageSetup:
    """What ``--workload storage`` writes and where (:mod:`aifabric.workload.llm.storage`)."""

    model: Any  # ModelConfig
    checkpoint_period_s: float
    storage_nodes: int
    storage_node_gbps: float
    on_backend: bool
    bytes_per_token: float
    basis: dict

    def to_dict(self) -> dict:
        return {
            "model": self.model.name,
            "checkpoint_period_s": self.checkpoint_period_s,
            "storage_nodes": self.storage_nodes,
            "storage_node_gbps": self.storage_node_gbps,
            "on_backend": self.on_backend,
            "bytes_per_token": self.bytes_per_token,
            "basis": dict(self.basis),
        }


def _section_error(exc: InputError, file: str | None) -> InputError:
    return exc.with_file(file) if file else exc


def inference_setup(inp: WorkloadInput):
    """The ``inference:`` section as an InferenceSpec and its placement (fabric-independent: does an
    instance fit one NVLink domain?), checked on the ideal fabric; one-line errors."""
    from aifabric.workload.llm.gpus import get_gpu
    from aifabric.workload.llm.inference import InferenceSpec, inference_step
    from aifabric.workload.llm.network import AlphaBetaNetwork

    sec = dict(inp.inference or {})
    kw: dict = {"model": sec.get("model") or inp.model or DEFAULT_MODEL}
    for key in ("precision", "prompt_tokens", "output_tokens", "batch", "disaggregated", "overlap"):
        if sec.get(key) is not None:
            kw[key] = sec[key]
    if sec.get("gpus_per_instance") is not None:
        kw["gpus_per_instance"] = int(sec["gpus_per_instance"])
    if sec.get("ttft_ms") is not None:
        kw["ttft_budget_s"] = float(sec["ttft_ms"]) / 1e3
    if sec.get("itl_ms") is not None:
        kw["itl_budget_s"] = float(sec["itl_ms"]) / 1e3
    spec = InferenceSpec(**kw)
    g = get_gpu(step_gpu(inp.gpu))
    ideal = AlphaBetaNetwork(inp.nic_rate_gbps, g.nvlink_bytes_per_s, label="ideal fabric")
    try:
        r = inference_step(spec, g, ideal)
    except InputError as exc:
        raise _section_error(exc, inp.file) from None
    if r.gpus_per_instance > inp.gpus:
        raise _section_error(
            InputError(
                f"one instance needs {r.gpus_per_instance} GPUs, the cluster has {inp.gpus}",
                field="inference.gpus_per_instance",
                value=spec.gpus_per_instance or r.gpus_per_instance,
                allowed=f"advisor.gpus ≥ {r.gpus_per_instance}, or a smaller model or batch",
            ),
            inp.file,
        )
    placement = {
        "needs_backend": r.needs_backend,
        "reason": r.reason,
        "gpus_per_instance": r.gpus_per_instance,
        "nvlink_domain_gpus": g.nvlink_domain_gpus,
    }
    return spec, placement


def storage_setup(inp: WorkloadInput) -> StorageSetup:
    """The ``storage:`` section with its defaults and where each comes from."""
    from aifabric.workload.llm import storage as st
    from aifabric.workload.llm.models import resolve_model

    sec = dict(inp.storage or {})
    name = sec.get("model") or inp.model or DEFAULT_MODEL
    try:
        model = resolve_model(name)
    except InputError as exc:
        raise _section_error(
            InputError(exc.problem, field="storage.model", value=exc.value, allowed=exc.allowed), inp.file
        ) from None
    node_gbps = float(sec.get("storage_node_gbps") or st.STORAGE_NODE_GBPS)
    basis = {
        "checkpoint_bytes": "14 bytes per parameter: BF16 weights + FP32 master weights + Adam moments",
        "checkpoint_period_s": "set by the user"
        if sec.get("checkpoint_period_s")
        else "assumption: every 30 min (no public default)",
        "storage_nodes": "set by the user"
        if sec.get("storage_nodes")
        else "sized to the Llama 3 paper's 2 TB/s sustained storage per 16K GPUs (§3.3.1, hardware-facts S96)",
        "storage_node_gbps": "set by the user"
        if sec.get("storage_node_gbps")
        else "assumption: 2 × 400 Gb/s ports per storage node",
        "on_backend": "set by the user"
        if sec.get("on_backend") is not None
        else "reference designs give storage its own NICs and network: DGX H100/H200 and DGX B200 carry 2 "
        "dual-port storage/in-band cards next to the 8 compute NICs (reference prices-and-hardware §5a)",
        "host_storage_gbps": f"{st.HOST_STORAGE_GBPS:g} Gb/s of storage NIC per server off the back-end "
        "(assumption: one 400G port of each of the 2 storage cards)",
        "data_loading": "tokens/s the GPUs could train at (6 x active parameters FLOPs per token at the fitted "
        "GEMM efficiency; an upper bound) x bytes per token (4: 32-bit token ids, estimate)",
    }
    return StorageSetup(
        model=model,
        checkpoint_period_s=float(sec.get("checkpoint_period_s") or st.CHECKPOINT_PERIOD_S),
        storage_nodes=int(sec.get("storage_nodes") or st.default_storage_nodes(inp.gpus, node_gbps)),
        storage_node_gbps=node_gbps,
        on_backend=bool(sec.get("on_backend") or False),
        bytes_per_token=float(sec.get("bytes_per_token") or st.BYTES_PER_TOKEN),
        basis=basis,
    )


def step_gpu(gpu: str) -> str:
    """The step model's GPU id for a catalog system id (``gb200-nvl72`` → ``gb200``)."""
    return gpu.removesuffix("-nvl72")


def training_spec(inp: WorkloadInput):
    """The validated ``training:`` section (or one built from the model name); one-line errors."""
    from aifabric.scenario import validation_errors
    from aifabric.workload.llm.spec import TrainingSpec

    data = dict(inp.training) if inp.training is not None else {"model": inp.model or DEFAULT_MODEL}
    if inp.training is not None and inp.model:
        data["model"] = inp.model
    if inp.compute_efficiency is not None:
        data["compute_efficiency"] = inp.compute_efficiency
    try:
        spec = TrainingSpec.model_validate(data)
        spec.model_config_resolved()
    except ValidationError as exc:
        raise validation_errors(exc, inp.file, TrainingSpec, "training") from None
    return spec


def _stage_geometry(inp: WorkloadInput, lay, inf, serving) -> tuple[int, int] | None:
    """(stride, span) of the job's pipeline sends, or None: training with PP > 1 on the reference
    layout (stride: the ranks inside pp in its rank order, tp·cp·dp in Megatron's default; span: one
    pipeline's ranks, the whole job in the default order); a dense inference instance beyond one NVLink domain
    (one stage per domain: stride = the domain's GPUs, span = the instance; its whole instances only)."""
    if lay is not None and lay.pp > 1:
        from aifabric.workload.llm.layout import dense_sizes, group_offsets

        stride = int(group_offsets(dense_sizes(lay), lay.order, ("pp",))[1])
        return stride, stride * lay.pp
    if inf is None or not serving or not serving.get("needs_backend"):
        return None
    from aifabric.workload.llm.models import resolve_model

    n, domain = int(serving["gpus_per_instance"]), int(serving["nvlink_domain_gpus"])
    if resolve_model(inf.model).is_moe or n <= domain or inp.gpus < n:
        return None
    return domain, n


def _job_domain(inp: WorkloadInput) -> int:
    """GPUs of the NVLink domain a training job lays its ranks over: the step model's
    (:attr:`~aifabric.workload.llm.gpus.GpuSpec.placement_domain_gpus`: 64 on an NVL72 rack), or one
    node when that is larger."""
    from aifabric.workload.llm.gpus import get_gpu

    return max(inp.gpus_per_node, get_gpu(step_gpu(inp.gpu)).placement_domain_gpus)


def workload(inp: WorkloadInput) -> Workload:
    """The job's model, reference layout, per-group collectives and the patterns to measure."""
    for section, sec in (("inference", inp.inference), ("storage", inp.storage)):
        if sec is not None and inp.kind != section:
            raise _section_error(
                InputError(
                    f"applies to --workload {section} only",
                    field=section,
                    value=inp.kind,
                    allowed=f"remove the {section}: section (and its flags), or use workload: {section}",
                ),
                inp.file,
            )
    gpn = inp.gpus_per_node
    spec = model = ref = None
    colls: tuple[dict, ...] = ()
    if inp.kind == "training":
        spec = training_spec(inp)
        model = spec.model_config_resolved()
        if inp.gpus > gpn:
            from aifabric.workload.llm import plan_training
            from aifabric.workload.llm.gpus import get_gpu
            from aifabric.workload.llm.network import AlphaBetaNetwork

            g = get_gpu(step_gpu(inp.gpu))
            ideal = AlphaBetaNetwork(inp.nic_rate_gbps, g.nvlink_bytes_per_s, label="ideal fabric")
            try:
                ref = plan_training(spec, g, inp.gpus, ideal, runners_up=0).best
            except InputError as exc:
                raise (exc.with_file(inp.file) if inp.file else exc) from None
            colls = tuple(c.to_dict() for c in ref.collectives)
    elif inp.training is not None:
        raise InputError(
            "applies to --workload training only",
            field="training",
            value=inp.kind,
            allowed="remove the training: section, or use workload: training",
        )
    inf = serving = sto = None
    if inp.kind == "inference":
        inf, serving = inference_setup(inp)
    elif inp.kind == "storage":
        sto = storage_setup(inp)
    patterns: tuple[TrafficPattern, ...] = ()
    pl = None
    if inp.gpus > gpn:
        from aifabric.workload.placement import DEFAULT_BACKGROUND_JOBS, DEFAULT_OCCUPANCY, place

        nodes = inp.gpus // gpn
        pl = place(
            inp.placement,
            nodes,
            DEFAULT_OCCUPANCY if inp.occupancy is None else inp.occupancy,
            DEFAULT_BACKGROUND_JOBS if inp.background_jobs is None else inp.background_jobs,
            inp.seed,
        )
        lay = ref.layout if ref is not None else None
        layout = (lay.tp, lay.cp, lay.dp, lay.pp) if lay is not None else None
        order = lay.order if lay is not None else DEFAULT_ORDER
        # the NVLink domain the job lays its ranks over (training with a layout; else one node)
        domain = _job_domain(inp) if lay is not None else 0
        # nodes one DP × CP group spans (the whole job without a layout); at least a 2-node ring
        group = max(1, lay.tp * lay.cp * lay.dp // gpn) if lay is not None else nodes
        group = max(2, min(group, nodes))
        qps = int(inp.channels_per_nic) * int(inp.qps_per_connection)
        ring = TrafficPattern(
            "dp-ring-step", inp.gpus, gpn, STEP_BYTES, group_nodes=group, layout=layout, placement=pl,
            qps=qps, order=order, domain=domain,
        )  # fmt: skip
        patterns = (ring,)
        if nodes > 1:
            patterns += (
                TrafficPattern(
                    "rail-permutation", inp.gpus, gpn, STEP_BYTES, seed=inp.seed, placement=pl, qps=qps
                ),
            )
        stages = _stage_geometry(inp, lay, inf, serving)
        if stages is not None:
            pp = TrafficPattern(
                "pp-send-recv",
                inp.gpus,
                gpn,
                STEP_BYTES,
                placement=pl,
                qps=qps,
                stride=stages[0],
                span=stages[1],
                order=order,
                domain=domain,
            )
            patterns += (pp,) if len(stage_hops(pp)[0]) else ()
    return Workload(
        inp.kind, inp.gpus, gpn, spec, model, step_gpu(inp.gpu), ref, colls, patterns, inf, serving, sto, pl
    )


__all__ = [
    "StorageSetup",
    "TrafficPattern",
    "Workload",
    "WorkloadInput",
    "rail_permutation_flows",
    "ring_step_flows",
    "inference_setup",
    "step_gpu",
    "storage_setup",
    "training_spec",
    "workload",
]
