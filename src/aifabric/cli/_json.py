"""Strict JSON for every ``--json`` output (issue 32): NaN and ±Infinity never reach stdout.

interface.md: a number that does not exist (a run that did not finish, a hang) is ``null``.
:func:`dumps` encodes once with ``allow_nan=False`` (the common case: every number finite); only
if that fails are numpy scalars made Python numbers and non-finite floats ``None`` first.
"""

from __future__ import annotations

import json
import math


def finite(obj):
    """``obj`` with numpy scalars as Python numbers and NaN / ±Infinity as ``None`` (recursing
    into dicts, lists and tuples)."""
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    if not isinstance(obj, bool | int | str) and hasattr(obj, "item") and callable(obj.item):
        try:
            obj = obj.item()
        except (TypeError, ValueError):
            return obj
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def dumps(obj, **kw) -> str:
    """``json.dumps(obj, **kw)`` as strict JSON (see the module docstring)."""
    try:
        return json.dumps(obj, allow_nan=False, **kw)
    except (ValueError, TypeError):  # a non-finite number, or a numpy scalar without a default
        return json.dumps(finite(obj), allow_nan=False, **kw)
