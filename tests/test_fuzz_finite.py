"""No NaN or Infinity in any ``--json`` output (issue 32): a number that does not exist (a run
that did not finish, a hang) is ``null``, as interface.md says, so every output parses as strict
JSON."""

from __future__ import annotations

import json
import math

import pytest

from test_fuzz_support import cli


def _strict(text: str):
    def bad(token):
        raise AssertionError(f"non-finite number {token} in JSON output")

    return json.loads(text, parse_constant=bad)


@pytest.fixture
def nan_testbed(monkeypatch):
    """risk's testbed (seconds of packet runs) replaced by a result whose incast never finished
    (NaN, as a PAUSE storm of duty 1 or some seeds leave it) and whose step hung (Infinity)."""
    import aifabric.stages.risk.testbed as tb

    class _R:
        def to_dict(self):
            return {
                "step_us": {"quiet": {"baseline": 10.0, "pfc-storm": math.inf}},
                "incast_us": {"baseline": 4224.7, "pfc-storm": math.nan, "pfc-watchdog-off": math.nan},
            }

    monkeypatch.setattr(tb, "measure_testbed", lambda testbed, *a, **k: _R())


@pytest.mark.parametrize("flags", [["--storm-duty", "1"], ["--seeds", "1,2"]])
def test_risk_json_has_no_nan(nan_testbed, flags):
    """risk --json with an unfinished incast and a hung step prints null for them, not NaN."""
    o = cli(["risk", "--json", *flags])
    assert o.code == 0, o.stderr
    out = _strict(o.stdout)
    assert out["incast_us"]["pfc-storm"] is None and out["incast_us"]["baseline"] == 4224.7
    assert out["step_us"]["quiet"]["pfc-storm"] is None


def test_dumps_is_strict():
    """The CLI's JSON writer turns NaN, ±Infinity and numpy non-finite scalars into null and
    keeps every finite number as it is."""
    import numpy as np

    from aifabric.cli._json import dumps

    text = dumps({"a": [math.nan, 1.5, -math.inf], "b": np.float32("inf"), "c": np.int64(3), "d": True})
    assert _strict(text) == {"a": [None, 1.5, None], "b": None, "c": 3, "d": True}
    assert _strict(dumps({"c": np.int64(3), "e": np.float64("nan")})) == {"c": 3, "e": None}
