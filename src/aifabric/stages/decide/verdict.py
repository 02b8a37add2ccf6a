"""The verdict and what it hinges on (part of *decide*, issue 25).

*decide* weighs the designs at the register's base values and samples its ranges (Monte-Carlo). This
module adds the categorical assumptions — each alternative of the deployment settings (storage
placement, tuning state) run through *risk* and *decide* again by the pipeline — and turns both into
one verdict:

* ``no material difference`` — the designs' risk-adjusted costs are within the models' error: the top
  design is cheapest in fewer than :data:`aifabric.stages.decide.choose.CLEAR_PROBABILITY` of the samples, or the
  cost gap's P10–P90 band includes zero;
* ``depends`` — otherwise, when some plausible alternative of a categorical assumption, or a value
  inside an input's range, changes the recommended design;
* ``clear`` — the recommendation holds across the register.

``hinges_on`` lists, for the last two, each assumption that moves the answer (``assumption``,
``value_now``, ``flips_at``, ``recommendation_then``); for ``no material difference`` with no such
assumption, the inputs whose break-even lies nearest their range (what would decide it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from aifabric.stages.decide.decision import Decision, Reason

WORDS = {
    "storage.placement": "storage traffic placement",
    "tuning": "tuning state of both fabrics",
    "media.host_link": "host-link media (auto: cheapest that reaches; optics: what both protocols have)",
}


@dataclass(frozen=True)
class Alternative:
    """The decision with one categorical assumption at another of its values."""

    assumption: str
    value_now: str
    value: str
    decision: Decision


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _categorical_rows(rec, alternatives) -> tuple[list[dict], list[dict]]:
    rows, hinges = [], []
    for a in alternatives:
        r2 = a.decision.recommendation
        flips = r2.design != rec.design
        p_then = a.decision.probability_best.get(r2.design)
        rows.append(
            {
                "input": a.assumption,
                "label": WORDS.get(a.assumption, a.assumption),
                "base": a.value_now,
                "break_even": a.value if flips else None,
                "range": [a.value_now, a.value],
                "flips": flips,
                "kind": "categorical",
                "recommendation_then": r2.fabric,
                "design_then": r2.design,
                "verdict_then": r2.verdict,
                "p_best_then": p_then,
                "verdict_changes": r2.verdict != rec.verdict,
                "basis": "the risk and decide stages run again with the alternative",
            }
        )
        if flips:
            hinges.append(
                {
                    "assumption": a.assumption,
                    "value_now": a.value_now,
                    "flips_at": a.value,
                    "recommendation_then": r2.fabric,
                    "design_then": r2.design,
                    "verdict_then": r2.verdict,
                }
            )
    return rows, hinges


def _range_hinges(sensitivity) -> list[dict]:
    return [
        {
            "assumption": s["input"],
            "value_now": s["base"],
            "flips_at": s["break_even"],
            "recommendation_then": s.get("recommendation_then"),
            "design_then": s.get("design_then"),
            "range": s["range"],
        }
        for s in sensitivity
        if s.get("kind", "range") == "range" and s["flips"]
    ]


def _nearest(sensitivity, n: int = 2) -> list[dict]:
    """No material difference and nothing flips inside its range: the inputs whose break-even is
    nearest their range (relative distance), which would decide it."""

    def dist(s) -> float:
        lo, hi = s["range"]
        be, width = s["break_even"], max(abs(hi - lo), 1e-9)
        return 0.0 if lo <= be <= hi else min(abs(be - lo), abs(be - hi)) / width

    near = sorted(
        (s for s in sensitivity if s.get("kind", "range") == "range" and s["break_even"] is not None),
        key=dist,
    )
    return [{**h, "outside_range": True} for h in _range_hinges([{**s, "flips": True} for s in near[:n]])]


def hinge(dec: Decision, alternatives: list[Alternative], same_media: str | None = None) -> Decision:
    """``dec`` with its verdict decided across the register and ``hinges_on`` filled (module docstring);
    ``same_media``: the host-link media every fabric got (no media alternative to run), shown as a row."""
    rec = dec.recommendation
    if rec.fabric == "none":  # nothing to buy: the reason stands alone
        summary = rec.summary or rec.reasons[0].text
        return replace(dec, recommendation=replace(rec, summary=summary))
    rows, hinges = _categorical_rows(rec, alternatives)
    hinges += _range_hinges(dec.sensitivity)
    nmd = rec.verdict == "no material difference"
    verdict = "no material difference" if nmd else ("depends" if hinges else "clear")
    if nmd and not hinges:
        hinges = _nearest(dec.sensitivity)
    p = dec.probability_best.get(rec.design, 0.0)
    if verdict == "clear":
        summary = (
            f"{rec.design}: clear — cheapest per useful work in {p:.0%} of samples, and no alternative of "
        )
        summary += "the register's categorical assumptions or value inside its ranges changes that"
    elif verdict == "depends":
        parts = [
            f"{WORDS.get(h['assumption'], h['assumption'])} at {_fmt(h['flips_at'])} → {h['design_then']}"
            for h in hinges[:3]
        ]
        summary = f"{rec.design} at the defaults; it depends on " + "; ".join(parts)
    else:
        parts = [f"{WORDS.get(h['assumption'], h['assumption'])} ({_fmt(h['flips_at'])})" for h in hinges[:3]]
        summary = (
            f"no material difference: {rec.design} is cheapest in {p:.0%} of samples, within the models' error"
            + ("; what would decide it: " + ", ".join(parts) if parts else "")
        )
    reasons = list(rec.reasons)
    ev = {"verdict": verdict, f"p_best_{rec.design}": f"{p:.2f}"}
    ev.update({h["assumption"]: _fmt(h["flips_at"]) for h in hinges})
    first = Reason(summary, ev, "verdict")
    new = replace(rec, verdict=verdict, hinges_on=hinges, summary=summary, reasons=[first, *reasons])
    if same_media is not None:
        rows.append(
            {
                "input": "media.host_link",
                "label": WORDS["media.host_link"],
                "base": f"auto ({same_media} on every fabric)",
                "break_even": None,
                "range": [f"auto ({same_media} on every fabric)"],
                "flips": False,
                "kind": "categorical",
                "recommendation_then": rec.fabric,
                "design_then": rec.design,
                "verdict_then": verdict,
                "p_best_then": p,
                "verdict_changes": False,
                "basis": "every fabric's host links got the same media from the one table: no alternative changes "
                "the comparison (--host-link-media to impose one)",
            }
        )
    return replace(dec, recommendation=new, sensitivity=(*rows, *dec.sensitivity))


__all__ = ["Alternative", "hinge"]
