"""The fast flow path (numba kernels in aifabric.flow._kernels) against a small pure-numpy
reference of progressive filling and of the fluid event loop, on random instances; determinism;
and parity of the kernels run interpreted (NUMBA_DISABLE_JIT=1) with the compiled ones."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.flow.engine import simulate_drain, simulate_flows
from aifabric.flow.maxmin import max_min_rates

G100 = 100 * 10**9


# --- reference: one bincount round per bottleneck level, rates recomputed from scratch per event ---


def ref_max_min(entry_flow, entry_link, capacity, num_flows, entry_weight=None, active=None):
    entry_flow = np.asarray(entry_flow, dtype=np.int64)
    entry_link = np.asarray(entry_link, dtype=np.int64)
    w = np.ones(len(entry_flow)) if entry_weight is None else np.asarray(entry_weight, dtype=np.float64)
    rate = np.zeros(num_flows)
    frozen = np.zeros(num_flows, dtype=bool) if active is None else ~np.asarray(active, dtype=bool)
    if active is not None:
        keep = ~frozen[entry_flow]
        entry_flow, entry_link, w = entry_flow[keep], entry_link[keep], w[keep]
    has_entry = np.zeros(num_flows, dtype=bool)
    has_entry[entry_flow] = True
    rate[~frozen & ~has_entry] = np.inf
    frozen |= ~has_entry
    rem = np.asarray(capacity, dtype=np.float64).copy()
    nl = len(rem)
    level = 0.0
    while len(entry_flow):
        wl = np.bincount(entry_link, weights=w, minlength=nl)
        used = wl > 0
        share = np.full(nl, np.inf)
        share[used] = rem[used] / wl[used]
        inc = share.min()
        if not np.isfinite(inc):
            rate[~frozen] = np.inf
            break
        inc = max(inc, 0.0)
        level += inc
        rem[used] -= inc * wl[used]
        full = used & (share <= inc * (1 + 1e-9) + 1e-300)
        hit = np.zeros(num_flows, dtype=bool)
        hit[entry_flow[full[entry_link]]] = True
        newly = hit & ~frozen
        rate[newly] = level
        frozen |= newly
        rem[full] = 0.0
        keep = ~frozen[entry_flow]
        entry_flow, entry_link, w = entry_flow[keep], entry_link[keep], w[keep]
    return rate


def ref_drain(paths, drain_bits, start_s, capacity_bps):
    f = len(drain_bits)
    f_idx, h_idx = np.nonzero(paths >= 0)
    e_flow, e_link = f_idx, paths[f_idx, h_idx]
    remaining = np.asarray(drain_bits, dtype=np.float64).copy()
    finish = np.full(f, np.nan)
    order = np.argsort(start_s, kind="stable")
    nxt = 0
    active = np.zeros(f, dtype=bool)
    t = float(start_s[order[0]]) if f else 0.0
    events = 0
    tol = 1e-9 * np.maximum(remaining, 1.0)
    while nxt < f or active.any():
        while nxt < f and start_s[order[nxt]] <= t * (1 + 1e-15) + 1e-18:
            active[order[nxt]] = True
            nxt += 1
        zero = active & (remaining <= tol)
        finish[zero] = t
        active &= ~zero
        if not active.any():
            if nxt < f:
                t = float(start_s[order[nxt]])
                continue
            break
        events += 1
        rate = ref_max_min(e_flow, e_link, capacity_bps, f, active=active)
        ra = rate[active]
        with np.errstate(divide="ignore"):
            ttc = np.where(ra > 0, remaining[active] / ra, np.inf)
        dt = float(ttc.min())
        if nxt < f:
            dt = min(dt, float(start_s[order[nxt]]) - t)
        dt = max(dt, 0.0)
        remaining[active] -= np.where(np.isfinite(ra), ra * dt, remaining[active])
        t += dt
        fin = active & (remaining <= tol + 1e-12 * rate * max(t, 1e-12))
        finish[fin] = t
        active &= ~fin
    return finish, events


def random_instance(rng, flows, links, max_hops=5, weights=False, holes=False):
    """Random incidence: each flow crosses 0..max_hops distinct links; capacities from a few
    classes (ties are common, as in real fabrics), some infinite."""
    ef, el = [], []
    for i in range(flows):
        h = int(rng.integers(0 if holes else 1, max_hops + 1))
        ls = rng.choice(links, min(h, links), replace=False)
        ef += [i] * len(ls)
        el += list(ls)
    cap = rng.choice([1.0, 2.0, 2.5, 10.0, 40.0], links) * rng.choice([1.0, 1.0, 1.0, 1.3], links)
    if holes:
        cap[rng.random(links) < 0.1] = np.inf
    w = rng.choice([0.5, 1.0, 2.0, 3.0], len(ef)) if weights else None
    return np.array(ef, dtype=np.int64), np.array(el, dtype=np.int64), cap, w


def random_paths(rng, flows, links, max_hops=6):
    paths = np.full((flows, max_hops), -1, dtype=np.int64)
    for i in range(flows):
        h = min(int(rng.integers(1, max_hops + 1)), links)
        paths[i, :h] = rng.choice(links, h, replace=False)
    return paths


@pytest.mark.parametrize("seed", range(40))
def test_max_min_matches_reference_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    flows, links = int(rng.integers(1, 120)), int(rng.integers(1, 60))
    ef, el, cap, w = random_instance(rng, flows, links, weights=seed % 3 == 0, holes=seed % 4 == 1)
    active = rng.random(flows) < 0.8 if seed % 2 else None
    got = max_min_rates(ef, el, cap, flows, entry_weight=w, active=active)
    want = ref_max_min(ef, el, cap, flows, entry_weight=w, active=active)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 12))
def test_max_min_matches_reference_hypothesis(seed, flows, links):
    rng = np.random.default_rng(seed)
    ef, el, cap, w = random_instance(
        rng, flows, links, max_hops=4, weights=seed % 2 == 0, holes=seed % 3 == 0
    )
    got = max_min_rates(ef, el, cap, flows, entry_weight=w)
    want = ref_max_min(ef, el, cap, flows, entry_weight=w)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-9, atol=0)
    # max-min feasibility: no finite link is over capacity
    rate = np.where(np.isfinite(got), got, 0.0)
    wt = np.ones(len(ef)) if w is None else w
    load = np.bincount(el, weights=rate[ef] * wt, minlength=links)
    assert np.all(load <= cap * (1 + 1e-9))


@pytest.mark.parametrize("seed", range(25))
def test_drain_matches_reference_with_staggered_starts(seed):
    """Staggered arrivals (some simultaneous), heavy-tailed sizes: the same finish times and the
    same number of events as the reference loop."""
    rng = np.random.default_rng(100 + seed)
    flows, links = int(rng.integers(1, 150)), int(rng.integers(2, 40))
    paths = random_paths(rng, flows, links)
    cap = rng.choice([10.0, 25.0, 40.0, 100.0], links) * 1e9
    bits = np.exp(rng.normal(12, 3, flows)) * 8
    bits[rng.random(flows) < 0.05] = 0.0
    start = np.cumsum(rng.exponential(1e-6, flows)) * (rng.random(flows) < 0.9)
    start[rng.random(flows) < 0.2] = start[0]  # simultaneous batches
    start = np.round(start, 9)
    got, ev = simulate_drain(paths, bits, start, cap)
    want, ev_ref = ref_drain(paths, bits, start, cap)
    assert ev == ev_ref
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


def _poisson(topo, n, seed):
    rng = np.random.default_rng(seed)
    size = np.maximum(np.exp(rng.normal(10, 2.5, n)), 64).astype(np.int64)
    start_us = np.cumsum(rng.exponential(0.05, n))
    src = rng.choice(topo.hosts, n)
    dst = rng.choice(topo.hosts, n)
    keep = src != dst
    return {"src": src[keep], "dst": dst[keep], "size_bytes": size[keep], "start_us": start_us[keep]}


def test_simulate_flows_poisson_matches_reference_and_is_deterministic():
    """A Poisson workload on a k=4 fat-tree: FCTs equal the reference engine's; same seed,
    identical table."""
    from aifabric.flow.engine import _path_model, path_latency
    from aifabric.flow.hashing import flow_sport
    from aifabric.flow.paths import directed_rates_bps
    from aifabric.topology import fat_tree

    topo = fat_tree(4, G100, 10**6)
    fl = _poisson(topo, 600, 7)
    a = simulate_flows(topo, fl, seed=3)
    b = simulate_flows(topo, fl, seed=3)
    assert a.equals(b)
    paths = _path_model(topo).route(
        fl["src"], fl["dst"], routing="ecmp", seed=3, sport=flow_sport(np.arange(len(fl["src"])))
    )
    fixed, drain_bits, _ = path_latency(topo, paths, fl["size_bytes"].astype(float), 0, 4000, 64)
    start = fl["start_us"] * 1e-6
    fin, ev = ref_drain(paths, drain_bits, start, directed_rates_bps(topo))
    assert a.attrs["events"] == ev
    np.testing.assert_allclose(a["fct_us"].to_numpy(), (fin - start + fixed) * 1e6, rtol=1e-9)


_PARITY = r"""
import json, sys
import numpy as np
from aifabric.flow.engine import simulate_drain
from aifabric.flow.maxmin import max_min_rates
sys.path.insert(0, sys.argv[1])
from test_flow_speed import random_instance, random_paths
rng = np.random.default_rng(5)
ef, el, cap, w = random_instance(rng, 60, 25, weights=True, holes=True)
r = max_min_rates(ef, el, cap, 60, entry_weight=w)
paths = random_paths(rng, 80, 20)
bits = np.exp(rng.normal(12, 3, 80)) * 8
start = np.round(np.cumsum(rng.exponential(1e-6, 80)), 9)
fin, ev = simulate_drain(paths, bits, start, rng.choice([10.0, 40.0, 100.0], 20) * 1e9)
print(json.dumps({"rates": [x.hex() for x in r], "finish": [x.hex() for x in fin], "events": ev}))
"""


def test_kernels_interpreted_equal_compiled():
    """NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python: bit-identical results."""
    here = os.path.dirname(__file__)
    out = {}
    for jit in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        p = subprocess.run(
            [sys.executable, "-c", _PARITY, here],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        out[jit] = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["0"] == out["1"]
