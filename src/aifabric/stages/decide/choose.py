"""Stage 6 — *decide*: the recommendation decided by one objective, with the sensitivity that would
flip it.

**The objective** (:mod:`aifabric.stages.decide.objective`): risk-adjusted cost per useful unit of work for
each compared design — per trained token for training; for inference, storage and trading (whose
traffic is not modelled yet) network capex per unit of useful network throughput. The cheapest
*feasible* design is recommended.

**The user's priorities are constraints and inputs, not rules that override the result:**

* expertise shifts the misconfiguration probability the risk stage weighs (and its range);
* growth adds the next expansion step to each design's capex: the capex of the grown fabric minus
  today's when the design reaches the target in its tiers, the whole grown fabric when it cannot
  (nothing is reused);
* a network budget ceiling (``advisor.network_budget_usd``) makes designs above it infeasible;
* jitter sensitivity is a constraint on tail latency: with ``high`` (and for ``trading``) each
  design's small messages (64 B / 512 B / 4 KiB request/response round trips and a 64 B fan-out)
  run on the packet engine over 16 seeds on that design's risk testbed under its job's ring step,
  and the storage incast only where storage is on the compute fabric
  (:mod:`aifabric.stages.decide.latency`); a design whose p99 (p99.9 for trading) is more than the user's
  ``--p99-budget`` (default :data:`JITTER_P99_TOLERANCE`, an ASSUMPTION with no public source) above
  the best design's at some message kind is infeasible.

**Sensitivity**: every uncertain input's break-even value (where the recommendation flips), a tornado
of the runner-up's relative cost across each input's range, and a Monte-Carlo over all ranges giving
the probability that each design is cheapest. **"No material difference" is an answer**: when the
top design is cheapest in fewer than :data:`CLEAR_PROBABILITY` of the samples, or the base gap lies
inside the P10–P90 spread of the top design's cost, the verdict says so and names what then decides.

**The product brief's seven rules are kept as explanations** (:func:`rule_explanations`): each says
what it would pick and whether this cluster's numbers agree, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from aifabric.errors import InputError
from aifabric.stages.decide.decision import (  # noqa: F401  (re-exported: the stage's public names)
    Decision,
    FabricEvidence,
    Reason,
    Recommendation,
    design_label,
    fabric_evidence,
)
from aifabric.stages.decide.explain import (  # noqa: F401  (WHAT_DECIDES_THEN re-exported)
    GROWTH,
    JITTER_P99_TOLERANCE,
    WHAT_DECIDES_THEN,
    _usd,
    capex_reason,
    evaluate_claims,
    growth_reason,
    iteration_reason,
    objective_reason,
    rule_explanations,
    verdict_reasons,
)
from aifabric.stages.decide.objective import (
    break_even,
    build_objective,
    monte_carlo,
    tornado,
    uncertain_inputs,
    workload_notes,
)
from aifabric.stages.deployment import DEPLOYMENT_NAMES
from aifabric.stages.design.fabrics import DesignInput
from aifabric.stages.design.fabrics import design as design_stage
from aifabric.stages.design.fabrics import roce_key as _roce_key
from aifabric.stages.risk.assess import MISCONFIG_PROBABILITY

FABRICS = ("none", "roce-400g", "roce-800g", "infiniband", "hybrid")
VERDICTS = ("clear", "no material difference", "depends")
CLEAR_PROBABILITY = (
    0.7  # issue 15: below this share of Monte-Carlo wins the verdict is "no material difference"
)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _families(design, evidence: dict) -> tuple[dict, dict]:
    """(design key -> family, family -> the first design of it): ``recommendation.fabric`` is the
    family (infiniband | roce-400g | roce-800g | hybrid) while N designs are compared (issue 14);
    the claims compare one design per family."""
    fam = {fd.key: getattr(fd, "family", "") or fd.key for fd in design.fabrics}
    first: dict = {}
    for fd in design.fabrics:
        f = "infiniband" if fam[fd.key] == "hybrid" else fam[fd.key]
        first.setdefault(f, evidence[fd.key])
    return fam, first


def rate_reason(design) -> Reason:
    """Rule 7 as a reason: the design stage's NIC-rate choice and its evidence."""
    return Reason(design.nic_rate_basis, dict(design.nic_rate_evidence), "7")


def _risk_reason(adv, ev: FabricEvidence) -> Reason | None:
    if not ev.risk:
        return None
    p = MISCONFIG_PROBABILITY[adv.team_expertise]
    parts = {k: _pct(v) for k, v in ev.risk.items()}
    parts["misconfiguration_probability"] = f"{p:.0%} per setting (assumption, no public source)"
    words = {"none": "no", "some": "some", "expert": "expert"}[adv.team_expertise]
    return Reason(
        f"with {words} RDMA tuning expertise the expected goodput loss on {ev.fabric} from the failures and "
        f"mistakes the models reproduce is {_pct(ev.expected_loss)}",
        parts,
        "5",
    )


def _expansion(adv, design, catalog, options) -> dict[str, tuple[float, bool, int]]:
    """Per design: (capex of the next expansion step, reaches the target in its tiers, target GPUs)."""
    g = GROWTH[adv.growth]
    out = {fd.key: (0.0, True, adv.gpus) for fd in design.fabrics}
    if g == 1 or not design.has_network:
        return out
    target = adv.gpus * g
    for fd, opt in zip(design.fabrics, options, strict=True):
        reaches = fd.max_gpus >= target
        try:
            grown = design_stage(DesignInput(target, design.gpu, (opt,), catalog)).fabrics[0].capex_usd
        except InputError:
            grown = fd.capex_usd * g  # no catalog switch reaches it: linear in GPUs (assumption)
        out[fd.key] = ((grown - fd.capex_usd) if reaches else grown, reaches, target)
    return out


def _tail_latency(
    adv, evidence: dict[str, FabricEvidence], risk, design=None, catalog=None, storage_on_fabric: bool = False
) -> list[Reason]:
    """The tail-latency constraint on small messages (:mod:`aifabric.stages.decide.latency`): each design's
    64 B / 512 B / 4 KiB request/response round trips and 64 B fan-out on its risk testbed, under its
    job's ring step (and the storage incast for the congestion share only with ``storage_on_fabric``),
    over 16 seeds; a design more than the budget above the best design at some message kind, at p99.9
    for trading and p99 otherwise, is infeasible. The flow model's rail-permutation p99 FCT is the
    fallback where a design has no testbed."""
    from aifabric.stages.decide.latency import design_tails, idle_evidence, judge

    budget = getattr(adv, "p99_budget", None)
    basis = "the user's --p99-budget" if budget is not None else "an assumption, no public source"
    budget = JITTER_P99_TOLERANCE if budget is None else float(budget)
    share = risk.congestion_share if risk is not None else 0.25
    tails = design_tails(evidence, risk, design, catalog, storage_on_fabric, share, adv.workload)
    q = "p99.9" if adv.workload == "trading" else "p99"
    what = f"small-message round trip {q} on the packet engine"
    if len(tails) < len(evidence):  # no packet testbed: the flow model's permutation tail
        tails = {
            k: {"fct": ev.permutation_fct_p99_us} for k, ev in evidence.items() if ev.permutation_fct_p99_us
        }
        what = "rail-permutation p99 FCT (flow model)"
    if not tails:
        return []
    kinds = list(next(iter(tails.values())))
    best = {x: min(t[x] for t in tails.values()) for x in kinds}
    ruled = (
        judge(tails, budget)
        if "fct" not in kinds
        else {
            k: ("fct", t["fct"], best["fct"])
            for k, t in tails.items()
            if t["fct"] > best["fct"] * (1 + budget)
        }
    )
    storage = "storage incast on the fabric" if storage_on_fabric else "storage off the compute fabric"
    out = []
    for k, (kind, v, b) in ruled.items():
        ev = evidence[k]
        ev.feasible = False
        ev.infeasible_because = (
            f"{what} ({kind}) {v:,.2f} us is {v / b - 1:+.0%} above the best design's {b:,.2f} us "
            f"(budget {budget:.0%}, {basis}; {storage})"
        )
        out.append(
            Reason(
                f"{k} is out: {ev.infeasible_because}",
                {
                    f"{q}_{kind}": f"{v:,.2f} us",
                    "best": f"{b:,.2f} us",
                    "p99_budget": f"{budget:.0%}",
                    **idle_evidence(ev.small_message),
                },
                "4",
            )
        )
    if not out:
        out.append(
            Reason(
                f"every design's {what} is within {budget:.0%} of the best at every message kind "
                f"({storage}): tail latency rules none out, cost decides",
                {f"{k}_{x}": f"{v:,.2f} us" for k, t in tails.items() for x, v in t.items()},
                "4",
            )
        )
    return out


def _constraints(
    adv, evidence: dict[str, FabricEvidence], risk=None, design=None, catalog=None, storage_on_fabric=False
) -> list[Reason]:
    """Mark designs that break the user's constraints infeasible; the reasons say which and why."""
    out = []
    budget = getattr(adv, "network_budget_usd", None)
    if budget is not None:
        for ev in evidence.values():
            if ev.capex_usd > budget:
                ev.feasible = False
                ev.infeasible_because = (
                    f"network capex {_usd(ev.capex_usd)} above the budget of {_usd(budget)}"
                )
                out.append(
                    Reason(
                        f"{ev.fabric} is out: {ev.infeasible_because}",
                        {"capex": _usd(ev.capex_usd), "budget": _usd(budget)},
                        "2",
                    )
                )
    if adv.jitter_sensitivity == "high" or adv.workload == "trading":
        out.extend(_tail_latency(adv, evidence, risk, design, catalog, storage_on_fabric))
    return out


def _label(evidence: dict[str, FabricEvidence], key: str) -> str:
    return evidence[key].design or key


def _no_network(adv, design, evidence) -> Decision:
    r = Reason(
        f"All {adv.gpus} GPUs fit one {design.gpus_per_node}-GPU node: collectives stay on NVLink, no "
        "scale-out fabric is needed (network capex 0)",
        {"gpus": str(adv.gpus), "gpus_per_node": str(design.gpus_per_node)},
        "1",
    )
    rec = Recommendation("none", None, [r], "nvlink-only", "clear", "no scale-out network to buy")
    claims = evaluate_claims({}, "", None)
    return Decision(
        rec,
        tuple(claims),
        evidence,
        probability_best={"nvlink-only": 1.0},
        rules=tuple(rule_explanations(adv, design, evidence, "none")),
    )


FRONT_END_NOTE = (
    "front end: model weights, prompts, data and checkpoints travel over the servers' own front-end / storage "
    "NICs and network (DGX H100/H200/B200 carry 2 dual-port storage / in-band cards beside the compute NICs, "
    "prices-and-hardware §5a); size that network for the storage bandwidth, not a compute fabric"
)


def _no_backend(perf, adv) -> str | None:
    """Why this job needs no back-end (compute) fabric, or None: an inference job whose instances fit
    one NVLink domain (nothing crosses nodes); a storage workload kept off the compute fabric."""
    inf = [f.inference for f in perf.fabrics if f.inference is not None]
    if inf and not any(d["needs_backend"] for d in inf):
        d = inf[0]
        return (
            f"every {d['gpus_per_instance']}-GPU instance of {d['model']} fits one NVLink domain "
            f"({d['reason']}): no traffic crosses nodes"
        )
    sto = [f.storage for f in perf.fabrics if f.storage is not None]
    if adv.workload == "storage" and sto and not any(d.get("on_backend") for d in sto):
        return "storage traffic runs on its own network (storage off the compute fabric)"
    return None


def _no_fabric(adv, design, evidence, why: str) -> Decision:
    r = Reason(
        f"no back-end fabric needed: {why}; {FRONT_END_NOTE}",
        {"gpus": str(adv.gpus), "workload": adv.workload},
        "1",
    )
    rec = Recommendation(
        "none",
        None,
        [r],
        "no-backend-fabric",
        "clear",
        "no back-end fabric to buy",
        summary=f"no back-end fabric needed: {why}",
    )
    return Decision(
        rec,
        tuple(evaluate_claims({}, "", None)),
        evidence,
        probability_best={"no-backend-fabric": 1.0},
        rules=tuple(rule_explanations(adv, design, evidence, "none")),
    )


def _sensitivity(obj, inputs, winner: str, feasible: list[str], family: dict, evidence: dict) -> list[dict]:
    """Each uncertain input's break-even (where ``winner`` stops being cheapest) and who wins past it."""
    sens: list[dict] = []
    for inp in inputs:
        be = break_even(obj, inp, winner, feasible)
        then = None
        if be is not None:  # who wins just past the break-even, away from the base value
            past = be + (be - inp.base) * 0.02 if be != inp.base else be * 1.02
            then = obj.best({inp.name: float(np.clip(past, *inp.bracket))}, feasible)
        sens.append(
            {
                "input": inp.name,
                "label": inp.label,
                "base": inp.base,
                "break_even": be,
                "range": [inp.low, inp.high],
                "flips": be is not None and inp.low <= be <= inp.high,
                "basis": inp.basis,
                "design": inp.design,
                "kind": "range",
                "recommendation_then": family.get(then) if then else None,
                "design_then": _label(evidence, then) if then else None,
            }
        )
        if inp.unit_usd is not None:
            sens[-1].update(
                item=inp.item,
                unit_price_usd=inp.unit_usd,
                item_price_range_usd=list(inp.item_range_usd) if inp.item_range_usd else None,
                break_even_unit_price_usd=None if be is None else be * inp.unit_usd,
            )
    return sens


def decide(
    adv,
    design,
    workload,
    network,
    perf,
    risk,
    gpu,
    catalog,
    options,
    seed: int = 1,
    overrides=None,
    memo=None,
    sensitivity: bool = True,
) -> Decision:
    """The recommendation for the advisor's questions (``adv``) from the stages' evidence;
    ``overrides``: the scenario's ``assumptions:`` values for the objective's inputs (held fixed);
    ``memo``: step times already computed on this same design/workload/network/performance evidence
    (:class:`aifabric.stages.pipeline.Performance`), filled in place; ``sensitivity=False`` leaves out
    the break-evens and the tornado (a categorical alternative's decision needs only its answer)."""
    evidence = {
        fd.key: fabric_evidence(fd, network.fabric(fd.key), perf.fabric(fd.key), risk.fabric(fd.key))
        for fd in design.fabrics
    }
    if not design.has_network:
        return _no_network(adv, design, evidence)
    why = _no_backend(perf, adv)
    if why is not None:
        return _no_fabric(adv, design, evidence, why)
    expansion = _expansion(adv, design, catalog, options)
    for k, (cost, _reaches, _t) in expansion.items():
        evidence[k].expansion_capex_usd = cost
    obj = build_objective(
        design, workload, network, perf, risk, {k: v[0] for k, v in expansion.items()}, memo
    )
    fixed = {k: float(v) for k, v in (overrides or {}).items() if k not in DEPLOYMENT_NAMES}
    obj.base_x.update(fixed)
    for k, ev in evidence.items():
        ev.objective = obj.value(k)
    reasons, constraint_reasons, feasible = _feasible(adv, design, perf, risk, catalog, evidence)
    winner = obj.best(feasible=feasible)
    ranked = sorted(evidence, key=lambda k: (k not in feasible, evidence[k].objective))
    runner = next((k for k in ranked if k != winner), None)
    inputs = [
        replace(i, base=fixed[i.name], low=fixed[i.name], high=fixed[i.name], basis="set in the scenario")
        if i.name in fixed
        else i
        for i in uncertain_inputs(design, obj, adv.team_expertise)
    ]
    family = _families(design, evidence)[0]
    sens = _sensitivity(obj, inputs, winner, feasible, family, evidence) if sensitivity else []
    torn = tornado(obj, inputs, winner, runner) if sensitivity else []
    u = _uncertainty(obj, inputs, feasible, seed, winner, runner)
    reasons += _comparison_reasons(adv, evidence, obj, expansion, winner, runner)
    reasons += constraint_reasons
    reasons += verdict_reasons(sens, u, winner)
    rec = Recommendation(
        family[winner],
        evidence[winner].nic_rate_gbps,
        reasons,
        _label(evidence, winner),
        VERDICTS[0] if u.clear else VERDICTS[1],
        f"risk-adjusted {obj.unit}",
    )
    first = _families(design, evidence)[1]
    claims = evaluate_claims(
        first, _roce_key(design.nic_rate_gbps), risk.jitter, _prices_estimated(design), adv.workload
    )
    return Decision(
        rec,
        tuple(claims),
        evidence,
        tuple(sens),
        tuple(torn),
        {_label(evidence, k): v for k, v in u.p_best.items()},
        tuple(
            rule_explanations(
                adv, design, evidence, "infiniband" if family[winner] == "hybrid" else family[winner]
            )
        ),
        u.spread,
    )


def _feasible(adv, design, perf, risk, catalog, evidence) -> tuple[list, list, list[str]]:
    """Which designs stay in the running: (the opening reasons and the workload's notes, the
    constraints' reasons, the feasible keys — every key, with a reason, when none meets them all).
    Marks the designs a workload budget rules out in ``evidence``."""
    reasons: list[Reason] = [
        Reason(
            f"{design.nodes} nodes need an inter-node fabric for {adv.workload}",
            {"nodes": str(design.nodes), "gpus": str(adv.gpus)},
            "1",
        ),
        rate_reason(design),
    ]
    # the tail check reads the one storage setting the risk stage used (aifabric.stages.deployment)
    on_fabric = bool(getattr(risk, "storage_on_fabric", False))
    constraint_reasons = _constraints(adv, evidence, risk, design, catalog, on_fabric)
    notes, out_of_budget = workload_notes(perf)  # inference / storage: what goes on each fabric
    reasons += [Reason(t, e, "workload") for t, e in notes]
    for k, why in out_of_budget.items():
        evidence[k].feasible, evidence[k].infeasible_because = False, why
        constraint_reasons.append(Reason(f"{k} is out: {why}", {}, "workload"))
    feasible = [k for k, ev in evidence.items() if ev.feasible]
    if not feasible:
        constraint_reasons.append(
            Reason(
                "no design meets every constraint; all are compared on cost",
                {"designs": ", ".join(evidence)},
                "",
            )
        )
        feasible = list(evidence)
    return reasons, constraint_reasons, feasible


@dataclass(frozen=True)
class _Uncertainty:
    """How sure the choice is over the uncertain inputs' ranges (Monte Carlo)."""

    p_best: dict
    samples: dict
    spread: dict
    gap_band: tuple[float, float] | None
    clear: bool


def _uncertainty(obj, inputs, feasible, seed: int, winner: str, runner: str | None) -> _Uncertainty:
    """Each design's chance of being cheapest, its objective's P10/P50/P90, the runner-up's cost gap's
    P10-P90 band, and whether the choice is clear (chance ≥ :data:`CLEAR_PROBABILITY`, gap band
    above zero)."""
    p_best, samples = monte_carlo(obj, inputs, feasible, seed)
    spread = {
        k: {
            "p10": float(np.percentile(v, 10)),
            "p50": float(np.percentile(v, 50)),
            "p90": float(np.percentile(v, 90)),
        }
        for k, v in samples.items()
    }
    gap_band = None
    if runner in samples:
        gaps = np.array(samples[runner]) / np.array(samples[winner]) - 1
        gap_band = (float(np.percentile(gaps, 10)), float(np.percentile(gaps, 90)))
    clear = p_best.get(winner, 0.0) >= CLEAR_PROBABILITY and (gap_band is None or gap_band[0] > 0)
    return _Uncertainty(p_best, samples, spread, gap_band, clear)


def _comparison_reasons(adv, evidence, obj, expansion, winner: str, runner: str | None) -> list[Reason]:
    """What separates the winner from the runner-up: the objective, the capex, the iteration time,
    each design's risk and, with growth asked, each design's next expansion step."""
    reasons: list[Reason] = []
    w, r = evidence[winner], evidence.get(runner) if runner else None
    if r is not None:
        reasons.append(objective_reason(evidence, obj, w, r, winner, runner))
    ratio = (r.capex_usd / w.capex_usd) if r else 1.0
    if r and abs(ratio - 1) > 0.01:
        reasons.append(capex_reason(w, r))
    if r and w.iteration_time_s and r.iteration_time_s:
        reasons.append(iteration_reason(w, r))
    for ev in evidence.values():
        rk = _risk_reason(adv, ev)
        if rk:
            reasons.append(rk)
    if adv.growth != "none":
        reasons += [growth_reason(adv, evidence[k], k, *e) for k, e in expansion.items()]
    return reasons


def _prices_estimated(design) -> list[str]:
    """The catalog items of every design's bill of materials priced by estimate or by input."""
    return sorted(
        {
            line["catalog_id"]
            for fd in design.fabrics
            for line in fd.plan.to_dict()["bom"]
            if line.get("estimate") or line.get("price_input")
        }
    )


__all__ = [
    "FABRICS",
    "VERDICTS",
    "Decision",
    "FabricEvidence",
    "Reason",
    "Recommendation",
    "decide",
    "design_label",
    "evaluate_claims",
    "rule_explanations",
]
