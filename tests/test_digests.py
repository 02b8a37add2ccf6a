"""Stored digests of every shipped scenario's simulation results: a speed change must not change a
result (issue 19: bit-identical before and after).

For each scenario ``aifabric simulate`` runs (``scenarios/*.yaml`` and ``scenarios/risk/*.yaml``, in
the mode the file asks for; the collective file also in flow mode) the test runs it as the CLI does
(:func:`aifabric.cli._preflight.prepare`, then the packet engine or the flow model) and hashes its
canonical results: SHA-256 over the ``--json`` object without wall-clock keys (``wall_s``), then
every column (name, dtype, raw bytes) of the flows, ports and PFC-log tables (flow mode: the flows
table). The digest must equal the one in ``tests/digests/results.json``; the summary is stored
beside it, so a failure shows which numbers moved.

**Update rule**: only a commit that changes a model *on purpose* regenerates the digests, with
``PYTHONPATH=src python tests/test_digests.py --update`` (all scenarios, about a minute on 2 cores),
committed on its own with a message that names the model change; a speed or refactoring change
never does — if a digest moves, the change altered a result and is wrong.

Runs taking more than about a second on a 2-core machine are marked slow (``-m slow``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
STORE = Path(__file__).parent / "digests" / "results.json"
VOLATILE = {"wall_s"}  # wall-clock keys: the only parts of a result that may differ between runs
# (file, mode): the mode the file asks for (None), and flow mode for the collective scenario
CASES = [(p.relative_to(ROOT).as_posix(), None) for p in sorted(ROOT.glob("scenarios/*.yaml"))]
CASES += [(p.relative_to(ROOT).as_posix(), None) for p in sorted(ROOT.glob("scenarios/risk/*.yaml"))]
CASES += [("scenarios/allreduce16-packet.yaml", "flow")]
# measured with --update on a 2-core machine (bench/RESULTS.md "Digest test"): under about a second
FAST = {
    "scenarios/incast32.yaml",
    "scenarios/incast32-ib.yaml",
    "scenarios/incast32-uet.yaml",
    "scenarios/incast32-uet-rccc.yaml",
    "scenarios/incast32-uet-rod.yaml",
    "scenarios/alltoall16-uet.yaml",
    "scenarios/pause-storm.yaml",
    "scenarios/pfc-mismatch.yaml",
    "scenarios/ring5-deadlock.yaml",
    "scenarios/allreduce16-packet.yaml@flow",
    "scenarios/risk/roce-baseline-quiet.yaml",
    "scenarios/risk/roce-pfc-watchdog-off.yaml",
}


def case_id(file: str, mode: str | None) -> str:
    return file if mode is None else f"{file}@{mode}"


def _strip(o):
    if isinstance(o, dict):
        return {k: _strip(v) for k, v in o.items() if k not in VOLATILE}
    if isinstance(o, list):
        return [_strip(x) for x in o]
    return o


def _hash_table(h, name: str, df) -> None:
    h.update(f"|table {name} {len(df)}|".encode())
    for col in df.columns:
        arr = df[col].to_numpy()
        h.update(f"|{col} {arr.dtype.str}|".encode())
        if arr.dtype == object:
            h.update(json.dumps([str(x) for x in arr]).encode())
        else:
            h.update(np.ascontiguousarray(arr).tobytes())


def canonical(file: str, mode: str | None = None) -> dict:
    """``{"sha256": ..., "summary": ...}`` of one scenario's run (see the module docstring)."""
    from aifabric.cli._preflight import prepare
    from aifabric.sim.results import dumps_strict

    prep = prepare(ROOT / file, mode, None, False, json_flows=False)
    h = hashlib.sha256()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some scenarios drop or deadlock on purpose
        if prep.mode == "flow":
            from aifabric.flow.scenario import simulate_flow_scenario

            flows = None
            if prep.flows is not None:
                flows = prep.flows.to_frame()
                flows["start_us"] = flows["start_ps"] / 1e6
            tables: dict = {}
            res = simulate_flow_scenario(prep.scenario, flows=flows, topology=prep.topology, tables=tables)
            d = _strip(json.loads(dumps_strict(res)))
            h.update(json.dumps(d, sort_keys=True).encode())
            _hash_table(h, "flows", tables["flows"])
        else:
            from aifabric.sim import simulate

            res = simulate(prep.scenario, flows=prep.flows, topology=prep.topology)
            d = _strip(res.to_dict(flows=False))
            if getattr(res, "collective", None) is not None:
                d.setdefault("collective", _strip(res.to_dict(flows=False).get("collective")))
            h.update(json.dumps(d, sort_keys=True, default=str).encode())
            for name in ("flows", "ports", "pfc_log"):
                _hash_table(h, name, getattr(res, name))
    return {"sha256": h.hexdigest(), "summary": d.get("summary", {})}


def _stored() -> dict:
    return json.loads(STORE.read_text()) if STORE.exists() else {}


PARAMS = [
    pytest.param(f, m, id=case_id(f, m), marks=() if case_id(f, m) in FAST else pytest.mark.slow)
    for f, m in CASES
]


@pytest.mark.parametrize("file,mode", PARAMS)
def test_results_match_stored_digest(file, mode):
    """The scenario's canonical results hash to the stored digest (see the update rule above)."""
    key = case_id(file, mode)
    stored = _stored()
    assert key in stored, f"{key}: no stored digest (a new scenario: run tests/test_digests.py --update)"
    now = canonical(file, mode)
    if now["sha256"] != stored[key]["sha256"]:
        moved = {
            k: (v, now["summary"].get(k))
            for k, v in stored[key]["summary"].items()
            if now["summary"].get(k) != v
        }
        pytest.fail(f"{key}: results changed (summary was -> now: {moved or 'same; a table or engine key'})")


def test_every_shipped_scenario_has_a_digest():
    """A scenario added to scenarios/ without a digest (or a digest left for a removed one) fails."""
    assert sorted(_stored()) == sorted(case_id(f, m) for f, m in CASES)


def test_digest_sees_a_one_bit_change(monkeypatch):
    """The digest is sensitive: one result value nudged by one ulp changes it."""
    import aifabric.sim as sim_pkg

    file = "scenarios/incast32.yaml"
    real = sim_pkg.simulate
    base = canonical(file)["sha256"]

    def nudged(*a, **k):
        res = real(*a, **k)
        t = res._tables["flows"]
        col = t["fct_us"] if isinstance(t, dict) else t["fct_us"].to_numpy()
        col[0] = np.nextafter(col[0], np.inf)
        return res

    monkeypatch.setattr(sim_pkg, "simulate", nudged)
    assert canonical(file)["sha256"] != base


def update() -> None:
    out = {}
    for f, m in CASES:
        t = time.perf_counter()
        a = canonical(f, m)
        dt = time.perf_counter() - t
        b = canonical(f, m)
        assert a == b, f"{case_id(f, m)}: two runs differ; not deterministic"
        out[case_id(f, m)] = a
        print(f"{case_id(f, m)}: {a['sha256'][:16]} {dt:.2f} s", flush=True)
    STORE.parent.mkdir(parents=True, exist_ok=True)
    STORE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {STORE}")


if __name__ == "__main__":
    if "--update" not in sys.argv:
        sys.exit("usage: PYTHONPATH=src python tests/test_digests.py --update")
    update()
