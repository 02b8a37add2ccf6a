"""What the page shows for one what-if, built from the report's own components
(:mod:`aifabric.report.html`) and the study report's (:mod:`aifabric.sweep.report`)."""

from __future__ import annotations

import json

from aifabric.report.html import (
    fig_capex,
    fig_tornado,
    hinges_parts,
    reasons_parts,
    recommendation_parts,
    sensitivity_parts,
    side_by_side_parts,
)


def _figure(fig) -> dict:
    return json.loads(fig.to_json())


def whatif_view(result: dict, controls: list[dict], fixed: list[dict], how: dict) -> dict:
    """The API's answer to a what-if: its numbers (:func:`aifabric.serve.session.headline`), the
    report's sections as HTML, the tornado and capex charts (plotly JSON), the controls and how the
    answer was reached (stages run, seconds)."""
    from aifabric.serve.session import headline

    html = {
        "card": "\n".join(recommendation_parts(result)),
        "hinges": "\n".join(hinges_parts(result)),
        "reasons": "\n".join(reasons_parts(result)),
        "side": "\n".join(side_by_side_parts(result)),
        "sensitivity": "\n".join(sensitivity_parts(result)),
    }
    figures = {"chart-capex": _figure(fig_capex(result["fabrics"]))}
    if (result.get("evidence") or {}).get("decide", {}).get("tornado"):
        figures["chart-tornado"] = _figure(fig_tornado(result))
    return {
        "numbers": headline(result),
        "html": html,
        "figures": figures,
        "controls": controls,
        "fixed": fixed,
        "how": how,
        "scenario": result.get("scenario"),
    }


def study_view(store, where: dict | None = None) -> dict:
    """A study folder's results: its axes (the filters), the study report's sections and charts."""
    from aifabric.sweep.report import study_axes, study_sections

    parts, charts = study_sections(store, where)
    return {
        "axes": study_axes(store),
        "html": "\n".join(parts),
        "figures": {cid: _figure(fig) for cid, _heading, fig in charts},
    }


__all__ = ["study_view", "whatif_view"]
