"""plotly.js for the self-contained HTML reports (``compare --report``, the study report, ``serve``).

The reports inline plotly.js's *basic* partial bundle (scatter, bar and pie traces; about 1.2 MB),
shipped in ``report/vendor/`` with its MIT licence, instead of the full bundle the plotly Python
package inlines (4.8 MB): every chart the reports draw is one of those trace types, and a figure
with any other type is refused when the report is written (it would draw nothing in the browser).
``scripts/vendor-plotly.sh`` refreshes the bundle from the npm package ``plotly.js-basic-dist-min``
at the plotly.js version the installed plotly Python package ships.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

BUNDLE = Path(__file__).with_name("vendor") / "plotly-basic.min.js"
TRACE_TYPES = frozenset({"scatter", "bar", "pie"})  # what the basic bundle registers
_HEADER = re.compile(r"plotly\.js \(basic - minified\) v(\d+\.\d+\.\d+)")


@cache
def plotly_js() -> str:
    """The bundle's text, to inline in a ``<script>`` element."""
    return BUNDLE.read_text(encoding="utf-8")


def bundle_version() -> str:
    """The plotly.js version of the shipped bundle (from its licence header)."""
    m = _HEADER.search(plotly_js()[:400])
    if m is None:
        raise RuntimeError(f"{BUNDLE} is not plotly.js's basic bundle (no version header)")
    return m.group(1)


def check_traces(figures) -> None:
    """Refuse a figure whose traces the bundle cannot draw (``figures``: plotly figures)."""
    for fig in figures:
        bad = {t.type for t in fig.data} - TRACE_TYPES
        if bad:
            title = fig.layout.title.text or "a figure"
            raise ValueError(
                f"{title}: trace type {', '.join(sorted(bad))} is not in the reports' plotly.js bundle "
                f"(allowed: {', '.join(sorted(TRACE_TYPES))})"
            )
