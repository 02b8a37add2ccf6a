"""Weak scaling: the growth of the step time when the same work per GPU runs on more GPUs, published
against the model, on series that fit nothing.

A series is the step-time table's cases (:data:`~aifabric.workload.llm.validation.CASES`) of one
model, precision, GPU and release at several GPU counts with the same work per GPU (tag
``weak-scaling``). Its growth is the last point's step over the first's, minus one, in step-time
terms. The model's scale terms (the DP collectives' ring and latency terms, the per-step
gradient-norm and loss all-reduces, the straggler spread — step.py) are fitted on other series
only (:data:`~aifabric.workload.llm.validation.SCALING_FIT_SERIES`, dgxc NeMo 24.09); every series
here is held out. Tolerance: ±3 percentage points of growth. The column ``flat`` is the model's
growth without the straggler spread (σ = 0), to show what the term adds.
"""

from __future__ import annotations

from dataclasses import asdict

from aifabric.workload.llm.compute import CALIBRATION, Calibration
from aifabric.workload.llm.validation import CASES, SCALING_FIT_SERIES, Case, series_growth

GROWTH_TOLERANCE = 0.03  # percentage points of growth, first point → last


def held_out_series(cases: tuple[Case, ...] = CASES) -> list[tuple[Case, ...]]:
    """The table's weak-scaling series: ≥ 2 points of one model, precision, GPU and source, by GPUs."""
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        if "weak-scaling" in c.tags:
            groups.setdefault((c.model, c.precision, c.gpu, c.source), []).append(c)
    return [tuple(sorted(g, key=lambda c: c.gpus)) for g in groups.values() if len(g) >= 2]


def _name(series: tuple[Case, ...]) -> str:
    first, gpu = series[0], series[0].gpu.upper()
    release = first.case.split(f" {gpu}", 1)[1]
    return f"{first.case.rsplit(f' {first.gpus} ', 1)[0]} {first.gpus} → {series[-1].gpus} {gpu}{release}"


def _row(series: tuple[Case, ...], role: str, cal: Calibration) -> dict:
    pub, mod = series_growth(series, cal)[-1]
    _, flat = series_growth(series, Calibration(**{**asdict(cal), "straggler_spread": 0.0}))[-1]
    err = mod - pub
    return {
        "series": _name(series),
        "gpus": [c.gpus for c in series],
        "published_growth": pub,
        "model_growth": mod,
        "flat_growth": flat,
        "error_points": err,
        "within_tolerance": abs(err) <= GROWTH_TOLERANCE,
        "role": role,
        "source": series[0].source,
    }


def weak_scaling_table(cal: Calibration = CALIBRATION) -> list[dict]:
    """One row per series: published and model growth (first → last point), error in points, role
    (``fit``: fitted ``straggler_spread``; ``check``: held out)."""
    rows = [_row(s, "fit", cal) for s in SCALING_FIT_SERIES]
    return rows + [_row(s, "check", cal) for s in held_out_series()]


def format_weak_scaling(rows: list[dict]) -> str:
    """Markdown table of :func:`weak_scaling_table` (✓/✗ on held-out series, ±3 points)."""
    lines = [
        "| series | published growth | model | without straggler | error (points) | role |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = ("✓" if r["within_tolerance"] else "✗") if r["role"] == "check" else ""
        lines.append(
            f"| {r['series']} | {r['published_growth']:+.1%} | {r['model_growth']:+.1%} | "
            f"{r['flat_growth']:+.1%} | {100 * r['error_points']:+.1f} {mark} | {r['role']} |"
        )
    return "\n".join(lines)
