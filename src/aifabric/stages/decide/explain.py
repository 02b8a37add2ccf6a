"""Explanations for the *decide* stage: the brochure claims of the product brief tested on this
cluster's numbers (:func:`evaluate_claims`) and the brief's seven decision rules, each with what it
would pick and whether the numbers agree (:func:`rule_explanations`). Neither decides anything."""

from __future__ import annotations

from aifabric.stages.decide.decision import Reason
from aifabric.stages.risk.assess import MISCONFIG_PROBABILITY

JITTER_P99_TOLERANCE = 0.25  # ASSUMPTION: tail-latency constraint under high jitter sensitivity
GROWTH = {"none": 1, "2x": 2, "10x": 10}
WHAT_DECIDES_THEN = "team skills, supply lead time, vendor strategy and the growth path"


def _usd(x: float) -> str:
    return f"{x:,.0f} USD"


# The metric a latency claim is judged on, by workload: a training or inference job's small messages go
# through NCCL (its per-step latency floor included); storage reads and a trading path use RDMA verbs
# directly (perftest-style one-way latency through the planned switch hops).
LATENCY_METRIC = {"training": "nccl", "inference": "nccl", "storage": "verbs", "trading": "verbs"}


def evaluate_claims(
    evidence: dict,
    roce_key: str,
    jitter: dict | None = None,
    prices_estimated: bool | list[str] = True,
    workload: str = "training",
) -> list[dict]:
    """The brochure claims of mission.md, tested on this cluster's numbers and on the metric the
    workload sees. A price claim is "untestable without quotes" (holds: null) while prices behind it
    are estimates (``prices_estimated``: True, or the estimated catalog items)."""
    ib, roce = evidence.get("infiniband"), evidence.get(roce_key)
    out = []
    if ib and roce:
        r = roce.capex_usd / ib.capex_usd
        which = (
            "prices of " + ", ".join(prices_estimated) + " are catalog estimates"
            if isinstance(prices_estimated, list | tuple)
            else "switch prices are catalog estimates"
        )
        quote = f"untestable without quotes: {which}; " if prices_estimated else ""
        out.append(
            {
                "claim": "RoCE hardware costs 30–50 % of InfiniBand",
                "holds": None if prices_estimated else 0.3 <= r <= 0.5,
                "evidence": f"{quote}network capex ratio RoCE/IB = {r:.2f} ({roce.capex_usd:,.0f} vs "
                f"{ib.capex_usd:,.0f} USD)",
            }
        )
        out.append(
            {
                "claim": "RoCE is about 30 % cheaper than InfiniBand",
                "holds": None if prices_estimated else 0.6 <= r <= 0.8,
                "evidence": f"{quote}RoCE is {1 - r:.0%} cheaper on this cluster (held if 20–40 %)",
            }
        )
        latency = _latency_claim(ib, roce, workload)
        if latency:
            out.append(latency)
        if ib.iteration_time_s and roce.iteration_time_s:
            d = roce.iteration_time_s / ib.iteration_time_s - 1
            out.append(
                {
                    "claim": "RoCE training performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"iteration time IB {ib.iteration_time_s:.3f} s vs RoCE {roce.iteration_time_s:.3f} s "
                    f"({d:+.1%}), well-tuned RoCE with ECMP",
                }
            )
        elif ib.busbw_gbps and roce.busbw_gbps:
            d = 1 - roce.busbw_gbps / ib.busbw_gbps
            out.append(
                {
                    "claim": "RoCE performance is within 10 % of InfiniBand",
                    "holds": d <= 0.10,
                    "evidence": f"8 GiB all-reduce busbw IB {ib.busbw_gbps / 8:.0f} vs RoCE {roce.busbw_gbps / 8:.0f} GB/s",
                }
            )
    claim = "Small network jitter from a flow-control bug costs ~20 % cluster efficiency"
    if jitter and jitter.get("small"):
        sm = jitter["small"]
        loss = sm["slowdown"]
        need = jitter["duty_for_20pct"]
        need_txt = (
            f"a 20 % loss needs spurious pauses {need:.0%} of the time"
            if need is not None
            else f"even {jitter['sweep'][-1]['duty']:.0%} of the time costs "
            f"{jitter['sweep'][-1]['slowdown']:.1%}"
        )
        out.append(
            {
                "claim": claim,
                "holds": bool(0.10 <= loss <= 0.30),
                "evidence": f"one spine pausing its ports {sm['duty']:.0%} of the time slows a ring step by "
                f"{sm['comm_slowdown']:+.1%} on the packet testbed and the {jitter['slowdown_of']} "
                f"by {loss:+.1%} (held if 10-30 %); {need_txt}",
            }
        )
    else:
        out.append(
            {
                "claim": claim,
                "holds": None,
                "evidence": "not tested: the cluster has no inter-node RoCE fabric to jitter",
            }
        )
    return out


def _latency_claim(ib, roce, workload: str) -> dict | None:
    """'HPCC-era RoCE latency is within 10 % of InfiniBand' judged on what the workload sees: NCCL's
    small-message all-reduce time over every GPU (training, inference) or the perftest-style one-way
    latency through the planned switch hops (storage, trading); both shown, with the per-hop figures."""
    verbs = (ib.small_msg_latency_us, roce.small_msg_latency_us)
    nccl = (getattr(ib, "nccl_small_msg_us", None), getattr(roce, "nccl_small_msg_us", None))
    have_v, have_n = all(verbs), all(nccl)
    if not (have_v or have_n):
        return None
    use = LATENCY_METRIC.get(workload, "nccl")
    if use == "nccl" and not have_n:
        use = "verbs"
    if use == "verbs" and not have_v:
        use = "nccl"
    parts = []
    if have_n:
        g = nccl[1] / nccl[0] - 1
        parts.append(
            f"NCCL {ib.nccl_small_msg_bytes:,} B all-reduce over every GPU: IB {nccl[0]:.2f} us, RoCE "
            f"{nccl[1]:.2f} us ({g:+.0%}"
            + (", NCCL's own per-step latency, not the switch hops, sets it)" if abs(g) < 0.01 else ")")
        )
    if have_v:
        g = verbs[1] / verbs[0] - 1
        hops = getattr(ib, "switch_hops", None)
        parts.append(
            "perftest-style one-way latency through the planned "
            + (f"{hops} switch hop{'s' if hops != 1 else ''}" if hops is not None else "path")
            + f": IB {verbs[0]:.2f} us, RoCE {verbs[1]:.2f} us ({g:+.0%})"
        )
    if getattr(ib, "switch_hop_ns", None) and getattr(roce, "switch_hop_ns", None):
        parts.append(
            f"per switch hop IB {ib.switch_hop_ns:g} ns vs RoCE {roce.switch_hop_ns:g} ns (catalog, low confidence)"
        )
    a, b = nccl if use == "nccl" else verbs
    gap = b / a - 1
    what = (
        "NCCL small-message time (what a " + workload + " job's collectives see)"
        if use == "nccl"
        else "perftest-style latency (what " + workload + " traffic on RDMA verbs sees)"
    )
    return {
        "claim": "HPCC-era RoCE latency is within 10 % of InfiniBand",
        "holds": gap <= 0.10,
        "metric": use,
        "evidence": f"judged on {what}: {gap:+.0%}; " + "; ".join(parts),
    }


def rule_explanations(adv, design, evidence: dict, winner: str) -> list[dict]:
    """The product brief's decision rules, each with what it would pick and whether the numbers agree."""
    nodes = design.nodes
    ib = "infiniband"
    out = []

    def add(rule, says, applies, agrees, why):
        out.append(
            {
                "rule": rule,
                "rule_says": says,
                "applies": applies,
                "numbers_pick": winner,
                "agrees": agrees if applies else None,
                "why": why,
            }
        )

    few = nodes <= 4 and adv.workload in ("inference", "storage")
    lossy = [fd.key for fd in getattr(design, "fabrics", ()) if getattr(fd, "lossy", False)]
    hybrid = [fd.key for fd in getattr(design, "fabrics", ()) if getattr(fd, "family", "") == "hybrid"]
    add(
        "1",
        "one node needs no fabric; 2-4 nodes of inference or storage need only an ordinary network",
        not design.has_network or few,
        winner == "none" if not design.has_network else None,
        "one node: no scale-out fabric to buy"
        if not design.has_network
        else (
            (
                f"the plain-Ethernet option (RoCE without PFC) is priced and measured as {lossy[0]}; the "
                f"numbers pick {winner}"
                if lossy
                else "the numbers compare the lossless designs; price the plain-Ethernet option (RoCE "
                "without PFC, its slowdown measured by the packet engine) with --lossy-roce"
            )
            if few
            else "more than one node: a fabric is needed"
        ),
    )
    caps = {k: ev.capex_usd for k, ev in evidence.items()}
    add(
        "2",
        "a low budget picks RoCEv2 at 400G",
        adv.budget == "low",
        winner.startswith("roce"),
        (
            f"the numbers pick {winner}: network capex "
            + ", ".join(f"{k} {_usd(v)}" for k, v in caps.items())
            + "; cost per useful work, not the budget word, decides"
        ),
    )
    big = adv.gpus >= 1000 and adv.workload == "training"
    add(
        "3",
        "thousand-GPU training: 800G RoCE or InfiniBand",
        big,
        winner in (ib, "roce-800g"),
        f"the NIC rate follows the GPU ({design.nic_rate_gbps:g}G for {design.gpu.upper()}, rule 7); "
        f"the cheapest design per useful token is {winner}",
    )
    det = adv.workload == "trading" or adv.jitter_sensitivity == "high"
    add(
        "4",
        "determinism-critical (trading, high jitter sensitivity): InfiniBand",
        det,
        winner == ib,
        "tail latency is a constraint (each design's small-message round trips on the packet engine within "
        f"{getattr(adv, 'p99_budget', None) or JITTER_P99_TOLERANCE:.0%} of the best design's)"
        + _small_message_words(evidence)
        + "; among the designs that meet it, cost decides",
    )
    if adv.team_expertise == "none" and adv.growth == "none":
        agrees5 = winner == ib
    elif winner in evidence:
        agrees5 = evidence[winner].max_gpus >= adv.gpus * GROWTH[adv.growth]
    else:
        agrees5 = None
    add(
        "5",
        "no RDMA expertise with budget to spend: InfiniBand; growth beyond a fabric's reach rules it out",
        adv.team_expertise == "none" or adv.growth != "none",
        agrees5,
        f"expertise '{adv.team_expertise}' sets the misconfiguration probability "
        f"{MISCONFIG_PROBABILITY[adv.team_expertise]:.0%} the risk stage weighs; growth {adv.growth} adds each "
        "design's next expansion step to its cost",
    )
    add(
        "6",
        "InfiniBand for the training core plus RoCE for storage and front-end (hybrid)",
        winner == ib and adv.budget != "high" and adv.workload == "training",
        (winner == "hybrid" or winner in hybrid) if hybrid else None,
        (
            f"every design is priced whole, with its Ethernet front-end/storage network ({hybrid[0]} is the "
            f"InfiniBand one); the numbers pick {winner}"
            if hybrid
            else "the hybrid is priced only when asked (--storage-nodes N or --checkpoint-gbytes-per-s G adds "
            "the front-end/storage network to every design), so here it is not recommended on numbers"
        ),
    )
    nvl = float(design.nic_rate_evidence.get("nvlink_gbytes_per_s", "0 GB/s").split()[0])
    by_nvlink = 800.0 if nvl >= 900 else 400.0
    add(
        "7",
        f"400G or 800G from the GPU's NVLink generation ({by_nvlink:g}G for {design.gpu.upper()})",
        True,
        design.nic_rate_gbps == by_nvlink,
        design.nic_rate_basis,
    )
    return out


def _small_message_words(evidence: dict) -> str:
    """``": infiniband 5.2 us, roce-400g 23.7 us (64 B round trip p99.9)"`` where measured."""
    got = {
        k: ev.small_message["constraint"] for k, ev in evidence.items() if getattr(ev, "small_message", None)
    }
    if not got:
        return ""
    q = next(iter(got.values()))["quantile"]
    vals = ", ".join(
        f"{k} {c['round_trip_us']['rr_64B']:,.1f} us" for k, c in got.items() if c["round_trip_us"]["rr_64B"]
    )
    return f": {vals} (64 B round trip {q})"


__all__ = ["GROWTH", "JITTER_P99_TOLERANCE", "LATENCY_METRIC", "evaluate_claims", "rule_explanations"]


# The decision's reasons: each says what separates the designs, with its evidence.
def objective_reason(evidence, obj, w, r, winner: str, runner: str) -> Reason:
    unit = obj.unit
    ev_obj = {f"{k}_objective": f"{e.objective:.4g} {unit}" for k, e in evidence.items()}
    gap = r.objective / w.objective - 1
    text = (
        f"{winner} has the lowest risk-adjusted cost: {w.objective:.4g} vs {r.objective:.4g} {unit} "
        f"for {runner} ({gap:.1%} more)"
    )
    if obj.training:
        text = "risk-adjusted cost per million trained tokens decides: " + text
    return Reason(text, ev_obj, "objective")


def capex_reason(w, r) -> Reason:
    cheaper, dearer = (w, r) if w.capex_usd < r.capex_usd else (r, w)
    return Reason(
        f"{cheaper.fabric} network capex is {cheaper.capex_usd / dearer.capex_usd:.0%} of {dearer.fabric}'s "
        f"({_usd(dearer.capex_usd - cheaper.capex_usd)} less)",
        {
            f"{w.fabric}_capex": _usd(w.capex_usd),
            f"{r.fabric}_capex": _usd(r.capex_usd),
            "ratio": f"{cheaper.capex_usd / dearer.capex_usd:.3f}",
        },
        "2",
    )


def iteration_reason(w, r) -> Reason:
    d = r.iteration_time_s / w.iteration_time_s - 1
    return Reason(
        f"a training iteration takes {w.iteration_time_s:.3f} s on {w.fabric} and {r.iteration_time_s:.3f} s "
        f"on {r.fabric} ({d:+.1%})",
        {
            f"{w.fabric}_iteration": f"{w.iteration_time_s:.4f} s",
            f"{r.fabric}_iteration": f"{r.iteration_time_s:.4f} s",
            "difference": f"{d:+.2%}",
        },
        "3",
    )


def growth_reason(adv, ev, k: str, cost: float, reaches: bool, target: int) -> Reason:
    return Reason(
        f"{k} reaches {ev.max_gpus:,} GPUs in its tiers, {'enough' if reaches else 'not enough'} "
        f"for {adv.growth} growth to {target:,}: the next expansion step costs {_usd(cost)}"
        + ("" if reaches else " (the fabric is rebuilt)"),
        {
            "max_gpus": f"{ev.max_gpus:,}",
            "growth_target": f"{target:,}",
            "expansion_capex": _usd(cost),
        },
        "5",
    )


def verdict_reasons(sens, u, winner: str) -> list[Reason]:
    """The verdict (clear, or no material difference) with the break-evens that would flip it, and
    the prices no public source gives that the choice is conditional on; ``u``: the decision's
    Monte-Carlo certainty (``p_best``, ``samples``, ``gap_band``, ``clear``)."""
    flips = [s for s in sens if s["flips"]]
    pb = {f"p_best_{k}": f"{v:.2f}" for k, v in u.p_best.items()}
    if u.gap_band is not None:
        pb["gap_p10_p90"] = f"{u.gap_band[0]:+.1%} .. {u.gap_band[1]:+.1%}"
    if u.clear:
        text = (
            f"clear: {winner} is cheapest in {u.p_best[winner]:.0%} of {len(u.samples[winner])} Monte-Carlo "
            "samples over the uncertain inputs' ranges"
        )
    else:
        text = (
            f"no material difference: {winner} is cheapest in {u.p_best.get(winner, 0):.0%} of the Monte-Carlo "
            f"samples and the cost gap's P10-P90 band includes zero; then {WHAT_DECIDES_THEN} decide"
        )
    if flips:
        text += f"; {winner} wins unless " + " or ".join(_flip_words(s) for s in flips[:3])
    reasons = [Reason(text, pb, "verdict")]
    quoted = [x for x in sens if x.get("break_even_unit_price_usd") is not None and " input" in x["basis"]]
    if quoted:
        reasons.append(_quoted_prices_reason(quoted, winner))
    return reasons


def _flip_words(s: dict) -> str:
    side = "above" if s["break_even"] > s["base"] else "below"
    if s.get("break_even_unit_price_usd") is not None:
        return f"{s['item']} costs {side} {s['break_even_unit_price_usd']:,.0f} USD per unit"
    return f"{s['label']} {side} {s['break_even']:.3g}"


def _quoted_prices_reason(quoted: list[dict], winner: str) -> Reason:
    parts = []
    for x in quoted:
        side = "below" if x["break_even"] > x["base"] else "above"
        parts.append(
            f"{x['item']} costs {side} {x['break_even_unit_price_usd']:,.0f} USD per unit "
            f"(catalog input range {x['range'][0] * x['unit_price_usd']:,.0f}–"
            f"{x['range'][1] * x['unit_price_usd']:,.0f})"
        )
    return Reason(
        f"conditional on prices no public source gives: {winner} stays the choice while "
        + " and ".join(parts)
        + "; replace them with your quotes (--catalog FILE)",
        {x["item"]: f"break-even {x['break_even_unit_price_usd']:,.0f} USD" for x in quoted},
        "verdict",
    )
