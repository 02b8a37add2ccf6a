"""Pinned ``aifabric compare --json`` outputs: structure changes must not change results.

Each file in ``tests/pins/`` is the full ``--json`` of one ``compare`` invocation (``wall_s`` keys
removed), recorded before the main job was split into stages (issue 10). Every key in a pin must
still be in today's output with the same value (floats to 1e-9 relative: the computation is meant
to be the same, operation for operation); new keys may be added. A commit that changes a model on
purpose regenerates the pins with ``python tests/test_pins.py --update`` and says so.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

PINS = Path(__file__).parent / "pins"
CASES = {
    "default": [],
    "g64": ["--gpus", "64"],
    "moe1024low": ["--gpus", "1024", "--model", "deepseek-moe", "--budget", "low"],
    "moe2048ar": ["--gpus", "2048", "--model", "deepseek-moe", "--roce-routing", "adaptive"],
    "l405_16k": ["--gpus", "16384", "--model", "llama3-405b"],
    "b200_2048": ["--gpus", "2048", "--gpu", "b200"],
    "stor128": ["--gpus", "128", "--workload", "storage"],
}


def _norm(o):
    if isinstance(o, dict):
        return {k: _norm(v) for k, v in o.items() if k != "wall_s"}
    if isinstance(o, list):
        return [_norm(x) for x in o]
    return o


def run_compare(args: list[str]) -> dict:
    from typer.testing import CliRunner

    from aifabric.cli import app

    res = CliRunner().invoke(app, ["compare", *args, "--json"])
    assert res.exit_code == 0, res.output
    return _norm(json.loads(res.stdout))


def differences(pin, now, path: str = "") -> list[str]:
    """Where ``now`` lacks or changes a value of ``pin`` (extra keys in ``now`` are fine)."""
    if isinstance(pin, dict):
        if not isinstance(now, dict):
            return [f"{path}: was an object, now {type(now).__name__}"]
        out = []
        for k, v in pin.items():
            if k not in now:
                out.append(f"{path}.{k}: missing")
            else:
                out += differences(v, now[k], f"{path}.{k}")
        return out
    if isinstance(pin, list):
        if not isinstance(now, list) or len(now) != len(pin):
            return [
                f"{path}: list length {len(pin)} -> {len(now) if isinstance(now, list) else type(now).__name__}"
            ]
        return [
            d
            for i, (a, b) in enumerate(zip(pin, now, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    if isinstance(pin, float) and isinstance(now, int | float) and not isinstance(now, bool):
        if math.isclose(pin, now, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(pin) and math.isnan(now)):
            return []
        return [f"{path}: {pin!r} -> {now!r}"]
    return [] if pin == now else [f"{path}: {pin!r} -> {now!r}"]


# the 16,384-GPU pin (about 100 s and 4 GB cold) runs in the slow group (`make test-slow`, run by CI)
@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.slow) if c == "l405_16k" else c for c in CASES]
)
def test_compare_matches_pin(case):
    """compare's --json keeps every pinned key and value for this invocation."""
    pin = json.loads((PINS / f"compare-{case}.json").read_text())
    diff = differences(pin, run_compare(CASES[case]))
    assert not diff, f"{len(diff)} differences, first: " + "; ".join(diff[:8])


def test_differences_sees_a_change():
    """The comparison itself flags changed, missing and re-typed values (so the pins can fail)."""
    pin = {"a": 1.0, "b": [1, 2], "c": {"d": "x"}}
    assert differences(pin, {"a": 1.0, "b": [1, 2], "c": {"d": "x"}, "new": 3}) == []
    assert differences(pin, {"a": 1.1, "b": [1, 2], "c": {"d": "x"}})
    assert differences(pin, {"a": 1.0, "b": [1], "c": {"d": "x"}})
    assert differences(pin, {"a": 1.0, "b": [1, 2], "c": {}})


if __name__ == "__main__" and "--update" in sys.argv:
    for name, argv in CASES.items():
        (PINS / f"compare-{name}.json").write_text(json.dumps(run_compare(argv), indent=1, sort_keys=True))
        print("updated", name)
