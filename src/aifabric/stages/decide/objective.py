"""The decision stage's one objective, its uncertain inputs, their break-even values and a
Monte-Carlo over their ranges (part of *decide*).

**Objective** — risk-adjusted cost per useful unit of work, per design:

* training: cost per million trained tokens (servers + network capex amortised over the lifetime,
  :mod:`aifabric.stages.performance`) ÷ (1 − expected loss), the share of goodput the risk
  scenarios take;
* inference: cost per million output tokens served within the TTFT and inter-token budgets (servers
  + network capex amortised, :func:`aifabric.stages.performance.inference_performance`) ÷ (1 −
  expected loss), each risk's slowdown being the decode step's (its network share × the
  communication slowdown); when no design meets the budgets, the tokens served at the asked batch;
* storage, trading: network capex per unit of delivered network throughput = network capex ÷ (1 −
  expected loss of communication) (storage: the storage-incast share is the checkpoint burst's
  share of time on the back-end, 0 when storage has its own network).

The expected loss is the risk stage's combination 1 − Π(1 − pᵢ·dᵢ·ℓᵢ), ℓᵢ = 1 − 1/(1 + sᵢ), each
sᵢ re-derived from that scenario's measurement through *performance* when an input it depends on
moves (compute efficiency, NIC efficiency, congestion share).

**Uncertain inputs** (:func:`uncertain_inputs`), each with a base value, a plausible range and the
basis of that range: price multipliers per design and BOM category (wide where the catalog price is
an estimate), the misconfiguration probability, the compute efficiency, the achieved NIC efficiency
per design, and the congestion share of the risk testbed. :func:`break_even` finds the value of one
input at which the cheapest design changes (everything else at base); :func:`monte_carlo` samples
all of them at once and counts how often each design is cheapest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from aifabric.stages.performance import LIFETIME_YEARS, step_time
from aifabric.stages.risk.assess import MISCONFIG_PROBABILITY, combine, lost_share

CATEGORIES = ("switch", "nic", "transceiver", "cable")
# Price ranges as multipliers of the catalog's price: the catalog's own low/high per BOM line where it
# has them (quote-only products are input ranges); otherwise an estimated price is taken as uncertain
# by ±50 % and a sourced street/list price by ±15 % (discounts, dates). ASSUMPTION for the latter two.
PRICE_RANGE = {True: (0.5, 1.5), False: (0.85, 1.15)}
# Misconfiguration probability per lossless setting, plausible range by team expertise. ASSUMPTION
# (no public source; the base values are the risk stage's).
PROBABILITY_RANGE = {"none": (0.2, 0.8), "some": (0.05, 0.4), "expert": (0.01, 0.15)}
# Compute efficiency: the step model's fitted GEMM efficiency (aifabric.workload.llm CALIBRATION),
# ±15 % — the model's validation residuals are mostly within ±10 % of published step times, a few
# cases reach 15–20 % (README "Training step model"). ASSUMPTION for the width.
COMPUTE_EFFICIENCY_SPREAD = 0.15
# Achieved NIC efficiency (the base is each fabric's: NCCL's 0.94 or a calibration's fitted value):
# NCCL reaches about 46–48 GB/s of a 50 GB/s NIC in public nccl-tests runs (0.92–0.96, hardware-facts
# §G.3 [S4]), HDR ~0.96 — widened by 0.02 each side (ASSUMPTION for the width).
NIC_EFFICIENCY_RANGE = (0.90, 0.98)
CONGESTION_SHARE_RANGE = (0.05, 0.5)  # ASSUMPTION around the risk testbed's 25 % default
# Share of time storage / checkpoint traffic shares the back-end fabric with training: 0 when the
# design gives storage its own NICs and network (the reference designs do), up to 50 % (ASSUMPTION).
STORAGE_SHARE_RANGE = (0.0, 0.5)
MC_SAMPLES = 400


@dataclass(frozen=True)
class UncertainInput:
    name: str
    label: str
    base: float
    low: float
    high: float
    basis: str
    design: str | None = None  # the design it applies to (None: all)
    bracket: tuple[float, float] = (0.0, 1.0)  # where a break-even is searched (physically possible values)
    item: str | None = None  # price inputs: the category's largest catalog item
    unit_usd: float | None = None  # and its unit price (a multiplier × this = a price per unit)
    item_range_usd: tuple[float, float] | None = None  # that item's own price range in the catalog


@dataclass
class Objective:
    """Cost per useful unit per design, re-computable with any inputs moved (see module doc)."""

    designs: list[str]
    training: bool
    capex_by_category: dict[str, dict[str, float]]
    extra_capex_usd: dict[str, float]  # growth: the next expansion step on each design
    base_probability: float
    base_compute_efficiency: float | None  # None: no training step
    base_congestion_share: float
    gpus: int
    server_usd_per_gpu: float
    train_tokens: float
    layouts: dict[str, object] = field(repr=False)  # each design's chosen layout (fixed under uncertainty)
    workload: object = field(repr=False)
    networks: dict[str, object] = field(repr=False)
    risk_items: dict[str, tuple] = field(repr=False)
    _cache: dict = field(default_factory=dict, repr=False)
    # inference: output tokens/s served per design and the decode step's network share (None otherwise)
    served_tokens_per_s: dict[str, float] | None = None
    network_share: dict[str, float] = field(default_factory=dict)
    congestion_is_storage: bool = True
    # the scenario's assumptions: section's values for the objective's inputs (prices as multipliers,
    # probabilities, efficiencies): the base every evaluation starts from
    base_x: dict = field(default_factory=dict)

    def capex(self, key: str, x: dict) -> float:
        return sum(
            v * x.get(f"price.{cat}.{key}", 1.0) for cat, v in self.capex_by_category[key].items()
        ) + self.extra_capex_usd.get(key, 0.0)

    def _nic_efficiency(self, key: str) -> float:
        """The design's base NIC efficiency (NCCL's 0.94, a calibration's, or 1 for a user's own)."""
        return getattr(self.networks.get(key), "nic_efficiency", 1.0)

    def _iteration_s(self, key: str, nic_eff: float, eff: float | None, comm_slowdown: float = 0.0) -> float:
        ck = (key, nic_eff, eff, comm_slowdown)
        if ck not in self._cache:
            net = self.networks[key]
            if nic_eff != net.nic_efficiency:
                net = replace(net, nic_efficiency=nic_eff)
            if comm_slowdown:  # the testbed's added time in ideal steps (risk._slowdown)
                net = net.with_extra_time(comm_slowdown)
            ce = None if eff == self.base_compute_efficiency else eff
            self._cache[ck] = step_time(self.workload, net, self.layouts[key], ce).iteration_s
        return self._cache[ck]

    def expected_loss(self, key: str, x: dict) -> float:
        """The risk stage's combination with the inputs in ``x``: 1 − Π(1 − pᵢ·dᵢ·ℓᵢ), ℓᵢ = 1 − 1/(1 + sᵢ),
        each sᵢ re-derived through *performance* when an input it depends on moved; configuration
        mistakes' probabilities scale with ``misconfiguration_probability``."""
        p = x.get("misconfiguration_probability", self.base_probability)
        cs = x.get("congestion_share", self.base_congestion_share)
        if self.congestion_is_storage and "storage_share" in x:
            cs = x["storage_share"]  # one setting: the congested mix is the storage incast
        base_eff = self._nic_efficiency(key)
        eff = x.get(f"nic_efficiency.{key}", base_eff)
        ce = x.get("compute_efficiency", self.base_compute_efficiency)
        losses = []
        for item in self.risk_items.get(key, ()):
            prob = item.probability
            if item.kind == "mistake":
                prob = min(1.0, prob * (p / self.base_probability if self.base_probability else 1.0))
            persistence = item.persistence
            if item.kind == "share" and "storage_share" in x:
                persistence = x["storage_share"]
            s = item.iteration_slowdown
            q, c = item.comm_slowdown_quiet, item.comm_slowdown_congested
            moved = cs != self.base_congestion_share or eff != base_eff or ce != self.base_compute_efficiency
            if moved and q is not None and c is not None and math.isfinite(q) and math.isfinite(c):
                comm = cs * max(0.0, c) + (1 - cs) * max(0.0, q)
                if self.training:
                    base = self._iteration_s(key, eff, ce)
                    s = self._iteration_s(key, eff, ce, comm) / base - 1
                else:
                    s = comm * self.network_share.get(key, 1.0)
            losses.append(prob * persistence * lost_share(s))
        return combine(losses)

    def value(self, key: str, x: dict | None = None) -> float:
        """Risk-adjusted cost per useful unit of ``key`` with the inputs in ``x`` (else base)."""
        x = {**self.base_x, **(x or {})}
        capex = self.capex(key, x)
        keep = max(1e-9, 1.0 - self.expected_loss(key, x))  # the share of goodput that remains
        if self.served_tokens_per_s is not None:
            per_s = (self.gpus * self.server_usd_per_gpu + capex) / (LIFETIME_YEARS * 365.25 * 86400)
            return per_s / self.served_tokens_per_s[key] * 1e6 / keep
        if not self.training:
            return capex / keep
        it = self._iteration_s(
            key,
            x.get(f"nic_efficiency.{key}", self._nic_efficiency(key)),
            x.get("compute_efficiency", self.base_compute_efficiency),
        )
        tokens_per_s = self.workload.spec.global_batch * self.workload.spec.seq_len / it
        per_s = (self.gpus * self.server_usd_per_gpu + capex) / (LIFETIME_YEARS * 365.25 * 86400)
        return per_s / tokens_per_s * 1e6 / keep

    def best(self, x: dict | None = None, feasible: list[str] | None = None) -> str:
        keys = feasible or self.designs
        return min(keys, key=lambda k: self.value(k, x))

    @property
    def unit(self) -> str:
        if self.served_tokens_per_s is not None:
            return "USD per million served tokens"
        return (
            "USD per million useful tokens"
            if self.training
            else "USD of network capex per unit of useful throughput"
        )


def served_tokens(perf) -> tuple[dict[str, float] | None, dict[str, float]]:
    """Inference: output tokens/s per design within the latency budgets (at the asked batch for a
    design that meets them at no batch — *decide* rules it out when another design meets them) and
    each design's decode network share."""
    inf = {f.key: f.inference for f in perf.fabrics if f.inference is not None}
    if not inf:
        return None, {}
    tps = {
        k: d["tokens_per_s"] if d["tokens_per_s"] > 0 else d["tokens_per_s_unbounded"] for k, d in inf.items()
    }
    return tps, {k: d["network_share_of_itl"] for k, d in inf.items()}


def workload_notes(perf) -> tuple[list[tuple[str, dict]], dict[str, str]]:
    """Inference and storage: what the workload puts on each fabric, as (text, evidence) reasons, and
    the designs that miss the latency budgets while another design meets them (key → why)."""
    notes: list[tuple[str, dict]] = []
    out: dict[str, str] = {}
    inf = {f.key: f.inference for f in perf.fabrics if f.inference is not None}
    if inf:
        d0 = next(iter(inf.values()))
        budgets = f"TTFT {d0['ttft_budget_s'] * 1e3:g} ms, ITL {d0['itl_budget_s'] * 1e3:g} ms"
        served = {f"{k}_served_tokens_per_s": f"{d['tokens_per_s']:,.0f}" for k, d in inf.items()}
        if not d0["needs_backend"]:
            notes.append(
                (
                    f"{d0['model']} puts nothing on the back-end fabric ({d0['reason']}): the fabrics differ only "
                    f"in cost; {d0['tokens_per_s']:,.0f} output tokens/s served within {budgets}",
                    {"gpus_per_instance": str(d0["gpus_per_instance"]), **served},
                )
            )
        else:
            parts = [
                f"{k}: {d['decode_network_s'] * 1e3:.2f} ms of network per decode step (ITL {d['itl_s'] * 1e3:.1f} ms), "
                f"KV transfer {d['kv_transfer_s'] * 1e3:.1f} ms per request, {d['tokens_per_s']:,.0f} tokens/s at "
                f"batch {d['batch']}"
                for k, d in inf.items()
            ]
            notes.append(
                (
                    f"{d0['model']} needs the back-end fabric ({d0['reason']}); within {budgets}: "
                    + "; ".join(parts),
                    {
                        **{
                            f"{k}_decode_network": f"{d['decode_network_s'] * 1e3:.3f} ms"
                            for k, d in inf.items()
                        },
                        **{f"{k}_kv_transfer": f"{d['kv_transfer_s'] * 1e3:.3f} ms" for k, d in inf.items()},
                        **served,
                    },
                )
            )
        if any(d["meets_budget"] for d in inf.values()):
            for k, d in inf.items():
                if not d["meets_budget"]:
                    out[k] = (
                        f"misses the latency budgets at every batch (ITL {d['itl_s'] * 1e3:.1f} ms, TTFT "
                        f"{d['ttft_s'] * 1e3:.0f} ms at batch {d['batch']}; {budgets})"
                    )
    sto = {f.key: f.storage for f in perf.fabrics if f.storage is not None}
    if sto:
        d0 = next(iter(sto.values()))
        times = ", ".join(f"{d['burst_s']:.1f} s on {k}" for k, d in sto.items())
        text = (
            f"a {d0['model']} checkpoint ({d0['checkpoint_bytes'] / 1e12:.2f} TB) every "
            f"{d0['checkpoint_period_s'] / 60:g} min over {d0['path']} takes {times} "
            f"(bottleneck: {d0['bottleneck']}); data loading {d0['data_loading_bps'] / 1e9:.2f} Gb/s at most"
        )
        if d0["on_backend"]:
            text += "; on the back-end the burst is victim traffic next to training for " + ", ".join(
                f"{d['backend_busy_share']:.2%} of the time on {k}" for k, d in sto.items()
            )
        else:
            text += "; none of it crosses the back-end fabric (reference designs give storage its own NICs)"
        notes.append(
            (
                text,
                {
                    **{f"{k}_checkpoint_write": f"{d['burst_s']:.2f} s" for k, d in sto.items()},
                    "storage_nodes": str(d0["storage_nodes"]),
                    "on_backend": str(d0["on_backend"]).lower(),
                },
            )
        )
    return notes, out


def base_compute_efficiency(workload) -> float | None:
    """The GEMM efficiency the step model uses for this job (the user's, else the fitted one)."""
    if not workload.is_training_step:
        return None
    if workload.spec.compute_efficiency is not None:
        return float(workload.spec.compute_efficiency)
    from aifabric.workload.llm import CALIBRATION

    return (
        CALIBRATION.fp8_gemm_efficiency if workload.spec.precision == "fp8" else CALIBRATION.gemm_efficiency
    )


def build_objective(
    design, workload, network, perf, risk, extra_capex_usd: dict[str, float], memo: dict | None = None
) -> Objective:
    """The objective on the stages' evidence; ``memo`` (step times keyed by design, NIC efficiency,
    compute efficiency and added communication time) is shared by objectives on the same evidence."""
    cap: dict[str, dict[str, float]] = {}
    for fd in design.fabrics:
        per = dict.fromkeys(CATEGORIES, 0.0)
        for line in fd.plan.to_dict()["bom"]:
            per[line["category"]] = per.get(line["category"], 0.0) + float(line["total_usd"])
        cap[fd.key] = per
    return Objective(
        designs=[fd.key for fd in design.fabrics],
        training=workload.is_training_step,
        capex_by_category=cap,
        extra_capex_usd=dict(extra_capex_usd),
        base_probability=risk.probability,
        base_compute_efficiency=base_compute_efficiency(workload),
        base_congestion_share=risk.congestion_share,
        gpus=design.gpus,
        server_usd_per_gpu=perf.server_usd_per_gpu,
        train_tokens=perf.train_tokens,
        layouts={f.key: (f.iteration.layout if f.iteration is not None else None) for f in perf.fabrics},
        workload=workload,
        networks={f.key: f for f in network.fabrics},
        risk_items={f.key: f.items for f in risk.fabrics},
        served_tokens_per_s=served_tokens(perf)[0],
        network_share=served_tokens(perf)[1],
        congestion_is_storage=getattr(risk, "congestion_is_storage", True),
        **({"_cache": memo} if memo is not None else {}),
    )


def uncertain_inputs(design, objective: Objective, expertise: str) -> list[UncertainInput]:
    """Every uncertain input of the objective with its base, plausible range and basis."""
    out = [inp for fd in design.fabrics for inp in _price_inputs(fd)]
    out += _risk_inputs(objective, expertise)
    out += _storage_share_input(objective)
    if objective.training:
        out += _training_inputs(objective)
    return out


def _price_inputs(fd) -> list[UncertainInput]:
    """One price multiplier per cost category of a design's bill of materials: the catalog's price
    ranges where it gives them, else ±50 % for an estimate and ±15 % for a sourced price."""
    lines = fd.plan.to_dict()["bom"]
    out = []
    for cat in CATEGORIES:
        mine = [ln for ln in lines if ln["category"] == cat]
        total = sum(float(ln["total_usd"]) for ln in mine)
        if total <= 0:
            continue
        low = (
            sum(ln["count"] * float(ln.get("unit_price_low_usd", ln["unit_price_usd"])) for ln in mine)
            / total
        )
        high = (
            sum(ln["count"] * float(ln.get("unit_price_high_usd", ln["unit_price_usd"])) for ln in mine)
            / total
        )
        est = any(ln.get("estimate") or ln.get("price_input") for ln in mine)
        top = max(mine, key=lambda ln: float(ln["total_usd"]))
        if high - low > 1e-9:
            ids = sorted({ln["catalog_id"] + (" input" if ln.get("price_input") else "") for ln in mine})
            basis = "the catalog's price ranges (" + ", ".join(ids) + ")"
        else:
            low, high = PRICE_RANGE[est]
            basis = (
                "catalog price is an estimate without a range: ±50 % (assumption)"
                if est
                else "catalog price has a public source: ±15 % for discounts and dates (assumption)"
            )
        out.append(
            UncertainInput(
                f"price.{cat}.{fd.key}",
                f"{fd.key} {cat} price (× catalog)",
                1.0,
                low,
                high,
                basis,
                fd.key,
                (0.05, 20.0),
                top["catalog_id"],
                float(top["unit_price_usd"]),
                (
                    float(top.get("unit_price_low_usd", top["unit_price_usd"])),
                    float(top.get("unit_price_high_usd", top["unit_price_usd"])),
                ),
            )
        )
    return out


def _risk_inputs(objective: Objective, expertise: str) -> list[UncertainInput]:
    """With risk items: the misconfiguration probability (the team's expertise sets its range) and,
    where congestion is not the storage share, the share of communication time under congestion."""
    if not any(objective.risk_items.get(k) for k in objective.designs):
        return []
    lo, hi = PROBABILITY_RANGE[expertise]
    out = [
        UncertainInput(
            "misconfiguration_probability",
            "misconfiguration probability per setting",
            MISCONFIG_PROBABILITY[expertise],
            lo,
            hi,
            f"assumption (no public source), range for expertise '{expertise}'",
            bracket=(0.0, 1.0),
        )
    ]
    if not objective.congestion_is_storage and any(
        i.comm_slowdown_quiet is not None for k in objective.designs for i in objective.risk_items[k]
    ):
        out.append(
            UncertainInput(
                "congestion_share",
                "share of communication time under congestion",
                objective.base_congestion_share,
                *CONGESTION_SHARE_RANGE,
                "assumption (no public source) around the risk testbed's default",
                bracket=(0.0, 1.0),
            )
        )
    return out


def _storage_share_input(objective: Objective) -> list[UncertainInput]:
    """The share of time storage traffic shares the fabric (the risk items of kind ``share``), unless
    the setting or the scenario fixed it."""
    storage = [i for k in objective.designs for i in objective.risk_items.get(k, ()) if i.kind == "share"]
    fixed = all(
        i.persistence_range is not None and i.persistence_range[0] == i.persistence_range[1] for i in storage
    )
    if not storage or fixed:
        return []
    lo, hi = storage[0].persistence_range or STORAGE_SHARE_RANGE
    return [
        UncertainInput(
            "storage_share",
            "share of time storage traffic shares the compute fabric",
            storage[0].persistence,
            lo,
            hi,
            storage[0].probability_basis,
            bracket=(0.0, 1.0),
        )
    ]


def _training_inputs(objective: Objective) -> list[UncertainInput]:
    """A training job's compute efficiency and each design's achieved NIC efficiency."""
    b = objective.base_compute_efficiency
    out = [
        UncertainInput(
            "compute_efficiency",
            "compute efficiency (sustained GEMM fraction of peak)",
            b,
            b * (1 - COMPUTE_EFFICIENCY_SPREAD),
            min(1.0, b * (1 + COMPUTE_EFFICIENCY_SPREAD)),
            "the step model's fitted GEMM efficiency ±15 % (validation residuals, assumption for the width)",
            bracket=(0.05, 1.0),
        )
    ]
    for k in objective.designs:
        out.append(
            UncertainInput(
                f"nic_efficiency.{k}",
                f"{k} achieved NIC efficiency (share of line rate)",
                objective.networks[k].nic_efficiency,
                *NIC_EFFICIENCY_RANGE,
                "public nccl-tests reach ~92–96 % of NIC line rate (base: NCCL's 0.94 or the calibration's)",
                k,
                (0.2, 1.0),
            )
        )
    return out


def break_even(obj: Objective, inp: UncertainInput, winner: str, feasible: list[str]) -> float | None:
    """The value of ``inp`` (all else at base) at which ``winner`` stops being the cheapest feasible
    design; None when it stays cheapest over the whole physically possible bracket."""
    lo, hi = inp.bracket
    grid = np.geomspace(lo, hi, 61) if inp.name.startswith("price.") else np.linspace(lo, hi, 61)

    def margin(v: float) -> float:
        x = {inp.name: float(v)}
        others = [obj.value(k, x) for k in feasible if k != winner]
        return (min(others) if others else float("inf")) - obj.value(winner, x)

    if len(feasible) < 2:
        return None
    base_sign = margin(inp.base) >= 0
    # the crossing nearest to the base value, searched outward from it
    pts = sorted(grid, key=lambda v: abs(v - inp.base))
    prev = inp.base
    for v in pts:
        if (margin(v) >= 0) != base_sign:
            a, b = (prev, v)
            for _ in range(40):
                m = (a + b) / 2
                if (margin(m) >= 0) == base_sign:
                    a = m
                else:
                    b = m
            return float((a + b) / 2)
        prev = v
    return None


def tornado(obj: Objective, inputs: list[UncertainInput], winner: str, runner_up: str | None) -> list[dict]:
    """Per input: the runner-up's cost relative to the winner's at the range's low and high ends."""
    rows = []
    for inp in inputs:
        row = {"input": inp.name, "label": inp.label}
        for end, v in (("at_low", inp.low), ("at_high", inp.high)):
            x = {inp.name: v}
            row[end] = obj.value(runner_up, x) / obj.value(winner, x) - 1 if runner_up else None
        rows.append(row)
    return rows


def monte_carlo(
    obj: Objective, inputs: list[UncertainInput], feasible: list[str], seed: int, n: int = MC_SAMPLES
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Sample every input uniformly in its range (independently, seeded); returns the probability
    that each feasible design is cheapest and the sampled objective values per design."""
    rng = np.random.default_rng(seed)
    wins = dict.fromkeys(feasible, 0)
    values: dict[str, list[float]] = {k: [] for k in feasible}
    for _ in range(n):
        x = {i.name: float(rng.uniform(i.low, i.high)) for i in inputs}
        vals = {k: obj.value(k, x) for k in feasible}
        for k, v in vals.items():
            values[k].append(v)
        best = min(vals.values())
        tied = [k for k, v in vals.items() if v <= best * (1 + 1e-12)]
        for k in tied:  # a tie is shared, not won by whichever design is listed first
            wins[k] += 1 / len(tied)
    return {k: w / n for k, w in wins.items()}, values


__all__ = [
    "Objective",
    "UncertainInput",
    "break_even",
    "build_objective",
    "monte_carlo",
    "tornado",
    "served_tokens",
    "uncertain_inputs",
    "workload_notes",
]
