"""Layout search: any of tp, pp, cp, vp, dp, ep, micro_batch left open is searched over the
layouts that fit in memory; the fastest on the given network model wins, runners-up are kept.

Candidates, as frameworks allow them: tp ∈ {1, 2, 4, 8} dividing the heads and KV heads, inside
the NVLink domain; cp ∈ {1, 2, 4, …, 32} with seq_len divisible by 2·cp; pp any divisor of
gpus / (tp·cp) up to the layers; vp = 1 or a value that splits the layers (or layers + 2) evenly
into pp·vp chunks; dp = gpus / (tp·cp·pp) with the global batch divisible by dp·micro_batch;
micro_batch ∈ {1, 2, 4, 8}; ep (MoE) any divisor of the experts that divides dp·cp.
"""

from __future__ import annotations

from dataclasses import dataclass

from aifabric.errors import InputError
from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.gpus import GpuSpec
from aifabric.workload.llm.layout import Framework, Layout, check_layout
from aifabric.workload.llm.memory import REFUSAL_ALLOWED, memory_per_gpu, memory_refusal
from aifabric.workload.llm.models import ModelConfig
from aifabric.workload.llm.step import StepResult, step_time

LAYOUT_KEYS = ("tp", "pp", "cp", "vp", "dp", "ep", "micro_batch")
TP_CHOICES = (1, 2, 4, 8)
CP_CHOICES = (1, 2, 4, 8, 16, 32)
MB_CHOICES = (1, 2, 4, 8)


@dataclass(frozen=True)
class SearchResult:
    """The fastest fitting layout on one network model, and the next fastest ones."""

    best: StepResult
    runners_up: tuple[StepResult, ...]
    candidates: int  # layouts that were valid
    fitting: int  # of those, layouts that fit in memory
    searched: tuple[str, ...]  # the layout keys that were open

    def to_dict(self) -> dict:
        return {
            "best": self.best.to_dict(),
            "runners_up": [
                {"layout": r.layout.to_dict(), "iteration_s": r.iteration_s, "mfu": r.mfu}
                for r in self.runners_up
            ],
            "candidates": self.candidates,
            "fitting": self.fitting,
            "searched": list(self.searched),
        }


class MemoComm:
    """Remembers ``comm.collective_s`` answers: a search asks the same collectives many times, and a
    fabric's network model (flow-level, measured) may be slow to ask."""

    def __init__(self, comm) -> None:
        self.comm = comm
        self._memo: dict[tuple, float] = {}

    def collective_s(self, op: str, size_bytes: float, ranks: int, span: str) -> float:
        key = (op, float(size_bytes), int(ranks), span)
        t = self._memo.get(key)
        if t is None:
            t = self._memo[key] = self.comm.collective_s(op, size_bytes, ranks, span)
        return t


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def candidate_layouts(
    model: ModelConfig, gpus: int, seq_len: int, global_batch: int, domain: int, fixed: dict | None = None
):
    """Yield every valid :class:`Layout` that agrees with ``fixed`` (keys of :data:`LAYOUT_KEYS`)."""
    fixed = {k: v for k, v in (fixed or {}).items() if v is not None}
    unknown = set(fixed) - set(LAYOUT_KEYS)
    if unknown:
        raise InputError(
            "unknown parallelism key",
            field=f"training.parallelism.{sorted(unknown)[0]}",
            allowed=", ".join(LAYOUT_KEYS),
        )
    kv = model.heads if model.mla else model.kv_heads
    tps = [fixed["tp"]] if "tp" in fixed else [t for t in TP_CHOICES if t <= domain]
    tps = [t for t in tps if model.heads % t == 0 and kv % t == 0] if "tp" not in fixed else tps
    cps = [fixed["cp"]] if "cp" in fixed else [c for c in CP_CHOICES if c == 1 or seq_len % (2 * c) == 0]
    mbs = [fixed["micro_batch"]] if "micro_batch" in fixed else list(MB_CHOICES)
    for tp in tps:
        for cp in cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            pps = [fixed["pp"]] if "pp" in fixed else [p for p in _divisors(rest) if p <= model.layers]
            for pp in pps:
                if rest % pp:
                    continue
                dp = rest // pp
                if "dp" in fixed and fixed["dp"] != dp:
                    continue
                if "vp" in fixed:
                    vps = [fixed["vp"]]
                elif pp == 1:
                    vps = [1]
                else:
                    vps = [1] + [
                        v
                        for v in range(2, model.layers // pp + 1)
                        if model.layers % (pp * v) == 0 or (model.layers + 2) % (pp * v) == 0
                    ]
                if model.is_moe:
                    eps = [fixed["ep"]] if "ep" in fixed else [
                        e for e in _divisors(model.experts) if (tp * dp * cp) % e == 0
                    ]  # fmt: skip
                else:
                    eps = [fixed.get("ep", 1)]
                for mb in mbs:
                    if global_batch % (dp * mb):
                        continue
                    for vp in vps:
                        for ep in eps:
                            yield Layout(tp=tp, pp=pp, cp=cp, vp=vp, dp=dp, ep=ep, micro_batch=mb)


def check_fixed(model: ModelConfig, fixed: dict, gpus: int, seq_len: int, domain: int) -> None:
    """Each given layout key on its own: one-line :class:`InputError` naming what is allowed."""
    for key, v in fixed.items():
        if key not in LAYOUT_KEYS:
            raise InputError(
                "unknown parallelism key", field=f"training.parallelism.{key}", allowed=", ".join(LAYOUT_KEYS)
            )
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError("must be an integer ≥ 1", field=f"training.parallelism.{key}", value=v)
    kv = model.heads if model.mla else model.kv_heads
    if "tp" in fixed and (model.heads % fixed["tp"] or kv % fixed["tp"]):
        ok = [t for t in _divisors(model.heads) if kv % t == 0 and t <= domain]
        raise InputError(
            f"tp must divide the {model.heads} heads and {kv} KV heads",
            field="training.parallelism.tp",
            value=fixed["tp"],
            allowed=", ".join(map(str, ok)),
        )
    if fixed.get("cp", 1) > 1 and seq_len % (2 * fixed["cp"]):
        raise InputError(
            f"seq_len {seq_len} must be a multiple of 2 × cp",
            field="training.parallelism.cp",
            value=fixed["cp"],
            allowed=", ".join(str(c) for c in CP_CHOICES if c == 1 or seq_len % (2 * c) == 0),
        )
    if model.is_moe and "ep" in fixed and model.experts % fixed["ep"]:
        raise InputError(
            f"ep must divide the {model.experts} experts",
            field="training.parallelism.ep",
            value=fixed["ep"],
            allowed=", ".join(map(str, _divisors(model.experts))),
        )
    if not model.is_moe and fixed.get("ep", 1) != 1:
        raise InputError(
            "ep applies to MoE models only", field="training.parallelism.ep", value=fixed["ep"], allowed="1"
        )
    prod = 1
    for key in ("tp", "pp", "cp", "dp"):
        prod *= fixed.get(key, 1)
    if gpus % prod:
        given = " × ".join(f"{k} {fixed[k]}" for k in ("tp", "pp", "cp", "dp") if k in fixed)
        raise InputError(
            f"{given} = {prod} does not divide the {gpus} GPUs",
            field="training.parallelism",
            allowed=f"degrees whose product divides {gpus}",
        )


def search_layouts(
    model: ModelConfig,
    gpu: GpuSpec,
    gpus: int,
    seq_len: int,
    global_batch: int,
    comm,
    precision: str = "bf16",
    fixed: dict | None = None,
    fw: Framework = Framework(),
    cal: Calibration = CALIBRATION,
    runners_up: int = 4,
    compute_efficiency: float | None = None,
) -> SearchResult:
    """The fastest layout that fits, on the network model ``comm`` (see module docstring).

    Raises :class:`InputError` when a fully given layout is impossible, when no layout is valid, or
    when none fits in memory (naming how much the leanest one needs).
    """
    fixed = {k: v for k, v in (fixed or {}).items() if v is not None}
    open_keys = tuple(k for k in LAYOUT_KEYS if k not in fixed and not (k == "ep" and not model.is_moe))
    domain = gpu.placement_domain_gpus
    check_fixed(model, fixed, gpus, seq_len, gpu.nvlink_domain_gpus)
    if all(k in fixed for k in ("tp", "pp", "cp")):
        # a given layout must be possible on its own; open vp, ep, micro_batch are checked at 1
        # (the least restrictive value), so an error here means no candidate could work
        tpc = fixed["tp"] * fixed["pp"] * fixed["cp"]
        lay = Layout(
            tp=fixed["tp"],
            pp=fixed["pp"],
            cp=fixed["cp"],
            vp=fixed.get("vp", 1),
            dp=fixed.get("dp", max(1, gpus // tpc)),
            ep=fixed.get("ep", 1),
            micro_batch=fixed.get("micro_batch", 1),
        )
        check_layout(model, lay, gpus, seq_len, global_batch, gpu.nvlink_domain_gpus, fw.etp(lay.tp))
    valid: list[Layout] = []
    for lay in candidate_layouts(model, gpus, seq_len, global_batch, domain, fixed):
        try:
            check_layout(model, lay, gpus, seq_len, global_batch, gpu.nvlink_domain_gpus, fw.etp(lay.tp))
        except InputError:
            continue
        valid.append(lay)
    if not valid:
        raise InputError(
            f"no valid layout of {gpus} GPUs for {model.name} with seq_len {seq_len} and global_batch "
            f"{global_batch}",
            field="training.parallelism",
            value=fixed or None,
            allowed="tp × pp × cp × dp = GPUs, global_batch a multiple of dp × micro_batch",
        )
    fitting: list[Layout] = []
    leanest = None
    for lay in valid:
        mem = memory_per_gpu(model, lay, seq_len, global_batch, fw, cal, precision)
        if mem.total_bytes <= gpu.hbm_bytes:
            fitting.append(lay)
        elif leanest is None or mem.total_bytes < leanest[0].total_bytes:
            leanest = (mem, lay)
    if not fitting:
        mem, lay = leanest
        what = "layout" if len(valid) == 1 else "leanest layout"
        raise InputError(
            memory_refusal(mem, lay, gpu.hbm_bytes, what),
            field="training.parallelism",
            allowed=REFUSAL_ALLOWED,
        )
    comm = MemoComm(comm)
    results = [
        step_time(
            model,
            gpu,
            gpus,
            lay,
            seq_len,
            global_batch,
            comm,
            precision=precision,
            fw=fw,
            cal=cal,
            check=False,
            compute_efficiency=compute_efficiency,
        )
        for lay in fitting
    ]
    results.sort(key=lambda r: (r.iteration_s, r.layout.tp * r.layout.pp * r.layout.cp))
    return SearchResult(
        best=results[0],
        runners_up=tuple(results[1 : 1 + runners_up]),
        candidates=len(valid),
        fitting=len(fitting),
        searched=open_keys,
    )
