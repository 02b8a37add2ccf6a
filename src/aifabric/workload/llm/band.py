"""Error band of a step time: the spread the step model shows on published runs like the job.

The band is the 90th percentile of the absolute step-time error (|model / published − 1|, in
step-time terms as :func:`~aifabric.workload.llm.validation.validation_table` computes it) over the
validation cases (``role="validate"``; the four fit cases are left out, their error is zero by
construction) of the same family — dense or mixture-of-experts — and scale: total parameters within a
factor of :data:`SCALE_FACTOR` of the job's. When fewer than :data:`MIN_CASES` such cases exist, the
band widens to the family at every scale, then to every case, and the basis says so. Known misses
count: the band is what the model has shown, not what it was hoped to show.

Printed as ``7.02 s (±6 %, p90 of 31 validation cases)``; ``low_s`` / ``high_s`` are the step time
× (1 ∓ spread).
"""

from __future__ import annotations

import math
from functools import lru_cache

from aifabric.workload.llm.models import ModelConfig

QUANTILE = 0.9
SCALE_FACTOR = 4.0
MIN_CASES = 8


@lru_cache(maxsize=1)
def _validation_errors() -> tuple[tuple[bool, float, float, str], ...]:
    """(is MoE, total parameters, step-time error, case) of every validation case (computed once)."""
    from aifabric.workload.llm.validation import CASES, case_model, validation_table

    models = {c.case: case_model(c) for c in CASES}
    return tuple(
        (models[r["case"]].is_moe, float(models[r["case"]].total_params), float(r["error"]), r["case"])
        for r in validation_table()
        if r["role"] == "validate"
    )


def _quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile (no interpolation: the value of a case)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _scale(params: float) -> str:
    return f"{params / 1e12:.1f}T" if params >= 1e12 else f"{params / 1e9:.0f}B"


def similar_cases(model: ModelConfig) -> tuple[list[tuple[bool, float, float, str]], str]:
    """The validation cases like ``model`` and how they were chosen."""
    rows = _validation_errors()
    family = "mixture-of-experts" if model.is_moe else "dense"
    same = [r for r in rows if r[0] == model.is_moe]
    lo, hi = model.total_params / SCALE_FACTOR, model.total_params * SCALE_FACTOR
    near = [r for r in same if lo <= r[1] <= hi]
    if len(near) >= MIN_CASES:
        return near, f"{family} models of {_scale(lo)}–{_scale(hi)} parameters"
    if len(same) >= MIN_CASES:
        return same, f"{family} models of every size (fewer than {MIN_CASES} within ×{SCALE_FACTOR:g})"
    return list(rows), f"every validation case (fewer than {MIN_CASES} {family} ones)"


def error_band(model: ModelConfig, iteration_s: float) -> dict:
    """``iteration.band``: ``low_s``, ``high_s``, ``basis`` (+ ``spread``, ``quantile``, ``cases``,
    ``similar``, ``text``) for a step of ``iteration_s`` seconds of ``model``."""
    cases, similar = similar_cases(model)
    spread = _quantile([abs(r[2]) for r in cases], QUANTILE)
    text = f"±{spread * 100:.0f} %, p{QUANTILE * 100:.0f} of {len(cases)} validation cases"
    return {
        "low_s": iteration_s * (1 - spread),
        "high_s": iteration_s * (1 + spread),
        "spread": spread,
        "quantile": QUANTILE,
        "cases": len(cases),
        "similar": similar,
        "basis": f"{text} ({similar}): the step model's |error| on published runs like this one "
        "(aifabric validate --published)",
        "text": text,
    }


def format_step(iteration_s: float, band: dict | None) -> str:
    """``7.02 s (±6 %, p90 of 31 validation cases)``, or the bare step time without a band."""
    return f"{iteration_s:.3f} s" + (f" ({band['text']})" if band else "")
