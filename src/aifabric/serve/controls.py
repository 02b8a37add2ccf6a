"""The page's what-if controls, generated from a result: the job and the advisor's questions, and
every entry of the assumption register a scenario's ``assumptions:`` section may set — with its
range or alternatives, its source and, from the sensitivity rows, its break-even (where the
recommendation flips) and what wins past it.

A control is a JSON object: ``name`` (``advisor.KEY`` or ``assumptions.NAME``), ``group`` (job |
questions | assumptions), ``label``, ``kind`` (number | select | text), ``value``, ``options``,
``unit``, ``min``; register controls add ``base``, ``range``, ``break_even``, ``flips``,
``design_then``, ``source``, ``kind_of`` (price | physics | deployment | probability); price
controls add ``item``, ``unit_price_usd``, ``item_price_range_usd`` and ``break_even_unit_price_usd``
(a price is a multiplier of the catalog's; the page also shows it in USD per unit of the item).
"""

from __future__ import annotations

from aifabric.errors import InputError

_CHOICES = {
    "gpu": ("h100", "h200", "b200", "h800", "b300", "gb200-nvl72", "gb300-nvl72"),
    "workload": ("training", "inference", "storage", "trading"),
    "host_link_media": ("auto", "dac", "acc", "aec", "aoc", "optics"),
    "team_expertise": ("none", "some", "expert"),
    "jitter_sensitivity": ("low", "medium", "high"),
    "budget": ("low", "medium", "high"),
    "growth": ("none", "2x", "10x"),
}
_LABELS = {
    "gpus": ("GPUs", "GPUs"),
    "gpu": ("GPU system", None),
    "workload": ("workload", None),
    "model": ("model (empty: the workload's default)", None),
    "host_link_media": ("host-link media", None),
    "team_expertise": ("team RDMA tuning expertise", None),
    "jitter_sensitivity": ("jitter sensitivity", None),
    "budget": ("budget", None),
    "growth": ("expected growth", None),
    "network_budget_usd": ("network capex ceiling (empty: none)", "USD"),
}


def _advisor_controls(adv) -> list[dict]:
    from aifabric.serve.session import JOB_FIELDS, QUESTION_FIELDS
    from aifabric.workload.llm.models import MODELS

    out = []
    for group, names in (("job", JOB_FIELDS), ("questions", QUESTION_FIELDS)):
        for k in names:
            label, unit = _LABELS[k]
            c = {
                "name": f"advisor.{k}",
                "group": group,
                "label": label,
                "unit": unit,
                "value": getattr(adv, k),
            }
            if k in _CHOICES:
                c.update(kind="select", options=list(_CHOICES[k]))
            elif k == "model":
                c.update(kind="text", options=sorted(MODELS))
            else:
                c.update(kind="number", min=1 if k == "gpus" else 0)
            out.append(c)
    return out


def _overridable(a: dict) -> bool:
    """Whether a scenario's ``assumptions:`` section may set this register entry."""
    from aifabric.stages.deployment import check_overrides

    try:
        check_overrides({a["name"]: a["value"]})
    except InputError:
        return False
    return True


def _register_control(a: dict, row: dict | None, value, ranges: dict) -> dict:
    c = {
        "name": f"assumptions.{a['name']}",
        "group": "assumptions",
        "label": (row or {}).get("label") or a["name"],
        "unit": a.get("unit"),
        "value": value,
        "base": a["value"],
        "source": a.get("source", ""),
        "kind_of": a.get("kind"),
        "decides": bool(a.get("decides")),
        "applies_to": a.get("applies_to"),
    }
    if a.get("alternatives"):
        c.update(kind="select", options=list(a["alternatives"]))
    else:
        c.update(kind="number", range=ranges.get(a["name"]) or a.get("range"))
    if row is not None and row.get("kind", "range") == "range":
        c.update(break_even=row.get("break_even"), flips=row.get("flips"), design_then=row.get("design_then"))
        for k in ("item", "unit_price_usd", "item_price_range_usd", "break_even_unit_price_usd"):
            if row.get(k) is not None:
                c[k] = row[k]
    elif row is not None:  # categorical: the decision at each alternative
        c.update(
            flips=row.get("flips"), design_then=row.get("design_then"), verdict_then=row.get("verdict_then")
        )
    return c


def controls(result: dict, adv, overrides: dict, ranges: dict | None = None) -> list[dict]:
    """Every control for a what-if's result (module docstring); ``ranges``: the plausible range of
    each input as a result without its override had it (an override collapses its own range)."""
    rows = {s["input"]: s for s in result.get("sensitivity") or []}
    out = _advisor_controls(adv)
    for a in result.get("assumptions") or []:
        if not _overridable(a):
            continue
        value = overrides.get(a["name"], a["value"])
        out.append(_register_control(a, rows.get(a["name"]), value, ranges or {}))
    return out


def fixed_entries(result: dict) -> list[dict]:
    """The register's entries no control sets here (rates, physics, routing): name, value, unit, source."""
    keep = ("name", "value", "unit", "range", "source")
    return [{k: a.get(k) for k in keep} for a in result.get("assumptions") or [] if not _overridable(a)]


def ranges_of(result: dict, overrides: dict) -> dict:
    """Each range input's plausible range in ``result``, leaving out the inputs ``overrides`` fix."""
    return {
        s["input"]: s["range"]
        for s in result.get("sensitivity") or []
        if s.get("kind", "range") == "range" and s["input"] not in overrides
    }


__all__ = ["controls", "fixed_entries", "ranges_of"]
